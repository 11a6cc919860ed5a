# Table 2 of Wang, Deng & Lin (2021, section 5.3.2), CPU-scaled: a network surrogate of the Darcy flow through
# random KLE permeability fields, trained by SGLD and by HAMCMC-SA with memory M = 1 and M = 2, without pruning and
# with 30% / 50% magnitude pruning of the dense layers. Mean relative L2 test error (%) of the posterior
# predictive mean, beside the paper's numbers. Resumable: every finished cell is stored in the .rds at once and
# skipped when the script is run again (delete the file, or set PDE_FRESH=1, to start over).
#
# Data: elliptic_kle_data(1500, grid = PDE_GRID): log-normal KLE field (variance 2, correlation lengths 0.2 /
# 0.3, 64 terms, kappa0 = 1), f = 1, p = 1 / 0 left / right, no flow top / bottom; RT0/P0 two-point fluxes;
# 1,300 training and 200 test samples (the paper's text: 200; its caption: 300 of 1,500 - 1,300 = 200).
# Network (nn_sequential()): conv 3x3 64, conv 3x3 32 ("same" padding, ReLU), avgpool 2, dense 100, reshape to
# 1 x 10 x 10, conv 3x3 64, conv 3x3 32, dense 800, dense = the number of face velocities.
# Loss: relative L2 squared: Gaussian likelihood with per-example weights 1 / ||u_i||^2 (the vignette's Table 2
# section says why not the paper's unsquared relative L2) on targets centred by the training mean (the mean is
# added back for prediction; the residuals, hence the loss, are those of the original velocities).
# Sampler settings: batch 100, omega_k = 5 (10 + k)^-0.9 (HAMCMC-SA's preconditioner SA), transport form with
# same-batch curvature pairs; temperature chosen so that the Langevin noise per step is the paper's
# N(0, 2 * 0.01 / 50000); the drift's learning rate PDE_LR (per example: step_size = PDE_LR / 1300) was tuned
# on 3 epochs (SGLD stable at 0.3 and 3, diverged at 5 and 10; HAMCMC-SA diverged at 3; over 60 epochs SGLD at 3
# diverges at iteration 253, see vignette("hamcmc-sa")). Two extra cells: omega_k = 1,
# and lr / 5. About 12 CPU minutes in all at grid 25 and 6 epochs. Pruning: sgmcmc_ssgl(prune = TRUE, prune_S = rate) on the three dense
# layers, method "none" with kappa0 = 0 (no SSGL prior: a N(0, 1e4) prior on all weights).
#
# PDE_OUT: another results file (e.g. for a longer run); PDE_CELLS: a regular expression of the cell keys to run
# (e.g. "^SGLD 0$").
# Run from the package root (the command used for vignettes/results/hamcmc-pde-results.rds is recorded in it):
#   PDE_GRID=25 PDE_EPOCHS=6 PDE_LR=1 nice -n 10 Rscript vignettes/precompute-hamcmc-pde.R
library(scalebayes)
env_num <- function(name, default) { v <- Sys.getenv(name); if (nzchar(v)) as.numeric(v) else default }
G <- as.integer(env_num("PDE_GRID", 25))
epochs <- as.integer(env_num("PDE_EPOCHS", 6))
lr <- env_num("PDE_LR", 1)
# HAMCMC-SA's form: the stored results hold the first run's "transport" cells (that form has since been removed
# from the package, ?hamcmc_sa, so they cannot be rerun) and "diagonal" cells (the stable linear-cost form, run
# after it; "lowrank" runs too). The cells of a form other than transport are stored under their own keys;
# SGLD's cells do not depend on it, and the two extra cells below belong to the transport run.
form <- Sys.getenv("PDE_FORM", "diagonal")
if (form == "transport") stop("The transport form was removed from scalebayes (?hamcmc_sa); its stored cells stay as they are. Use PDE_FORM=diagonal or lowrank.")
out <- Sys.getenv("PDE_OUT", "vignettes/results/hamcmc-pde-results.rds")
cell_filter <- Sys.getenv("PDE_CELLS")  # a regular expression of the cell keys to run ("": all)
n <- 1500L; n_train <- 1300L
t_data <- system.time(d <- elliptic_kle_data(n, grid = G, seed = 2021, threads = 1, quiet = TRUE))[["elapsed"]]
x <- array(d$x, c(n, 1L, G, G)); y <- d$y
tr <- seq_len(n_train); te <- (n_train + 1L):n
ybar <- colMeans(y[tr, ])
yc <- sweep(y, 2, ybar)
w <- 1 / rowSums(y[tr, ]^2)
net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                     layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                     layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                     layer_dense(800), layer_relu())
rel_err <- function(pred) sqrt(rowSums((sweep(pred, 2, ybar, "+") - y[te, ])^2) / rowSums(y[te, ]^2))
iters <- epochs * ceiling(n_train / 100)
burnin <- iters - 2L * ceiling(n_train / 100)  # average the predictions over the last 2 epochs
ss <- lr / n_train
cells <- expand.grid(sampler = c("SGLD", "HAMCMC-SA (M=1)", "HAMCMC-SA (M=2)"), prune = c(0, 0.3, 0.5),
                     stringsAsFactors = FALSE)
paper <- c(3.07, 2.72, 1.68, 3.04, 0.85, 0.78, 3.06, 1.21, 0.88)
cells$omega_one <- FALSE
# An extra cell, not in the paper: HAMCMC-SA (M = 2) with omega_k = 1 (G_k = the L-BFGS inverse Hessian of the
# current memory, no SA of the preconditioner), to separate the transport form's accumulated error from the
# L-BFGS preconditioning itself.
# A second one: the paper's omega_k with a 5 times smaller learning rate (0.2), below the rate at which the
# preconditioned steps diverge (the L-BFGS memory can lengthen a step by up to 1 / (damping_r gamma) = 5 times).
cells$lr <- lr
cells <- rbind(cells, data.frame(sampler = "HAMCMC-SA (M=2)", prune = 0, omega_one = TRUE, lr = lr),
               data.frame(sampler = "HAMCMC-SA (M=2)", prune = 0, omega_one = FALSE, lr = lr / 5))
if (form != "transport") cells <- cells[cells$sampler != "SGLD" & !cells$omega_one & cells$lr == lr, ]
res <- if (file.exists(out) && !nzchar(Sys.getenv("PDE_FRESH"))) readRDS(out) else NULL
if (!is.null(res) && (res$settings$grid != G || res$settings$epochs != epochs || res$settings$lr != lr)) {
  stop("The stored results used other settings (grid ", res$settings$grid, ", epochs ", res$settings$epochs,
       ", lr ", res$settings$lr, "): set PDE_FRESH=1 to start over.")
}
if (is.null(res)) {
  res <- list(cells = list(), settings = list(grid = G, epochs = epochs, lr = lr, step_size = ss, batch = 100,
                                              iterations = iters, burnin = burnin, n_train = n_train,
                                              n_test = length(te), temperature = ss * 50000 / 0.01,
                                              likelihood_sd = sqrt(0.5), omega = "5 (10 + k)^-0.9",
                                              prune_D = 0.99, prune_U = 1, sparse_layers = c(3, 6, 7)),
              paper = cbind(cells[1:9, c("sampler", "prune")], paper = paper))
}
cmd <- sprintf("PDE_GRID=%d PDE_EPOCHS=%d PDE_LR=%g %s%s%snice -n 10 Rscript vignettes/precompute-hamcmc-pde.R",
               G, epochs, lr, if (form != "transport") paste0("PDE_FORM=", form, " ") else "",
               if (nzchar(Sys.getenv("PDE_OUT"))) paste0("PDE_OUT=", out, " ") else "",
               if (nzchar(cell_filter)) paste0("PDE_CELLS='", cell_filter, "' ") else "")
if (form == "transport") res$command <- cmd else res$commands[[form]] <- cmd
res$data_seconds <- t_data
res$parameters <- sum(scalebayes:::nn_resolve(net, c(1L, G, G), ncol(y))$params)
for (i in seq_len(nrow(cells))) {
  key <- paste(cells$sampler[i], cells$prune[i], if (cells$omega_one[i]) "omega=1" else "",
               if (cells$lr[i] != lr) paste0("lr=", cells$lr[i]) else "")
  key <- trimws(paste(key, if (form != "transport") paste0("form=", form) else ""))
  if (!is.null(res$cells[[key]])) next
  if (nzchar(cell_filter) && !grepl(cell_filter, key)) next
  M <- if (grepl("M=1", cells$sampler[i])) 1L else 2L
  sampler <- if (cells$sampler[i] == "SGLD") "sgld" else "hamcmc_sa"
  om1 <- cells$omega_one[i]
  ssi <- cells$lr[i] / n_train
  ctl <- sgmcmc_control(step_size = ssi, step = sgmcmc_step(schedule = "constant", temperature = ssi * 50000 / 0.01),
                        ssgl = sgmcmc_ssgl(likelihood_sd = sqrt(0.5), kappa0_init = 0, kappa1_init = 1e-4,
                                           prune = cells$prune[i] > 0, prune_S = max(cells$prune[i], 0.01),
                                           prune_D = 0.99, prune_U = 1),
                        lbfgs = sgmcmc_lbfgs(precond_A = if (om1) 1 else 5, precond_Z = if (om1) 0 else 10,
                                             precond_alpha = if (om1) 1e-9 else 0.9, memory = M, sa_form = form,
                                             precond_init = "identity"))  # G_1 = I, Algorithm 2 as printed (as stored)
  msg <- NA_character_
  tm <- system.time(fit <- tryCatch(suppressWarnings(
    sgld_sa(x[tr, , , , drop = FALSE], yc[tr, ], model = net, sampler = sampler, method = "none", iterations = iters,
            batch_size = 100, burnin = burnin, thin = 1, sparse_layers = c(3, 6, 7), weights = w, threads = 1,
            chains = 1, standardize = FALSE,  # the defaults when these results were made (1 chain, raw scale)
            seed = 2021 + i, quiet = TRUE, keep_draws = FALSE, newx = x[te, , , , drop = FALSE], control = ctl)),
    scalebayes_error_divergence = function(e) { msg <<- conditionMessage(e); NULL }))
  e <- if (is.null(fit)) NA_real_ else rel_err(fit$pred_mean)
  res$cells[[key]] <- list(sampler = cells$sampler[i], prune = cells$prune[i], omega_one = om1, lr = cells$lr[i],
                           form = if (sampler == "sgld") NA_character_ else form, mean_rel_err = 100 * mean(e),
                           se = 100 * sd(e) / sqrt(length(e)), sparsity = fit$sparsity, diverged = msg,
                           # with the preconditioned step's report (drift / noise length ratios, gamma) where the
                           # engine records it
                           trace = fit$trace[intersect(c("iteration", "loss", "sparsity", "drift_ratio",
                                                         "noise_ratio", "gamma"), names(fit$trace))],
                           cpu_seconds = tm[["user.self"]] + tm[["sys.self"]], wall_seconds = tm[["elapsed"]],
                           iterations_done = fit$iterations_done)
  res$date <- format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")
  res$session <- c(R = as.character(getRversion()), scalebayes = as.character(packageVersion("scalebayes")),
                   cpu = system("lscpu | grep 'Model name' | sed 's/.*: *//'", intern = TRUE))
  saveRDS(res, out)
  cat(sprintf("%-16s %s prune %.1f: mean relative test error %.2f%% (se %.2f), %.0f CPU s\n", cells$sampler[i],
              paste0(if (om1) "omega = 1 " else "", if (cells$lr[i] != lr) paste0("lr ", cells$lr[i]) else ""), cells$prune[i], 100 * mean(e), 100 * sd(e) / sqrt(length(e)), tm[["user.self"]] + tm[["sys.self"]]))
}
tab <- do.call(rbind, lapply(res$cells, function(r) data.frame(sampler = paste0(r$sampler, if (isTRUE(r$omega_one)) ", omega = 1",
                                                                                     if (identical(r$form, "diagonal")) ", diagonal",
                                                                                     if (!is.null(r$lr) && r$lr != lr) paste0(", lr ", r$lr)),
                                                                prune = r$prune,
                                                                ours = r$mean_rel_err, se = r$se,
                                                                cpu_s = r$cpu_seconds)))
print(merge(tab, res$paper, by = c("sampler", "prune"), sort = FALSE, all.x = TRUE), digits = 3, row.names = FALSE)
