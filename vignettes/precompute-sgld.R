# Precompute the reproductions of Deng, Zhang, Liang & Lin (2019) shown in vignettes/sgld-sa.Rmd:
#   Table 1 / Figure 1 (linear regression, n = 100, p = 1000, Sigma_ij = 0.6^|i-j|, 500 000 iterations), with SGLD
#     and with SGHMC, each in two routes (below);
#   Table 4 (logistic regression, n = 500, p = 1000, Sigma_ij = 0.3^|i-j|, 500 000 iterations), two routes;
#   a robustness study of Table 1 over 10 replicated data sets.
# Routes:
#   "exact":   the method as the paper describes it (section 5.1): minibatch 50, omega_k = 10 (k + 1000)^-0.7,
#              beta starts at 0, rho at 1 (slab), posterior averages over the second half of the run.
#   "authors": the authors' computation, as their public notebook (large-p-small-n-linear-regression, in the
#              repository WayneDW/Bayesian-Sparse-Deep-Learning) ran it: full-batch gradients, omega_k =
#              min(0.1, 1000 (k + 100)^-0.7) (a constant 0.1 for k < 518 000), kappa0 = kappa1 = 1, rho = 0.5 and
#              beta ~ N(0, 0.1^2) at the start, averages over thinned iterations 100 000, 100 100, ..., 500 000,
#              and their data generation (beta_1..3 of the training response is the last of 100 draws, the test
#              response uses the mean of the draws). Table 4 has no public code: there the route uses the same
#              latent-variable settings with the paper's minibatch of 50 on our simulated data.
# Plain SGLD in both routes freezes kappa0 = kappa1 = 1 and sigma = sigma init (the authors' baseline, which does
# not involve v0: it is run once per sigma init and shown in both v0 columns, as the paper's identical
# SGLD sigma = 2 cells suggest).
#   a data set x computation swap (the two routes on each other's Table 1 data set) and the authors'
#   computation on 6 data sets of their data generation (100 000 iterations).
# Writes vignettes/results/sgld-sa-results.rds. Run from the package root with the package installed:
#   nice Rscript vignettes/precompute-sgld.R [iterations]     (about 30 minutes on one shared core)
# SGLD_PART=extra nice Rscript vignettes/precompute-sgld.R  only (re)computes the last two studies and adds them;
# SGLD_PART=plain only the two readings of the notebook's plain-SGLD prior.
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
iterations <- if (length(args)) as.integer(args[1]) else 500000L
arms <- c("SA" = "sa", "EM" = "em", "plain" = "none")
t_start <- proc.time()[["elapsed"]]

# The authors' data generation for Table 1 (their notebook, rewritten): X ~ N_p(0, Sigma) by MASS::mvrnorm,
# noise N(0, 3); beta_1..3 are drawn 100 times and the training response uses the last draw; the test set
# (drawn after the runs in the notebook, here right away) uses the mean of the 101 beta vectors.
authors_linear_data <- function(seed = 0, n = 100, p = 1000, corr = 0.6) {
  set.seed(seed)
  S <- corr^abs(outer(seq_len(p), seq_len(p), "-"))
  x <- MASS::mvrnorm(n, rep(0, p), S)
  beta <- c(3, 2, 1, rep(0, p - 3))
  eps <- stats::rnorm(n, 0, sqrt(3))
  draws <- matrix(beta, 1)
  for (i in seq_len(n)) {
    beta[1:3] <- stats::rnorm(3, c(3, 2, 1), 0.2)
    draws <- rbind(draws, beta)
  }
  y <- drop(x %*% beta + eps)
  init <- stats::rnorm(p, 0, 0.1)
  x_test <- MASS::mvrnorm(n / 2, rep(0, p), S)
  beta_test <- colMeans(draws)
  y_test <- drop(x_test %*% beta_test + stats::rnorm(n / 2, 0, sqrt(3)))
  colnames(x) <- colnames(x_test) <- paste0("V", seq_len(p))
  list(x = x, y = y, x_test = x_test, y_test = y_test, beta = beta, beta_test = beta_test, init = init)
}

route_settings <- function(route, d, family, sigma, sampler, iters = iterations) {
  p <- ncol(d$x)
  step_size <- if (sampler == "sghmc") 1e-4 else 1e-3
  step <- sgmcmc_step(power = 1 / 3, friction = 0.1)
  ssgl <- list(a = 1, b = p, nu = 1, lambda = 1, delta_init = 0.5, sigma_init = sigma)
  if (route == "exact") {
    list(control = sgmcmc_control(step_size = step_size, step = step,
                                  ssgl = c(ssgl, list(sa_A = 10, sa_Z = 1000, sa_alpha = 0.7, rho_init = 1))),
         batch_size = 50, burnin = iters %/% 2, thin = NULL)
  } else {
    init <- if (is.null(d$init)) withr::with_seed(0, stats::rnorm(p, 0, 0.1)) else d$init
    list(control = sgmcmc_control(step_size = step_size, step = step, init = init,
                                  ssgl = c(ssgl, list(sa_A = 1000, sa_Z = 100, sa_alpha = 0.7, sa_cap = 0.1,
                                                      rho_init = 0.5, kappa0_init = 1, kappa1_init = 1))),
         batch_size = if (family == "gaussian") nrow(d$x) else 50,
         burnin = iters %/% 5 - 100L, thin = 100L)
  }
}

run_grid <- function(d, family, grid, route, sampler = "sgld", fig_setting = NULL, arm_set = arms) {
  rows <- list()
  traces <- list()
  for (g in seq_len(nrow(grid))) {
    for (arm in names(arm_set)) {
      m <- arm_set[[arm]]
      if (m == "none" && g > 1 && any(grid$sigma[seq_len(g - 1)] == grid$sigma[g])) {
        # plain SGLD does not involve v0: the run for this sigma init is shown again
        r <- rows[[which(vapply(rows, function(x) x$arm == arm && x$sigma_init == grid$sigma[g], TRUE))[1]]]
        r$v0 <- grid$v0[g]
        rows[[length(rows) + 1]] <- r
        next
      }
      s <- route_settings(route, d, family, grid$sigma[g], sampler)
      t <- system.time(fit <- sgld_sa(d$x, d$y, family = family, method = m, sampler = sampler,
                                      iterations = iterations, batch_size = s$batch_size, v0 = grid$v0[g], v1 = 10,
                                      intercept = FALSE, burnin = s$burnin, thin = s$thin, keep_draws = 1:3,
                                      newx = d$x_test, seed = 2019, threads = 1, quiet = TRUE,
                                      control = s$control))
      pr <- predict(fit, type = "response")$fit
      rows[[length(rows) + 1]] <- data.frame(
        family = family, route = route, sampler = sampler, arm = arm, v0 = grid$v0[g], sigma_init = grid$sigma[g],
        MAE = mean(abs(pr - d$y_test)), MSE = mean((pr - d$y_test)^2),
        b1 = coef(fit)[[1]], b2 = coef(fit)[[2]], b3 = coef(fit)[[3]],
        b1_sd = fit$coef_sd[[1]], b2_sd = fit$coef_sd[[2]], b3_sd = fit$coef_sd[[3]],
        selected = sum(fit$inclusion > 0.5), sigma = fit$latent$sigma, delta = fit$latent$delta,
        seconds = t[["elapsed"]], row.names = NULL)
      cat(sprintf("%s %s %s %s v0=%g sigma=%g: MAE %.3f MSE %.3f b3 %.2f (%.1f s, total %.0f s)\n", family, route,
                  sampler, arm, grid$v0[g], grid$sigma[g], rows[[length(rows)]]$MAE, rows[[length(rows)]]$MSE,
                  coef(fit)[[3]], t[["elapsed"]], proc.time()[["elapsed"]] - t_start))
      if (!is.null(fig_setting) && grid$v0[g] == fig_setting$v0 && grid$sigma[g] == fig_setting$sigma) {
        traces[[arm]] <- list(draws = fit$draws, iteration = s$burnin + seq_len(nrow(fit$draws)) * fit$settings$thin,
                              latent = fit$trace, inclusion = unname(fit$inclusion))
      }
    }
  }
  list(table = do.call(rbind, rows), traces = traces, beta_true = d$beta[1:3], beta_test = d$beta_test[1:3])
}

# Robustness over data sets: 10 replicated Table 1 data sets (seeds 101..110), v0 = 0.01, sigma init = 1,
# 100 000 iterations per run (a fifth of the paper's run, to keep the precomputation short), exact route.
robustness <- function(reps = 101:110, iters = 100000L) {
  rows <- list()
  for (r in reps) {
    d <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, family = "gaussian", n_test = 50, seed = r)
    for (arm in names(arms)) {
      fit <- sgld_sa(d$x, d$y, method = arms[[arm]], iterations = iters, batch_size = 50, v0 = 0.01, v1 = 10,
                     intercept = FALSE, keep_draws = 1:3, newx = d$x_test, seed = r, threads = 1, quiet = TRUE,
                     control = sgmcmc_control(ssgl = sgmcmc_ssgl(b = 1000, rho_init = 1, sigma_init = 1)))
      rows[[length(rows) + 1]] <- data.frame(rep = r, arm = arm, MSE = mean((predict(fit)$fit - d$y_test)^2),
                                             b3 = coef(fit)[[3]], beta3 = d$beta[3],
                                             selected_true = sum(fit$inclusion[1:3] > 0.5),
                                             selected_false = sum(fit$inclusion[-(1:3)] > 0.5))
    }
    cat(sprintf("robustness data set %d done (total %.0f s)\n", r, proc.time()[["elapsed"]] - t_start))
  }
  list(table = do.call(rbind, rows), iterations = iters)
}

# Data x computation: the two routes swapped between the two Table 1 data sets (sigma init = 1, SA and EM), to
# tell what comes from the data set and what from the computation.
crossed <- function(lin, lin_authors) {
  grid <- expand.grid(v0 = c(0.01, 0.1), sigma = 1)
  a <- run_grid(lin, "gaussian", grid, "authors", arm_set = arms[c("SA", "EM")])$table
  b <- run_grid(lin_authors, "gaussian", grid, "exact", arm_set = arms[c("SA", "EM")])$table
  a$data <- "ours (seed 1)"
  b$data <- "authors' (seed 0)"
  rbind(a, b)
}

# The authors' computation on 6 data sets of their data generation (seeds 0..5), v0 = 0.1 and 0.01, sigma init
# = 1, 100 000 iterations (a fifth of the paper's run): does their computation give EM > SA?
authors_replicates <- function(seeds = 0:5, iters = 100000L) {
  rows <- list()
  for (sd in seeds) {
    d <- authors_linear_data(seed = sd)
    # SA and EM with the same chain seed (same minibatches and noise), and EM with another chain seed (as in the
    # notebook, where the arms run one after the other in one R session and so get different noise)
    for (v0 in c(0.01, 0.1)) for (run in c("SA", "EM", "EM2")) {
      arm <- sub("2", "", run)
      s <- route_settings("authors", d, "gaussian", 1, "sgld", iters)
      fit <- sgld_sa(d$x, d$y, method = arms[[arm]], iterations = iters, batch_size = s$batch_size, v0 = v0,
                     v1 = 10, intercept = FALSE, burnin = s$burnin, thin = s$thin, keep_draws = 1:3, newx = d$x_test,
                     seed = if (run == "EM2") 2020 else 2019, threads = 1, quiet = TRUE,
                     control = s$control)
      rows[[length(rows) + 1]] <- data.frame(seed = sd, v0 = v0, arm = run, MSE = mean((predict(fit)$fit - d$y_test)^2),
                                             b1 = coef(fit)[[1]], b2 = coef(fit)[[2]], b3 = coef(fit)[[3]],
                                             beta3 = d$beta[3], selected = sum(fit$inclusion > 0.5))
    }
    cat(sprintf("authors' replicate data set %d done (total %.0f s)\n", sd, proc.time()[["elapsed"]] - t_start))
  }
  list(table = do.call(rbind, rows), iterations = iters)
}
# In the notebook's SGLD arm the Laplace term stands on a line of its own after a complete expression: read
# literally by R it is dropped, and the frozen prior is N(0, sigma^2) alone (kappa0 = 0, kappa1 = 1). Both
# readings, exact method, our data set.
plain_readings <- function(d) {
  rows <- list()
  for (sig in c(2, 1)) for (k0 in c(1, 0)) {
    fit <- sgld_sa(d$x, d$y, method = "none", iterations = iterations, batch_size = 50, v0 = 0.1, v1 = 10,
                   intercept = FALSE, keep_draws = 1:3, newx = d$x_test, seed = 2019, threads = 1, quiet = TRUE,
                   control = sgmcmc_control(ssgl = sgmcmc_ssgl(b = ncol(d$x), rho_init = 1, sigma_init = sig, kappa0_init = k0, kappa1_init = 1)))
    pr <- predict(fit)$fit
    rows[[length(rows) + 1]] <- data.frame(sigma_init = sig, kappa0 = k0, kappa1 = 1, MAE = mean(abs(pr - d$y_test)),
                                           MSE = mean((pr - d$y_test)^2))
  }
  do.call(rbind, rows)
}
if (identical(Sys.getenv("SGLD_PART"), "plain")) {
  lin <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, family = "gaussian", n_test = 50, seed = 1)
  out <- readRDS("vignettes/results/sgld-sa-results.rds")
  out$plain_readings <- plain_readings(lin)
  out$minutes <- out$minutes + (proc.time()[["elapsed"]] - t_start) / 60
  saveRDS(out, "vignettes/results/sgld-sa-results.rds", version = 2)
  cat("added the plain-SGLD readings to vignettes/results/sgld-sa-results.rds\n")
  quit(save = "no")
}
if (identical(Sys.getenv("SGLD_PART"), "extra")) {
  lin <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, family = "gaussian", n_test = 50, seed = 1)
  out <- readRDS("vignettes/results/sgld-sa-results.rds")
  out$crossed <- crossed(lin, authors_linear_data(seed = 0))
  out$authors_replicates <- authors_replicates()
  out$minutes <- out$minutes + (proc.time()[["elapsed"]] - t_start) / 60
  saveRDS(out, "vignettes/results/sgld-sa-results.rds", version = 2)
  cat("added the crossed and replicate studies to vignettes/results/sgld-sa-results.rds\n")
  quit(save = "no")
}

lin <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, family = "gaussian", n_test = 50, seed = 1)
lin_authors <- authors_linear_data(seed = 0)
grid1 <- expand.grid(v0 = c(0.01, 0.1), sigma = c(2, 1))
fig1 <- list(v0 = 0.1, sigma = 1)
res_lin <- run_grid(lin, "gaussian", grid1, "exact", fig_setting = fig1)
res_lin_authors <- run_grid(lin_authors, "gaussian", grid1, "authors", fig_setting = fig1)
res_lin_sghmc <- run_grid(lin, "gaussian", grid1, "exact", sampler = "sghmc")

logi <- scalebayes:::sgld_sa_simulate(n = 500, p = 1000, corr = 0.3, family = "binomial", n_test = 50, seed = 1)
grid4 <- expand.grid(v0 = c(0.01, 0.001), sigma = c(1, 2))
res_log <- run_grid(logi, "binomial", grid4, "exact", fig_setting = list(v0 = 0.01, sigma = 1))
res_log_authors <- run_grid(logi, "binomial", grid4, "authors")

paper1 <- data.frame(
  arm = rep(c("SA", "EM", "plain"), each = 4),
  v0 = rep(c(0.01, 0.1, 0.01, 0.1), 3), sigma_init = rep(c(2, 2, 1, 1), 3),
  MAE = c(1.89, 1.72, 1.48, 1.54, 3.49, 2.23, 2.23, 2.07, 15.85, 15.85, 11.86, 7.72),
  MSE = c(5.56, 5.64, 3.51, 4.42, 19.31, 8.22, 19.28, 6.94, 416.39, 416.39, 229.38, 88.90))
paper4 <- data.frame(
  arm = rep(c("SA", "EM", "plain"), each = 4),
  v0 = rep(c(0.01, 0.001, 0.01, 0.001), 3), sigma_init = rep(c(1, 1, 2, 2), 3),
  MAE = c(0.177, 0.188, 0.182, 0.187, 0.207, 0.361, 0.204, 0.376, 0.295, 0.335, 0.350, 0.337),
  MSE = c(0.108, 0.114, 0.116, 0.113, 0.131, 0.346, 0.132, 0.360, 0.272, 0.301, 0.338, 0.319))
# the authors' notebook prints one run (v0 = 0.1, sigma = 1): MAE / MSE of SA, EM, plain SGLD
notebook <- data.frame(arm = c("SA", "EM", "plain"), MAE = c(1.71, 2.20, 12.14), MSE = c(4.08, 7.21, 219.15))

res_rob <- robustness()
res_crossed <- crossed(lin, lin_authors)
res_reps <- authors_replicates()
res_plain <- plain_readings(lin)
out <- list(plain_readings = res_plain, linear = res_lin, linear_authors = res_lin_authors, crossed = res_crossed, authors_replicates = res_reps,
            linear_sghmc = res_lin_sghmc, logistic = res_log,
            logistic_authors = res_log_authors, robustness = res_rob, paper_table1 = paper1, paper_table4 = paper4,
            notebook = notebook, iterations = iterations,
            minutes = (proc.time()[["elapsed"]] - t_start) / 60,
            date = format(Sys.time(), tz = "UTC", usetz = TRUE),
            version = as.character(utils::packageVersion("scalebayes")))
saveRDS(out, "vignettes/results/sgld-sa-results.rds", version = 2)
cat(sprintf("wrote vignettes/results/sgld-sa-results.rds (%.1f minutes)\n", out$minutes))
