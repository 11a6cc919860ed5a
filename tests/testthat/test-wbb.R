# wbb(): certified optima for every draw, reproducibility across threads / chunks / future workers, exact
# Bayesian-bootstrap behaviour where the posterior is known, methods, and bad input.

test_that("every draw satisfies the KKT conditions (gaussian and binomial)", {
  data(diabetes, package = "scalebayes")
  fit <- wbb(diabetes$x, diabetes$y, draws = 300, seed = 11, quiet = TRUE)
  expect_equal(dim(fit$draws), c(300L, 11L))
  expect_lt(fit$diagnostics$kkt_max, 1e-8)
  d <- sim_binomial(200, 10)
  fb <- wbb(d$x, d$y, family = "binomial", lambda = 5, draws = 100, seed = 3, quiet = TRUE)
  expect_lt(fb$diagnostics$kkt_max, 1e-8)
})

test_that("every draw equals weighted_lasso() at that draw's recorded data and prior weights (separate, common)", {
  # The weights of draw t are recomputed from the stream (seed, t) by the driver with a recording solver
  # (helper-wbb-weights.R); the draw must be the weighted optimum with penalty lambda * w0_j (separate) or
  # lambda * w0 (common) on every coefficient, solved here by weighted_lasso() one draw at a time.
  d <- sim_gaussian(80, 8)
  lambda <- 30
  for (prior in c("separate", "common")) {
    fit <- wbb(d$x, d$y, lambda = lambda, draws = 12, seed = 3, prior_weights = prior, threads = 2, quiet = TRUE)
    rec <- wbb_recorded_weights(80, 12, seed = 3, prior = prior, n_prior = 8)
    expect_equal(ncol(rec$w0), if (prior == "separate") 8L else 1L)
    for (t in 1:12) {
      pf <- if (prior == "separate") rec$w0[t, ] else rep(rec$w0[t, 1], 8)
      ref <- weighted_lasso(d$x, d$y, weights = rec$w[t, ], penalty_factor = pf, lambda = lambda)
      expect_equal(unname(fit$draws[t, ]), unname(coef(ref)), tolerance = 1e-8, info = paste(prior, t))
    }
  }
  # the point estimate is the unweighted optimum
  expect_equal(unname(fit$estimate), unname(coef(weighted_lasso(d$x, d$y, lambda = lambda))), tolerance = 1e-9)
})

test_that("draws without standardization equal glmnet at the mapped lambda and the recorded weights", {
  # glmnet is an independent solver; glmnet_equivalent() maps the sum-scale objective (weights, penalty
  # factors) to glmnet's. glmnet's own convergence (thresh 1e-14) limits agreement to ~1e-6.
  skip_if_not_installed("glmnet")
  d <- sim_binomial(150, 5)
  fit <- wbb(d$x, d$y, family = "binomial", lambda = 4, draws = 4, seed = 8, quiet = TRUE,
             standardize = FALSE)
  rec <- wbb_recorded_weights(150, 4, seed = 8, prior = "separate", n_prior = 5)
  for (t in 1:4) {
    ref <- glmnet_coef(d$x, d$y, "binomial", rec$w[t, ], rec$w0[t, ], 4)
    expect_equal(unname(fit$draws[t, ]), ref, tolerance = 1e-5, info = t)
  }
})

test_that("draws do not depend on threads, chunks or future workers", {
  skip_if_fast_tier()
  d <- sim_gaussian(100, 30)
  f1 <- wbb(d$x, d$y, draws = 60, seed = 42, threads = 1, quiet = TRUE)
  f2 <- wbb(d$x, d$y, draws = 60, seed = 42, threads = 2, quiet = TRUE)
  expect_identical(f1$draws, f2$draws)
  f3 <- wbb(d$x, d$y, draws = 60, seed = 42, threads = 2, quiet = TRUE, chunks = 4)
  expect_identical(f1$draws, f3$draws)
  skip_if_not_installed("future.apply")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  f4 <- wbb(d$x, d$y, draws = 60, seed = 42, quiet = TRUE, chunks = 3, future = TRUE)
  expect_identical(f1$draws, f4$draws)
  skip_on_cran()
  future::plan(future::multisession, workers = 2)
  f5 <- wbb(d$x, d$y, draws = 60, seed = 42, quiet = TRUE, chunks = 2, future = TRUE)
  expect_identical(f1$draws, f5$draws)
})

test_that("seed = NULL takes the seed from R's RNG (set.seed() fixes it, the next call differs); different seeds differ", {
  d <- sim_gaussian(50, 5)
  set.seed(5); s5 <- sample.int(.Machine$integer.max, 1L)
  set.seed(5); a <- wbb(d$x, d$y, lambda = 5, draws = 20, quiet = TRUE)
  expect_identical(a$seed, as.double(s5))
  a2 <- wbb(d$x, d$y, lambda = 5, draws = 20, quiet = TRUE)  # R's RNG has moved on
  expect_false(identical(a2$seed, a$seed))
  expect_false(identical(a2$draws, a$draws))
  expect_identical(wbb(d$x, d$y, lambda = 5, draws = 20, quiet = TRUE, seed = a$seed)$draws, a$draws)
  set.seed(5); b <- wbb(d$x, d$y, lambda = 5, draws = 20, quiet = TRUE)
  expect_identical(a$draws, b$draws)
  c2 <- wbb(d$x, d$y, lambda = 5, draws = 20, seed = a$seed + 1, quiet = TRUE)
  expect_false(identical(a$draws, c2$draws))
})

test_that("above lambda_max the intercept draws are the exact Bayesian bootstrap of the mean", {
  # With beta = 0 the intercept draw is sum(w y) / sum(w) with w ~ iid Exp(1), i.e. Dirichlet(1,...,1)
  # weights: posterior mean ybar and variance s2 = sum((y - ybar)^2) / (n (n + 1)) (Rubin 1981).
  # T = 4000 draws: the mean's Monte-Carlo SE is sqrt(s2 / T); the variance estimate's relative SE is
  # about sqrt(2 / T) = 2.2% (near-normal draws); we allow 4 SE.
  set.seed(9)
  n <- 40
  y <- rgamma(n, 2, 1)
  x <- matrix(rnorm(n * 2), n, 2)
  fit <- wbb(x, y, lambda = 1e8, prior_weights = "none", draws = 4000, seed = 2, quiet = TRUE,
             standardize = FALSE)
  expect_true(all(fit$draws[, -1] == 0))
  a <- fit$draws[, 1]
  s2 <- sum((y - mean(y))^2) / (n * (n + 1))
  expect_lt(abs(mean(a) - mean(y)), 4 * sqrt(s2 / 4000))
  expect_lt(abs(var(a) / s2 - 1), 4 * sqrt(2 / 4000))
})

test_that("with a negligible penalty, WBB spread matches the sandwich (first-order) posterior", {
  # For lambda -> 0 the WBB draws are Bayesian-bootstrap least-squares fits, whose covariance is to first
  # order the sandwich (X'X)^-1 X' diag(e^2) X (X'X)^-1. n = 400: the O(1/n) approximation error is ~0.3%;
  # T = 3000 draws give sd estimates with relative SE sqrt(1 / (2 T)) = 1.3%; tolerance 4 SE + 1%.
  set.seed(21)
  n <- 400
  x <- matrix(rnorm(n * 3), n, 3)
  y <- drop(x %*% c(1, -0.5, 0)) + rnorm(n) * (1 + abs(x[, 1]))  # heteroscedastic on purpose
  fit <- wbb(x, y, lambda = 1e-6, alpha = 0, draws = 3000, seed = 4, quiet = TRUE,
             standardize = FALSE)
  X <- cbind(1, x)
  e <- residuals(lm(y ~ x))
  B <- solve(crossprod(X))
  sand <- sqrt(diag(B %*% crossprod(X * e) %*% B))
  ratio <- apply(fit$draws, 2, sd) / sand
  expect_true(all(abs(ratio - 1) < 4 * sqrt(1 / 6000) + 0.01), info = paste(round(ratio, 3), collapse = " "))
})

test_that("prior weights: common and none are supported and change the spread of zeros", {
  data(diabetes, package = "scalebayes")
  fs <- wbb(diabetes$x, diabetes$y, lambda = 40, draws = 200, seed = 1, quiet = TRUE, prior_weights = "separate")
  fc <- wbb(diabetes$x, diabetes$y, lambda = 40, draws = 200, seed = 1, quiet = TRUE, prior_weights = "common")
  fn <- wbb(diabetes$x, diabetes$y, lambda = 40, draws = 200, seed = 1, quiet = TRUE, prior_weights = "none")
  expect_false(identical(fs$draws, fc$draws))
  expect_false(identical(fc$draws, fn$draws))
  for (f in list(fs, fc, fn)) expect_lt(f$diagnostics$kkt_max, 1e-8)
})

test_that("lambda by CV and a lambda path", {
  d <- sim_gaussian(150, 20)
  fit <- wbb(d$x, d$y, draws = 50, seed = 1, quiet = TRUE)
  expect_s3_class(fit$cv, "sb_cv")
  expect_equal(fit$lambda, fit$cv$lambda_min)
  f1 <- wbb(d$x, d$y, draws = 50, seed = 1, quiet = TRUE, control = wbb_control(lambda_rule = "1se"))
  expect_gte(f1$lambda, fit$lambda)
  path <- wbb(d$x, d$y, lambda = c(10, 100, 30), draws = 40, seed = 1, quiet = TRUE)
  expect_s3_class(path, "sb_wbb_path")
  expect_equal(path$lambda, c(100, 30, 10))
  single <- wbb(d$x, d$y, lambda = 30, draws = 40, seed = 1, quiet = TRUE)
  # same weights for each lambda, and each solution is the exact optimum: equal to the single-lambda run
  expect_equal(path$fits[[2]]$draws, single$draws, tolerance = 1e-8)
  expect_output(print(path), "lambda")
})

test_that("binomial WBB, formula interface, multinomial weights and predict", {
  d <- sim_binomial(150, 5)
  df <- data.frame(y = factor(d$y, labels = c("no", "yes")), d$x)
  fit <- wbb(y ~ ., data = df, family = "binomial", draws = 50, seed = 1, quiet = TRUE)
  expect_equal(colnames(fit$draws), c("(Intercept)", paste0("X", 1:5)))
  pr <- predict(fit, newdata = df[1:4, ], type = "response")
  expect_true(all(pr$fit > 0 & pr$fit < 1 & pr$lower <= pr$fit & pr$fit <= pr$upper))
  fm <- wbb(d$x, d$y, family = "binomial", lambda = 3, draws = 30, seed = 1, quiet = TRUE,
            control = wbb_control(weight_dist = "multinomial"))
  expect_lt(fm$diagnostics$kkt_max, 1e-8)
  expect_equal(dim(predict(fm, d$x[1:3, ], draws = TRUE)), c(30L, 3L))
})

test_that("methods: print, summary, coef, as.matrix, posterior formats, intervals, plot", {
  data(diabetes, package = "scalebayes")
  fit <- wbb(diabetes$x, diabetes$y, lambda = 30, draws = 100, seed = 1, quiet = TRUE)
  expect_output(print(fit), "weighted Bayesian bootstrap")
  s <- summary(fit)
  expect_equal(nrow(s), 11)
  expect_true(all(c("mean", "sd", "q2.5", "q97.5", "p_zero") %in% names(s)))
  expect_equal(unname(coef(fit)), unname(colMeans(fit$draws)))
  expect_equal(dim(as.matrix(fit)), c(100L, 11L))
  dm <- posterior::as_draws_matrix(fit)
  expect_equal(posterior::ndraws(dm), 100)
  expect_s3_class(posterior::as_draws_df(fit), "draws_df")
  pi <- posterior_interval(fit, prob = 0.9)
  expect_equal(dim(pi), c(11L, 2L))
  expect_true(all(pi[, 1] <= pi[, 2]))
  pdf(NULL); on.exit(dev.off(), add = TRUE)
  expect_invisible(plot(fit))
  expect_equal(nobs(fit), 442)
})

test_that("p >> n runs (n = 100, p = 10000)", {
  set.seed(1)
  n <- 100; p <- 10000
  x <- matrix(rnorm(n * p), n, p)
  y <- x[, 1] * 2 - x[, 2] + rnorm(n)
  fit <- wbb(x, y, draws = 20, seed = 1, quiet = TRUE, prior_weights = "common",
             control = wbb_control(nfolds = 5))
  expect_equal(dim(fit$draws), c(20L, p + 1L))
  expect_lt(fit$diagnostics$kkt_max, 1e-8)
  expect_gt(mean(fit$draws[, 2] != 0), 0.8)  # the strong signal x1 is selected in most draws
  # Separate prior weights: the smallest of p Exp(1) weights is ~1/p, so some noise columns are nearly
  # unpenalized in every draw and the fit saturates (about n non-zeros). Documented in ?wbb.
  fs <- wbb(x, y, lambda = fit$lambda, draws = 5, seed = 1, quiet = TRUE)
  expect_lt(fs$diagnostics$kkt_max, 1e-8)
  expect_gt(min(rowSums(fs$draws[, -1] != 0)), 50)
})

test_that("lambda = \"min\" / \"1se\" are the cross-validation rules of cv_weighted_lasso() with the fit's seed", {
  # wbb()'s CV draws its folds from the fit's seed, as cv_weighted_lasso(seed = ) does: the same folds, the same
  # lambda path and the same rule give the same lambda, and then the same draws as that lambda given by value.
  d <- sim_gaussian(120, 10)
  for (rule in c("min", "1se")) {
    fit <- wbb(d$x, d$y, lambda = rule, draws = 20, seed = 5, quiet = TRUE)
    cv <- cv_weighted_lasso(d$x, d$y, seed = 5, quiet = TRUE)
    expect_identical(fit$lambda, cv[[paste0("lambda_", rule)]], info = rule)
    expect_identical(fit$lambda_rule, rule)
    expect_s3_class(fit$cv, "sb_cv")
    expect_identical(fit$draws, wbb(d$x, d$y, lambda = fit$lambda, draws = 20, seed = 5, quiet = TRUE)$draws)
  }
  expect_gt(cv$lambda_1se, cv$lambda_min)
  # lambda = NULL follows wbb_control(lambda_rule = ) (default "min"); a rule given as lambda wins
  expect_identical(wbb(d$x, d$y, draws = 5, seed = 5, quiet = TRUE)$lambda, cv$lambda_min)
  expect_identical(wbb(d$x, d$y, lambda = "1se", draws = 5, seed = 5, quiet = TRUE,
                       control = wbb_control(lambda_rule = "min"))$lambda, cv$lambda_1se)
  expect_warning(old <- wbb(d$x, d$y, lambda = "lambda_1se", draws = 5, seed = 5, quiet = TRUE),
                 class = "scalebayes_warning_deprecated")
  expect_identical(old$lambda, cv$lambda_1se)
  expect_error(wbb(d$x, d$y, lambda = "max", draws = 5, quiet = TRUE), "min", class = "scalebayes_error_input")
  expect_error(wbb(d$x, d$y, lambda = c("min", "1se"), draws = 5, quiet = TRUE), class = "scalebayes_error_input")
})

test_that("standardize = TRUE: the estimate is glmnet(standardize = TRUE); every draw is the standardized problem mapped back", {
  # columns on very different scales, so that standardizing changes the fit
  set.seed(17)
  n <- 100
  x <- sweep(matrix(rnorm(n * 5), n, 5), 2, c(0.1, 1, 10, 3, 0.5), "*") + rep(c(5, -2, 0, 1, 3), each = n)
  colnames(x) <- paste0("v", 1:5)
  y <- drop(x %*% c(8, 0.5, 0.05, 0, -1)) + rnorm(n)
  lambda <- 40
  fit <- wbb(x, y, lambda = lambda, draws = 6, seed = 9, quiet = TRUE, standardize = TRUE)
  raw <- wbb(x, y, lambda = lambda, draws = 6, seed = 9, quiet = TRUE, standardize = FALSE)
  expect_false(isTRUE(all.equal(fit$draws, raw$draws)))
  expect_true(fit$settings$standardize)
  expect_false(raw$settings$standardize)
  if (requireNamespace("glmnet", quietly = TRUE)) {
    g <- glmnet::glmnet(x, y, lambda = lambda / n, standardize = TRUE, thresh = 1e-14, maxit = 1e6)
    expect_equal(unname(fit$estimate), as.numeric(stats::coef(g)), tolerance = 1e-6)
    g0 <- glmnet::glmnet(x, y, lambda = lambda / n, standardize = FALSE, thresh = 1e-14, maxit = 1e6)
    expect_equal(unname(raw$estimate), as.numeric(stats::coef(g0)), tolerance = 1e-6)
  }
  # by hand: centre and scale by the unweighted means and population sds, solve at the draw's weights, map back
  m <- colMeans(x)
  s <- sqrt(colMeans(sweep(x, 2, m)^2))
  xs <- sweep(sweep(x, 2, m), 2, s, "/")
  rec <- wbb_recorded_weights(n, 6, seed = 9, prior = "separate", n_prior = 5)
  for (t in 1:6) {
    b <- coef(weighted_lasso(xs, y, weights = rec$w[t, ], penalty_factor = rec$w0[t, ], lambda = lambda,
                             standardize = FALSE))
    beta <- b[-1] / s
    expect_equal(unname(fit$draws[t, ]), unname(c(b[1] - sum(beta * m), beta)), tolerance = 1e-8, info = t)
    b0 <- coef(weighted_lasso(x, y, weights = rec$w[t, ], penalty_factor = rec$w0[t, ], lambda = lambda,
                              standardize = FALSE))
    expect_equal(unname(raw$draws[t, ]), unname(b0), tolerance = 1e-8, info = t)
  }
  expect_error(wbb(x, y, lambda = 1, draws = 2, quiet = TRUE, standardize = NA), class = "scalebayes_error_input")
})

test_that("keep_draws keeps the draws of some coefficients: the same numbers as the full fit, in every chunk split", {
  d <- sim_gaussian(80, 6)
  full <- wbb(d$x, d$y, lambda = 20, draws = 15, seed = 4, quiet = TRUE)
  for (keep in list(c("x2", "(Intercept)"), c(3, 1))) {
    sub <- wbb(d$x, d$y, lambda = 20, draws = 15, seed = 4, quiet = TRUE, keep_draws = keep, chunks = 3)
    cols <- if (is.character(keep)) keep else colnames(full$draws)[keep]
    expect_identical(colnames(sub$draws), cols)
    expect_identical(sub$draws, full$draws[, cols])
    expect_identical(sub$estimate, full$estimate[cols])
    expect_identical(summary(sub)$mean, unname(colMeans(full$draws[, cols])))
    expect_equal(posterior_interval(sub), posterior_interval(full)[cols, ])
    expect_identical(posterior::variables(as_draws_df(sub)), cols)
  }
  # generics that need every coefficient say so
  expect_error(predict(sub, d$x[1:2, ]), "keep_draws", class = "scalebayes_error_state")
  expect_error(fitted(sub), class = "scalebayes_error_state")
  expect_identical(wbb(d$x, d$y, lambda = 20, draws = 15, seed = 4, quiet = TRUE, keep_draws = TRUE)$draws, full$draws)
  # a path keeps the same columns at every lambda
  path <- wbb(d$x, d$y, lambda = c(30, 10), draws = 5, seed = 4, quiet = TRUE, keep_draws = "x1")
  expect_identical(lapply(path$fits, function(f) colnames(f$draws)), list("x1", "x1"))
  expect_error(wbb(d$x, d$y, lambda = 20, draws = 5, quiet = TRUE, keep_draws = "nope"), class = "scalebayes_error_input")
  expect_error(wbb(d$x, d$y, lambda = 20, draws = 5, quiet = TRUE, keep_draws = 99), class = "scalebayes_error_input")
  expect_error(wbb(d$x, d$y, lambda = 20, draws = 5, quiet = TRUE, keep_draws = FALSE), class = "scalebayes_error_input")
})
