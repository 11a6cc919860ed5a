# stan_target(): a Stan model as a target of sgmcmc_density() (R/stan_target.R).
# One small model is compiled per run of this file (about a minute, extended tier) and reused by every test:
# two normal means with known variance and a variance with an inverse-gamma prior, so the posterior is exact:
#   mu_j ~ N(0, 10^2), y_jk ~ N(mu_j, 1):  mu_j | y ~ N(sum_k y_jk / (n + 1/100), 1 / (n + 1/100))
#   sigma2 ~ IG(a, b), z_i ~ N(0, sigma2):  sigma2 | z ~ IG(a + m / 2, b + sum z^2 / 2)
# sigma2 is declared <lower=0>, so the chains run on log sigma2 and the draws come back on sigma2: the
# Jacobian and the constrained-scale output are both on the line. A transformed parameter (sigma) and a
# generated quantity (zrep) check the names and the order of the output.

stan_conj_code <- "
data { int<lower=1> n; vector[n] y1; vector[n] y2; int<lower=1> m; vector[m] z; real<lower=0> a; real<lower=0> b; }
parameters { vector[2] mu; real<lower=0> sigma2; }
transformed parameters { real sigma = sqrt(sigma2); }
model {
  mu ~ normal(0, 10);
  y1 ~ normal(mu[1], 1);
  y2 ~ normal(mu[2], 1);
  sigma2 ~ inv_gamma(a, b);
  z ~ normal(0, sigma);
}
generated quantities { real zrep = normal_rng(0, sigma); }
"

stan_conj_data <- local({
  set.seed(60)
  list(n = 10L, y1 = stats::rnorm(10, 1), y2 = stats::rnorm(10, -1), m = 20L, z = stats::rnorm(20, 0, 2),
       a = 3, b = 2)
})

# the compiled model, once per file; a test that needs it skips where rstan is absent or cannot compile
stan_conj_model <- local({
  cache <- NULL
  function() {
    skip_if_fast_tier()
    skip_if_not_installed("rstan")
    if (is.null(cache)) {
      cache <<- tryCatch(stan_target(stan_conj_code, stan_conj_data, model_name = "conj"),
                         scalebayes_error_stan_compile = function(e) e)
    }
    if (inherits(cache, "error")) skip(paste("rstan cannot compile here:", conditionMessage(cache)))
    cache
  }
})

# the log density on the unconstrained scale (mu1, mu2, l = log sigma2), Stan's constants dropped, with the
# log-Jacobian l of sigma2 = exp(l)
stan_conj_logd <- function(u, d = stan_conj_data) {
  mu <- u[1:2]; l <- u[3]; s2 <- exp(l)
  -sum(mu^2) / 200 - sum((d$y1 - mu[1])^2) / 2 - sum((d$y2 - mu[2])^2) / 2 -
    (d$a + 1) * l - d$b / s2 - d$m / 2 * l - sum(d$z^2) / (2 * s2) + l
}
stan_conj_grad <- function(u, d = stan_conj_data) {
  mu <- u[1:2]; l <- u[3]; s2 <- exp(l)
  c(-mu[1] / 100 + sum(d$y1 - mu[1]), -mu[2] / 100 + sum(d$y2 - mu[2]),
    -(d$a + 1) + d$b / s2 - d$m / 2 + sum(d$z^2) / (2 * s2) + 1)
}

test_that("bad models are classed errors naming `model`, before any compilation", {
  expect_error(stan_target(42), class = "scalebayes_error_input")
  e <- rlang::catch_cnd(stan_target(list(a = 1)), "scalebayes_error")
  expect_identical(e$arg, "model")
  expect_error(stan_target(), class = "scalebayes_error_input")
  expect_error(stan_target(c("a", "b")), class = "scalebayes_error_input")
  skip_if_not_installed("rstan")
  # discrete parameters (Stan cannot have them), none, or no parameters block: checked before the compiler
  e <- rlang::catch_cnd(stan_target("parameters { int k; real x; } model { x ~ normal(0, 1); }"), "scalebayes_error")
  expect_s3_class(e, "scalebayes_error_input")
  expect_identical(e$arg, "model")
  expect_match(conditionMessage(e), "integer parameter")
  e <- rlang::catch_cnd(stan_target("parameters { array[2] int k; } model { }"), "scalebayes_error")
  expect_match(conditionMessage(e), "integer parameter")
  e <- rlang::catch_cnd(stan_target("data { real y; } parameters { } model { }"), "scalebayes_error")
  expect_identical(e$arg, "model")
  expect_match(conditionMessage(e), "no parameters")
  e <- rlang::catch_cnd(stan_target("data { real y; } transformed parameters { real z = y; } model { }"),
                        "scalebayes_error")
  expect_match(conditionMessage(e), "no .*parameters")
  # a syntax error: Stan's parser (stanc, seconds) rejects it, a classed error with its message
  e <- rlang::catch_cnd(stan_target("parameters { real x; } model { x ~ normal(0, 1) }"), "scalebayes_error")
  expect_s3_class(e, "scalebayes_error_stan_compile")
  expect_s3_class(e, "scalebayes_error_input")
  expect_identical(e$arg, "model")
  # data that is not a named list
  expect_error(stan_target("parameters { real x; } model { x ~ normal(0, 1); }", data = 1:3),
               class = "scalebayes_error_input")
  expect_error(stan_target("parameters { real x; } model { x ~ normal(0, 1); }", data = list(1, 2)),
               class = "scalebayes_error_input")
})

test_that("Stan's random starts are redrawn up to 100 times, then a classed error with Stan's message", {
  # a stand-in for a Stan target (no rstan needed): zero density everywhere, as a model that always rejects
  env <- new.env()
  calls <- 0
  fake <- structure(function(theta) {
    calls <<- calls + 1
    env$last_error <- "Exception: always rejects"
    list(log_density = -Inf, gradient = rep(NaN, length(theta)))
  }, class = c("sb_stan_target", "function"),
  stan = list(dim = 2L, init = "random", unconstrained_names = c("a", "b"), names = c("a", "b"), env = env,
              model_name = "fake"))
  e <- rlang::catch_cnd(sgmcmc_density(fake, chains = 2, seed = 1), "scalebayes_error")
  expect_s3_class(e, "scalebayes_error_target")
  expect_identical(e$arg, "target")
  expect_match(conditionMessage(e), "always rejects")
  expect_identical(calls, 100)
})

test_that("the Stan target's log density is the hand-computed one plus the log-Jacobian, with Stan's names", {
  tg <- stan_conj_model()
  expect_s3_class(tg, "sb_stan_target")
  expect_identical(tg$dim, 3L)
  expect_identical(tg$names, c("mu[1]", "mu[2]", "sigma2", "sigma", "zrep"))
  expect_identical(tg$unconstrained_names, c("mu[1]", "mu[2]", "sigma2"))
  expect_identical(tg$parameter_names, c("mu[1]", "mu[2]", "sigma2"))
  expect_output(print(tg), "3 unconstrained parameters")
  u1 <- c(0.5, -0.5, log(3))
  u2 <- c(1.3, -0.2, log(0.7))
  r1 <- tg(u1)
  r2 <- tg(u2)
  # Stan drops constants (propto): differences of log densities are exact; gradients are exact
  expect_equal(r1$log_density - r2$log_density, stan_conj_logd(u1) - stan_conj_logd(u2), tolerance = 1e-10)
  expect_equal(r1$gradient, stan_conj_grad(u1), tolerance = 1e-10)
  expect_equal(r2$gradient, stan_conj_grad(u2), tolerance = 1e-10)
  # the same model given as a stanfit, with its own data
  sf <- suppressWarnings(rstan::sampling(rstan::get_stanmodel(tg$fit), data = stan_conj_data, chains = 1,
                                         iter = 100, refresh = 0, seed = 1))
  tf <- stan_target(sf)
  expect_equal(tf(u1)$log_density, r1$log_density, tolerance = 1e-12)
  expect_equal(tf(u1)$gradient, r1$gradient, tolerance = 1e-12)
  # a stanmodel with new data
  d2 <- utils::modifyList(stan_conj_data, list(b = 5))
  tm <- stan_target(rstan::get_stanmodel(tg$fit), d2)
  expect_equal(tm(u1)$log_density - tm(u2)$log_density, stan_conj_logd(u1, d2) - stan_conj_logd(u2, d2),
               tolerance = 1e-10)
  # Stan's rejections (sigma2 = 0 after underflow) are a zero density with Stan's message kept
  r0 <- tg(c(0, 0, -800))
  expect_identical(r0$log_density, -Inf)
  expect_true(all(is.nan(r0$gradient)))
  expect_match(tg$env$last_error, "cale")
})

test_that("bad data, starts and arguments of a Stan target are classed errors naming the argument", {
  tg <- stan_conj_model()
  sm <- rstan::get_stanmodel(tg$fit)
  for (bad in list(stan_conj_data[setdiff(names(stan_conj_data), "z")],          # a field missing
                   utils::modifyList(stan_conj_data, list(y1 = 1:3)),            # the wrong length
                   utils::modifyList(stan_conj_data, list(a = -1)))) {           # out of its bounds
    e <- rlang::catch_cnd(stan_target(sm, bad), "scalebayes_error")
    expect_s3_class(e, "scalebayes_error_input")
    expect_identical(e$arg, "data")
  }
  e <- rlang::catch_cnd(stan_target(sm, stan_conj_data, model_name = "x"), "scalebayes_error")
  expect_s3_class(e, "scalebayes_error_dots")
  e <- rlang::catch_cnd(stan_target(sm, stan_conj_data, init = list(mu = c(0, 0), sigma2 = -1)), "scalebayes_error")
  expect_identical(e$arg, "init")
  e <- rlang::catch_cnd(stan_target(sm, stan_conj_data, init = "zero"), "scalebayes_error")
  expect_identical(e$arg, "init")
  # a start of the wrong length, and one where the model fails (sigma2 = exp(-800) = 0): Stan's message
  e <- rlang::catch_cnd(sgmcmc_density(tg, init = c(0, 0)), "scalebayes_error")
  expect_identical(e$arg, "init")
  e <- rlang::catch_cnd(sgmcmc_density(tg, init = c(0, 0, -800)), "scalebayes_error")
  expect_s3_class(e, "scalebayes_error_target")
  expect_identical(e$arg, "init")
  expect_match(conditionMessage(e), "cale")
})

test_that("Stan's starts: the same seed gives the same draws, starts given by constrained values are used", {
  tg <- stan_conj_model()
  ctl <- sgmcmc_control(step_size = 0.01, step = sgmcmc_step(schedule = "constant"))
  run <- function(t, seed) {
    suppressWarnings(sgmcmc_density(t, iterations = 400, burnin = 200, chains = 2, control = ctl, seed = seed,
                                    quiet = TRUE))
  }
  a <- run(tg, 3)
  expect_identical(a$unconstrained_draws, run(tg, 3)$unconstrained_draws)
  expect_false(identical(a$unconstrained_draws, run(tg, 4)$unconstrained_draws))
  # the generated quantity is drawn, the transformed parameter computed, from each draw
  expect_equal(as.matrix(a)[, "sigma"], sqrt(as.matrix(a)[, "sigma2"]), tolerance = 1e-12)
  expect_equal(as.matrix(a)[, "sigma2"], exp(a$unconstrained_draws[, "sigma2"]), tolerance = 1e-12)
  # one start per chain from constrained values (on the unconstrained scale in final_state's units)
  starts <- list(list(mu = c(5, 5), sigma2 = 100), list(mu = c(-5, -5), sigma2 = 0.01))
  ti <- stan_target(rstan::get_stanmodel(tg$fit), stan_conj_data, init = starts)
  expect_equal(ti$init, cbind(c(5, 5, log(100)), c(-5, -5, log(0.01))), ignore_attr = TRUE)
  one <- suppressWarnings(sgmcmc_density(ti, iterations = 1, burnin = 0, thin = 1, chains = 2,
                                         control = sgmcmc_control(step_size = 1e-12,
                                                                  step = sgmcmc_step(schedule = "constant")),
                                         seed = 1, quiet = TRUE))
  expect_equal(unname(one$unconstrained_draws), unname(t(ti$init)), tolerance = 1e-5)
})

test_that("SGLD with every default on a Stan target matches the exact posterior on the constrained scale", {
  tg <- stan_conj_model()
  d <- stan_conj_data
  fit <- sgmcmc_density(tg, seed = 1, quiet = TRUE)
  dr <- as.matrix(fit)
  expect_identical(colnames(dr), c("mu[1]", "mu[2]", "sigma2", "sigma", "zrep"))
  expect_identical(summary(fit)$parameter, colnames(dr))
  expect_identical(posterior::variables(posterior::as_draws_df(fit)), colnames(dr))
  expect_identical(rownames(posterior_interval(fit)), colnames(dr))
  expect_identical(dim(fit$unconstrained_draws), c(nrow(dr), 3L))
  # exact posterior moments
  prec <- d$n + 1 / 100
  an <- d$a + d$m / 2
  bn <- d$b + sum(d$z^2) / 2
  m_sigma <- sqrt(bn) * exp(lgamma(an - 0.5) - lgamma(an))
  exact_mean <- c(sum(d$y1) / prec, sum(d$y2) / prec, bn / (an - 1), m_sigma)
  exact_sd <- c(sqrt(1 / prec), sqrt(1 / prec), bn / (an - 1) / sqrt(an - 2), sqrt(bn / (an - 1) - m_sigma^2))
  # Tolerances from the Monte-Carlo error: the smallest bulk ESS is about 1,000 (the default run aims at 300 per
  # chain), so a mean's se is about 0.03 sd and 0.2 sd is over 6 se; the sd's relative se is
  # sqrt((kurtosis - 1) / (4 ESS)), 0.04 for sigma2 ~ IG(13, .) (kurtosis 6.6), and SGLD's capped step adds at
  # most 10 % variance (sd ratio 1.05): [0.8, 1.25] is over 4 se from 1.05 either way. Without the Jacobian,
  # sigma2's posterior would be IG(an + 1, bn), its mean sqrt(an - 2) / an = 0.26 exact sd lower (2 se beyond
  # the tolerance); the exact check of the log density above is the sharp test of the Jacobian.
  err <- abs(colMeans(dr[, 1:4]) - exact_mean) / exact_sd
  ratio <- apply(dr[, 1:4], 2, stats::sd) / exact_sd
  expect_lt(max(err), 0.2)
  expect_gt(min(ratio), 0.8)
  expect_lt(max(ratio), 1.25)
  # the generated quantity zrep ~ N(0, sigma2): mean 0, variance E[sigma2]
  expect_lt(abs(mean(dr[, "zrep"])) / sqrt(exact_mean[3]), 0.2)
  # the KSD of the fit is computed on the unconstrained draws, where the target's gradient is
  k <- ksd(fit)
  expect_identical(k$dim, 3L)
  expect_match(fit$settings$target, "Stan model conj")
})
