# The fixed preconditioner ("metric") of SGLD / SGHMC / SGNHT (sgmcmc/steps.hpp: Metric) and the metric warm-up
# (R/sgmcmc_metric.R), the defaults of regression and density targets since issue 56.

# The engine on a density target with a metric factor L given directly (the warm-up's entry point).
metric_engine_draws <- function(target, init, eps, factor = NULL, sampler = "sgld", iterations = 400L, seed = 3L) {
  control <- sgmcmc_control(step_size = eps, step = sgmcmc_step(schedule = "constant"))
  ctl <- scalebayes:::sgmcmc_engine_control(control, 0, 1, family = "gaussian", method = "none", sampler = sampler,
                                            batch_size = 1, report_every = 256L, prune = FALSE, trace_every = iterations,
                                            iterations = iterations, burnin = 0L, thin = 1L, keep = seq_along(init),
                                            chains = 1L, chain_offset = 0)
  ctl$metric_factor <- factor
  eng <- unclass(target)[c("type", "mean", "cov")]
  r <- scalebayes:::cpp_sgmcmc_density(eng, matrix(init, ncol = 1L), ctl, list(seed = seed, threads = 1L, quiet = TRUE))
  r$chains[[1]]$draws
}

test_that("a metric is the sampler in the whitened coordinates, draw for draw (SGLD, SGHMC, SGNHT)", {
  S <- matrix(c(4, 1.8, 0.3, 1.8, 1, 0.2, 0.3, 0.2, 0.25), 3)
  L <- t(chol(S))
  mu <- c(1, -2, 0.5)
  th0 <- c(3, 0, 1)
  for (s in c("sgld", "sghmc", "sgnht")) {
    # N(mu, S) with metric L against N(L^-1 mu, I) without one, from L^-1 theta0: theta = L phi at every draw
    a <- metric_engine_draws(sgmcmc_target("gaussian", mean = mu, cov = S), th0, 0.05, factor = L, sampler = s)
    b <- metric_engine_draws(sgmcmc_target("gaussian", mean = drop(solve(L, mu)), cov = diag(3)),
                             drop(solve(L, th0)), 0.05, sampler = s)
    expect_equal(a, b %*% t(L), tolerance = 1e-9, info = s)
    # a diagonal metric likewise, against the target rescaled coordinate by coordinate
    D <- sqrt(diag(S))
    a <- metric_engine_draws(sgmcmc_target("gaussian", mean = mu, cov = S), th0, 0.05, factor = D, sampler = s)
    b <- metric_engine_draws(sgmcmc_target("gaussian", mean = mu / D, cov = S / outer(D, D)), th0 / D, 0.05,
                             sampler = s)
    expect_equal(a, sweep(b, 2L, D, "*"), tolerance = 1e-9, info = s)
  }
  # a metric of the wrong size or with a non-positive diagonal is refused by the engine
  expect_error(metric_engine_draws(sgmcmc_target("gaussian", mean = mu, cov = S), th0, 0.05, factor = diag(2)),
               "metric")
  expect_error(metric_engine_draws(sgmcmc_target("gaussian", mean = mu, cov = S), th0, 0.05, factor = c(1, 0, 1)),
               "metric")
})

test_that("density defaults adapt a dense metric and match a correlated Gaussian within Monte-Carlo error", {
  S <- matrix(0.9, 4, 4); diag(S) <- 1
  S <- S * outer(c(1, 10, 0.1, 3), c(1, 10, 0.1, 3))  # correlation 0.9, scales 0.1 to 10
  mu <- c(0, 5, -1, 2)
  for (s in c("sgld", "sghmc")) {
    f <- suppressWarnings(sgmcmc_density(sgmcmc_target("gaussian", mean = mu, cov = S), init = rep(0, 4), seed = 1,
                                         sampler = s))
    expect_identical(f$warmup$metric_kind, "dense")
    ess <- posterior::ess_mean(posterior::as_draws_array(f))
    m <- colMeans(f$draws)
    sdev <- sqrt(diag(S))
    # means within 4 Monte-Carlo ses; sds within the 10 % the step's variance cap allows, plus MC error
    expect_true(all(abs(m - mu) < 4 * sdev / sqrt(ess)), info = s)
    r <- apply(f$draws, 2L, stats::sd) / sdev
    expect_true(all(r > 0.93 & r < 1.1), info = paste(s, paste(round(r, 3), collapse = " ")))
    expect_lt(f$settings$iterations, 50000)
  }
})

test_that("regression defaults: the metric warm-up's choices are reported and thread-invariant", {
  d <- scalebayes::diabetes
  x <- unclass(d$x)
  f1 <- sgld_sa(x, d$y, seed = 2, threads = 1, quiet = TRUE)
  f2 <- sgld_sa(x, d$y, seed = 2, threads = 2, quiet = TRUE)
  expect_identical(f1$draws, f2$draws)
  w <- f1$warmup
  expect_identical(w$metric_kind, "dense")
  expect_true(is.matrix(w$metric) && all(dim(w$metric) == ncol(x) + 1L))
  expect_equal(f1$settings$batch_size, nrow(x))  # full-data gradients up to 10,000 rows
  expect_lt(w$iterations, 20000)
  out <- paste(utils::capture.output(print(f1)), collapse = "\n")
  expect_match(out, "pilot iterations of one chain")
  expect_match(out, "dense metric")
  # metric = "none" gives the grid warm-up of before
  f0 <- sgld_sa(x, d$y, seed = 2, quiet = TRUE, iterations = 2000,
                control = sgmcmc_control(step = sgmcmc_step(metric = "none")))
  expect_null(f0$warmup$metric)
  expect_gt(f0$warmup$iterations, 100000)
  # the preconditioned samplers do not read it: the classed warning for an unused setting
  expect_warning(hamcmc_sa(x, d$y, seed = 2, iterations = 200, quiet = TRUE,
                           control = sgmcmc_control(step_size = 0.01, step = sgmcmc_step(metric = "dense"))),
                 class = "scalebayes_warning_unused")
  expect_error(sgmcmc_step(metric = "full"), class = "scalebayes_error")
})

test_that("v0 = 0.2 / sqrt(N) selects on Table 1's design (n = 200, p = 50, 5 signals); diabetes' clear signals", {
  set.seed(11)
  n <- 200; p <- 50
  S <- 0.6^abs(outer(1:p, 1:p, "-"))
  x <- matrix(rnorm(n * p), n, p) %*% chol(S)
  y <- drop(x %*% c(3, 2, 1, 2, 3, rep(0, p - 5))) + rnorm(n, sd = sqrt(3))
  f <- suppressWarnings(sgld_sa(x, y, seed = 1, v0 = 0.2 / sqrt(n), quiet = TRUE))
  expect_true(all(f$inclusion[1:5] >= 0.9))
  expect_lte(mean(f$inclusion[-(1:5)]), 0.1)
  d <- scalebayes::diabetes
  g <- suppressWarnings(sgld_sa(unclass(d$x), d$y, seed = 1, v0 = 0.2 / sqrt(442), quiet = TRUE))
  # bmi and ltg (z about 8) are in the slab; the others' probabilities are the indicators' posterior at the
  # fit's delta (test-sgmcmc-inclusion.R checks them against the exact enumeration): age, tch, glu measured
  # 0.006, 0.061, 0.010
  expect_true(all(g$inclusion[c("bmi", "ltg")] > 0.9))
  expect_true(all(g$inclusion[c("age", "tch", "glu")] < 0.2))
  # one probability per sparse coefficient, in [0, 1]
  expect_named(g$inclusion, colnames(d$x))
  expect_true(all(g$inclusion >= 0 & g$inclusion <= 1))
})

test_that("a density's metric adapts across a thin ridge (correlation -0.99998) from its Laplace start", {
  # posteriordb's kilpisjarvi in miniature: alpha and beta of a regression on years. The exact covariance is the
  # warm-up's first metric; shrinking the draws' raw correlation towards I made the next metric about 2,800
  # times too wide across the ridge and every pilot diverged (the call stopped with "found no step"). The
  # estimate is now made in the whitened coordinates of the metric the pilot ran with.
  s <- c(30, 0.0075, 0.1)
  rho <- -0.99998
  S <- diag(s) %*% matrix(c(1, rho, 0, rho, 1, 0, 0, 0, 1), 3) %*% diag(s)
  m <- c(-60, 0.0176, 0.1)
  f <- sgmcmc_density(sgmcmc_target("gaussian", mean = m, cov = S), seed = 1, quiet = TRUE)
  d <- as.matrix(f)
  ess <- min(f$diagnostics$convergence$ess_bulk)
  expect_gt(ess, 400)
  # means within 5 Monte-Carlo se (se = 1 / sqrt(ESS) in sd units); sds within the package's NUTS band and the
  # warm-up's 10 % excess-variance cap plus 5 se of an sd ratio (1 / sqrt(2 ESS))
  expect_lt(max(abs(colMeans(d) - m) / s), 5 / sqrt(ess))
  r <- apply(d, 2, stats::sd) / s
  expect_true(all(r > 1 - 5 / sqrt(2 * ess) & r < sqrt(1.1) + 5 / sqrt(2 * ess)), info = paste(round(r, 3), collapse = " "))
  # and it stays one-step-sized: no round shrank its step (Stein's check in the whitened coordinates)
  expect_true(all(f$warmup$adaptation$step_size == 0.1))
  expect_lt(max(f$diagnostics$convergence$rhat), 1.02)
})
