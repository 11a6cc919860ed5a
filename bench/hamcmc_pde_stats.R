# The preconditioned step of HAMCMC-SA (diagonal form) on the Table 2 network of Wang, Deng & Lin (2021), step by
# step: how long its drift and noise are relative to SGLD's at the same learning rate (the trace's drift_ratio =
# ||xi|| / ||g||, noise_ratio = ||eta|| / ||z||) and the L-BFGS memory's gamma = y'y / s'y, for memory M = 1 and
# M = 2, beside the training loss of SGLD and both. The settings are those of vignettes/precompute-hamcmc-pde.R
# (grid 25, 1,300 training samples, batch 100, lr 1, omega_k = 5 (10 + k)^-0.9, same seeds as its cells), with
# the trace at every iteration of the first `epochs` epochs.
# Run: Rscript bench/hamcmc_pde_stats.R [epochs = 2] [out.rds]   (about 1 CPU minute per epoch for the three
# runs; out.rds: also save the table, as vignettes/hamcmc-pde-steps.rds for vignette("hamcmc-sa"))
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
epochs <- if (length(args) >= 1) as.integer(args[1]) else 2L
out_file <- if (length(args) >= 2) args[2] else ""
G <- 25L; n <- 1500L; n_train <- 1300L; lr <- 1
d <- elliptic_kle_data(n, grid = G, seed = 2021, threads = 1, quiet = TRUE)
x <- array(d$x, c(n, 1L, G, G)); y <- d$y
tr <- seq_len(n_train)
ybar <- colMeans(y[tr, ]); yc <- sweep(y, 2, ybar); w <- 1 / rowSums(y[tr, ]^2)
net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                     layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                     layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                     layer_dense(800), layer_relu())
iters <- epochs * ceiling(n_train / 100)
ss <- lr / n_train
run <- function(sampler, M, seed) {
  ctl <- sgmcmc_control(step_size = ss, step_schedule = "constant", temperature = ss * 50000 / 0.01,
                        likelihood_sd = sqrt(0.5), kappa0_init = 0, kappa1_init = 1e-4, precond_A = 5,
                        precond_Z = 10, precond_alpha = 0.9, memory = M, sa_form = "diagonal", trace_every = 1)
  f <- sgld_sa(x[tr, , , , drop = FALSE], yc[tr, ], model = net, sampler = sampler, method = "none",
               iterations = iters, batch_size = 100, burnin = iters - 1L, sparse_layers = c(3, 6, 7), weights = w,
               threads = 1, seed = seed, quiet = TRUE, keep_draws = FALSE, control = ctl)
  f$trace
}
# the seeds of precompute-hamcmc-pde.R's cells without pruning (seed 2021 + the cell's row: SGLD is row 1 of the
# first run; M = 1 and M = 2 rows 1 and 2 of the diagonal-form run)
s <- run("sgld", 1L, 2022)
h1 <- run("hamcmc_sa", 1L, 2022)
h2 <- run("hamcmc_sa", 2L, 2023)
out <- data.frame(iteration = s$iteration, loss_sgld = s$loss, loss_m1 = h1$loss, drift_m1 = h1$drift_ratio,
                  noise_m1 = h1$noise_ratio, gamma_m1 = h1$gamma, loss_m2 = h2$loss, drift_m2 = h2$drift_ratio,
                  noise_m2 = h2$noise_ratio, gamma_m2 = h2$gamma)
cat(sprintf("scalebayes %s, %s; grid %d, lr %g, %d epochs\n", utils::packageVersion("scalebayes"),
            format(Sys.time(), "%Y-%m-%d %H:%M %Z"), G, lr, epochs))
print(signif(out, 3), row.names = FALSE)
if (nzchar(out_file)) saveRDS(list(steps = out, grid = G, lr = lr, epochs = epochs, date = Sys.time(),
                                   command = paste("Rscript bench/hamcmc_pde_stats.R", epochs, out_file)), out_file)
