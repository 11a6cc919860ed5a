# Milliseconds per epoch of the variational fits on the Figure 1 problem of Bai et al. (sparse_vi_sim(seed = 1):
# n = 3000, p = 200, 200-7-7-7-1 ReLU, batch 512, Adam 5e-3, one thread): sparse_vi() (spike-and-slab q, one
# weight draw per minibatch), bbb(estimator = "weights") and bbb(estimator = "local"). The epoch time is the
# slope of the whole call's time between 5 and 45 epochs (what a user waits for per epoch).
# Run: Rscript bench/vi_estimators.R [rounds = 3]
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
rounds <- if (length(args) >= 1) as.integer(args[1]) else 3L
d <- sparse_vi_sim(seed = 1)
call_time <- function(epochs, fun, vi) {
  system.time(fun(d$x, d$y, model = nn_mlp(c(7, 7, 7)), epochs = epochs, batch_size = 512, draws = 1, threads = 1,
                  seed = 1, quiet = TRUE, control = nn_control(lr = 5e-3, certify = FALSE), vi = vi))[["elapsed"]]
}
tasks <- list(
  sparse_vi = list(fun = sparse_vi, vi = vi_control(init_mu = 0.6, noise_sd = 1)),
  bbb_weights = list(fun = bbb, vi = vi_control(estimator = "weights", noise_sd = 1)),
  bbb_local = list(fun = bbb, vi = vi_control(estimator = "local", noise_sd = 1))
)
ms <- sapply(names(tasks), function(k) replicate(rounds, {
  t1 <- call_time(5, tasks[[k]]$fun, tasks[[k]]$vi); t2 <- call_time(45, tasks[[k]]$fun, tasks[[k]]$vi)
  1000 * (t2 - t1) / 40
}))
if (!is.matrix(ms)) ms <- matrix(ms, nrow = 1L, dimnames = list(NULL, names(tasks)))  # one round
cat(sprintf("scalebayes %s, ms per epoch, %d rounds, %s, load %s\n", utils::packageVersion("scalebayes"), rounds,
            format(Sys.time(), "%Y-%m-%d %H:%M %Z"), paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
print(round(rbind(ms, median = apply(ms, 2, stats::median)), 1))
