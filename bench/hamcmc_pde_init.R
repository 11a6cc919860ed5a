# Why the Table 2 network sits at the training mean on the printed field: how much its output depends on its
# input at the start, under PyTorch's default initialization (the package's, `"fan_in"`: weights and biases
# U(+-1/sqrt(fan_in))) and under He (Kaiming) initialization for ReLU layers (weights U(+-sqrt(6/fan_in)),
# biases 0; the output layer keeps PyTorch's default), and whether SGLD started from He's initialization leaves
# the mean sooner. Settings of vignettes/precompute-hamcmc-pde-printed.R: printed (additive) field, kappa0 = 7,
# grid GRID (default 25, that of the stored tables; 50 is the paper's), 1,300 / 200 split, standardized input
# image, centred targets, weights 1 / ||u_i||^2, N(0, 1e4) prior, batch 100, the temperature that gives the
# paper's noise per step, SGLD's sampler seeds of the table (1000 s + 1).
# Measured per sampler seed s = 1..3 and initialization: the network's outputs on the 200 test inputs after one
# step of size 1e-12 (the initial network): their standard deviation across the inputs (averaged over the
# outputs: 1,300 at grid 25, 5,100 at 50) against that of the centred targets, and the outputs' root mean
# square. Then SGLD (seed 1) from He's and from the default initialization (STARTS="He,default") at lr 50
# (the 150-epoch table's) and lr 20 for EPOCHS epochs: the training loss per epoch over the mean predictor's,
# the iteration of a divergence, and the test error of the mean over the last 2 epochs.
# Run: EPOCHS=40 [GRID=25] Rscript bench/hamcmc_pde_init.R [out.rds]   (grid 25: a few CPU minutes; grid 50:
#   about 15; out.rds: vignettes/results/hamcmc-pde-printed-init.rds for vignette("hamcmc-sa"))
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
out_file <- if (length(args) >= 1) args[1] else ""
epochs <- as.integer(Sys.getenv("EPOCHS", "40"))
G <- as.integer(Sys.getenv("GRID", "25")); n <- 1500L; n_train <- 1300L
d <- elliptic_kle_data(n, grid = G, link = "identity", seed = 2021, quiet = TRUE)
x_center <- mean(d$x[seq_len(n_train), ]); x_scale <- sd(as.vector(d$x[seq_len(n_train), ]))
x <- array((d$x - x_center) / x_scale, c(n, 1L, G, G)); y <- d$y
tr <- seq_len(n_train); te <- (n_train + 1L):n
ybar <- colMeans(y[tr, ]); yc <- sweep(y, 2, ybar); w <- 1 / rowSums(y[tr, ]^2)
rel <- function(pred, idx) sqrt(rowSums((sweep(pred, 2, ybar, "+") - y[idx, ])^2) / rowSums(y[idx, ]^2))
net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                     layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                     layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                     layer_dense(800), layer_relu())
per_epoch <- ceiling(n_train / 100)
mean_loss <- mean(w * rowSums(yc[tr, ]^2)) / 2
run <- function(s, lr, iters, init = NULL, burnin = iters - 2L * per_epoch) {
  ss <- lr / n_train
  ctl <- sgmcmc_control(step_size = ss, step = sgmcmc_step(schedule = "constant", temperature = ss * 50000 / 0.01),
                        ssgl = sgmcmc_ssgl(likelihood_sd = sqrt(0.5), kappa0_init = 0, kappa1_init = 1e-4),
                        trace_every = per_epoch, init = init)
  suppressWarnings(sgld_sa(x[tr, , , , drop = FALSE], yc[tr, ], model = net, sampler = "sgld", method = "none",
                           iterations = iters, batch_size = 100, burnin = max(burnin, 0L), thin = 1,
                           sparse_layers = c(3, 6, 7), weights = w, standardize = FALSE, seed = 1000L * s + 1L,
                           chains = 1, quiet = TRUE, keep_draws = iters == 1L, newx = x[te, , , , drop = FALSE],
                           control = ctl))
}
# the parameters' names (layer and tensor of every column), from a one-step fit with the default initialization
f0 <- run(1L, 1e-12 * n_train, 1L)
nm <- colnames(as.matrix(f0)); tensor <- sub("\\[.*$", "", nm); layer <- sub("\\..*$", "", tensor)
out_layer <- tail(unique(layer), 1)
he_init <- function(s) {
  set.seed(s)
  v <- numeric(length(nm))
  for (L in unique(layer)) {
    wi <- which(tensor == paste0(L, ".weight")); fan_in <- length(wi) / sum(tensor == paste0(L, ".bias"))
    bw <- if (L == out_layer) 1 / sqrt(fan_in) else sqrt(6 / fan_in)
    v[wi] <- runif(length(wi), -bw, bw)
  }
  v
}
target_sd <- mean(apply(yc[te, ], 2, sd))
start <- do.call(rbind, lapply(1:3, function(s) do.call(rbind, lapply(c("default (fan_in)", "He"), function(ini) {
  f <- run(s, 1e-12 * n_train, 1L, if (ini == "He") he_init(s))
  data.frame(seed = s, init = ini, output_sd_across_inputs = mean(apply(f$pred_mean, 2, sd)),
             output_rms = sqrt(mean(f$pred_mean^2)), target_sd = target_sd)
}))))
print(start, digits = 3)
runs <- list()
starts <- strsplit(Sys.getenv("STARTS", "He,default"), ",")[[1]]
for (st in starts) for (lr in c(50, 20)) {
  msg <- NA_character_; it_div <- NA_integer_
  tm <- system.time(f <- tryCatch(run(1L, lr, epochs * per_epoch, if (st == "He") he_init(1L)),
                                  scalebayes_error_diverged = function(e) {
                                    msg <<- conditionMessage(e); it_div <<- as.integer(e$diverged_at[1]); NULL
                                  }))
  key <- paste0(st, ", lr ", lr)
  runs[[key]] <- list(start = st, lr = lr, epochs = epochs, diverged_at = it_div, message = msg,
                      loss_ratio = if (!is.null(f)) f$trace$loss / mean_loss,
                      test_rel_err = if (!is.null(f)) 100 * mean(rel(f$pred_mean, te)) else NA_real_,
                      cpu_seconds = tm[["user.self"]] + tm[["sys.self"]])
  r <- runs[[key]]
  cat(sprintf("SGLD from the %s initialization, seed 1, lr %g, %d epochs: %s\n", st, lr, epochs,
              if (!is.na(it_div)) sprintf("diverged at iteration %d (epoch %d)", it_div, ceiling(it_div / per_epoch))
              else sprintf("loss / mean's, epochs 1-%d: %s; test error %.2f%%", epochs,
                           paste(round(r$loss_ratio, 2), collapse = " "), r$test_rel_err)))
}
if (nzchar(out_file)) {
  saveRDS(list(start = start, runs = runs, mean_loss = mean_loss, per_epoch = per_epoch, grid = G, outputs = ncol(y),
               command = paste0("EPOCHS=", epochs, " GRID=", G, " Rscript bench/hamcmc_pde_init.R ", out_file),
               date = format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")), out_file)
}
