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

# Exact P(beta_j = 0 | y) under the reversible-jump Bayesian lasso for p = 2 with centred orthogonal columns:
# y = mu + X beta + e, flat mu, pi(sigma^2) = 1/sigma^2, beta_j | sigma^2 ~ Laplace(rate lambda / sigma) when
# active, every subset equally likely; lambda fixed, or lambda^2 ~ Gamma(shape, rate) (`gamma`). For fixed
# sigma^2 the beta integrals factorize (closed form with normal CDFs); sigma^2 (and lambda^2) by quadrature.
rj_exact_p0 <- function(x, y, lambda = NULL, gamma = NULL) {
  yc <- y - mean(y); n <- length(y)
  d <- colSums(x^2); bh <- drop(crossprod(x, yc)) / d
  stopifnot(abs(crossprod(x)[1, 2]) < 1e-10, abs(colMeans(x)) < 1e-10)
  Q <- sum(yc^2) - sum(d * bh^2)
  logI <- function(s2, lam, j) {  # log of int Laplace(b | lam / sigma) exp(-d_j (b - bh_j)^2 / (2 s2)) db
    a <- lam / sqrt(s2); v <- s2 / d[j]; sv <- sqrt(v)
    l1 <- -a * bh[j] + stats::pnorm((bh[j] - a * v) / sv, log.p = TRUE)
    l2 <- a * bh[j] + stats::pnorm((-bh[j] - a * v) / sv, log.p = TRUE)
    m <- pmax(l1, l2)
    log(a / 2) + 0.5 * log(2 * pi * v) + a^2 * v / 2 + m + log(exp(l1 - m) + exp(l2 - m))
  }
  models <- list(c(FALSE, FALSE), c(TRUE, FALSE), c(FALSE, TRUE), c(TRUE, TRUE))
  lg <- function(t, g, lam) {  # log integrand in t = log(sigma^2) (the 1/sigma^2 prior cancels the Jacobian)
    s2 <- exp(t)
    out <- -(n - 1) / 2 * t - Q / (2 * s2)
    for (j in 1:2) out <- out + if (g[j]) logI(s2, lam, j) else -d[j] * bh[j]^2 / (2 * s2)
    out
  }
  tr <- log(Q / n) + c(-8, 8)
  c0 <- -(n - 1) / 2 * log(Q / n) - n / 2  # about the peak, keeps exp() in range
  in_s2 <- function(g, lam) {
    stats::integrate(function(t) exp(lg(t, g, lam) - c0), tr[1], tr[2], rel.tol = 1e-10, subdivisions = 1000L)$value
  }
  m <- vapply(models, function(g) {
    if (!is.null(lambda) || !any(g)) return(in_s2(g, if (is.null(lambda)) 1 else lambda))
    f <- function(u) vapply(u, function(uu) {  # u = log(lambda^2), Gamma(shape, rate) prior on lambda^2
      in_s2(g, exp(uu / 2)) * exp(gamma[1] * log(gamma[2]) - lgamma(gamma[1]) + gamma[1] * uu - gamma[2] * exp(uu))
    }, 0)
    stats::integrate(f, -25, log(200 / gamma[2]), rel.tol = 1e-8, subdivisions = 1000L)$value
  }, 0)
  w <- m / sum(m)
  c(w[1] + w[3], w[1] + w[2])
}

test_that("reversible jump: P(beta_j = 0 | y) matches the exact model posterior (p = 2, orthogonal design)", {
  set.seed(11)
  n <- 30
  z <- scale(matrix(rnorm(n * 2), n), scale = FALSE)
  x <- qr.Q(qr(z)) * sqrt(n) / 3
  colnames(x) <- c("a", "b")
  y <- drop(5 + x %*% c(0.25, 0.6) + rnorm(n))
  # both coefficients are near the decision boundary: P(0) in (0.5, 0.72) for all three priors, and the
  # three exact answers differ by 0.06 to 0.18 (20 to 60 Monte-Carlo SE), so a wrong prior would fail
  cases <- list(list(lambda = 1, ctl = blasso_control(rj = TRUE, diagnostics = FALSE)),
                list(lambda = "gamma", gamma = c(2, 0.1),
                     ctl = blasso_control(rj = TRUE, gamma_prior = c(2, 0.1), diagnostics = FALSE)),
                list(lambda = "gamma", gamma = c(1, 1.78),
                     ctl = blasso_control(rj = TRUE, gamma_prior = c(1, 1.78), diagnostics = FALSE)))
  for (cs in cases) {
    exact <- if (is.numeric(cs$lambda)) rj_exact_p0(x, y, lambda = cs$lambda) else rj_exact_p0(x, y, gamma = cs$gamma)
    f <- blasso(x, y, lambda = cs$lambda, chains = 4, iterations = 10000, burnin = 500, seed = 3, quiet = TRUE,
                control = cs$ctl)
    ind <- f$draws[, c("a", "b")] == 0
    # Monte-Carlo SE from the effective sample size of the indicator (about 0.003 here)
    se <- apply(ind, 2, function(v) stats::sd(v) / sqrt(posterior::ess_mean(matrix(v, ncol = 4))))
    expect_true(all(se < 0.01))
    expect_true(all(abs(colMeans(ind) - exact) < 4 * se), label = paste(format(colMeans(ind)), collapse = " "))
  }
})

test_that("Figure 2, paper-code reading: the L0 term never enters the Metropolis ratio", {
  f2 <- wbb_figure2(draws = 500, seed = 5, reading = "paper_code", iterations = 4000)
  expect_s3_class(f2, "sb_wbb_figure2")
  expect_named(f2$draws, c("WBB", "L1 prior", "L0 prior (lambda)", "L0 prior (10 lambda)"))
  expect_equal(f2$lambda, 10)
  # measured: the L0 term differed between state and proposal in no step, and each L0 chain is the chain
  # with no prior term at all, to the last bit
  expect_equal(unname(f2$l0_term_changes), c(0, 0))
  expect_equal(unname(f2$flat_prior_max_diff), c(0, 0))
  expect_true(all(vapply(f2$draws[-1], function(d) all(d != 0), TRUE)))
  # ... so the L0 "posterior" is the flat-prior posterior N(beta_hat, (X'X)^{-1}): mean within 5 MC SE, with
  # the SE inflated by the chain's autocorrelation (ESS from posterior::ess_mean)
  x <- f2$data$x; y <- f2$data$y
  bh <- drop(solve(crossprod(x), crossprod(x, y)))
  sdv <- sqrt(diag(solve(crossprod(x))))
  for (nm in c("L0 prior (lambda)", "L0 prior (10 lambda)")) {
    d <- f2$draws[[nm]]
    se <- apply(d, 2, function(v) stats::sd(v) / sqrt(posterior::ess_mean(v)))
    expect_true(all(abs(colMeans(d) - bh) < 5 * se))
    expect_true(all(abs(apply(d, 2, stats::sd) / sdv - 1) < 0.5))
  }
  # the spike-and-slab reading on the same data does put mass at zero
  f2s <- wbb_figure2(draws = 300, seed = 5)
  expect_identical(f2s$data$y, f2$data$y)
  expect_gt(mean(f2s$draws[["L0 prior (lambda)"]][, 1] == 0), 0.5)
  expect_equal(f2s$reading, "spike_slab")
  # bad inputs
  expect_error(wbb_figure2(reading = "code"), class = "scalebayes_error_input")
  expect_error(wbb_figure2(draws = 100, reading = "paper_code", iterations = 50), class = "scalebayes_error_input")
  expect_error(wbb_figure2(kappa = c(1, -1)), class = "scalebayes_error_input")
  expect_error(wbb_figure2(kappa = "a"), class = "scalebayes_error_input")
  expect_error(wbb_figure2(iterations = 1), class = "scalebayes_error_input")
})

test_that("wbb_figure3: RJ arm with point masses, EB arm without, back on the scale of x", {
  set.seed(8)
  n <- 60
  x <- matrix(rnorm(n * 4), n) %*% diag(c(1, 5, 0.2, 1))
  colnames(x) <- c("a", "b", "c", "d")
  y <- drop(3 + x %*% c(1, 0, 0, -1) + rnorm(n))
  f3 <- wbb_figure3(x, y, draws = 400, chains = 2, burnin = 100, seed = 1)
  expect_s3_class(f3, "sb_wbb_figure3")
  expect_equal(dim(f3$p_zero), c(4L, 4L))
  expect_equal(f3$p_zero["BLASSO (EB)", ], c(a = 0, b = 0, c = 0, d = 0))
  rj <- f3$p_zero["BLASSO (RJ, monomvn defaults)", ]
  expect_true(all(rj[c("b", "c")] > 0.2) && all(rj[c("a", "d")] < 0.05))
  # coefficients back on the scale of x: the RJ posterior means are near least squares for the strong ones
  ls <- stats::coef(stats::lm(y ~ x))[-1]
  expect_equal(unname(colMeans(f3$draws[[4]])[c(1, 4)]), unname(ls[c(1, 4)]), tolerance = 0.15)
  # the RJ arm ran on unit-norm columns with an intercept and monomvn's thinning
  expect_equal(f3$fits$blasso_rj$settings$thin, 4L)
  expect_true("(Intercept)" %in% colnames(f3$fits$blasso_rj$draws))
  expect_equal(f3$column_norms, sqrt(colSums(sweep(x, 2, colMeans(x))^2)))
  # so rescaling a column of x rescales its RJ draws and nothing else changes (same seed, same draws)
  x2 <- x; x2[, "b"] <- 10 * x2[, "b"]
  f3b <- wbb_figure3(x2, y, draws = 400, chains = 2, burnin = 100, seed = 1)
  rj_a <- f3$draws[[4]]; rj_b <- f3b$draws[[4]]
  expect_equal(rj_b[, "b"] * 10, rj_a[, "b"], tolerance = 1e-8)
  expect_equal(rj_b[, c("a", "c", "d")], rj_a[, c("a", "c", "d")], tolerance = 1e-8)
  pdf(NULL); on.exit(grDevices::dev.off(), add = TRUE)
  expect_invisible(plot(f3, pars = c("a", "b"), ncol = 2))
  expect_error(plot(f3, pars = "zz"), class = "scalebayes_error_input")
  expect_error(wbb_figure3(x, y[-1]), class = "scalebayes_error")
  expect_error(wbb_figure3(cbind(x, 1), y), class = "scalebayes_error_input")
  expect_error(wbb_figure3(x, y, draws = 0), class = "scalebayes_error_input")
})

test_that("wbb_figure3(paper_code = TRUE): the script's glmnet draws, lambda times one Exp(1) in both schemes", {
  skip_if_not_installed("glmnet")
  set.seed(8)
  n <- 60
  x <- matrix(rnorm(n * 4), n) %*% diag(c(1, 5, 0.2, 1))
  colnames(x) <- c("a", "b", "c", "d")
  y <- drop(3 + x %*% c(1, 0, 0, -1) + rnorm(n))
  lam <- 0.3
  seed_before <- .Random.seed
  sep <- scalebayes:::wbb_figure3_paper_wbb(x, y, lam, draws = 4, seed = 5, separate = TRUE)
  com <- scalebayes:::wbb_figure3_paper_wbb(x, y, lam, draws = 4, seed = 5, separate = FALSE)
  expect_identical(.Random.seed, seed_before)  # the caller's random state is left alone
  # the weights: n data weights per draw, then one Exp(1) lambda multiplier per draw, then p prior weights
  set.seed(5)
  w <- matrix(rexp(n * 4), n, 4); w0 <- rexp(4); v <- matrix(rexp(4 * 4), 4, 4)
  expect_equal(sep$w0, w0)
  expect_equal(com$w0, w0)
  for (t in 1:4) {
    # glmnet as the script calls it (on scale(x); coefficients back to x's scale), converged tightly
    g_sep <- glmnet::glmnet(scale(x), y, lambda = w0[t] * lam, weights = w[, t], penalty.factor = v[t, ],
                            thresh = 1e-16)
    g_com <- glmnet::glmnet(scale(x), y, lambda = w0[t] * lam, weights = w[, t], thresh = 1e-16)
    expect_equal(unname(sep$draws[t, ]), unname(as.numeric(g_sep$beta) / apply(x, 2, stats::sd)), tolerance = 1e-5)
    expect_equal(unname(com$draws[t, ]), unname(as.numeric(g_com$beta) / apply(x, 2, stats::sd)), tolerance = 1e-5)
  }
  f3 <- wbb_figure3(x, y, draws = 200, chains = 2, burnin = 100, seed = 1, paper_code = TRUE)
  expect_equal(rownames(f3$p_zero)[5:6], c("WBB (common, paper code)", "WBB (separate, paper code)"))
  expect_equal(f3$paper_code$lambda_glmnet, f3$fits$wbb_separate$lambda / n)
  # the exact arms are those of the default call
  f0 <- wbb_figure3(x, y, draws = 200, chains = 2, burnin = 100, seed = 1)
  expect_identical(f3$draws[1:4], f0$draws)
  expect_null(f0$paper_code)
  expect_error(wbb_figure3(x, y, paper_code = NA), class = "scalebayes_error_input")
})

test_that("route = 'paper_code': coverage counts every true coefficient against every interval (p x p)", {
  lo <- c(0.5, -0.2, -0.1, 5)
  hi <- c(1.5, 0.2, 1.2, 6)
  beta <- c(1, 0, 0, 10)
  # interval 1 covers beta 1; 2 covers beta 2, 3; 3 covers beta 1, 2, 3; 4 covers none: 6 of 16 pairs
  expect_equal(cpp_coverage_all_pairs(lo, hi, beta), 6 / 16)
  # the per-coefficient rule of the exact route would give 3 / 4 here
  expect_equal(mean(lo <= beta & beta <= hi), 3 / 4)
})

test_that("the glmnet default-path emulation matches glmnet itself", {
  skip_if_not_installed("glmnet")
  f <- cpp_glmnet_path_coef
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
    expect_equal(cpp_glmnet_cv_lambda_min(x, y, fold, 1e-16), cv$lambda.min, tolerance = 0.1)
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
  f1 <- blasso(x, y, lambda = "gamma", iterations = 50, burnin = 20, seed = 4, quiet = TRUE,
               control = blasso_control(preset = "monomvn"))
  # monomvn's normalize = TRUE: centre, then divide by the L2 norm; the Gamma prior on lambda^2 refers to that
  # scale, so the same sampler on pre-scaled columns gives the same draws (coefficients rescaled)
  nrm <- sqrt(colSums(sweep(x, 2, colMeans(x))^2))
  f2 <- blasso(sweep(x, 2, nrm, "/"), y, lambda = "gamma", iterations = 50, burnin = 20, seed = 4, quiet = TRUE,
               control = blasso_control(preset = "monomvn", standardize = FALSE))
  expect_equal(f1$draws[, -1], sweep(f2$draws[, -1], 2, nrm, "/"), tolerance = 1e-8)
  expect_equal(f1$lambda, f2$lambda, tolerance = 1e-8)
  expect_true("(Intercept)" %in% colnames(f1$draws))
  # unit-sd scaling differs (a different prior scale), so the rule is not a no-op
  f3 <- blasso(x, y, lambda = "gamma", iterations = 50, burnin = 20, seed = 4, quiet = TRUE,
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
