# Control-variate gradients of a regression's SG-MCMC (R/sgmcmc_cv.R, sgmcmc/glm.hpp: CvState).

cv_sim <- function(n, p, family, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  b <- c(0.5, -0.25, rep(0, p - 2))
  eta <- 0.3 + drop(x %*% b)
  y <- if (family == "binomial") rbinom(n, 1, plogis(eta)) else eta + rnorm(n)
  list(x = x, y = y)
}

test_that("with every row in the minibatch the control-variate gradient is the full gradient: the same draws", {
  d <- cv_sim(300, 4, "binomial")
  ctl <- sgmcmc_control(step_size = 0.002, step = sgmcmc_step(schedule = "constant"))
  fit <- function(center) {
    cc <- ctl
    cc$cv_center <- center
    suppressWarnings(sgld_sa(d$x, d$y, family = "binomial", method = "none", batch_size = 300, iterations = 500,
                             chains = 1, seed = 3, standardize = FALSE, quiet = TRUE, control = cc))
  }
  plain <- fit(NULL)
  # any centre: G_hat + sum_i (g_i(b) - g_i(b_hat)) = sum_i g_i(b) up to rounding
  cv <- fit(c(0.1, -0.2, 0.3, 0, 0.05))
  a <- posterior::as_draws_matrix(plain)
  b <- posterior::as_draws_matrix(cv)
  expect_equal(unclass(b), unclass(a), tolerance = 1e-8, ignore_attr = TRUE)
  expect_gt(max(abs(unclass(a))), 0.01)  # the chain moved
})

test_that("the centre is the ridge mode, and its Hessian the full-data Hessian there", {
  d <- cv_sim(30000, 3, "binomial")
  m <- scalebayes:::sgmcmc_glm_mode(d$x, d$y, "binomial", TRUE, prior_var = 1e4)
  # the same ridge by optim, to the optimizer's precision
  z <- cbind(1, d$x)
  prec <- c(1e-4, 1, 1, 1)
  nlp <- function(b) { e <- drop(z %*% b); -sum(d$y * e - log1p(exp(e))) + 0.5 * sum(prec * b^2) }
  gr <- function(b) { e <- drop(z %*% b); -drop(crossprod(z, d$y - plogis(e))) + prec * b }
  o <- optim(numeric(4), nlp, gr, method = "BFGS", control = list(reltol = 1e-14, maxit = 500))
  H <- crossprod(z * sqrt(plogis(drop(z %*% m$beta)) * (1 - plogis(drop(z %*% m$beta))))) + diag(prec)
  se <- sqrt(diag(solve(H)))
  expect_lt(max(abs(m$beta - o$par) / se), 1e-3)  # within 0.001 posterior sd
  expect_equal(m$hessian, H, tolerance = 1e-8)
  expect_lte(m$passes, 6)
})

test_that("SGLD with control variates (and the default Gram form) matches the exact Gaussian posterior", {
  # a conjugate Gaussian posterior: standardize = FALSE, the likelihood's sd fixed at 1, the slopes' frozen
  # prior N(0, 1) (kappa0 = 0, kappa1 = 1, sigma held at 1), the intercept N(0, prior_var). A gaussian
  # regression's default is every row in the Gram form (test-sgmcmc-gram.R); control variates are asked for.
  d <- cv_sim(20000, 5, "gaussian")
  z <- cbind(1, d$x)
  Q <- crossprod(z) + diag(c(1e-4, rep(1, 5)))
  S <- solve(Q)
  mu <- drop(S %*% crossprod(z, d$y))
  sd_ex <- sqrt(diag(S))
  for (gradient in c("control_variate", "auto")) {
    ctl <- sgmcmc_control(ssgl = sgmcmc_ssgl(likelihood_sd = 1, kappa0_init = 0, kappa1_init = 1, sigma_init = 1),
                          step = sgmcmc_step(gradient = gradient))
    f <- sgld_sa(d$x, d$y, method = "none", standardize = FALSE, seed = 1, quiet = TRUE, control = ctl)
    if (gradient == "control_variate") {
      expect_match(f$settings$print_info[["gradient"]], "control variates")
      expect_lt(f$settings$batch_size, 20000)
    } else {
      expect_match(f$settings$print_info[["gradient"]], "Gram matrix")
      expect_identical(f$settings$batch_size, 20000L)
    }
    dr <- posterior::as_draws_matrix(f)[, c("(Intercept)", paste0("V", 1:5))]
    ess <- apply(dr, 2L, posterior::ess_bulk)
    expect_true(all(ess > 400), info = gradient)
    # the mean's Monte-Carlo se is sd / sqrt(ESS) < 0.05 sd: 0.2 sd is 4 se; the sd's excess variance is capped
    # at 10 % by the warm-up, its Monte-Carlo error about 1 / sqrt(2 ESS) < 4 %
    expect_lt(max(abs(colMeans(dr) - mu) / sd_ex), 0.2)
    r <- apply(dr, 2L, sd) / sd_ex
    expect_true(all(r > 0.8 & r < 1.25), info = gradient)
  }
})

test_that("a logistic regression with control variates matches the Laplace posterior at large N", {
  # N = 50,000, p = 4: the posterior is its Laplace approximation N(mode, H^-1) to O(N^-1/2) of an sd in the
  # mean (skewness; about 0.005 sd here), far below the Monte-Carlo tolerance
  d <- cv_sim(50000, 4, "binomial", seed = 2)
  ctl <- sgmcmc_control(ssgl = sgmcmc_ssgl(kappa0_init = 0, kappa1_init = 1))
  f <- sgld_sa(d$x, d$y, family = "binomial", method = "none", standardize = FALSE, seed = 2, quiet = TRUE,
               control = ctl)
  expect_match(f$settings$print_info[["gradient"]], "control variates")
  z <- cbind(1, d$x)
  prec <- c(1e-4, rep(1, 4))
  b <- numeric(5)
  for (i in 1:25) {
    m <- plogis(drop(z %*% b))
    H <- crossprod(z * sqrt(m * (1 - m))) + diag(prec)
    b <- b + drop(solve(H, crossprod(z, d$y - m) - prec * b))
  }
  sd_ex <- sqrt(diag(solve(H)))
  dr <- posterior::as_draws_matrix(f)[, c("(Intercept)", paste0("V", 1:4))]
  expect_true(all(apply(dr, 2L, posterior::ess_bulk) > 400))
  expect_lt(max(abs(colMeans(dr) - b) / sd_ex), 0.2)
  r <- apply(dr, 2L, sd) / sd_ex
  expect_true(all(r > 0.8 & r < 1.25))
})

test_that("plain minibatches stay available, and control variates are refused where they do not apply", {
  d <- cv_sim(400, 3, "gaussian")
  expect_error(sgld_sa(d$x, d$y, batch_size = 400, quiet = TRUE,
                       control = sgmcmc_control(step = sgmcmc_step(gradient = "control_variate"))),
               class = "scalebayes_error_not_applicable")
  expect_error(sgmcmc_step(gradient = "cv_please"), class = "scalebayes_error")
  tg <- sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(2))
  expect_error(sgmcmc_density(tg, iterations = 100, quiet = TRUE,
                              control = sgmcmc_control(step = sgmcmc_step(gradient = "control_variate"))),
               class = "scalebayes_error_not_applicable")
  # a given step keeps the papers' plain minibatches under "auto"
  f <- suppressWarnings(sgld_sa(d$x, d$y, batch_size = 50, iterations = 300, chains = 1, quiet = TRUE,
                                control = sgmcmc_control(step_size = 1e-4)))
  expect_false("gradient" %in% names(f$settings$print_info))
})

test_that("the binomial KSD score with control variates estimates the full-data score", {
  d <- cv_sim(40000, 3, "binomial")
  m <- scalebayes:::sgmcmc_glm_mode(d$x, d$y, "binomial", TRUE, prior_var = 1e4)
  sd_cv <- scalebayes:::sgmcmc_cv_score_data(d$x, d$y, "binomial", TRUE, rep(TRUE, 3), m$beta)
  sd_full <- scalebayes:::sgmcmc_score_data(d$x, d$y, "binomial", TRUE, rep(TRUE, 3))
  expect_lt(nrow(sd_cv$z), 4001)
  lat <- list(sigma = 1, kappa0 = c(NA, 1, 1, 1), kappa1 = c(NA, 1, 1, 1), lik_var = 0)
  se <- sqrt(diag(solve(m$hessian)))
  set.seed(4)
  b <- t(m$beta + se * matrix(rnorm(4 * 20), 4, 20))  # draws about a posterior sd from the centre
  g_cv <- scalebayes:::sgmcmc_glm_score(b, sd_cv, lat, 1e4)
  g_full <- scalebayes:::sgmcmc_glm_score(b, sd_full, lat, 1e4)
  # in whitened units (score times the posterior sd: about N(0, 1) per coordinate) the error is about
  # sqrt(P / m) = 0.03 (m = 4,000 rows); 0.15 leaves 5 of those over the 80 values
  expect_lt(max(abs(sweep(g_cv - g_full, 2L, se, "*"))), 0.15)
})
