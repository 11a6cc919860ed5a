# Precomputes vignettes/results/hamcmc-sa-results.rds for vignette("hamcmc-sa"): Figures 1 and 2 of Wang, Deng & Lin
# (2021), "An adaptive Hessian approximated stochastic gradient MCMC method" (J. Comput. Phys. 432, 110150).
#
# Run from the package root with the package installed:
#   nice -n 10 Rscript vignettes/precompute-hamcmc.R
# Resumable: every finished part is saved at once and skipped on a rerun (delete the .rds to start afresh).
# Cost (measured on the shared 2-core machine, one thread): Figure 1 about 5 minutes; Figure 2 15-85 s per data
# set (50 data sets: `seconds` of every run is stored).
suppressPackageStartupMessages(library(scalebayes))
out <- "vignettes/results/hamcmc-sa-results.rds"
res <- if (file.exists(out)) readRDS(out) else list()
save_res <- function() saveRDS(res, out)
threads <- 1L

# ---- Figure 1: the banana target (section 5.1) ----
if (is.null(res$fig1)) {
  t0 <- proc.time()[["elapsed"]]
  res$fig1 <- hamcmc_banana_study(iterations = 40000, burnin = 2000, chains = 4, trajectory = 500, n_energy = 2000,
                                  seed = 1, threads = threads)
  res$fig1$seconds <- proc.time()[["elapsed"]] - t0
  save_res()
}

# Replicates: the energy distances of five seeds, for the long chains (40 000 iterations) and short ones (4 000,
# burn-in 2 000: how fast each arm mixes, not only its bias).
if (is.null(res$fig1_reps)) {
  t0 <- proc.time()[["elapsed"]]
  one <- function(seed, iterations, burnin) {
    s <- hamcmc_banana_study(iterations = iterations, burnin = burnin, chains = 4, trajectory = 2, n_energy = 2000,
                             seed = seed, threads = threads)
    data.frame(seed = seed, iterations = iterations, label = s$arms$label, energy = s$arms$energy,
               diverged_at = s$arms$diverged_at, floor = s$floor)
  }
  res$fig1_reps <- do.call(rbind, c(lapply(1:5, one, iterations = 40000, burnin = 2000),
                                    lapply(1:5, one, iterations = 4000, burnin = 2000)))
  res$fig1_reps_seconds <- proc.time()[["elapsed"]] - t0
  save_res()
}

# ---- Figure 2: large p, small n regression with the SSGL prior (section 5.1) ----
# n = 100, p = 200, x ~ N_p(0, Sigma), Sigma_ij = 0.8^|i-j|, beta = (3, 1, 0, ..., 0), noise variance 3; 50 new
# points. SSGL nu = lambda = 1, v1 = 100, v0 = 0.1, delta = 0.5, a = 1, b = p; omega_k = 2 (50 + k)^-0.75 for the
# latents and the preconditioner; tau = 1; learning rates 0.1 (HAMCMC, HAMCMC-SA) and 0.001 (SGLD), constant.
# Not given in the paper, chosen here: batch 50, memory M = 3 (as in the paper's first example), 4 000
# iterations, no intercept, the running posterior mean from iteration 1 (the paper's "posterior mean in each
# step"), kept every 10 iterations; the posterior mean of the left panel is the mean of the second half.
fig2_data <- function(r, n = 100, p = 200, n_test = 50) {
  set.seed(1000 + r)
  L <- chol(0.8^abs(outer(seq_len(p), seq_len(p), "-")))
  beta <- c(3, 1, rep(0, p - 2))
  x <- matrix(stats::rnorm(n * p), n) %*% L
  xt <- matrix(stats::rnorm(n_test * p), n_test) %*% L
  list(x = x, y = drop(x %*% beta) + stats::rnorm(n, sd = sqrt(3)), x_test = xt,
       y_test = drop(xt %*% beta) + stats::rnorm(n_test, sd = sqrt(3)), beta = beta)
}
fig2_arms <- data.frame(
  label = c("SGLD", "HAMCMC", "HAMCMC-SA", "HAMCMC (unnormalized)", "HAMCMC-SA (unnormalized)"),
  sampler = c("sgld", "hamcmc", "hamcmc_sa", "hamcmc", "hamcmc_sa"),
  step_size = c(0.001, 0.1, 0.1, 0.1, 0.1),
  normalize = c(FALSE, TRUE, TRUE, FALSE, FALSE), stringsAsFactors = FALSE)
iterations <- 4000
thin <- 10
datasets <- 50
# Runs made by an older engine are not mixed with new ones: the part is recomputed when the engine's
# HAMCMC safeguards change (two-sided damping and same-minibatch curvature pairs since 2026-11-27).
# One chain per arm on the paper's raw scale (the prior's v0, v1 in the units of x and y): sgld_sa()'s defaults
# since the trust work (4 chains, standardized columns) would stack the chains' draws and change the prior.
fig2_engine <- "2026-11-27 two-sided damping, same-batch pairs; one chain, raw scale"
if (!identical(res$fig2$engine, fig2_engine)) res$fig2 <- NULL
if (is.null(res$fig2)) {
  res$fig2 <- list(arms = fig2_arms, runs = list(), datasets = datasets, engine = fig2_engine,
                   settings = list(n = 100, p = 200, n_test = 50, batch_size = 50, memory = 3,
                                   iterations = iterations, thin = thin, omega = "2 (50 + k)^-0.75"))
}
for (r in seq_len(datasets)) {
  key <- paste0("data", r)
  if (!is.null(res$fig2$runs[[key]])) next
  d <- fig2_data(r)
  runs <- list()
  for (a in seq_len(nrow(fig2_arms))) {
    ctl <- sgmcmc_control(step_size = fig2_arms$step_size[a],
                          step = sgmcmc_step(schedule = "constant", temperature = 1),
                          ssgl = sgmcmc_ssgl(sa_A = 2, sa_Z = 50, sa_alpha = 0.75, nu = 1, lambda = 1, delta_init = 0.5, a = 1, b = 200),
                          lbfgs = sgmcmc_lbfgs(memory = 3, precond_A = 2, precond_Z = 50, precond_alpha = 0.75, normalize = fig2_arms$normalize[a], sa_form = "matrix", precond_init = "identity"))  # G_1 = I, Algorithm 2 as printed
    t0 <- proc.time()[["elapsed"]]
    fit <- tryCatch(withCallingHandlers(
      sgld_sa(d$x, d$y, sampler = fig2_arms$sampler[a], iterations = iterations, batch_size = 50, v0 = 0.1,
              v1 = 100, intercept = FALSE, burnin = 0, thin = thin, seed = r, threads = threads, quiet = TRUE,
              chains = 1, standardize = FALSE, control = ctl),
      scalebayes_warning = function(w) invokeRestart("muffleWarning")),
      scalebayes_error_divergence = function(e) e)
    secs <- proc.time()[["elapsed"]] - t0
    if (inherits(fit, "condition")) {
      runs[[a]] <- list(diverged = TRUE, message = conditionMessage(fit), seconds = secs)
      next
    }
    dr <- fit$draws
    run_mean <- apply(dr, 2, cumsum) / seq_len(nrow(dr))
    pred <- run_mean %*% t(d$x_test)
    err <- sweep(pred, 2, d$y_test)
    half <- seq(nrow(dr) %/% 2 + 1, nrow(dr))
    runs[[a]] <- list(diverged = FALSE, iteration = seq_len(nrow(dr)) * thin, mse = rowMeans(err^2),
                      mae = rowMeans(abs(err)), beta_hat = unname(colMeans(dr[half, , drop = FALSE])),
                      seconds = secs)
  }
  names(runs) <- fig2_arms$label
  res$fig2$runs[[key]] <- runs
  res$fig2$beta <- d$beta
  # the oracle: least squares on the two true predictors, test MSE / MAE
  ols <- stats::lm.fit(d$x[, 1:2], d$y)$coefficients
  e <- drop(d$x_test[, 1:2] %*% ols) - d$y_test
  res$fig2$oracle[[key]] <- c(mse = mean(e^2), mae = mean(abs(e)))
  save_res()
  message("Figure 2: data set ", r, " done")
}
res$session <- list(R = R.version.string, scalebayes = as.character(utils::packageVersion("scalebayes")),
                    date = format(Sys.time(), tz = "UTC", usetz = TRUE),
                    command = "nice -n 10 Rscript vignettes/precompute-hamcmc.R")
save_res()
