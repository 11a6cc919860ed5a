# Precompute for vignette "sgld-sa-networks": Table 5 of Deng, Zhang, Liang & Lin (2019), all five UCI data sets
# (Boston = MASS::Boston; Yacht, Energy, Wine, Concrete = the package data uci_*, from the authors' copies of
# the UCI files: data-raw/uci.R), six methods (SGHMC, EM, SA, each without and with annealing), the authors'
# 20 random 90/10 splits (uci_prepare(): scikit-learn's train_test_split with their seeds), by two routes:
#   paper_code: what the authors' UCI code computes (read in their public repository): the likelihood is the
#               squared-error sum (a Gaussian with variance 1/2 whatever sigma is; sigma enters the prior only),
#               SA step omega_k = (k + 100)^-0.7, kappa0 = kappa1 = 1e-4 at the start, 201 epochs of n %/% 50
#               minibatches, annealing tau_k = tau 1.003^k per iteration, and the reported number is the RMSE of
#               the LAST sample, mean +- standard error (sd / sqrt(20)) over the splits; plain SGHMC has no
#               spike-and-slab prior (L2 1e-4 = N(0, 1e4));
#   exact:      the method as the paper states it: Gaussian likelihood with variance sigma^2 (adapted), the
#               paper's SA step 10 (k + 1000)^-0.7, 200 epochs, and the RMSE of the posterior predictive mean
#               (average over the second half of the chain), mean and sd over the splits; the last-sample RMSE
#               of the same chains is kept too, to measure the effect of the metric alone.
# Concrete: with the raw response (mean 35.8 MPa) and the paper's learning rate 1e-5 on the summed scale, the
# sum-scale gradient of the first iterations is large enough that some splits' chains leave the stable region
# of SGHMC and become non-finite within ~30 iterations (measured: bench/RESULTS.md, "Table 5 on all five UCI
# data sets"). SB_UCI_CENTER=Concrete (the default) fits Concrete's response minus its training mean and adds
# the mean back to the predictions: the same model and prior up to the output bias's starting point (and its
# N(0, 1e4) prior centre), the same learning rate; SB_UCI_CENTER=none fits every raw response (diverging
# chains are recorded with rmse NA and diverged_at).
# Resumable: every fit is appended to the results file as it finishes and a rerun skips the cells (data, route,
# method, anneal, split) already there. Loops run split-major (all six methods of split 1, then split 2, ...),
# so a partial run has the same splits for every method.
# Run from the package root:
#   nice -n 10 Rscript vignettes/precompute-sgld-networks.R [Boston] [Yacht] [Energy] [Wine] [Concrete]
#   (default: all five; SB_UCI_ROUTES=paper_code or exact runs one route, SB_UCI_OUT=file writes elsewhere,
#   SB_UCI_SPLITS=k runs the first k splits). Time per fit on one core: Boston ~2 s, Yacht ~1 s, Energy ~3 s,
#   Wine ~6 s, Concrete ~4 s (paper-code route; bench/RESULTS.md).
suppressMessages(library(scalebayes))
sets <- commandArgs(TRUE)
all_sets <- c("Boston", "Yacht", "Energy", "Wine", "Concrete")
if (!length(sets)) sets <- all_sets
stopifnot(all(sets %in% all_sets))
out_file <- Sys.getenv("SB_UCI_OUT", "vignettes/results/sgld-sa-networks-results.rds")
routes <- strsplit(Sys.getenv("SB_UCI_ROUTES", "paper_code,exact"), ",")[[1]]
center <- strsplit(Sys.getenv("SB_UCI_CENTER", "Concrete"), ",")[[1]]
splits <- as.integer(Sys.getenv("SB_UCI_SPLITS", "20"))
# tau / v0 of the paper's Table 5 header
hyper <- list(Boston = c(tau = 1, v0 = 0.1), Yacht = c(tau = 1, v0 = 0.1), Energy = c(tau = 0.1, v0 = 0.1),
              Wine = c(tau = 0.5, v0 = 0.01), Concrete = c(tau = 0.5, v0 = 0.07))
variants <- expand.grid(method = c("none", "em", "sa"), anneal = c(FALSE, TRUE), stringsAsFactors = FALSE)
one <- function(set, split, method, anneal, route) {
  d <- uci_prepare(tolower(set), split = split)
  hp <- hyper[[set]]
  shift <- if (set %in% center) mean(d$y) else 0
  paper <- route == "paper_code"
  per_epoch <- ceiling(length(d$y) / 50)
  iters <- if (paper) 201L * (length(d$y) %/% 50) else 200L * per_epoch  # the authors drop the last batch
  t0 <- proc.time()[["elapsed"]]
  fit <- tryCatch(
    sgld_sa(d$x, d$y - shift, model = nn_mlp(50), family = "gaussian", sampler = "sghmc", method = if (method == "none") "none" else method,
            sparse_layers = method != "none", iterations = iters, batch_size = 50, v0 = hp[["v0"]], v1 = 10,
            burnin = if (paper) iters - 1L else iters / 2, thin = 1, newx = d$newx, newy = d$newy - shift,
            keep_draws = TRUE, seed = d$seed, quiet = TRUE, threads = 1,
            control = sgmcmc_control(step_size = 1e-5,
                                     step = sgmcmc_step(schedule = "constant", temperature = hp[["tau"]], anneal = if (anneal) 1.003 else 1),
                                     ssgl = sgmcmc_ssgl(a = 1, b = 10, nu = 1, lambda = 1, sigma_init = 10, delta_init = 0.5, prior_var = 1e4, sa_A = if (paper) 1 else 10, sa_Z = if (paper) 100 else 1000, likelihood_sd = if (paper) sqrt(1 / 2) else NULL, kappa0_init = if (paper) 1e-4 else NULL, kappa1_init = if (paper) 1e-4 else NULL))),
    scalebayes_error = function(e) e)
  row <- data.frame(data = set, split = split, route = route, method = method, anneal = anneal,
                    label = paste0(if (anneal) "A-" else "", "SGHMC", switch(method, none = "", em = "-EM", sa = "-SA")),
                    rmse_mean = NA_real_, rmse_last = NA_real_, sigma = NA_real_, delta = NA_real_,
                    mean_rho = NA_real_, seconds = NA_real_, y_shift = shift, diverged_at = NA_integer_)
  if (inherits(fit, "condition")) {  # a chain that diverged before any kept draw
    it <- regmatches(conditionMessage(fit), regexpr("iteration [0-9]+", conditionMessage(fit)))
    row$diverged_at <- if (length(it)) as.integer(sub("iteration ", "", it)) else -1L
  } else {
    last <- fit$pred[nrow(fit$pred), ]
    row$label <- fit$method
    row$rmse_mean <- fit$rmse_mean
    row$rmse_last <- sqrt(mean((last - (d$newy - shift))^2))
    row$sigma <- fit$latent$sigma
    row$delta <- if (ncol(fit$delta)) mean(fit$delta) else NA_real_
    row$mean_rho <- if (length(fit$inclusion)) mean(fit$inclusion) else NA_real_
  }
  row$seconds <- proc.time()[["elapsed"]] - t0
  row
}
res <- if (file.exists(out_file)) readRDS(out_file) else list(per_split = NULL)
key <- function(d) paste(d$data, d$route, d$method, d$anneal, d$split)
if (!is.null(res$per_split)) {  # results written before the columns y_shift / diverged_at existed
  if (is.null(res$per_split$y_shift)) res$per_split$y_shift <- 0
  if (is.null(res$per_split$diverged_at)) res$per_split$diverged_at <- NA_integer_
}
for (set in sets) for (route in routes) {
  for (s in seq_len(splits)) for (v in seq_len(nrow(variants))) {
    cell <- data.frame(data = set, route = route, method = variants$method[v], anneal = variants$anneal[v], split = s)
    if (!is.null(res$per_split) && key(cell) %in% key(res$per_split)) next
    row <- one(set, s, variants$method[v], variants$anneal[v], route)
    res$per_split <- rbind(res$per_split, row)
    res$info <- list(date = format(Sys.time()), version = as.character(packageVersion("scalebayes")))
    saveRDS(res, out_file)
  }
  done <- res$per_split[res$per_split$data == set & res$per_split$route == route, ]
  print(aggregate(cbind(rmse_mean, rmse_last) ~ route + label, done, mean))
}
