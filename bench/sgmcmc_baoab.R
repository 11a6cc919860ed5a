# SGHMC and its BAOAB splitting (sampler = "sghmc_baoab") at equal cost through the package (issue 60 item 4):
# the stationary variance / exact on N(0, diag(1, 1/10)) (a 2-d Gaussian target of sgmcmc_density()), a given
# constant step eta, friction 0.1 (the default), no metric, 4 chains of `iterations`, the first tenth burnt.
# Beside bench/sgmcmc_baoab.cpp (the same recursions written standalone, with minibatch noise as well).
# Run: Rscript bench/sgmcmc_baoab.R            (BENCH_ITER=1e6 by default)
suppressPackageStartupMessages(library(scalebayes))
iter <- as.numeric(Sys.getenv("BENCH_ITER", "1e6"))
v <- c(1, 0.1)
tg <- sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(v))
cat(sprintf("scalebayes %s, %s; load %s\n", packageVersion("scalebayes"), format(Sys.time(), tz = "UTC", usetz = TRUE),
            paste(readLines("/proc/loadavg"), collapse = "")))
cat("variance / exact (coordinate 1 with h = 1, coordinate 2 with h = 10), se about 1 / sqrt(ESS / 2)\n")
rows <- list()
for (eta in c(0.001, 0.004, 0.016, 0.04)) {
  for (s in c("sghmc", "sghmc_baoab")) {
    t <- system.time(f <- suppressWarnings(sgmcmc_density(
      tg, init = c(0, 0), sampler = s, iterations = iter, burnin = iter / 10, thin = 10, chains = 4, seed = 1,
      quiet = TRUE, control = sgmcmc_control(step_size = eta, step = sgmcmc_step(schedule = "constant", metric = "none")))))[["elapsed"]]
    d <- as.matrix(f)
    r <- colMeans(d^2) / v
    ess <- f$diagnostics$convergence$ess_bulk
    rows[[length(rows) + 1]] <- data.frame(eta = eta, sampler = s, ratio_h1 = r[1], ratio_h10 = r[2],
                                           min_ess = min(ess), seconds = t)
    cat(sprintf("eta %.3f %-12s h=1: %.4f  h=10: %.4f  (min bulk ESS %.0f, %.1f s)\n", eta, s, r[1], r[2], min(ess), t))
  }
}
invisible(do.call(rbind, rows))
