# Neural-network engine against PyTorch (Debian python3-torch, the same LibTorch version), same machine,
# same threads (one intra-op thread), same network, loss, optimizer (Adam, lr 1e-3) and batch size.
# Times are whole calls as a user waits for them: scalebayes from the R call (data conversion, network
# construction, training); PyTorch from its arrays in memory (tensor creation, construction, training).
# scalebayes runs with certify = FALSE here: the default end-of-fit certificate (objective and gradient norm,
# one more pass over the data) has no counterpart in the PyTorch loop; its cost is printed separately.
#   1. one training epoch of the 784-128-64-10 MLP on the 10,000 MNIST digits, batch 50
#   2. one training epoch of the 2-Conv-2-FC CNN (valid convolutions) on 10,000 Fashion-MNIST images, batch 100
#   3. WBB draws of the MLP (n = 500, 100 epochs, batch 50) per second on 1 and 2 threads
# Run: Rscript bench/nn.R            (about 5 minutes on 2 cores)
suppressPackageStartupMessages(library(scalebayes))
stopifnot(sb_torch_available())
py <- if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else "python3"
ref <- file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)[1])), "nn_torch_reference.py")
if (!file.exists(ref)) ref <- "bench/nn_torch_reference.py"
reps <- as.integer(Sys.getenv("SB_BENCH_REPS", "3"))

run_torch <- function(x, y, task, epochs, batch, draws = 1) {
  d <- tempfile("sbnn"); dir.create(d)
  dm <- dim(x); if (length(dm) == 3L) dm <- c(dm[1], 1L, dm[2:3])
  # row-major float32 for numpy
  writeBin(as.vector(aperm(array(x, dm), rev(seq_along(dm)))), file.path(d, "x.f32"), size = 4)
  writeBin(as.integer(y) - 1L, file.path(d, "y.i32"), size = 4)
  writeLines(sprintf("%s %s", c("n", "c", "h", "w", "epochs", "batch", "lambda", "draws"),
                     c(dm, epochs, batch, 1e-4, draws)), file.path(d, "meta.txt"))
  out <- system2(py, c(ref, d, task), stdout = TRUE, env = "OMP_NUM_THREADS=1")
  as.numeric(strsplit(out[length(out)], " ")[[1]][2])
}
run_sb <- function(x, y, model, epochs, batch, draws = 1, threads = 1, dist = "unit") {
  system.time(wbb_nn(x, y, model = model, lambda = 1e-4, draws = draws, threads = threads, quiet = TRUE, seed = 1,
                     control = nn_control(epochs = epochs, batch_size = batch, weight_dist = dist, certify = FALSE)))[["elapsed"]]
}
best <- function(f) min(replicate(reps, f()))

cat(sprintf("scalebayes %s, LibTorch %s, PyTorch %s, %d cores, %s\n", packageVersion("scalebayes"),
            scalebayes_info()$torch$version, system2(py, c("-c", shQuote("import torch; print(torch.__version__)")), stdout = TRUE),
            parallel::detectCores(), format(Sys.time(), "%Y-%m-%d")))
digits <- mnist_digits()
cat("\n1. MLP 784-128-64-10, one epoch of 10,000 digits, batch 50, 1 thread (best of", reps, ")\n")
t_py <- best(function() run_torch(digits$x, digits$y, "mlp", 1, 50))
t_sb <- best(function() run_sb(digits$x, digits$y, nn_mlp(c(128, 64)), 1, 50))
cat(sprintf("   PyTorch %.2f s   scalebayes %.2f s   ratio PyTorch/scalebayes %.2f\n", t_py, t_sb, t_py / t_sb))
r1 <- c(t_py, t_sb)

fm <- fashion_mnist(split = "test")
cat("\n2. CNN 2-Conv-2-FC (valid), one epoch of 10,000 Fashion-MNIST images, batch 100, 1 thread (best of", reps, ")\n")
t_py <- best(function() run_torch(fm$x, fm$y, "cnn", 1, 100))
t_sb <- best(function() run_sb(fm$x, fm$y, nn_cnn(padding = "valid"), 1, 100))
cat(sprintf("   PyTorch %.2f s   scalebayes %.2f s   ratio PyTorch/scalebayes %.2f\n", t_py, t_sb, t_py / t_sb))
cat(sprintf("   (a 60,000-image epoch: about %.0f s in scalebayes)\n", 6 * t_sb))
t_cert <- best(function() system.time(wbb_nn(fm$x, fm$y, model = nn_cnn(padding = "valid"), draws = 1, threads = 1,
  quiet = TRUE, seed = 1, control = nn_control(epochs = 1, batch_size = 100, weight_dist = "unit")))[["elapsed"]])
cat(sprintf("   with the default end-of-fit certificate (certify = TRUE): %.2f s\n", t_cert))
r2 <- c(t_py, t_sb)

cat("\n3. WBB draws of the MLP: n = 500 digits, 100 epochs, batch 50, 8 draws\n")
set.seed(1)
i500 <- sample(nrow(digits$x), 500)
x5 <- digits$x[i500, , ]; y5 <- digits$y[i500]
t_py8 <- run_torch(x5, y5, "mlp", 100, 50, draws = 8)
t1 <- run_sb(x5, y5, nn_mlp(c(128, 64)), 100, 50, draws = 8, threads = 1, dist = "exponential")
t2 <- run_sb(x5, y5, nn_mlp(c(128, 64)), 100, 50, draws = 8, threads = 2, dist = "exponential")
cat(sprintf("   PyTorch (1 thread, loop) %.2f s per draw\n", t_py8 / 8))
cat(sprintf("   scalebayes 1 thread %.2f s per draw (%.2f draws/s), 2 threads %.2f s per draw (%.2f draws/s): speed-up %.2fx\n",
            t1 / 8, 8 / t1, t2 / 8, 8 / t2, t1 / t2))
cat(sprintf("   ratio PyTorch/scalebayes on 1 thread %.2f\n", t_py8 / t1))
