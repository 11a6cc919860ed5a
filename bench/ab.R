# A/B timing of two installed builds of scalebayes, interleaved (A, B, A, B, ...) so that drifts in the
# machine's speed fall on both: whole calls as a user waits for them, best and median of `reps`.
#   Rscript bench/ab.R LIB_A LIB_B [reps] [tasks, comma-separated]
# Tasks: sgld_sa() regression (Table 1 problem, 100,000 iterations, 1 thread); one epoch of the 2-Conv-2-FC
# CNN on 10,000 Fashion-MNIST images (batch 100, 1 thread, wbb_nn with unit weights); 4 WBB draws of the
# 784-128-64-10 MLP (n = 500 digits, 100 epochs, batch 50, 1 thread; wbb batched, wbb_unbatched one network at a
# time); 40 WBB draws of the 13-50-50-1 MLP on 405 Boston rows (50 epochs, 1 thread; wbb_small batched,
# wbb_small_unbatched not); 2 SGHMC-SA chains of the MLP
# (n = 2,000 digits, 5 epochs, 2 threads; sghmc: batch = "auto", i.e. one batched group; sghmc1: batch = FALSE,
# one network per chain; hamcmc: HAMCMC-SA chains, batched by default); 5 epochs of bbb() on the same MLP (n = 2,000 digits, 1 thread, local
# reparameterization: the VI epoch). Each task runs in a fresh R process per build and repetition.
`%||%` <- function(a, b) if (is.null(a)) b else a
args <- commandArgs(trailingOnly = TRUE)
libs <- c(A = args[1], B = args[2])
reps <- if (length(args) >= 3) as.integer(args[3]) else 5L
tasks <- if (length(args) >= 4) strsplit(args[4], ",")[[1]] else NULL
task_code <- c(
  sgld = 'd <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, seed = 1)
          t <- system.time(sgld_sa(d$x, d$y, iterations = 100000, batch_size = 50, threads = 1, seed = 1, quiet = TRUE))',
  cnn = 'f <- fashion_mnist(split = "train"); x <- f$x[1:10000, , , drop = FALSE]; y <- f$y[1:10000]
         t <- system.time(wbb_nn(x, y, model = nn_cnn(padding = "valid"), draws = 1, threads = 1, seed = 1, quiet = TRUE,
                                 control = nn_control(epochs = 1, batch_size = 100, weight_dist = "unit", certify = FALSE)))',
  wbb = 'm <- if ("order" %in% names(formals(mnist_digits))) mnist_digits(order = "class") else mnist_digits(); set.seed(1); i <- sample(nrow(m$x), 500); x <- m$x[i, , , drop = FALSE]; y <- m$y[i]
         t <- system.time(wbb_nn(x, y, model = nn_mlp(c(128, 64)), draws = 4, threads = 1, seed = 1, quiet = TRUE,
                                 control = nn_control(epochs = 100, batch_size = 50, certify = FALSE)))',
  wbb_unbatched = 'm <- if ("order" %in% names(formals(mnist_digits))) mnist_digits(order = "class") else mnist_digits(); set.seed(1); i <- sample(nrow(m$x), 500); x <- m$x[i, , , drop = FALSE]; y <- m$y[i]
         t <- system.time(wbb_nn(x, y, model = nn_mlp(c(128, 64)), draws = 4, threads = 1, seed = 1, quiet = TRUE, batch = FALSE,
                                 control = nn_control(epochs = 100, batch_size = 50, certify = FALSE)))',
  wbb_small = 'b <- MASS::Boston[1:405, ]; x <- scale(as.matrix(b[, 1:13])); y <- b$medv
         t <- system.time(wbb_nn(x, y, model = nn_mlp(c(50, 50)), draws = 40, threads = 1, seed = 1, quiet = TRUE,
                                 epochs = 50, batch_size = 50, standardize = FALSE))',
  wbb_small_unbatched = 'b <- MASS::Boston[1:405, ]; x <- scale(as.matrix(b[, 1:13])); y <- b$medv
         t <- system.time(wbb_nn(x, y, model = nn_mlp(c(50, 50)), draws = 40, threads = 1, seed = 1, quiet = TRUE,
                                 epochs = 50, batch_size = 50, standardize = FALSE, batch = FALSE))',
  sghmc = 'm <- if ("order" %in% names(formals(mnist_digits))) mnist_digits(order = "class") else mnist_digits(); set.seed(1); i <- sample(nrow(m$x), 2000); x <- m$x[i, , , drop = FALSE]; y <- m$y[i]
           t <- system.time(sgld_sa(x, y, model = nn_mlp(c(128, 64)), sampler = "sghmc", epochs = 5, batch_size = 50,
                                    chains = 2, threads = 2, seed = 1, quiet = TRUE, control = sgmcmc_control(step_size = 1e-5)))',
  sghmc1 = 'm <- if ("order" %in% names(formals(mnist_digits))) mnist_digits(order = "class") else mnist_digits(); set.seed(1); i <- sample(nrow(m$x), 2000); x <- m$x[i, , , drop = FALSE]; y <- m$y[i]
           t <- system.time(sgld_sa(x, y, model = nn_mlp(c(128, 64)), sampler = "sghmc", epochs = 5, batch_size = 50, batch = FALSE,
                                    chains = 2, threads = 2, seed = 1, quiet = TRUE, control = sgmcmc_control(step_size = 1e-5)))',
  hamcmc = 'm <- if ("order" %in% names(formals(mnist_digits))) mnist_digits(order = "class") else mnist_digits(); set.seed(1); i <- sample(nrow(m$x), 2000); x <- m$x[i, , , drop = FALSE]; y <- m$y[i]
           t <- system.time(sgld_sa(x, y, model = nn_mlp(c(128, 64)), sampler = "hamcmc_sa", epochs = 5, batch_size = 50,
                                    chains = 2, threads = 2, seed = 1, quiet = TRUE, control = sgmcmc_control(step_size = 1e-3)))',
  vi = 'm <- if ("order" %in% names(formals(mnist_digits))) mnist_digits(order = "class") else mnist_digits(); set.seed(1); i <- sample(nrow(m$x), 2000); x <- m$x[i, , , drop = FALSE]; y <- m$y[i]
        t <- system.time(bbb(x, y, model = nn_mlp(c(128, 64)), epochs = 5, threads = 1, seed = 1, quiet = TRUE))')
run_one <- function(lib, code) {
  f <- tempfile(fileext = ".R")
  writeLines(c("suppressPackageStartupMessages(library(scalebayes))", code, 'cat(t[["elapsed"]], "\\n")'), f)
  out <- system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE, env = paste0("R_LIBS=", lib))
  as.numeric(out[length(out)])
}
cat(sprintf("A = %s\nB = %s\n%s, %d repetitions, %s\n", libs["A"], libs["B"], system("lscpu | grep 'Model name' | sed 's/.*: *//'", intern = TRUE),
            reps, format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC")))
for (task in tasks %||% names(task_code)) {
  tm <- matrix(NA_real_, reps, 2, dimnames = list(NULL, c("A", "B")))
  for (r in seq_len(reps)) for (b in c("A", "B")) tm[r, b] <- run_one(libs[b], task_code[[task]])
  cat(sprintf("%-6s A best %6.2f s median %6.2f s | B best %6.2f s median %6.2f s | B/A best %.3f median %.3f\n", task,
              min(tm[, "A"]), stats::median(tm[, "A"]), min(tm[, "B"]), stats::median(tm[, "B"]),
              min(tm[, "B"]) / min(tm[, "A"]), stats::median(tm[, "B"]) / stats::median(tm[, "A"])))
}
