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
  # pSGLD reads no metric (it adapts its own preconditioner)
  mc <- sgmcmc_control(step_size = 0.01, step = sgmcmc_step(schedule = "constant", metric = "dense"))
  w <- expect_warning(fit("psgld", mc), class = "scalebayes_warning_unused")
  expect_match(conditionMessage(w), "metric", fixed = TRUE)
  tab <- sgmcmc_samplers()
  expect_identical(tab$name[tab$rmsprop], "psgld")
  expect_false(tab$metric[tab$name == "psgld"])
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
