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
