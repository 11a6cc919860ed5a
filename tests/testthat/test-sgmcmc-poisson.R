# Poisson regression (log link) in the SG-MCMC regressions (sgld_sa(family = "poisson"), sgmcmc/glm.hpp).

pois_sim <- function(n, b, b0 = 0.3, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * length(b)), n, length(b))
  list(x = x, y = rpois(n, exp(b0 + drop(x %*% b))))
}

# The exact posterior of a Poisson regression with the prior N(0, prior_var[j]) on the standardized
# coefficient j (sampler's scale, intercept first) by importance sampling: a multivariate t (5 df) proposal at
# the mode with the inverse Hessian's covariance, M draws, self-normalized weights. Returns the user-scale
# means and sds and the importance sampler's effective sample size.
pois_is_reference <- function(x, y, sc, prior_var, M = 40000L, seed = 11) {
  xs <- scalebayes:::sgmcmc_apply_x(x, sc)
  z <- cbind(1, xs)
  P <- ncol(z)
  nlp <- function(b) { e <- drop(z %*% b); -sum(y * e - exp(e)) + 0.5 * sum(b^2 / prior_var) }
  gr <- function(b) { e <- drop(z %*% b); -drop(crossprod(z, y - exp(e))) + b / prior_var }
  o <- optim(c(log(mean(y)), numeric(P - 1)), nlp, gr, method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))
  mu <- exp(drop(z %*% o$par))
  H <- crossprod(z * sqrt(mu)) + diag(1 / prior_var)
  L <- t(chol(solve(H)))
  set.seed(seed)
  df <- 5
  u <- matrix(rnorm(M * P), M, P) / sqrt(rchisq(M, df) / df)
  B <- sweep(u %*% t(L), 2L, o$par, "+")
  logq <- -(df + P) / 2 * log1p(rowSums(u^2) / df)  # up to a constant
  logp <- numeric(M)
  for (r in split(seq_len(M), ceiling(seq_len(M) / 4000))) {
    E <- z %*% t(B[r, , drop = FALSE])
    logp[r] <- colSums(y * E - exp(E)) - 0.5 * drop((B[r, , drop = FALSE]^2) %*% (1 / prior_var))
  }
  lw <- logp - logq
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  Bu <- scalebayes:::sgmcmc_to_user_scale(B, sc)
  m <- colSums(Bu * w)
  s <- sqrt(colSums(sweep(Bu, 2L, m)^2 * w))
  list(mean = m, sd = s, ess = 1 / sum(w^2))
}

expect_matches_reference <- function(fit, ref, ess) {
  sd_ratio <- fit$coef_sd / ref$sd
  z <- abs(fit$coefficients - ref$mean) / ref$sd
  # Monte-Carlo error: of the fit's mean about 1 / sqrt(ESS) sd, of its sd about 1 / sqrt(2 ESS); of the
  # reference about 1 / sqrt(IS ESS) (> 10,000): at ESS >= 200 (the default run aims at about 400) these are
  # at most 0.07 and 0.05, so the tolerances (0.2 sd, about 3 MC sds; [0.8, 1.25], 4 MC sds) leave the bias of
  # the discretized sampler room and still catch a wrong likelihood (the SSGL scale on sigma, a missing exp:
  # errors of many sds)
  expect_gt(ref$ess, 10000)
  expect_gte(ess, 200)
  expect_lt(max(z), 0.2)
  expect_gt(min(sd_ratio), 0.8)
  expect_lt(max(sd_ratio), 1.25)
}

test_that("sgld_sa(family = \"poisson\") with every default matches the exact posterior (importance sampler)", {
  d <- pois_sim(2000, c(0.5, -0.4, 0.3, 0.25, -0.2))
  fit <- sgld_sa(d$x, d$y, family = "poisson", seed = 1, quiet = TRUE)
  expect_s3_class(fit, "sb_sgld_sa")
  expect_identical(fit$settings$family, "poisson")
  # every slope is a clear signal (z > 10): in the slab (inclusion 1), whose prior N(0, sigma^2 v1) with sigma
  # held at 1 is the reference's prior on the standardized slopes; the intercept's N(0, prior_var)
  expect_gt(min(fit$inclusion), 0.99)
  expect_true(all(fit$latent$sigma == 1))
  ref <- pois_is_reference(d$x, d$y, fit$settings$scaling, prior_var = c(1e4, rep(10, 5)))
  expect_matches_reference(fit, ref, min(fit$diagnostics$convergence$ess_bulk))
  # the default spike scale: 0.2 / sqrt(N ybar)
  expect_equal(fit$settings$v0, 0.2 / sqrt(2000 * mean(d$y)))
  # predictions: link and response, log_lik and posterior_predict
  nx <- d$x[1:4, ]
  pl <- predict(fit, nx, type = "link")
  pr <- predict(fit, nx, type = "response")
  expect_equal(pl$fit, drop(cbind(1, nx) %*% coef(fit)), tolerance = 1e-10)
  dr <- predict(fit, nx, type = "response", draws = TRUE)
  expect_equal(pr$fit, colMeans(dr), tolerance = 1e-10)
  expect_equal(dr, exp(predict(fit, nx, type = "link", draws = TRUE)), tolerance = 1e-12)
  ll <- log_lik(fit, newdata = nx, newy = d$y[1:4])
  expect_equal(ll[, 2], dpois(d$y[2], dr[, 2], log = TRUE), tolerance = 1e-10)
  pp <- posterior_predict(fit, nx, seed = 2)
  expect_true(all(pp >= 0 & pp == round(pp)))
  # the counts' mean under the posterior predictive, against the posterior mean rate (Monte-Carlo: 4,000 draws)
  expect_lt(max(abs(colMeans(pp) - pr$fit) / sqrt(pr$fit / nrow(pp) + pr$se^2)), 5)
  expect_error(predict(fit, nx, type = "class"), class = "scalebayes_error_not_applicable")
  out <- capture.output(print(fit))
  expect_true(any(grepl("family: poisson", out)))
  expect_false(any(grepl("^sigma", out)))
})

test_that("control-variate and plain minibatch gradients agree with each other and with the exact posterior", {
  d <- pois_sim(2000, c(0.5, -0.4, 0.3, 0.25, -0.2), seed = 2)
  cvf <- sgld_sa(d$x, d$y, family = "poisson", batch_size = 200, seed = 1, quiet = TRUE,
                 control = sgmcmc_control(step = sgmcmc_step(gradient = "control_variate")))
  expect_match(cvf$settings$print_info[["gradient"]], "control variates")
  ref <- pois_is_reference(d$x, d$y, cvf$settings$scaling, prior_var = c(1e4, rep(10, 5)))
  expect_matches_reference(cvf, ref, min(cvf$diagnostics$convergence$ess_bulk))
  skip_if_fast_tier()
  mbf <- sgld_sa(d$x, d$y, family = "poisson", batch_size = 200, seed = 1, quiet = TRUE,
                 control = sgmcmc_control(step = sgmcmc_step(gradient = "minibatch")))
  expect_false("gradient" %in% names(mbf$settings$print_info))  # plain minibatches
  expect_matches_reference(mbf, ref, min(mbf$diagnostics$convergence$ess_bulk))
  # with each other: their difference within 0.2 of the posterior sd (each is within 0.2 of the reference, so
  # this is at most 0.4 by the triangle; it is checked at the tighter level that their MC errors allow)
  expect_lt(max(abs(cvf$coefficients - mbf$coefficients) / ref$sd), 0.2)
})

test_that("sparse Poisson regression with every default selects the signals (n = 500, p = 20, 3 signals)", {
  d <- pois_sim(500, c(0.6, -0.5, 0.4, rep(0, 17)), seed = 3)
  fit <- sgld_sa(d$x, d$y, family = "poisson", seed = 1, quiet = TRUE)
  inc <- fit$inclusion  # the sparse coefficients (the intercept has none)
  expect_named(inc, paste0("V", 1:20))
  expect_gte(min(inc[1:3]), 0.9)
  expect_lte(mean(inc[-(1:3)]), 0.1)
})

test_that("bad Poisson responses are classed errors naming y", {
  x <- matrix(rnorm(40), 20, 2)
  for (bad in list(c(-1, rep(1, 19)), c(1.5, rep(1, 19)), c(NA, rep(1, 19)), c(Inf, rep(1, 19)), rep(0, 20))) {
    e <- expect_error(sgld_sa(x, bad, family = "poisson", quiet = TRUE), class = "scalebayes_error")
    expect_match(conditionMessage(e), "`y`")
  }
  expect_error(sgld_sa(x, c(-1, rep(1, 19)), family = "poisson"), "non-negative whole numbers")
})

test_that("the engine's Poisson terms: log-likelihood with log y!, clamped eta, and the mean at the trace", {
  d <- pois_sim(300, c(0.4, -0.2))
  # (a short fixed-step run: its convergence warning is beside the point here)
  fit <- suppressWarnings(sgld_sa(d$x, d$y, family = "poisson", method = "none", standardize = FALSE,
                                  iterations = 2000, chains = 1, seed = 1, quiet = TRUE,
                                  control = sgmcmc_control(step_size = 1e-4)))
  # the trace's log-likelihood at the chain's last state is the Poisson log-likelihood with its log y! terms
  b <- fit$final_state[[1]]$beta
  eta <- drop(cbind(1, d$x) %*% b)
  expect_equal(tail(fit$trace$loglik, 1), sum(dpois(d$y, exp(eta), log = TRUE)), tolerance = 1e-8)
  # the mean used by the gradient is exp(min(eta, 40)), as the R side's (R/sgmcmc_cv.R)
  mf <- scalebayes:::sgmcmc_mean_fun("poisson")
  expect_equal(mf(c(0, 50)), c(1, exp(40)))
})

test_that("hamcmc_sa() fits a Poisson regression near the exact posterior", {
  skip_if_fast_tier()
  d <- pois_sim(2000, c(0.5, -0.4, 0.3, 0.25, -0.2), seed = 4)
  fit <- hamcmc_sa(d$x, d$y, family = "poisson", seed = 1, quiet = TRUE)
  ref <- pois_is_reference(d$x, d$y, fit$settings$scaling, prior_var = c(1e4, rep(10, 5)))
  expect_matches_reference(fit, ref, min(fit$diagnostics$convergence$ess_bulk))
})
