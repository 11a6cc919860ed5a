# How long HAMCMC-SA's and HAMCMC's steps are on the banana target of Wang, Deng & Lin (2021, Figure 1), relative
# to an SGLD step at the same learning rate: the trace's drift_ratio = ||xi|| / ||g|| and noise_ratio =
# ||eta|| / ||z|| at every iteration, for the arms of hamcmc_banana_study() that are stable (unnormalized,
# gamma_min = delta = 16, lr 0.06, M = 3, omega_k = 2 (10 + k)^-0.9, matrix form), 5 seeds, 4,000 iterations from
# (0, 0). Medians over seeds and iterations in windows; "effective lr" = 0.06 x the median drift ratio, against
# SGLD's 0.04.
# Run: Rscript bench/hamcmc_banana_steps.R
suppressPackageStartupMessages(library(scalebayes))
tg <- sgmcmc_target("banana")
win <- list(`1-100` = 1:100, `101-500` = 101:500, `501-2000` = 501:2000, `2001-4000` = 2001:4000)
rows <- list()
for (s in c("hamcmc_sa", "hamcmc")) {
  tr <- lapply(1:5, function(seed) {
    ctl <- sgmcmc_control(step_size = 0.06,
                          trace_every = 1,
                          step = sgmcmc_step(schedule = "constant", temperature = 1),
                          lbfgs = sgmcmc_lbfgs(memory = 3, precond_A = 2, precond_Z = 10, precond_alpha = 0.9, normalize = FALSE, gamma_min = 16, sa_form = "matrix"))
    suppressWarnings(sgmcmc_density(tg, init = c(0, 0), sampler = s, iterations = 4000, seed = seed, quiet = TRUE,
                                    control = ctl))$trace
  })
  for (w in names(win)) {
    d <- unlist(lapply(tr, function(t) t$drift_ratio[win[[w]]])); z <- unlist(lapply(tr, function(t) t$noise_ratio[win[[w]]]))
    rows[[length(rows) + 1L]] <- data.frame(sampler = s, iterations = w, drift_ratio = median(d, na.rm = TRUE),
                                            noise_ratio = median(z, na.rm = TRUE),
                                            effective_lr = 0.06 * median(d, na.rm = TRUE))
  }
}
cat(sprintf("scalebayes %s, %s\n", utils::packageVersion("scalebayes"), format(Sys.time(), "%Y-%m-%d %H:%M %Z")))
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
