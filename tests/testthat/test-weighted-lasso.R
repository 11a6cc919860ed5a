# The weighted elastic-net solver: parity with glmnet at the mapped lambda (glmnet at thresh = 1e-14 is the
# reference; 1e-6 in coefficients is far above both solvers' errors), exactness in closed-form cases, KKT.

test_that("gaussian weighted lasso matches glmnet (n > p, p > n, zero-weight row)", {
  skip_if_not_installed("glmnet")
  for (shape in list(c(80, 15), c(40, 120))) {
    d <- sim_gaussian(shape[1], shape[2], seed = shape[2])
    set.seed(2)
    w <- rexp(shape[1]); w[3] <- 0
    pf <- rexp(shape[2])
    lam <- 0.15 * max(abs(crossprod(d$x, w * (d$y - weighted.mean(d$y, w)))) / pf)
    f <- weighted_lasso(d$x, d$y, weights = w, penalty_factor = pf, lambda = lam, standardize = FALSE)
    expect_lt(max(abs(coef(f) - glmnet_coef(d$x, d$y, "gaussian", w, pf, lam))), 1e-6)
    expect_lt(f$kkt, 1e-8)
    expect_true(f$converged)
  }
})

test_that("binomial weighted lasso and elastic net match glmnet", {
  skip_if_not_installed("glmnet")
  d <- sim_binomial(150, 12)
  set.seed(3)
  w <- rexp(150); w[7] <- 0
  pf <- rexp(12)
  for (alpha in c(1, 0.5)) {
    f <- weighted_lasso(d$x, d$y, family = "binomial", weights = w, penalty_factor = pf, lambda = 4,
                        alpha = alpha, standardize = FALSE)
    expect_lt(max(abs(coef(f) - glmnet_coef(d$x, d$y, "binomial", w, pf, 4, alpha))), 1e-6)
    expect_lt(f$kkt, 1e-8)
  }
  dg <- sim_gaussian(60, 8)
  f <- weighted_lasso(dg$x, dg$y, lambda = 10, alpha = 0.3, standardize = FALSE)
  expect_lt(max(abs(coef(f) - glmnet_coef(dg$x, dg$y, "gaussian", rep(1, 60), rep(1, 8), 10, 0.3))), 1e-6)
})

test_that("a path has monotone support growth, KKT at every lambda, and lambda_max zeroes everything", {
  d <- sim_gaussian(100, 30)
  f <- weighted_lasso(d$x, d$y, nlambda = 30)
  expect_equal(ncol(coef(f)), 30)
  expect_true(all(coef(f)[-1, 1] == 0))
  expect_true(any(coef(f)[-1, 2] != 0))
  expect_lt(max(f$kkt), 1e-8)
})

test_that("closed forms: soft thresholding and unpenalized least squares", {
  # x = (1, 0): minimise w1 (y1 - b)^2 / 2 + w2 y2^2 / 2 + lambda |b|  =>  b = S(y1, lambda / w1)
  x <- cbind(c(1, 0))
  y <- c(2.5, -1)
  f <- weighted_lasso(x, y, weights = c(2, 3), lambda = 1.5, intercept = FALSE, standardize = FALSE)
  expect_equal(unname(coef(f)[2]), 2.5 - 1.5 / 2, tolerance = 1e-12)
  d <- sim_gaussian(50, 4)
  w <- seq(0.5, 2, length.out = 50)
  f <- weighted_lasso(d$x, d$y, weights = w, lambda = 0, standardize = FALSE)
  ref <- coef(lm(d$y ~ d$x, weights = w))
  expect_equal(unname(coef(f)), unname(ref), tolerance = 1e-9)
})

test_that("penalty_factor = 0 leaves a coefficient unpenalized", {
  d <- sim_gaussian(60, 5)
  f <- weighted_lasso(d$x, d$y, penalty_factor = c(0, 1, 1, 1, 1), lambda = 1e6, standardize = FALSE)
  expect_true(coef(f)[2] != 0)
  expect_true(all(coef(f)[3:6] == 0))
})

test_that("standardize = TRUE penalizes columns scaled by their 1/n standard deviation, as glmnet's standardize = TRUE", {
  # Unit weights: glmnet standardizes x by the weighted (here 1/n) mean and SD and reports coefficients on the
  # original scale; weighted_lasso() at the sum-scale lambda n * lambda_glmnet must give the same fit.
  skip_if_not_installed("glmnet")
  set.seed(31)
  n <- 90
  x <- matrix(rnorm(n * 6), n, 6) %*% diag(c(0.2, 1, 5, 1, 3, 0.5)) + rep(1:6, each = n)
  y <- drop(x %*% c(2, 0, 0.3, 0, -0.5, 1)) + rnorm(n)
  for (lg in c(0.05, 0.2)) {
    f <- weighted_lasso(x, y, lambda = n * lg)
    g <- glmnet::glmnet(x, y, lambda = lg, standardize = TRUE, thresh = 1e-14, maxit = 1e6)
    expect_equal(unname(coef(f)), as.numeric(stats::coef(g)), tolerance = 1e-6, info = lg)
  }
})

test_that("coef(cv_weighted_lasso(), s = ) is glmnet's coef.cv.glmnet: the full-data fit at lambda.min, lambda.1se or a value", {
  # unit weights and standardize = TRUE: the sum-scale problem at lambda is glmnet(standardize = TRUE) at lambda / n
  skip_if_not_installed("glmnet")
  d <- sim_gaussian(90, 8)
  n <- 90
  cv <- cv_weighted_lasso(d$x, d$y, seed = 3, quiet = TRUE, nlambda = 40)
  ref <- function(lam) {
    as.numeric(stats::coef(glmnet::glmnet(d$x, d$y, lambda = lam / n, standardize = TRUE, thresh = 1e-14, maxit = 1e6)))
  }
  cmin <- coef(cv, s = "lambda.min")
  expect_identical(names(cmin), c("(Intercept)", colnames(d$x)))
  expect_equal(unname(cmin), ref(cv$lambda_min), tolerance = 1e-6)
  expect_equal(unname(coef(cv)), ref(cv$lambda_1se), tolerance = 1e-6)  # default: lambda.1se, as glmnet
  expect_identical(coef(cv, s = "lambda.1se"), coef(cv))
  expect_identical(coef(cv, s = "min"), cmin)
  # a value off the CV path is solved exactly (glmnet would interpolate), several values give a matrix
  s <- c(cv$lambda_min * 1.37, 55)
  cs <- coef(cv, s = s)
  expect_equal(dim(cs), c(9L, 2L))
  expect_equal(unname(cs[, 1]), ref(s[1]), tolerance = 1e-6)
  expect_equal(unname(cs[, 2]), ref(s[2]), tolerance = 1e-6)
  expect_equal(unname(cs[, 2]), unname(coef(weighted_lasso(d$x, d$y, lambda = 55))), tolerance = 1e-9)
  # on the path: the path's own column
  expect_identical(unname(coef(cv, s = cv$lambda[7])), unname(cv$fit$coefficients[, 7]))
  # predict() at s: the linear predictor of those coefficients
  expect_equal(predict(cv, d$x[1:4, ], s = "lambda.min"), drop(cbind(1, d$x[1:4, ]) %*% cmin), ignore_attr = TRUE)
  expect_equal(predict(cv, newx = d$x[1, ], s = s), drop(c(1, d$x[1, ]) %*% cs), ignore_attr = TRUE)
  expect_error(coef(cv, s = "lambda.max"), class = "scalebayes_error_input")
  expect_error(coef(cv, s = -1), class = "scalebayes_error_input")
  expect_error(coef(cv, s = "lambda.min", exact = TRUE), class = "scalebayes_error_dots")
  # weights and the binomial family: the full-data fit is weighted_lasso() with the same weights
  db <- sim_binomial(120, 4)
  w <- seq(0.5, 1.5, length.out = 120)
  cvb <- cv_weighted_lasso(db$x, db$y, family = "binomial", weights = w, seed = 1, quiet = TRUE, nlambda = 20)
  expect_equal(unname(coef(cvb, s = "lambda.min")),
               unname(coef(weighted_lasso(db$x, db$y, family = "binomial", weights = w, lambda = cvb$lambda_min))),
               tolerance = 1e-8)
  expect_equal(predict(cvb, db$x[1:3, ], s = "lambda.min", type = "response"),
               plogis(drop(cbind(1, db$x[1:3, ]) %*% coef(cvb, s = "lambda.min"))), ignore_attr = TRUE)
})

test_that("summary() of a weighted lasso: df and the deviance explained are glmnet's, printed as a table", {
  skip_if_not_installed("glmnet")
  d <- sim_gaussian(100, 6)
  fit <- weighted_lasso(d$x, d$y, nlambda = 12)
  s <- summary(fit)
  expect_s3_class(s, "summary_sb_weighted_lasso")
  g <- glmnet::glmnet(d$x, d$y, lambda = fit$lambda / 100, standardize = TRUE, thresh = 1e-14, maxit = 1e6)
  expect_equal(s$path$df, as.integer(g$df))
  expect_equal(s$path$dev_ratio, g$dev.ratio, tolerance = 1e-6)
  expect_equal(s$path$lambda_glmnet, fit$lambda / 100)
  expect_null(s$coefficients)
  expect_output(print(s), "%dev")
  db <- sim_binomial(150, 4)
  fb <- weighted_lasso(db$x, db$y, family = "binomial", lambda = c(20, 5))
  gb <- glmnet::glmnet(db$x, db$y, family = "binomial", lambda = c(20, 5) / 150, standardize = TRUE,
                       thresh = 1e-14, maxit = 1e6)
  expect_equal(summary(fb)$path$dev_ratio, gb$dev.ratio, tolerance = 1e-6)
  # one lambda: the coefficient table, zeros printed as "."
  one <- weighted_lasso(d$x, d$y, lambda = 150)
  s1 <- summary(one)
  expect_equal(s1$coefficients$estimate, unname(coef(one)))
  expect_identical(s1$coefficients$coefficient, c("(Intercept)", colnames(d$x)))
  out <- capture.output(print(s1))
  expect_true(any(grepl("non-zero", out)))
  expect_true(any(grepl("^x6 +\\.$", out)) || coef(one)[["x6"]] != 0)
  expect_error(summary(one, digits = 2), class = "scalebayes_error_dots")
})

test_that("plot() of a weighted lasso draws the coefficient paths against log(lambda); the draw methods are classed errors", {
  d <- sim_gaussian(60, 5)
  fit <- weighted_lasso(d$x, d$y, nlambda = 15)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(fit, label = TRUE))
  # the plot's coordinates: x from log(lambda), y from the coefficients
  usr <- graphics::par("usr")
  expect_true(usr[1] <= min(log(fit$lambda)) && usr[2] >= max(log(fit$lambda)))
  expect_true(usr[3] <= min(fit$coefficients[-1, ]) && usr[4] >= max(fit$coefficients[-1, ]))
  expect_invisible(plot(weighted_lasso(d$x, d$y, lambda = 30)))
  expect_error(plot(weighted_lasso(d$x, d$y, lambda = c(1, 0))), class = "scalebayes_error_not_applicable")
  expect_error(plot(fit, label = NA), class = "scalebayes_error_input")
  for (g in list(as_draws_df, as_draws_matrix, as_draws_array, as.matrix, posterior_interval)) {
    expect_error(g(fit), "no posterior draws", class = "scalebayes_error_not_applicable")
    expect_error(g(fit), "wbb", class = "scalebayes_error_not_applicable")
  }
})

test_that("the dense design's moments and standardization are those of colMeans() and sweep(), bit for bit", {
  # prepare_glm_data() and standardize_x() compute them in one pass each with no temporary copy
  # (scalebayes/math/columns.hpp); the draws' fingerprints depend on every bit (test-fingerprints.R)
  set.seed(3)
  x <- cbind(matrix(rnorm(300 * 4, 5, 3), 300), 1e-3 * rexp(300), 7)
  m <- cpp_col_moments(x, NULL)
  expect_identical(m$mean, colMeans(x))
  expect_identical(m$sd, sqrt(colMeans(sweep(x, 2L, colMeans(x))^2)))
  c0 <- rep(0.5, ncol(x))
  expect_identical(cpp_col_moments(x, c0)$sd, sqrt(colMeans(sweep(x, 2L, c0)^2)))
  s <- ifelse(m$sd > 0, m$sd, 1)
  colnames(x) <- paste0("c", 1:6)
  expect_identical(cpp_standardize_columns(x, m$mean, s), sweep(sweep(x, 2L, m$mean), 2L, s, "/"))
  expect_true(cpp_all_finite(x))
  x[7, 2] <- NaN
  expect_false(cpp_all_finite(x))
  x[7, 2] <- -Inf
  expect_false(cpp_all_finite(x))
  expect_error(weighted_lasso(x, rnorm(300), lambda = 1), class = "scalebayes_error_input")
})

test_that("duplicated columns are found among columns of equal mean and sd only, and named", {
  set.seed(4)
  x <- matrix(rnorm(200 * 5), 200)
  x <- cbind(x, x[, 1], rev(x[, 4]), x[, 2])  # V6 = V1, V7 a permutation of V4 (same mean and sd), V8 = V2
  y <- rnorm(200)
  w <- expect_warning(weighted_lasso(x, y, lambda = 5), class = "scalebayes_warning_duplicated_column")
  expect_match(conditionMessage(w), "2 duplicated columns")
  expect_match(conditionMessage(w), "V6.*V8")
  expect_no_match(conditionMessage(w), "V7")
  expect_no_warning(weighted_lasso(x[, c(1:5, 7)], y, lambda = 5))
})

test_that("a dense column whose squares underflow is a scaling error naming it", {
  set.seed(5)
  x <- cbind(rnorm(100), 1e-170 * rnorm(100))
  colnames(x) <- c("a", "tiny")
  e <- expect_error(weighted_lasso(x, rnorm(100), lambda = 1), class = "scalebayes_error_scaling")
  expect_match(conditionMessage(e), "tiny")
})
