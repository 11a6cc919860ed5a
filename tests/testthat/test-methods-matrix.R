# The methods matrix (inst/design.md, "One name per thing"): every fit class with posterior draws supports print,
# summary, plot, predict (on new data), coef, as.matrix, as_draws_matrix / as_draws_df / as_draws_array,
# posterior_interval and nobs. The test is a table: `mm_fits` (one row per fit: the fit and what the generic calls
# need to know about it) x `mm_generics` (one check per generic, each against an independent computation from the
# draws). Rows for the network classes are added to `mm_fits` the same way (a fit, `newx`, `predict_mean`,
# `expected_mean`, `chains`, `nobs`).
#
# A row: fit; newx (new data for predict()); predict_mean(out): the posterior predictive means from predict()'s
# value; expected_mean(fit, newx): the same computed here from the draws; chains: number of chains; nobs; and
# optionally coef_cols (the coef() entries that belong to the columns of as.matrix(), default all) and family
# (default "gaussian"; "poisson": the model generics are checked on the response scale exp(eta), Poisson noise).

mm_data <- local({
  set.seed(11)
  n <- 60
  x <- matrix(rnorm(n * 4), n, 4, dimnames = list(NULL, paste0("x", 1:4)))
  y <- drop(x %*% c(1.5, 0, -1, 0.5)) + rnorm(n)
  tf_x <- sort(runif(50, 0, 10))
  tf_y <- sin(tf_x) + rnorm(50, sd = 0.3)
  count <- rpois(n, exp(0.3 + 0.5 * x[, 1] - 0.4 * x[, 3]))
  list(x = x, y = y, newx = x[1:5, ] + 0.1, tf_x = tf_x, tf_y = tf_y, tf_newx = c(0.5, 2.25, 7.1), count = count)
})

# predictive mean of a linear model with intercept from the draws: newx %*% draws averaged
mm_linear_mean <- function(fit, newx) {
  d <- as.matrix(fit)
  rowMeans(cbind(1, newx) %*% t(d))
}

mm_fits <- local({
  d <- mm_data
  sg_full <- sgld_sa(d$x, d$y, iterations = 2000, burnin = 1000, thin = 1, chains = 2, seed = 3, quiet = TRUE,
                     threads = 1)
  list(
    wbb = list(fit = wbb(d$x, d$y, lambda = 5, draws = 40, seed = 1, quiet = TRUE, threads = 1), newx = d$newx,
               predict_mean = function(out) out$fit, expected_mean = mm_linear_mean, chains = 1L, nobs = 60L),
    # the Poisson WBB (log link): predict() and the model generics on the response scale (?predict-types)
    wbb_poisson = list(fit = wbb(d$x, d$count, family = "poisson", lambda = 5, draws = 40, seed = 1, quiet = TRUE,
                                 threads = 1),
                       newx = d$newx, predict_mean = function(out) out$fit,
                       expected_mean = function(fit, newx) rowMeans(exp(cbind(1, newx) %*% t(as.matrix(fit)))),
                       chains = 1L, nobs = 60L, family = "poisson"),
    blasso = list(fit = blasso(d$x, d$y, lambda = 1, chains = 3, iterations = 30, burnin = 10, seed = 2, quiet = TRUE,
                               threads = 1),
                  newx = d$newx, predict_mean = function(out) out$fit, expected_mean = mm_linear_mean, chains = 3L,
                  nobs = 60L),
    sgld_sa = list(fit = sg_full, newx = d$newx, predict_mean = function(out) out$fit, expected_mean = mm_linear_mean,
                   chains = 2L, nobs = 60L),
    # HAMCMC-SA: the same class; its call is the user's hamcmc_sa() call
    hamcmc_sa = list(fit = suppressWarnings(hamcmc_sa(d$x, d$y, iterations = 600, burnin = 300, thin = 1, chains = 2,
                                                      seed = 6, quiet = TRUE, threads = 1,
                                                      control = sgmcmc_control(step_size = 0.05))),
                     newx = d$newx, predict_mean = function(out) out$fit, expected_mean = mm_linear_mean,
                     chains = 2L, nobs = 60L, fun = "hamcmc_sa"),
    # only some coefficients' draws kept: predictions use the running means of all coefficients, which are those
    # of the same run keeping every draw (same seed), checked against that run's draws
    sgld_sa_keep = list(fit = sgld_sa(d$x, d$y, iterations = 2000, burnin = 1000, thin = 1, chains = 2, seed = 3,
                                      quiet = TRUE, threads = 1, keep_draws = c("x1", "x3")),
                        newx = d$newx, predict_mean = function(out) out$fit,
                        expected_mean = function(fit, newx) mm_linear_mean(sg_full, newx), chains = 2L, nobs = 60L,
                        coef_cols = c("x1", "x3")),
    # k = 1: the discrete spline is the piecewise-linear interpolant of the fitted values
    trend_filter_wbb = list(fit = trend_filter_wbb(d$tf_y, d$tf_x, k = 1, lambda = 2, draws = 30, seed = 4,
                                                   quiet = TRUE, threads = 1),
                            newx = d$tf_newx, predict_mean = function(out) out$fit,
                            expected_mean = function(fit, newx) {
                              stats::approx(fit$x, colMeans(as.matrix(fit)), newx)$y
                            },
                            chains = 1L, nobs = 50L),
    # a density target has no data: predict() says so with a classed error, nobs() has none
    sgmcmc_density = list(fit = sgmcmc_density(sgmcmc_target("gaussian", c(0, 1), diag(2)), iterations = 200,
                                               chains = 2, seed = 5, quiet = TRUE, threads = 1),
                          newx = d$newx, no_data = TRUE, chains = 2L, nobs = NA),
    # the WBB of an R loss: the model is the user's function, so the model generics do not apply
    wbb_loss = list(fit = wbb(loss = function(theta, data, weights) {
                                list(value = sum(weights * (data - theta)^2) / 2, gradient = -sum(weights * (data - theta)))
                              }, init = c(mu = 0), data = d$y, draws = 30, seed = 6, quiet = TRUE),
                    newx = d$newx, no_data = TRUE, chains = 1L, nobs = 60L, fun = "wbb")
  )
})

mm_generics <- list(
  print = function(row) {
    out <- utils::capture.output(r <- print(row$fit))
    expect_identical(r, row$fit)
    expect_match(out[1], class(row$fit)[1], fixed = TRUE)
    expect_match(out[1], sprintf("%d draws of %d parameters", nrow(row$fit$draws), ncol(row$fit$draws)), fixed = TRUE)
  },
  summary = function(row) {
    s <- summary(row$fit, probs = c(0.1, 0.5))
    d <- as.matrix(row$fit)
    expect_identical(s$parameter, colnames(d))
    expect_equal(s$mean, unname(colMeans(d)))
    expect_equal(s$sd, unname(apply(d, 2, sd)))
    expect_equal(s$q10, unname(apply(d, 2, quantile, 0.1)))
    expect_equal(s$p_zero, unname(colMeans(d == 0)))
  },
  plot = function(row) {
    grDevices::pdf(NULL)
    on.exit(grDevices::dev.off())
    expect_identical(plot(row$fit), row$fit)
  },
  predict = function(row) {
    if (isTRUE(row$no_data)) return(expect_error(predict(row$fit, row$newx), class = "scalebayes_error_state"))
    m <- row$predict_mean(predict(row$fit, row$newx))
    expect_length(m, NROW(row$newx))
    expect_equal(unname(m), unname(row$expected_mean(row$fit, row$newx)), tolerance = 1e-10)
  },
  coef = function(row) {
    d <- as.matrix(row$fit)
    cf <- coef(row$fit)
    cols <- if (is.null(row$coef_cols)) colnames(d) else row$coef_cols
    if (is.null(row$coef_cols)) expect_identical(names(cf), colnames(d))
    expect_equal(cf[cols], colMeans(d)[cols], tolerance = 1e-12)
  },
  as.matrix = function(row) {
    d <- as.matrix(row$fit)
    expect_true(is.matrix(d) && is.numeric(d))
    expect_identical(d, row$fit$draws)
    expect_identical(as.matrix(row$fit, pars = 1), d[, 1, drop = FALSE])
  },
  as_draws_matrix = function(row) {
    m <- as_draws_matrix(row$fit)
    d <- as.matrix(row$fit)
    expect_s3_class(m, "draws_matrix")
    expect_identical(posterior::variables(m), colnames(d))
    expect_equal(posterior::nchains(m), row$chains)
    expect_equal(unclass(m)[, ncol(d)], unname(d[, ncol(d)]), ignore_attr = TRUE)
  },
  as_draws_df = function(row) {
    df <- as_draws_df(row$fit)
    d <- as.matrix(row$fit)
    ch <- if (is.null(row$fit$chain)) rep(1L, nrow(d)) else row$fit$chain
    expect_s3_class(df, "draws_df")
    expect_equal(posterior::ndraws(df), nrow(d))
    expect_equal(df$.chain, ch)
    expect_equal(df[[colnames(d)[1]]], unname(d[, 1]))
  },
  as_draws_array = function(row) {
    a <- as_draws_array(row$fit)
    d <- as.matrix(row$fit)
    ch <- if (is.null(row$fit$chain)) rep(1L, nrow(d)) else row$fit$chain
    expect_identical(dim(a), c(nrow(d) %/% row$chains, row$chains, ncol(d)))
    last <- row$chains
    expect_equal(unclass(a)[, last, ncol(d)], unname(d[ch == last, ncol(d)]), ignore_attr = TRUE)
  },
  posterior_interval = function(row) {
    pi <- posterior_interval(row$fit, prob = 0.8)
    d <- as.matrix(row$fit)
    expect_identical(dim(pi), c(ncol(d), 2L))
    expect_identical(colnames(pi), c("10%", "90%"))
    expect_equal(unname(pi[, 1]), unname(apply(d, 2, quantile, 0.1)))
    expect_equal(unname(pi[, 2]), unname(apply(d, 2, quantile, 0.9)))
  },
  nobs = function(row) {
    if (identical(row$nobs, NA)) return(mm_no_data(nobs(row$fit)))  # a density target has no observations
    expect_identical(as.integer(nobs(row$fit)), row$nobs)
  }
)

# ---- the model generics of issue 39: one predict, fitted / residuals / update / vcov / ndraws and the rstantools
# generics, each against an independent computation from the draws and the training data.

# training data of a row, the linear predictor draws (draws x n) at inputs x computed here, and the noise sd of
# every draw (the fit's sigma draws, the SA estimate of the chain, or the per-draw plug-in of the bootstrap)
mm_train <- function(row) {
  if (inherits(row$fit, "sb_trend_filter_wbb")) return(list(x = mm_data$tf_x, y = mm_data$tf_y))
  list(x = mm_data$x, y = if (mm_family(row) == "poisson") mm_data$count else mm_data$y)
}
mm_family <- function(row) if (is.null(row$family)) "gaussian" else row$family
# the expected response draws: the inverse link of the linear predictor
mm_mu <- function(row, x) if (mm_family(row) == "poisson") exp(mm_eta(row, x)) else mm_eta(row, x)
mm_eta <- function(row, x) {
  f <- row$fit
  if (inherits(f, "sb_trend_filter_wbb")) {
    return(t(apply(as.matrix(f), 1, function(v) stats::approx(f$x, v, x, rule = 2)$y)))
  }
  d <- if (is.null(row$coef_cols)) as.matrix(f) else as.matrix(mm_fits$sgld_sa$fit)
  d %*% t(cbind(1, x))
}
mm_sigma <- function(row) {
  f <- row$fit
  if (inherits(f, "sb_blasso")) return(sqrt(f$sigma2))
  if (inherits(f, "sb_sgld_sa")) return(f$latent$sigma[match(f$chain, f$latent$chain)])
  tr <- mm_train(row)
  eta <- if (inherits(f, "sb_trend_filter_wbb")) as.matrix(f) else mm_eta(row, tr$x)
  sqrt(rowMeans((eta - rep(tr$y, each = nrow(eta)))^2))
}
mm_no_data <- function(expr) expect_error(expr, class = "scalebayes_error_not_applicable")
mm_partial <- function(row) !is.null(row$coef_cols)  # sgld_sa keeping some coefficients' draws

mm_generics <- c(mm_generics, list(
  predict_shape = function(row) {
    if (isTRUE(row$no_data)) return(expect_error(predict(row$fit, row$newx), class = "scalebayes_error_state"))
    out <- predict(row$fit, row$newx, prob = 0.5)
    expect_s3_class(out, "data.frame")
    expect_true(all(c("fit", "se", "lower", "upper") %in% names(out)))
    expect_identical(nrow(out), NROW(row$newx))
    if (mm_partial(row)) {
      expect_true(all(is.na(out$se)))
      return(expect_error(predict(row$fit, row$newx, draws = TRUE), class = "scalebayes_error_state"))
    }
    d <- predict(row$fit, row$newx, draws = TRUE)
    eta <- mm_mu(row, row$newx)  # the default type is "response" for every fit (?predict-types)
    expect_equal(unname(d), unname(eta), tolerance = 1e-10)
    expect_equal(out$se, unname(apply(eta, 2, sd)), tolerance = 1e-10)
    expect_equal(out$lower, unname(apply(eta, 2, quantile, 0.25)), tolerance = 1e-10)
    expect_equal(out$upper, unname(apply(eta, 2, quantile, 0.75)), tolerance = 1e-10)
  },
  predict_one_row = function(row) {
    if (isTRUE(row$no_data)) return(expect_error(predict(row$fit, row$newx[1, ]), class = "scalebayes_error_state"))
    one <- if (is.matrix(row$newx)) row$newx[1, ] else row$newx[1]
    p1 <- predict(row$fit, one)
    pn <- predict(row$fit, row$newx)
    expect_identical(nrow(p1), 1L)
    expect_equal(p1, pn[1, , drop = FALSE], ignore_attr = TRUE, tolerance = 1e-12)
    # a one-row matrix is the same
    if (is.matrix(row$newx)) expect_equal(predict(row$fit, row$newx[1, , drop = FALSE]), p1)
    # newdata = and newx = are the same argument; giving both is an error
    expect_equal(predict(row$fit, newx = row$newx), pn)
    expect_error(predict(row$fit, newdata = row$newx, newx = row$newx), class = "scalebayes_error_input")
  },
  predict_prob = function(row) {
    if (isTRUE(row$no_data) || mm_partial(row)) return(expect_true(TRUE))
    new <- predict(row$fit, row$newx, prob = 0.8)
    expect_warning(old <- predict(row$fit, row$newx, level = 0.8), class = "scalebayes_warning_deprecated")
    expect_identical(old, new)
    expect_warning(old <- predict(row$fit, row$newx, probs = 0.8), class = "scalebayes_warning_deprecated")
    expect_identical(old, new)
    expect_error(predict(row$fit, row$newx, prob = 0.8, level = 0.8), class = "scalebayes_error_input")
    expect_false(isTRUE(all.equal(new, predict(row$fit, row$newx))))  # never silently the 95 % band
  },
  dots = function(row) {
    f <- row$fit
    if (!isTRUE(row$no_data)) expect_error(predict(f, row$newx, levle = 0.5), "levle", class = "scalebayes_error_dots")
    expect_error(posterior_interval(f, pobr = 0.5), "pobr", class = "scalebayes_error_dots")
    expect_error(coef(f, bogus = 1), "bogus", class = "scalebayes_error_dots")
    expect_error(summary(f, bogus = 1), "bogus", class = "scalebayes_error_dots")
    expect_error(log_lik(f, bogus = 1), "bogus", class = "scalebayes_error_dots")
    expect_error(posterior_predict(f, bogus = 1), "bogus", class = "scalebayes_error_dots")
    expect_error(vcov(f, bogus = 1), "bogus", class = "scalebayes_error_dots")
  },
  posterior_interval_prob = function(row) {
    new <- posterior_interval(row$fit, prob = 0.5)
    expect_warning(old <- posterior_interval(row$fit, level = 0.5), class = "scalebayes_warning_deprecated")
    expect_identical(old, new)
    expect_identical(colnames(new), c("25%", "75%"))
  },
  fitted = function(row) {
    if (isTRUE(row$no_data)) return(mm_no_data(fitted(row$fit)))
    tr <- mm_train(row)
    fv <- fitted(row$fit)
    expect_length(fv, length(tr$y))
    expect_equal(unname(fv), unname(colMeans(mm_mu(row, tr$x))), tolerance = 1e-10)
  },
  residuals = function(row) {
    if (isTRUE(row$no_data)) return(mm_no_data(residuals(row$fit)))
    tr <- mm_train(row)
    expect_equal(residuals(row$fit), tr$y - unname(fitted(row$fit)), tolerance = 1e-12)
    if (mm_partial(row)) return()
    # on new data with their responses: y minus the posterior mean at those inputs
    ynew <- seq_len(NROW(row$newx))
    expect_equal(residuals(row$fit, newdata = row$newx, newy = ynew), ynew - unname(colMeans(mm_mu(row, row$newx))),
                 tolerance = 1e-10)
    expect_error(residuals(row$fit, newdata = row$newx), class = "scalebayes_error_input")
  },
  log_lik = function(row) {
    if (isTRUE(row$no_data)) return(mm_no_data(log_lik(row$fit)))
    if (mm_partial(row)) return(expect_error(log_lik(row$fit), class = "scalebayes_error_state"))
    tr <- mm_train(row)
    ll <- log_lik(row$fit)
    eta <- mm_eta(row, tr$x)
    expect_identical(dim(ll), c(nrow(as.matrix(row$fit)), length(tr$y)))
    ref <- if (mm_family(row) == "poisson") dpois(rep(tr$y, each = nrow(eta)), exp(eta), log = TRUE) else
      dnorm(rep(tr$y, each = nrow(eta)), eta, mm_sigma(row), log = TRUE)
    expect_equal(ll, ref, ignore_attr = TRUE, tolerance = 1e-10)
    skip_if_not_installed("loo")
    lo <- suppressWarnings(loo::loo(ll))
    expect_s3_class(lo, "psis_loo")
    expect_true(is.finite(lo$estimates["elpd_loo", "Estimate"]))
  },
  posterior_linpred = function(row) {
    if (isTRUE(row$no_data)) return(mm_no_data(posterior_linpred(row$fit, newdata = row$newx)))
    if (mm_partial(row)) return(expect_error(posterior_linpred(row$fit), class = "scalebayes_error_state"))
    expect_equal(posterior_linpred(row$fit, newdata = row$newx), mm_eta(row, row$newx), ignore_attr = TRUE,
                 tolerance = 1e-10)
    expect_equal(posterior_linpred(row$fit), mm_eta(row, mm_train(row)$x), ignore_attr = TRUE, tolerance = 1e-10)
  },
  posterior_epred = function(row) {
    if (isTRUE(row$no_data)) return(mm_no_data(posterior_epred(row$fit)))
    if (mm_partial(row)) return(expect_error(posterior_epred(row$fit), class = "scalebayes_error_state"))
    # gaussian: the expected response is the linear predictor (poisson: its exp)
    expect_equal(posterior_epred(row$fit, newdata = row$newx), mm_mu(row, row$newx), ignore_attr = TRUE,
                 tolerance = 1e-10)
    expect_identical(posterior_linpred(row$fit, transform = TRUE), posterior_epred(row$fit))
  },
  posterior_predict = function(row) {
    if (isTRUE(row$no_data)) return(mm_no_data(posterior_predict(row$fit)))
    if (mm_partial(row)) return(expect_error(posterior_predict(row$fit), class = "scalebayes_error_state"))
    pp <- posterior_predict(row$fit, newdata = row$newx, seed = 1)
    eta <- mm_eta(row, row$newx)
    expect_identical(dim(pp), dim(eta))
    expect_identical(pp, posterior_predict(row$fit, newdata = row$newx, seed = 1))
    if (mm_family(row) == "poisson") {
      # Poisson counts of mean exp(eta), drawn in the order of the draws x observations matrix (seed 1)
      ref <- withr::with_seed(1, matrix(rpois(length(eta), exp(eta)), nrow(eta)))
      expect_identical(unname(pp), ref)
    } else {
      # the draws are eta + sigma z with z standard normal (seed 1)
      z <- withr::with_seed(1, matrix(rnorm(length(eta)), nrow(eta)))
      expect_equal(unname(pp), unname(eta + z * mm_sigma(row)), tolerance = 1e-10)
    }
    expect_identical(dim(posterior_predict(row$fit)), c(nrow(eta), length(mm_train(row)$y)))
  },
  predictive_interval = function(row) {
    if (isTRUE(row$no_data)) return(mm_no_data(predictive_interval(row$fit)))
    if (mm_partial(row)) return(expect_error(predictive_interval(row$fit), class = "scalebayes_error_state"))
    pi <- predictive_interval(row$fit, newdata = row$newx, prob = 0.8, seed = 2)
    pp <- posterior_predict(row$fit, newdata = row$newx, seed = 2)
    expect_identical(colnames(pi), c("10%", "90%"))
    expect_equal(unname(pi[, 1]), unname(apply(pp, 2, quantile, 0.1)))
    expect_equal(unname(pi[, 2]), unname(apply(pp, 2, quantile, 0.9)))
  },
  ndraws = function(row) expect_identical(ndraws(row$fit), nrow(as.matrix(row$fit))),
  vcov = function(row) {
    v <- vcov(row$fit)
    d <- as.matrix(row$fit)
    expect_identical(dim(v), c(ncol(d), ncol(d)))
    expect_equal(v, cov(d))
  },
  prior_summary = function(row) {
    ps <- prior_summary(row$fit)
    expect_s3_class(ps, "sb_prior_summary")
    expect_true(is.character(ps$prior) && nzchar(ps$prior))
    expect_output(print(ps), class(row$fit)[1], fixed = TRUE)
  },
  update = function(row) {
    f <- row$fit
    cl <- update(f, seed = 99, evaluate = FALSE)
    fun <- if (is.null(row$fun)) sub("^sb_", "", class(f)[1]) else row$fun
    expect_identical(cl[[1]], as.name(fun))
    expect_identical(cl$seed, 99)
    expect_identical(f$call[[1]], cl[[1]])
    # the call reruns: evaluated where the data are
    new <- suppressWarnings(eval(cl, list2env(list(d = mm_data), envir = environment())))
    expect_s3_class(new, class(f)[1])
    expect_identical(new$seed, 99)
  }
))

for (g in names(mm_generics)) {
  for (f in names(mm_fits)) {
    local({
      gen <- mm_generics[[g]]
      row <- mm_fits[[f]]
      test_that(sprintf("methods matrix: %s() on a %s fit", g, f), {
        gen(row)
      })
    })
  }
}

test_that("weighted_lasso(): one-row predict, fitted, residuals, nobs, update; no posterior generics", {
  d <- mm_data
  fit <- weighted_lasso(d$x, d$y, lambda = c(20, 5))
  expect_equal(predict(fit, d$x[1, ]), predict(fit, d$x[1:3, ])[1, , drop = FALSE], ignore_attr = TRUE)
  expect_equal(unname(predict(fit, d$x[1:3, ])), unname(cbind(1, d$x[1:3, ]) %*% coef(fit)))
  expect_equal(unname(fitted(fit)), unname(cbind(1, d$x) %*% coef(fit)))
  expect_equal(residuals(fit), d$y - fitted(fit))
  expect_identical(nobs(fit), 60L)
  cl <- update(fit, lambda = 3, evaluate = FALSE)
  expect_identical(cl[[1]], quote(weighted_lasso))
  expect_error(predict(fit, d$x, levle = 1), "levle", class = "scalebayes_error_dots")
  for (g in list(log_lik, posterior_predict, posterior_epred, posterior_linpred, predictive_interval, vcov,
                 posterior_interval, prior_summary)) {
    expect_error(g(fit), "no posterior draws", class = "scalebayes_error_not_applicable")
  }
  expect_error(ndraws(fit), class = "scalebayes_error_not_applicable")
})

test_that("update() of wbb(): the formula method and a lambda path keep the user's call", {
  d <- mm_data
  df <- data.frame(y = d$y, d$x)
  fit <- wbb(y ~ x1 + x2, data = df, lambda = 5, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  expect_identical(fit$call[[1]], quote(wbb))
  new <- update(fit, draws = 12)
  expect_identical(nrow(as.matrix(new)), 12L)
  expect_equal(predict(fit, newdata = df[1, ]), predict(fit, newdata = df[1:2, ])[1, ], ignore_attr = TRUE)
  expect_equal(fitted(fit), colMeans(as.matrix(fit) %*% t(cbind(1, d$x[, 1:2]))), ignore_attr = TRUE)
})

test_that("binomial fits: response-scale predict, log_lik and posterior_predict", {
  set.seed(3)
  x <- matrix(rnorm(80 * 3), 80, 3)
  y <- rbinom(80, 1, plogis(x[, 1] - x[, 2]))
  fit <- wbb(x, y, family = "binomial", lambda = 2, draws = 30, seed = 2, quiet = TRUE, threads = 1)
  eta <- as.matrix(fit) %*% t(cbind(1, x))
  expect_equal(posterior_epred(fit), plogis(eta), ignore_attr = TRUE)
  expect_equal(fitted(fit), colMeans(plogis(eta)), ignore_attr = TRUE)
  expect_equal(log_lik(fit), dbinom(rep(y, each = 30), 1, plogis(eta), log = TRUE), ignore_attr = TRUE)
  pp <- posterior_predict(fit, seed = 1)
  expect_true(all(pp %in% c(0, 1)))
  p1 <- predict(fit, x[1, ], type = "response")
  expect_true(p1$lower >= 0 && p1$upper <= 1)
  expect_equal(predict(fit, x[1:2, ], type = "response", interval = "prediction", draws = TRUE) %in% c(0, 1),
               rep(TRUE, 60))
})

test_that("a VAE has no response: the data generics say so", {
  skip_if_no_torch()
  x <- matrix(runif(40 * 4), 40, 4)
  v <- vae(x, latent = 1, encoder = nn_mlp(4), decoder = nn_mlp(4), epochs = 1, seed = 1, quiet = TRUE)
  for (g in list(fitted, residuals, log_lik, posterior_predict, posterior_epred, posterior_linpred,
                 predictive_interval, vcov)) {
    expect_error(g(v), class = "scalebayes_error_not_applicable")
  }
  # ndraws(): the draws of latent codes the draw generics give by default
  expect_identical(ndraws(v), posterior::ndraws(as_draws_df(v, pars = 1, seed = 1)))
  # predict() checks its data under its own name
  e <- expect_error(predict(v, newdata = matrix(2, 3, 4)), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "newdata")
  expect_false(grepl("`x`", conditionMessage(e), fixed = TRUE))
  expect_equal(nobs(v), 40)
  expect_s3_class(prior_summary(v), "sb_prior_summary")
  expect_identical(update(v, epochs = 2, evaluate = FALSE)[[1]], quote(vae))
})

test_that("the matrix covers every fit class with draws", {
  classes <- vapply(mm_fits, function(r) class(r$fit)[1], "")
  expect_setequal(unique(classes), c("sb_wbb", "sb_blasso", "sb_sgld_sa", "sb_trend_filter_wbb",
                                       "sb_sgmcmc_density", "sb_wbb_loss"))
})

test_that("unequal chains: as_draws_df() and as_draws_matrix() keep them, as_draws_array() says why it cannot", {
  d <- matrix(c(1, 2, 3, 4, 5, 10, 20, 30, 40, 50), 5, 2, dimnames = list(NULL, c("a", "b")))
  fit <- scalebayes:::new_sb_fit(draws = d, estimate = colMeans(d), method = "test", subclass = "sb_test",
                                 chain = c(1L, 1L, 1L, 2L, 2L))
  df <- as_draws_df(fit)
  expect_equal(posterior::nchains(df), 2)
  expect_equal(df$.iteration, c(1, 2, 3, 1, 2))
  expect_equal(df$b, d[, "b"])
  m <- as_draws_matrix(fit)
  expect_equal(posterior::ndraws(m), 5)
  expect_equal(posterior::nchains(m), 2)
  expect_error(as_draws_array(fit), class = "scalebayes_error_state")
})

test_that("predict() without new data: a classed error where the fit keeps no data", {
  expect_error(predict(mm_fits$blasso$fit), class = "scalebayes_error_input")
  expect_error(predict(mm_fits$wbb$fit), class = "scalebayes_error_input")
  expect_error(predict(mm_fits$sgld_sa$fit), class = "scalebayes_error_input")
  # trend filtering keeps its inputs: predict() gives the fit at the data
  tf <- mm_fits$trend_filter_wbb$fit
  expect_equal(predict(tf)$fit, unname(colMeans(as.matrix(tf))))
})

test_that("loo and bayesplot take the generics' output as they take rstanarm's", {
  skip_if_not_installed("loo")
  skip_if_not_installed("bayesplot")
  fit <- mm_fits$blasso$fit
  ll <- log_lik(fit)
  r_eff <- loo::relative_eff(exp(ll), chain_id = fit$chain)
  expect_s3_class(suppressWarnings(loo::loo(ll, r_eff = r_eff)), "psis_loo")
  p <- bayesplot::ppc_dens_overlay(mm_data$y, posterior_predict(fit, seed = 1)[1:10, ])
  expect_s3_class(p, "ggplot")
  p <- bayesplot::ppc_intervals(mm_data$y, posterior_predict(fit, seed = 1))
  expect_s3_class(p, "ggplot")
})

test_that("trend_filter_wbb: predict(draws = TRUE) columns are the inputs asked for, by position, as every fit's", {
  set.seed(8)
  y <- sin(seq_len(100) / 12) + rnorm(100, sd = 0.2)
  fit <- trend_filter_wbb(y, k = 1, lambda = 3, draws = 20, seed = 2, quiet = TRUE)
  nx <- c(10.5, 50, 90.5)
  pd <- predict(fit, nx, draws = TRUE)
  expect_equal(dim(pd), c(20L, 3L))
  expect_null(colnames(pd))  # the draws x observations matrix of every fit (wbb(), blasso(), ...) has none
  expect_null(colnames(predict(mm_fits$wbb$fit, mm_data$x[1:3, ], draws = TRUE)))
  # k = 1 on x = 1..100: linear interpolation between the neighbouring fitted values, the value itself at x = 50
  d <- as.matrix(fit)
  expect_equal(pd[, 1], unname(0.5 * (d[, "f[10]"] + d[, "f[11]"])))
  expect_identical(pd[, 2], unname(d[, "f[50]"]))
  expect_equal(pd[, 3], unname(0.5 * (d[, "f[90]"] + d[, "f[91]"])))
  expect_equal(predict(fit, nx)$fit, colMeans(pd))
  expect_identical(posterior_linpred(fit, newdata = nx), pd)
})

test_that("sb_genlasso_path (the exact path, a point estimate per knot): the point generics give values, the posterior ones classed errors", {
  d <- mm_data
  tf <- trend_filter(d$tf_y, d$tf_x, k = 1, path = TRUE, quiet = TRUE)
  gl <- generalized_lasso(d$tf_y, fused_lasso_1d(50), path = TRUE, quiet = TRUE)
  for (fit in list(tf, gl)) {
    K <- length(fit$lambda)
    expect_output(print(fit), "exact solution path")
    expect_identical(nrow(summary(fit)), K)
    pdf(NULL)
    expect_invisible(plot(fit))
    grDevices::dev.off()
    expect_equal(dim(coef(fit)$beta), c(50L, K))
    expect_equal(dim(predict(fit, lambda = fit$lambda[c(2, 5)])), c(50L, 2L))
    expect_equal(fitted(fit), unname(as.matrix(fit$beta)))
    expect_equal(residuals(fit), d$tf_y - fitted(fit))
    expect_equal(fitted(fit, lambda = fit$lambda[3]), unname(fit$beta[, 3, drop = FALSE]))
    expect_identical(nobs(fit), 50L)
    for (g in list(log_lik, posterior_predict, posterior_epred, posterior_linpred, predictive_interval, vcov,
                   posterior_interval, prior_summary, as.matrix, as_draws_df, ndraws)) {
      expect_error(g(fit), class = "scalebayes_error_not_applicable")
    }
    expect_error(coef(fit, lambda = 1, levle = 1), "levle", class = "scalebayes_error_dots")
    expect_error(fitted(fit, levle = 1), "levle", class = "scalebayes_error_dots")
  }
  expect_error(log_lik(tf), "trend_filter_wbb", class = "scalebayes_error_not_applicable")
  expect_equal(predict(tf, newdata = c(2.5, 7), lambda = tf$lambda[3])[, 1],
               stats::approx(d$tf_x, tf$beta[, 3], c(2.5, 7))$y)
})
