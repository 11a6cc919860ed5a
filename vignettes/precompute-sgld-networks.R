# Precompute for vignette "sgld-sa-networks": Table 5 of Deng, Zhang, Liang & Lin (2019) on the UCI data sets
# available offline (Boston housing from MASS, Concrete from modeldata; Yacht, Energy and Wine are on no
# package registry this project uses), by two routes over the same 20 random 90/10 splits:
#   paper_code: what the authors' UCI code computes (read in their public repository): the likelihood is the
#               squared-error sum (a Gaussian with variance 1/2 whatever sigma is; sigma enters the prior only),
#               SA step omega_k = (k + 100)^-0.7, kappa0 = kappa1 = 1e-4 at the start, 201 epochs of 9 minibatches
#               (n %/% 50), annealing tau_k = 1.003^k per
#               iteration, and the reported number is the RMSE of the LAST sample, mean +- standard error
#               (sd / sqrt(20)) over the splits; plain SGHMC has no spike-and-slab prior (L2 1e-4 = N(0, 1e4));
#   exact:      the method as the paper states it: Gaussian likelihood with variance sigma^2 (adapted), the
#               paper's SA step 10 (k + 1000)^-0.7, 200 epochs, and the RMSE of the posterior predictive mean
#               (average over the second half of the chain), mean and sd over the splits; the last-sample RMSE
#               of the same chains is kept too, to measure the effect of the metric alone.
# Run from the package root:  Rscript vignettes/precompute-sgld-networks.R [Boston] [Concrete]
#   (SB_UCI_ROUTES=paper_code or exact runs one route, SB_UCI_OUT=file writes elsewhere)
#   (default Boston, about 10 minutes on one core); each data set is added to
#   vignettes/sgld-sa-networks-results.rds.
suppressMessages(library(scalebayes))
sets <- commandArgs(TRUE)
if (!length(sets)) sets <- "Boston"
out_file <- Sys.getenv("SB_UCI_OUT", "vignettes/sgld-sa-networks-results.rds")
routes <- strsplit(Sys.getenv("SB_UCI_ROUTES", "paper_code,exact"), ",")[[1]]
# tau / v0 of the paper's Table 5 header
hyper <- list(Boston = c(tau = 1, v0 = 0.1), Concrete = c(tau = 0.5, v0 = 0.07))
splits <- 20
variants <- expand.grid(method = c("none", "em", "sa"), anneal = c(FALSE, TRUE), stringsAsFactors = FALSE)
# The authors' splits (data-raw/uci_splits.py: sklearn's train_test_split with their 20 seeds, reproduced with
# numpy's frozen RandomState stream).
uci_splits <- utils::read.csv("data-raw/uci-splits.csv")
seeds <- unique(uci_splits$seed)
split_data <- function(split) {
  te <- uci_splits$index[uci_splits$data == set & uci_splits$seed == seeds[split]]
  tr <- setdiff(seq_len(nrow(X)), te)
  mu <- colMeans(X[tr, ])
  s <- sqrt(colMeans(sweep(X[tr, ], 2, mu)^2))  # population sd of the training split (numpy's std)
  xs <- scale(X, mu, s)
  list(x = xs[tr, ], y = y[tr], newx = xs[te, ], newy = y[te])
}
one <- function(split, method, anneal, route) {
  d <- split_data(split)
  paper <- route == "paper_code"
  per_epoch <- ceiling(length(d$y) / 50)
  iters <- if (paper) 201L * (length(d$y) %/% 50) else 200L * per_epoch  # the authors drop the last batch
  t0 <- proc.time()[["elapsed"]]
  fit <- sgld_sa(d$x, d$y, model = nn_mlp(50), sampler = "sghmc", method = if (method == "none") "none" else method,
                 sparse_layers = method != "none", iterations = iters, batch_size = 50, v0 = hp[["v0"]], v1 = 10,
                 burnin = if (paper) iters - 1L else iters / 2, thin = 1, newx = d$newx, newy = d$newy,
                 keep_draws = TRUE, seed = seeds[split], quiet = TRUE, threads = 1,
                 control = sgmcmc_control(step_schedule = "constant", step_size = 1e-5, temperature = hp[["tau"]],
                                          anneal = if (anneal) 1.003 else 1, a = 1, b = 10, nu = 1, lambda = 1,
                                          sigma_init = 10, delta_init = 0.5, prior_var = 1e4,
                                          sa_A = if (paper) 1 else 10, sa_Z = if (paper) 100 else 1000,
                                          likelihood_sd = if (paper) sqrt(1 / 2) else NULL,
                                          kappa0_init = if (paper) 1e-4 else NULL,
                                          kappa1_init = if (paper) 1e-4 else NULL))
  last <- fit$pred[nrow(fit$pred), ]
  data.frame(data = set, split = split, route = route, method = method, anneal = anneal, label = fit$method,
             rmse_mean = fit$rmse_mean, rmse_last = sqrt(mean((last - d$newy)^2)), sigma = fit$latent$sigma,
             delta = if (ncol(fit$delta)) mean(fit$delta) else NA_real_,
             mean_rho = if (length(fit$inclusion)) mean(fit$inclusion) else NA_real_,
             seconds = proc.time()[["elapsed"]] - t0)
}
res <- if (file.exists(out_file)) readRDS(out_file) else list(per_split = NULL)
for (set in sets) {
  if (set == "Boston") {
    B <- MASS::Boston
    X <- as.matrix(B[, -14])
    y <- B$medv
  } else {
    C <- as.data.frame(modeldata::concrete)
    X <- as.matrix(C[, setdiff(names(C), "compressive_strength")])
    y <- C$compressive_strength
  }
  hp <- hyper[[set]]
  rows <- list()
  for (route in routes) for (v in seq_len(nrow(variants))) for (s in seq_len(splits)) {
    rows[[length(rows) + 1L]] <- one(s, variants$method[v], variants$anneal[v], route)
  }
  new <- do.call(rbind, rows)
  print(aggregate(cbind(rmse_mean, rmse_last) ~ route + label, new, mean))
  old <- res$per_split
  if (!is.null(old)) old <- old[old$data != set, , drop = FALSE]
  res$per_split <- rbind(old, new)
  res$info <- list(date = format(Sys.time()), version = as.character(packageVersion("scalebayes")))
  saveRDS(res, out_file)
}
