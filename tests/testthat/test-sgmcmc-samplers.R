# Samplers added through the step seam (issue 60, item 4): pSGLD (sgmcmc/steps.hpp, PsgldStep). Their
# exact-Gaussian and NUTS checks with every default sit with the other samplers' in test-sgmcmc-trust.R; the
# loops over sgmcmc_samplers()$name (test-sgld-sa.R, test-sgmcmc-density.R, test-nn-batched-sgmcmc.R) cover their
# rows. Here: their settings, and the properties that make them what they are.

test_that("pSGLD's settings are validated with classed errors and warned about for other samplers", {
  expect_error(sgmcmc_step(rmsprop_alpha = 1), class = "scalebayes_error_input")
  expect_error(sgmcmc_step(rmsprop_alpha = 0), class = "scalebayes_error_input")
  expect_error(sgmcmc_step(rmsprop_lambda = 0), class = "scalebayes_error_input")
  expect_error(sgmcmc_step(rmsprop_lambda = Inf), class = "scalebayes_error_input")
  expect_error(sgmcmc_step(rmsprop_adapt = "sometimes"), class = "scalebayes_error_input")
  expect_identical(sgmcmc_step(rmsprop_adapt = "always")$rmsprop_adapt, "always")
  tg <- sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(2))
  fit <- function(s, ctl) suppress_convergence(sgmcmc_density(tg, init = c(0, 0), sampler = s, iterations = 200,
                                                               chains = 1, seed = 1, quiet = TRUE, control = ctl))
  rc <- sgmcmc_control(step_size = 0.01, step = sgmcmc_step(schedule = "constant", rmsprop_alpha = 0.9))
  w <- expect_warning(fit("sgld", rc), class = "scalebayes_warning_unused")
  expect_match(conditionMessage(w), "rmsprop_alpha", fixed = TRUE)
  expect_no_warning(fit("psgld", rc), class = "scalebayes_warning_unused")
  # pSGLD reads the warm-up's metric (its RMSprop diagonal then adapts in the whitened coordinates); HAMCMC's
  # L-BFGS preconditioner is its own: in a regression a metric setting is unused there, on a density target it
  # chooses the Laplace whitening HAMCMC runs on
  mc <- sgmcmc_control(step_size = 0.01, step = sgmcmc_step(schedule = "constant", metric = "dense"))
  expect_no_warning(fit("psgld", mc), class = "scalebayes_warning_unused")
  expect_no_warning(fit("hamcmc", mc), class = "scalebayes_warning_unused")
  set.seed(1)
  x <- matrix(rnorm(60), 20)
  w <- expect_warning(suppress_convergence(sgld_sa(x, x[, 1] + rnorm(20), sampler = "hamcmc", method = "none",
                                                   iterations = 200, seed = 1, quiet = TRUE, control = mc)),
                      class = "scalebayes_warning_unused")
  expect_match(conditionMessage(w), "metric", fixed = TRUE)
  tab <- sgmcmc_samplers()
  expect_identical(tab$name[tab$rmsprop], "psgld")
  expect_true(tab$metric[tab$name == "psgld"])
  expect_false(any(tab$metric[tab$preconditioned]))
})

test_that("pSGLD's step is RMSprop's: a target scaled by s gives the chain scaled by s at step s eps", {
  # theta = s u: the gradient scales by 1 / s, V by 1 / s^2, G by s, so the drift eps_s G g and the noise
  # sqrt(2 eps_s G / N) both scale by s when eps_s = s eps (lambda, a floor on sqrt(V), is set negligible).
  # SGLD's chain does not scale so (its drift eps g would shrink by 1 / s): the check can fail.
  S <- matrix(c(1, 0.4, 0.4, 2), 2)
  run <- function(s, sampler = "psgld") {
    sgmcmc_density(sgmcmc_target("gaussian", mean = c(1, -1) * s, cov = S * s^2), init = c(0.5, 0.5) * s,
                   sampler = sampler, iterations = 600, burnin = 300, chains = 2, seed = 4, quiet = TRUE,
                   control = sgmcmc_control(step_size = 0.05 * s, step = sgmcmc_step(schedule = "constant",
                                                                                    rmsprop_lambda = 1e-14)))
  }
  a <- suppress_convergence(run(1))
  for (s in c(10, 0.1)) {
    expect_equal(as.matrix(suppress_convergence(run(s))) / s, as.matrix(a), tolerance = 1e-8, ignore_attr = TRUE)
  }
  b <- suppressWarnings(run(10, "sgld"))
  expect_gt(max(abs(as.matrix(b) / 10 - as.matrix(a))), 0.1)
})

test_that("the cyclical schedule: Zhang et al.'s cosine cycles, no draw and (by default) no noise while exploring", {
  expect_error(sgmcmc_step(schedule = "cyclical", cycles = 0), class = "scalebayes_error_input")
  expect_error(sgmcmc_step(schedule = "cyclical", explore = 1), class = "scalebayes_error_input")
  expect_error(sgmcmc_step(schedule = "cyclical", explore = -0.1), class = "scalebayes_error_input")
  expect_error(sgmcmc_step(explore_noise = NA), class = "scalebayes_error_input")
  tg <- sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(2))
  fit <- function(...) suppress_convergence(sgmcmc_density(tg, init = c(3, -3), sampler = "sgld", iterations = 400,
                                                           burnin = 0, chains = 1, seed = 2, quiet = TRUE,
                                                           control = sgmcmc_control(step_size = 0.4, trace_every = 1,
                                                                                    step = sgmcmc_step(schedule = "cyclical", ...))))
  expect_error(fit(cycles = 401), class = "scalebayes_error_input")
  f <- fit(cycles = 4, explore = 0.25)
  k <- seq_len(400)
  t <- ((k - 1) %% 100) / 100
  expect_equal(f$trace$eps, 0.4 / 2 * (cos(pi * t) + 1), tolerance = 1e-14)
  # the exploration stage (t < 0.25) runs at zero temperature and keeps nothing: 4 x 75 draws
  expect_identical(is.infinite(f$trace$tau), t < 0.25)
  expect_equal(nrow(as.matrix(f)), 300)
  # without noise the exploration is gradient ascent: one cycle of 25 iterations, every position t < 0.99, from
  # (3, -3) on N(0, I) is x <- x (1 - eps_k), a deterministic path, and keeps no draw
  h <- suppressWarnings(sgmcmc_density(tg, init = c(3, -3), sampler = "sgld", iterations = 25, burnin = 0,
                                       chains = 1, seed = 2, quiet = TRUE,
                                       control = sgmcmc_control(step_size = 0.4, step = sgmcmc_step(
                                         schedule = "cyclical", cycles = 1, explore = 0.99))))
  y <- c(3, -3)
  for (i in 1:25) y <- y * (1 - 0.4 / 2 * (cos(pi * (i - 1) / 25) + 1))
  expect_equal(drop(h$final_state), y, tolerance = 1e-12, ignore_attr = TRUE)
  expect_equal(nrow(as.matrix(h)), 0)
  # explore_noise = TRUE: the exploration keeps its noise (temperature 1), still no draws
  n <- fit(cycles = 4, explore = 0.25, explore_noise = TRUE)
  expect_true(all(n$trace$tau == 1))
  expect_equal(nrow(as.matrix(n)), 300)
  # the cyclical settings without the cyclical schedule are ignored, and the call says so (and which they are)
  run_plain <- function(step) sgmcmc_density(tg, init = c(3, -3), sampler = "sgld", iterations = 400, burnin = 0,
                                             chains = 1, seed = 2, quiet = TRUE,
                                             control = sgmcmc_control(step_size = 0.4, step = step))
  w <- expect_warning(suppress_convergence(run_plain(sgmcmc_step(schedule = "constant", cycles = 10, explore = 0.5))),
                      class = "scalebayes_warning_unused")
  expect_match(conditionMessage(w), "cycles.*explore")
  expect_match(conditionMessage(w), "cyclical")
  expect_equal(as.matrix(suppressWarnings(run_plain(sgmcmc_step(schedule = "constant", cycles = 10)))),
               as.matrix(suppress_convergence(run_plain(sgmcmc_step(schedule = "constant")))))
  expect_no_warning(fit(cycles = 4), class = "scalebayes_warning_unused")
})

test_that("cSGLD visits both modes of a well-separated mixture that SGLD with the same budget never leaves", {
  skip_if_fast_tier()
  # 0.3 N(-5, 1) + 0.7 N(5, 1) (a barrier of 12.5 nats), 4 chains of 1e5 iterations from the larger mode.
  # SGLD at an accurate constant step (0.05) stays in its mode (measured at seeds 1-3: no draw below 0 in any
  # chain). cSGLD (peak 1.5, 50 cycles of 2,000, a quarter exploring) hops while its step is large: every chain
  # holds both modes, and the pooled share of the smaller mode is near its weight 0.3: measured 0.364 / 0.376 /
  # 0.283 at seeds 1-3 (per chain 0.17-0.49). Its spread, about 0.05 between seeds (200 cycles each), gives the
  # band 0.3 +- 4 se = [0.1, 0.5]; equal weights (a tempered target's limit) sit at its upper end. (With shorter
  # cycles the exchange happens at larger steps, nearer that limit: 200 cycles of 500 gave 0.454; with a lower
  # peak, 1.2, hops are too rare: 0.08 / 0.11 at seeds 2, 3. inst/design-sgmcmc.md, "Cyclical SG-MCMC".)
  mix <- function(b) {
    a <- 0.3 * dnorm(b, -5); c <- 0.7 * dnorm(b, 5)
    list(log_density = log(a + c), gradient = (a * (-(b + 5)) + c * (-(b - 5))) / (a + c))
  }
  run <- function(eps, step) {
    f <- suppress_convergence(sgmcmc_density(mix, init = 5, sampler = "sgld", iterations = 1e5, burnin = 0,
                                             chains = 4, seed = 1, quiet = TRUE,
                                             control = sgmcmc_control(step_size = eps, step = step)))
    tapply(as.matrix(f)[, 1] < 0, f$chain, mean)
  }
  plain <- run(0.05, sgmcmc_step(schedule = "constant"))
  expect_true(all(plain < 0.01), label = paste("SGLD shares below 0:", paste(round(plain, 3), collapse = " ")))
  cyc <- run(1.5, sgmcmc_step(schedule = "cyclical", cycles = 50, explore = 0.25))
  expect_true(all(cyc > 0.1 & cyc < 0.9), label = paste("cSGLD shares below 0:", paste(round(cyc, 3), collapse = " ")))
  expect_gt(mean(cyc), 0.1)
  expect_lt(mean(cyc), 0.5)
})

test_that("pSGLD with every default on raw Boston: the latent warm-up's held latents, chains that agree", {
  d <- MASS::Boston
  f <- expect_no_warning(sgld_sa(medv ~ ., data = d, sampler = "psgld", seed = 1, quiet = TRUE))
  # (before it got the latent warm-up, each chain's own SA split them on dis: max R-hat 1.53, bulk ESS 7)
  expect_lte(max(f$diagnostics$convergence$rhat), 1.01)
  expect_false(is.null(f$warmup$latent_start))
  expect_gt(min(f$diagnostics$convergence$ess_bulk), 100)
})
