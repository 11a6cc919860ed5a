# Sparse design matrices end to end (issue 59, item 2): a Matrix::dgCMatrix x goes to the coordinate-descent
# engine as compressed columns with the standardization implicit (inst/include/scalebayes/cd/design.hpp).
# Checked: dense and sparse x give the same solutions and the same WBB draws; glmnet on the same sparse x at
# thresh = 1e-14 (objective gap and KKT residual <= 1e-8 relative); 1 vs 2 threads; a 1e5 x 1e5 design with 1e6
# non-zeros fits without densifying; classed errors.

sparse_sim <- function(n, p, density, family = "gaussian", seed = 1) {
  set.seed(seed)
  x <- Matrix::rsparsematrix(n, p, density, rand.x = function(k) stats::rnorm(k, 1, 1))
  b <- c(2, -1.5, 1, rep(0, p - 3))
  eta <- drop(as.matrix(x %*% b))
  y <- if (family == "gaussian") eta + stats::rnorm(n) else stats::rbinom(n, 1, stats::plogis(eta - mean(eta)))
  list(x = x, y = y)
}

# The objective of weighted_lasso() on the original scale (sum-scale lambda, penalty on b_j * sc_j) and its largest
# KKT violation relative to lambda (sc: the standardization scale, 1 for standardize = FALSE).
sparse_objective <- function(x, y, w, co, lam, pf, family, sc) {
  eta <- co[1] + drop(as.matrix(x %*% co[-1]))
  loss <- if (family == "gaussian") 0.5 * sum(w * (y - eta)^2) else sum(w * (log1p(exp(eta)) - y * eta))
  loss + lam * sum(pf * abs(co[-1]) * sc)
}
sparse_kkt <- function(x, y, w, co, lam, pf, family, sc) {
  eta <- co[1] + drop(as.matrix(x %*% co[-1]))
  mu <- if (family == "gaussian") eta else stats::plogis(eta)
  r <- w * (y - mu)
  g <- drop(as.matrix(Matrix::crossprod(x, r))) / sc  # gradient on the standardized scale (sum(r) = 0 at the optimum)
  b <- co[-1]
  v <- ifelse(b == 0, pmax(0, abs(g) - lam * pf), abs(g - lam * pf * sign(b)))
  max(c(v, abs(sum(r)))) / lam
}

# a weighted-lasso solution cf against glmnet's cg at thresh = 1e-14: objective gap and KKT residual <= 1e-8
# (relative), the issue's bounds
expect_glmnet_optimum <- function(d, fam, w, pf, lam, cf, cg) {
  go <- sparse_objective(d$x, d$y, w, cg, lam, pf, fam, 1)
  fo <- sparse_objective(d$x, d$y, w, cf, lam, pf, fam, 1)
  expect_lte(abs(fo - go) / abs(go), 1e-8)
  expect_lte(sparse_kkt(d$x, d$y, w, cf, lam, pf, fam, 1), 1e-8)
}

test_that("dense and sparse x give the same weighted-lasso path, CV curve and predictions (gaussian, binomial, poisson)", {
  skip_if_not_installed("Matrix")
  for (fam in c("gaussian", "binomial")) {
    d <- sparse_sim(200, 40, 0.15, fam)
    xd <- as.matrix(d$x)
    w <- seq(0.5, 2, length.out = 200)
    for (std in c(TRUE, FALSE)) {
      fs <- weighted_lasso(d$x, d$y, family = fam, weights = w, standardize = std, nlambda = 15)
      fd <- weighted_lasso(xd, d$y, family = fam, weights = w, standardize = std, nlambda = 15)
      expect_equal(fs$lambda, fd$lambda, tolerance = 1e-12)
      expect_lt(max(abs(coef(fs) - coef(fd))), 1e-10)
      expect_lt(max(fs$kkt), 1e-8)
    }
    # no intercept, offset and box limits go through the sparse engine as well
    off <- seq(-0.2, 0.2, length.out = 200)
    fs <- weighted_lasso(d$x, d$y, family = fam, intercept = FALSE, offset = off, lower_limits = -1, nlambda = 8)
    fd <- weighted_lasso(xd, d$y, family = fam, intercept = FALSE, offset = off, lower_limits = -1, nlambda = 8)
    expect_lt(max(abs(coef(fs) - coef(fd))), 1e-10)
    # predict(newx = sparse) is predict(newx = dense), for sparse and dense fits
    expect_equal(predict(fs, newx = d$x[1:7, ], newoffset = off[1:7]), predict(fd, newx = xd[1:7, ], newoffset = off[1:7]),
                 tolerance = 1e-10)
    expect_equal(predict(fd, newx = d$x[1:7, ], newoffset = off[1:7], type = "link"),
                 predict(fd, newx = xd[1:7, ], newoffset = off[1:7], type = "link"), tolerance = 1e-12)
    cs <- cv_weighted_lasso(d$x, d$y, family = fam, seed = 4, nlambda = 12, quiet = TRUE)
    cd <- cv_weighted_lasso(xd, d$y, family = fam, seed = 4, nlambda = 12, quiet = TRUE)
    expect_equal(cs$cvm, cd$cvm, tolerance = 1e-10)
    expect_identical(cs$index_min, cd$index_min)
    expect_equal(predict(cs, d$x[1:3, ], s = "lambda.min"), predict(cd, xd[1:3, ], s = "lambda.min"), tolerance = 1e-10)
  }
  set.seed(9)
  x <- Matrix::rsparsematrix(150, 20, 0.2)
  y <- stats::rpois(150, exp(0.5 + as.matrix(x[, 1:2]) %*% c(0.5, -0.5)))
  ps <- weighted_lasso(x, y, family = "poisson", nlambda = 10)
  pd <- weighted_lasso(as.matrix(x), y, family = "poisson", nlambda = 10)
  expect_lt(max(abs(coef(ps) - coef(pd))), 1e-10)
})

test_that("other sparse classes are coerced to dgCMatrix; the formula interface stays dense", {
  skip_if_not_installed("Matrix")
  d <- sparse_sim(100, 12, 0.3)
  ref <- coef(weighted_lasso(d$x, d$y, lambda = 20))
  rx <- methods::as(d$x, "RsparseMatrix")
  tx <- methods::as(d$x, "TsparseMatrix")
  expect_equal(coef(weighted_lasso(rx, d$y, lambda = 20)), ref, tolerance = 1e-13)
  expect_equal(coef(weighted_lasso(tx, d$y, lambda = 20)), ref, tolerance = 1e-13)
  lx <- d$x != 0  # a logical sparse matrix: 0/1 columns
  expect_equal(unname(coef(weighted_lasso(lx, d$y, lambda = 20))),
               unname(coef(weighted_lasso(as.matrix(lx) * 1, d$y, lambda = 20))), tolerance = 1e-10)
})

test_that("sparse x agrees with glmnet on the same sparse x at thresh = 1e-14: objective gap and KKT <= 1e-8", {
  skip_if_not_installed("glmnet")
  skip_if_not_installed("Matrix")
  for (fam in c("gaussian", "binomial")) {
    d <- sparse_sim(300, 60, 0.05, fam, seed = 21)
    n <- 300; p <- 60
    sc <- scalebayes:::sparse_col_moments(d$x)$sd
    # unit weights, standardize = TRUE: weighted_lasso(lambda = n lg) is glmnet(lambda = lg, standardize = TRUE)
    for (lg in c(0.1, 0.02)) {
      lam <- n * lg
      f <- weighted_lasso(d$x, d$y, family = fam, lambda = lam)
      g <- glmnet::glmnet(d$x, d$y, family = fam, lambda = lg, standardize = TRUE, thresh = 1e-14, maxit = 1e7)
      cf <- as.numeric(coef(f)); cg <- as.numeric(stats::coef(g))
      one <- rep(1, n); pf <- rep(1, p)
      fo <- sparse_objective(d$x, d$y, one, cf, lam, pf, fam, sc)
      go <- sparse_objective(d$x, d$y, one, cg, lam, pf, fam, sc)
      expect_lte(abs(fo - go) / abs(go), 1e-8)
      expect_lte(sparse_kkt(d$x, d$y, one, cf, lam, pf, fam, sc), 1e-8)
    }
    # observation and penalty weights, standardize = FALSE: glmnet at glmnet_lambda()
    w <- seq(0.2, 3, length.out = n)
    pf <- rep(c(1, 0.5, 2), length.out = p)
    lam <- 0.05 * sum(w)
    f <- weighted_lasso(d$x, d$y, family = fam, weights = w, penalty_factor = pf, lambda = lam, standardize = FALSE)
    g <- glmnet::glmnet(d$x, d$y, family = fam, weights = w, penalty.factor = pf, standardize = FALSE,
                        lambda = glmnet_lambda(lam, w, pf), thresh = 1e-14, maxit = 1e7)
    expect_glmnet_optimum(d, fam, w, pf, lam, as.numeric(coef(f)), as.numeric(stats::coef(g)))
  }
})

test_that("WBB draws: sparse x gives the draws of dense x for the same seed, and 1 and 2 threads the same draws", {
  skip_if_not_installed("Matrix")
  for (fam in c("gaussian", "binomial")) {
    d <- sparse_sim(150, 30, 0.1, fam, seed = 5)
    xd <- as.matrix(d$x)
    ws <- wbb(d$x, d$y, family = fam, lambda = 8, draws = 40, seed = 11, threads = 1, quiet = TRUE)
    wd <- wbb(xd, d$y, family = fam, lambda = 8, draws = 40, seed = 11, threads = 1, quiet = TRUE)
    expect_lt(max(abs(as.matrix(ws) - as.matrix(wd))), 1e-10)
    w2 <- wbb(d$x, d$y, family = fam, lambda = 8, draws = 40, seed = 11, threads = 2, quiet = TRUE)
    expect_identical(as.matrix(ws), as.matrix(w2))
    # lambda by CV on the sparse design, prior weights "separate", observation weights
    ow <- rep(c(1, 2), 75)
    cs <- wbb(d$x, d$y, family = fam, weights = ow, prior_weights = "separate", draws = 10, seed = 2, quiet = TRUE)
    cd <- wbb(xd, d$y, family = fam, weights = ow, prior_weights = "separate", draws = 10, seed = 2, quiet = TRUE)
    expect_lt(max(abs(as.matrix(cs) - as.matrix(cd))), 1e-10)
    # predictions of a sparse-x fit at sparse new inputs are those at the dense ones
    expect_equal(predict(ws, newx = d$x[1:5, ]), predict(wd, newx = xd[1:5, ]), tolerance = 1e-10)
  }
})

test_that("a 1e5 x 1e5 design with 1e6 non-zeros fits a short path without a dense copy (memory bound stated)", {
  skip_if_not_installed("Matrix")
  skip_on_cran()
  set.seed(3)
  n <- 1e5; p <- 1e5; nnz <- 1e6
  x <- Matrix::sparseMatrix(i = sample.int(n, nnz, replace = TRUE), j = sample.int(p, nnz, replace = TRUE),
                            x = stats::rnorm(nnz), dims = c(n, p), repr = "C")
  y <- drop(as.matrix(x[, 1:5] %*% c(3, -3, 2, -2, 1))) + stats::rnorm(n)
  xsize <- as.numeric(utils::object.size(x))  # about 12 MB; dense it would be 80 GB
  vm <- function() {  # the process's peak resident memory (Linux), bytes
    s <- tryCatch(readLines("/proc/self/status"), error = function(e) character())
    v <- grep("^VmHWM:", s, value = TRUE)
    if (length(v)) as.numeric(gsub("[^0-9]", "", v)) * 1024 else NA_real_
  }
  gc(reset = TRUE)
  before <- sum(gc()[, 2])  # MB in use by R now
  hwm0 <- vm()
  # (the empty columns of the random design are constant: the classed warning says so)
  fit <- withCallingHandlers(weighted_lasso(x, y, nlambda = 6, lambda_min_ratio = 0.3),
                             scalebayes_warning_constant_column = function(w) invokeRestart("muffleWarning"))
  peak <- sum(gc()[, 6])  # R's peak MB since the reset ("max used")
  hwm1 <- vm()
  expect_equal(dim(coef(fit)), c(p + 1, 6))
  expect_gte(sum(coef(fit)[2:6, 6] != 0), 3)  # most true columns found (each has about 10 non-zeros)
  expect_lt(max(fit$kkt), 1e-8)
  # Bound: R's heap grows by at most 40 times the sparse design (about 500 MB; the dense copy would be 80 GB),
  # and the whole process (engine included) by at most 1 GB
  expect_lt((peak - before) * 2^20, 40 * xsize)
  if (is.finite(hwm0) && is.finite(hwm1)) expect_lt(hwm1 - hwm0, 2^30)
  # a few WBB draws at this size (common prior weight: with separate Exp(1) prior weights a draw's support holds
  # the thousands of columns whose weight is near 0, and the working-set Gram matrix grows with its square)
  wb <- withCallingHandlers(wbb(x, y, lambda = fit$lambda[4], draws = 2, seed = 1, threads = 2, quiet = TRUE,
                                keep_draws = 1:6, prior_weights = "common"),
                            scalebayes_warning_constant_column = function(w) invokeRestart("muffleWarning"))
  expect_equal(dim(as.matrix(wb)), c(2L, 6L))
  if (is.finite(hwm0)) expect_lt(vm() - hwm0, 2^30)
})

test_that("bad sparse input gets classed errors naming the argument", {
  skip_if_not_installed("Matrix")
  d <- sparse_sim(60, 10, 0.3)
  xn <- d$x
  xn@x[3] <- NA
  expect_error(weighted_lasso(xn, d$y), class = "scalebayes_error_input", regexp = "finite")
  expect_error(wbb(xn, d$y, lambda = 1, draws = 2), class = "scalebayes_error_input", regexp = "finite")
  xi <- d$x
  xi@x[1] <- Inf
  expect_error(cv_weighted_lasso(xi, d$y), class = "scalebayes_error_input", regexp = "x")
  expect_error(weighted_lasso(d$x, d$y[-1]), class = "scalebayes_error_input", regexp = "one value per row")
  expect_error(weighted_lasso(d$x[1, , drop = FALSE], d$y[1]), class = "scalebayes_error_input", regexp = "at least 2 rows")
  expect_error(weighted_lasso(d$x[, 0], d$y), class = "scalebayes_error_input", regexp = "column")
  fit <- weighted_lasso(d$x, d$y, lambda = 5)
  expect_error(predict(fit, newx = d$x[1:3, 1:9]), class = "scalebayes_error_input", regexp = "10 columns")
  expect_error(weighted_lasso(d$x, factor(rep(1:3, 20)), family = "multinomial"), class = "scalebayes_error_input",
               regexp = "sparse")
})

# The naive (residual-update) mode of the solver (cd/solver.hpp cd_loop_naive(), Control::naive_from): used for
# sparse working sets from 64 columns on, and for dense ones beyond 2048. The internal option
# scalebayes.cd_naive_from forces it from a working-set size (0: always; a huge value: never), so that both sides
# of the switch are checked on the same problem.
with_naive_from <- function(nf, expr) {
  old <- options(scalebayes.cd_naive_from = nf)
  on.exit(options(old))
  expr
}

test_that("naive updates: both modes agree with glmnet at thresh = 1e-14 on a large working set (objective, KKT)", {
  skip_if_not_installed("glmnet")
  skip_if_not_installed("Matrix")
  n <- 400; p <- 300
  for (fam in c("gaussian", "binomial")) {
    d <- sparse_sim(n, p, 0.03, fam, seed = 31)
    set.seed(4)
    w <- stats::rexp(n); pf <- stats::rexp(p)
    lam <- (if (fam == "gaussian") 0.02 else 0.004) * sum(w)
    g <- glmnet::glmnet(d$x, d$y, family = fam, weights = w, penalty.factor = pf, standardize = FALSE,
                        lambda = glmnet_lambda(lam, w, pf), thresh = 1e-14, maxit = 1e7)
    cg <- as.numeric(stats::coef(g))
    expect_gt(sum(cg[-1] != 0), 64)  # the working set is past the automatic switch
    for (nf in list(0L, 1000000L, NULL)) {
      f <- with_naive_from(nf, weighted_lasso(d$x, d$y, family = fam, weights = w, penalty_factor = pf, lambda = lam,
                                              standardize = FALSE))
      expect_glmnet_optimum(d, fam, w, pf, lam, as.numeric(coef(f)), cg)
    }
  }
})

test_that("naive updates: same draws as the Gram path, dense x as sparse x, 1 and 2 threads identical", {
  skip_if_not_installed("Matrix")
  for (fam in c("gaussian", "binomial")) {
    d <- sparse_sim(400, 300, 0.03, fam, seed = 32)
    xd <- as.matrix(d$x)
    run <- function(x, nf, threads = 1) {
      with_naive_from(nf, as.matrix(wbb(x, d$y, family = fam, lambda = 4, draws = 12, seed = 3, threads = threads,
                                        prior_weights = "separate", standardize = FALSE, quiet = TRUE)))
    }
    auto <- run(d$x, NULL)
    expect_gt(mean(rowSums(auto[, -1] != 0)), 64)  # supports past the switch: the automatic rule goes naive
    gram <- run(d$x, 1000000L)
    naive <- run(d$x, 0L)
    # both modes stop at a KKT violation <= 1e-10 lambda: the draws agree far below the posterior's spread
    expect_lt(max(abs(auto - gram)), 1e-9)
    expect_lt(max(abs(naive - gram)), 1e-9)
    # dense x on either path (the dense naive mode forced) gives the sparse draws
    expect_lt(max(abs(run(xd, 0L) - naive)), 1e-9)
    expect_lt(max(abs(run(xd, NULL) - gram)), 1e-9)
    expect_identical(run(d$x, NULL, threads = 2), auto)
    expect_identical(run(d$x, 0L, threads = 2), naive)
  }
})
