# SGLD-SA paper, Table 2 (SGHMC against SGHMC-SA with the 2-Conv-2-FC CNN): how the gap between the two moves with
# the training-set size and the number of epochs. The CPU-scaled Table 2 of vignette("sgld-sa-networks")
# (precompute-sgld-cnn.R: 8,000 MNIST digits x 30 epochs, all 60,000 Fashion-MNIST images x 3 epochs) has
# SGHMC = SGHMC-SA on MNIST, where the paper has SGHMC-SA ahead; this study measures at which scale the paper's
# gap appears.
#
# Settings are those of precompute-sgld-cnn.R's table2_arm() (the paper's: batch 1000, lr 5e-7 on the sum scale
# per 60,000 examples, i.e. 5e-7 * 60000 / n here, tau = 1000 (MNIST) / 2500 (Fashion-MNIST), friction 0.1, SSGL
# prior on the first dense layer with v0 = 1, v1 = 0.1, nu = lambda = 1000, a = b = 627,200, omega_k =
# (k + 1000)^-3/4; SGHMC freezes the latent variables, SGHMC-SA adapts them). One chain per cell and seed; the
# same seed gives SGHMC and SGHMC-SA the same minibatches and noise, so their difference is paired. A draw is
# kept at every epoch's end with its predictions on the test images, so the accuracy of the posterior predictive
# mean over the second half of the first e epochs (what Table 2 reports after e epochs) is computed for every e
# from one run.
#
# Cells, smallest first (data, training images, epochs): Fashion-MNIST (the first n of the 60,000 training images,
# all 10,000 test images) n = 7,500 / 15,000 / 30,000 / 60,000; MNIST (the 10,000 digits of mnist_digits(): the
# first n of a fixed permutation for training, the last 2,000 for testing) n = 2,000 / 4,000 / 8,000; each
# SCNN_EPOCHS epochs (default 30; the paper: 1,000 on a GPU), seeds SCNN_SEEDS (default 1,2). Resumable: every
# finished (data, n, arm, seed) is stored in vignettes/results/sgld-sa-cnn-scaling.rds at once and skipped when the script
# is run again; SCNN_MAX_MINUTES (default Inf) stops starting new cells after that many minutes. SCNN_DATA
# (default "fmnist,mnist") and SCNN_N (default: all sizes) restrict the grid, so that two processes (each with its
# own SCNN_OUT) can share the cells; SCNN_ARM ("SGHMC" or "SGHMC-SA"; default both) splits one size's two arms
# between two processes; SCNN_MERGE="a.rds,b.rds" adds the cells of those files to SCNN_OUT and stops.
#
# Cost (measured on a 2-core Debian 12 VM, one thread per chain, two chains at a time, 30 epochs): a Fashion-MNIST
# chain took 640-690 CPU s at 7,500 images, 850-960 s at 15,000, about 1,600 s at 30,000 and about 3,090 s at
# 60,000 (SGHMC and SGHMC-SA alike), so the Fashion-MNIST grid (two arms x two seeds) is about 7 CPU hours,
# and MNIST's 2,000-8,000 digits about 1 hour. A GPU machine reruns all of it with one command:
#   SCNN_EPOCHS=30 nice -n 10 Rscript vignettes/precompute-sgld-cnn-scaling.R
# (run from the package root; device = "cuda" through SCNN_DEVICE=cuda).
suppressMessages(library(scalebayes))
env <- function(name, default) { v <- Sys.getenv(name); if (nzchar(v)) v else default }
`%||%` <- function(a, b) if (is.null(a)) b else a
epochs <- as.integer(env("SCNN_EPOCHS", "30"))
seeds <- as.integer(strsplit(env("SCNN_SEEDS", "1,2"), ",")[[1]])
max_min <- as.numeric(env("SCNN_MAX_MINUTES", "Inf"))
device <- env("SCNN_DEVICE", "cpu")
out <- env("SCNN_OUT", "vignettes/results/sgld-sa-cnn-scaling.rds")
res <- if (file.exists(out)) readRDS(out) else list(cells = list())
merge <- env("SCNN_MERGE", "")
if (nzchar(merge)) {
  for (f in strsplit(merge, ",")[[1]]) {
    other <- readRDS(f)
    new <- setdiff(names(other$cells), names(res$cells))
    res$cells[new] <- other$cells[new]
    res$date <- max(res$date, other$date)
    res$session <- res$session %||% other$session
    res$settings <- res$settings %||% other$settings
    cat(sprintf("%s: %d new cells\n", f, length(new)))
  }
  saveRDS(res, out)
  quit(save = "no")
}
res$settings <- list(epochs = epochs, batch = 1000, lr = "5e-7 * 60000 / n (sum scale)",
                     tau = c(mnist = 1000, fmnist = 2500), v0 = 1, v1 = 0.1, friction = 0.1,
                     omega = "(k + 1000)^-0.75", nu = 1000, lambda = 1000)
t_start <- proc.time()[["elapsed"]]

data_for <- function(which, n) {
  if (which == "fmnist") {
    d <- fashion_mnist()
    list(x = d$x[seq_len(n), , ], y = d$y[seq_len(n)], newx = d$x_test, newy = d$y_test)
  } else {
    d <- mnist_digits(order = "class")
    set.seed(2019)
    perm <- sample(nrow(d$x))
    te <- utils::tail(perm, 2000)
    tr <- perm[seq_len(n)]
    list(x = d$x[tr, , ], y = d$y[tr], newx = d$x[te, , ], newy = d$y[te])
  }
}

# Test accuracy of the posterior predictive mean over the draws of epochs (e/2, e], for every e
accuracy_by_epoch <- function(pred, newy) {
  E <- dim(pred)[1]
  y <- as.integer(newy)
  vapply(seq_len(E), function(e) {
    keep <- (e %/% 2 + 1):e
    p <- apply(pred[keep, , , drop = FALSE], c(2L, 3L), mean)
    mean(max.col(p, "first") == y)
  }, 0)
}

grid <- rbind(data.frame(data = "fmnist", n = c(7500L, 15000L, 30000L, 60000L)),
              data.frame(data = "mnist", n = c(2000L, 4000L, 8000L)))
grid <- grid[grid$data %in% strsplit(env("SCNN_DATA", "fmnist,mnist"), ",")[[1]], ]
n_only <- env("SCNN_N", "")
if (nzchar(n_only)) grid <- grid[grid$n %in% as.integer(strsplit(n_only, ",")[[1]]), ]
grid <- grid[order(grid$n), ]
arms <- strsplit(env("SCNN_ARM", "SGHMC,SGHMC-SA"), ",")[[1]]
if (!all(arms %in% c("SGHMC", "SGHMC-SA"))) stop("SCNN_ARM must be SGHMC, SGHMC-SA or both (comma-separated)")
for (g in seq_len(nrow(grid))) for (seed in seeds) for (arm in arms) {
  key <- sprintf("%s_n%d_%s_seed%d_ep%d", grid$data[g], grid$n[g], arm, seed, epochs)
  if (!is.null(res$cells[[key]])) next
  if ((proc.time()[["elapsed"]] - t_start) / 60 > max_min) {
    cat("SCNN_MAX_MINUTES reached: stopping before", key, "\n")
    quit(save = "no")
  }
  d <- data_for(grid$data[g], grid$n[g])
  n <- nrow(d$x)
  per_epoch <- ceiling(n / 1000)
  iters <- epochs * per_epoch
  tau <- if (grid$data[g] == "mnist") 1000 else 2500
  t0 <- proc.time()
  fit <- sgld_sa(d$x, d$y, model = nn_cnn(), sampler = "sghmc", method = if (arm == "SGHMC") "none" else "sa",
                 sparse_layers = 3, iterations = iters, batch_size = 1000, v0 = 1, v1 = 0.1, burnin = 0,
                 thin = per_epoch, newx = d$newx, newy = d$newy, keep_draws = Inf, threads = 1, seed = seed,
                 quiet = TRUE, device = device,
                 control = sgmcmc_control(step_size = 5e-7 * 60000 / n,
                                          step = sgmcmc_step(schedule = "constant", temperature = tau, friction = 0.1),
                                          ssgl = sgmcmc_ssgl(a = 3136 * 200, b = 3136 * 200, nu = 1000, lambda = 1000, sigma_init = 1, sa_A = 1, sa_Z = 1000, sa_alpha = 0.75)))
  tm <- proc.time() - t0
  acc <- accuracy_by_epoch(fit$pred, d$newy)
  res$cells[[key]] <- list(data = grid$data[g], n = n, arm = arm, seed = seed, epochs = epochs,
                           accuracy_by_epoch = acc, accuracy_last_draw = mean(max.col(fit$pred[epochs, , ], "first") ==
                                                                                as.integer(d$newy)),
                           cpu_seconds = tm[["user.self"]] + tm[["sys.self"]], wall_seconds = tm[["elapsed"]],
                           n_test = length(d$newy))
  res$date <- format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")
  res$session <- c(R = as.character(getRversion()), scalebayes = as.character(packageVersion("scalebayes")),
                   device = device)
  saveRDS(res, out)
  cat(sprintf("%s: accuracy after %d epochs %.4f (%.0f CPU s)\n", key, epochs, acc[epochs],
              tm[["user.self"]] + tm[["sys.self"]]))
}
