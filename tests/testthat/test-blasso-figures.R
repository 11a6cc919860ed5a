# Figures 1-2 of the WBB paper and blasso_compare().

test_that("Laplace posterior mean matches quadrature and stays finite in the tails", {
  for (lambda in c(0.1, 0.5, 1, 2, 5)) {
    for (y in c(-6, -2, -0.3, 0, 0.7, 3, 8)) {
      # quadrature on each side of the kink at 0
      q <- function(f) stats::integrate(f, -Inf, 0, rel.tol = 1e-12)$value + stats::integrate(f, 0, Inf, rel.tol = 1e-12)$value
      num <- q(function(t) t * exp(-(y - t)^2 / 2 - lambda * abs(t)))
      den <- q(function(t) exp(-(y - t)^2 / 2 - lambda * abs(t)))
      expect_equal(laplace_posterior_mean(y, lambda), num / den, tolerance = 1e-7)
    }
  }
  # far tails: the naive formula overflows (exp(lambda y)) or cancels; ours tends to y -/+ lambda
  expect_equal(laplace_posterior_mean(c(-60, 60), 2), c(-58, 58), tolerance = 1e-10)
  expect_equal(laplace_posterior_mean(1e4, 30), 1e4 - 30, tolerance = 1e-12)
  expect_true(all(is.finite(laplace_posterior_mean(seq(-1e3, 1e3, length.out = 101), 50))))
  # odd in y, zero at zero
  expect_equal(laplace_posterior_mean(-1.3, 0.7), -laplace_posterior_mean(1.3, 0.7))
  expect_equal(laplace_posterior_mean(0, 1), 0)
})

test_that("exact WBB mean for normal means matches Monte Carlo", {
  set.seed(3)
  y <- c(-3, -0.5, 0.2, 1, 4)
  d <- wbb_normal_means(y, lambda = 1, draws = 40000)
  # Monte-Carlo SE of each mean is sd / 200 (sd <= |y| + 1): 5 SE tolerance
  se <- apply(d, 2, stats::sd) / sqrt(nrow(d))
  expect_true(all(abs(colMeans(d) - wbb_normal_means_mean(y, 1)) < 5 * se))
  f1 <- wbb_figure1(draws = 0)
  expect_s3_class(f1, "sb_wbb_figure1")
  # WBB shrinks more than the posterior mean for moderate y (the paper's Figure 1 finding)
  s <- f1[f1$y > 0.5 & f1$y < 3, ]
  expect_true(all(s$wbb_mean < s$posterior_mean))
})

test_that("Figure 2 exact samplers: L1 and L0 posteriors for p = 2", {
  set.seed(2)
  n <- 40
  x <- matrix(rnorm(n * 2), n)
  y <- drop(x %*% c(0.3, 1.5) + rnorm(n))
  # L1: check the exact sampler against importance sampling on a grid (2-d quadrature of the mean)
  lam <- 3
  d <- scalebayes:::l1_posterior_p2(x, y, lam, 20000)
  g <- expand.grid(b1 = seq(-0.6, 1.2, length.out = 181), b2 = seq(0.8, 2.2, length.out = 181))
  lp <- apply(g, 1, function(b) -sum((y - x %*% b)^2) / 2 - lam * sum(abs(b)))
  w <- exp(lp - max(lp)); w <- w / sum(w)
  m <- c(sum(w * g$b1), sum(w * g$b2))
  se <- apply(d, 2, stats::sd) / sqrt(nrow(d))
  expect_true(all(abs(colMeans(d) - m) < 5 * se + 2e-3))  # + grid error
  # L0: model probabilities sum to 1; a huge penalty gives the null model, none gives the full model
  r0 <- scalebayes:::l0_posterior_p2(x, y, pen = 300, L = 10, draws = 100)
  expect_equal(sum(r0$model_prob), 1)
  expect_gt(r0$model_prob[["none"]], 0.99)
  r1 <- scalebayes:::l0_posterior_p2(x, y, pen = -300, L = 10, draws = 2000)
  expect_gt(r1$model_prob[["both"]], 0.99)
  # in the full model the draws follow N(beta_hat, (X'X)^{-1})
  bh <- drop(solve(crossprod(x), crossprod(x, y)))
  se1 <- sqrt(diag(solve(crossprod(x)))) / sqrt(2000)
  expect_true(all(abs(colMeans(r1$draws) - bh) < 5 * se1))
  # L0 inclusion check by direct integration for the one-variable models
  pen <- 2
  r <- scalebayes:::l0_posterior_p2(x, y, pen, L = 10, draws = 10)
  lm1 <- log(stats::integrate(function(b) sapply(b, function(bb) exp(-sum((y - x[, 1] * bb)^2) / 2 + sum(y^2) / 2 - 5)),
                              -10, 10, rel.tol = 1e-10)$value) + 5 - sum(y^2) / 2 - pen
  lm0 <- -sum(y^2) / 2
  expect_equal(r$model_prob[["beta1"]] / r$model_prob[["none"]], exp(lm1 - lm0), tolerance = 1e-6)
})

test_that("wbb_figure2 runs and has WBB spikes at zero", {
  f2 <- wbb_figure2(draws = 300, seed = 4)
  expect_s3_class(f2, "sb_wbb_figure2")
  expect_named(f2$draws, c("WBB", "L1 prior", "L0 prior (lambda)", "L0 prior (5 lambda)"))
  expect_equal(mean(f2$draws[["L1 prior"]][, 1] == 0), 0)
  expect_true(all(vapply(f2$model_prob, sum, 0) > 0.999))
})

test_that("blasso_compare: reproducible under chunking and threads, tidy output", {
  a <- blasso_compare(settings = "A(i)", p = 12, n = c("50", "p/2"), datasets = 4, draws = 50, burnin = 50,
                      seed = 9, quiet = TRUE, threads = 1)
  b <- blasso_compare(settings = "A(i)", p = 12, n = c("50", "p/2"), datasets = 4, draws = 50, burnin = 50,
                      seed = 9, quiet = TRUE, threads = 2, chunks = 3)
  pa <- attr(a, "per_dataset"); pb <- attr(b, "per_dataset")
  cols <- !grepl("seconds", names(pa))
  expect_identical(pa[, cols], pb[, cols])
  expect_s3_class(a, "sb_blasso_compare")
  expect_equal(nrow(a), 4L)  # 2 cells x 2 methods
  expect_true(all(a$coverage >= 0 & a$coverage <= 1))
  expect_true(all(a$mse_coef > 0 & is.finite(a$mse_pred)))
  expect_output(print(a), "Table 1")
  m <- blasso_compare(settings = "B", p = 12, n = "p/2", datasets = 2, draws = 30, burnin = 10, methods = "blasso",
                      blasso = "monomvn", seed = 1, quiet = TRUE)
  expect_equal(nrow(m), 1L)
  expect_true(is.finite(m$mse_coef) && m$lambda > 0)
  expect_output(print(m), "BLASSO")
  ab <- blasso_compare_combine(a, blasso_compare(settings = "A(i)", p = 12, n = c("50", "p/2"), datasets = 2,
                                                 draws = 50, burnin = 50, seed = 9, quiet = TRUE, first_dataset = 5))
  expect_equal(unique(ab$datasets), 6L)
  expect_error(blasso_compare_combine(a, a), class = "scalebayes_error")
  expect_error(blasso_compare(settings = "C"), class = "scalebayes_error")
  expect_error(blasso_compare(n = "100"), class = "scalebayes_error")
})

test_that("route = 'paper_code': coverage counts every true coefficient against every interval (p x p)", {
  lo <- c(0.5, -0.2, -0.1, 5)
  hi <- c(1.5, 0.2, 1.2, 6)
  beta <- c(1, 0, 0, 10)
  # interval 1 covers beta 1; 2 covers beta 2, 3; 3 covers beta 1, 2, 3; 4 covers none: 6 of 16 pairs
  expect_equal(scalebayes:::cpp_coverage_all_pairs(lo, hi, beta), 6 / 16)
  # the per-coefficient rule of the exact route would give 3 / 4 here
  expect_equal(mean(lo <= beta & beta <= hi), 3 / 4)
})

test_that("the glmnet default-path emulation matches glmnet itself", {
  skip_if_not_installed("glmnet")
  f <- scalebayes:::cpp_glmnet_path_coef
  set.seed(3)
  for (case in 1:3) {
    n <- c(50, 30, 30)[case]; p <- c(40, 60, 60)[case]
    x <- matrix(rnorm(n * p), n, p) %*% chol(0.1 * 0.8^abs(outer(1:p, 1:p, "-")))
    y <- drop(x[, 1:10] %*% rep(1, 10)) + rnorm(n, sd = c(0.5, 0.5, 0.01)[case])
    w <- rexp(n); pf <- rexp(p)
    g <- glmnet::glmnet(x, y, weights = w, penalty.factor = pf, intercept = FALSE, thresh = 1e-14)
    e <- f(x, y, w, pf, 1, numeric(0), 1e-16)
    expect_equal(length(e$lambda), length(g$lambda))  # same path end (incl. glmnet's early stop)
    expect_equal(e$lambda, g$lambda, tolerance = 1e-10)
    for (s in c(g$lambda[30] * 1.01, mean(g$lambda[60:61]), min(g$lambda) / 5, max(g$lambda) * 2)) {
      # inside the path: linear interpolation; beyond either end: the end's solution
      expect_equal(f(x, y, w, pf, s, numeric(0), 1e-16)$coef, as.numeric(stats::coef(g, s = s))[-1],
                   tolerance = 1e-4)
    }
    fold <- sample(rep(1:3, length = n))
    cv <- glmnet::cv.glmnet(x, y, intercept = FALSE, foldid = fold, thresh = 1e-14)
    expect_equal(scalebayes:::cpp_glmnet_cv_lambda_min(x, y, fold, 1e-16), cv$lambda.min, tolerance = 0.1)
  }
  # glmnet's early stop (explained deviance > 0.999) ends this path before 100 values; ours at the same place
  set.seed(7)
  x <- matrix(rnorm(400), 40, 10)
  y <- drop(x[, 1:5] %*% rep(1, 5)) + rnorm(40, sd = 0.01)
  w <- rexp(40); pf <- rexp(10)
  g <- glmnet::glmnet(x, y, weights = w, penalty.factor = pf, intercept = FALSE, thresh = 1e-14)
  e <- f(x, y, w, pf, 1e-9, numeric(0), 1e-16)
  expect_lt(length(g$lambda), 100)
  expect_equal(length(e$lambda), length(g$lambda))
  expect_equal(e$coef, as.numeric(stats::coef(g, s = 1e-9))[-1], tolerance = 1e-6)
})

test_that("blasso_control(preset = 'monomvn') has monomvn's intercept and unit-L2-norm scaling", {
  ctl <- blasso_control(preset = "monomvn")
  expect_true(ctl$intercept)
  expect_true(ctl$standardize)
  expect_equal(ctl$scale, "l2")
  expect_equal(ctl$sigma2_prior, c(0, 0))
  expect_false(blasso_control(preset = "monomvn", intercept = FALSE)$intercept)  # explicit arguments win
  set.seed(2)
  n <- 30; p <- 5
  x <- matrix(rnorm(n * p, sd = 3), n, p) + 2
  y <- drop(x[, 1:2] %*% c(1, -1)) + rnorm(n)
  f1 <- blasso(x, y, lambda = "gamma", iter = 50, burnin = 20, seed = 4, quiet = TRUE,
               control = blasso_control(preset = "monomvn"))
  # monomvn's normalize = TRUE: centre, then divide by the L2 norm; the Gamma prior on lambda^2 refers to that
  # scale, so the same sampler on pre-scaled columns gives the same draws (coefficients rescaled)
  nrm <- sqrt(colSums(sweep(x, 2, colMeans(x))^2))
  f2 <- blasso(sweep(x, 2, nrm, "/"), y, lambda = "gamma", iter = 50, burnin = 20, seed = 4, quiet = TRUE,
               control = blasso_control(preset = "monomvn", standardize = FALSE))
  expect_equal(f1$draws[, -1], sweep(f2$draws[, -1], 2, nrm, "/"), tolerance = 1e-8)
  expect_equal(f1$lambda, f2$lambda, tolerance = 1e-8)
  expect_true("(Intercept)" %in% colnames(f1$draws))
  # unit-sd scaling differs (a different prior scale), so the rule is not a no-op
  f3 <- blasso(x, y, lambda = "gamma", iter = 50, burnin = 20, seed = 4, quiet = TRUE,
               control = blasso_control(preset = "monomvn", scale = "sd"))
  expect_false(isTRUE(all.equal(f1$lambda, f3$lambda)))
  expect_error(blasso_control(scale = "unit"), class = "scalebayes_error")
})

test_that("blasso_compare(route = 'paper_code') runs, is reproducible and validates route", {
  a <- blasso_compare(settings = "A(i)", p = 12, n = "p/2", datasets = 3, draws = 30, seed = 2, quiet = TRUE,
                      threads = 1, route = "paper_code")
  b <- blasso_compare(settings = "A(i)", p = 12, n = "p/2", datasets = 3, draws = 30, seed = 2, quiet = TRUE,
                      threads = 2, route = "paper_code")
  cols <- !grepl("seconds", names(attr(a, "per_dataset")))
  expect_identical(attr(a, "per_dataset")[, cols], attr(b, "per_dataset")[, cols])
  expect_equal(attr(a, "config")$route, "paper_code")
  expect_equal(attr(a, "config")$blasso, "monomvn")
  expect_output(print(a), "paper.s code route")
  expect_true(all(is.finite(a$mse_coef) & a$coverage >= 0 & a$coverage <= 1))
  # the exact route gives different numbers on the same datasets
  e <- blasso_compare(settings = "A(i)", p = 12, n = "p/2", datasets = 3, draws = 30, seed = 2, quiet = TRUE)
  expect_false(isTRUE(all.equal(a$mse_coef, e$mse_coef)))
  expect_error(blasso_compare(route = "paper"), class = "scalebayes_error")
  expect_error(blasso_compare(route = "paper_code", blasso = "eb"), class = "scalebayes_error")
})
