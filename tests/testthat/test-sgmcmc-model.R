# sgmcmc_model(): the user's minibatched model (an R log_lik / log_prior, or a model compiled against
# scalebayes/target.hpp) as a target of sgmcmc_density(). Exactness on a Bayesian linear regression with a Gaussian
# prior (its posterior is Gaussian and known), minibatched against full batch, same seed same draws, the compiled
# model against the R model, control variates, and bad input.

# y = X beta + e, e ~ N(0, 1), beta ~ N(0, 10^2 I): the posterior is N(m, S), S = (X'X + I / 100)^-1, m = S X'y.
blr_data <- function(N = 2000, seed = 3) {
  set.seed(seed)
  X <- cbind(1, matrix(rnorm(N * 2), N, 2))
  colnames(X) <- c("x0", "x1", "x2")
  y <- drop(X %*% c(1, -0.5, 0.25) + rnorm(N))
  S <- solve(crossprod(X) + diag(1 / 100, 3))
  list(df = data.frame(y = y, X), X = X, y = y, mean = drop(S %*% crossprod(X, y)), sd = sqrt(diag(S)))
}
blr_lik <- function(theta, rows) {
  X <- cbind(rows$x0, rows$x1, rows$x2)
  r <- rows$y - drop(X %*% theta)
  list(log_lik = -0.5 * sum(r * r), gradient = drop(crossprod(X, r)))
}
blr_prior <- function(theta) list(log_prior = -sum(theta^2) / 200, gradient = -theta / 100)
# the convergence warning of a short run muffled (the tests check the draws themselves)
quiet_convergence <- function(expr) {
  withCallingHandlers(expr, scalebayes_warning_convergence = function(w) invokeRestart("muffleWarning"))
}

# every mean within 0.2 posterior sd and every sd within [0.8, 1.25] of the exact ones; with a bulk ESS of at
# least 200 per coordinate the Monte-Carlo se of a mean is at most 0.07 sd (0.2 is 3 se) and of an sd ratio
# about 0.05 (the interval is 4-5 se wide on either side), the discretization's excess within the warm-up's 10 %
expect_exact <- function(fit, ex, label) {
  m <- colMeans(as.matrix(fit))
  s <- apply(as.matrix(fit), 2, sd)
  ess <- min(fit$diagnostics$convergence$ess_bulk)
  expect_gte(ess, 200, label = paste(label, "bulk ESS"))
  expect_lt(max(abs(m - ex$mean) / ex$sd), 0.2, label = paste(label, "max |mean error| / sd"))
  expect_gt(min(s / ex$sd), 0.8, label = paste(label, "min sd ratio"))
  expect_lt(max(s / ex$sd), 1.25, label = paste(label, "max sd ratio"))
}

test_that("an R log_lik in minibatches samples the exact posterior of a Bayesian linear regression", {
  skip_on_cran()
  skip_if_not_installed("posterior")
  ex <- blr_data()
  m <- sgmcmc_model(blr_lik, data = ex$df, log_prior = blr_prior, batch_size = 200)
  expect_s3_class(m, "sb_sgmcmc_model")
  expect_equal(m$nobs, 2000)
  # a fixed step: the Hessian is about 2,000 I, so SGLD's relative excess variance is about eps 2000 (1 + 9) / 2
  # = 0.1 at eps = 1e-5 and its autocorrelation time about 1 / (eps 2000) = 50 iterations: a bulk ESS near 400
  ctl <- sgmcmc_control(step_size = 1e-5, step = sgmcmc_step(schedule = "constant"))
  fit <- sgmcmc_density(m, init = c(0, 0, 0), iterations = 40000, chains = 2, control = ctl, seed = 1,
                        quiet = TRUE)
  expect_s3_class(fit, "sb_sgmcmc_density")
  expect_false(any(fit$diverged))
  expect_equal(nobs(fit), 2000)
  expect_exact(fit, ex, "minibatch 200, fixed step")
  # ksd() of the fit scores the draws with the full-data gradient
  expect_true(is.finite(ksd(fit)$ksd))
})

test_that("an R log_lik with every default (the warm-up's step and run length) samples the exact posterior", {
  skip_on_cran()
  skip_if_fast_tier()  # tens of thousands of R calls per chain
  skip_if_not_installed("posterior")
  ex <- blr_data()
  fit <- sgmcmc_density(sgmcmc_model(blr_lik, data = ex$df, log_prior = blr_prior, batch_size = 200),
                        init = c(0, 0, 0), seed = 1, quiet = TRUE)
  expect_exact(fit, ex, "minibatch 200, defaults")
})

test_that("minibatched and full-batch runs of the same model agree, and the data may be a matrix or a list", {
  skip_on_cran()
  skip_if_not_installed("posterior")
  ex <- blr_data()
  lik_m <- function(theta, rows) {  # a matrix's rows
    r <- rows[, "y"] - drop(rows[, c("x0", "x1", "x2")] %*% theta)
    list(log_lik = -0.5 * sum(r * r), gradient = drop(crossprod(rows[, c("x0", "x1", "x2")], r)))
  }
  # full batch at eps = 5e-5 (excess 0.05 of a variance), minibatches of 400 (noise factor 5) at 1e-5 (0.05)
  const <- sgmcmc_step(schedule = "constant")
  full <- sgmcmc_density(sgmcmc_model(lik_m, data = cbind(y = ex$y, ex$X), log_prior = blr_prior,
                                      batch_size = 2000), init = c(0, 0, 0), iterations = 20000, chains = 2,
                         control = sgmcmc_control(step_size = 5e-5, step = const), seed = 2, quiet = TRUE)
  lik_l <- function(theta, rows) {  # a list: X a matrix column, y a vector
    r <- rows$y - drop(rows$X %*% theta)
    list(log_lik = -0.5 * sum(r * r), gradient = drop(crossprod(rows$X, r)))
  }
  mini <- quiet_convergence(sgmcmc_density(sgmcmc_model(lik_l, data = list(y = ex$y, X = ex$X), log_prior = blr_prior,
                                      batch_size = 400), init = c(0, 0, 0), iterations = 40000, chains = 2,
                         control = sgmcmc_control(step_size = 1e-5, step = const), seed = 2, quiet = TRUE))
  expect_exact(full, ex, "full batch")
  expect_exact(mini, ex, "minibatch 400")
  # with each other: the difference of the means within 4 combined Monte-Carlo se
  se <- function(f) apply(as.matrix(f), 2, sd) / sqrt(f$diagnostics$convergence$ess_bulk)
  z <- (colMeans(as.matrix(full)) - colMeans(as.matrix(mini))) / sqrt(se(full)^2 + se(mini)^2)
  expect_lt(max(abs(z)), 4)
})

test_that("same seed, same draws; a fixed step runs every sampler on a model", {
  ex <- blr_data(N = 500)
  m <- sgmcmc_model(blr_lik, data = ex$df, log_prior = blr_prior, batch_size = 50)
  ctl <- sgmcmc_control(step_size = 1e-4, step = sgmcmc_step(schedule = "constant"))
  run <- function(seed, sampler = "sgld") {
    suppressWarnings(sgmcmc_density(m, init = ex$mean, sampler = sampler, iterations = 400, chains = 2,
                                    control = ctl, seed = seed, quiet = TRUE))
  }
  a <- run(5)
  expect_identical(as.matrix(a), as.matrix(run(5)))
  expect_false(identical(as.matrix(a), as.matrix(run(6))))
  for (s in c("sghmc", "sgnht", "hamcmc_sa", "hamcmc")) {
    f <- run(5, s)
    expect_false(any(f$diverged), label = s)
    expect_true(all(is.finite(as.matrix(f))), label = s)
  }
})

test_that("a log_lik without a gradient is differentiated numerically, with a classed warning about its cost", {
  ex <- blr_data(N = 300)
  lik0 <- function(theta, rows) blr_lik(theta, rows)$log_lik  # the number alone
  m <- sgmcmc_model(lik0, data = ex$df, log_prior = blr_prior, batch_size = 300)
  ctl <- sgmcmc_control(step_size = 1e-4, step = sgmcmc_step(schedule = "constant"))
  expect_warning(f0 <- quiet_convergence(sgmcmc_density(m, init = ex$mean, iterations = 200, chains = 1,
                                                        control = ctl, seed = 1, quiet = TRUE)),
                 class = "scalebayes_warning_finite_difference")
  f1 <- suppressWarnings(sgmcmc_density(sgmcmc_model(blr_lik, data = ex$df, log_prior = blr_prior,
                                                     batch_size = 300),
                                        init = ex$mean, iterations = 200, chains = 1, control = ctl, seed = 1,
                                        quiet = TRUE))
  # full batch, the same noise: the draws differ only by the differences' error (relative 1e-8 or so)
  expect_lt(max(abs(as.matrix(f0) - as.matrix(f1))), 1e-5)
})

test_that("bad input gets classed errors naming the argument", {
  ex <- blr_data(N = 200)
  init <- c(0, 0, 0)
  go <- function(m) sgmcmc_density(m, init = init, iterations = 100, chains = 1, quiet = TRUE,
                                   control = sgmcmc_control(step_size = 1e-4))
  # a log_lik that errors: at the start and during the run
  boom <- function(theta, rows) stop("my model broke")
  e <- expect_error(go(sgmcmc_model(boom, data = ex$df)), class = "scalebayes_error_target")
  expect_match(conditionMessage(e), "log_lik")
  expect_match(paste(conditionMessage(e), conditionMessage(e$parent)), "my model broke")
  k <- 0
  later <- function(theta, rows) {
    k <<- k + 1
    if (k > 3) stop("broke later")
    blr_lik(theta, rows)
  }
  e <- expect_error(go(sgmcmc_model(later, data = ex$df, batch_size = 20)), class = "scalebayes_error_target")
  expect_match(conditionMessage(e), "log_lik")
  # NaN at the start
  nan <- function(theta, rows) list(log_lik = NaN, gradient = c(0, 0, 0))
  e <- expect_error(go(sgmcmc_model(nan, data = ex$df)), class = "scalebayes_error_target")
  expect_match(conditionMessage(e), "log_lik")
  expect_match(conditionMessage(e), "non-finite")
  # a gradient of the wrong length, and a prior's
  short <- function(theta, rows) list(log_lik = 0, gradient = c(0, 0))
  e <- expect_error(go(sgmcmc_model(short, data = ex$df)), class = "scalebayes_error")
  expect_match(conditionMessage(e), "log_lik")
  expect_match(conditionMessage(e), "length 2")
  e <- expect_error(go(sgmcmc_model(blr_lik, data = ex$df, log_prior = function(theta) list(log_prior = 0, gradient = 1))),
                    class = "scalebayes_error")
  expect_match(conditionMessage(e), "log_prior")
  # a wrong value
  e <- expect_error(go(sgmcmc_model(function(theta, rows) "a", data = ex$df)), class = "scalebayes_error")
  expect_match(conditionMessage(e), "log_lik")
  # data whose columns differ in length
  e <- expect_error(sgmcmc_model(blr_lik, data = list(y = 1:10, x = 1:9)), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "data")
  expect_error(sgmcmc_model(blr_lik, data = 1:10), class = "scalebayes_error_input")
  expect_error(sgmcmc_model(blr_lik), class = "scalebayes_error_input")
  expect_error(sgmcmc_model(blr_lik, data = ex$df, batch_size = 201), class = "scalebayes_error_input")
  expect_error(sgmcmc_model("f", data = ex$df), class = "scalebayes_error_input")
  expect_error(sgmcmc_model(function(theta) 0, data = ex$df), class = "scalebayes_error_input")
  expect_error(sgmcmc_model(blr_lik, data = ex$df, log_prior = 3), class = "scalebayes_error_input")
  # init is required
  e <- expect_error(sgmcmc_density(sgmcmc_model(blr_lik, data = ex$df)), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "init")
})

# Compiled models (scalebayes/target.hpp; inst/examples/target_models.cpp): the same regression and a Gaussian
# mean whose arithmetic is R's (long double sums, as R's sum()), so that its draws equal those of the R model.
compiled_models <- local({
  cache <- NULL
  function() {
    if (!is.null(cache)) return(cache)
    skip_on_cran()
    skip_if_not_installed("Rcpp")
    env <- new.env()
    ok <- tryCatch({
      Rcpp::sourceCpp(system.file("examples", "target_models.cpp", package = "scalebayes"), env = env,
                      verbose = FALSE)
      TRUE
    }, error = function(e) FALSE)
    if (!ok) skip("C++ compilation is not available")
    cache <<- env
    env
  }
})

test_that("a compiled model gives the draws of the R model computing the same numbers", {
  cm <- compiled_models()
  set.seed(9)
  y <- rnorm(400, 2)
  r_lik <- function(theta, rows) {
    r <- rows$y - theta
    list(log_lik = -0.5 * sum(r * r), gradient = sum(r))
  }
  r_prior <- function(theta) list(log_prior = -theta * theta / 200, gradient = -theta / 100)
  ctl <- sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(schedule = "constant"))
  run <- function(m, threads = 1) {
    suppressWarnings(sgmcmc_density(m, init = 0, iterations = 2000, chains = 2, control = ctl, seed = 4,
                                    threads = threads, quiet = TRUE))
  }
  a <- run(sgmcmc_model(r_lik, data = data.frame(y = y), log_prior = r_prior, batch_size = 40))
  b <- run(sgmcmc_model(cm$mean_model(y), batch_size = 40))
  expect_identical(as.matrix(a), as.matrix(b))
  # a thread-safe compiled model: its chains on two threads, the same draws
  expect_identical(as.matrix(b), as.matrix(run(sgmcmc_model(cm$mean_model(y), batch_size = 40), threads = 2)))
  # an external pointer without the tag, a data argument, the wrong init length
  expect_error(sgmcmc_model(cm$untagged_model(y)), class = "scalebayes_error_input")
  expect_error(sgmcmc_model(cm$mean_model(y), data = data.frame(y = y)), class = "scalebayes_error_input")
  expect_error(sgmcmc_density(sgmcmc_model(cm$mean_model(y)), init = c(0, 0), iterations = 10),
               class = "scalebayes_error_input")
})

test_that("a compiled model samples the exact posterior with defaults", {
  skip_if_not_installed("posterior")
  cm <- compiled_models()
  ex <- blr_data(N = 5000)
  fit <- sgmcmc_density(sgmcmc_model(cm$blr_model(ex$X, ex$y), batch_size = 250), init = c(0, 0, 0), seed = 1,
                        threads = 2, quiet = TRUE)
  expect_exact(fit, ex, "compiled, minibatch 250")
})

test_that("control variates: SGLD, SGHMC and SGNHT sample the exact posterior from the mode's correction", {
  skip_if_not_installed("posterior")
  cm <- compiled_models()
  ex <- blr_data(N = 20000)
  ctl <- sgmcmc_control(step = sgmcmc_step(gradient = "control_variate"))
  for (s in c("sgld", "sghmc", "sgnht")) {
    fit <- sgmcmc_density(sgmcmc_model(cm$blr_model(ex$X, ex$y), batch_size = 100), init = c(0, 0, 0),
                          sampler = s, control = ctl, seed = 1, threads = 2, quiet = TRUE)
    expect_false(is.null(fit$control_variate), label = s)
    # the centre is the posterior mode (here its mean)
    expect_lt(max(abs(fit$control_variate$center - ex$mean) / ex$sd), 1e-3, label = s)
    expect_exact(fit, ex, paste(s, "control variates"))
  }
})
