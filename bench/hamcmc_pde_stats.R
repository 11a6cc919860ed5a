# The preconditioned step of HAMCMC-SA (diagonal form) on the Table 2 network of Wang, Deng & Lin (2021), step by
# step: how long its drift and noise are relative to SGLD's at the same learning rate (the trace's drift_ratio =
# ||xi|| / ||g||, noise_ratio = ||eta|| / ||z||) and the L-BFGS memory's gamma = y'y / s'y, for memory M = 1 and
# M = 2, beside the training loss of SGLD and both, and the mean relative test error (%) of each run's
# predictions averaged over its last min(2, epochs) epochs. The settings are those of
# vignettes/precompute-hamcmc-pde.R (grid 25, 1,300 training samples, batch 100, SGLD at lr 1, the same seeds
# as its cells), with the trace at every iteration. HAMCMC-SA's learning rate, gamma_min and the preconditioner's
# SA weights omega_k = A (Z + k)^-0.9 can be changed (defaults: the precompute's lr 1, gamma_min 1, A 5, Z 10).
# Run: Rscript bench/hamcmc_pde_stats.R [epochs = 2] [out.rds] [lr = 1] [gamma_min = 1] [A = 5] [Z = 10] [sgld = 1]
#          [sgld_noise = 1] [hamcmc = 1]
#   (sgld = 0: leave the SGLD run out; sgld_noise: SGLD's noise sd times this factor, through its temperature;
#   hamcmc = 0: leave the two HAMCMC-SA runs out)
#   (about 1 CPU minute per epoch for the three runs; out.rds: also save the table and errors, as
#   bench/results/hamcmc-pde-steps.rds for vignette("hamcmc-sa"); "" for none)
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
arg_num <- function(i, default) if (length(args) >= i && nzchar(args[i])) as.numeric(args[i]) else default
epochs <- as.integer(arg_num(1, 2))
out_file <- if (length(args) >= 2) args[2] else ""
lr_h <- arg_num(3, 1); gamma_min <- arg_num(4, 1); pA <- arg_num(5, 5); pZ <- arg_num(6, 10)
G <- 25L; n <- 1500L; n_train <- 1300L
d <- elliptic_kle_data(n, grid = G, seed = 2021, threads = 1, quiet = TRUE)
x <- array(d$x, c(n, 1L, G, G)); y <- d$y
tr <- seq_len(n_train); te <- (n_train + 1L):n
ybar <- colMeans(y[tr, ]); yc <- sweep(y, 2, ybar); w <- 1 / rowSums(y[tr, ]^2)
net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                     layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                     layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                     layer_dense(800), layer_relu())
per_epoch <- ceiling(n_train / 100)
iters <- epochs * per_epoch
rel_err <- function(pred) 100 * mean(sqrt(rowSums((sweep(pred, 2, ybar, "+") - y[te, ])^2) / rowSums(y[te, ]^2)))
run <- function(sampler, M, seed, lr, noise = 1) {
  ss <- lr / n_train
  ctl <- sgmcmc_control(step_size = ss,
                        trace_every = 1,
                        step = sgmcmc_step(schedule = "constant", temperature = ss * 50000 / 0.01 / noise^2),
                        ssgl = sgmcmc_ssgl(likelihood_sd = sqrt(0.5), kappa0_init = 0, kappa1_init = 1e-4),
                        lbfgs = sgmcmc_lbfgs(precond_A = pA, precond_Z = pZ, precond_alpha = 0.9, memory = M, sa_form = "diagonal", gamma_min = gamma_min))
  f <- tryCatch(sgld_sa(x[tr, , , , drop = FALSE], yc[tr, ], model = net, sampler = sampler, method = "none",
                        iterations = iters, batch_size = 100, burnin = iters - min(2L, epochs) * per_epoch,
                        sparse_layers = c(3, 6, 7), weights = w, threads = 1, seed = seed, quiet = TRUE,
                        keep_draws = FALSE, newx = x[te, , , , drop = FALSE], control = ctl),
                scalebayes_error_divergence = function(e) NULL)
  if (is.null(f)) return(list(trace = NULL, error = NA_real_))
  list(trace = f$trace, error = rel_err(f$pred_mean))
}
# the seeds of precompute-hamcmc-pde.R's cells without pruning (seed 2021 + the cell's row: SGLD is row 1 of the
# first run; M = 1 and M = 2 rows 1 and 2 of the diagonal-form run)
none <- list(trace = NULL, error = NA_real_)
s <- if (arg_num(7, 1) != 0) run("sgld", 1L, 2022, 1, arg_num(8, 1)) else none
h1 <- if (arg_num(9, 1) != 0) run("hamcmc_sa", 1L, 2022, lr_h) else none
h2 <- if (arg_num(9, 1) != 0) run("hamcmc_sa", 2L, 2023, lr_h) else none
col <- function(r, v) if (is.null(r$trace)) rep(NA_real_, iters) else r$trace[[v]][seq_len(iters)]
out <- data.frame(iteration = seq_len(iters), loss_sgld = col(s, "loss"), loss_m1 = col(h1, "loss"),
                  drift_m1 = col(h1, "drift_ratio"), noise_m1 = col(h1, "noise_ratio"), gamma_m1 = col(h1, "gamma"),
                  loss_m2 = col(h2, "loss"), drift_m2 = col(h2, "drift_ratio"), noise_m2 = col(h2, "noise_ratio"),
                  gamma_m2 = col(h2, "gamma"))
errors <- c(sgld = s$error, m1 = h1$error, m2 = h2$error)
cat(sprintf("scalebayes %s, %s; grid %d, %d epochs; SGLD lr 1 (noise x %g); HAMCMC-SA lr %g, gamma_min %g, omega_k = %g (%g + k)^-0.9\n",
            utils::packageVersion("scalebayes"), format(Sys.time(), "%Y-%m-%d %H:%M %Z"), G, epochs, arg_num(8, 1), lr_h,
            gamma_min, pA, pZ))
cat("mean relative test error (%): ", paste(names(errors), round(errors, 2), collapse = ", "), "\n")
print(signif(out, 3), row.names = FALSE)
if (nzchar(out_file)) saveRDS(list(steps = out, errors = errors, grid = G, lr = lr_h, gamma_min = gamma_min,
                                   precond = c(A = pA, Z = pZ), epochs = epochs, date = Sys.time(),
                                   command = paste("Rscript bench/hamcmc_pde_stats.R", paste(args, collapse = " "))),
                              out_file)
