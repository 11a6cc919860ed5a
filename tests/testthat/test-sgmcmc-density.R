# sgmcmc_density(): SG-MCMC of a log-density target (sgmcmc/density.hpp; the inline mode of run_chains for R
# targets). Sampling checks against exact moments with Monte-Carlo standard errors from the effective sample size;
# R and C++ targets give the same draws; thread invariance; divergence; bad inputs. Ctrl-C: test-interrupt.R.
# The engine checks call the sampler through sgmcmc_density_engine() (helper-sgmcmc-engine.R: one chain, 10,000
# iterations and step 1e-3 when none is given, the defaults before issue 37); the defaults are tested in
# test-sgmcmc-trust.R.

# The banana log density, operation for operation as BananaTarget::eval (sgmcmc/density.hpp).
banana_r <- function(b) {
  u <- 4 * (b[2] + 1.2) - b[1] * b[1]
  list(log_density = -(b[1] * b[1] * b[1] * b[1]) / 10 - 0.5 * u * u,
       gradient = c(-0.4 * b[1] * b[1] * b[1] + 2 * b[1] * u, -4 * u))
}

gauss5 <- function() {
  S <- 0.6^abs(outer(1:5, 1:5, "-")) * outer(c(1, 2, 0.5, 1, 1.5), c(1, 2, 0.5, 1, 1.5))
  list(mean = c(1, -2, 0.5, 0, 3), cov = S)
}

# z-scores of the mean and covariance entries of a fit against the exact ones; the standard errors use the
# effective sample size (posterior::ess_mean over the chains) of x_i and of (x_i - m_i)(x_j - m_j).
moment_z <- function(fit, mean, cov) {
  d <- length(mean)
  arr <- posterior::as_draws_array(fit)
  x <- unclass(arr)  # iterations x chains x d
  m <- colMeans(as.matrix(fit))
  zm <- vapply(seq_len(d), function(i) {
    v <- x[, , i]
    (mean(v) - mean[i]) / (stats::sd(v) / sqrt(posterior::ess_mean(v)))
  }, numeric(1))
  zc <- c()
  for (i in seq_len(d)) for (j in i:d) {
    v <- (x[, , i] - m[i]) * (x[, , j] - m[j])
    zc <- c(zc, (mean(v) - cov[i, j]) / (stats::sd(v) / sqrt(posterior::ess_mean(v))))
  }
  list(mean = zm, cov = zc)
}

test_that("HAMCMC-SA (matrix form, unnormalized) and SGLD sample a correlated 5-d Gaussian", {
  skip_on_cran()
  skip_if_not_installed("posterior")
  g <- gauss5()
  tg <- sgmcmc_target("gaussian", mean = g$mean, cov = g$cov)
  hs <- function(form, normalize = FALSE) {
    sgmcmc_density_engine(tg, init = rep(0, 5), sampler = "hamcmc_sa", iterations = 30000, burnin = 2000, thin = 4,
                   chains = 4, seed = 11, quiet = TRUE,
                   control = sgmcmc_control(step_size = 0.01,
                                            step = sgmcmc_step(schedule = "constant"),
                                            lbfgs = sgmcmc_lbfgs(sa_form = form, memory = 3, normalize = normalize)))
  }
  # the dense form and the diagonal form (linear cost, the default above 2,000 parameters)
  for (form in c("matrix", "diagonal")) {
    z <- moment_z(hs(form), g$mean, g$cov)
    # 20 z-scores: each |z| < 4 (a false alarm has probability about 1e-3 in all)
    expect_lt(max(abs(z$mean)), 4, label = form)
    expect_lt(max(abs(z$cov)), 4, label = form)
  }
  # normalized (lines 7-8 as printed) the diagonal form does not sample the target: the check sees it
  expect_gt(max(abs(unlist(moment_z(hs("diagonal", TRUE), g$mean, g$cov)))), 4)
  # plain SGLD at a small step: its discretisation bias, at most eps lambda_max(Q) / 2 = 0.9 % of a variance
  # (precision eigenvalues 0.20 .. 9.1), is below the Monte-Carlo error (effective sample size about 2 000: the
  # slowest direction mixes in 1 / (eps 0.2) = 2 500 iterations)
  fs <- sgmcmc_density_engine(tg, init = rep(0, 5), sampler = "sgld", iterations = 1.25e6, burnin = 5e4, thin = 100,
                       chains = 4, seed = 12, quiet = TRUE,
                       control = sgmcmc_control(step_size = 0.002, step = sgmcmc_step(schedule = "constant")))
  z <- moment_z(fs, g$mean, g$cov)
  expect_lt(max(abs(z$mean)), 4)
  expect_lt(max(abs(z$cov)), 4)
  # the check can fail: a variance off by 25 % is far outside these errors
  fs$draws[, 2] <- g$mean[2] + (fs$draws[, 2] - g$mean[2]) * sqrt(1.25)
  expect_gt(max(abs(moment_z(fs, g$mean, g$cov)$cov)), 4)
})

test_that("a target written in R and the built-in banana give the same draws for the same seed", {
  for (s in scalebayes:::sgmcmc_samplers()$name) {  # every sampler of the table
    ctl <- sgmcmc_control(step_size = 0.03, step = sgmcmc_step(schedule = "constant"),
                          lbfgs = if (scalebayes:::sgmcmc_sampler_info(s)$preconditioned) sgmcmc_lbfgs(memory = 3, gamma_min = 16))
    f1 <- sgmcmc_density_engine(banana_r, init = c(0.5, -1), sampler = s, iterations = 1500, chains = 2, seed = 3,
                         quiet = TRUE, control = ctl)
    f2 <- sgmcmc_density_engine(sgmcmc_target("banana"), init = c(0.5, -1), sampler = s, iterations = 1500, chains = 2,
                         seed = 3, threads = 2, quiet = TRUE, control = ctl)
    expect_identical(as.matrix(f1), as.matrix(f2), info = s)
    expect_identical(f1$trace, f2$trace, info = s)
    expect_true(all(is.finite(as.matrix(f1))), info = s)
  }
  # the built-in evaluates the same numbers as the R function
  b <- c(0.7, -0.3)
  ev <- scalebayes:::cpp_sgmcmc_target_eval(list(type = "banana"), matrix(b))
  expect_identical(ev$log_density, banana_r(b)$log_density)
  expect_identical(drop(ev$gradient), banana_r(b)$gradient)
})

test_that("SGNHT's thermostat samples a Gaussian at temperature 1 / tau with the warm-up's step", {
  skip_on_cran()  # default-length runs (tools/run-tests.sh runs them)
  # variances cov / tau within the warm-up's accuracy cap (at most 10 % excess variance); the run length aims
  # at a bulk ESS of 300 per chain, 1,200 in all (measured 1,201-2,064 here, ratios 0.92-0.97)
  S <- diag(c(1, 4))
  for (tau in c(1, 2)) {
    g <- sgmcmc_density(sgmcmc_target("gaussian", mean = c(0, 0), cov = S), sampler = "sgnht", seed = 2,
                        quiet = TRUE, control = sgmcmc_control(step = sgmcmc_step(temperature = tau)))
    ess <- min(g$diagnostics$convergence$ess_bulk)
    expect_gte(ess, 1000)
    r <- apply(as.matrix(g), 2, stats::var) / (diag(S) / tau)
    expect_true(all(abs(r - 1) < 0.1),
                label = paste("tau", tau, "variance ratios", paste(round(r, 3), collapse = " ")))
    expect_lt(max(abs(colMeans(as.matrix(g))) / sqrt(diag(S) / tau)), 0.1)
  }
})

test_that("built-in targets are thread invariant and chains differ", {
  g <- gauss5()
  for (tg in list(sgmcmc_target("banana"), sgmcmc_target("gaussian", mean = g$mean, cov = g$cov))) {
    for (s in c("sgld", "hamcmc_sa")) {
      args <- list(target = tg, sampler = s, iterations = 2000, chains = 3, seed = 9, quiet = TRUE,
                   control = sgmcmc_control(step_size = 0.01, step = sgmcmc_step(schedule = "constant"),
                                            lbfgs = if (s == "hamcmc_sa") sgmcmc_lbfgs(gamma_min = 16)))
      f1 <- do.call(sgmcmc_density_engine, c(args, threads = 1))
      f2 <- do.call(sgmcmc_density_engine, c(args, threads = 2))
      expect_identical(f1$draws, f2$draws)
      expect_false(identical(f1$draws[f1$chain == 1, ], f1$draws[f1$chain == 2, ]))
    }
  }
})

test_that("the banana's exact draws have the exact moments", {
  x <- banana_exact_draws(2e5, seed = 1)
  # E b1 = 0, E b1^2 = Gamma(3/4) / Gamma(1/4) sqrt(10) (marginal exp(-b1^4/10)), E b2 = E b1^2 / 4 - 1.2
  m2 <- gamma(3 / 4) / gamma(1 / 4) * sqrt(10)
  se <- function(v) stats::sd(v) / sqrt(length(v))
  expect_lt(abs(mean(x[, 1])) / se(x[, 1]), 4)
  expect_lt(abs(mean(x[, 1]^2) - m2) / se(x[, 1]^2), 4)
  expect_lt(abs(mean(x[, 2]) - (m2 / 4 - 1.2)) / se(x[, 2]), 4)
  r <- x[, 2] - (x[, 1]^2 / 4 - 1.2)
  expect_lt(abs(stats::sd(r) - 0.25), 0.005)
  expect_identical(banana_exact_draws(10, seed = 2), banana_exact_draws(10, seed = 2))
})

test_that("a chain that diverges everywhere is a classed error with its last good state, not a crash", {
  # every chain diverged: nothing is left to average (one diverged chain among good ones is left out with a
  # warning: test-sgmcmc-trust.R)
  big <- sgmcmc_control(step_size = 5, step = sgmcmc_step(schedule = "constant"))
  for (s in c("sgld", "hamcmc_sa", "hamcmc")) {
    for (tg in list(sgmcmc_target("banana"), banana_r)) {
      e <- expect_error(sgmcmc_density_engine(tg, init = c(2, 0), sampler = s, iterations = 200, burnin = 0,
                                              seed = 1, quiet = TRUE, control = big),
                        class = "scalebayes_error_diverged")
      expect_s3_class(e, "scalebayes_error_divergence")  # the earlier class, kept
      expect_true(all(is.finite(e$last_state)), info = s)
      expect_lt(e$diverged_at, 200)
    }
  }
})

test_that("fits answer the sb_fit methods; predict() explains there are no data", {
  f <- sgmcmc_density_engine(sgmcmc_target("banana"), iterations = 2000, chains = 2, seed = 1, quiet = TRUE,
                      control = sgmcmc_control(step_size = 0.02, step = sgmcmc_step(schedule = "constant")))
  expect_s3_class(f, "sb_fit")
  expect_output(print(f), "SGLD \\(density target\\)")
  expect_identical(colnames(as.matrix(f)), c("b1", "b2"))
  expect_equal(coef(f), colMeans(as.matrix(f)))
  expect_identical(summary(f)$parameter, c("b1", "b2"))
  expect_identical(dim(posterior_interval(f)), c(2L, 2L))
  expect_identical(dim(posterior::as_draws_array(f)), c(1000L, 2L, 2L))
  expect_identical(nrow(posterior::as_draws_df(f)), 2000L)
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(f))
  expect_error(predict(f), class = "scalebayes_error_state", regexp = "no data")
  expect_identical(names(f$trace), c("chain", "iteration", "log_density", "eps", "tau"))
  # the trace's log density is that of the state at the start of the iteration: the previous kept draw
  g <- sgmcmc_density_engine(sgmcmc_target("banana"), iterations = 50, burnin = 0, thin = 1, seed = 2, quiet = TRUE,
                      control = sgmcmc_control(step_size = 0.02, trace_every = 1, step = sgmcmc_step(schedule = "constant")))
  dr <- as.matrix(g)
  expect_identical(g$trace$log_density[-1], apply(dr[-50, ], 1, function(b) banana_r(b)$log_density),
                   ignore_attr = TRUE)
  expect_identical(g$final_state[, 1], dr[50, ])
})

test_that("bad inputs are classed errors that name the argument", {
  ctl <- sgmcmc_control(step_size = 0.01, step = sgmcmc_step(schedule = "constant"))
  expect_error(sgmcmc_density_engine("banana", init = c(0, 0)), class = "scalebayes_error_input", regexp = "target")
  expect_error(sgmcmc_density_engine(banana_r), class = "scalebayes_error_input", regexp = "init")
  expect_error(sgmcmc_density_engine(sgmcmc_target("banana"), init = c(0, 0, 0), quiet = TRUE),
               class = "scalebayes_error_input", regexp = "init")
  expect_error(sgmcmc_density_engine(sgmcmc_target("banana"), init = matrix(0, 2, 3), chains = 2, quiet = TRUE),
               class = "scalebayes_error_input", regexp = "column per chain")
  expect_error(sgmcmc_density_engine(banana_r, init = c(0, NA)), class = "scalebayes_error_input", regexp = "init")
  # wrong-length gradient, at the start and later in the run
  bad_len <- function(b) list(log_density = 0, gradient = c(1, 2, 3))
  e <- expect_error(sgmcmc_density_engine(bad_len, init = c(0, 0), quiet = TRUE), class = "scalebayes_error_input")
  expect_identical(e$arg, "target")
  expect_match(conditionMessage(e), "length 3")
  calls <- 0
  later <- function(b) {
    calls <<- calls + 1
    if (calls > 50) list(log_density = 0, gradient = 1) else banana_r(b)
  }
  e <- expect_error(sgmcmc_density_engine(later, init = c(0, 0), iterations = 200, quiet = TRUE, control = ctl),
                    class = "scalebayes_error_input")
  expect_identical(e$arg, "target")
  # non-finite gradient or log density where the chain starts; a malformed return value
  expect_error(sgmcmc_density_engine(function(b) list(log_density = 0, gradient = c(NaN, 0)), init = c(0, 0)),
               class = "scalebayes_error_input", regexp = "non-finite gradient")
  expect_error(sgmcmc_density_engine(function(b) list(log_density = -Inf, gradient = c(0, 0)), init = c(0, 0)),
               class = "scalebayes_error_input", regexp = "non-finite log density")
  expect_error(sgmcmc_density_engine(function(b) sum(b), init = c(0, 0)), class = "scalebayes_error_input",
               regexp = "log_density")
  # the L-BFGS settings
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(memory = 0)), class = "scalebayes_error", regexp = "memory")
  expect_error(sgmcmc_density_engine(banana_r, init = c(0, 0), sampler = "hamcmc", control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(memory = 1))),
               class = "scalebayes_error", regexp = "memory")
  big <- function(b) list(log_density = -sum(b * b) / 2, gradient = -b)
  e <- expect_error(sgmcmc_density_engine(big, init = rep(0, 2001), sampler = "hamcmc_sa",
                                   control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "matrix"))), class = "scalebayes_error")
  expect_identical(e$arg, "sa_form")
  expect_match(conditionMessage(e), "2,000")
  expect_error(sgmcmc_density_engine(banana_r, init = c(0, 0), sampler = "mala"), class = "scalebayes_error_input",
               regexp = "sampler")
  expect_error(sgmcmc_density_engine(banana_r, init = c(0, 0), control = list(step_size = 1)),
               class = "scalebayes_error_input", regexp = "control")
  # built-in targets
  expect_error(sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(3)), class = "scalebayes_error_input",
               regexp = "cov")
  expect_error(sgmcmc_target("gaussian", mean = c(0, 0), cov = matrix(c(1, 2, 2, 1), 2)),
               class = "scalebayes_error_input", regexp = "positive definite")
  expect_error(sgmcmc_target("gaussian", mean = c(0, NA), cov = diag(2)), class = "scalebayes_error_input",
               regexp = "mean")
  expect_error(sgmcmc_target("banana", mean = 1), class = "scalebayes_error_input", regexp = "mean")
  expect_error(sgmcmc_target("rosenbrock"), class = "scalebayes_error_input", regexp = "name")
})

test_that("a gaussian target's covariance is factorized once per call, whatever the chains and the warm-up (issue 61)", {
  # d = 300: the precision's column blocks (256 columns) do not divide d
  set.seed(7)
  A <- matrix(stats::rnorm(300 * 300), 300) / 20
  S <- crossprod(A) + diag(300)
  Q <- scalebayes:::cpp_sgmcmc_gaussian_precision(S)
  expect_equal(Q, solve(S), tolerance = 1e-10)
  expect_identical(Q, t(Q))
  ns <- asNamespace("scalebayes")
  calls <- new.env()
  calls$n <- 0
  suppressMessages(trace("cpp_sgmcmc_gaussian_precision", bquote(assign("n", get("n", .(calls)) + 1, envir = .(calls))), where = ns,
                         print = FALSE))
  on.exit(suppressMessages(untrace("cpp_sgmcmc_gaussian_precision", where = ns)), add = TRUE)
  tg <- sgmcmc_target("gaussian", mean = rep(1, 300), cov = S)
  # the default warm-up (scores of its pilots), four chains' start checks and the run: one factorization
  fit <- suppressWarnings(sgmcmc_density(tg, iterations = 300, seed = 1, quiet = TRUE))
  expect_identical(calls$n, 1)
  calls$n <- 0
  fit2 <- suppressWarnings(sgmcmc_density(tg, iterations = 100, chains = 4, seed = 1, quiet = TRUE,
                                          control = sgmcmc_control(step_size = 0.01)))
  expect_identical(calls$n, 1)
  expect_true(all(is.finite(as.matrix(fit2))))
})

test_that("a non-finite gradient in the default warm-up is named as the target's, not as no step found (issue 61)", {
  # NaN beyond a radius no pilot stays inside: before, "The step-size warm-up found no step on its grid"
  nan_everywhere <- function(b) list(log_density = -sum(b^2), gradient = if (sum(b^2) > 1e-4) rep(NaN, 2) else -2 * b)
  e <- expect_error(sgmcmc_density(nan_everywhere, init = c(0, 0), iterations = 100, seed = 1, quiet = TRUE),
                    class = "scalebayes_error_target")
  expect_s3_class(e, "scalebayes_error_divergence")
  expect_match(conditionMessage(e), "non-finite gradient")
  expect_match(conditionMessage(e), "warm-up")
  expect_identical(e$arg, "target")
  # NaN in the tails: the warm-up settles below the steps that reach them and says why
  nan_tails <- function(b) list(log_density = -sum(b^2), gradient = if (sum(b^2) > 0.5) rep(NaN, 2) else -2 * b)
  w <- suppressWarnings(expect_warning(fit <- sgmcmc_density(nan_tails, init = c(0, 0), iterations = 100, seed = 1,
                                                             quiet = TRUE),
                                       class = "scalebayes_warning_target"))  # (and the chains' convergence warning)
  expect_match(conditionMessage(w), "non-finite gradient .* warm-up")
  # a finite gradient: no such warning
  ok <- function(b) list(log_density = -sum(b^2), gradient = -2 * b)
  expect_no_condition <- function(expr) {
    got <- list()
    withCallingHandlers(expr, scalebayes_warning_target = function(c) {
      got[[length(got) + 1L]] <<- c
      invokeRestart("muffleWarning")
    }, warning = function(c) invokeRestart("muffleWarning"))
    expect_length(got, 0)
  }
  expect_no_condition(sgmcmc_density(ok, init = c(0, 0), iterations = 100, seed = 1, quiet = TRUE))
})

test_that("a warm-up long against its run is a message with the step it chose; quiet silences it (issue 61)", {
  old <- options(scalebayes.warmup_note_seconds = 0)
  on.exit(options(old), add = TRUE)
  tg <- sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(2))
  m <- expect_message(suppressWarnings(sgmcmc_density(tg, iterations = 100, seed = 1, quiet = FALSE)),
                      class = "scalebayes_message_warmup")
  expect_match(conditionMessage(m), "pilot iterations")
  expect_match(conditionMessage(m), "step_size")
  # the same call, quiet: no message; a given step: no warm-up, no message
  got <- 0
  withCallingHandlers(suppressWarnings(sgmcmc_density(tg, iterations = 100, seed = 1, quiet = TRUE)),
                      scalebayes_message_warmup = function(c) got <<- got + 1)
  withCallingHandlers(suppressWarnings(sgmcmc_density(tg, iterations = 100, seed = 1, quiet = FALSE,
                                                      control = sgmcmc_control(step_size = 0.1))),
                      scalebayes_message_warmup = function(c) got <<- got + 1)
  expect_identical(got, 0)
  # the regression front end gives it too
  set.seed(2)
  x <- matrix(stats::rnorm(100 * 3), 100, 3)
  y <- drop(x %*% c(1, -1, 0)) + stats::rnorm(100)
  expect_message(suppressWarnings(sgld_sa(x, y, iterations = 200, seed = 1, quiet = FALSE)),
                 class = "scalebayes_message_warmup")
})

test_that("HAMCMC's warm-up scores its pilots on the whitening: coordinates of very different scales", {
  # posteriordb's kilpisjarvi_mod (a regression on the uncentred year): sds 29, 3.5e-5 and 0.1, alpha-beta
  # correlation -0.99998. The warm-up used to score the pilots' KSD on theta's scale, where beta's terms
  # (of the order of 1 / its variance) drown the rest and a pilot that barely left its start scores best: it
  # chose the grid's bottom step 4.8e-7, the run took 2,000,000 iterations and warned (R-hat 2.3, sd ratios 0.68-0.72);
  # scored on phi it chooses 0.125 and samples it in 43,000. Tolerances as in the test below (ESS > 100 per
  # chain, else the call warns): 0.25 sd for the means, [0.8, 1.25] for the sd ratios.
  sds <- c(29, 3.5e-5, 0.1)
  R <- diag(3)
  R[1, 2] <- R[2, 1] <- -0.99998
  mu <- c(-61.6, 0.0178, 0.95)
  tg <- sgmcmc_target("gaussian", mean = mu, cov = R * outer(sds, sds))
  for (s in c("hamcmc_sa", "hamcmc")) {
    f <- expect_no_warning(sgmcmc_density(tg, sampler = s, seed = 1, quiet = TRUE))
    expect_gt(f$warmup$step_size, 1e-2, label = s)
    d <- as.matrix(f)
    expect_lt(max(abs(colMeans(d) - mu) / sds), 0.25, label = s)
    r <- apply(d, 2, stats::sd) / sds
    expect_true(all(r > 0.8 & r < 1.25), label = paste(s, paste(round(r, 3), collapse = " ")))
    expect_lt(f$settings$iterations, 2e5, label = s)
  }
})

test_that("HAMCMC-SA and HAMCMC run on the Laplace whitening of a full-data target: a ridge sampled in seconds", {
  # a 2-d Gaussian with correlation 0.99 and sds 1 and 10: on the raw scale the warm-up's step suits the narrow
  # direction and the chains crawl along the wide one (HAMCMC-SA: 2,000,000 iterations, 12.9 s and a convergence
  # warning with metric = "none"); on theta = mode + L phi, L L' the Laplace covariance (exact here), the
  # L-BFGS memory sees a standard normal. Tolerances: 4 chains of about 1,000 draws whose ESS exceeds 100 (the
  # call warns otherwise): a mean error of 0.25 sd is more than 2.5 Monte-Carlo sds, an sd ratio of 0.8 / 1.25
  # likewise.
  S <- matrix(c(1, 9.9, 9.9, 100), 2)
  tg <- sgmcmc_target("gaussian", mean = c(1, -2), cov = S)
  for (s in c("hamcmc_sa", "hamcmc")) {
    f <- expect_no_warning(sgmcmc_density(tg, init = c(0, 0), sampler = s, seed = 1, quiet = TRUE))
    expect_false(is.null(f$warmup$reparam), label = s)
    expect_equal(f$warmup$reparam$factor %*% t(f$warmup$reparam$factor), S, tolerance = 1e-4)
    d <- as.matrix(f)
    expect_lt(max(abs(colMeans(d) - c(1, -2)) / sqrt(diag(S))), 0.25, label = s)
    r <- apply(d, 2, stats::sd) / sqrt(diag(S))
    expect_true(all(r > 0.8 & r < 1.25), label = paste(s, paste(round(r, 3), collapse = " ")))
    expect_lt(f$settings$iterations, 2e5, label = s)
  }
  # metric = "none": the raw parameters, no reparametrization (a given step runs no warm-up and none either)
  g <- suppress_convergence(sgmcmc_density(tg, init = c(0, 0), sampler = "hamcmc_sa", seed = 1, quiet = TRUE,
                                           iterations = 2000, control = sgmcmc_control(step = sgmcmc_step(metric = "none"))))
  expect_null(g$warmup$reparam)
})
