# Control-variate gradients of a regression's SG-MCMC (Baker, Fearnhead, Fox & Nemeth 2019, "SGLD-CV";
# sgmcmc_step(gradient = )), on the sampler's scale:
#
#   1. a centre beta_hat: the mode of the log-likelihood plus a N(0, 1) ridge on the standardized slopes (the
#      intercept N(0, prior_var)) by Newton's method: on a stride subsample of at most 20,000 rows first, then
#      full-data steps until the step is below 1e-3 of a posterior sd (at most 6); the data are read in chunks
#      of rows, so no copy of the design is made. At large N the posterior sd is about 1 / sqrt(N), and a centre
#      within a small fraction of it is what the control variate needs (its variance grows with
#      ||beta - beta_hat||^2);
#   2. the engine computes the full gradient at the centre and each row's residual there once
#      (sgmcmc/glm.hpp, CvState), and every minibatch gradient is G_hat + (N / n) sum_B (g_i(beta) - g_i(beta_hat));
#   3. the warm-up's metric starts at the inverse Hessian at the centre (exact for a Gaussian likelihood, and
#      the Bernstein-von Mises covariance of a large-N GLM), its accuracy cap uses the control variate's measured
#      noise (sgmcmc_cv_noise()) in place of the plain minibatch's 1 + (N - n) / n, and its KSD scores use a
#      control-variate estimate from a fixed subsample (sgmcmc_cv_score_data()), so no warm-up step reads
#      every row per draw.
# Why: without control variates a minibatch of n of N rows needs a step about n / N times the full-data one for
# the same accuracy (measured: N = 1e5, p = 20, logistic, 50 rows: the warm-up's step 1e-4, 452,000 iterations,
# R-hat 3.4, 138 s); with them the whitened step stays near the full-data one at every N (bench/sgmcmc_scale.R).

# The mean of a regression's response at linear predictor eta, as the engine computes it (sgmcmc/glm.hpp:
# mean_of(); the Poisson log link clamped at eta = 40).
sgmcmc_mean_fun <- function(family) {
  switch(family, gaussian = identity, poisson = function(eta) exp(pmin(eta, 40)), stats::plogis)
}

# The rows of a chunked pass over N rows.
cv_chunks <- function(N, size = 65536L) {
  starts <- seq(1L, N, by = size)
  lapply(starts, function(s) s:min(N, s + size - 1L))
}

# Log-likelihood gradient and Hessian (of the negative log-likelihood) pieces over `rows` at b, on z = [1, x].
cv_pass <- function(xs, ys, family, intercept, b, rows, sigma2 = 1) {
  z <- xs[rows, , drop = FALSE]
  if (intercept) z <- cbind(1, z)
  eta <- drop(z %*% b)
  if (family == "gaussian") {
    r <- ys[rows] - eta
    w <- rep(1 / sigma2, length(rows))
    ll <- -0.5 * sum(r^2) / sigma2
  } else if (family == "poisson") {
    eta <- pmin(eta, 40)  # the engine's clamp (sgmcmc/glm.hpp: kPoissonEtaMax)
    mu <- exp(eta)
    r <- ys[rows] - mu
    w <- mu
    ll <- sum(ys[rows] * eta - mu)
    sigma2 <- 1
  } else {
    mu <- stats::plogis(eta)
    r <- ys[rows] - mu
    w <- mu * (1 - mu)
    ll <- sum(ys[rows] * eta - log1p(exp(-abs(eta))) - pmax(eta, 0))
    sigma2 <- 1
  }
  list(grad = drop(crossprod(z, r)) / sigma2, hess = crossprod(z * sqrt(w)), ll = ll, rss = sum(r^2))
}

# The control variates' centre: list(beta, hessian (of the negative log posterior of the ridge, full data;
# lik_hessian: the likelihood's part, at the centre),
# sigma (gaussian: the residual sd at the centre), passes (full-data passes), newton (iterations)).
sgmcmc_glm_mode <- function(xs, ys, family, intercept, prior_var, sub_rows = 20000L, max_full = 6L) {
  N <- nrow(xs)
  P <- ncol(xs) + intercept
  prec <- c(if (intercept) 1 / prior_var, rep(1, ncol(xs)))  # the ridge: N(0, 1) on the standardized slopes
  full <- cv_chunks(N)
  total <- function(b, chunks, sigma2 = 1) {
    parts <- lapply(chunks, function(r) cv_pass(xs, ys, family, intercept, b, r, sigma2))
    list(grad = Reduce(`+`, lapply(parts, `[[`, "grad")) - prec * b,
         hess = Reduce(`+`, lapply(parts, `[[`, "hess")) + diag(prec, P),
         rss = sum(vapply(parts, `[[`, 0, "rss")))
  }
  if (family == "gaussian") {
    t0 <- total(numeric(P), full)  # grad at 0 = z'y; hessian z'z + ridge: one pass gives the exact mode
    b <- drop(solve(t0$hess, t0$grad))
    res <- total(b, full)
    sigma <- sqrt(max(res$rss / max(1, N - P), 1e-12))
    h <- (res$hess - diag(prec, P)) / sigma^2 + diag(prec, P)
    return(list(beta = b, hessian = h, lik_hessian = h - diag(prec, P), sigma = sigma, passes = 2L, newton = 1L))
  }
  b <- c(if (intercept) { if (family == "poisson") log(max(mean(ys), 1e-4)) else stats::qlogis(min(max(mean(ys), 1e-4), 1 - 1e-4)) },
         numeric(ncol(xs)))
  newton <- 0L
  newton_step <- function(tt) tryCatch(drop(solve(tt$hess, tt$grad)), error = function(e) NULL)
  # Poisson: Newton's step on the log link can overshoot far from the mode (exp of a step that is too long), so
  # it is halved until the penalized log-likelihood does not fall (at most 30 times); logistic steps are taken whole
  step <- if (family != "poisson") newton_step else function(tt) {
    d <- newton_step(tt)
    if (is.null(d) || !all(is.finite(d))) return(d)
    obj <- function(bb) sum(vapply(tt$chunks, function(r) cv_pass(xs, ys, family, intercept, bb, r)$ll, 0)) * tt$f -
      0.5 * sum(prec * bb^2)
    o0 <- obj(tt$b)
    for (k in 1:30) {
      o1 <- obj(tt$b + d)
      if (is.finite(o1) && o1 >= o0 - 1e-10 * abs(o0)) break
      d <- d / 2
    }
    d
  }
  # a subsample first: every (N / sub_rows)-th row, its log-likelihood scaled up to N
  if (N > sub_rows) {
    sub <- list(seq(1L, N, by = ceiling(N / sub_rows)))
    f <- N / length(sub[[1]])
    for (it in 1:30) {
      tt <- total(b, sub)
      tt$b <- b
      tt$chunks <- sub
      tt$f <- f
      tt$grad <- (tt$grad + prec * b) * f - prec * b
      tt$hess <- (tt$hess - diag(prec, P)) * f + diag(prec, P)
      d <- step(tt)
      if (is.null(d) || !all(is.finite(d))) break
      b <- b + d
      newton <- newton + 1L
      if (sqrt(sum(d * drop(tt$hess %*% d))) < 1e-3) break
    }
  }
  passes <- 0L
  for (it in seq_len(max_full)) {
    tt <- total(b, full)
    tt$b <- b
    tt$chunks <- full
    tt$f <- 1
    passes <- passes + 1L
    d <- step(tt)
    if (is.null(d) || !all(is.finite(d))) break
    b <- b + d
    newton <- newton + 1L
    # the step in units of the posterior sd (the Newton decrement)
    if (sqrt(max(0, sum(d * tt$grad))) < 1e-3) break
  }
  list(beta = b, hessian = tt$hess, lik_hessian = tt$hess - diag(prec, P), sigma = NULL, passes = passes,
       newton = newton)
}

# The KSD scores of the warm-up (and of ksd() on the fit) with control variates: the binomial log-likelihood's
# gradient at draws b estimated as G_hat + (N / m) sum_S (g_i(b) - g_i(beta_hat)) over a fixed stride subsample S
# of m = max_rows rows (exact below that). Its error is the control variate's, about sqrt(P / m) of a whitened
# score's sd at draws a posterior sd from the centre (0.07 at P = 21, m = 4,000; the scores of the warm-up's
# pilots were 80 % of a 4.5 s call at N = 10,000 with every row). A gaussian's score is exact from the cross products
# (sgmcmc_score_data()), so that one is returned unchanged.
sgmcmc_cv_score_data <- function(xs, ys, family, intercept, sparse, center, max_rows = 4000L) {
  N <- nrow(xs)
  if (family == "gaussian" || N <= max_rows) return(sgmcmc_score_data(xs, ys, family, intercept, sparse))
  rows <- seq(1L, N, by = ceiling(N / max_rows))
  z <- xs[rows, , drop = FALSE]
  if (intercept) z <- cbind(1, z)
  full <- Reduce(`+`, lapply(cv_chunks(N), function(r) cv_pass(xs, ys, family, intercept, center, r)$grad))
  list(family = family, intercept = intercept, sparse = c(if (intercept) FALSE, sparse), z = z, y = ys[rows],
       cv = list(center = center, r_hat = ys[rows] - sgmcmc_mean_fun(family)(drop(z %*% center)), grad = full,
                 scale = N / length(rows)))
}

# The control variate's noise on a step's excess variance (the role of 1 + (N - n) / n for plain minibatches,
# R/sgmcmc_warmup.R): the largest whitened variance per row of g_i(beta) - g_i(beta_hat), averaged over 8 points
# beta = beta_hat + L u (u standard normal, L the metric's factor: a posterior sd away), on a stride subsample of
# at most 10,000 rows. sgmcmc_cv_noise() returns that variance v; the factor of a minibatch of n rows is
# cv_noise_factor(v, N, n) = 1 + N (N - n) / n * v (the minibatch mean's variance without replacement, times
# N^2, in whitened units).
sgmcmc_cv_noise <- function(xs, ys, family, intercept, center, factor, sigma = 1, seed = 1L, max_rows = 10000L,
                            points = 8L) {
  N <- nrow(xs)
  rows <- seq(1L, N, by = max(1L, ceiling(N / max_rows)))
  z <- xs[rows, , drop = FALSE]
  if (intercept) z <- cbind(1, z)
  P <- ncol(z)
  L <- if (is.matrix(factor)) factor else diag(factor, P)
  mean_fun <- sgmcmc_mean_fun(family)
  s2 <- if (family == "gaussian") sigma^2 else 1
  r_hat <- ys[rows] - mean_fun(drop(z %*% center))
  u <- sb_with_seed(seed, matrix(stats::rnorm(P * points), P, points))
  v <- vapply(seq_len(points), function(k) {
    b <- center + drop(L %*% u[, k])
    d <- (ys[rows] - mean_fun(drop(z %*% b))) - r_hat
    g <- (z * d) %*% L / s2  # whitened per-row gradient differences
    max(apply(g, 2L, stats::var))
  }, numeric(1))
  mean(v)
}
cv_noise_factor <- function(v, N, n) {
  N <- as.double(N)
  if (n >= N) return(1)
  1 + N * (N - n) / n * v
}

# The default minibatch with control variates: the noise factor is about 1 + k / n with k = N^2 v, and a run's
# cost about (n + c) (1 + k / n) rows for a per-iteration overhead of c rows, least near n = sqrt(c k); with the
# overhead of a dense metric step and a random row's cache miss c is a few rows, and n = k / 2 (factor 3) is
# within 1.3 times the least cost for c up to k / 10, while the step stays at a third of the full-data one. Between 32 and
# 1,000 rows. (Measured at N = 1e5, p = 20, logistic: k = 170, 1,000 rows 0.32 us per row visited on the 2-core
# machine; bench/sgmcmc_scale.R.)
sgmcmc_cv_batch <- function(v, N) {
  k <- as.double(N)^2 * v
  as.integer(min(1000, max(32, ceiling(k / 2)), N))
}

# Control variates are a regression's (sgld_sa(x, y), hamcmc_sa(x, y)): a network or a density target asking
# for them gets a classed error (what = "a network" / "a density target").
check_cv_regression <- function(control, what, call = rlang::caller_env()) {
  if (identical(control$gradient, "control_variate")) {
    sb_abort(c("Control variates ({.code sgmcmc_step(gradient = \"control_variate\")}) are implemented for regression only.",
               x = "This is {what}.",
               i = "Leave {.arg gradient} at {.val auto} (plain minibatches here)."),
             arg = "control", kind = "not_applicable", call = call)
  }
  invisible()
}

# The sparse start of the chains and the warm-up with control variates (the role of the CV lasso's at small N,
# R/sgmcmc_metric.R: sgmcmc_lasso_start()): the centre with every sparse coefficient whose z-score (against the
# centre's inverse Hessian) is below 3 set to 0.
sgmcmc_cv_sparse_start <- function(cv_mode, intercept, sparse_all) {
  b <- cv_mode$beta
  se <- sqrt(pmax(diag(tryCatch(chol2inv(chol(cv_mode$hessian)), error = function(e) diag(1 / diag(cv_mode$hessian)))), 0))
  b[sparse_all & abs(b) < 3 * se] <- 0
  b
}
