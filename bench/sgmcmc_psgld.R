# pSGLD (sampler = "psgld", issue 60 item 4): its RMSprop preconditioner held after the burn-in (rmsprop_adapt =
# "burnin", the default: Gamma = 0 exactly) against Li et al.'s adapting one (rmsprop_adapt = "always", Gamma ~ 0)
# on the exact linear-Gaussian posterior of tests/testthat/test-sgmcmc-trust.R. Prints the sd ratios to the exact
# posterior sds (inst/design-sgmcmc.md, "pSGLD"). Rscript bench/sgmcmc_psgld.R (about 30 s).
library(scalebayes)
src <- readLines(file.path("tests", "testthat", "test-sgmcmc-trust.R"))
i0 <- grep("^exact_lg <- local", src)
i1 <- i0 - 1L + which(src[i0:length(src)] == "})")[1]
eval(parse(text = src[i0:i1]))
e <- exact_lg
for (bs in c(200, 20)) for (eps in c(0.004, 0.001)) for (a in c("burnin", "always")) {
  if (bs == 20 && eps == 0.001) next
  t0 <- proc.time()
  f <- suppressWarnings(sgld_sa(e$x, e$y, sampler = "psgld", method = "none", sparse = FALSE, seed = 2, quiet = TRUE,
                                iterations = if (bs == 20) 2e5 else if (eps < 0.002) 4e6 else 1e6, thin = 20,
                                chains = 4, batch_size = bs,
                                control = sgmcmc_control(step_size = eps,
                                                         step = sgmcmc_step(schedule = "constant", rmsprop_adapt = a,
                                                                            gradient = "minibatch"),
                                                         ssgl = sgmcmc_ssgl(likelihood_sd = e$noise_sd, prior_var = e$pv))))
  d <- as.matrix(f)
  ess <- min(f$diagnostics$convergence$ess_bulk)
  r <- apply(d, 2, sd) / e$sd
  cat(sprintf("batch %3d step %.3f adapt %-6s: sd ratios %.3f-%.3f (mean %.3f, se %.3f)  max |mean error| %.3f sd  ESS %.0f  %.1f s\n",
              bs, eps, a, min(r), max(r), mean(r), 1 / sqrt(2 * ess), max(abs(colMeans(d) - e$mean) / e$sd), ess,
              (proc.time() - t0)[3]))
}
