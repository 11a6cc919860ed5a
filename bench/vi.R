# One epoch of the variational methods against the same algorithms written in PyTorch (bench/vi_torch.py, run
# with Debian's python3-torch 1.13.1, the LibTorch scalebayes links), side by side, on one thread each:
#   sparse_vi: Algorithm 1 of Bai et al. (2020) with the Figure 1 settings (n = 3000, p = 200, 200-7-7-7-1 ReLU,
#              Adam 5e-3, batch 512, K = 1, tau = 0.5, one weight draw per minibatch) on sparse_vi_sim(seed = 1)
#   bbb:       Bayes by Backprop with the local reparameterization trick, MLP 784-400-400-10, N(0, 1) prior,
#              Adam 1e-3, batch 100, on MNIST-sized data (n = 10000, x ~ U(0, 1)^784, a random linear teacher)
# The package's time per epoch is the slope of the whole call's time between E1 and E2 epochs (what a user waits
# for per epoch; the fixed cost of a call is printed apart); PyTorch's is the median epoch time after a warm-up
# epoch (its interpreter start and import are left out). Rounds alternate package / PyTorch so both see the same
# machine load; the medians over rounds are reported. Ratio > 1: the package is faster.
# Run: Rscript bench/vi.R [rounds = 3]
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
rounds <- if (length(args) >= 1) as.integer(args[1]) else 3L
py <- "/usr/bin/python3"
script <- "bench/vi_torch.py"
stopifnot(file.exists(script))

# A 2-D double matrix as a NumPy .npy file (format 1.0, little-endian float64, C order).
write_npy <- function(m, path) {
  stopifnot(is.matrix(m), is.double(m))
  header <- sprintf("{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }", nrow(m), ncol(m))
  pad <- 16 - (10 + nchar(header) + 1) %% 16
  header <- paste0(header, strrep(" ", pad %% 16), "\n")
  con <- file(path, "wb"); on.exit(close(con))
  writeBin(as.raw(c(0x93, charToRaw("NUMPY"), 1, 0)), con)
  writeBin(as.integer(nchar(header)), con, size = 2, endian = "little")
  writeBin(charToRaw(header), con)
  writeBin(as.vector(t(m)), con, size = 8, endian = "little")
}

dir <- tempfile("sbvi"); dir.create(dir)
d <- sparse_vi_sim(seed = 1)
write_npy(cbind(d$y, d$x), file.path(dir, "sparse_vi.npy"))
set.seed(1)
xb <- matrix(runif(10000 * 784), 10000, 784)
yb <- max.col((xb - 0.5) %*% matrix(rnorm(784 * 10), 784, 10), ties.method = "first") - 1

run_torch <- function(task, epochs) {
  out <- system2(py, c(script, "--task", task, "--threads", 1, "--epochs", epochs, "--seed", 1,
                       "--data", file.path(dir, paste0(task, ".npy"))), stdout = TRUE, env = "OMP_NUM_THREADS=1")
  jsonlite::fromJSON(out[length(out)])$epoch_seconds_median
}
write_npy(cbind(as.double(yb), xb), file.path(dir, "bbb.npy"))

ours <- list(
  sparse_vi = function(epochs) {
    system.time(sparse_vi(d$x, d$y, model = nn_mlp(c(7, 7, 7)), epochs = epochs, batch_size = 512, draws = 1,
                          threads = 1, seed = 1, quiet = TRUE, control = nn_control(lr = 5e-3, certify = FALSE),
                          vi = vi_control(init_mu = 0.6, noise_sd = 1)))[["elapsed"]]
  },
  bbb = function(epochs) {
    system.time(bbb(xb, factor(yb), model = nn_mlp(c(400, 400)), epochs = epochs, batch_size = 100, draws = 1,
                    threads = 1, seed = 1, quiet = TRUE, control = nn_control(lr = 1e-3),
                    vi = vi_control(init_sigma = log1p(exp(-5)), prior_sd = 1)))[["elapsed"]]
  }
)
E <- list(sparse_vi = c(5L, 45L), bbb = c(1L, 3L))
rows <- list()
for (task in names(ours)) {
  r <- replicate(rounds, {
    t1 <- ours[[task]](E[[task]][1]); t2 <- ours[[task]](E[[task]][2])
    tt <- run_torch(task, if (task == "bbb") 3L else 30L)
    c(ours = (t2 - t1) / diff(E[[task]]), fixed = t1 - E[[task]][1] * (t2 - t1) / diff(E[[task]]), torch = tt)
  })
  m <- apply(r, 1, stats::median)
  rows[[task]] <- data.frame(task = task, scalebayes_epoch_s = signif(m[["ours"]], 3),
                             call_fixed_s = signif(m[["fixed"]], 3), pytorch_epoch_s = signif(m[["torch"]], 3),
                             ratio = round(m[["torch"]] / m[["ours"]], 2))
}
cat(sprintf("scalebayes %s vs PyTorch 1.13.1, 1 thread each, %d rounds, %s, load %s\n",
            utils::packageVersion("scalebayes"), rounds, format(Sys.time(), "%Y-%m-%d %H:%M %Z"),
            paste(readLines("/proc/loadavg", warn = FALSE), collapse = "")))
print(do.call(rbind, rows), row.names = FALSE)
unlink(dir, recursive = TRUE)
