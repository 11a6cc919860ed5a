# Figures 1-2 of the WBB paper and blasso_compare().

test_that("Laplace posterior mean matches quadrature and stays finite in the tails", {
  for (lambda in c(0.1, 0.5, 1, 2, 5)) {
    for (y in c(-6, -2, -0.3, 0, 0.7, 3, 8)) {
      # quadrature on each side of the kink at 0
      q <- function(f) stats::integrate(f, -Inf, 0, rel.tol = 1e-12)$value + stats::integrate(f, 0, Inf, rel.tol = 1e-12)$value
      num <- q(function(t) t * exp(-(y - t)^2 / 2 - lambda * abs(t)))
      den <- q(function(t) exp(-(y - t)^2 / 2 - lambda * abs(t)))
      expect_equal(laplace_posterior_mean(y, lambda), num / den, tolerance = 1e-7)
    }
  }
  # far tails: the naive formula overflows (exp(lambda y)) or cancels; ours tends to y -/+ lambda
  expect_equal(laplace_posterior_mean(c(-60, 60), 2), c(-58, 58), tolerance = 1e-10)
  expect_equal(laplace_posterior_mean(1e4, 30), 1e4 - 30, tolerance = 1e-12)
  expect_true(all(is.finite(laplace_posterior_mean(seq(-1e3, 1e3, length.out = 101), 50))))
  # odd in y, zero at zero
  expect_equal(laplace_posterior_mean(-1.3, 0.7), -laplace_posterior_mean(1.3, 0.7))
  expect_equal(laplace_posterior_mean(0, 1), 0)
})

test_that("exact WBB mean for normal means matches Monte Carlo", {
  set.seed(3)
  y <- c(-3, -0.5, 0.2, 1, 4)
  d <- wbb_normal_means(y, lambda = 1, draws = 40000)
  # Monte-Carlo SE of each mean is sd / 200 (sd <= |y| + 1): 5 SE tolerance
  se <- apply(d, 2, stats::sd) / sqrt(nrow(d))
  expect_true(all(abs(colMeans(d) - wbb_normal_means_mean(y, 1)) < 5 * se))
  f1 <- wbb_figure1(draws = 0)
  expect_s3_class(f1, "sb_wbb_figure1")
  # WBB shrinks more than the posterior mean for moderate y (the paper's Figure 1 finding)
  s <- f1[f1$y > 0.5 & f1$y < 3, ]
  expect_true(all(s$wbb_mean < s$posterior_mean))
})

test_that("Figure 2 exact samplers: L1 and L0 posteriors for p = 2", {
  set.seed(2)
  n <- 40
  x <- matrix(rnorm(n * 2), n)
  y <- drop(x %*% c(0.3, 1.5) + rnorm(n))
  # L1: check the exact sampler against importance sampling on a grid (2-d quadrature of the mean)
  lam <- 3
  d <- scalebayes:::l1_posterior_p2(x, y, lam, 20000)
  g <- expand.grid(b1 = seq(-0.6, 1.2, length.out = 181), b2 = seq(0.8, 2.2, length.out = 181))
  lp <- apply(g, 1, function(b) -sum((y - x %*% b)^2) / 2 - lam * sum(abs(b)))
  w <- exp(lp - max(lp)); w <- w / sum(w)
  m <- c(sum(w * g$b1), sum(w * g$b2))
  se <- apply(d, 2, stats::sd) / sqrt(nrow(d))
  expect_true(all(abs(colMeans(d) - m) < 5 * se + 2e-3))  # + grid error
  # L0: model probabilities sum to 1; a huge penalty gives the null model, none gives the full model
  r0 <- scalebayes:::l0_posterior_p2(x, y, pen = 300, L = 10, draws = 100)
  expect_equal(sum(r0$model_prob), 1)
  expect_gt(r0$model_prob[["none"]], 0.99)
  r1 <- scalebayes:::l0_posterior_p2(x, y, pen = -300, L = 10, draws = 2000)
  expect_gt(r1$model_prob[["both"]], 0.99)
  # in the full model the draws follow N(beta_hat, (X'X)^{-1})
  bh <- drop(solve(crossprod(x), crossprod(x, y)))
  se1 <- sqrt(diag(solve(crossprod(x)))) / sqrt(2000)
  expect_true(all(abs(colMeans(r1$draws) - bh) < 5 * se1))
  # L0 inclusion check by direct integration for the one-variable models
  pen <- 2
  r <- scalebayes:::l0_posterior_p2(x, y, pen, L = 10, draws = 10)
  lm1 <- log(stats::integrate(function(b) sapply(b, function(bb) exp(-sum((y - x[, 1] * bb)^2) / 2 + sum(y^2) / 2 - 5)),
                              -10, 10, rel.tol = 1e-10)$value) + 5 - sum(y^2) / 2 - pen
  lm0 <- -sum(y^2) / 2
  expect_equal(r$model_prob[["beta1"]] / r$model_prob[["none"]], exp(lm1 - lm0), tolerance = 1e-6)
})

test_that("wbb_figure2 runs and has WBB spikes at zero", {
  f2 <- wbb_figure2(draws = 300, seed = 4)
  expect_s3_class(f2, "sb_wbb_figure2")
  expect_named(f2$draws, c("WBB", "L1 prior", "L0 prior (lambda)", "L0 prior (5 lambda)"))
  expect_equal(mean(f2$draws[["L1 prior"]][, 1] == 0), 0)
  expect_true(all(vapply(f2$model_prob, sum, 0) > 0.999))
})

test_that("blasso_compare: reproducible under chunking and threads, tidy output", {
  a <- blasso_compare(settings = "A(i)", p = 12, n = c("50", "p/2"), datasets = 4, draws = 50, burnin = 50,
                      seed = 9, quiet = TRUE, threads = 1)
  b <- blasso_compare(settings = "A(i)", p = 12, n = c("50", "p/2"), datasets = 4, draws = 50, burnin = 50,
                      seed = 9, quiet = TRUE, threads = 2, chunks = 3)
  pa <- attr(a, "per_dataset"); pb <- attr(b, "per_dataset")
  cols <- !grepl("seconds", names(pa))
  expect_identical(pa[, cols], pb[, cols])
  expect_s3_class(a, "sb_blasso_compare")
  expect_equal(nrow(a), 4L)  # 2 cells x 2 methods
  expect_true(all(a$coverage >= 0 & a$coverage <= 1))
  expect_true(all(a$mse_coef > 0 & is.finite(a$mse_pred)))
  expect_output(print(a), "Table 1")
  m <- blasso_compare(settings = "B", p = 12, n = "p/2", datasets = 2, draws = 30, burnin = 10, methods = "blasso",
                      blasso = "monomvn", seed = 1, quiet = TRUE)
  expect_equal(nrow(m), 1L)
  expect_true(is.finite(m$mse_coef) && m$lambda > 0)
  expect_output(print(m), "BLASSO")
  ab <- blasso_compare_combine(a, blasso_compare(settings = "A(i)", p = 12, n = c("50", "p/2"), datasets = 2,
                                                 draws = 50, burnin = 50, seed = 9, quiet = TRUE, first_dataset = 5))
  expect_equal(unique(ab$datasets), 6L)
  expect_error(blasso_compare_combine(a, a), class = "scalebayes_error")
  expect_error(blasso_compare(settings = "C"), class = "scalebayes_error")
  expect_error(blasso_compare(n = "100"), class = "scalebayes_error")
})
