# Several Monte-Carlo samples per minibatch in bbb() / sparse_vi() (vi_control(samples = K)): the K forward passes
# run as one pass over the minibatch repeated K times (issue 40: VI where batching helps): the "local" and
# "per_example" estimators draw their noise per row; the "weights" estimator (sparse_vi()'s) draws K weight sets
# and computes each linear layer as a batched product. "per K=1" is the call's time over the K = 1 call's.
# Whole calls, one thread, 13-50-50-1 MLP on the 405 training rows of Boston (set.seed(1) split), batch 50,
# 100 epochs; seconds (median of 3) and the held-out RMSE of the posterior predictive mean.
# Run from the package root: Rscript bench/vi_samples.R   (about 3 minutes). To compare with a build before the
# stacked passes, install that build into another library and run the same script with R_LIBS pointing to it.
suppressPackageStartupMessages(library(scalebayes))
cat("scalebayes", format(utils::packageVersion("scalebayes")), "from", find.package("scalebayes"), "|",
    R.version.string, "|", format(Sys.time()), "\n")
b <- MASS::Boston; set.seed(1); te <- sample(506, 101); tr <- setdiff(1:506, te)
x <- as.matrix(b[, -14]); y <- b$medv
run <- function(fun, est, K, seed = 1) {
  f <- function() fun(x[tr, ], y[tr], model = nn_mlp(c(50, 50)), epochs = 100, batch_size = 50, threads = 1,
                      seed = seed, quiet = TRUE, vi = vi_control(samples = K, estimator = est))
  t <- replicate(3, system.time(fit <<- f())[["elapsed"]])
  p <- predict(fit, x[te, ])$fit
  c(seconds = median(t), rmse = sqrt(mean((p - y[te])^2)))
}
fit <- NULL
cat(sprintf("%-10s %-12s %3s %9s %9s %8s\n", "method", "estimator", "K", "seconds", "per K=1", "RMSE"))
for (cfg in list(list(bbb, "bbb", "local"), list(bbb, "bbb", "per_example"), list(sparse_vi, "sparse_vi", "weights"))) {
  base <- NA
  for (K in c(1L, 4L, 8L)) {
    r <- run(cfg[[1]], cfg[[3]], K)
    if (K == 1L) base <- r[["seconds"]]
    cat(sprintf("%-10s %-12s %3d %9.2f %9.2f %8.3f\n", cfg[[2]], cfg[[3]], K, r[["seconds"]], r[["seconds"]] / base, r[["rmse"]]))
  }
}
