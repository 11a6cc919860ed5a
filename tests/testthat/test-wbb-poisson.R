# Poisson family (log link) of the coordinate-descent engine, offsets, box limits and exclusions (issue 59):
# checked against glmnet (an independent solver, thresh = 1e-14) and against the exact optimality conditions of
# the objective written out here in R (not by the engine).

sim_poisson <- function(n, p, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  colnames(x) <- paste0("x", seq_len(p))
  expo <- runif(n, 0.5, 3)
  y <- rpois(n, expo * exp(0.2 + 0.6 * x[, 1] - 0.4 * x[, 2]))
  list(x = x, y = y, offset = log(expo))
}

# The sum-scale objective on the scale of x (standardize = FALSE): sum_i w_i l_i + lambda sum_j pf_j |b_j|.
pois_objective <- function(co, x, y, w, pf, lambda, offset = 0, family = "poisson") {
  eta <- drop(co[1] + x %*% co[-1]) + offset
  loss <- switch(family, poisson = sum(w * (exp(eta) - y * eta)),
                 binomial = sum(w * (log1p(exp(eta)) - y * eta)), gaussian = sum(w * (y - eta)^2) / 2)
  loss + lambda * sum(pf * abs(co[-1]))
}

# Largest KKT violation (relative to lambda) of co for that objective, with box limits lo <= b <= hi, and the
# intercept's gradient (relative to the size of the gradient terms).
pois_kkt <- function(co, x, y, w, pf, lambda, offset = 0, lo = -Inf, hi = Inf, family = "poisson") {
  eta <- drop(co[1] + x %*% co[-1]) + offset
  mu <- switch(family, poisson = exp(eta), binomial = plogis(eta), gaussian = eta)
  g <- drop(crossprod(x, w * (y - mu)))
  b <- co[-1]; l1 <- lambda * pf
  lo <- rep_len(lo, length(b)); hi <- rep_len(hi, length(b))
  e <- ifelse(b == 0, pmax(0, ifelse(hi > 0, g - l1, -Inf), ifelse(lo < 0, -g - l1, -Inf)),
              ifelse(b >= hi, pmax(0, -(g - l1)), ifelse(b <= lo, pmax(0, g + l1), abs(g - sign(b) * l1))))
  c(coef = max(e) / lambda, intercept = abs(sum(w * (y - mu))) / sum(w * abs(y - mu) + 1))
}

glmnet_fit_coef <- function(x, y, family, w, pf, lambda, ...) {
  g <- glmnet::glmnet(x, y, family = family, weights = w, penalty.factor = pf,
                      lambda = glmnet_lambda(lambda, w, pf), standardize = FALSE, thresh = 1e-14, maxit = 1e6, ...)
  as.numeric(stats::coef(g))
}

# Our optimum against glmnet's: glmnet's point is never better than ours beyond rounding (relative gap 1e-8
# above ours, it stops at thresh 1e-14 on its own scale); our KKT residuals (written out in R) below 1e-8.
expect_glmnet_optimum <- function(ours, ref, x, y, w, pf, lambda, offset = 0, lo = -Inf, hi = Inf,
                                  family = "poisson", info = NULL) {
  f_ours <- pois_objective(ours, x, y, w, pf, lambda, offset, family)
  f_ref <- pois_objective(ref, x, y, w, pf, lambda, offset, family)
  expect_lte((f_ours - f_ref) / abs(f_ref), 1e-10, label = paste("objective gap", info))
  expect_lte(abs(f_ours - f_ref) / abs(f_ref), 1e-8, label = paste("|objective gap|", info))
  k <- pois_kkt(ours, x, y, w, pf, lambda, offset, lo, hi, family)
  expect_lte(k[["coef"]], 1e-8, label = paste("KKT", info))
  expect_lte(k[["intercept"]], 1e-8, label = paste("intercept KKT", info))
  expect_equal(unname(ours), ref, tolerance = 1e-5, info = info)
}

test_that("poisson weighted_lasso equals glmnet for every offset x limits x weights case (simulated)", {
  skip_if_not_installed("glmnet")
  d <- sim_poisson(120, 6)
  n <- 120; p <- 6
  set.seed(3)
  wts <- list(unit = rep(1, n), exp = rexp(n))
  pfs <- rexp(p)
  offs <- list(none = NULL, exposure = d$offset)
  lims <- list(none = list(lo = -Inf, hi = Inf), box = list(lo = c(-0.1, -Inf, 0, -Inf, -Inf, -Inf), hi = c(0.3, 0, Inf, Inf, 0.05, Inf)))
  lmax <- weighted_lasso(d$x, d$y, family = "poisson", standardize = FALSE, nlambda = 2)$lambda[1]
  lambda <- 0.08 * lmax
  for (wn in names(wts)) for (on in names(offs)) for (ln in names(lims)) {
    w <- wts[[wn]]; off <- offs[[on]]; lm <- lims[[ln]]
    fit <- weighted_lasso(d$x, d$y, family = "poisson", weights = w, penalty_factor = pfs, lambda = lambda,
                          standardize = FALSE, offset = off, lower_limits = lm$lo, upper_limits = lm$hi)
    ref <- glmnet_fit_coef(d$x, d$y, "poisson", w, pfs, lambda, offset = off, lower.limits = lm$lo,
                           upper.limits = lm$hi)
    expect_glmnet_optimum(coef(fit), ref, d$x, d$y, w, pfs, lambda, off %||% 0, lm$lo, lm$hi,
                          info = paste(wn, on, ln))
    expect_lte(fit$kkt, 1e-8)
    if (ln == "box") {
      b <- coef(fit)[-1]
      expect_true(all(b >= lm$lo - 1e-15 & b <= lm$hi + 1e-15))
      expect_true(any(b == lm$hi | b == lm$lo & b != 0))  # some limit binds, else the case tests nothing
    }
  }
})

test_that("offsets and limits in gaussian and binomial equal glmnet too", {
  skip_if_not_installed("glmnet")
  set.seed(4)
  n <- 100; p <- 5
  x <- matrix(rnorm(n * p), n, p)
  off <- rnorm(n, sd = 0.5)
  w <- rexp(n)
  pf <- rep(1, p)
  lo <- c(-Inf, 0, -Inf, -0.2, -Inf); hi <- c(Inf, Inf, 0, 0.2, Inf)
  yb <- rbinom(n, 1, plogis(off + x[, 1] - x[, 2]))
  yg <- off + drop(x %*% c(1, -1, 0.5, 0.5, 0)) + rnorm(n)
  for (fam in c("gaussian", "binomial")) {
    y <- if (fam == "binomial") yb else yg
    lambda <- 0.1 * weighted_lasso(x, y, family = fam, weights = w, standardize = FALSE, offset = off,
                                   nlambda = 2)$lambda[1]
    fit <- weighted_lasso(x, y, family = fam, weights = w, lambda = lambda, standardize = FALSE, offset = off,
                          lower_limits = lo, upper_limits = hi)
    ref <- glmnet_fit_coef(x, y, fam, w, pf, lambda, offset = off, lower.limits = lo, upper.limits = hi)
    expect_glmnet_optimum(coef(fit), ref, x, y, w, pf, lambda, off, lo, hi, family = fam, info = fam)
  }
})

test_that("lambda_max with an offset is the smallest lambda with beta = 0 (poisson, binomial, gaussian)", {
  d <- sim_poisson(80, 4, seed = 2)
  yb <- as.numeric(d$y > 1)
  for (fam in c("poisson", "binomial", "gaussian")) {
    y <- if (fam == "binomial") yb else d$y
    path <- weighted_lasso(d$x, y, family = fam, offset = d$offset, nlambda = 3, standardize = FALSE)
    lmax <- path$lambda[1]
    # zero to rounding: the IRLS intercept at lambda_max leaves the largest gradient equal to lambda up to ~1e-16
    # relative, so a coefficient of that order may appear (standardize = FALSE, columns of unit scale)
    expect_lte(max(abs(coef(path)[-1, 1])), 1e-12, label = fam)
    below <- weighted_lasso(d$x, y, family = fam, offset = d$offset, lambda = lmax * (1 - 1e-6), standardize = FALSE)
    expect_true(any(coef(below)[-1] != 0), info = fam)
  }
})

test_that("the Insurance claims of MASS (exposure offset from the formula) equal glmnet", {
  skip_if_not_installed("glmnet")
  skip_if_not_installed("MASS")
  ins <- MASS::Insurance
  ins$District <- factor(ins$District)
  ins$Group <- factor(ins$Group, ordered = FALSE)
  ins$Age <- factor(ins$Age, ordered = FALSE)
  x <- stats::model.matrix(~ District + Group + Age, ins)[, -1]
  off <- log(ins$Holders)
  fit <- weighted_lasso(Claims ~ District + Group + Age + offset(log(Holders)), data = ins, family = "poisson",
                        lambda = 20, standardize = FALSE)
  fit_m <- weighted_lasso(x, ins$Claims, family = "poisson", lambda = 20, standardize = FALSE, offset = off)
  expect_identical(unname(coef(fit)), unname(coef(fit_m)))
  ref <- glmnet_fit_coef(x, ins$Claims, "poisson", rep(1, nrow(x)), rep(1, ncol(x)), 20, offset = off)
  expect_glmnet_optimum(coef(fit_m), ref, x, ins$Claims, rep(1, nrow(x)), rep(1, ncol(x)), 20, off)
  # at lambda = 0 it is the Poisson GLM with that offset
  g <- stats::glm(Claims ~ District + Group + Age + offset(log(Holders)), data = ins, family = poisson())
  f0 <- weighted_lasso(x, ins$Claims, family = "poisson", lambda = 0, standardize = FALSE, offset = off)
  expect_equal(unname(coef(f0)), unname(coef(g)), tolerance = 1e-8)
  # predictions with the offset of new rows, from a data frame (the formula's offset) or newoffset
  expect_equal(predict(fit, ins[1:3, ], type = "response"),
               predict(fit_m, x[1:3, ], newoffset = off[1:3], type = "response"))
  expect_error(predict(fit_m, x[1:3, ]), class = "scalebayes_error_input")
  expect_equal(unname(fitted(fit_m)), unname(exp(drop(cbind(1, x) %*% coef(fit_m)) + off)))
})

test_that("standardize = TRUE with limits: limits act on the scale of x, as glmnet's", {
  skip_if_not_installed("glmnet")
  d <- sim_poisson(100, 4, seed = 5)
  x <- d$x %*% diag(c(1, 3, 0.5, 2))
  fit <- weighted_lasso(x, d$y, family = "poisson", lambda = 8, lower_limits = c(-Inf, 0, -Inf, -0.05),
                        upper_limits = c(0.2, Inf, Inf, Inf))
  # unit weights: glmnet's (weighted) standardization is ours
  g <- glmnet::glmnet(x, d$y, family = "poisson", lambda = 8 / 100, lower.limits = c(-Inf, 0, -Inf, -0.05),
                      upper.limits = c(0.2, Inf, Inf, Inf), thresh = 1e-14, maxit = 1e6)
  expect_equal(unname(coef(fit)), as.numeric(coef(g)), tolerance = 1e-5)
  expect_true(coef(fit)[2] == 0.2)
})

test_that("exclude holds coefficients at 0 and equals glmnet's exclude", {
  skip_if_not_installed("glmnet")
  d <- sim_poisson(100, 5, seed = 6)
  fit <- weighted_lasso(d$x, d$y, family = "poisson", lambda = 5, standardize = FALSE, exclude = c(1, 4))
  expect_identical(unname(coef(fit)[c(2, 5)]), c(0, 0))
  expect_identical(coef(fit), coef(weighted_lasso(d$x, d$y, family = "poisson", lambda = 5, standardize = FALSE,
                                                  exclude = c("x1", "x4"))))
  ref <- glmnet_fit_coef(d$x, d$y, "poisson", rep(1, 100), rep(1, 5), 5, exclude = c(1, 4))
  expect_equal(unname(coef(fit)), ref, tolerance = 1e-5)
})

test_that("glmnet's argument names are accepted, one name at a time", {
  d <- sim_poisson(60, 3, seed = 7)
  a <- weighted_lasso(d$x, d$y, family = "poisson", lambda = 3, penalty.factor = c(1, 2, 0), lower.limits = -0.1,
                      upper.limits = 0.5)
  b <- weighted_lasso(d$x, d$y, family = "poisson", lambda = 3, penalty_factor = c(1, 2, 0), lower_limits = -0.1,
                      upper_limits = 0.5)
  expect_identical(coef(a), coef(b))
  expect_error(weighted_lasso(d$x, d$y, family = "poisson", lambda = 3, penalty_factor = 1:3, penalty.factor = 1:3),
               class = "scalebayes_error_input")
})

test_that("bad input is a classed error naming the argument", {
  d <- sim_poisson(40, 3, seed = 8)
  err <- function(expr, arg) {
    e <- tryCatch(expr, error = function(e) e)
    expect_s3_class(e, "scalebayes_error_input")
    expect_identical(e$arg, arg)
  }
  err(weighted_lasso(d$x, replace(d$y, 1, -1), family = "poisson"), "y")
  err(weighted_lasso(d$x, replace(d$y, 1, 1.5), family = "poisson"), "y")
  err(weighted_lasso(d$x, d$y * 0, family = "poisson"), "y")
  err(wbb(d$x, replace(d$y, 2, -3), family = "poisson", lambda = 1, draws = 2), "y")
  err(weighted_lasso(d$x, d$y, family = "poisson", offset = 1:3), "offset")
  err(weighted_lasso(d$x, d$y, family = "poisson", offset = c(NA, d$offset[-1])), "offset")
  err(weighted_lasso(d$x, d$y, family = "poisson", lower_limits = 0.5), "lower_limits")
  err(weighted_lasso(d$x, d$y, family = "poisson", upper_limits = -1), "upper_limits")
  err(weighted_lasso(d$x, d$y, family = "poisson", lower_limits = c(0, 0, 0), upper_limits = c(1, -1, 1)), "lower_limits")
  err(weighted_lasso(d$x, d$y, family = "poisson", lower_limits = 1:2), "lower_limits")
  err(weighted_lasso(d$x, d$y, family = "poisson", exclude = 1:3), "exclude")
  err(weighted_lasso(d$x, d$y, family = "poisson", exclude = "nope"), "exclude")
  err(cv_weighted_lasso(d$x, d$y, family = "poisson", type_measure = "auc"), "type_measure")
  err(wbb(d$x, d$y, family = "poisson", lambda = 1, draws = 2, offset = 1), "offset")
})

test_that("cv_weighted_lasso: poisson deviance, mse and mae equal cv.glmnet with the same folds and lambdas", {
  skip_if_not_installed("glmnet")
  d <- sim_poisson(100, 5, seed = 9)
  fold <- rep_len(1:5, 100)
  for (m in c("deviance", "mse", "mae")) {
    cv <- cv_weighted_lasso(d$x, d$y, family = "poisson", foldid = fold, offset = d$offset, standardize = FALSE,
                            nlambda = 20, type_measure = m, quiet = TRUE)
    g <- glmnet::cv.glmnet(d$x, d$y, family = "poisson", foldid = fold, offset = d$offset, standardize = FALSE,
                           lambda = cv$lambda / 100, type.measure = m, thresh = 1e-14, maxit = 1e6)
    expect_equal(cv$cvm, g$cvm, tolerance = 1e-6, info = m)
    expect_equal(cv$cvsd, g$cvsd, tolerance = 1e-5, info = m)
    expect_identical(cv$index_min, which(g$lambda == g$lambda.min), info = m)
  }
  # predict at lambda.min needs the new rows' offset
  expect_equal(predict(cv, d$x[1:2, ], s = "lambda.min", newoffset = d$offset[1:2]),
               predict(cv$fit, d$x[1:2, ], newoffset = d$offset[1:2])[1:2, cv$index_min])
})

test_that("cv_weighted_lasso: binomial class and auc measures as cv.glmnet", {
  skip_if_not_installed("glmnet")
  set.seed(10)
  n <- 200
  x <- matrix(rnorm(n * 4), n, 4)
  y <- rbinom(n, 1, plogis(x[, 1] - x[, 2]))
  fold <- rep_len(1:4, n)
  for (m in c("class", "auc", "mse", "mae")) {
    cv <- cv_weighted_lasso(x, y, family = "binomial", foldid = fold, standardize = FALSE, nlambda = 15,
                            type.measure = m, quiet = TRUE)
    g <- glmnet::cv.glmnet(x, y, family = "binomial", foldid = fold, standardize = FALSE, lambda = cv$lambda / n,
                           type.measure = m, thresh = 1e-14, maxit = 1e6)
    # the first lambda predicts one constant (glmnet breaks its AUC ties at random): compare the rest
    keep <- if (m == "auc") -1 else seq_along(cv$cvm)
    expect_equal(cv$cvm[keep], g$cvm[keep], tolerance = 1e-6, info = m)
  }
})

test_that("wbb poisson: draws are the weighted optima (glmnet at the recorded weights), thread- and chunk-invariant", {
  skip_if_not_installed("glmnet")
  d <- sim_poisson(80, 4, seed = 11)
  fit <- wbb(d$x, d$y, family = "poisson", lambda = 4, draws = 4, seed = 3, quiet = TRUE, standardize = FALSE,
             offset = d$offset, upper_limits = c(Inf, 0, Inf, Inf), threads = 1)
  rec <- wbb_recorded_weights(80, 4, seed = 3, prior = "separate", n_prior = 4)
  for (t in 1:4) {
    ref <- glmnet_fit_coef(d$x, d$y, "poisson", rec$w[t, ], rec$w0[t, ], 4, offset = d$offset,
                           upper.limits = c(Inf, 0, Inf, Inf))
    expect_glmnet_optimum(unname(fit$draws[t, ]), ref, d$x, d$y, rec$w[t, ], rec$w0[t, ], 4, d$offset,
                          hi = c(Inf, 0, Inf, Inf), info = t)
  }
  expect_lte(fit$diagnostics$kkt_max, 1e-8)
  f2 <- wbb(d$x, d$y, family = "poisson", lambda = 4, draws = 4, seed = 3, quiet = TRUE, standardize = FALSE,
            offset = d$offset, upper_limits = c(Inf, 0, Inf, Inf), threads = 2, chunks = 3)
  expect_identical(fit$draws, f2$draws)
  skip_if_not_installed("future.apply")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  f3 <- wbb(d$x, d$y, family = "poisson", lambda = 4, draws = 4, seed = 3, quiet = TRUE, standardize = FALSE,
            offset = d$offset, upper_limits = c(Inf, 0, Inf, Inf), chunks = 2, future = TRUE)
  expect_identical(fit$draws, f3$draws)
})

test_that("wbb poisson with CV-chosen lambda, common prior weights and the multinomial bootstrap converges", {
  d <- sim_poisson(100, 6, seed = 12)
  fit <- wbb(d$x, d$y, family = "poisson", draws = 30, seed = 1, quiet = TRUE, offset = d$offset,
             prior_weights = "common", control = wbb_control(nfolds = 5, weight_dist = "multinomial"))
  expect_lte(fit$diagnostics$kkt_max, 1e-8)
  expect_identical(fit$diagnostics$not_converged, 0L)
  expect_true(fit$lambda > 0)
  # the estimate is the unweighted poisson optimum at lambda
  expect_equal(unname(fit$estimate),
               unname(coef(weighted_lasso(d$x, d$y, family = "poisson", lambda = fit$lambda, offset = d$offset))),
               tolerance = 1e-9)
})

test_that("wbb poisson generics: link / response, log_lik, posterior_predict, offsets of new data", {
  d <- sim_poisson(60, 3, seed = 13)
  df <- data.frame(y = d$y, d$x, expo = exp(d$offset))
  fit <- wbb(y ~ x1 + x2 + x3 + offset(log(expo)), data = df, family = "poisson", lambda = 2, draws = 25, seed = 2,
             quiet = TRUE)
  fm <- wbb(d$x, d$y, family = "poisson", lambda = 2, draws = 25, seed = 2, quiet = TRUE, offset = d$offset)
  expect_identical(unname(fit$draws), unname(fm$draws))
  eta <- posterior_linpred(fm)
  ref <- fm$draws[, 1] + fm$draws[, -1] %*% t(d$x) + rep(d$offset, each = 25)
  expect_equal(eta, unname(ref))
  expect_equal(posterior_epred(fm), exp(eta))
  ll <- log_lik(fm)
  expect_equal(ll, matrix(dpois(rep(d$y, each = 25), exp(eta), log = TRUE), 25))
  pp <- posterior_predict(fm, seed = 1)
  expect_true(all(pp >= 0 & pp == round(pp)))
  expect_equal(dim(pp), c(25L, 60L))
  # new rows: a data frame through the formula's offset, or newoffset with a matrix
  p1 <- predict(fit, df[1:4, ], type = "response", draws = TRUE)
  p2 <- predict(fm, d$x[1:4, ], type = "response", draws = TRUE, newoffset = d$offset[1:4])
  expect_equal(p1, p2)
  expect_equal(log_lik(fm, newdata = d$x[1:4, ], newy = d$y[1:4], newoffset = d$offset[1:4]), ll[, 1:4])
  expect_error(predict(fm, d$x[1:4, ]), class = "scalebayes_error_input")
  expect_error(log_lik(fm, newdata = d$x[1:4, ], newy = c(1, -1, 0, 2), newoffset = d$offset[1:4]),
               class = "scalebayes_error_input")
  expect_error(predict(fm, d$x[1:4, ], type = "class"), class = "scalebayes_error_not_applicable")
  expect_equal(fitted(fm), colMeans(exp(eta)))
  expect_equal(residuals(fm), d$y - colMeans(exp(eta)))
})

test_that("a steep log link (counts up to e^9) converges to the Poisson GLM: step halving guards the overflow", {
  set.seed(14)
  x <- cbind(runif(60, 0, 10), rnorm(60))
  y <- rpois(60, exp(0.9 * x[, 1] - 0.5))
  g <- stats::glm(y ~ x, family = poisson())
  f0 <- weighted_lasso(x, y, family = "poisson", lambda = 0, standardize = FALSE)
  expect_true(f0$converged)
  expect_equal(unname(coef(f0)), unname(coef(g)), tolerance = 1e-8)
  # and WBB draws of that model (weights move the optimum; every draw certified)
  fit <- wbb(x, y, family = "poisson", lambda = 1, draws = 20, seed = 4, quiet = TRUE)
  expect_identical(fit$diagnostics$not_converged, 0L)
  expect_lte(fit$diagnostics$kkt_max, 1e-8)
})

test_that("wbb_control(type_measure = ) sets the CV loss that fixes lambda (the folds of the fit's seed)", {
  d <- sim_poisson(90, 4, seed = 15)
  fit <- wbb(d$x, d$y, family = "poisson", draws = 5, seed = 7, quiet = TRUE, offset = d$offset,
             control = wbb_control(nfolds = 5, type_measure = "mae"))
  cv <- cv_weighted_lasso(d$x, d$y, family = "poisson", nfolds = 5, seed = 7, quiet = TRUE, offset = d$offset,
                          type_measure = "mae")
  expect_identical(fit$lambda, cv$lambda_min)
  expect_identical(fit$cv$type_measure, "mae")
  expect_error(wbb(d$x, d$y, family = "poisson", draws = 5, seed = 7, quiet = TRUE,
                   control = wbb_control(type_measure = "auc")), class = "scalebayes_error_input")
})

test_that("poisson without intercept, with exclude and lower limits, equals glmnet (intercept = FALSE)", {
  skip_if_not_installed("glmnet")
  d <- sim_poisson(100, 5, seed = 16)
  w <- withr::with_seed(1, rexp(100))
  fit <- weighted_lasso(d$x, d$y, family = "poisson", weights = w, lambda = 6, standardize = FALSE, intercept = FALSE,
                        offset = d$offset, exclude = 3, lower_limits = c(-Inf, -0.1, -Inf, 0, -Inf))
  ref <- glmnet_fit_coef(d$x, d$y, "poisson", w, rep(1, 5), 6, intercept = FALSE, offset = d$offset, exclude = 3,
                         lower.limits = c(-Inf, -0.1, -Inf, 0, -Inf))
  expect_identical(coef(fit)[[1]], 0)
  expect_equal(unname(coef(fit)), ref, tolerance = 1e-5)
  k <- pois_kkt(coef(fit), d$x, d$y, w, c(1, 1, 1, 1, 1), 6, d$offset, lo = c(-Inf, -0.1, 0, 0, -Inf),
                hi = c(Inf, Inf, 0, Inf, Inf))
  expect_lte(k[["coef"]], 1e-8)
})

test_that("a bootstrap draw that leaves no positive count is reported, not a crash or a hang", {
  set.seed(17)
  x <- matrix(rnorm(60), 20, 3)
  y <- c(3, rep(0, 19))  # the multinomial bootstrap drops the one positive count in about 1 / e of the draws
  expect_warning(fit <- wbb(x, y, family = "poisson", lambda = 1, draws = 30, seed = 1, quiet = TRUE,
                            control = wbb_control(weight_dist = "multinomial")),
                 "minus infinity", class = "scalebayes_warning_convergence")
  expect_true(fit$diagnostics$not_converged > 0)
  expect_true(all(is.finite(fit$draws)))
})

test_that("wbb(weights = ): prior (observation) weights times the bootstrap weights, as glmnet at their product", {
  skip_if_not_installed("glmnet")
  d <- sim_poisson(70, 4, seed = 18)
  pw <- withr::with_seed(2, sample(1:3, 70, replace = TRUE))
  fit <- wbb(d$x, d$y, family = "poisson", lambda = 3, draws = 3, seed = 5, quiet = TRUE, standardize = FALSE,
             offset = d$offset, weights = pw)
  rec <- wbb_recorded_weights(70, 3, seed = 5, prior = "separate", n_prior = 4)
  for (t in 1:3) {
    w <- rec$w[t, ] * pw
    ref <- glmnet_fit_coef(d$x, d$y, "poisson", w, rec$w0[t, ], 3, offset = d$offset)
    expect_glmnet_optimum(unname(fit$draws[t, ]), ref, d$x, d$y, w, rec$w0[t, ], 3, d$offset, info = t)
  }
  # the estimate is the weighted optimum; unit weights change nothing (bit for bit)
  expect_equal(unname(fit$estimate), unname(coef(weighted_lasso(d$x, d$y, family = "poisson", weights = pw, lambda = 3,
                                                                standardize = FALSE, offset = d$offset))),
               tolerance = 1e-9)
  expect_identical(fit$lambda_glmnet, 3 / sum(pw))
  a <- wbb(d$x, d$y, family = "poisson", lambda = 3, draws = 5, seed = 5, quiet = TRUE)
  b <- wbb(d$x, d$y, family = "poisson", lambda = 3, draws = 5, seed = 5, quiet = TRUE, weights = rep(1, 70))
  expect_identical(a$draws, b$draws)
  expect_error(wbb(d$x, d$y, family = "poisson", lambda = 3, draws = 2, weights = -pw), class = "scalebayes_error_input")
})
