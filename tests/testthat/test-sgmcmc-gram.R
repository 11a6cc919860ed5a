# The Gram form of a gaussian regression's full-data gradient (sgmcmc/glm.hpp: GramState): with every row in each
# minibatch the engine computes X'(y - X beta) and the residual sum of squares from X'X, expanded about a
# least-squares reference. It must give the draws of the row-by-row pass up to rounding, for every sampler,
# also when the response has a large mean (the expansion about the reference keeps the RSS's digits), and be
# the default for gaussian regressions with 2 P <= n, P <= 2,000.

gram_engine_ctl <- function(P, n, ...) {
  ctl <- scalebayes:::sgmcmc_engine_control(sgmcmc_control(step_size = 2e-4), P - 1L, NaN, trace_every = 10L,
                                            family = "gaussian", method = "sa", sampler = "sgld",
                                            iterations = 1500L, batch_size = n, burnin = 500L, thin = 1L,
                                            v0 = 0.1, v1 = 10, keep = seq_len(P), chains = 2L)
  ctl$chain_offset <- 0
  utils::modifyList(ctl, list(...))
}

test_that("Gram-form draws equal the row pass's for SGLD, SGHMC, SGNHT and HAMCMC-SA, large response mean too", {
  set.seed(3)
  n <- 150
  p <- 8
  x <- matrix(rnorm(n * p), n, p)
  y0 <- drop(x[, 1:3] %*% c(1, -0.5, 0.3)) + rnorm(n, sd = 0.5)
  run <- list(seed = 11, threads = 1L, quiet = TRUE)
  for (shift in c(0, 1e4)) {
    y <- y0 + shift
    init <- rbind(shift, matrix(0, p, 2L))
    for (s in c("sgld", "sghmc", "sgnht", "hamcmc_sa")) {
      call <- function(gram) {
        ctl <- gram_engine_ctl(p + 1L, n, sampler = s, gram = gram,
                               step_size = if (s == "sgld") 2e-4 else if (s == "hamcmc_sa") 0.05 else 2e-5)
        scalebayes:::cpp_sgld_sa(x, y, rep(1L, p), TRUE, matrix(0, 0, p), init, ctl, run)
      }
      a <- call(TRUE)
      b <- call(FALSE)
      for (c in 1:2) {
        da <- a$chains[[c]]$draws
        db <- b$chains[[c]]$draws
        expect_true(all(is.finite(da)), info = s)
        expect_gt(stats::sd(da[, 2]), 0)  # the chain moved
        expect_equal(da, db, tolerance = 1e-7, info = paste(s, "shift", shift, "chain", c))
        expect_equal(a$chains[[c]]$trace, b$chains[[c]]$trace, tolerance = 1e-7, info = paste(s, "trace"))
      }
    }
  }
})

test_that("gaussian regressions default to every row in the Gram form at any n; logistic ones keep control variates", {
  set.seed(4)
  n <- 2600
  x <- matrix(rnorm(n * 4), n, 4)
  y <- drop(x %*% c(1, 0, 0, 0.5)) + rnorm(n)
  f <- sgld_sa(x, y, seed = 1, quiet = TRUE, chains = 2)
  expect_identical(f$settings$batch_size, as.integer(n))
  expect_match(paste(capture.output(print(f)), collapse = "\n"), "Gram matrix", fixed = TRUE)
  # the draws are those of the ordinary least-squares posterior up to the prior (n = 2,600: the prior's pull
  # is far below the posterior sd); slopes 2 and 3 are in the spike, 1 and 4 in the slab
  ols <- stats::lm(y ~ x)
  se <- sqrt(diag(stats::vcov(ols)))[c(2, 5)]
  m <- colMeans(as.matrix(f))[c(2, 5)]
  expect_lt(max(abs(m - stats::coef(ols)[c(2, 5)]) / se), 0.3)
  expect_gt(min(f$inclusion[c(1, 4)]), 0.9)
  # a given batch keeps it; binomial keeps the control-variate default (batch < n)
  f2 <- suppressWarnings(sgld_sa(x, y, seed = 1, quiet = TRUE, chains = 1, batch_size = 100, iterations = 2000,
                                 control = sgmcmc_control(step_size = 1e-4)),
                         classes = "scalebayes_warning_convergence")  # a deliberately short run
  expect_identical(f2$settings$batch_size, 100L)
  yb <- as.integer(x[, 1] + rnorm(n) > 0)
  fb <- sgld_sa(x, yb, family = "binomial", seed = 1, quiet = TRUE, chains = 2)
  expect_lt(fb$settings$batch_size, n)
  # more coefficients than half the rows: the row pass (no Gram default)
  expect_false(scalebayes:::sgmcmc_gram_applies(100, 51))
  expect_true(scalebayes:::sgmcmc_gram_applies(100, 50))
})
