# Why Concrete diverges with Table 5's settings (bench/RESULTS.md, "Table 5 on all five UCI data sets"): the
# paper-code route's SGHMC (and A-SGHMC-SA) on each of the authors' 20 splits, first 400 of 3,618 iterations
# (the divergences happen within ~30), reporting the iteration at which the state became non-finite (0: none):
# raw response at the paper's learning rate 1e-5 (summed scale), the response minus its training mean at 1e-5,
# and the raw response at 7e-6 and 5e-6. Output: bench/uci_concrete_divergence.out.txt.
# Run from the package root: nice -n 10 Rscript bench/uci_concrete_divergence.R  (about 3 CPU-minutes)
suppressMessages(library(scalebayes))
run <- function(d, shift, lr, method = "none", anneal = 1) {
  r <- tryCatch({
    fit <- sgld_sa(d$x, d$y - shift, model = nn_mlp(50), sampler = "sghmc", method = method, sparse_layers = method != "none",
            iterations = 400, batch_size = 50, v0 = 0.07, v1 = 10, burnin = 399, thin = 1, newx = d$newx, newy = d$newy - shift,
            keep_draws = TRUE, seed = d$seed, quiet = TRUE, threads = 1,
            control = sgmcmc_control(step_size = lr,
                                     step = sgmcmc_step(schedule = "constant", temperature = 0.5, anneal = anneal),
                                     ssgl = sgmcmc_ssgl(a = 1, b = 10, nu = 1, lambda = 1, sigma_init = 10, delta_init = 0.5, prior_var = 1e4, sa_A = 1, sa_Z = 100, likelihood_sd = sqrt(1/2), kappa0_init = 1e-4, kappa1_init = 1e-4)))
    0L }, scalebayes_error = function(e) {
      it <- regmatches(conditionMessage(e), regexpr("iteration [0-9]+", conditionMessage(e))); as.integer(sub("iteration ", "", it)) })
  r
}
out <- NULL
for (s in 1:20) {
  d <- uci_prepare("concrete", s)
  out <- rbind(out, data.frame(split = s, raw_1e5 = run(d, 0, 1e-5), centred_1e5 = run(d, mean(d$y), 1e-5),
                               raw_7e6 = run(d, 0, 7e-6), raw_5e6 = run(d, 0, 5e-6),
                               raw_sa_anneal = run(d, 0, 1e-5, "sa", 1.003), centred_sa_anneal = run(d, mean(d$y), 1e-5, "sa", 1.003)))
}
print(out)
print(colSums(out[, -1] > 0))
