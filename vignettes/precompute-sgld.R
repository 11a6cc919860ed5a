# Precompute the reproductions of Deng, Zhang, Liang & Lin (2019) shown in vignettes/sgld-sa.Rmd:
#   Table 1 / Figure 1 (linear regression, n = 100, p = 1000, Sigma_ij = 0.6^|i-j|, 500 000 iterations)
#   Table 4 / Figure 3 (logistic regression, n = 500, p = 1000, Sigma_ij = 0.3^|i-j|, 500 000 iterations)
# for SGLD-SA, SGLD-EM and SGLD on the grid v0 x sigma_init. Writes vignettes/sgld-sa-results.rds (small).
# Run from the package root with the package installed:  Rscript vignettes/precompute-sgld.R [iterations]
# (about 20 minutes on one core of a 2-core machine for the full 500 000 iterations).
# SGLD_PART=robustness Rscript vignettes/precompute-sgld.R  only (re)computes the robustness study and adds it.
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
iterations <- if (length(args)) as.integer(args[1]) else 500000L
arms <- c("SGLD-SA" = "sa", "SGLD-EM" = "em", "SGLD" = "none")

run_grid <- function(d, family, grid, fig_setting) {
  rows <- list()
  traces <- list()
  for (g in seq_len(nrow(grid))) {
    for (arm in names(arms)) {
      ctl <- sgmcmc_control(step_size = 1e-3, step_power = 1 / 3, sa_A = 10, sa_Z = 1000, sa_alpha = 0.7,
                            a = 1, b = ncol(d$x), nu = 1, lambda = 1, delta_init = 0.5, rho_init = 1,
                            sigma_init = grid$sigma[g])
      t <- system.time(fit <- sgld_sa(d$x, d$y, family = family, method = arms[[arm]], iterations = iterations,
                                      batch_size = 50, v0 = grid$v0[g], v1 = 10, intercept = FALSE,
                                      keep = 1:3, newx = d$x_test, seed = 2019, threads = 1, quiet = TRUE,
                                      control = ctl))
      pr <- predict(fit, type = "response")
      rows[[length(rows) + 1]] <- data.frame(
        family = family, arm = arm, v0 = grid$v0[g], sigma_init = grid$sigma[g],
        MAE = mean(abs(pr - d$y_test)), MSE = mean((pr - d$y_test)^2),
        b1 = coef(fit)[[1]], b2 = coef(fit)[[2]], b3 = coef(fit)[[3]],
        b1_sd = fit$coef_sd[[1]], b2_sd = fit$coef_sd[[2]], b3_sd = fit$coef_sd[[3]],
        selected = sum(fit$inclusion > 0.5), sigma = fit$latent$sigma, delta = fit$latent$delta,
        seconds = t[["elapsed"]], row.names = NULL)
      cat(sprintf("%s %s v0=%g sigma=%g: MAE %.3f MSE %.3f (%.1f s)\n", family, arm, grid$v0[g], grid$sigma[g],
                  rows[[length(rows)]]$MAE, rows[[length(rows)]]$MSE, t[["elapsed"]]))
      if (grid$v0[g] == fig_setting$v0 && grid$sigma[g] == fig_setting$sigma) {
        # the same chain again (same seed) storing beta_1..3 from the first iteration on, for the trace plots
        f2 <- sgld_sa(d$x, d$y, family = family, method = arms[[arm]], iterations = iterations, batch_size = 50,
                      v0 = grid$v0[g], v1 = 10, intercept = FALSE, keep = 1:3, burnin = 0,
                      thin = iterations %/% 1000, seed = 2019, threads = 1, quiet = TRUE, control = ctl)
        traces[[arm]] <- list(draws = f2$draws, thin = iterations %/% 1000, latent = fit$trace,
                              inclusion = unname(fit$inclusion))
      }
    }
  }
  list(table = do.call(rbind, rows), traces = traces, beta_true = d$beta[1:3])
}

# Robustness over data sets: 10 replicated Table 1 data sets (seeds 101..110), v0 = 0.01, sigma init = 1,
# 100 000 iterations per run (a fifth of the paper's run, to keep the precomputation short).
robustness <- function(reps = 101:110, iters = 100000L) {
  rows <- list()
  for (r in reps) {
    d <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, family = "gaussian", n_test = 50, seed = r)
    for (arm in names(arms)) {
      fit <- sgld_sa(d$x, d$y, method = arms[[arm]], iterations = iters, batch_size = 50, v0 = 0.01, v1 = 10,
                     intercept = FALSE, keep = 1:3, newx = d$x_test, seed = r, threads = 1, quiet = TRUE,
                     control = sgmcmc_control(b = 1000, rho_init = 1, sigma_init = 1))
      rows[[length(rows) + 1]] <- data.frame(rep = r, arm = arm, MSE = mean((predict(fit) - d$y_test)^2),
                                             selected_true = sum(fit$inclusion[1:3] > 0.5),
                                             selected_false = sum(fit$inclusion[-(1:3)] > 0.5))
    }
    cat(sprintf("robustness data set %d done\n", r))
  }
  list(table = do.call(rbind, rows), iterations = iters)
}
if (identical(Sys.getenv("SGLD_PART"), "robustness")) {
  out <- readRDS("vignettes/sgld-sa-results.rds")
  out$robustness <- robustness()
  saveRDS(out, "vignettes/sgld-sa-results.rds", version = 2)
  cat("added the robustness study to vignettes/sgld-sa-results.rds\n")
  quit(save = "no")
}

lin <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, family = "gaussian", n_test = 50, seed = 1)
grid1 <- expand.grid(v0 = c(0.01, 0.1), sigma = c(2, 1))
res_lin <- run_grid(lin, "gaussian", grid1, list(v0 = 0.1, sigma = 1))

logi <- scalebayes:::sgld_sa_simulate(n = 500, p = 1000, corr = 0.3, family = "binomial", n_test = 50, seed = 1)
grid4 <- expand.grid(v0 = c(0.01, 0.001), sigma = c(1, 2))
res_log <- run_grid(logi, "binomial", grid4, list(v0 = 0.01, sigma = 1))

paper1 <- data.frame(
  arm = rep(c("SGLD-SA", "SGLD-EM", "SGLD"), each = 4),
  v0 = rep(c(0.01, 0.1, 0.01, 0.1), 3), sigma_init = rep(c(2, 2, 1, 1), 3),
  MAE = c(1.89, 1.72, 1.48, 1.54, 3.49, 2.23, 2.23, 2.07, 15.85, 15.85, 11.86, 7.72),
  MSE = c(5.56, 5.64, 3.51, 4.42, 19.31, 8.22, 19.28, 6.94, 416.39, 416.39, 229.38, 88.90))
paper4 <- data.frame(
  arm = rep(c("SGLD-SA", "SGLD-EM", "SGLD"), each = 4),
  v0 = rep(c(0.01, 0.001, 0.01, 0.001), 3), sigma_init = rep(c(1, 1, 2, 2), 3),
  MAE = c(0.177, 0.188, 0.182, 0.187, 0.207, 0.361, 0.204, 0.376, 0.295, 0.335, 0.350, 0.337),
  MSE = c(0.108, 0.114, 0.116, 0.113, 0.131, 0.346, 0.132, 0.360, 0.272, 0.301, 0.338, 0.319))

res_rob <- robustness()
out <- list(linear = res_lin, logistic = res_log, robustness = res_rob, paper_table1 = paper1, paper_table4 = paper4,
            iterations = iterations, date = format(Sys.time(), tz = "UTC", usetz = TRUE),
            version = as.character(utils::packageVersion("scalebayes")))
saveRDS(out, "vignettes/sgld-sa-results.rds", version = 2)
cat("wrote vignettes/sgld-sa-results.rds\n")
