# Per-iteration cost of HAMCMC-SA (and HAMCMC) against SGLD-SA on the regression of Wang, Deng & Lin (2021,
# Figure 2): n = 100, x ~ N_p(0, Sigma) with Sigma_ij = 0.8^|i-j|, beta = (3, 1, 0, ...), noise variance 3, SSGL
# prior with v0 = 0.1, v1 = 100, a = 1, b = p, SA of the latents. Minibatch 50 (the paper gives none), 1 thread,
# one chain, the draws of one coefficient stored, step 1e-3 constant (timing only: the chains need not mix).
# Best of `reps` whole calls per cell, divided by the iterations. The matrix form (O(p^3) per iteration) at p = 200
# only.
#   Rscript bench/hamcmc.R [reps] [torch]   (torch: only the Table 2 network against PyTorch, at the end)
suppressPackageStartupMessages(library(scalebayes))
options(width = 200)
`%||%` <- function(a, b) if (is.null(a)) b else a
args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args) >= 1) as.integer(args[1]) else 3L
fig2_data <- function(n, p, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  for (j in 2:p) x[, j] <- 0.8 * x[, j - 1] + sqrt(1 - 0.64) * x[, j]  # AR(1) columns: Sigma_ij = 0.8^|i-j|
  beta <- c(3, 1, rep(0, p - 2))
  list(x = x, y = drop(x %*% beta) + rnorm(n, sd = sqrt(3)))
}
cells <- list(
  "SGLD-SA" = list(sampler = "sgld", control = list()),
  "HAMCMC-SA (transport, same batch)" = list(sampler = "hamcmc_sa", control = list(sa_form = "transport")),
  "HAMCMC-SA (transport, consecutive)" = list(sampler = "hamcmc_sa",
                                              control = list(sa_form = "transport", curvature = "consecutive")),
  "HAMCMC (M = 2)" = list(sampler = "hamcmc", control = list()),
  "HAMCMC-SA (matrix)" = list(sampler = "hamcmc_sa", control = list(sa_form = "matrix"), only_p = 200, iter = 1000))
iters <- c("200" = 40000, "2000" = 8000, "20000" = 800)
cat(sprintf("%s, %s, R %s, scalebayes %s, best of %d\n", system("lscpu | grep 'Model name' | sed 's/.*: *//'", intern = TRUE),
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), getRversion(), packageVersion("scalebayes"), reps))
only_torch <- length(args) >= 2 && args[2] == "torch"
res <- NULL
for (p in if (only_torch) integer() else as.integer(names(iters))) {
  d <- fig2_data(100, p)
  T <- iters[[as.character(p)]]
  for (nm in names(cells)) {
    cl <- cells[[nm]]
    if (!is.null(cl$only_p) && cl$only_p != p) next
    T <- cl$iter %||% iters[[as.character(p)]]
    ctl <- do.call(sgmcmc_control, c(list(step_size = 1e-3, step_schedule = "constant"), cl$control))
    one <- function() {
      ok <- TRUE
      el <- system.time(tryCatch(
        sgld_sa(d$x, d$y, sampler = cl$sampler, iterations = T, batch_size = 50, v0 = 0.1, v1 = 100,
                intercept = FALSE, keep_draws = 1, threads = 1, seed = 1, quiet = TRUE, control = ctl),
        scalebayes_error_divergence = function(e) ok <<- FALSE))[["elapsed"]]
      if (ok) el else NA_real_  # a diverged chain stopped early: no timing
    }
    tm <- replicate(reps, one())
    res <- rbind(res, data.frame(p = p, sampler = nm, us_per_iter = 1e6 * suppressWarnings(min(tm, na.rm = TRUE)) / T))
  }
}
if (!only_torch) {
res$ratio_to_sgld <- res$us_per_iter / res$us_per_iter[res$sampler == "SGLD-SA"][match(res$p, unique(res$p))]
res$us_per_iter_per_1000p <- res$us_per_iter / res$p * 1000
print(res, digits = 3, row.names = FALSE)
}

# --- One HAMCMC-SA epoch of the Table 2 network (Wang, Deng & Lin 2021, section 5.3.2) against the same sampler
# written in PyTorch (bench/hamcmc_torch.py, /usr/bin/python3 with torch 1.13.1), side by side in this process:
# 1,300 samples of elliptic_kle_data() on the 50 x 50 grid, batch 100 (13 iterations), M = 2, same-batch
# curvature (two gradients per iteration), transport form, one thread each. Best of `reps` runs; CPU seconds
# (user + system) are reported beside the wall clock because the bench machine is shared.
#   Rscript bench/hamcmc.R [reps] torch     (the torch comparison only)
table2_epoch <- function(reps) {
  G <- 50L; n <- 1300L
  d <- elliptic_kle_data(n, grid = G, seed = 2021, threads = 1, quiet = TRUE)
  x <- array(d$x, c(n, 1L, G, G)); y <- d$y; w <- 1 / rowSums(y^2)
  net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                       layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                       layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                       layer_dense(800), layer_relu())
  ss <- 1 / n
  set <- list(step_size = ss, temperature = ss * 50000 / 0.01, likelihood_sd = sqrt(0.5), precond_A = 5,
              precond_Z = 10, precond_alpha = 0.9, memory = 2L, damping_r = 0.2, gamma_min = 1, kappa1 = 1e-4,
              prior_var = 1e4)
  ctl <- sgmcmc_control(step_size = ss, step_schedule = "constant", temperature = set$temperature,
                        likelihood_sd = set$likelihood_sd, kappa0_init = 0, kappa1_init = set$kappa1,
                        precond_A = 5, precond_Z = 10, precond_alpha = 0.9, memory = 2, sa_form = "transport")
  ours <- function() {
    tm <- system.time(suppressWarnings(sgld_sa(x, y, model = net, sampler = "hamcmc_sa", method = "none", epochs = 1,
                                               batch_size = 100, sparse_layers = c(3, 6, 7), weights = w, threads = 1,
                                               seed = 1, quiet = TRUE, keep_draws = FALSE, control = ctl)))
    c(wall = tm[["elapsed"]], cpu = tm[["user.self"]] + tm[["sys.self"]])
  }
  dir <- tempfile("hamcmc_torch"); dir.create(dir)
  writeBin(as.vector(aperm(x, c(4, 3, 2, 1))), file.path(dir, "x.f32"), size = 4)  # row-major n x 1 x G x G
  writeBin(as.vector(t(y)), file.path(dir, "y.f32"), size = 4)
  writeBin(w, file.path(dir, "w.f32"), size = 4)
  meta <- c(n = n, grid = G, q = ncol(y), epochs = 1, batch = 100, unlist(set))
  writeLines(paste(names(meta), format(meta, scientific = FALSE, digits = 15, trim = TRUE)), file.path(dir, "meta.txt"))
  script <- if (file.exists("bench/hamcmc_torch.py")) "bench/hamcmc_torch.py" else "hamcmc_torch.py"
  theirs <- function() {
    out <- system2("/usr/bin/python3", c(script, dir), stdout = TRUE, env = "OMP_NUM_THREADS=1")
    v <- strsplit(out[length(out)], " ")[[1]]
    c(wall = as.numeric(v[2]), cpu = as.numeric(v[4]))
  }
  r_ours <- r_torch <- NULL
  for (i in seq_len(reps)) {  # interleaved, so that both see the same load
    r_ours <- rbind(r_ours, ours())
    r_torch <- rbind(r_torch, theirs())
  }
  # A fixed cost of the R call that the PyTorch loop does not have: naming the 8.7 million parameters of the fit
  # (nn_param_names(), for fit$inclusion), timed here on its own.
  desc <- scalebayes:::cpp_nn_describe(scalebayes:::nn_engine_spec(scalebayes:::nn_resolve(net, c(1L, G, G), ncol(y)),
                                                                   c(1L, G, G), "gaussian"))
  tn <- system.time(scalebayes:::nn_param_names(desc))
  names_cpu <- tn[["user.self"]] + tn[["sys.self"]]
  res <- data.frame(implementation = c("scalebayes (LibTorch C++), whole R call", "scalebayes, less the parameter names",
                                       "PyTorch 1.13.1 (python)"),
                    wall_s = c(min(r_ours[, "wall"]), min(r_ours[, "wall"]) - tn[["elapsed"]], min(r_torch[, "wall"])),
                    cpu_s = c(min(r_ours[, "cpu"]), min(r_ours[, "cpu"]) - names_cpu, min(r_torch[, "cpu"])))
  cat(sprintf("\nOne HAMCMC-SA epoch (13 iterations of batch 100, M = 2, same-batch curvature) of the Table 2 network (%s parameters), 1 thread, best of %d:\n",
              format(8684208, big.mark = ","), reps))
  print(res, digits = 3, row.names = FALSE)
  cat(sprintf("ratio PyTorch / scalebayes, whole call: wall %.2f, CPU %.2f; less the names: wall %.2f, CPU %.2f (>= 1: scalebayes no slower)\n",
              res$wall_s[3] / res$wall_s[1], res$cpu_s[3] / res$cpu_s[1], res$wall_s[3] / res$wall_s[2],
              res$cpu_s[3] / res$cpu_s[2]))
  invisible(res)
}
table2_epoch(reps)

# The same comparison per iteration, without the fixed costs of a call: 300 samples (3 iterations per epoch),
# 2 and 6 epochs each; the marginal cost of the 12 extra iterations. (scalebayes's fixed cost per network fit, about
# 40 CPU s for 8.7 million parameters, is mostly R-side result assembly: parameter names, packing.)
table2_marginal <- function() {
  G <- 50L; n <- 300L
  d <- elliptic_kle_data(n, grid = G, seed = 1, threads = 1, quiet = TRUE)
  x <- array(d$x, c(n, 1L, G, G)); y <- d$y; w <- 1 / rowSums(y^2)
  net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                       layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                       layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                       layer_dense(800), layer_relu())
  ss <- 1 / n
  ctl <- sgmcmc_control(step_size = ss, step_schedule = "constant", temperature = ss * 50000 / 0.01,
                        likelihood_sd = sqrt(0.5), kappa0_init = 0, kappa1_init = 1e-4, precond_A = 5,
                        precond_Z = 10, precond_alpha = 0.9, memory = 2, sa_form = "transport")
  dir <- tempfile("hamcmc_marginal"); dir.create(dir)
  writeBin(as.vector(aperm(x, c(4, 3, 2, 1))), file.path(dir, "x.f32"), size = 4)
  writeBin(as.vector(t(y)), file.path(dir, "y.f32"), size = 4)
  writeBin(w, file.path(dir, "w.f32"), size = 4)
  script <- if (file.exists("bench/hamcmc_torch.py")) "bench/hamcmc_torch.py" else "hamcmc_torch.py"
  cpu <- function(t) t[["user.self"]] + t[["sys.self"]]
  out <- NULL
  for (ep in c(2, 6)) {
    t <- system.time(suppressWarnings(sgld_sa(x, y, model = net, sampler = "hamcmc_sa", method = "none", epochs = ep,
                                              batch_size = 100, sparse_layers = c(3, 6, 7), weights = w, threads = 1,
                                              seed = 1, quiet = TRUE, keep_draws = FALSE, control = ctl)))
    set <- list(step_size = ss, temperature = ss * 50000 / 0.01, likelihood_sd = sqrt(0.5), precond_A = 5,
                precond_Z = 10, precond_alpha = 0.9, memory = 2L, damping_r = 0.2, gamma_min = 1, kappa1 = 1e-4,
                prior_var = 1e4)
    meta <- c(n = n, grid = G, q = ncol(y), epochs = ep, batch = 100, unlist(set))
    writeLines(paste(names(meta), format(meta, scientific = FALSE, digits = 15, trim = TRUE)), file.path(dir, "meta.txt"))
    o <- system2("/usr/bin/python3", c(script, dir), stdout = TRUE, env = "OMP_NUM_THREADS=1")
    v <- strsplit(o[length(o)], " ")[[1]]
    out <- rbind(out, c(epochs = ep, ours = cpu(t), torch = as.numeric(v[4])))
  }
  per_ours <- diff(out[, "ours"]) / 12; per_torch <- diff(out[, "torch"]) / 12
  cat(sprintf("\nPer iteration (marginal, 12 iterations): scalebayes %.2f CPU s, PyTorch %.2f CPU s, ratio %.2f; fixed cost of the R call %.1f CPU s\n",
              per_ours, per_torch, per_torch / per_ours, out[1, "ours"] - 6 * per_ours))
}
table2_marginal()
