# Concrete, Table 5's paper-code route, plain SGHMC and A-SGHMC on the RAW response (learning rate 1e-5, as
# stated) against the stored centred-response runs (vignettes/results/sgld-sa-networks-results.rds) on the splits where
# the raw chain does not diverge: measures what centring changes on the splits where both run.
# Run from the package root: nice -n 10 Rscript bench/uci_concrete_raw.R  (about 2 CPU-minutes)
suppressMessages(library(scalebayes))
stored <- readRDS("vignettes/results/sgld-sa-networks-results.rds")$per_split
stored <- stored[stored$data == "Concrete" & stored$route == "paper_code" & stored$method == "none", ]
rows <- NULL
for (anneal in c(FALSE, TRUE)) for (s in 1:20) {
  d <- uci_prepare("concrete", s)
  iters <- 201L * (length(d$y) %/% 50)
  fit <- tryCatch(sgld_sa(d$x, d$y, model = nn_mlp(50), sampler = "sghmc", method = "none", sparse_layers = FALSE,
                          v0 = 0.07, v1 = 10, iterations = iters, batch_size = 50, burnin = iters - 1L, thin = 1, newx = d$newx,
                          newy = d$newy, keep_draws = TRUE, seed = d$seed, quiet = TRUE, threads = 1,
                          control = sgmcmc_control(step_size = 1e-5,
                                                   step = sgmcmc_step(schedule = "constant", temperature = 0.5, anneal = if (anneal) 1.003 else 1),
                                                   ssgl = sgmcmc_ssgl(a = 1, b = 10, nu = 1, lambda = 1, sigma_init = 10, delta_init = 0.5, prior_var = 1e4, sa_A = 1, sa_Z = 100, likelihood_sd = sqrt(1 / 2), kappa0_init = 1e-4, kappa1_init = 1e-4))),
                  scalebayes_error = function(e) NULL)
  raw <- if (is.null(fit)) NA_real_ else sqrt(mean((fit$pred[nrow(fit$pred), ] - d$newy)^2))
  rows <- rbind(rows, data.frame(anneal = anneal, split = s, raw = raw,
                                 centred = stored$rmse_last[stored$anneal == anneal & stored$split == s]))
}
print(rows)
for (a in c(FALSE, TRUE)) {
  r <- rows[rows$anneal == a & is.finite(rows$raw), ]
  cat(sprintf("%s: raw runs on %d of 20 splits; on those, raw %.3f +- %.3f, centred %.3f +- %.3f (mean +- se); paired difference raw - centred %.3f +- %.3f\n",
              if (a) "A-SGHMC" else "SGHMC", nrow(r), mean(r$raw), sd(r$raw) / sqrt(nrow(r)), mean(r$centred),
              sd(r$centred) / sqrt(nrow(r)), mean(r$raw - r$centred), sd(r$raw - r$centred) / sqrt(nrow(r))))
}
