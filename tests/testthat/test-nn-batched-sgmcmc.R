# Batched SG-MCMC chains of networks (nn/batched_sgmcmc.hpp, sgld_sa(model = , batch = )): a chain does not
# depend on how the chains are grouped into batches or threads (bitwise on this build), equals the unbatched chain
# of the same seed up to floating-point rounding (float64: 1e-10 relative after 60 iterations), and a diverging
# chain stops alone.

bsg_data <- function(n = 120, p = 5, seed = 2) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  list(x = x, cls = factor(sample(letters[1:3], n, TRUE)), bin = as.numeric(x[, 1] + rnorm(n) > 0),
       num = drop(x %*% seq_len(p)) / 3 + rnorm(n))
}
bsg_fit <- function(d, y, batch, threads = 1L, sampler = "sghmc", method = "sa", float64 = FALSE,
                    activation = "relu", iterations = 60L, chains = 4L, burnin = 20L, thin = 2L, ...) {
  suppress_convergence(sgld_sa(d$x, y, model = nn_mlp(c(8, 6), activation = activation), sampler = sampler,
                               method = method, iterations = iterations, batch_size = 30L, burnin = burnin, thin = thin,
                               chains = chains, seed = 5L, threads = threads, quiet = TRUE, batch = batch,
                               newx = d$x[1:4, ], control = sgmcmc_control(step_size = 1e-3, float64 = float64, ...)))
}
bsg_same <- function(a, b, tol = 0) {
  expect_equal(as.matrix(a), as.matrix(b), tolerance = tol)
  expect_equal(a$pred, b$pred, tolerance = tol)
  expect_equal(a$pred_mean, b$pred_mean, tolerance = tol)
  expect_equal(a$weights_final, b$weights_final, tolerance = tol)
  expect_equal(a$weights_mean, b$weights_mean, tolerance = tol)
  expect_equal(a$inclusion, b$inclusion, tolerance = tol)
  expect_equal(a$delta, b$delta, tolerance = tol)
  expect_equal(a$latent, b$latent, tolerance = tol)
  cols <- c("chain", "iteration", "sigma", "delta", "mean_rho", "loss", "eps", "tau", "sparsity", "accuracy",
            intersect(c("drift_ratio", "noise_ratio", "gamma"), names(a$trace)))
  expect_equal(a$trace[, cols], b$trace[, cols], tolerance = tol)
  expect_identical(a$diverged, b$diverged)
  expect_identical(a$iterations_done, b$iterations_done)
}

test_that("batched chains do not depend on the batch size or the threads (bitwise)", {
  skip_if_fast_tier()
  skip_if_no_torch()
  d <- bsg_data()
  for (y in list(d$num, d$cls, d$bin)) {
    ref <- bsg_fit(d, y, batch = 1L)
    expect_true(ref$settings$batched)
    for (b in list(2L, TRUE)) bsg_same(ref, bsg_fit(d, y, batch = b))
    bsg_same(ref, bsg_fit(d, y, batch = 2L, threads = 2L))
    bsg_same(ref, bsg_fit(d, y, batch = TRUE, threads = 2L))
  }
  # float64, SGLD, SGNHT, HAMCMC-SA and HAMCMC, a tanh network, 5 chains (groups of 1, 2, 3 and 5 members)
  for (s in c("sgld", "sgnht", "hamcmc_sa", "hamcmc")) {
    ref <- bsg_fit(d, d$bin, batch = 1L, sampler = s, float64 = TRUE, activation = "tanh", chains = 5L)
    for (b in list(2L, 3L, TRUE)) bsg_same(ref, bsg_fit(d, d$bin, batch = b, sampler = s, float64 = TRUE,
                                                        activation = "tanh", chains = 5L))
  }
})

test_that("batched chains equal the unbatched chains of the seed (float64: 1e-10) for every sampler", {
  skip_if_fast_tier()
  skip_if_no_torch()
  d <- bsg_data()
  tab <- scalebayes:::sgmcmc_samplers()
  for (s in tab$name[tab$batched]) {  # every sampler with a batched form
    for (m in c("sa", "em", "none")) {
      a <- bsg_fit(d, d$num, batch = TRUE, sampler = s, method = m, float64 = TRUE)
      b <- bsg_fit(d, d$num, batch = FALSE, sampler = s, method = m, float64 = TRUE)
      expect_true(a$settings$batched)
      expect_false(b$settings$batched)
      bsg_same(a, b, tol = 1e-10)
    }
  }
  # classification, a tanh network, per-example weights, annealing
  a <- bsg_fit(d, d$cls, batch = TRUE, float64 = TRUE, activation = "tanh",
               step = sgmcmc_step(anneal = 1.01))
  b <- bsg_fit(d, d$cls, batch = FALSE, float64 = TRUE, activation = "tanh",
               step = sgmcmc_step(anneal = 1.01))
  bsg_same(a, b, tol = 1e-10)
  expect_true(all(c("sgld", "sghmc", "sgnht", "hamcmc_sa", "hamcmc") %in% tab$name[tab$batched]))
  # HAMCMC-SA's linear-cost low-rank form and consecutive curvature pairs; magnitude pruning (every sampler's
  # own k-th value per chain), with a classification network
  for (ctl in list(list(sampler = "hamcmc_sa", lbfgs = sgmcmc_lbfgs(sa_form = "lowrank")),
                   list(sampler = "hamcmc_sa", lbfgs = sgmcmc_lbfgs(sa_form = "lowrank", curvature = "consecutive")),
                   list(sampler = "sghmc", ssgl = sgmcmc_ssgl(prune = TRUE, prune_S = 0.5, prune_D = 0.9, prune_U = 1)),
                   list(sampler = "hamcmc_sa", ssgl = sgmcmc_ssgl(prune = TRUE, prune_S = 0.3, prune_D = 0.9, prune_U = 1)))) {
    fit <- function(batch) do.call(bsg_fit, c(list(d, d$cls, batch = batch, float64 = TRUE), ctl))
    a <- fit(TRUE)
    b <- fit(FALSE)
    expect_true(a$settings$batched)
    bsg_same(a, b, tol = 1e-10)
    # pruned to s_k = S (1 - 0.9^k) every iteration, traced after the pruning: at least floor(s_k p) / p of each
    # sparse layer (p = 40, 48 and 18 weights) is 0
    if (!is.null(ctl$ssgl)) {
      S <- ctl$ssgl$prune_S
      expect_gt(min(a$trace$sparsity[a$trace$iteration > 30]), 0.85 * S * (1 - 0.9^30))
    }
  }
  # per-example weights of the likelihood
  w <- rep(c(0.5, 2), length.out = nrow(d$x))
  fw <- function(batch) {
    suppress_convergence(sgld_sa(d$x, d$num, model = nn_mlp(c(8, 6)), sampler = "sghmc", iterations = 60L,
                                 batch_size = 30L, burnin = 20L, chains = 3L, seed = 5L, quiet = TRUE, batch = batch,
                                 weights = w, newx = d$x[1:4, ],
                                 control = sgmcmc_control(step_size = 1e-3, float64 = TRUE)))
  }
  bsg_same(fw(TRUE), fw(FALSE), tol = 1e-10)
  # float32 (the default): the same chains up to single-precision rounding
  a <- bsg_fit(d, d$bin, batch = TRUE)
  b <- bsg_fit(d, d$bin, batch = FALSE)
  bsg_same(a, b, tol = 1e-4)
})

test_that("a diverging batched chain stops alone; the other chains are unchanged", {
  skip_if_no_torch()
  d <- bsg_data()
  P <- bsg_fit(d, d$num, batch = FALSE, chains = 1L, iterations = 2L, burnin = 0L, thin = 1L)$n_parameters
  set.seed(3)
  init <- matrix(rnorm(P * 3, sd = 0.3), P, 3)
  bad <- init
  bad[, 2] <- rnorm(P, sd = 30)  # chain 2 starts where a step of 0.01 explodes
  # SGLD, and the samplers with an L-BFGS memory and second gradients per chain (a stopped member's memory and
  # history stay in the group's tensors)
  for (sampler in c("sgld", "hamcmc_sa", "hamcmc")) {
  run <- function(init, batch) {
    suppress_convergence(sgld_sa(d$x, d$num, model = nn_mlp(c(8, 6)), sampler = sampler, method = "none",
                                 iterations = 200L, batch_size = 32L, chains = 3L, seed = 1L, quiet = TRUE,
                                 batch = batch, newx = d$x[1:4, ],
                                 control = sgmcmc_control(step_size = 0.01, init = init, float64 = TRUE)))
  }
  good <- run(init, TRUE)
  expect_false(any(good$diverged))
  expect_warning(one <- run(bad, TRUE), class = "scalebayes_warning_diverged")
  expect_identical(one$diverged, c(FALSE, TRUE, FALSE))
  expect_lt(one$iterations_done[2], 200)
  # chains 1 and 3 are those of the run without the diverging chain, bit for bit
  expect_identical(one$weights_final[c(1, 3), ], good$weights_final[c(1, 3), ])
  expect_identical(as.matrix(one), as.matrix(good)[good$chain != 2, , drop = FALSE])
  expect_identical(one$trace[one$trace$chain != 2, ], good$trace[good$trace$chain != 2, ], ignore_attr = TRUE)
  # and the diverged chain stops where the unbatched chain stops
  expect_warning(ref <- run(bad, FALSE), class = "scalebayes_warning_diverged")
  expect_identical(one$diverged_at, ref$diverged_at)
  expect_identical(one$diverged_why, ref$diverged_why)
  expect_equal(one$weights_final, ref$weights_final, tolerance = 1e-10)
  expect_equal(one$latent, ref$latent, tolerance = 1e-10)
  expect_equal(one$delta, ref$delta, tolerance = 1e-10)
  expect_equal(one$trace, ref$trace, tolerance = 1e-10, ignore_attr = TRUE)
  }
})

test_that("batch = TRUE without a batched form is a classed error; 'auto' falls back", {
  skip_if_no_torch()
  d <- bsg_data()
  run <- function(batch, ..., chains = 2L) {
    suppress_convergence(sgld_sa(d$x, d$num, iterations = 6L, batch_size = 32L, chains = chains, seed = 1L,
                                 quiet = TRUE, batch = batch, ...))
  }
  ctl <- sgmcmc_control(step_size = 1e-3)
  expect_error(run(TRUE, model = nn_mlp(4, dropout = 0.2), control = ctl), "cannot run batched",
               class = "scalebayes_error_input")
  f <- suppressWarnings(run("auto", model = nn_mlp(4, dropout = 0.2), control = ctl))
  expect_identical(f$settings$batch, "auto")
  expect_false(f$settings$batched)
  expect_match(f$settings$unbatched, "dropout layer draws random numbers")  # the fit says why
  # every sampler, pruning included, has a batched form
  expect_true(suppressWarnings(run(TRUE, model = nn_mlp(4), sampler = "hamcmc_sa", control = ctl))$settings$batched)
  expect_true(suppressWarnings(hamcmc_sa(d$x, d$num, model = nn_mlp(4), iterations = 6L, quiet = TRUE,
                                         batch = TRUE, control = ctl))$settings$batched)
  expect_true(run(TRUE, model = nn_mlp(4), control = sgmcmc_control(step_size = 1e-3, ssgl = sgmcmc_ssgl(prune = TRUE)))$settings$batched)
  expect_true(run("auto", model = nn_mlp(4), control = ctl)$settings$batched)
  expect_false(run(FALSE, model = nn_mlp(4), control = ctl)$settings$batched)
  expect_error(run("yes", model = nn_mlp(4), control = ctl), "batch", class = "scalebayes_error_input")
  expect_error(run(0, model = nn_mlp(4), control = ctl), "batch", class = "scalebayes_error_input")
  expect_error(sgld_sa(d$x, d$num, batch = TRUE), "networks only", class = "scalebayes_error_input")
  # the engine decides (nn::decide_batch()): its refusal names the argument and the fix, and with the step
  # chosen by the warm-up it comes before any pilot runs (the warm-up asks the engine first)
  e <- tryCatch(run(TRUE, model = nn_mlp(4, dropout = 0.2)), error = identity)
  expect_s3_class(e, "scalebayes_error_input")
  expect_identical(e$arg, "batch")
  expect_match(conditionMessage(e), "batch = FALSE", fixed = TRUE)
  expect_match(conditionMessage(e), "one network per chain", fixed = TRUE)
  # "auto" on one chain runs one network; in chunks of one chain through future the call's chains decide, so the
  # draws are those of the batched call
  expect_identical(run("auto", model = nn_mlp(4), control = ctl, chains = 1L)$settings$unbatched, "one chain")
  skip_if_not_installed("future")
  whole <- run("auto", model = nn_mlp(4), control = ctl)
  withr::with_options(list(future.globals.onReference = NULL), {
    old <- future::plan(future::sequential)
    on.exit(future::plan(old), add = TRUE)
    chunked <- run("auto", model = nn_mlp(4), control = ctl, future = TRUE, chunks = 2L)
  })
  expect_true(chunked$settings$batched)
  expect_identical(as.matrix(chunked), as.matrix(whole))
})
