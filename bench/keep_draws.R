# Cost of keeping network draws (the default keep_draws = TRUE) against keep_draws = FALSE: sgld_sa() SGHMC on the
# 784-128-64-10 MLP, 2,000 MNIST digits, 5 epochs of 50, 2 chains on 2 threads; three alternating runs each.
# Run: Rscript bench/keep_draws.R   (about 15 s)
suppressPackageStartupMessages(library(scalebayes))
m <- mnist_digits(order = "class"); set.seed(1); i <- sample(nrow(m$x), 2000); x <- m$x[i, , , drop = FALSE]; y <- m$y[i]
r <- sapply(rep(c(FALSE, TRUE), 3), function(k) system.time(sgld_sa(x, y, model = nn_mlp(c(128, 64)), sampler = "sghmc", epochs = 5, batch_size = 50,
   chains = 2, threads = 2, seed = 1, quiet = TRUE, control = sgmcmc_control(step_size = 1e-5), keep_draws = k))[["elapsed"]])
cat("keep_draws = FALSE:", r[c(1,3,5)], " TRUE (2 x 100 draws of 109,386):", r[c(2,4,6)], "\n")
