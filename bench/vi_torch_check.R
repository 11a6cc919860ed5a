# The PyTorch side of bench/vi.R: writes the two data sets, runs bench/vi_torch.py (/usr/bin/python3, torch 1.13)
# for both tasks at 1 and 2 threads and prints the per-epoch wall times (median over the epochs after a warm-up
# epoch) and the losses of the first and last epoch.
#   sparse_vi: Algorithm 1 of Bai et al. (2020), Figure 1 settings, on sparse_vi_sim(seed = 1) (n = 3000, p = 200)
#   bbb:       Bayes by Backprop, local reparameterization, MLP 784-400-400-10, on MNIST-sized random data
#              (n = 10000, x ~ U(0, 1)^784, labels of a random linear teacher), batch 100
# The package side (sparse_vi(), bbb() on the same files' data) is to be added beside run_torch() by bench/vi.R.
# Run: Rscript bench/vi_torch_check.R [epochs_sparse_vi] [epochs_bbb]   (defaults 30 and 4: about 2 minutes)
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
epochs <- c(sparse_vi = 30L, bbb = 4L)
if (length(args) >= 1) epochs[["sparse_vi"]] <- as.integer(args[1])
if (length(args) >= 2) epochs[["bbb"]] <- as.integer(args[2])
py <- "/usr/bin/python3"
script <- file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)[1])), "vi_torch.py")
if (!file.exists(script)) script <- "bench/vi_torch.py"

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
write_npy(cbind(as.double(yb), xb), file.path(dir, "bbb.npy"))

run_torch <- function(task, threads, epochs) {
  out <- system2(py, c(script, "--task", task, "--threads", threads, "--epochs", epochs, "--seed", 1,
                       "--data", file.path(dir, paste0(task, ".npy"))),
                 stdout = TRUE, env = sprintf("OMP_NUM_THREADS=%d", threads))
  jsonlite::fromJSON(out[length(out)])
}

rows <- list()
for (task in c("sparse_vi", "bbb")) for (threads in 1:2) {
  r <- run_torch(task, threads, epochs[[task]])
  rows[[length(rows) + 1]] <- data.frame(task = task, threads = threads, epochs = r$epochs, n = r$n, p = r$p,
                                         batch = r$batch, torch_epoch_s = signif(r$epoch_seconds_median, 3),
                                         loss_first = signif(r$loss_first_epoch, 5),
                                         loss_last = signif(r$loss_last_epoch, 5))
}
res <- do.call(rbind, rows)
cat(sprintf("PyTorch %s (float32), %s\n", r$torch, format(Sys.time(), "%Y-%m-%d %H:%M %Z")))
print(res, row.names = FALSE)
unlink(dir, recursive = TRUE)
