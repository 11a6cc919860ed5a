# Precompute for vignette "variational": the variational autoencoder of Kingma & Welling (2014) with a
# 2-dimensional latent space on the 10,000 real MNIST digits of mnist_digits() (the tutorial's Figure 3: the
# learned 2-D manifold of digits; Kingma & Welling's Figure 4). Kingma & Welling trained on the 60,000 MNIST
# training images with 500 hidden units per network, minibatches of 100, one draw of z per example (L = 1) and
# Adagrad, for up to 10^8 training examples; this CPU-scaled run: 512 hidden units (ReLU), minibatches of 100,
# L = 1, Adam (learning rate 1e-3), SB_VAE_EPOCHS epochs (default 50) over the 10,000 digits, pixels as given
# (grey levels in [0, 1], the Bernoulli cross-entropy), one torch thread.
# Saves vignettes/results/vae-results.rds: the manifold image (20 x 20 decoded digits, 560 x 560 probabilities, row 1 at
# the top), the ELBO trace (ELBO, reconstruction NLL and KL per digit, per epoch), a Monte-Carlo ELBO per digit at
# the final networks (20 draws of z per digit), the encoded means of 2000 digits with their labels, a few
# reconstructions, the settings and the elapsed time.
# Run from the package root (one core; measured 298 s for the fit, 316 s in all, under nice -n 10 on the shared
# 2-core machine with load ~9, 2026-11-24; the saved `elapsed`):
#   nice -n 10 Rscript vignettes/precompute-vae.R
suppressMessages(library(scalebayes))
epochs <- as.integer(Sys.getenv("SB_VAE_EPOCHS", "50"))
out_file <- Sys.getenv("SB_VAE_OUT", "vignettes/results/vae-results.rds")
d <- mnist_digits()
settings <- list(latent = 2L, hidden = 512L, activation = "relu", epochs = epochs, batch_size = 100L,
                 optimizer = "adam", lr = 1e-3, samples = 1L, seed = 20261124, n = dim(d$x)[1],
                 threads = 1L, torch_threads = 1L)
t0 <- proc.time()[["elapsed"]]
fit <- vae(d$x, latent = 2L, encoder = nn_mlp(512), decoder = nn_mlp(512), epochs = epochs, batch_size = 100L,
           seed = settings$seed, threads = 1L, quiet = TRUE, control = nn_control(lr = 1e-3))
elapsed_fit <- proc.time()[["elapsed"]] - t0
manifold <- scalebayes:::vae_manifold(fit, 20L)
elbo_final <- scalebayes:::vae_elbo(fit, d$x, samples = 20L, seed = 1)
idx <- 1:2000
res <- list(
  settings = settings,
  trace = fit$trace,
  elbo_final = c(elbo = mean(elbo_final[, "elbo"]), nll = mean(elbo_final[, "nll"]), kl = mean(elbo_final[, "kl"]),
                 se = sd(elbo_final[, "elbo"]) / sqrt(nrow(elbo_final))),
  manifold = structure(round(manifold, 3), z = attr(manifold, "z")),
  latent = data.frame(z1 = fit$latent_means[idx, 1], z2 = fit$latent_means[idx, 2], label = d$y[idx]),
  reconstructions = list(x = d$x[1:8, , ], recon = round(predict(fit, d$x[1:8, , ]), 4)),
  generated = round(vae_generate(fit, 8L, seed = 1), 4),
  elapsed = elapsed_fit, elapsed_total = proc.time()[["elapsed"]] - t0,
  session = list(R = R.version.string, scalebayes = as.character(utils::packageVersion("scalebayes")),
                 torch = scalebayes_info()$torch, date = format(Sys.time(), tz = "UTC", usetz = TRUE))
)
saveRDS(res, out_file, compress = "xz")
cat(sprintf("VAE, latent 2, %d epochs on %d digits: %.1f s; last epoch ELBO/digit %.2f (NLL %.2f, KL %.2f); final MC ELBO %.2f (se %.2f)\n",
            epochs, settings$n, elapsed_fit, fit$elbo, tail(fit$trace$nll, 1), tail(fit$trace$kl, 1),
            res$elbo_final[["elbo"]], res$elbo_final[["se"]]))
