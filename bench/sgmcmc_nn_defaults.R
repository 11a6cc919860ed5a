# What sgld_sa() / hamcmc_sa() on a network give with every default (issue "Posteriors you can trust", item 6):
# raw Boston housing, a held-out fifth (set.seed(42)), the default nn_mlp() (128-64), 4 chains of 10,000
# iterations, the step warm-up, v0 = 1. Printed per sampler and seed: held-out RMSE of the posterior predictive
# mean (lm()'s beside it), the warm-up's per-example step and time, the whole call's time, the function-space
# convergence (max R-hat, min bulk ESS over the training loss and the 8 probe predictions), diverged chains
# and the warnings raised.
# Run from the package root:  Rscript bench/sgmcmc_nn_defaults.R [sampler ...]  (about 10 minutes on 2 cores for
# all five samplers; output in bench/sgmcmc_nn_defaults.out.txt).
suppressPackageStartupMessages(library(scalebayes))
cat("scalebayes", format(utils::packageVersion("scalebayes")), "|", R.version.string, "|", format(Sys.time()), "\n")
cat("cores:", parallel::detectCores(), "\n\n")
B <- MASS::Boston
x <- as.matrix(B[, -14]); y <- B$medv
set.seed(42); test <- sample(nrow(x), nrow(x) %/% 5)
lmf <- stats::lm.fit(cbind(1, x[-test, ]), y[-test])
rmse_lm <- sqrt(mean((y[test] - cbind(1, x[test, ]) %*% lmf$coefficients)^2))
cat(sprintf("lm held-out RMSE %.3f\n", rmse_lm))
samplers <- commandArgs(TRUE)
if (!length(samplers)) samplers <- c("sgld", "sghmc", "sgnht", "hamcmc_sa", "hamcmc")
for (s in samplers) for (seed in 1:2) {
  t0 <- proc.time()[["elapsed"]]
  warn <- character()
  f <- tryCatch(withCallingHandlers(
    sgld_sa(x[-test, ], y[-test], model = nn_mlp(), sampler = s, seed = seed, quiet = TRUE, newx = x[test, ], newy = y[test]),
    warning = function(w) { warn <<- c(warn, class(w)[1]); invokeRestart("muffleWarning") }),
    error = function(e) e)
  el <- proc.time()[["elapsed"]] - t0
  if (inherits(f, "error")) {
    cat(sprintf("%-9s seed %d: ERROR (%s) after %.1f s: %s\n", s, seed, class(f)[1], el,
                gsub("\n", " ", conditionMessage(f))))
    next
  }
  cv <- f$diagnostics$convergence
  cat(sprintf("%-9s seed %d: RMSE %.3f (lm %.3f, ratio %.3f); step %.3g per example (warm-up %.1f s); call %.1f s; max R-hat %.3f, min bulk ESS %.0f; diverged %d of 4; warnings: %s\n",
              s, seed, f$rmse_mean, rmse_lm, f$rmse_mean / rmse_lm, f$settings$step_size * f$settings$nobs,
              f$warmup$seconds, el, max(cv$rhat, na.rm = TRUE), min(cv$ess_bulk, na.rm = TRUE),
              sum(f$diverged), if (length(warn)) paste(unique(warn), collapse = ", ") else "none"))
}
