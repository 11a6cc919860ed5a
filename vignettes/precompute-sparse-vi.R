# Precomputes vignettes/results/sparse-vi-results.rds for vignette("variational"): Bai, Song & Cheng (2020), Figure 1
# (sparse_vi() on the sparse nonlinear regression of sparse_vi_sim(), over a grid of log lambda).
#
# Settings are the authors' code's (inst/design-vi-reference.md in the package sources, section 1): n = 3000,
# 10 000 test points, p = 200, 200-7-7-7-1 ReLU (T = 1527), sigma0 = 1.3, delta = 0.1 (lambda_opt = 1.19e-4),
# tau = 0.5, K = 1, 30 draws to predict, mu ~ U(-0.6, 0.6), sigma = softplus(-6), phi = 0.99, noise sd 1 (fixed),
# Adam 5e-3, batch 512, KL weighted by m / n. The CPU-scaled defaults change only the number of epochs
# (SB_VI_EPOCHS, default 800; the paper: 7000) and the number of data sets (SB_VI_REPS, default 2; the paper:
# 30). One extra fit at lambda_opt with the paper's 7000 epochs (data set 1) is always run: it times the full
# fit and shows what the shorter runs leave out. Each (data set, lambda) fit is saved to its own small file (the
# trace thinned to 80 log-spaced epochs) under SB_VI_CACHE (default ../data-raw/sparse-vi-parts, kept in the
# repository), so an interrupted run resumes and a long run accumulates across machines; commit the new files.
# SB_VI_SHARD = "k/m" runs only the data sets r with (r - 1) %% m == k - 1 (one process per core), and combines
# the results into the .rds only when every fit of the grid is there (run once more without a shard to combine).
#
# Run from vignettes/:  nice -n 10 Rscript precompute-sparse-vi.R
# Paper size (30 data sets x 10 lambdas x 7000 epochs: 6.1 hours of one core here, 73 s a fit on average; 27 hours
# before q's quantities were flat, bench/RESULTS.md), on two cores:
#   SB_VI_EPOCHS=7000 SB_VI_REPS=30 SB_VI_SHARD=1/2 nice -n 10 Rscript precompute-sparse-vi.R &
#   SB_VI_EPOCHS=7000 SB_VI_REPS=30 SB_VI_SHARD=2/2 nice -n 10 Rscript precompute-sparse-vi.R
#   SB_VI_EPOCHS=7000 SB_VI_REPS=30 Rscript precompute-sparse-vi.R    # combine
#   SB_VI_EPOCHS=7000 SB_VI_REPS=30 SB_VI_COMPLETE=1 Rscript precompute-sparse-vi.R    # the complete data sets so far
#   SB_VI_EPOCHS=7000 SB_VI_REPS=30 SB_VI_ONLY=19,21,23 ...    # resume: these data sets only, in this order
library(scalebayes)
epochs <- as.integer(Sys.getenv("SB_VI_EPOCHS", "800"))
reps <- as.integer(Sys.getenv("SB_VI_REPS", "2"))
cache <- Sys.getenv("SB_VI_CACHE", "../data-raw/sparse-vi-parts")
dir.create(cache, recursive = TRUE, showWarnings = FALSE)
shard <- Sys.getenv("SB_VI_SHARD", "")
shard <- if (nzchar(shard)) as.integer(strsplit(shard, "/", fixed = TRUE)[[1]]) else c(1L, 1L)
stopifnot(length(shard) == 2L, !anyNA(shard), shard[1] >= 1L, shard[1] <= shard[2])
thin <- function(tr) tr[tr$epoch %in% unique(round(exp(seq(0, log(max(tr$epoch)), length.out = 80)))), ]

p <- 200L
model <- nn_mlp(c(7, 7, 7))
log_lambda_opt <- -(log(1527) + 0.1 * (4 * log(7) + log(sqrt(3000) * p)))  # -9.0396
# The grid (the code has none; the figure spans log lambda ~ -460 to lambda = 1)
grid <- c(-460, -300, -200, -100, -50, -25, log_lambda_opt, -4, -1, 0)
test <- sparse_vi_sim(n = 10, n_test = 10000, p = p, seed = 1000)  # one test set for all data sets (as the authors)

layer_of <- function(nm) {
  # a group of one parameter (the output bias) is named without "[1]"
  m <- regmatches(nm, regexec("^layer([0-9]+)_linear\\.(weight|bias)(\\[([0-9]+)\\])?$", nm))
  # the layer walk numbers the ReLUs too: linear layers are layer1, layer3, layer5, layer7
  data.frame(layer = match(as.integer(vapply(m, `[`, "", 2)), c(1L, 3L, 5L, 7L)), kind = vapply(m, `[`, "", 3),
             k = as.integer(vapply(m, function(v) if (nzchar(v[5])) v[5] else "1", "")))
}
dims <- list(c(7, 200), c(7, 7), c(7, 7), c(1, 7))  # out x in of the four weight matrices

fit_file <- function(r, ll, ep) file.path(cache, sprintf("rep%02d_ll%s_ep%d.rds", r, format(round(ll, 4)), ep))
one_fit <- function(r, ll, ep) {
  file <- fit_file(r, ll, ep)
  if (file.exists(file)) return(readRDS(file))
  d <- sparse_vi_sim(n = 3000, n_test = 10, p = p, seed = r)
  newx <- rbind(test$x_test, d$x)
  t0 <- proc.time()
  fit <- sparse_vi(d$x, d$y, model = model, log_lambda = ll, draws = 30, newx = newx, epochs = ep,
                   batch_size = 512, threads = 1, seed = r, quiet = TRUE,
                   control = nn_control(lr = 5e-3, optimizer = "adam"),
                   vi = vi_control(samples = 1, tau = 0.5, init_mu = 0.6, init_sigma = log1p(exp(-6)),
                                   init_phi = 0.99, prior_sd = 1.3, noise_sd = 1, bias_spike = TRUE))
  cpu <- (proc.time() - t0)[["user.self"]]
  pm <- fit$pred_mean
  nt <- nrow(test$x_test)
  v <- fit$variational
  lo <- layer_of(v$parameter)
  kept <- v$phi > 0.5
  # input selection: an input is selected if any of its 7 first-layer weights has phi > 0.5 (main L165)
  w1 <- lo$layer == 1 & lo$kind == "weight"
  in1 <- (lo$k[w1] - 1) %% p + 1
  sel <- tapply(kept[w1], factor(in1, levels = 1:p), any)
  # hidden units: kept weights per layer as out x in 0/1 matrices
  A <- lapply(1:4, function(l) {
    i <- lo$layer == l & lo$kind == "weight"
    matrix(kept[i], dims[[l]][1], dims[[l]][2], byrow = TRUE)
  })
  units_in <- vapply(1:3, function(l) sum(rowSums(A[[l]]) > 0), numeric(1))  # any kept incoming weight
  units_conn <- vapply(1:3, function(l) sum(rowSums(A[[l]]) > 0 & colSums(A[[l + 1]]) > 0), numeric(1))
  res <- list(rep = r, log_lambda = ll, epochs = ep,
              test_rmse = sqrt(mean((pm[seq_len(nt)] - test$y_test)^2)),
              train_rmse = sqrt(mean((pm[-seq_len(nt)] - d$y)^2)),
              share_kept = mean(kept),  # over all T = 1527 weights and biases (main L114-124)
              fnr = mean(!sel[1:5]), fpr = mean(sel[6:p]), selected = which(sel),
              units_in = units_in, units_connected = units_conn,
              trace = thin(fit$trace[, c("epoch", "neg_elbo", "nll", "kl", "kept")]),
              cpu = cpu, elapsed = fit$timing[["elapsed"]])
  saveRDS(res, file)
  res
}

# 1. The grid on `reps` data sets with `epochs` epochs (none is fitted when only combining: SB_VI_COMPLETE=1;
# SB_VI_END_ONLY=1 runs only section 1b).
complete_only <- Sys.getenv("SB_VI_COMPLETE", "0") == "1"
end_only <- Sys.getenv("SB_VI_END_ONLY", "0") == "1"
# SB_VI_ONLY = "12,14,30": fit only these data sets, in this order (to balance two processes when resuming a run
# whose shards are unequally advanced; the shard is then ignored).
only <- Sys.getenv("SB_VI_ONLY", "")
rs <- if (nzchar(only)) as.integer(strsplit(only, ",", fixed = TRUE)[[1]]) else seq_len(reps)
if (complete_only || end_only) rs <- integer(0)
stopifnot(!anyNA(rs), all(rs >= 1L & rs <= reps))
for (r in rs) {
  if (!nzchar(only) && (r - 1L) %% shard[2] != shard[1] - 1L) next
  for (ll in grid) {
    f <- one_fit(r, ll, epochs)
    cat(sprintf("%s rep %d log lambda %7.2f: test %.3f train %.3f log share %.2f FNR %.2f FPR %.3f (%.0f s)\n",
                format(Sys.time(), "%H:%M:%S"), r, ll, f$test_rmse, f$train_rmse, log(f$share_kept), f$fnr, f$fpr,
                f$cpu))
  }
}
# 1b. The right end of the figure: "towards lambda = 1" the figure reads test RMSE ~1.55 with training RMSE below 1,
# which lies between our log lambda = -1 and 0; three more values there on the first SB_VI_END_REPS data sets
# (lambda = 0.61, 0.90 and 0.99: the authors' KL is infinite at lambda = 1 unless phi is exactly 1, so the right
# end of their figure is some lambda below 1).
end_grid <- c(-0.5, -0.1, -0.01)
end_reps <- as.integer(Sys.getenv("SB_VI_END_REPS", "4"))
if (!complete_only && shard[1] == 1L) {
  for (r in seq_len(end_reps)) for (ll in end_grid) {
    f <- one_fit(r, ll, epochs)
    cat(sprintf("%s end: rep %d log lambda %5.2f: test %.3f train %.3f log share %.2f (%.0f s)\n",
                format(Sys.time(), "%H:%M:%S"), r, ll, f$test_rmse, f$train_rmse, log(f$share_kept), f$cpu))
  }
}
if (end_only) quit(save = "no")
# 2. One fit with the paper's 7000 epochs at lambda_opt (data set 1): the full-size reference and its time.
if (shard[1] == 1L && !complete_only) full <- one_fit(1L, log_lambda_opt, 7000L)
want <- expand.grid(ll = grid, r = seq_len(reps))
have <- file.exists(vapply(seq_len(nrow(want)), function(i) fit_file(want$r[i], want$ll[i], epochs), ""))
# SB_VI_COMPLETE=1: combine the data sets whose whole grid is there (an interim table while a long run goes on;
# the data sets are exchangeable, so any complete ones do); the vignette says how many of `reps` it holds.
if (complete_only) {
  done <- tapply(have, want$r, all)
  keep <- want$r %in% as.integer(names(done)[done])
  want <- want[keep, ]
  have <- have[keep]
  cat(sprintf("combining the %d complete data sets of %d\n", sum(done), reps))
}
planned <- reps
if (!length(have) || !all(have) || !file.exists(fit_file(1L, log_lambda_opt, 7000L))) {
  cat(sprintf("%d of %d fits of the grid are in %s: the results are combined when all are (another shard runs?)\n",
              sum(have), length(have), cache))
  quit(save = "no")
}
fits <- lapply(seq_len(nrow(want)), function(i) one_fit(want$r[i], want$ll[i], epochs))
reps <- length(unique(want$r))
full <- one_fit(1L, log_lambda_opt, 7000L)
end_files <- outer(seq_len(end_reps), end_grid, Vectorize(function(r, ll) fit_file(r, ll, epochs)))
end <- if (all(file.exists(end_files))) do.call(rbind, lapply(end_files, function(f) with(readRDS(f), data.frame(
  rep = rep, log_lambda = log_lambda, test_rmse = test_rmse, train_rmse = train_rmse, share_kept = share_kept,
  fnr = fnr, fpr = fpr, cpu = cpu)))) else NULL
cat(sprintf("7000 epochs: %.0f s CPU, test RMSE %.3f, log share %.2f\n", full$cpu, full$test_rmse, log(full$share_kept)))
tab <- do.call(rbind, lapply(fits, function(f) data.frame(rep = f$rep, log_lambda = f$log_lambda, epochs = f$epochs,
  test_rmse = f$test_rmse, train_rmse = f$train_rmse, share_kept = f$share_kept, fnr = f$fnr, fpr = f$fpr,
  units = paste(f$units_connected, collapse = "-"), units_in = paste(f$units_in, collapse = "-"), cpu = f$cpu)))
full_row <- with(full, data.frame(rep = rep, log_lambda = log_lambda, epochs = epochs, test_rmse = test_rmse,
  train_rmse = train_rmse, share_kept = share_kept, fnr = fnr, fpr = fpr,
  units = paste(units_connected, collapse = "-"), units_in = paste(units_in, collapse = "-"), cpu = cpu))
saveRDS(list(grid = tab, full = full_row, end = end, full_trace = thin(full$trace), full_selected = full$selected,
             grid_traces = do.call(rbind, lapply(fits, function(f) cbind(rep = f$rep, log_lambda = f$log_lambda,
                                                                        thin(f$trace)))),
             grid_units = lapply(fits[tab$log_lambda == log_lambda_opt], `[`, c("rep", "units_in", "units_connected", "selected")),
             log_lambda_opt = log_lambda_opt, epochs = epochs, reps = reps, planned_reps = planned, y_test_sd = sd(test$y_test),
             settings = "n 3000, p 200, 10000 test points, 200-7-7-7-1 ReLU, sigma0 1.3, tau 0.5, K 1, 30 predictive draws, mu ~ U(-0.6, 0.6), sigma softplus(-6), phi 0.99, noise sd 1 fixed, Adam 5e-3, batch 512",
             session = sessionInfo()$R.version$version.string, date = Sys.time()),
        "results/sparse-vi-results.rds")
