# Batched WBB draws of networks (wbb_nn(batch = ), nn/batched.hpp) against one network per thread (batch = FALSE,
# "today's" wbb_nn()) and against the same batched network written in PyTorch (bench/batched_torch.py: weights
# with a leading draw dimension, torch.baddbmm, Exp(1) example weights per draw, one Adam over all), run in the
# same session, one thread and two. Debian python3-torch 1.13.1 (the LibTorch scalebayes links), OpenBLAS.
#   1. 100 WBB draws of a 13-50-50-1 MLP on 405 standardized Boston rows (MASS::Boston), 100 epochs, batch 50,
#      Adam lr 1e-3, lambda 1e-4
#   2. 100 draws x 5 epochs of the 784-128-64-10 MLP on 2,000 MNIST digits (batch 50)
#   3. the crossover: batched / one network per thread for growing networks (16 draws, 3 epochs, 1,000 rows)
#   4. SGHMC-SA, 8 chains of the 13-50-50-1 MLP on the 405 standardized Boston rows (batch 50, 2,000 iterations,
#      fixed step 0.03 / 405 so that the step-size warm-up is not timed, predictions on the 101 other rows):
#      whole sgld_sa() calls, batched (sgld_sa(batch = "auto"), nn/batched_sgmcmc.hpp) against batch = FALSE and
#      against the same batched chains written in PyTorch (bench/batched_sgmcmc_torch.py: baddbmm, autograd, the
#      SSGL prior, SA of the latent variables, SGHMC, running mean of the test predictions)
#   5. HAMCMC-SA (sa_form "diagonal", the networks' default, and "lowrank") and SGHMC-SA with magnitude pruning
#      (prune_S = 0.5), 8 chains of the same MLP and data, 1,000 iterations, default step (the step-size warm-up
#      included: whole calls, as a user runs them), batched against batch = FALSE (no PyTorch counterpart)
#   6. the group size of network chains: 4 SGLD / HAMCMC-SA chains x 200 iterations of the 784-128-64-10 MLP on
#      2,000 MNIST digits (fixed steps 0.3 / 2000 and 0.9), one thread, batch = FALSE / 1 / 2 / 4 / "auto"
#   7. convolutional networks (whole calls, batched against batch = FALSE, one thread and two): WBB draws and
#      SGHMC-SA chains (fixed step) of the conv1d motif network (bench/conv1d_motif.R's data: 300 sequences of
#      length 40, conv1d 4 x 5, dense 8) and of a small MNIST CNN (conv 8 x 3x3, max pool 2, conv 16 x 3x3,
#      max pool 2, dense 32; 1,000 digits)
# scalebayes times are whole wbb_nn() calls (standardization, draws, assembling the fit) with certify = FALSE
# (the end-of-fit certificate has no counterpart in the PyTorch loop); PyTorch times are initialization and
# training. Run: Rscript bench/batched.R   (about 12 minutes on 2 cores; SB_BENCH_QUICK=1: section 1 only,
# SB_BENCH_SKIP=1,3: leave sections out; SB_BENCH_ONLY=4: that section only)
suppressPackageStartupMessages(library(scalebayes))
stopifnot(sb_torch_available())
py <- if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else "python3"
here <- dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)[1]))
ref <- file.path(here, "batched_torch.py")
if (!file.exists(ref)) ref <- "bench/batched_torch.py"
quick <- nzchar(Sys.getenv("SB_BENCH_QUICK"))
skip <- as.integer(strsplit(Sys.getenv("SB_BENCH_SKIP"), ",")[[1]])
only <- as.integer(strsplit(Sys.getenv("SB_BENCH_ONLY"), ",")[[1]])
section <- function(k) !(k %in% skip) && (!quick || k == 1L) && (!length(only) || k %in% only)

run_torch <- function(x, y, hidden, epochs, draws, threads, family) {
  d <- tempfile("sbb"); dir.create(d)
  writeBin(as.vector(t(x)), file.path(d, "x.f32"), size = 4)
  writeBin(as.double(y), file.path(d, "y.f32"), size = 4)
  # one OpenBLAS thread under torch's own threads (scalebayes does the same, nn::BlasThreadGuard): with
  # OPENBLAS_NUM_THREADS=2 and 2 torch threads this script took 172 s instead of 8 s on the shared 2-core VM
  env <- sprintf(c("OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=%d"), threads)
  out <- system2(py, c(ref, file.path(d, "x.f32"), file.path(d, "y.f32"), nrow(x), ncol(x), paste(hidden, collapse = ","),
                       epochs, 50, draws, threads, "1e-3", family), stdout = TRUE, env = env)
  as.numeric(sub("seconds ", "", out[length(out)]))
}
run_sb <- function(x, y, hidden, epochs, draws, threads, batch) {
  system.time(wbb_nn(x, y, model = nn_mlp(hidden), draws = draws, epochs = epochs, batch_size = 50, seed = 1,
                     threads = threads, quiet = TRUE, batch = batch, control = nn_control(certify = FALSE)))[["elapsed"]]
}

cat(sprintf("scalebayes %s, LibTorch %s, PyTorch %s, %d cores (%s), %s\n", packageVersion("scalebayes"),
            scalebayes_info()$torch$version, system2(py, c("-c", shQuote("import torch; print(torch.__version__)")), stdout = TRUE),
            parallel::detectCores(), sub(".*: *", "", grep("model name", readLines("/proc/cpuinfo"), value = TRUE)[1]),
            format(Sys.time(), "%Y-%m-%d %H:%M")))
cat("load average at start:", readLines("/proc/loadavg"), "\n")

if (section(1L)) {
cat("\n1. 100 WBB draws, 13-50-50-1 MLP, 405 standardized Boston rows, 100 epochs, batch 50, Adam 1e-3\n")
b <- MASS::Boston[1:405, ]
xb <- scale(as.matrix(b[, -14])); yb <- as.numeric(scale(b$medv))
for (th in 1:2) {
  t_unb <- run_sb(xb, yb, c(50, 50), 100, 100, th, FALSE)
  t_bat <- run_sb(xb, yb, c(50, 50), 100, 100, th, TRUE)
  t_py <- run_torch(xb, yb, c(50, 50), 100, 100, th, "gaussian")
  cat(sprintf("   %d thread%s: wbb_nn(batch = FALSE) %.2f s   batched %.2f s   PyTorch batched %.2f s   | batched vs one network per thread %.1fx, vs PyTorch %.2fx\n",
              th, if (th > 1) "s" else "", t_unb, t_bat, t_py, t_unb / t_bat, t_py / t_bat))
}
}

if (section(2L)) {
cat("\n2. 100 WBB draws x 5 epochs, 784-128-64-10 MLP, 2,000 MNIST digits, batch 50, Adam 1e-3\n")
dg <- mnist_digits()
xm <- matrix(dg$x[1:2000, , ], 2000); ym <- dg$y[1:2000]
xs <- (xm - mean(xm)) / sqrt(mean((xm - mean(xm))^2))  # wbb_nn's image standardization, for PyTorch
for (th in 1:2) {
  t_unb <- run_sb(xm, ym, c(128, 64), 5, 100, th, FALSE)
  t_bat <- run_sb(xm, ym, c(128, 64), 5, 100, th, TRUE)
  t_py <- run_torch(xs, as.integer(ym) - 1L, c(128, 64), 5, 100, th, "multinomial")
  cat(sprintf("   %d thread%s: wbb_nn(batch = FALSE) %.2f s   batched %.2f s   PyTorch batched %.2f s   | batched vs one network per thread %.2fx, vs PyTorch %.2fx\n",
              th, if (th > 1) "s" else "", t_unb, t_bat, t_py, t_unb / t_bat, t_py / t_bat))
}

}

if (section(3L)) {
cat("\n3. Crossover: 16 draws, 2 epochs, 1,000 rows, batch 50 (time one network per thread / time batched)\n")
set.seed(1)
for (cf in list(c(13, 50, 50), c(13, 128, 128), c(13, 256, 256), c(784, 128, 64), c(784, 256, 128), c(784, 512, 256),
                c(784, 1024, 512))) {
  x <- matrix(rnorm(1000 * cf[1]), 1000); y <- rnorm(1000)
  P <- cf[1] * cf[2] + cf[2] * cf[3] + cf[3] + cf[2] + cf[3] + 1
  r <- vapply(1:2, function(th) run_sb(x, y, cf[-1], 2, 16, th, FALSE) / run_sb(x, y, cf[-1], 2, 16, th, TRUE), 0)
  cat(sprintf("   %-12s %7d parameters: 1 thread %.2fx   2 threads %.2fx\n", paste(cf, collapse = "-"), P, r[1], r[2]))
}
}

if (section(4L)) {
cat("\n4. SGHMC-SA, 8 chains, 13-50-50-1 MLP, 405 standardized Boston rows, batch 50, 2,000 iterations, step 0.03 / 405\n")
b <- MASS::Boston
xb <- scale(as.matrix(b[, -14])); yb <- as.numeric(scale(b$medv))
tr <- 1:405
run_sg <- function(threads, batch) {
  fit <- NULL
  t <- system.time(fit <- suppressWarnings(sgld_sa(xb[tr, ], yb[tr], model = nn_mlp(c(50, 50)), sampler = "sghmc",
                                                   method = "sa", iterations = 2000, batch_size = 50, chains = 8,
                                                   seed = 1, threads = threads, quiet = TRUE, batch = batch,
                                                   newx = xb[-tr, ], control = sgmcmc_control(step_size = 0.03 / 405))))[["elapsed"]]
  list(t = t, fit = fit)
}
ref_sg <- file.path(here, "batched_sgmcmc_torch.py")
if (!file.exists(ref_sg)) ref_sg <- "bench/batched_sgmcmc_torch.py"
run_torch_sg <- function(threads) {
  d <- tempfile("sbs"); dir.create(d)
  writeBin(as.vector(t(xb[tr, ])), file.path(d, "x.f32"), size = 4)
  writeBin(as.vector(t(xb[-tr, ])), file.path(d, "t.f32"), size = 4)
  writeBin(yb[tr], file.path(d, "y.f32"), size = 4)
  writeBin(yb[-tr], file.path(d, "y.f32.test"), size = 4)
  env <- sprintf(c("OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=%d"), threads)
  out <- system2(py, c(ref_sg, file.path(d, "x.f32"), file.path(d, "y.f32"), file.path(d, "t.f32"), length(tr),
                       nrow(xb) - length(tr), ncol(xb), "50,50", 2000, 50, 8, threads, 0.03 / 405), stdout = TRUE, env = env)
  c(t = as.numeric(sub("seconds ", "", grep("^seconds", out, value = TRUE))),
    rmse = as.numeric(sub("rmse ", "", grep("^rmse", out, value = TRUE))))
}
for (th in 1:2) {
  u <- run_sg(th, FALSE)
  a <- run_sg(th, "auto")
  pt <- run_torch_sg(th)
  stopifnot(!u$fit$settings$batched, a$fit$settings$batched)
  rmse <- function(f) sqrt(mean((f$pred_mean - yb[-tr])^2))
  cat(sprintf("   %d thread%s: sgld_sa(batch = FALSE) %.2f s   batched %.2f s   PyTorch batched %.2f s   | batched vs one network per chain %.2fx, vs PyTorch %.2fx   (test RMSE %.4f / %.4f / PyTorch %.4f; max |pred_mean difference| %.2g)\n",
              th, if (th > 1) "s" else "", u$t, a$t, pt[["t"]], u$t / a$t, pt[["t"]] / a$t, rmse(u$fit), rmse(a$fit),
              pt[["rmse"]], max(abs(u$fit$pred_mean - a$fit$pred_mean))))
}
}

if (section(5L)) {
cat("\n5. HAMCMC-SA and pruned SGHMC-SA, 8 chains, 13-50-50-1 MLP, 405 standardized Boston rows, batch 50, 1,000 iterations, default step\n")
b <- MASS::Boston
xb <- scale(as.matrix(b[, -14])); yb <- as.numeric(scale(b$medv))
tr <- 1:405
cases <- list(`HAMCMC-SA diagonal` = list(sampler = "hamcmc_sa", control = sgmcmc_control()),
              `HAMCMC-SA lowrank` = list(sampler = "hamcmc_sa", control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "lowrank"))),
              `SGHMC-SA pruned 50%` = list(sampler = "sghmc", control = sgmcmc_control(ssgl = sgmcmc_ssgl(prune = TRUE, prune_S = 0.5))))
run5 <- function(cs, threads, batch) {
  fit <- NULL
  t <- system.time(fit <- suppressWarnings(sgld_sa(xb[tr, ], yb[tr], model = nn_mlp(c(50, 50)), sampler = cs$sampler,
                                                   iterations = 1000, batch_size = 50, chains = 8, seed = 1,
                                                   threads = threads, quiet = TRUE, batch = batch, newx = xb[-tr, ],
                                                   control = cs$control)))[["elapsed"]]
  list(t = t, fit = fit)
}
for (nm in names(cases)) for (th in 1:2) {
  u <- run5(cases[[nm]], th, FALSE)
  a <- run5(cases[[nm]], th, "auto")
  stopifnot(!u$fit$settings$batched, a$fit$settings$batched)
  rmse <- function(f) sqrt(mean((f$pred_mean - yb[-tr])^2))
  wu <- u$fit$warmup$seconds; wa <- a$fit$warmup$seconds  # the step warm-up: the same 4 batched pilot chains in both
  cat(sprintf("   %-20s %d thread%s: batch = FALSE %.2f s   batched %.2f s   | %.2fx   (after the warm-up of %.1f / %.1f s: %.2f / %.2f s, %.2fx; test RMSE %.4f / %.4f, diverged %d / %d)\n",
              nm, th, if (th > 1) "s" else " ", u$t, a$t, u$t / a$t, wu, wa, u$t - wu, a$t - wa, (u$t - wu) / (a$t - wa),
              rmse(u$fit), rmse(a$fit), sum(u$fit$diverged), sum(a$fit$diverged)))
}
}

if (section(6L)) {
cat("\n6. group size of network chains: 4 chains x 200 iterations, 784-128-64-10 MLP, 2,000 MNIST digits, one thread\n")
md <- mnist_digits(); xm <- matrix(md$x, dim(md$x)[1]); ym <- md$y
set.seed(1); im <- sample(nrow(xm), 2000)
for (b in list(FALSE, 1L, 2L, 4L, "auto")) for (s in c("sgld", "hamcmc_sa")) {
  t <- system.time(f <- suppressWarnings(sgld_sa(xm[im, ], ym[im], model = nn_mlp(), sampler = s, iterations = 200,
                                                 chains = 4, seed = 1, quiet = TRUE, threads = 1, batch = b,
                                                 control = sgmcmc_control(step_size = if (s == "sgld") 0.3 / 2000 else 0.9))))[["elapsed"]]
  cat(sprintf("   %-10s batch = %-5s %6.1f s (batched %s)\n", s, format(b), t, f$settings$batched))
}
}

if (section(7L)) {
cat("\n7. convolutional networks: whole calls, batched / one network per thread (batch = FALSE)\n")
source(file.path(here, "..", "tests", "testthat", "helper-sequences.R"))
dm <- motif_data(300, seed = 1)
motif_net <- nn_sequential(layer_reshape(c(1, 40)), layer_conv1d(4, 5), layer_relu(), layer_flatten(), layer_dense(8),
                           layer_relu())
md <- mnist_digits(); set.seed(1); im <- sample(dim(md$x)[1], 1000)
cnn <- nn_sequential(layer_conv2d(8, 3), layer_relu(), layer_maxpool2d(2), layer_conv2d(16, 3), layer_relu(),
                     layer_maxpool2d(2), layer_flatten(), layer_dense(32), layer_relu())
cases <- list(
  list("WBB, conv1d motif net, 40 draws x 20 epochs", function(b, th)
    wbb_nn(dm$x, dm$y, model = motif_net, draws = 40, epochs = 20, seed = 1, threads = th, quiet = TRUE, batch = b,
           control = nn_control(certify = FALSE))),
  list("WBB, MNIST CNN, 16 draws x 2 epochs", function(b, th)
    wbb_nn(md$x[im, , ], md$y[im], model = cnn, draws = 16, epochs = 2, seed = 1, threads = th, quiet = TRUE, batch = b,
           control = nn_control(certify = FALSE))),
  list("SGHMC-SA, conv1d motif net, 4 chains x 2,000 iterations", function(b, th)
    suppressWarnings(sgld_sa(dm$x, dm$y, model = motif_net, sampler = "sghmc", iterations = 2000, chains = 4, seed = 1,
                             threads = th, quiet = TRUE, batch = b, control = sgmcmc_control(step_size = 0.003)))),
  list("SGHMC-SA, MNIST CNN, 4 chains x 200 iterations", function(b, th)
    suppressWarnings(sgld_sa(md$x[im, , ], md$y[im], model = cnn, sampler = "sghmc", iterations = 200, chains = 4,
                             seed = 1, threads = th, quiet = TRUE, batch = b,
                             control = sgmcmc_control(step_size = 0.3 / 1000)))))
for (cs in cases) for (th in 1:2) {
  t_unb <- system.time(cs[[2]](FALSE, th))[["elapsed"]]
  t_bat <- system.time(f <- cs[[2]](TRUE, th))[["elapsed"]]
  stopifnot(isTRUE(f$settings$batched))
  cat(sprintf("   %-58s %d thread%s: batch = FALSE %6.2f s   batched %6.2f s   %.2fx\n", cs[[1]], th,
              if (th > 1) "s" else " ", t_unb, t_bat, t_unb / t_bat))
}
}
