# Tests for sgld_sa(): exact posterior of a conjugate model, SA fixed points, Table 1 ordering, thread
# invariance, divergence handling and bad inputs.
#
# These tests check the engine's recursions (closed forms, schedules, the conjugate posterior) on the data as
# given, for one chain at the step they state, so they call the sampler through sgld_sa_engine()
# (helper-sgmcmc-engine.R): the settings that were the defaults before the scale-free defaults. The defaults
# themselves (standardization, four chains, the step warm-up) are tested in test-sgmcmc-trust.R.

conj_data <- function(seed = 11, n = 50, p = 3) {
  withr::with_seed(seed, {
    x <- matrix(rnorm(n * p), n, p)
    y <- drop(x %*% c(1, -0.5, 0.25)) + rnorm(n)
  })
  list(x = x, y = y)
}

test_that("SGLD with a small step matches the exact conjugate Gaussian posterior", {
  d <- conj_data()
  s0sq <- 4 # prior N(0, 4) on every coefficient (all non-sparse), sigma fixed at 1
  A <- crossprod(d$x) + diag(1 / s0sq, 3) # posterior precision
  mu <- drop(solve(A, crossprod(d$x, d$y)))
  V <- solve(A)
  eps <- 2e-4
  fit <- sgld_sa_engine(d$x, d$y, method = "none", iterations = 400000, batch_size = 50, sparse = FALSE,
                 intercept = FALSE, burnin = 5000, thin = 5, seed = 3, threads = 1,
                 control = sgmcmc_control(step_size = eps,
                                          step = sgmcmc_step(schedule = "constant"),
                                          ssgl = sgmcmc_ssgl(prior_var = s0sq, sigma_init = 1)))
  dr <- as.matrix(fit)
  for (j in 1:3) {
    # Monte-Carlo standard errors from the chain's effective sample size (posterior::ess_mean / ess_sd).
    ess_m <- posterior::ess_mean(dr[, j])
    ess_s <- posterior::ess_sd(dr[, j])
    se_mean <- sqrt(V[j, j] / ess_m)
    expect_lt(abs(mean(dr[, j]) - mu[j]), 4 * se_mean)
    expect_lt(abs(coef(fit)[j] - mu[j]), 4 * se_mean)
    # var of a Gaussian: relative MCSE sqrt(2 / ESS); the Euler discretization adds a known relative bias
    # of about eps * lambda / 2 (<= 0.7% here), which we add to the tolerance.
    bias <- eps * max(eigen(A)$values) / 2
    expect_lt(abs(var(dr[, j]) / V[j, j] - 1), 4 * sqrt(2 / ess_s) + bias)
  }
})

test_that("SGHMC with a small learning rate matches the conjugate posterior mean", {
  d <- conj_data(seed = 12)
  A <- crossprod(d$x) + diag(1 / 4, 3)
  mu <- drop(solve(A, crossprod(d$x, d$y)))
  V <- solve(A)
  fit <- sgld_sa_engine(d$x, d$y, method = "none", sampler = "sghmc", iterations = 200000, batch_size = 50,
                 sparse = FALSE, intercept = FALSE, burnin = 5000, thin = 5, seed = 4, threads = 1,
                 control = sgmcmc_control(step_size = 1e-5,
                                          step = sgmcmc_step(schedule = "constant", friction = 0.05),
                                          ssgl = sgmcmc_ssgl(prior_var = 4, sigma_init = 1)))
  dr <- as.matrix(fit)
  for (j in 1:3) {
    se_mean <- sqrt(V[j, j] / posterior::ess_mean(dr[, j]))
    expect_lt(abs(mean(dr[, j]) - mu[j]), 4 * se_mean) # tolerance from the chain's ESS
    expect_lt(abs(var(dr[, j]) / V[j, j] - 1), 4 * sqrt(2 / posterior::ess_sd(dr[, j])) + 0.02)
  }
})

# R transcription of one step of g_theta(beta) (eqs. 12-15, in the order of Algorithm 1, with
# R_a = N + p + nu + 2 for regression), used for the closed forms below.
g_step <- function(beta, th, h, rss, N, regression = TRUE) {
  s <- th$sigma
  la <- log(th$delta) + dnorm(beta, 0, s * sqrt(h$v1), log = TRUE)
  lb <- log(1 - th$delta) - log(2 * s * h$v0) - abs(beta) / (s * h$v0)
  rho <- 1 / (1 + exp(lb - la))
  k0 <- (1 - rho) / h$v0
  k1 <- rho / h$v1
  p <- length(beta)
  Ra <- (if (regression) N else 0) + p + h$nu + 2
  Rb <- sum(k0 * abs(beta))
  Rc <- (if (regression) rss else 0) + sum(k1 * beta^2) + h$nu * h$lambda
  list(rho = rho, kappa0 = k0, kappa1 = k1, sigma = (Rb + sqrt(Rb^2 + 4 * Ra * Rc)) / (2 * Ra),
       delta = (sum(rho) + h$a - 1) / (h$a + h$b + p - 2))
}

sa_setup <- function(family = "gaussian") {
  withr::with_seed(5, {
    x <- matrix(rnorm(40 * 8), 40, 8)
    beta <- c(2, -1.5, 0.8, 0.05, -0.02, 0, 0.01, 0.3)
    y <- if (family == "gaussian") drop(x %*% beta) + rnorm(40) else rbinom(40, 1, plogis(drop(x %*% beta)))
  })
  list(x = x, y = y, beta = beta, h = list(v0 = 0.05, v1 = 10, a = 1, b = 8, nu = 1, lambda = 1))
}

run_fixed_beta <- function(s, method, iterations, family = "gaussian", sigma_init = 1.5) {
  sgld_sa_engine(s$x, s$y, family = family, method = method, iterations = iterations, batch_size = 40,
          v0 = s$h$v0, v1 = s$h$v1, intercept = FALSE, burnin = 0, seed = 1, threads = 1,
          control = sgmcmc_control(step_size = 0,
                                   init = s$beta,
                                   step = sgmcmc_step(schedule = "constant"),
                                   ssgl = sgmcmc_ssgl(sigma_init = sigma_init, delta_init = 0.3, b = s$h$b)))
}

test_that("one EM step of the latent variables equals the closed forms (eqs. 12-15)", {
  for (family in c("gaussian", "binomial")) {
    s <- sa_setup(family)
    fit <- run_fixed_beta(s, "em", 2, family)
    st <- fit$final_state[[1]]
    expect_equal(unname(st$beta), s$beta) # step size 0: beta never moves
    rss <- sum((s$y - s$x %*% s$beta)^2)
    ref <- g_step(s$beta, list(sigma = 1.5, delta = 0.3), s$h, rss, 40, family == "gaussian")
    expect_equal(unname(st$rho), ref$rho, tolerance = 1e-12)
    expect_equal(unname(st$kappa0), ref$kappa0, tolerance = 1e-12)
    expect_equal(unname(st$kappa1), ref$kappa1, tolerance = 1e-12)
    expect_equal(st$sigma, ref$sigma, tolerance = 1e-12)
    expect_equal(st$delta, ref$delta, tolerance = 1e-12)
  }
})

# One SA step with omega = w from rho = 0.5, kappa0 = kappa1 = 1, sigma = 1.5, delta = 0.3 at fixed beta (eqs.
# 12-15 in the order of Algorithm 1, R_a = N + p + nu + 2), computed by hand from the setup of sa_setup().
sa_step_by_hand <- function(s, w) {
  h <- s$h
  la <- log(0.3) + dnorm(s$beta, 0, 1.5 * sqrt(h$v1), log = TRUE)
  lb <- log(0.7) - log(2 * 1.5 * h$v0) - abs(s$beta) / (1.5 * h$v0)
  rho <- (1 - w) * 0.5 + w / (1 + exp(lb - la))
  k0 <- (1 - w) * 1 + w * (1 - rho) / h$v0
  k1 <- (1 - w) * 1 + w * rho / h$v1
  delta <- (1 - w) * 0.3 + w * (sum(rho) + h$a - 1) / (h$a + h$b + 8 - 2)
  Ra <- 40 + 8 + h$nu + 2
  Rb <- sum(k0 * abs(s$beta))
  Rc <- sum((s$y - s$x %*% s$beta)^2) + sum(k1 * s$beta^2) + h$nu * h$lambda
  list(rho = rho, kappa0 = k0, kappa1 = k1, delta = delta,
       sigma = (1 - w) * 1.5 + w * (Rb + sqrt(Rb^2 + 4 * Ra * Rc)) / (2 * Ra))
}
sa_one_step <- function(s, A, Z, alpha, cap) {
  fit <- sgld_sa_engine(s$x, s$y, method = "sa", iterations = 2, batch_size = 40, v0 = s$h$v0, v1 = s$h$v1,
                 intercept = FALSE, burnin = 0, seed = 1, threads = 1,
                 control = sgmcmc_control(step_size = 0,
                                          init = s$beta,
                                          step = sgmcmc_step(schedule = "constant"),
                                          ssgl = sgmcmc_ssgl(sigma_init = 1.5, delta_init = 0.3, rho_init = 0.5, kappa0_init = 1, kappa1_init = 1, sa_A = A, sa_Z = Z, sa_alpha = alpha, sa_cap = cap, b = s$h$b)))
  fit$final_state[[1]]
}
expect_sa_state <- function(st, ref, info = NULL) {
  for (nm in c("rho", "kappa0", "kappa1", "delta", "sigma"))
    expect_equal(unname(st[[nm]]), ref[[nm]], tolerance = 1e-12, info = paste(nm, info))
}

test_that("one SA step with the authors' capped omega and kappa start equals the hand computation", {
  # omega_k = min(cap, A (k + Z)^-alpha) = min(0.1, 1000 * 101^-0.7) = 0.1 at the first SA step (k = 1);
  # kappa0 = kappa1 = 1 at the start (not the values implied by rho), as in the authors' simulation code.
  s <- sa_setup()
  st <- sa_one_step(s, 1000, 100, 0.7, 0.1)
  w <- min(0.1, 1000 * (1 + 100)^-0.7)
  expect_equal(w, 0.1)
  expect_sa_state(st, sa_step_by_hand(s, w))
})

test_that("one SA step off the cap uses omega = A (1 + Z)^-alpha: A, Z and alpha all enter (regression)", {
  # The same hand computation with cap = 1 and omega_1 = A (1 + Z)^-alpha < 1 for three settings that each
  # change one of A, Z, alpha; the SA update is the convex combination (1 - omega) old + omega g.
  s <- sa_setup()
  for (set in list(c(A = 2, Z = 3, alpha = 0.6), c(A = 1.5, Z = 3, alpha = 0.6), c(A = 2, Z = 8, alpha = 0.9))) {
    st <- sa_one_step(s, set[["A"]], set[["Z"]], set[["alpha"]], 1)
    w <- set[["A"]] * (1 + set[["Z"]])^-set[["alpha"]]
    expect_lt(w, 1)
    expect_sa_state(st, sa_step_by_hand(s, w), info = paste(names(set), set, collapse = " "))
  }
})

test_that("default burn-in is half the iterations and default thinning keeps about 1000 draws per chain", {
  # The kept draws of a default run are rows burnin + thin, burnin + 2 thin, ... of the run that keeps every
  # iteration (same seed: the chain does not depend on what is stored).
  d <- sim_gaussian(40, 3)
  run <- function(iterations, ...) sgld_sa_engine(d$x, d$y, iterations = iterations, seed = 2, threads = 1, quiet = TRUE, ...)
  for (it in c(3000L, 24000L)) {
    burnin <- it %/% 2L
    thin <- max(1L, (it - burnin) %/% 1000L)
    fd <- run(it)
    expect_equal(nrow(fd$draws), (it - burnin) %/% thin, info = it)
    if (it == 3000L) {
      all <- run(it, burnin = 0, thin = 1)
      expect_equal(unname(fd$draws), unname(all$draws[seq(burnin + thin, it, by = thin), , drop = FALSE]))
    }
  }
})

test_that("plain SGLD is the authors' baseline: kappa0 = kappa1 = 1 and sigma stay frozen, v0 plays no role", {
  s <- sa_setup()
  f <- function(v0, method = "none", ...) {
    sgld_sa_engine(s$x, s$y, method = method, iterations = 500, batch_size = 20, v0 = v0, intercept = FALSE, burnin = 0,
            seed = 3, threads = 1, control = sgmcmc_control(ssgl = sgmcmc_ssgl(sigma_init = 1.5, delta_init = 0.3, ...)))
  }
  a <- f(0.05)
  st <- a$final_state[[1]]
  expect_false(isTRUE(all.equal(unname(st$beta), rep(0, 8)))) # beta moved
  expect_identical(unname(st$kappa0), rep(1, 8))
  expect_identical(unname(st$kappa1), rep(1, 8))
  expect_identical(st$sigma, 1.5)
  expect_identical(unname(st$rho), rep(0.3, 8))
  expect_identical(a$draws, f(0.5)$draws) # the frozen prior does not involve v0 (the paper's identical SGLD cells)
  # other frozen values on request; "sa" keeps starting from the values implied by rho unless told otherwise
  b <- f(0.05, kappa0_init = 0, kappa1_init = 0.25)
  expect_identical(unname(b$final_state[[1]]$kappa1), rep(0.25, 8))
  sa0 <- run_fixed_beta(s, "sa", 1)
  expect_equal(unname(sa0$final_state[[1]]$kappa0), rep((1 - 0.3) / s$h$v0, 8))
})

test_that("the frozen prior of plain SGLD is the one sampled (conjugate check with kappa0 = 0)", {
  # kappa0 = 0, kappa1 = 1/4, sigma = 1: prior N(0, 4) on sparse coefficients, so the posterior is Gaussian
  d <- conj_data(seed = 13)
  A <- crossprod(d$x) + diag(1 / 4, 3)
  mu <- drop(solve(A, crossprod(d$x, d$y)))
  V <- solve(A)
  fit <- sgld_sa_engine(d$x, d$y, method = "none", iterations = 200000, batch_size = 50, intercept = FALSE,
                 burnin = 5000, thin = 5, seed = 5, threads = 1,
                 control = sgmcmc_control(step_size = 2e-4,
                                          step = sgmcmc_step(schedule = "constant"),
                                          ssgl = sgmcmc_ssgl(sigma_init = 1, kappa0_init = 0, kappa1_init = 0.25)))
  dr <- as.matrix(fit)
  for (j in 1:3) {
    se_mean <- sqrt(V[j, j] / posterior::ess_mean(dr[, j])) # Monte-Carlo standard error from the ESS
    expect_lt(abs(mean(dr[, j]) - mu[j]), 4 * se_mean)
  }
  # with the default frozen kappa0 = kappa1 = 1 the prior is exp(-|beta| - beta^2 / 2): where the posterior keeps the
  # sign of beta_j it is Gaussian with mean solve(X'X + I, X'y - sign(mu)). Coefficients 1 and 2 lie 7 and 3.5
  # posterior sds from 0 (coefficient 3, 0.25, does not, so its mean is not this closed form).
  fit1 <- sgld_sa_engine(d$x, d$y, method = "none", iterations = 200000, batch_size = 50, intercept = FALSE,
                  burnin = 5000, thin = 5, seed = 5, threads = 1,
                  control = sgmcmc_control(step_size = 2e-4, step = sgmcmc_step(schedule = "constant"), ssgl = sgmcmc_ssgl(sigma_init = 1)))
  A1 <- crossprod(d$x) + diag(1, 3)
  mu1 <- drop(solve(A1, crossprod(d$x, d$y) - sign(mu)))
  dr1 <- as.matrix(fit1)
  for (j in 1:2) {
    se_mean <- sqrt(solve(A1)[j, j] / posterior::ess_mean(dr1[, j]))
    expect_lt(abs(mean(dr1[, j]) - mu1[j]), 4 * se_mean)
  }
})

test_that("the SA iteration converges to the fixed point of g on a fixed beta", {
  s <- sa_setup()
  rss <- sum((s$y - s$x %*% s$beta)^2)
  # closed form of the fixed point: iterate theta <- g(theta) to convergence in R
  th <- list(sigma = 1.5, delta = 0.3)
  for (i in 1:2000) th <- g_step(s$beta, th, s$h, rss, 40)
  th2 <- g_step(s$beta, th, s$h, rss, 40)
  expect_equal(th2$sigma, th$sigma, tolerance = 1e-14) # it is a fixed point
  fit <- run_fixed_beta(s, "sa", 30000)
  st <- fit$final_state[[1]]
  expect_equal(unname(st$rho), th$rho, tolerance = 1e-6)
  expect_equal(unname(st$kappa0), th$kappa0, tolerance = 1e-6)
  expect_equal(unname(st$kappa1), th$kappa1, tolerance = 1e-6)
  expect_equal(st$sigma, th$sigma, tolerance = 1e-6)
  expect_equal(st$delta, th$delta, tolerance = 1e-6)
  # method = "none" leaves the latent variables at their initial values
  fit0 <- run_fixed_beta(s, "none", 50)
  expect_equal(fit0$final_state[[1]]$sigma, 1.5)
  expect_equal(unname(fit0$final_state[[1]]$rho), rep(0.3, 8))
  # a warm-up longer than the run leaves them alone too; sa_start = 1 (SA from the second iteration) is the default
  fitw <- sgld_sa_engine(s$x, s$y, method = "sa", iterations = 50, batch_size = 40, v0 = s$h$v0, intercept = FALSE,
                  burnin = 0, seed = 1, threads = 1,
                  control = sgmcmc_control(step_size = 0,
                                           init = s$beta,
                                           step = sgmcmc_step(schedule = "constant"),
                                           ssgl = sgmcmc_ssgl(sigma_init = 1.5, delta_init = 0.3, sa_start = 60)))
  expect_equal(fitw$final_state[[1]]$sigma, 1.5)
  expect_equal(unname(fitw$final_state[[1]]$rho), rep(0.3, 8))
})

test_that("Table 1 ordering: SGLD-SA beats SGLD-EM beats SGLD on test MSE (reduced run)", {
  # 3 replicated Table 1 data sets, 20 000 iterations (paper: 500 000), v0 = 0.01, sigma init = 1; averaging
  # over data sets because on a single one the greedy EM arm sometimes reaches the same mode as SA.
  mse <- sapply(1:3, function(r) {
    d <- sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, seed = r)
    sapply(c(sa = "sa", em = "em", none = "none"), function(m) {
      fit <- sgld_sa_engine(d$x, d$y, method = m, iterations = 20000, batch_size = 50, v0 = 0.01, v1 = 10,
                     intercept = FALSE, keep_draws = 1:3, newx = d$x_test, seed = r, threads = 1,
                     control = sgmcmc_control(ssgl = sgmcmc_ssgl(sigma_init = 1, rho_init = 1, b = 1000)))
      mean((predict(fit)$fit - d$y_test)^2)
    })
  })
  avg <- rowMeans(mse)
  expect_lt(avg[["sa"]], avg[["em"]])
  expect_lt(avg[["em"]], avg[["none"]])
  expect_lt(avg[["sa"]], 6) # the noise variance is 3; the paper reports 3.5-5.6 for SGLD-SA
})

test_that("draws are identical for 1 and 2 threads, and differ between chains (every sampler of the table)", {
  d <- sgld_sa_simulate(n = 60, p = 30, corr = 0.5, seed = 2)
  for (sampler in scalebayes:::sgmcmc_samplers()$name) {  # a new sampler is covered by its row
    f <- function(th) {
      sgld_sa_engine(d$x, d$y, sampler = sampler, iterations = 3000, batch_size = 20, chains = 3, threads = th,
              seed = 42, newx = d$x_test, control = sgmcmc_control(step_size = 1e-3))
    }
    a <- f(1)
    b <- f(2)
    expect_identical(a$draws, b$draws, info = sampler)
    expect_identical(a$trace, b$trace, info = sampler)
    expect_identical(a$pred, b$pred, info = sampler)
    expect_false(isTRUE(all.equal(a$draws[a$chain == 1, ], a$draws[a$chain == 2, ])), info = sampler)
  }
})

test_that("logistic regression selects the signal and predicts probabilities", {
  d <- sgld_sa_simulate(n = 200, p = 50, corr = 0.3, family = "binomial", seed = 3)
  fit <- sgld_sa_engine(d$x, d$y, family = "binomial", iterations = 20000, batch_size = 50, v0 = 0.01,
                 intercept = FALSE, newx = d$x_test, seed = 1, threads = 1)
  expect_true(all(fit$inclusion[1:2] > 0.9))
  expect_lt(mean(fit$inclusion[-(1:3)]), 0.1)
  pr <- predict(fit, type = "response")$fit
  expect_true(all(pr > 0 & pr < 1))
  # running predictive average equals the average over the stored draws when every kept iteration is stored
  expect_equal(pr, predict(fit, d$x_test, type = "response")$fit, tolerance = 1e-10)
  expect_s3_class(posterior::as_draws_df(fit), "draws_df")
  expect_true(all(c("sigma", "delta", "mean_rho", "loglik") %in% names(fit$trace)))
})

test_that("magnitude pruning zeroes the smallest weights at the scheduled rate", {
  d <- sgld_sa_simulate(n = 60, p = 40, corr = 0.5, seed = 4)
  fit <- sgld_sa_engine(d$x, d$y, iterations = 2000, intercept = FALSE, seed = 1, threads = 1,
                 control = sgmcmc_control(ssgl = sgmcmc_ssgl(prune = TRUE, prune_S = 0.5, prune_D = 0.9, prune_U = 10)))
  s_final <- 0.5 * (1 - 0.9^(2000 / 10))
  expect_equal(sum(fit$final_state[[1]]$beta == 0), floor(s_final * 40))
  expect_true(all(rowSums(fit$draws == 0) >= floor(0.45 * 40)))
})

test_that("divergence stops with a classed error carrying the last good state", {
  d <- conj_data()
  cnd <- rlang::catch_cnd(
    sgld_sa_engine(d$x * 100, d$y, method = "none", iterations = 1000, seed = 1, threads = 1,
            control = sgmcmc_control(step_size = 1, step = sgmcmc_step(schedule = "constant"))),
    classes = "scalebayes_error")
  expect_s3_class(cnd, "scalebayes_error_divergence")
  expect_true(all(is.finite(cnd$last_state$beta)))
  expect_match(conditionMessage(cnd), "diverged")
  # the momentum samplers too (SGHMC by BAOAB: an exploding chain is an error, never a finished fit)
  for (s in c("sghmc", "sghmc_baoab")) {
    cnd <- rlang::catch_cnd(
      sgld_sa_engine(d$x * 100, d$y, method = "none", sampler = s, iterations = 1000, seed = 1, threads = 1,
                     control = sgmcmc_control(step_size = 1, step = sgmcmc_step(schedule = "constant"))),
      classes = "scalebayes_error")
    expect_s3_class(cnd, "scalebayes_error_divergence")
    expect_true(all(is.finite(cnd$last_state$beta)))
  }
})

test_that("bad inputs give classed errors", {
  d <- conj_data()
  expect_error(sgld_sa_engine("a", d$y), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y[-1]), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, family = "binomial"), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, batch_size = 51), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, iterations = 10, burnin = 10), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, v0 = -1), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, sparse = c(TRUE, FALSE)), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, keep_draws = "nope"), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, control = list(step_size = 1)), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, control = sgmcmc_control(init = 1:2)), class = "scalebayes_error")
  expect_error(sgmcmc_control(step = sgmcmc_step(friction = 0.1, noise_estimate = 0.2)), class = "scalebayes_error")
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_alpha = 2)), class = "scalebayes_error")
  expect_error(sgmcmc_control(step_size = -1), class = "scalebayes_error")
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_cap = 0)), class = "scalebayes_error")
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_cap = 1.5)), class = "scalebayes_error")
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(kappa0_init = -1)), class = "scalebayes_error")
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(kappa1_init = NA_real_)), class = "scalebayes_error")
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(kappa1_init = "1")), class = "scalebayes_error")
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(kappa0_init = c(1, 2))), class = "scalebayes_error")
  expect_error(sgld_sa_engine(d$x, d$y, seed = -1), class = "scalebayes_error")
  expect_error(predict(sgld_sa_engine(d$x, d$y, iterations = 100, seed = 1)), class = "scalebayes_error")
})

test_that("an argument of the other front end is a classed error naming it, and the user's call (sgld_sa, hamcmc_sa)", {
  d <- conj_data()
  net_only <- list(weights = rep(1, nrow(d$x)), epochs = 2, sparse_layers = 1, newy = d$y, device = "cpu",
                   batch = TRUE)
  for (a in names(net_only)) {
    for (f in c("sgld_sa", "hamcmc_sa")) {
      e <- tryCatch(do.call(f, c(list(d$x, d$y), net_only[a])), error = identity)
      expect_s3_class(e, "scalebayes_error_input")
      expect_equal(e$arg, a)
      expect_match(conditionMessage(e), if (a == "weights") "not to regression" else "networks only")
      expect_identical(conditionCall(e)[[1]], as.name(f))
    }
  }
  for (a in c("sparse", "intercept")) {
    e <- tryCatch(do.call("hamcmc_sa", c(list(d$x, d$y, model = nn_mlp(2)), stats::setNames(list(FALSE), a))),
                  error = identity)
    expect_s3_class(e, "scalebayes_error_input")
    expect_equal(e$arg, a)
    expect_identical(conditionCall(e)[[1]], as.name("hamcmc_sa"))
  }
  # the regression front end's own checks name the user's call too
  e <- tryCatch(hamcmc_sa(d$x, d$y[-1]), error = identity)
  expect_s3_class(e, "scalebayes_error_input")
  expect_identical(conditionCall(e)[[1]], as.name("hamcmc_sa"))
})

test_that("the ziggurat normals used for the SGLD noise are standard normal", {
  z <- cpp_sgmcmc_normals(200000, 7)
  # mean and variance within 4 standard errors (sd 1/sqrt(n) and sqrt(2/n))
  expect_lt(abs(mean(z)), 4 / sqrt(length(z)))
  expect_lt(abs(var(z) - 1), 4 * sqrt(2 / length(z)))
  expect_gt(suppressWarnings(ks.test(z[1:20000], "pnorm")$p.value), 1e-3)
  # tail beyond the base block (R = 3.4426): frequency 2 * pnorm(-R) = 5.8e-4, binomial sd ~ 5.4e-5
  expect_lt(abs(mean(abs(z) > 3.442619855899) - 2 * pnorm(-3.442619855899)), 4 * sqrt(5.8e-4 / length(z)))
})

test_that("step-size and temperature schedules follow their formulas", {
  d <- conj_data()
  fit <- sgld_sa_engine(d$x, d$y, iterations = 400, seed = 1, threads = 1,
                 control = sgmcmc_control(step_size = 1e-3,
                                          trace_every = 1,
                                          step = sgmcmc_step(schedule = "stepwise", decay = 0.5, milestones = c(100, 300), temperature = 2, anneal = 1.001)))
  k <- fit$trace$iteration
  expect_equal(fit$trace$eps, 1e-3 * 0.5^((k >= 100) + (k >= 300)))
  expect_equal(fit$trace$tau, 2 * 1.001^k)
  fit2 <- sgld_sa_engine(d$x, d$y, iterations = 50, seed = 1, threads = 1,
                  control = sgmcmc_control(step_size = 2e-3, trace_every = 1, step = sgmcmc_step(power = 0.5)))
  expect_equal(fit2$trace$eps, 2e-3 * (1:50)^(-0.5))
  # annealing once every 7 iterations (the per-epoch rule)
  fit3 <- sgld_sa_engine(d$x, d$y, iterations = 60, seed = 1, threads = 1,
                  control = sgmcmc_control(trace_every = 1, step = sgmcmc_step(temperature = 3, anneal = 1.5, anneal_every = 7)))
  expect_equal(fit3$trace$tau, 3 * 1.5^((1:60) %/% 7))
  expect_error(sgmcmc_control(step = sgmcmc_step(anneal_every = 0)), class = "scalebayes_error_input")
})

test_that("chains split into future chunks give the same draws as one process (every sampler of the table)", {
  skip_if_not_installed("future.apply")
  d <- sgld_sa_simulate(n = 40, p = 10, corr = 0.5, seed = 6)
  oplan <- future::plan(future::sequential)
  on.exit(future::plan(oplan), add = TRUE)
  for (sampler in scalebayes:::sgmcmc_samplers()$name) {
    f <- function(fut) {
      sgld_sa_engine(d$x, d$y, sampler = sampler, iterations = 1000, chains = 3, threads = 1, seed = 9, future = fut)
    }
    a <- f(FALSE)
    b <- withr::with_options(list(future.rng.onMisuse = "ignore"), f(TRUE))
    expect_identical(a$draws, b$draws, info = sampler)
    expect_identical(a$trace, b$trace, info = sampler)
  }
})

test_that("a default chain starts the intercept at its ML value: uncentred responses converge", {
  # Diabetes: mean(y) = 152, and the predictors are centred, so the intercept's posterior is about
  # N(mean(y), sigma^2 / n) whatever the slopes. Started at zero (the earlier default), the default run ended
  # at 72 with sigma 108.
  data(diabetes, package = "scalebayes", envir = environment())
  x <- diabetes$x
  y <- diabetes$y
  n <- length(y)
  for (sampler in c("sgld", "hamcmc_sa")) {
    # unit-norm columns: the default step size is far too small for the slopes, and the call says so
    expect_warning(fit <- sgld_sa_engine(x, y, sampler = sampler, seed = 1, quiet = TRUE),
                   class = "scalebayes_warning_scale")
    b0 <- coef(fit)[["(Intercept)"]]
    sig <- fit$latent$sigma
    expect_lt(abs(b0 - mean(y)), 4 * sig / sqrt(n), label = paste(sampler, "intercept - mean(y)"))
    expect_lt(sig, stats::sd(y), label = paste(sampler, "sigma"))  # below the marginal sd (108 before)
  }
  # the start itself: mean(y) for gaussian, the logit of the share of ones (bounded) for binomial
  expect_equal(intercept_start(y, "gaussian"), mean(y))
  expect_equal(intercept_start(c(1, 1, 0, 1), "binomial"), stats::qlogis(0.75))
  expect_equal(intercept_start(rep(1, 10), "binomial"), stats::qlogis(1 - 1 / 20))
  expect_true(is.finite(intercept_start(rep(0, 10), "binomial")))
  # an explicit init is used as given
  fit0 <- sgld_sa_engine(x, y, iterations = 2, burnin = 0, thin = 1, seed = 1, quiet = TRUE,
                  control = sgmcmc_control(init = numeric(11), step_size = 0))
  expect_equal(unname(as.matrix(fit0)[1, 1]), 0)
})

test_that("predictors far from unit scale warn (classed) when a fixed step meets unstandardized data only", {
  data(diabetes, package = "scalebayes", envir = environment())
  x <- diabetes$x  # columns of unit Euclidean norm: mean square 1 / 442
  y <- diabetes$y
  fixed <- sgmcmc_control(step_size = 1e-3)
  w <- tryCatch(sgld_sa(x, y, iterations = 10, seed = 1, quiet = TRUE, standardize = FALSE, chains = 1,
                        control = fixed), warning = function(w) w)
  expect_s3_class(w, "scalebayes_warning_scale")
  expect_match(conditionMessage(w), "0.0023", fixed = TRUE)  # the median column mean square, 1 / 442
  # mean square 2262: the warning comes first, and the chain at this step on this scale then explodes (a
  # training loss of 1e10 per example, against 2965 for a constant prediction: the loss rule's divergence)
  expect_warning(expect_error(sgld_sa(x * 1000, y, iterations = 10, seed = 1, quiet = TRUE, standardize = FALSE,
                                      chains = 1, control = fixed), class = "scalebayes_error_diverged"),
                 class = "scalebayes_warning_scale")
  quiet_run <- function(x, ...) {
    withCallingHandlers(sgld_sa(x, y, iterations = 10, seed = 1, quiet = TRUE, chains = 1, ...),
                        scalebayes_warning_convergence = function(w) invokeRestart("muffleWarning"))
  }
  # standardized (the default), or a step chosen by the warm-up: no scale warning
  expect_no_warning(quiet_run(x, control = fixed))
  expect_no_warning(quiet_run(x, standardize = FALSE))
  expect_no_warning(quiet_run(scale(x), standardize = FALSE, control = fixed))
  # just inside the band (root mean square a factor 9 from 1) stays quiet
  expect_no_warning(quiet_run(scale(x) / 9, standardize = FALSE, control = fixed))
  # (at this fixed step the chain on columns 9 times too large then explodes: the loss rule's classed error,
  # which is not a scale warning)
  expect_no_warning(expect_error(quiet_run(scale(x) * 9, standardize = FALSE, control = fixed),
                                 class = "scalebayes_error_diverged"))
})
