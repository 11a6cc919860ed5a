# Inclusion probabilities of the SSGL prior for chains with held latents, and the warm-up's spike-side moves
# (R/sgmcmc_inclusion.R). The closed forms against direct computations; the end-to-end selection against the
# exact point-mass posterior of the same model.

ns <- asNamespace("scalebayes")

# log p(y | S) of a gaussian regression with a flat intercept, slab N(0, sigma^2 v1) on the standardized
# columns of S and p(sigma^2) ~ 1 / sigma^2, up to a constant common to every S (the selection bench's formula)
log_ml_direct <- function(x, y, S, v1) {
  xc <- scale(x, scale = FALSE)
  yc <- y - mean(y)
  n <- length(y)
  if (!any(S)) return(-(n - 1) / 2 * log(sum(yc^2)))
  X <- xc[, S, drop = FALSE]
  A <- crossprod(X) + diag(1 / v1, sum(S))
  R <- chol(A)
  b <- backsolve(R, forwardsolve(t(R), crossprod(X, yc)))
  rss <- sum(yc^2) - sum(crossprod(X, yc) * b)
  -0.5 * (2 * sum(log(diag(R))) + sum(S) * log(v1)) - (n - 1) / 2 * log(rss)
}

test_that("the Laplace-spike Bayes factor matches numerical integration", {
  for (case in list(c(m = 0.3, a = 400, s1 = 2, b = 0.01), c(m = -0.05, a = 900, s1 = 1, b = 0.02),
                    c(m = 0, a = 50, s1 = 10, b = 0.1), c(m = 1.2, a = 30, s1 = 0.5, b = 0.3))) {
    lik <- function(t) exp(-case[["a"]] / 2 * (t - case[["m"]])^2)
    z1 <- integrate(function(t) dnorm(t, 0, sqrt(case[["s1"]])) * lik(t), -Inf, Inf, rel.tol = 1e-10)$value
    lap <- function(t) exp(-abs(t) / case[["b"]]) / (2 * case[["b"]]) * lik(t)
    z0 <- integrate(lap, -Inf, 0, rel.tol = 1e-10)$value + integrate(lap, 0, Inf, rel.tol = 1e-10)$value
    expect_equal(ns$ssgl_log_bf(case[["m"]], case[["a"]], case[["s1"]], case[["b"]]), log(z1 / z0), tolerance = 1e-7)
  }
})

test_that("the gaussian one-flip probabilities equal the direct marginal-likelihood ratios", {
  set.seed(11)
  n <- 60; p <- 7
  x <- scale(matrix(rnorm(n * p), n, p) %*% chol(0.5^abs(outer(1:p, 1:p, "-"))))
  y <- drop(x %*% c(1, 0.5, 0.35, 0, 0, 0.2, 0)) + rnorm(n)
  v1 <- 10; delta <- 0.3
  data <- c(ns$sgmcmc_score_data(x, y, "gaussian", TRUE, rep(TRUE, p)), list(yty = sum(y^2), n = n))
  for (S in list(c(TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE), c(TRUE, TRUE, TRUE, FALSE, TRUE, TRUE, FALSE),
                 rep(FALSE, p))) {
    got <- ns$ssgl_slab_prob(rep(0, p + 1), data, c(TRUE, S), 1, delta, 0.01, v1)
    want <- vapply(seq_len(p), function(j) {
      lbf <- log_ml_direct(x, y, replace(S, j, TRUE), v1) - log_ml_direct(x, y, replace(S, j, FALSE), v1)
      plogis(qlogis(delta) + lbf)
    }, 1)
    expect_equal(got, want, tolerance = 1e-8)
  }
  # the residual scale of a model
  S <- c(TRUE, TRUE, FALSE, FALSE, FALSE, FALSE, FALSE)
  xc <- scale(x, scale = FALSE)[, S]
  b <- solve(crossprod(xc) + diag(1 / v1, 2), crossprod(xc, y - mean(y)))
  rss <- sum((y - mean(y))^2) - sum(crossprod(xc, y - mean(y)) * b)
  expect_equal(ns$ssgl_model_sigma(data, c(TRUE, S), v1), sqrt(rss / (n - 1)), tolerance = 1e-10)
})

test_that("the quadratic form (fixed likelihood sd, as for a GLM) matches a numerical integration over the coefficient", {
  set.seed(12)
  n <- 30; p <- 5
  x <- matrix(rnorm(n * p), n, p)
  y <- drop(x %*% c(0.8, 0, 0.3, 0, 0)) + rnorm(n, sd = 0.7)
  lik_var <- 0.49; sigma <- 0.8; v0 <- 0.05; v1 <- 4; delta <- 0.2
  slab_var <- sigma^2 * v1
  data <- ns$sgmcmc_score_data(x, y, "gaussian", FALSE, rep(TRUE, p))
  S <- c(TRUE, FALSE, FALSE, FALSE, FALSE)
  got <- ns$ssgl_slab_prob(rep(0, p), data, S, sigma, delta, v0, v1, lik_var = lik_var)
  # y | beta_j = t, S integrated: N(x_j t, lik_var I + slab_var X_S X_S'); the other coefficients at 0
  loglik_t <- function(j, t, Sj) {
    XS <- x[, Sj, drop = FALSE]
    Sig <- lik_var * diag(n) + slab_var * tcrossprod(XS)
    R <- chol(Sig)
    vapply(t, function(tt) {
      r <- backsolve(R, y - x[, j] * tt, transpose = TRUE)
      -sum(log(diag(R))) - sum(r^2) / 2
    }, 1)
  }
  for (j in 1:p) {
    Sj <- replace(S, j, FALSE)
    ref <- loglik_t(j, 0, Sj)
    f1 <- function(t) dnorm(t, 0, sqrt(slab_var)) * exp(loglik_t(j, t, Sj) - ref)
    f0 <- function(t) exp(-abs(t) / (sigma * v0)) / (2 * sigma * v0) * exp(loglik_t(j, t, Sj) - ref)
    z1 <- integrate(f1, -5, 5, rel.tol = 1e-10, subdivisions = 500L)$value
    z0 <- integrate(f0, -5, 0, rel.tol = 1e-10, subdivisions = 500L)$value + integrate(f0, 0, 5, rel.tol = 1e-10, subdivisions = 500L)$value
    expect_equal(got[j], plogis(qlogis(delta) + log(z1 / z0)), tolerance = 1e-6)
  }
})

test_that("the spike-side check moves a supported coefficient into the slab and a null out of it", {
  set.seed(13)
  n <- 80; p <- 6
  x <- scale(matrix(rnorm(n * p), n, p))
  y <- drop(x %*% c(1, 0, 0.6, 0, 0, 0)) + rnorm(n)
  v0 <- 0.2 / sqrt(n); v1 <- 10
  data <- c(ns$sgmcmc_score_data(x, y, "gaussian", TRUE, rep(TRUE, p)), list(yty = sum(y^2), n = n))
  # held: coefficient 3 (z about 5) in the spike, the null 5 in the slab
  rho <- c(NA, 1, 0, 0, 0, 1, 0)
  start <- matrix(c(mean(y), 1, 0, 0, 0, 0.4, 0), ncol = 2L, nrow = p + 1)
  start[, 2] <- start[, 2] + 0.01
  latent <- list(rho = rho, delta = 0.3, sigma = 1)
  out <- ns$sgmcmc_spike_side(start, latent, data, v0, v1, 0, 1e4, 1, p)
  expect_setequal(out$moves$coefficient, c(4L, 6L))
  expect_equal(out$moves$to[out$moves$coefficient == 4L], "slab")
  expect_equal(out$moves$to[out$moves$coefficient == 6L], "spike")
  expect_gt(out$latent$rho[4], 0.99)
  expect_lt(out$latent$rho[6], 0.01)
  expect_equal(unname(out$starts[6, ]), c(0, 0))
  # the state moved to the new model's mode (intercept and coefficients 1 and 3), the starts' spread kept
  S <- c(TRUE, TRUE, FALSE, TRUE, FALSE, FALSE, FALSE)
  z <- cbind(1, x)
  st <- rowMeans(start)
  st[6] <- 0
  off <- drop(z[, !S] %*% st[!S])  # the spike's coefficients where the state holds them
  mode <- solve(crossprod(z[, S]) + diag(c(1e-4, 1 / v1, 1 / v1)), crossprod(z[, S], y - off))
  expect_equal(unname(rowMeans(out$starts)[S]), drop(mode), tolerance = 1e-8)
  expect_equal(unname(out$starts[S, 2] - out$starts[S, 1]), rep(0.01, 3), tolerance = 1e-12)
  expect_equal(out$latent$sigma, ns$ssgl_model_sigma(data, S, v1))
  # delta moves with the sum of rho (eq. 15: denominator a + b + p - 2)
  expect_equal(out$latent$delta, 0.3 + sum(out$moves$rho - c(0, 1)[match(out$moves$to, c("slab", "spike"))]) / (1 + p + p - 2),
               tolerance = 1e-12)
  # nothing at odds: no move
  again <- ns$sgmcmc_spike_side(out$starts, out$latent, data, v0, v1, 0, 1e4, 1, p)
  expect_null(again$moves)
})

test_that("a logistic fit's inclusion probabilities separate a clear signal from a null", {
  set.seed(14)
  n <- 400
  x <- matrix(rnorm(n * 4), n, 4)
  y <- rbinom(n, 1, plogis(1.2 * x[, 1]))
  fit <- sgld_sa(x, y, family = "binomial", seed = 1, quiet = TRUE)
  expect_gt(fit$inclusion[[1]], 0.99)
  expect_lt(max(fit$inclusion[2:4]), 0.2)
  expect_true(all(fit$inclusion >= 0 & fit$inclusion <= 1))
})

test_that("p > n selection: a signal the SA left in the spike gets the exact posterior's inclusion", {
  skip_if_fast_tier()
  # Table 1's design with five signals (bench/sgmcmc_defaults.R selection_pn, seed 1): signal 3 has t = 4.9
  set.seed(1)
  n <- 100; p <- 1000
  S0 <- 0.6^abs(outer(1:p, 1:p, "-"))
  x <- matrix(rnorm(n * p), n, p) %*% chol(S0)
  y <- drop(x %*% c(3, 2, 1, 2, 3, rep(0, p - 5))) + rnorm(n, sd = sqrt(3))
  fit <- sgld_sa(x, y, seed = 1, quiet = TRUE)
  # the exact point-mass posterior of gamma_3 given the other four, at the fit's delta
  xs <- scale(x[, 1:5], scale = FALSE)
  xs <- sweep(xs, 2L, sqrt(colMeans(xs^2)), "/")
  delta <- mean(fit$latent$delta)
  lbf <- log_ml_direct(xs, y, rep(TRUE, 5), fit$settings$v1) - log_ml_direct(xs, y, c(TRUE, TRUE, FALSE, TRUE, TRUE), fit$settings$v1)
  exact <- plogis(qlogis(delta) + lbf)
  expect_gt(exact, 0.5)
  expect_equal(unname(fit$inclusion[3]), exact, tolerance = 0.02)
  expect_true(all(fit$inclusion[c(1, 2, 4, 5)] > 0.99))
  expect_lt(mean(fit$inclusion[-(1:5)]), 0.01)
  expect_true("V3" %in% fit$warmup$spike_side$coefficient)
  # and its draws are in the slab: the coefficient's posterior mean within 2 sd of its least-squares value
  ols <- stats::coef(stats::lm(y ~ x[, 1:5]))[4]
  expect_lt(abs(coef(fit)[[4]] - ols) / fit$coef_sd[[4]], 3)
})

test_that("gaussian inclusion probabilities: exact enumeration up to 12 coefficients, the Gibbs sampler above agrees with it", {
  set.seed(15)
  n <- 120; p <- 14
  x <- scale(matrix(rnorm(n * p), n, p) %*% chol(0.5^abs(outer(1:p, 1:p, "-"))))
  y <- drop(x %*% c(0.6, 0, 0.25, 0.25, rep(0, 8), -0.2, 0)) + rnorm(n)
  v1 <- 10; delta <- 0.2
  exact <- function(p_used) {
    M <- as.matrix(expand.grid(rep(list(c(FALSE, TRUE)), p_used)))
    lp <- apply(M, 1L, function(S) log_ml_direct(x[, seq_len(p_used)], y, S, v1) + sum(S) * log(delta) +
                  (p_used - sum(S)) * log1p(-delta))
    w <- exp(lp - max(lp))
    drop(crossprod(M, w / sum(w)))
  }
  gram_of <- function(p_used) {
    d <- c(ns$sgmcmc_score_data(x[, seq_len(p_used)], y, "gaussian", TRUE, rep(TRUE, p_used)),
           list(yty = sum(y^2), n = n))
    ns$ssgl_gram(d)
  }
  # 10 coefficients: enumerated
  expect_equal(ns$ssgl_model_inclusion(gram_of(10), rep(FALSE, 10), delta, v1), exact(10), tolerance = 1e-8)
  # 14: the collapsed Gibbs sampler (200 sweeps), from the empty model; its Monte-Carlo error measured over
  # seeds (sd about 0.005-0.02 for the correlated borderline ones)
  ex <- exact(14)
  runs <- sapply(1:4, function(s) ns$ssgl_model_inclusion(gram_of(14), rep(FALSE, 14), delta, v1, seed = s))
  se <- pmax(apply(runs, 1L, sd) / 2, 0.002)
  expect_true(all(abs(rowMeans(runs) - ex) < 5 * se), label = paste(round(rowMeans(runs) - ex, 3), collapse = " "))
  # the caller's random numbers are left alone
  set.seed(2); a <- runif(1); set.seed(2); ns$ssgl_model_inclusion(gram_of(14), rep(FALSE, 14), delta, v1); b <- runif(1)
  expect_identical(a, b)
})

test_that("diabetes with every default: the inclusion probabilities are the exact posterior's at the fit's delta", {
  data(diabetes, package = "scalebayes", envir = environment())
  x <- diabetes$x
  y <- diabetes$y
  f <- sgld_sa(x, y, seed = 1, quiet = TRUE)
  xs <- sweep(scale(x, scale = FALSE), 2L, sqrt(colMeans(scale(x, scale = FALSE)^2)), "/")
  delta <- mean(f$latent$delta)
  M <- as.matrix(expand.grid(rep(list(c(FALSE, TRUE)), ncol(x))))
  lp <- apply(M, 1L, function(S) log_ml_direct(xs, y, S, f$settings$v1) + sum(S) * log(delta) +
                (ncol(x) - sum(S)) * log1p(-delta))
  w <- exp(lp - max(lp))
  expect_equal(unname(f$inclusion), unname(drop(crossprod(M, w / sum(w)))), tolerance = 1e-6)
  # the chains hold the median-probability model: every coefficient above 1/2 in the slab
  expect_equal(sort(names(f$inclusion)[f$inclusion > 0.5]), sort(c("sex", "bmi", "map", "hdl", "ltg")))
  expect_setequal(f$warmup$spike_side$coefficient, c("sex", "hdl"))
  expect_output(print(f), "moved across the spike")
})
