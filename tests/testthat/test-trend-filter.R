# Trend filtering and generalized lasso: optimality certificates, agreement with genlasso, exact DP,
# thread invariance, prediction, bad input.

tf_problem <- function(n, k, uneven, seed) {
  set.seed(seed)
  x <- if (uneven) sort(runif(n, 0, 10)) else seq_len(n)
  s <- (x - min(x)) / diff(range(x))
  y <- sin(4 * pi * s) * exp(3 * s) + rnorm(n, sd = 1)
  list(x = x, y = y, w = rexp(n), k = k)
}

# Independent check of the certificate in R: for the returned beta and dual u,
#   |u_j| <= lambda_j,  W (y - beta) = D' u  (up to rounding),  and
#   gap = P(beta) - g(u) = sum_j lambda_j |(D beta)_j| - u_j (D beta)_j  +  1/2 ||W^{-1/2}(W(y-beta) - D'u)||^2.
tf_certificate <- function(y, w, D, lam, beta, u) {
  z <- drop(D %*% beta)
  r <- w * (y - beta) - drop(crossprod(D, u))
  P <- 0.5 * sum(w * (y - beta)^2) + sum(lam * abs(z))
  gap <- sum(lam * abs(z) - u * z) + 0.5 * sum(r^2 / w)
  list(rel_gap = gap / P, feasible = all(abs(u) <= lam * (1 + 1e-10)))
}

test_that("D^(x,k+1) matches genlasso's falling-factorial operator", {
  skip_if_not_installed("genlasso")
  x <- sort(runif(30))
  for (k in 0:3) {
    D <- cpp_tf_difference(x, k)
    expect_equal(D, as.matrix(genlasso::getDtfPosSparse(30, k, x)), tolerance = 1e-12, ignore_attr = TRUE)
  }
  # even spacing: the integer differences of the WBB paper, e.g. (1, -4, 6, -4, 1) for k = 3
  D <- cpp_tf_difference(1:8, 3)
  expect_equal(D[1, 1:5], c(1, -4, 6, -4, 1))
})

test_that("relative duality gap <= 1e-8 on random weighted problems, k = 0..3, even and uneven x", {
  # (for k >= 2 on large, very uneven designs near lambda_max the solver can stop above 1e-8: see
  # inst/design-genlasso.md; n = 80 with uniform x is inside the certified range)
  for (k in 0:3) for (uneven in c(FALSE, TRUE)) {
    p <- tf_problem(80, k, uneven, seed = 10 * k + uneven)
    D <- cpp_tf_difference(p$x, k)
    lmax <- trend_filter(p$y, p$x, k, lambda = 1, weights = p$w)$lambda_max
    lams <- lmax * c(0.3, 1e-2, 1e-4)
    fit <- trend_filter(p$y, p$x, k, lambda = lams, weights = p$w)
    expect_true(all(fit$rel_gap <= 1e-8), label = sprintf("engine gap k=%d uneven=%s", k, uneven))
    for (l in seq_along(lams)) {
      cert <- tf_certificate(p$y, p$w, D, rep(lams[l], nrow(D)), fit$beta[, l], fit$u[, l])
      expect_true(cert$feasible)
      # recomputed in double precision in R: allow rounding above the engine's long-double value
      expect_lt(cert$rel_gap, 1e-7)
    }
  }
})

test_that("separate penalty weights: certified gap and k = 0 DP equals interior point", {
  p <- tf_problem(100, 0, TRUE, seed = 3)
  pw <- rexp(99)
  dp <- trend_filter(p$y, p$x, 0, lambda = c(2, 0.2), weights = p$w, penalty_factor = pw,
                     control = tf_control(method = "dp"))
  ip <- trend_filter(p$y, p$x, 0, lambda = c(2, 0.2), weights = p$w, penalty_factor = pw,
                     control = tf_control(method = "ip", tol = 1e-12))
  expect_true(all(dp$rel_gap < 1e-12))
  expect_true(all(ip$rel_gap < 1e-11))
  # both solve a strongly convex problem (w > 0): beta differs by O(sqrt(gap))
  expect_lt(max(abs(dp$beta - ip$beta)), 1e-5)
  for (k in 1:3) {
    q <- tf_problem(70, k, FALSE, seed = 20 + k)
    pw <- rexp(70 - k - 1)
    lmax <- trend_filter(q$y, q$x, k, lambda = 1, weights = q$w, penalty_factor = pw)$lambda_max
    f <- trend_filter(q$y, q$x, k, lambda = lmax * 1e-3, weights = q$w, penalty_factor = pw)
    D <- cpp_tf_difference(q$x, k)
    cert <- tf_certificate(q$y, q$w, D, lmax * 1e-3 * pw, f$beta[, 1], f$u[, 1])
    expect_true(cert$feasible)
    expect_lt(cert$rel_gap, 1e-7)
  }
})

test_that("k = 0 dynamic programming equals the interior point on random problems", {
  for (s in 1:5) {
    p <- tf_problem(200, 0, s %% 2 == 0, seed = 100 + s)
    lam <- c(5, 1, 0.1)
    dp <- trend_filter(p$y, p$x, 0, lambda = lam, weights = p$w, control = tf_control(method = "dp"))
    ip <- trend_filter(p$y, p$x, 0, lambda = lam, weights = p$w, control = tf_control(method = "ip", tol = 1e-12))
    expect_lt(max(abs(dp$beta - ip$beta)), 1e-5)
    expect_true(all(dp$rel_gap < 1e-12))
  }
})

test_that("agreement with genlasso::trendfilter (unweighted) and genlasso::genlasso (weighted)", {
  skip_if_not_installed("genlasso")
  for (k in 0:3) {
    p <- tf_problem(40, k, uneven = k %% 2 == 1, seed = 200 + k)
    g <- genlasso::trendfilter(p$y, pos = p$x, ord = k)
    lam <- g$lambda[c(3, length(g$lambda) %/% 2)]
    ours <- trend_filter(p$y, p$x, k, lambda = lam)
    ref <- coef(g, lambda = lam)$beta
    # strong convexity: 1/2 ||beta - beta*||_W^2 <= gap, so |beta - beta*|_inf <= sqrt(2 gap / min w)
    # (+ genlasso's own rounding)
    bound <- sqrt(2 * ours$gap / 1) + 1e-8 * max(1, abs(ref))
    expect_true(all(apply(abs(ours$beta - ref), 2, max) <= bound))
    # weighted: 1/2 sum w (y - b)^2 = 1/2 ||sqrt(w) y - diag(sqrt(w)) b||^2
    D <- cpp_tf_difference(p$x, k)
    gw <- genlasso::genlasso(sqrt(p$w) * p$y, X = diag(sqrt(p$w)), D = D)
    lamw <- gw$lambda[c(2, length(gw$lambda) %/% 2)]
    oursw <- trend_filter(p$y, p$x, k, lambda = lamw, weights = p$w)
    refw <- coef(gw, lambda = lamw)$beta
    boundw <- sqrt(2 * oursw$gap / min(p$w)) + 1e-8 * max(1, abs(refw))
    expect_true(all(apply(abs(oursw$beta - refw), 2, max) <= boundw))
    expect_true(all(oursw$rel_gap <= 1e-8))
    expect_equal(oursw$lambda_max, max(gw$lambda), tolerance = 1e-6)
  }
})

test_that("lambda_max is exact: polynomial fit above it, not below", {
  for (k in 0:3) {
    p <- tf_problem(60, k, uneven = k <= 1, seed = 300 + k)
    lm <- tf_lambda_max(p$y, p$x, k, weights = p$w)
    above <- trend_filter(p$y, p$x, k, lambda = lm * 1.01, weights = p$w)
    below <- trend_filter(p$y, p$x, k, lambda = lm * 0.9, weights = p$w)
    # above lambda_max the fit is the weighted polynomial regression of degree k
    pr <- stats::lm.wfit(outer((p$x - mean(p$x)) / sd(p$x), 0:k, `^`), p$y, p$w)$fitted.values
    expect_lt(max(abs(above$beta[, 1] - pr)), 1e-5 * max(1, abs(pr)))
    expect_gt(max(abs(below$beta[, 1] - pr)), 1e-3 * sd(p$y))
  }
})

test_that("generalized_lasso agrees with genlasso on a weighted 2-D grid fused lasso", {
  skip_if_not_installed("genlasso")
  D <- grid_incidence(5, 4)$D
  set.seed(5)
  y <- rep(c(0, 2), c(8, 12)) + rnorm(20, sd = 0.5)
  w <- rexp(20)
  gw <- genlasso::genlasso(sqrt(w) * y, X = diag(sqrt(w)), D = D)
  lam <- gw$lambda[c(2, 5, 10)]
  ours <- generalized_lasso(y, D, lambda = lam, weights = w, control = tf_control(tol = 1e-12))
  expect_true(all(ours$rel_gap <= 1e-12))
  expect_lt(max(abs(ours$beta - coef(gw, lambda = lam)$beta)), 1e-5)
  # sparse Matrix input gives the same answer
  skip_if_not_installed("Matrix")
  ours2 <- generalized_lasso(y, Matrix::Matrix(D, sparse = TRUE), lambda = lam, weights = w,
                             control = tf_control(tol = 1e-12))
  expect_equal(ours2$beta, ours$beta, tolerance = 1e-10)
})

test_that("generalized_lasso lambda_max is exact for rank-deficient D (min-cut value on a grid graph)", {
  # 4 x 3 grid: 17 edges, 12 nodes, rank 11. For the incidence matrix of a connected graph,
  # lambda_max = max_S |v(S)| / p(cut(S)) with v = W (y - weighted mean) (max-flow / min-cut), checked by
  # enumerating all 2^12 node subsets.
  G <- grid_incidence(4, 3)
  D <- G$D
  e <- G$edges
  set.seed(11)
  y <- rnorm(12)
  w <- rexp(12) + 0.1
  pw <- runif(nrow(e), 0.5, 2)
  v <- w * (y - sum(w * y) / sum(w))
  brute <- 0
  for (S in 1:(2^12 - 2)) {
    ins <- bitwAnd(S, 2^(0:11)) > 0
    brute <- max(brute, abs(sum(v[ins])) / sum(pw[ins[e[, 1]] != ins[e[, 2]]]))
  }
  fit <- generalized_lasso(y, D, lambda = 1, weights = w, penalty_factor = pw)
  # the LP's own certificate: lower <= lambda_max, bracket at rounding level
  expect_lte(fit$lambda_max_lower, fit$lambda_max * (1 + 1e-12))
  expect_lt(fit$lambda_max_rel_gap, 1e-9)
  # u0 comes from normal equations with a 1e-10 ridge: agreement to 1e-8 relative
  expect_equal(fit$lambda_max, brute, tolerance = 1e-8)
  # and it is where the solution leaves the null-space fit: just above, beta = beta0; just below, a certified
  # strictly better objective than beta0
  b0 <- rep(sum(w * y) / sum(w), 12)
  obj <- function(b, lam) 0.5 * sum(w * (y - b)^2) + lam * sum(pw * abs(D %*% b))
  above <- generalized_lasso(y, D, lambda = fit$lambda_max * (1 + 1e-6), weights = w, penalty_factor = pw,
                             control = tf_control(tol = 1e-12))
  expect_lt(max(abs(above$beta[, 1] - b0)), 1e-6)
  lam <- fit$lambda_max * (1 - 1e-2)
  below <- generalized_lasso(y, D, lambda = lam, weights = w, penalty_factor = pw,
                             control = tf_control(tol = 1e-12))
  expect_lt(obj(below$beta[, 1], lam) + below$gap, obj(b0, lam))
})

test_that("generalized_lasso lambda_max matches trend filtering for difference matrices, warns when it cannot", {
  set.seed(13)
  n <- 200
  y <- cumsum(rnorm(n))
  # second differences (condition of D D' ~ n^4): refinement removes the ridge bias (was 0.2% off)
  fit <- generalized_lasso(y, diff(diag(n), differences = 2), lambda = 1)
  expect_equal(fit$lambda_max, tf_lambda_max(y, k = 1), tolerance = 1e-8)
  # fourth differences (condition ~ n^8 > 1 / eps): the normal equations cannot be solved in double
  expect_warning(generalized_lasso(y, diff(diag(n), differences = 4), lambda = 1),
                 class = "scalebayes_warning_lambda_max")
})

test_that("generalized_lasso lambda_max LP stays certified on a 30 x 30 grid", {
  skip_if_not_installed("Matrix")
  G <- grid_incidence(30, 30, sparse = TRUE)
  set.seed(12)
  y <- as.numeric(G$grid$i > 15) + rnorm(900, sd = 0.5)
  fit <- generalized_lasso(y, G$D, lambda = 0.1)
  expect_lt(fit$lambda_max_rel_gap, 1e-8)
  expect_lte(fit$lambda_max_lower, fit$lambda_max * (1 + 1e-12))
})

test_that("prediction extends the fitted polynomial pieces (discrete-spline interpolation)", {
  set.seed(4)
  x <- sort(c(1, runif(30, 1, 20), 20))
  for (k in 0:3) {
    y <- 1 + 0.5 * x - 0.01 * x^2 + 0.001 * x^3 + rnorm(length(x), sd = 0.1)
    f <- trend_filter(y, x, k, lambda = 1e12)  # far above lambda_max: a polynomial of degree k
    expect_gt(f$lambda_max, 0)
    expect_lt(f$lambda_max, 1e12)
    newx <- c(0.5, 3.3, 10.01, 19.99, 21)
    B <- function(v) outer((v - 10) / 10, 0:k, `^`)
    cf <- qr.solve(B(x), y)
    expect_equal(unname(predict(f, newx)), drop(B(newx) %*% cf), tolerance = 1e-6)
    expect_equal(unname(predict(f, x)), unname(f$beta[, 1]))
  }
  # k = 1: piecewise linear between the data points; k = 0: constant on (x_i, x_{i+1}], right-continuous
  y <- rnorm(32)
  f1 <- trend_filter(y, x, 1, lambda = 0.5)
  mid <- (x[10] + x[11]) / 2
  expect_equal(unname(predict(f1, mid)), mean(f1$beta[10:11, 1]), tolerance = 1e-10)
  f0 <- trend_filter(y, x, 0, lambda = 0.1)
  expect_equal(unname(predict(f0, mid)), unname(f0$beta[11, 1]))
  # k = 2: the interpolant through the k + 1 points ending at the right end of the interval
  f2 <- trend_filter(y, x, 2, lambda = 0.5)
  i <- 10:12  # newx in (x_11, x_12] uses x_10, x_11, x_12
  nx <- (x[11] + x[12]) / 2
  cf <- solve(outer(x[i], 0:2, `^`), f2$beta[i, 1])
  expect_equal(unname(predict(f2, nx)), sum(cf * nx^(0:2)), tolerance = 1e-8)
})

test_that("cv_trend_filter picks a lambda on the path", {
  p <- tf_problem(150, 1, FALSE, seed = 9)
  cv <- cv_trend_filter(p$y, p$x, k = 1, nlambda = 15)
  expect_true(cv$lambda_min %in% cv$lambda)
  expect_true(cv$lambda_1se >= cv$lambda_min)
  expect_length(cv$cv, 15)
})

test_that("cv_trend_filter's parallel fold paths are those of one trend_filter() per fold, for any threads", {
  p <- tf_problem(200, 3, FALSE, seed = 4)
  a <- cv_trend_filter(p$y, p$x, k = 3, nlambda = 12, threads = 1, quiet = TRUE)
  b <- cv_trend_filter(p$y, p$x, k = 3, nlambda = 12, threads = 2, quiet = TRUE)
  expect_identical(a$cv, b$cv)
  expect_identical(a$fit$beta, b$fit$beta)
  # the reference: the full-data path and one trend_filter() path per fold, one after another (the former code)
  full <- suppressWarnings(trend_filter(p$y, p$x, k = 3, nlambda = 12))
  expect_identical(a$fit$beta, full$beta)
  expect_identical(a$lambda, full$lambda)
  n <- length(p$y)
  fold <- integer(n)
  fold[2:(n - 1)] <- rep_len(1:5, n - 2)
  err <- t(vapply(1:5, function(f) {
    tr <- which(fold != f); te <- which(fold == f)
    ff <- suppressWarnings(trend_filter(p$y[tr], p$x[tr], 3, lambda = a$lambda))
    colMeans((p$y[te] - scalebayes:::tf_interpolate(p$x[tr], ff$beta, 3, p$x[te]))^2)
  }, numeric(12)))
  expect_equal(a$cv, colMeans(err), tolerance = 1e-14)  # the same solves; only the sums' order may differ
  expect_error(cv_trend_filter(p$y, p$x, k = 3, threads = 0), class = "scalebayes_error_input")
})

test_that("trend_filter_wbb draws are identical for 1 and 2 threads and reproducible by seed", {
  p <- tf_problem(120, 3, FALSE, seed = 11)
  a <- trend_filter_wbb(p$y, k = 3, lambda = 50, draws = 40, threads = 1, seed = 42)
  b <- trend_filter_wbb(p$y, k = 3, lambda = 50, draws = 40, threads = 2, seed = 42)
  expect_identical(a$draws, b$draws)
  expect_s3_class(a, c("sb_trend_filter_wbb", "sb_fit"))
  expect_equal(dim(a$draws), c(40L, 120L))
  expect_true(all(a$diagnostics$rel_gap <= 1e-8))
  set.seed(3); c1 <- trend_filter_wbb(p$y, k = 1, lambda = 5, draws = 10, prior_weights = "separate")
  set.seed(3); c2 <- trend_filter_wbb(p$y, k = 1, lambda = 5, draws = 10, prior_weights = "separate", threads = 2)
  expect_identical(c1$draws, c2$draws)
  d0 <- trend_filter_wbb(p$y, k = 0, lambda = 5, draws = 10, seed = 1, threads = 2)
  expect_true(all(d0$diagnostics$rel_gap < 1e-12))
  pr <- predict(a, newx = c(10.5, 60))
  expect_named(pr, c("x", "estimate", "fit", "se", "lower", "upper"))
  expect_true(all(pr$se > 0))
})

test_that("a common prior weight w0 acts as lambda * w0: every draw is trend_filter() at lambda * w0 and its weights", {
  # Draw t's data weights and common prior weight are recomputed from the stream (seed, t) by the driver
  # (helper-wbb-weights.R); the draw must be the exact weighted fit 1/2 sum w (y - b)^2 + lambda w0 |D b|_1.
  p <- tf_problem(50, 0, FALSE, seed = 12)
  a <- trend_filter_wbb(p$y, k = 0, lambda = 3, draws = 6, seed = 7, threads = 2, quiet = TRUE)
  rec <- wbb_recorded_weights(50, 6, seed = 7, prior = "common")
  expect_equal(a$w0, rec$w0[, 1])
  for (t in 1:6) {
    f <- trend_filter(p$y, k = 0, lambda = 3 * rec$w0[t, 1], weights = rec$w[t, ])
    expect_equal(unname(a$draws[t, ]), unname(f$beta[, 1]), tolerance = 1e-8, info = t)
  }
  # and the same for k = 1 (a different difference operator and solver path)
  b <- trend_filter_wbb(p$y, k = 1, lambda = 3, draws = 3, seed = 9, quiet = TRUE)
  rb <- wbb_recorded_weights(50, 3, seed = 9, prior = "common")
  for (t in 1:3) {
    f <- trend_filter(p$y, k = 1, lambda = 3 * rb$w0[t, 1], weights = rb$w[t, ])
    expect_equal(unname(b$draws[t, ]), unname(f$beta[, 1]), tolerance = 1e-6, info = t)
  }
})

test_that("bad inputs give classed errors", {
  y <- rnorm(20)
  expect_error(trend_filter(y, x = c(2, 1, 3:20), k = 1, lambda = 1), class = "scalebayes_error")
  expect_error(trend_filter(y, x = c(1, 1, 3:20), k = 1, lambda = 1), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 19, lambda = 1), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 18, lambda = 1), NA)
  expect_error(trend_filter(c(NA, y[-1]), k = 1, lambda = 1), class = "scalebayes_error")
  expect_error(trend_filter(y, x = c(1:19, Inf), k = 1, lambda = 1), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 1, lambda = 1, weights = c(0, rep(1, 19))), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 1, lambda = 1, weights = c(-1, rep(1, 19))), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 1, lambda = -1), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 1, lambda = NA), class = "scalebayes_error")
  expect_error(trend_filter(y, k = -1, lambda = 1), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 1.5, lambda = 1), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 1, lambda = 1, penalty_factor = rep(1, 5)), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 2, lambda = 1, control = tf_control(method = "dp")), class = "scalebayes_error")
  expect_error(trend_filter(y, k = 1, lambda = 1, control = list(tol = 1)), class = "scalebayes_error")
  expect_error(tf_control(tol = 0), class = "scalebayes_error")
  expect_error(trend_filter_wbb(y, k = 1, lambda = 1, draws = 0), class = "scalebayes_error")
  expect_error(trend_filter_wbb(y, k = 1, lambda = -2), class = "scalebayes_error")
  expect_error(trend_filter_wbb(y, k = 1, lambda = 1, prior_weights = "sep"), class = "error")
  expect_error(trend_filter_wbb(y, x = rev(seq_along(y)), k = 1, lambda = 1), class = "scalebayes_error")
  D <- diag(-1, 19, 20) + cbind(0, diag(1, 19))
  expect_error(generalized_lasso(y, D[, -1], lambda = 1), class = "scalebayes_error")
  expect_error(generalized_lasso(y, rbind(D, 0), lambda = 1), class = "scalebayes_error")
  expect_error(generalized_lasso(y, "D", lambda = 1), class = "scalebayes_error")
  expect_error(generalized_lasso(y, D, lambda = 1, weights = rep(0, 20)), class = "scalebayes_error")
  expect_error(predict(trend_filter(y, k = 1, lambda = 1), newx = NA), class = "scalebayes_error")
})

test_that("tf_lambda_max equals the lambda_max reported by trend_filter and by genlasso", {
  p <- tf_problem(50, 2, TRUE, seed = 77)
  lm <- tf_lambda_max(p$y, p$x, 2, weights = p$w)
  expect_equal(lm, trend_filter(p$y, p$x, 2, lambda = 1, weights = p$w)$lambda_max)
  skip_if_not_installed("genlasso")
  g <- genlasso::trendfilter(p$y, pos = p$x, ord = 2)
  expect_equal(tf_lambda_max(p$y, p$x, 2), max(g$lambda), tolerance = 1e-6)
})

test_that("primal interior point certifies large problems where the dual alone failed (n = 1e4)", {
  set.seed(2)
  n <- 10000
  i <- seq_len(n)
  y <- sin(4 * pi * i / n) * exp(3 * i / n) + rnorm(n, sd = 2)
  for (k in 1:2) {
    lam <- 0.01 * tf_lambda_max(y, k = k)
    f <- trend_filter(y, k = k, lambda = lam)
    expect_true(f$converged)
    expect_lte(f$rel_gap, 1e-8)
    expect_true(is.finite(f$rounding_rel) && f$rounding_rel >= 0)
  }
})

test_that("trend_filter_wbb gives identical draws with future workers", {
  skip_if_fast_tier()
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not_installed("future.apply")
  p <- tf_problem(80, 2, FALSE, seed = 5)
  a <- trend_filter_wbb(p$y, k = 2, lambda = 20, draws = 12, threads = 1, seed = 9, quiet = TRUE)
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  b <- trend_filter_wbb(p$y, k = 2, lambda = 20, draws = 12, seed = 9, quiet = TRUE, future = TRUE)
  expect_identical(a$draws, b$draws)
})

test_that("SURE is unbiased for the risk (known sigma) and sigma is estimated consistently", {
  set.seed(7)
  n <- 60
  theta <- pmax(0, seq_len(n) - 30) / 10
  R <- 300
  d <- numeric(R)
  for (r in seq_len(R)) {
    y <- theta + rnorm(n)
    s <- sure_trend_filter(y, k = 1, lambda = 3, sigma = 1)
    d[r] <- s$sure - sum((s$fit$beta[, 1] - theta)^2)
  }
  # paired difference SURE - loss has mean 0; tolerance from its Monte-Carlo standard error
  expect_lt(abs(mean(d)) / (stats::sd(d) / sqrt(R)), 4)
  y <- sin(seq_len(4000) / 400) + rnorm(4000, sd = 0.5)
  s <- sure_trend_filter(y, k = 2, nlambda = 8)
  expect_true(s$sigma_estimated)
  expect_lt(abs(s$sigma / 0.5 - 1), 0.06)  # MAD efficiency ~ 37%: sd of sigma-hat / sigma ~ 0.02 at m = 4000
  expect_equal(s$lambda_min, s$lambda[which.min(s$sure)])
  expect_s3_class(s, "sb_tf_sure")
  expect_output(print(s), "lambda_min")
  expect_error(sure_trend_filter(y, k = 2, sigma = -1), class = "scalebayes_error_input")
})

test_that("k = 1 Newton systems: dual normal equations, Givens QR and the restart reach the same optimum", {
  # newton = "dual" on weights spread over 8 decades loses the direction and restarts on the QR (it then
  # takes the QR's steps plus the blocked ones); all certificates must hold and the objectives must agree
  # within the certified gaps
  set.seed(3)
  n <- 3000
  x <- sort(runif(n))
  y <- sin(6 * x) + rnorm(n, sd = 0.3)
  for (spread in c(0, 8)) {
    w <- 10^runif(n, -spread, 0)
    lam <- 1e-3 * tf_lambda_max(y, x, k = 1, weights = w)
    fits <- lapply(c("auto", "qr", "dual"), function(nw)
      trend_filter(y, x, k = 1, weights = w, lambda = lam, control = tf_control(newton = nw)))
    names(fits) <- c("auto", "qr", "dual")
    D <- cpp_tf_difference(x, 1)
    for (nm in names(fits)) {
      f <- fits[[nm]]
      expect_true(f$rel_gap <= 1e-8, label = sprintf("gap spread=%d newton=%s", spread, nm))
      cert <- tf_certificate(y, w, D, rep(lam, nrow(D)), f$beta[, 1], f$u[, 1])
      expect_true(cert$feasible)
      expect_lt(cert$rel_gap, 1e-7)
    }
    for (nm in c("auto", "dual")) {
      expect_lte(abs(fits[[nm]]$primal - fits$qr$primal), fits[[nm]]$gap + fits$qr$gap + 1e-12 * fits$qr$primal)
    }
    if (spread == 8) expect_gt(fits$dual$iter, fits$qr$iter)  # the restart was taken
  }
  expect_error(tf_control(newton = "cholesky"), class = "error")
})

test_that("k = 2, 3 at n = 1e5: the precision escalation certifies where double directions were lost", {
  skip_if_fast_tier()
  # The benchmark's problems (section 2 of bench/trend_filter.R). With double-precision directions only,
  # k = 2 stopped at a relative gap of 4e-5 and k = 3 at 0.65 with a fit far from the signal (RMSE 2.7); the
  # second primal run with the escalation on lost directions (primal_ip.hpp) reaches 3e-11 for k = 2 and, for
  # k = 3, the rounding floor (no double-precision beta certifies below it) with the fit of a converged solve.
  set.seed(2)
  n <- 1e5
  i <- seq_len(n)
  truth <- sin(4 * pi * i / n) * exp(3 * i / n)
  y <- truth + rnorm(n, sd = 2)
  lam2 <- 1e-5 * tf_lambda_max(y, k = 2)
  f2 <- trend_filter(y, k = 2, lambda = lam2)
  expect_true(f2$converged)
  expect_lte(f2$rel_gap, 1e-8)
  # certificate in R with the banded D of x = 1..n (every row the coefficients of the first)
  cf <- cpp_tf_difference(1:4, 2)[1, ]
  beta <- f2$beta[, 1]
  u <- f2$u[, 1]
  m <- n - 3
  z <- Reduce(`+`, lapply(0:3, function(l) cf[l + 1] * beta[(1 + l):(m + l)]))
  dtu <- numeric(n)
  for (l in 0:3) dtu[(1 + l):(m + l)] <- dtu[(1 + l):(m + l)] + cf[l + 1] * u
  gap <- sum(lam2 * abs(z) - u * z) + 0.5 * sum((y - beta - dtu)^2)
  P <- 0.5 * sum((y - beta)^2) + lam2 * sum(abs(z))
  expect_true(all(abs(u) <= lam2 * (1 + 1e-10)))
  # (R's double-precision gap carries the rounding of D beta, bounded by rounding_rel)
  expect_lt(gap / P, 1e-8 + 4 * f2$rounding_rel)
  f3 <- suppressWarnings(trend_filter(y, k = 3, lambda = 2e-5 * tf_lambda_max(y, k = 3)))
  expect_gt(f3$rounding_rel, 1e-3)
  expect_lte(f3$rel_gap, 2 * f3$rounding_rel)
  expect_lt(sqrt(mean((f3$beta[, 1] - truth)^2)), 0.1)
})

test_that("k = 1 beyond the double range of the dual normal equations: long-double directions certify", {
  # Exp(1) weights at n = 3e4: n (max w / min w)^(1/4) is about 7e5, above the double range (3e5), so "auto"
  # factors the dual normal equations in long double; the result must be certified and agree with the QR
  set.seed(12)
  n <- 3e4
  x <- seq_len(n)
  y <- sin(4 * pi * x / n) * exp(3 * x / n) + rnorm(n, sd = 2)
  w <- rexp(n)
  expect_gt(n * (max(w) / min(w))^0.25, 3e5)
  for (ratio in c(1e-2, 1e-4)) {
    lam <- ratio * tf_lambda_max(y, x, k = 1, weights = w)
    fa <- trend_filter(y, x, k = 1, weights = w, lambda = lam)
    fq <- trend_filter(y, x, k = 1, weights = w, lambda = lam, control = tf_control(newton = "qr"))
    expect_lte(fa$rel_gap, 1e-8)
    expect_lte(fq$rel_gap, 1e-8)
    expect_true(all(abs(fa$u[, 1]) <= lam * (1 + 1e-10)))
    expect_lte(abs(fa$primal - fq$primal), fa$gap + fq$gap + 1e-12 * fq$primal)
  }
})

test_that("one common penalty weight multiplies lambda: penalty_factor = c0 equals lambda * c0", {
  set.seed(11)
  y <- sin(seq(0, 4, length.out = 120)) + rnorm(120, sd = 0.2)
  for (k in 0:1) {
    a <- trend_filter(y, k = k, lambda = 3, penalty_factor = 2.5)
    b <- trend_filter(y, k = k, lambda = 7.5)
    expect_equal(coef(a), coef(b), tolerance = 1e-6, info = paste("k =", k))
    # and the weight changes the fit (it is not ignored)
    expect_gt(max(abs(coef(a) - coef(trend_filter(y, k = k, lambda = 3)))), 1e-3)
  }
})

test_that("cv_trend_filter() shows its progress over folds x lambda values unless quiet (issue 61, item 7)", {
  set.seed(1)
  y <- sin(seq_len(300) / 30) + rnorm(300)
  run <- function(quiet) {
    # cli's "logger" handler writes one line per bar event to stdout, so the bar is seen without a terminal
    withr::local_options(cli.progress_handlers_only = "logger", cli.progress_show_after = 0)
    utils::capture.output(fit <- cv_trend_filter(y, nlambda = 20, quiet = quiet))
  }
  shown <- run(FALSE)
  # the full-data path and 5 folds' paths, 20 lambda values each
  expect_true(any(grepl("/120 (added|updated)", shown)))
  expect_true(any(grepl("120/120 terminated", shown, fixed = TRUE)))
  expect_length(run(TRUE), 0L)
})
