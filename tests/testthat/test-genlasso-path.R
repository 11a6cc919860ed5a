# The exact generalized-lasso path (generalized_lasso(path = TRUE), trend_filter(path = TRUE)) against
# genlasso knot by knot, the penalty builders, interpolation, and input errors.

expect_same_path <- function(fit, g, tol = 1e-8) {
  expect_equal(length(fit$lambda), length(g$lambda))
  K <- min(length(fit$lambda), length(g$lambda))
  expect_lt(max(abs(fit$lambda[1:K] - g$lambda[1:K]) / g$lambda[1:K]), tol)
  scale <- max(abs(g$beta[, 1:K]))
  expect_lt(max(abs(as.matrix(fit$beta)[, 1:K] - g$beta[, 1:K])) / scale, tol)
  expect_equal(as.numeric(fit$df[1:K]), as.numeric(g$df[1:K]))
  expect_equal(fit$completepath, g$completepath)
}

test_that("penalty builders equal genlasso's matrices", {
  skip_if_not_installed("genlasso")
  skip_if_not_installed("Matrix")
  x <- c(0, 0.5, 1.7, 2, 3.1, 4.4, 5, 6.5)
  for (k in 0:3) {
    expect_equal(as.matrix(trend_filter_matrix(8, k, x)), as.matrix(genlasso::getDtfPosSparse(8, k, x)))
  }
  expect_equal(as.matrix(trend_filter_matrix(8, 2)), unname(cpp_tf_difference(as.double(1:8), 2L)))
  expect_equal(as.matrix(fused_lasso_1d(7)), as.matrix(genlasso::getD1dSparse(7)))
  expect_equal(as.matrix(fused_lasso_2d(3, 4)), as.matrix(genlasso::getD2dSparse(3, 4)))
  expect_equal(as.matrix(fused_lasso_2d(1, 4)), as.matrix(fused_lasso_1d(4)))
  E <- rbind(c(1, 2), c(2, 3), c(3, 1), c(3, 4))
  expect_equal(as.matrix(fused_lasso_graph(E)),
               rbind(c(-1, 1, 0, 0), c(0, -1, 1, 0), c(1, 0, -1, 0), c(0, 0, -1, 1)))
  skip_if_not_installed("igraph")
  gr <- igraph::graph_from_edgelist(E, directed = FALSE)
  expect_equal(as.matrix(fused_lasso_graph(gr)), as.matrix(genlasso::getDgSparse(gr)))
  Dg <- fused_lasso_1d(4, gamma = 0.5)
  expect_s4_class(Dg, "dgCMatrix")
  expect_equal(as.matrix(Dg)[4:7, ], diag(0.5, 4))
  expect_error(fused_lasso_graph(matrix(1:3, 1)), class = "scalebayes_error_input")
  expect_error(trend_filter_matrix(5, 4), class = "scalebayes_error_input")
})

test_that("trend filtering paths k = 0..3 with uneven x equal genlasso knot by knot", {
  skip_if_not_installed("genlasso")
  set.seed(11)
  n <- 60
  x <- sort(seq_len(n) + runif(n, -0.35, 0.35))  # uneven, spacings in (0.3, 1.7)
  y <- sin(x / 8) + rnorm(n, sd = 0.3)
  for (k in 0:3) {
    fit <- trend_filter(y, x, k = k, path = TRUE)
    expect_s3_class(fit, "sb_genlasso_path")
    g <- genlasso::trendfilter(y, pos = x, ord = k)
    expect_same_path(fit, g)
    # off-knot lambdas: exact interpolation, as coef.genlasso
    lam <- sort(c(exp(seq(log(fit$lambda[1] * 1.2), log(min(fit$lambda) / 3), length.out = 13)), 0))
    cf <- coef(fit, lambda = lam)
    cg <- coef(g, lambda = lam)
    expect_lt(max(abs(cf$beta - cg$beta)) / max(abs(cg$beta)), 1e-8)
    expect_equal(as.numeric(cf$df), as.numeric(cg$df))
    for (d in c(k + 1, k + 5, 20)) {
      expect_equal(coef(fit, df = d)$lambda, coef(g, df = d)$lambda, tolerance = 1e-8)
    }
    expect_equal(predict(fit, lambda = lam[3]), cf$beta[, 3, drop = FALSE], ignore_attr = TRUE)
  }
})

test_that("fused lasso paths: 1-D, 6 x 7 grid and a graph equal genlasso knot by knot", {
  skip_if_not_installed("genlasso")
  skip_if_not_installed("igraph")
  set.seed(12)
  y <- c(rep(0, 30), rep(2, 30)) + rnorm(60, sd = 0.6)
  expect_same_path(generalized_lasso(y, fused_lasso_1d(60), path = TRUE), genlasso::fusedlasso1d(y))
  y2 <- rnorm(42) + rep(c(0, 1.5), c(21, 21))
  fit2 <- generalized_lasso(y2, fused_lasso_2d(6, 7), path = TRUE)
  g2 <- genlasso::fusedlasso2d(y2, dim1 = 6, dim2 = 7)
  expect_same_path(fit2, g2)
  lam <- c(fit2$lambda[1] * 2, (fit2$lambda[5] + fit2$lambda[6]) / 2, fit2$lambda[30] * 0.99, 1e-3)
  expect_lt(max(abs(coef(fit2, lambda = lam)$beta - coef(g2, lambda = lam)$beta)), 1e-8 * max(abs(y2)))
  set.seed(13)
  gr <- igraph::sample_gnm(30, 55)
  y3 <- rnorm(30)
  fit3 <- generalized_lasso(y3, fused_lasso_graph(gr), path = TRUE)
  g3 <- genlasso::fusedlasso(y3, graph = gr)
  expect_same_path(fit3, g3)
  # sparse fused lasso (gamma rows)
  fit4 <- generalized_lasso(y, fused_lasso_1d(60, gamma = 0.4), path = TRUE)
  g4 <- genlasso::fusedlasso1d(y, gamma = 0.4)
  expect_lt(max(abs(coef(fit4, lambda = c(2, 0.5, 0.1))$beta - coef(g4, lambda = c(2, 0.5, 0.1))$beta)), 1e-8)
})

test_that("the grid solution (path = FALSE) equals the path within its certified gap", {
  set.seed(14)
  y <- c(rep(0, 25), rep(1, 25)) + rnorm(50, sd = 0.4)
  D <- fused_lasso_2d(5, 10)
  pth <- generalized_lasso(y, D, path = TRUE)
  lam <- pth$lambda[1] * c(0.5, 0.1, 0.01)
  grid <- generalized_lasso(y, D, lambda = lam)
  bp <- coef(pth, lambda = lam)$beta
  obj <- function(b, l) 0.5 * sum((y - b)^2) + l * sum(abs(as.numeric(D %*% b)))
  for (j in seq_along(lam)) {
    Pp <- obj(bp[, j], lam[j])
    Pg <- obj(grid$beta[, j], lam[j])
    expect_lte(Pp, Pg + 1e-12 * Pg)                      # the path is optimal
    expect_lte(Pg - Pp, grid$gap[j] + 1e-12 * Pg)         # the grid's certified gap bounds its excess
    # strong convexity: ||beta_grid - beta*||^2 / 2 <= P(beta_grid) - P*
    expect_lte(sum((grid$beta[, j] - bp[, j])^2) / 2, grid$gap[j] + 1e-10)
  }
  tf <- trend_filter(y, k = 1, path = TRUE)
  tg <- trend_filter(y, k = 1, lambda = tf$lambda[c(3, 20)])
  expect_lte(max(abs(tg$beta - tf$beta[, c(3, 20)])), sqrt(2 * max(tg$gap)) + 1e-8)
})

test_that("weights and penalty_factor enter exactly", {
  set.seed(15)
  y <- rnorm(30)
  w <- rexp(30) + 0.2
  pth <- generalized_lasso(y, fused_lasso_1d(30), weights = w, path = TRUE)
  lam <- pth$lambda[c(4, 12)]
  grid <- generalized_lasso(y, fused_lasso_1d(30), weights = w, lambda = lam, control = tf_control(tol = 1e-13))
  expect_lte(max(abs(coef(pth, lambda = lam)$beta - grid$beta)), 1e-5)
  pf <- runif(29, 0.5, 2)
  pth2 <- trend_filter(y, k = 1, penalty_factor = pf[1:28], path = TRUE)
  g2 <- trend_filter(y, k = 1, penalty_factor = pf[1:28], lambda = pth2$lambda[6], control = tf_control(tol = 1e-13))
  expect_lte(max(abs(pth2$beta[, 6] - g2$beta[, 1])), 1e-5)
})

test_that("a design matrix X is reduced as genlasso does (n > p and p > n)", {
  skip_if_not_installed("genlasso")
  set.seed(16)
  X <- matrix(rnorm(200 * 100), 200, 100)
  beta0 <- rep(c(0, 1, -1, 0.5), each = 25)
  y <- as.numeric(X %*% beta0 + rnorm(200))
  D <- fused_lasso_1d(100)
  expect_warning(fit <- generalized_lasso(y, D, X = X, path = TRUE, maxsteps = 60),
                 class = "scalebayes_warning_maxsteps")
  g <- suppressWarnings(genlasso::genlasso(y, X, as.matrix(D), maxsteps = 60))
  expect_equal(length(fit$lambda), length(g$lambda))
  expect_lt(max(abs(fit$lambda - g$lambda) / g$lambda), 1e-8)
  expect_lt(max(abs(fit$beta - g$beta)) / max(abs(g$beta)), 1e-8)
  expect_equal(as.numeric(fit$df), as.numeric(g$df))
  expect_equal(predict(fit, lambda = fit$lambda[10]), X %*% fit$beta[, 10, drop = FALSE], ignore_attr = TRUE)
  Xw <- matrix(rnorm(40 * 60), 40, 60)
  yw <- rnorm(40)
  Dw <- fused_lasso_1d(60)
  cls <- character(0)
  fitw <- withCallingHandlers(generalized_lasso(yw, Dw, X = Xw, path = TRUE, maxsteps = 40),
                              warning = function(w) { cls <<- c(cls, class(w)); invokeRestart("muffleWarning") })
  expect_true("scalebayes_warning_ridge" %in% cls)
  gw <- suppressWarnings(genlasso::genlasso(yw, Xw, as.matrix(Dw), maxsteps = 40))
  expect_lt(max(abs(fitw$lambda - gw$lambda) / gw$lambda), 1e-8)
  expect_lt(max(abs(fitw$beta - gw$beta)) / max(abs(gw$beta)), 1e-8)
  expect_equal(as.numeric(fitw$df), as.numeric(gw$df))
})

test_that("maxsteps, minlam, approx and the methods", {
  skip_if_not_installed("genlasso")
  set.seed(17)
  y <- cumsum(rnorm(40))
  expect_warning(f <- trend_filter(y, k = 1, path = TRUE, maxsteps = 5), class = "scalebayes_warning_maxsteps")
  expect_equal(length(f$lambda), 5L)
  expect_false(f$completepath)
  expect_error(coef(f, lambda = f$lambda[5] / 2), class = "scalebayes_error_input")
  g <- genlasso::trendfilter(y, ord = 1, minlam = 1)
  f2 <- trend_filter(y, k = 1, path = TRUE, minlam = 1)
  expect_same_path(f2, g)
  ga <- genlasso::trendfilter(y, ord = 2, approx = TRUE)
  expect_same_path(trend_filter(y, k = 2, path = TRUE, approx = TRUE), ga)
  full <- trend_filter(y, k = 1, path = TRUE)
  s <- summary(full)
  expect_equal(nrow(s), length(full$lambda))
  expect_true(all(s$event %in% c("hit", "leave")))
  expect_output(print(full), "exact solution path")
  pdf(NULL)
  expect_invisible(plot(full))
  grDevices::dev.off()
  expect_equal(predict(full, newdata = c(2.5, 10), lambda = full$lambda[3]),
               predict(trend_filter(y, k = 1, lambda = full$lambda[3], control = tf_control(tol = 1e-12)),
                       newdata = c(2.5, 10)), tolerance = 1e-6, ignore_attr = TRUE)
})

test_that("bad input gives classed errors naming the argument", {
  D <- fused_lasso_1d(10)
  expect_error(generalized_lasso(rnorm(9), D, path = TRUE), class = "scalebayes_error_input")
  expect_error(generalized_lasso(c(NA, rnorm(9)), D, path = TRUE), class = "scalebayes_error_input")
  e <- tryCatch(generalized_lasso(rnorm(10), D, path = TRUE, maxsteps = 0), error = identity)
  expect_s3_class(e, "scalebayes_error_input")
  expect_match(conditionMessage(e), "maxsteps")
  expect_error(trend_filter(c(1, NA, 3, 4), k = 1, path = TRUE), class = "scalebayes_error_input")
  expect_error(generalized_lasso(rnorm(10), D, path = TRUE, minlam = -1), class = "scalebayes_error_input")
  expect_error(generalized_lasso(rnorm(10), D, X = matrix(1, 10, 9), path = TRUE), class = "scalebayes_error_input")
  expect_error(generalized_lasso(rnorm(10), D, X = cbind(NA, diag(10)[, -1])), class = "scalebayes_error_input")
  expect_error(generalized_lasso(rnorm(10), D, X = diag(10)[, -1]), class = "scalebayes_error_input")
  expect_error(generalized_lasso(rnorm(9), D, X = diag(10)), class = "scalebayes_error_input")
  expect_error(generalized_lasso(rnorm(10), D, X = "a"), class = "scalebayes_error_input")
})

test_that("the grid with a design matrix X: certified for the original objective, equal to the exact path", {
  # reference: the exact path at the grid lambdas (linear interpolation between knots is exact); strong
  # convexity of the objective in X beta (and in beta with the ridge) bounds the distance by the certified gap
  set.seed(21)
  obj <- function(X, y, D, b, l, eps = 0) sum((y - X %*% b)^2) / 2 + eps / 2 * sum(b^2) + l * sum(abs(as.matrix(D %*% b)))
  for (p in c(30, 70)) {
    X <- matrix(rnorm(50 * p), 50, p)
    y <- as.numeric(X %*% rep(c(0, 1, -1), length.out = p) + rnorm(50))
    D <- fused_lasso_1d(p)
    pth <- suppressWarnings(generalized_lasso(y, D, X = X, path = TRUE))
    lam <- pth$lambda[c(2, 8, 20)] * 0.97
    if (p > 50) {
      expect_warning(g <- generalized_lasso(y, D, X = X, lambda = lam, control = tf_control(tol = 1e-12)),
                     class = "scalebayes_warning_ridge")
    } else {
      g <- generalized_lasso(y, D, X = X, lambda = lam, control = tf_control(tol = 1e-12))
    }
    eps <- if (p > 50) 1e-4 else 0
    cp <- coef(pth, lambda = lam)
    expect_true(all(g$converged))
    expect_equal(g$df, cp$df)
    for (j in seq_along(lam)) {
      pj <- obj(X, y, D, cp$beta[, j], lam[j], eps)
      # the certificate: P(beta) - P* <= gap, P* = the path's objective (here to rounding)
      expect_lte(obj(X, y, D, g$beta[, j], lam[j], eps) - pj, g$gap[j] + 1e-12 * pj)
      expect_lte(abs(g$primal[j] - pj) / pj, 1e-8)
      expect_lte(g$rel_gap[j], 1e-12)
      # strong convexity in X beta: ||X (b - b*)||^2 / 2 <= gap
      expect_lte(sum((X %*% (g$beta[, j] - cp$beta[, j]))^2) / 2, g$gap[j] + 1e-10 * pj)
      if (p > 50) expect_lte(eps * sum((g$beta[, j] - cp$beta[, j])^2) / 2, g$gap[j] + 1e-10 * pj)
    }
    expect_equal(fitted(g), unname(X %*% g$beta))
    expect_equal(residuals(g), y - unname(X %*% g$beta))
    expect_equal(predict(g, newdata = X[1:4, ]), unname(X[1:4, ] %*% g$beta))
    expect_equal(coef(g), unname(g$beta))
    expect_error(predict(g, newdata = X[, -1]), class = "scalebayes_error_input")
  }
  # sparse X, weights and penalty factors: the same solutions as dense X
  X <- matrix(rnorm(50 * 30), 50, 30) * (runif(1500) < 0.4)
  y <- rnorm(50)
  w <- rexp(50) + 0.3
  pf <- runif(29, 0.5, 2)
  D <- fused_lasso_1d(30)
  gd <- generalized_lasso(y, D, X = X, weights = w, penalty_factor = pf, control = tf_control(tol = 1e-12))
  gs <- generalized_lasso(y, D, X = Matrix::Matrix(X, sparse = TRUE), weights = w, penalty_factor = pf,
                          control = tf_control(tol = 1e-12))
  expect_equal(gs$lambda, gd$lambda)
  expect_equal(gs$beta, gd$beta, tolerance = 1e-6)
  pth <- generalized_lasso(y, D, X = X, weights = w, penalty_factor = pf, path = TRUE)
  l <- gd$lambda[c(5, 15)]
  cp <- coef(pth, lambda = l)
  objw <- function(b, l) sum(w * (y - X %*% b)^2) / 2 + l * sum(pf * abs(as.matrix(D %*% b)))
  for (j in 1:2) expect_lte(abs(objw(gd$beta[, 5 + 10 * (j - 1)], l[j]) - objw(cp$beta[, j], l[j])) / objw(cp$beta[, j], l[j]), 1e-8)
  expect_equal(gd$df[c(5, 15)], cp$df)
  expect_lte(max(gd$rel_gap), 1e-12)
})

test_that("a grid with a non-unique dual: the primal path equals genlasso's, our dual is certified", {
  skip_if_not_installed("genlasso")
  # On 2-D grids the boundary set can hold cycles of edges, so the dual solution is not unique and two dual
  # paths may take different, equally valid, boundary sets (e.g. genlasso here takes a hit and a leave at the
  # same lambda, knots 36-37, that this path does not). What is well-defined is the primal path (strictly convex
  # problem): it must agree everywhere, and each dual must certify it. Measured (design note): primal difference
  # 1e-13, our relative gap <= 2.5e-13, genlasso's 3e-16.
  d <- 8
  set.seed(2)
  y <- as.numeric(outer(1:d, 1:d, function(i, j) (i > d / 2) + (j > d / 3))) + rnorm(d * d, sd = 0.5)
  D <- fused_lasso_2d(d, d)
  s <- generalized_lasso(y, D, path = TRUE)
  g <- genlasso::fusedlasso2d(y, dim1 = d, dim2 = d)
  # identical dual paths up to genlasso's first zero-length step (two knots at one lambda)
  K <- length(g$lambda)
  z <- which(abs(g$lambda[-K] - g$lambda[-1]) <= 1e-9 * g$lambda[-1])[1]
  expect_false(is.na(z))  # the case this test is about
  expect_lt(max(abs(s$lambda[1:(z - 1)] - g$lambda[1:(z - 1)]) / g$lambda[1:(z - 1)]), 1e-8)
  expect_equal(as.numeric(s$df[1:(z - 1)]), as.numeric(g$df[1:(z - 1)]))
  # the primal at every knot of either path and at the midpoints between them
  l <- sort(unique(c(s$lambda, g$lambda)), decreasing = TRUE)
  l <- sort(c(l, (l[-1] + l[-length(l)]) / 2), decreasing = TRUE)
  cs <- coef(s, lambda = l, type = "both")
  cg <- coef(g, lambda = l)
  expect_lt(max(abs(cs$beta - cg$beta)), 1e-9 * max(abs(y)))
  Db <- as.matrix(D %*% cs$beta)
  P <- 0.5 * colSums((y - cs$beta)^2) + l * colSums(abs(Db))
  expect_lt(max((l * colSums(abs(Db)) - colSums(cs$u * Db)) / P), 1e-10)  # duality gap, relative
  expect_lt(max(apply(abs(cs$u), 2, max) / l), 1 + 1e-12)                  # dual feasibility
})

test_that("k = 3 on strongly uneven x: knots agree with genlasso to the accuracy D's conditioning allows", {
  skip_if_not_installed("genlasso")
  # x uniform draws: kappa(D) ~ 2e7. Against an extended-precision (long double) reference path
  # (bench/genlasso_path_precision.R) both double-precision solvers err by at most 2e-14 kappa(D) relative
  # (here: scalebayes 1.1e-7, genlasso 3.9e-7), so they can differ by 4e-14 kappa = 180 eps kappa; events and df
  # must still be the same.
  set.seed(11)
  n <- 60
  x <- sort(runif(n, 0, n))
  y <- sin(x / 8) + rnorm(n, sd = 0.3)
  s <- trend_filter(y, x, k = 3, path = TRUE)
  g <- genlasso::trendfilter(y, pos = x, ord = 3)
  kap <- kappa(as.matrix(trend_filter_matrix(n, 3, x)), exact = TRUE)
  expect_gt(kap, 1e6)
  expect_equal(length(s$lambda), length(g$lambda))
  expect_lt(max(abs(s$lambda - g$lambda) / g$lambda), 200 * .Machine$double.eps * kap)
  expect_equal(as.logical(s$hit), as.logical(g$hit))
  expect_equal(as.numeric(s$df), as.numeric(g$df))
})

test_that("X with weights, penalty_factor and a sparse X: the exact change of variables", {
  skip_if_not_installed("genlasso")
  set.seed(18)
  X <- matrix(rnorm(50 * 20), 50, 20)
  y <- as.numeric(X %*% rep(c(0, 1), each = 10) + rnorm(50))
  w <- rexp(50) + 0.3
  D <- fused_lasso_1d(20)
  pf <- runif(19, 0.5, 2)
  fit <- generalized_lasso(y, D, X = X, weights = w, penalty_factor = pf, path = TRUE)
  g <- genlasso::genlasso(y * sqrt(w), X * sqrt(w), as.matrix(D) * pf)
  expect_equal(length(fit$lambda), length(g$lambda))
  expect_lt(max(abs(fit$lambda - g$lambda) / g$lambda), 1e-8)
  expect_lt(max(abs(fit$beta - g$beta)) / max(abs(g$beta)), 1e-8)
  expect_equal(as.numeric(fit$df), as.numeric(g$df))
  expect_equal(fitted(fit), unname(X %*% fit$beta))
  expect_equal(residuals(fit, lambda = fit$lambda[4]), y - X %*% fit$beta[, 4], ignore_attr = TRUE)
  # KKT of the weighted problem at a knot: X'W(y - X beta) = D' diag(pf) u
  b <- fit$beta[, 8]
  lhs <- crossprod(X, w * (y - X %*% b))
  expect_lt(max(abs(lhs - crossprod(as.matrix(D) * pf, fit$u[, 8]))), 1e-8 * max(abs(lhs)) + 1e-10)
  fs <- generalized_lasso(y, D, X = Matrix::Matrix(X, sparse = TRUE), weights = w, penalty_factor = pf, path = TRUE)
  expect_equal(fs$lambda, fit$lambda)
  expect_error(generalized_lasso(y, D, X = X, weights = w[-1], path = TRUE), class = "scalebayes_error_input")
  Xna <- X
  Xna[3, 2] <- NA
  e <- tryCatch(generalized_lasso(y, D, X = Xna, path = TRUE), error = identity)
  expect_s3_class(e, "scalebayes_error_input")
  expect_match(conditionMessage(e), "X")
  expect_s3_class(generalized_lasso(y, D, X = X, path = TRUE, quiet = FALSE), "sb_genlasso_path")
  expect_s3_class(trend_filter(y, k = 1, path = TRUE, quiet = FALSE), "sb_genlasso_path")
})
