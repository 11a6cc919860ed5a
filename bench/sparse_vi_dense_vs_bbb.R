# Why sparse_vi(lambda = 1) (dense, slab prior only) scored 0.872 and bbb() with its defaults 0.925 on the
# 2,000-digit split of bench/sparse_vi_mnist_defaults.R (issue 37, item 6): one setting at a time between the two
# (learning rate, estimator, prior sd, epochs), with the negative ELBO, its KL and the median sigma of q beside
# the accuracy, so that a q far from the ELBO's optimum shows as such.
# Digits: mnist_digits() rows 1-2000 train, 2001-3000 test (as the defaults bench).
# Run from the package root:  Rscript bench/sparse_vi_dense_vs_bbb.R [block]  with block one of
# defaults, lr, one_at_a_time, epochs (none: all, about 6 minutes on 2 cores); output in
# bench/sparse_vi_dense_vs_bbb.out.txt (the blocks run one at a time on a shared machine and concatenated).
suppressPackageStartupMessages(library(scalebayes))
blocks <- commandArgs(TRUE)
if (!length(blocks)) blocks <- c("defaults", "lr", "one_at_a_time", "epochs")
cat("scalebayes", format(utils::packageVersion("scalebayes")), "|", R.version.string, "|", format(Sys.time()), "\n")
m <- mnist_digits()
x <- matrix(m$x[1:3000, , ], 3000); y <- factor(m$y[1:3000])
tr <- 1:2000; te <- 2001:3000
run <- function(label, fn, seed = 1, ...) {
  t0 <- proc.time()[["elapsed"]]
  f <- fn(x[tr, ], y[tr], seed = seed, quiet = TRUE, threads = 2, ...)
  el <- proc.time()[["elapsed"]] - t0
  acc <- mean(predict(f, x[te, ], type = "class") == y[te])
  last <- utils::tail(f$trace, 1)
  s <- f$variational$sigma
  cat(sprintf("%-46s seed %d | accuracy %.4f | -ELBO %7.0f = NLL %5.0f + KL %7.0f | median sigma %.3f | %5.1f s\n",
              label, seed, acc, last$neg_elbo, last$nll, last$kl, stats::median(s[s > 0]), el))
  invisible(f)
}
slab <- vi_control(estimator = "weights", prior_sd = 1.3)
if ("defaults" %in% blocks) {
  cat("\n== each method's defaults ==\n")
  for (s in 1:3) run("bbb() defaults (local, sd 1, Adam 1e-3)", bbb, seed = s)
  for (s in 1:3) run("sparse_vi(lambda = 1) (weights, sd 1.3, 5e-3)", sparse_vi, seed = s, lambda = 1)
}
if ("lr" %in% blocks) {
  cat("\n== bbb() at sparse_vi()'s learning rate ==\n")
  for (s in 1:3) run("bbb(), Adam 5e-3", bbb, seed = s, control = nn_control(lr = 5e-3))
}
if ("one_at_a_time" %in% blocks) {
  cat("\n== one setting at a time (seed 1) ==\n")
  run("bbb(), weights estimator, sd 1.3, 5e-3", bbb, control = nn_control(lr = 5e-3), vi = slab)
  run("bbb(), weights estimator, sd 1, 5e-3", bbb, control = nn_control(lr = 5e-3), vi = vi_control(estimator = "weights"))
  run("bbb(), local, sd 1.3, 5e-3", bbb, control = nn_control(lr = 5e-3), vi = vi_control(prior_sd = 1.3))
  run("bbb(), weights estimator, sd 1, 1e-3", bbb, vi = vi_control(estimator = "weights"))
  run("sparse_vi(lambda = 1), Adam 1e-3", sparse_vi, lambda = 1, control = nn_control(lr = 1e-3))
}
if ("epochs" %in% blocks) {
  cat("\n== bbb() defaults trained longer (seed 1) ==\n")
  run("bbb() defaults, epochs = 300", bbb, epochs = 300)
}
