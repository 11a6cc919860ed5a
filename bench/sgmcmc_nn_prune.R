# Does the SSGL prior select weights in a network with every default, and does magnitude pruning (Algorithm 1 of
# Deng, Zhang, Liang & Lin 2019, sgmcmc_ssgl(prune = TRUE)) keep the accuracy? (issue 56, item 2, networks)
#   boston: raw Boston housing, a held-out fifth (set.seed(42)), nn_mlp() (128-64), SGLD-SA with every default,
#           seeds 1-3, prune_S = 0 (no pruning), 0.5, 0.9, 0.95: held-out RMSE of the posterior predictive mean
#           with its delta-method se, final sparsity (share of exact zeros of the sparse weights) per chain.
#   v0:     the same Boston split, SGLD-SA, seeds 1-2, no pruning, v0 = 1 (default), 0.1, 0.03, 0.01: does a
#           narrower spike make the inclusion probabilities select? (mean inclusion, final delta and sigma)
#   mnist:  2,000 of mnist_digits() for training, 1,000 held out (set.seed(1)), nn_mlp(), SGLD-SA, seed 1: no
#           pruning; prune_S = 0.9 and 0.5 from the random start; 0.9 with the output layer dense
#           (sparse_layers = 1:2); and 0.5 continuing from the unpruned fit (sgmcmc_control(init = fit)).
# Run from the package root:  Rscript bench/sgmcmc_nn_prune.R [boston] [v0] [mnist]  (about 4 + 3 + 15 minutes on 2 cores;
# output in bench/sgmcmc_nn_prune.out.txt).
suppressPackageStartupMessages(library(scalebayes))
cat("scalebayes", format(utils::packageVersion("scalebayes")), "|", R.version.string, "|", format(Sys.time()), "\n")
what <- commandArgs(TRUE)
if (!length(what)) what <- c("boston", "v0", "mnist")
ctl_prune <- function(S, ...) {
  if (S > 0) sgmcmc_control(ssgl = sgmcmc_ssgl(prune = TRUE, prune_S = S), ...) else sgmcmc_control(...)
}
spars <- function(f) paste(sprintf("%.3f", f$sparsity), collapse = "/")
if ("boston" %in% what) {
  B <- MASS::Boston; x <- as.matrix(B[, -14]); y <- B$medv
  set.seed(42); test <- sample(nrow(x), nrow(x) %/% 5)
  for (S in c(0, 0.5, 0.9, 0.95)) for (seed in 1:3) {
    t0 <- proc.time()[[3]]
    f <- suppressWarnings(sgld_sa(x[-test, ], y[-test], model = nn_mlp(), seed = seed, quiet = TRUE, newx = x[test, ],
                                  newy = y[test], control = ctl_prune(S)))
    e <- (y[test] - f$pred_mean)^2
    cat(sprintf("boston S %-4g seed %d: RMSE %.3f (se %.3f); sparsity %s; mean inclusion %.3f; %.1f s\n", S, seed,
                f$rmse_mean, stats::sd(e) / sqrt(length(e)) / (2 * sqrt(mean(e))), spars(f), mean(f$inclusion),
                proc.time()[[3]] - t0))
  }
}
if ("v0" %in% what) {
  B <- MASS::Boston; x <- as.matrix(B[, -14]); y <- B$medv
  set.seed(42); test <- sample(nrow(x), nrow(x) %/% 5)
  for (v0 in c(1, 0.1, 0.03, 0.01)) for (seed in 1:2) {
    t0 <- proc.time()[[3]]
    f <- suppressWarnings(sgld_sa(x[-test, ], y[-test], model = nn_mlp(), seed = seed, quiet = TRUE, newx = x[test, ],
                                  newy = y[test], v0 = v0))
    cat(sprintf("v0 %-6g seed %d: RMSE %.3f; mean inclusion %.3f; share rho<0.5 %.3f; delta %s; sigma %s; %.1f s\n", v0,
                seed, f$rmse_mean, mean(f$inclusion), mean(f$inclusion < 0.5), signif(mean(f$delta), 3),
                signif(utils::tail(f$trace$sigma, 1), 3), proc.time()[[3]] - t0))
  }
}
if ("mnist" %in% what) {
  md <- mnist_digits(); x <- matrix(md$x, dim(md$x)[1]); y <- md$y
  set.seed(1); idx <- sample(nrow(x), 3000); tr <- idx[1:2000]; te <- idx[2001:3000]
  acc <- function(f) mean(predict(f, x[te, ], type = "class") == y[te])
  report <- function(label, f, t0) {
    a <- acc(f)
    cat(sprintf("mnist %-40s held-out accuracy %.3f (se %.3f); sparsity %s; %.0f s\n", label, a,
                sqrt(a * (1 - a) / length(te)), spars(f), proc.time()[[3]] - t0))
  }
  fits <- list()
  for (v in list(list("no pruning", 0, NULL), list("prune_S 0.9", 0.9, NULL), list("prune_S 0.5", 0.5, NULL),
                 list("prune_S 0.9, sparse_layers 1:2", 0.9, 1:2))) {
    t0 <- proc.time()[[3]]
    f <- suppressWarnings(sgld_sa(x[tr, ], y[tr], model = nn_mlp(), seed = 1, quiet = TRUE, control = ctl_prune(v[[2]]),
                                  sparse_layers = v[[3]]))
    report(v[[1]], f, t0)
    if (v[[2]] == 0) fits$base <- f
  }
  for (S in 0.5) {
    t0 <- proc.time()[[3]]
    f <- suppressWarnings(sgld_sa(x[tr, ], y[tr], model = nn_mlp(), seed = 2, quiet = TRUE,
                                  control = ctl_prune(S, init = fits$base)))
    report(sprintf("prune_S %g from the unpruned fit", S), f, t0)
  }
}
