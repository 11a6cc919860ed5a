# Precomputes vignettes/results/sgld-sa-em-results.rds for vignette("sgld-sa"): SGLD-SA Table 1's EM column at the
# paper's length. The robustness study of precompute-sgld.R ran 100 000 iterations per chain; here every chain
# runs the paper's 500 000 iterations, over 10 replicated Table 1 data sets (data seeds 101..110: n = 100,
# p = 1000, Sigma_ij = 0.6^|i-j|, 50 test points), v0 = 0.01, v1 = 10, sigma init = 1, batch 50, exact method,
# with 4 chain seeds per data set for SGLD-SA and SGLD-EM (chain c of data set r uses seed r + 1000 c, so
# chain 0 is the robustness study's chain; SA and EM with the same seed share minibatches and noise) and one
# plain-SGLD chain. Each run is saved under SB_EM_CACHE (default "precompute-cache/sgld-em"), so an
# interrupted run resumes. About 28 s a chain on one core: 90 chains, about 45 minutes.
#
# Run from vignettes/:  nice -n 10 Rscript precompute-sgld-em.R [iterations = 500000] [chains = 4]
library(scalebayes)
args <- suppressWarnings(as.integer(commandArgs(trailingOnly = TRUE)))
iters <- if (length(args) >= 1) args[1] else 500000L
chains <- if (length(args) >= 2) args[2] else 4L
reps <- 101:110
cache <- Sys.getenv("SB_EM_CACHE", "precompute-cache/sgld-em")
dir.create(cache, recursive = TRUE, showWarnings = FALSE)
t_start <- proc.time()[["elapsed"]]

one_run <- function(d, r, arm, chain) {
  file <- file.path(cache, sprintf("rep%d_%s_chain%d_it%d.rds", r, arm, chain, iters))
  if (file.exists(file)) return(readRDS(file))
  t <- system.time(fit <- sgld_sa(d$x, d$y, method = c(SA = "sa", EM = "em", plain = "none")[[arm]],
                                  iterations = iters, batch_size = 50, v0 = 0.01, v1 = 10, intercept = FALSE,
                                  keep_draws = 1:3, newx = d$x_test, seed = r + 1000L * chain, threads = 1,
                                  quiet = TRUE, control = sgmcmc_control(ssgl = sgmcmc_ssgl(b = 1000, rho_init = 1, sigma_init = 1))))[["elapsed"]]
  row <- data.frame(rep = r, chain = chain, arm = arm, iterations = iters,
                    MSE = mean((predict(fit)$fit - d$y_test)^2), b3 = coef(fit)[[3]], beta3 = d$beta[3],
                    selected_true = sum(fit$inclusion[1:3] > 0.5),
                    selected_false = sum(fit$inclusion[-(1:3)] > 0.5), seconds = t)
  saveRDS(row, file)
  row
}

rows <- list()
for (r in reps) {
  d <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, family = "gaussian", n_test = 50, seed = r)
  for (chain in seq_len(chains) - 1L) for (arm in c("SA", "EM", if (chain == 0L) "plain"))
    rows[[length(rows) + 1L]] <- one_run(d, r, arm, chain)
  cat(sprintf("data set %d done (total %.0f s)\n", r, proc.time()[["elapsed"]] - t_start))
}
tab <- do.call(rbind, rows)
saveRDS(list(table = tab, iterations = iters, chains = chains, reps = reps, session = R.version.string,
             date = Sys.time()), "results/sgld-sa-em-results.rds")
