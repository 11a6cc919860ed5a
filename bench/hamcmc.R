# Per-iteration cost of HAMCMC-SA (and HAMCMC) against SGLD-SA on the regression of Wang, Deng & Lin (2021,
# Figure 2): n = 100, x ~ N_p(0, Sigma) with Sigma_ij = 0.8^|i-j|, beta = (3, 1, 0, ...), noise variance 3, SSGL
# prior with v0 = 0.1, v1 = 100, a = 1, b = p, SA of the latents. Minibatch 50 (the paper gives none), 1 thread,
# one chain, the draws of one coefficient stored, step 1e-3 constant (timing only: the chains need not mix).
# Best of `reps` whole calls per cell, divided by the iterations. The matrix form (O(p^3) per iteration) at p = 200
# only.
#   Rscript bench/hamcmc.R [reps] [torch | ess | regression] [cells]
#   (torch: only the Table 2 network against PyTorch, at the end; ess: only the ESS-per-second table; regression:
#   only the cost table; cells: a regular expression of the cost table's cells, SGLD-SA always included)
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
  "HAMCMC-SA (diagonal, same batch)" = list(sampler = "hamcmc_sa", control = list(sa_form = "diagonal")),
  "HAMCMC-SA (lowrank, same batch)" = list(sampler = "hamcmc_sa", control = list(sa_form = "lowrank")),
  # (RESULTS.md's transport rows were run before the transport form was removed: ?hamcmc_sa)
  "HAMCMC (M = 2)" = list(sampler = "hamcmc", control = list()),
  "HAMCMC-SA (matrix)" = list(sampler = "hamcmc_sa", control = list(sa_form = "matrix"), only_p = 200, iter = 1000))
iters <- c("200" = 40000, "2000" = 8000, "20000" = 800)
cat(sprintf("%s, %s, R %s, scalebayes %s, best of %d\n", system("lscpu | grep 'Model name' | sed 's/.*: *//'", intern = TRUE),
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), getRversion(), packageVersion("scalebayes"), reps))
only_torch <- length(args) >= 2 && args[2] == "torch"
only_ess <- length(args) >= 2 && args[2] == "ess"
# a third argument: a regular expression of the cells to run (SGLD-SA always runs: the ratios need it)
if (length(args) >= 3) cells <- cells[names(cells) == "SGLD-SA" | grepl(args[3], names(cells))]
res <- NULL
# --- ESS per second of the samplers on the Figure 2 problem at p = 200 (data set 1 of vignettes/precompute-hamcmc.R's
# generator, the paper's learning rates: 0.001 SGLD, 0.1 HAMCMC / HAMCMC-SA, unnormalized; SA of the latents,
# omega_k = 2 (50 + k)^-0.75, M = 3, batch 50), 4 chains x 20 000 iterations, burn-in 5 000, thin 5, 1 thread:
# bulk ESS (posterior::ess_bulk over the 4 chains) of beta_1 and beta_2 and the median over the 198 null
# coefficients, divided by the wall seconds of the whole call.
#   Rscript bench/hamcmc.R 1 ess
if (only_ess) {
  fig2_ess_data <- function(r = 1, n = 100, p = 200) {
    set.seed(1000 + r)
    L <- chol(0.8^abs(outer(seq_len(p), seq_len(p), "-")))
    x <- matrix(stats::rnorm(n * p), n) %*% L
    list(x = x, y = drop(x %*% c(3, 1, rep(0, p - 2))) + stats::rnorm(n, sd = sqrt(3)))
  }
  d <- fig2_ess_data()
  arms <- list("SGLD-SA (lr 0.001)" = list("sgld", 0.001, "matrix"),
               "HAMCMC-SA matrix (lr 0.1)" = list("hamcmc_sa", 0.1, "matrix"),
               "HAMCMC-SA diagonal (lr 0.1)" = list("hamcmc_sa", 0.1, "diagonal"),
               "HAMCMC (lr 0.1)" = list("hamcmc", 0.1, "matrix"))
  out <- NULL
  for (nm in names(arms)) {
    a <- arms[[nm]]
    ctl <- sgmcmc_control(step_size = a[[2]],
                          step = sgmcmc_step(schedule = "constant"),
                          ssgl = sgmcmc_ssgl(sa_A = 2, sa_Z = 50, sa_alpha = 0.75, b = 200),
                          lbfgs = sgmcmc_lbfgs(memory = 3, sa_form = a[[3]]))
    fit <- NULL
    el <- system.time(fit <- tryCatch(suppressWarnings(
      sgld_sa(d$x, d$y, sampler = a[[1]], iterations = 20000, burnin = 5000, thin = 5, chains = 4, threads = 1,
              batch_size = 50, v0 = 0.1, v1 = 100, intercept = FALSE, seed = 1, quiet = TRUE, control = ctl)),
      scalebayes_error_divergence = function(e) NULL))[["elapsed"]]
    if (is.null(fit)) { out <- rbind(out, data.frame(sampler = nm, seconds = el, ess_b1 = NA, ess_b2 = NA,
                                                     ess_null_median = NA)); next }
    arr <- posterior::as_draws_array(fit)
    e <- vapply(seq_len(200), function(j) posterior::ess_bulk(unclass(arr)[, , j]), 0)
    out <- rbind(out, data.frame(sampler = nm, seconds = el, mean_b1 = mean(unclass(arr)[, , 1]),
                                 mean_b2 = mean(unclass(arr)[, , 2]), ess_b1 = e[1], ess_b2 = e[2],
                                 ess_null_median = stats::median(e[-(1:2)])))
  }
  out$ess_per_s_b1 <- out$ess_b1 / out$seconds
  out$ess_per_s_b2 <- out$ess_b2 / out$seconds
  out$ess_per_s_null <- out$ess_null_median / out$seconds
  print(out, digits = 3, row.names = FALSE)
  quit(save = "no")
}
for (p in if (only_torch) integer() else as.integer(names(iters))) {
  d <- fig2_data(100, p)
  T <- iters[[as.character(p)]]
  for (nm in names(cells)) {
    cl <- cells[[nm]]
    if (!is.null(cl$only_p) && cl$only_p != p) next
    T <- cl$iter %||% iters[[as.character(p)]]
    ctl <- sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(schedule = "constant"), lbfgs = cl$control)
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
if (length(args) >= 2 && args[2] == "regression") quit(save = "no")  # the regression table only

# --- One HAMCMC-SA epoch of the Table 2 network (Wang, Deng & Lin 2021, section 5.3.2) against the same sampler
# written in PyTorch (bench/hamcmc_torch.py, /usr/bin/python3 with torch 1.13.1), side by side in this process:
# 1,300 samples of elliptic_kle_data() on the 50 x 50 grid, batch 100 (13 iterations), M = 2, same-batch
# curvature (two gradients per iteration), diagonal form, one thread each. Best of `reps` runs; CPU seconds
# (user + system) are reported beside the wall clock because the bench machine is shared.
#   Rscript bench/hamcmc.R [reps] torch     (the torch comparison only)
table2_epoch <- function(reps, form = "diagonal") {
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
  ctl <- sgmcmc_control(step_size = ss,
                        step = sgmcmc_step(schedule = "constant", temperature = set$temperature),
                        ssgl = sgmcmc_ssgl(likelihood_sd = set$likelihood_sd, kappa0_init = 0, kappa1_init = set$kappa1),
                        lbfgs = sgmcmc_lbfgs(precond_A = 5, precond_Z = 10, precond_alpha = 0.9, memory = 2, sa_form = form))
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
  writeLines(c(paste(names(meta), format(meta, scientific = FALSE, digits = 15, trim = TRUE)), paste("sa_form", form)),
             file.path(dir, "meta.txt"))
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
  # (The fit names its 8.7 million parameters only when a named field is read, so the call pays no naming.)
  res <- data.frame(implementation = c("scalebayes (LibTorch C++), whole R call", "PyTorch 1.13.1 (python)"),
                    wall_s = c(min(r_ours[, "wall"]), min(r_torch[, "wall"])),
                    cpu_s = c(min(r_ours[, "cpu"]), min(r_torch[, "cpu"])))
  cat(sprintf("\nOne HAMCMC-SA epoch (%s form, 13 iterations of batch 100, M = 2, same-batch curvature) of the Table 2 network (%s parameters), 1 thread, best of %d:\n",
              form, format(8684208, big.mark = ","), reps))
  print(res, digits = 3, row.names = FALSE)
  cat(sprintf("ratio PyTorch / scalebayes, whole call: wall %.2f, CPU %.2f (>= 1: scalebayes no slower)\n",
              res$wall_s[2] / res$wall_s[1], res$cpu_s[2] / res$cpu_s[1]))
  invisible(res)
}
# (the transport form's rows in RESULTS.md were measured before that form was removed: ?hamcmc_sa; the PyTorch
# reference implements the diagonal and transport forms only)
table2_epoch(reps, "diagonal")

# The same comparison per iteration, without the fixed costs of a call: 300 samples (3 iterations per epoch),
# 2 and 6 epochs each; the marginal cost of the 12 extra iterations, and the fixed cost of a call (set-up and the
# R-side result assembly for 8.7 million parameters; bench/RESULTS.md has its history).
table2_marginal <- function(form = "diagonal") {
  G <- 50L; n <- 300L
  d <- elliptic_kle_data(n, grid = G, seed = 1, threads = 1, quiet = TRUE)
  x <- array(d$x, c(n, 1L, G, G)); y <- d$y; w <- 1 / rowSums(y^2)
  net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                       layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                       layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                       layer_dense(800), layer_relu())
  ss <- 1 / n
  ctl <- sgmcmc_control(step_size = ss,
                        step = sgmcmc_step(schedule = "constant", temperature = ss * 50000 / 0.01),
                        ssgl = sgmcmc_ssgl(likelihood_sd = sqrt(0.5), kappa0_init = 0, kappa1_init = 1e-4),
                        lbfgs = sgmcmc_lbfgs(precond_A = 5, precond_Z = 10, precond_alpha = 0.9, memory = 2, sa_form = form))
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
    writeLines(c(paste(names(meta), format(meta, scientific = FALSE, digits = 15, trim = TRUE)), paste("sa_form", form)),
               file.path(dir, "meta.txt"))
    o <- system2("/usr/bin/python3", c(script, dir), stdout = TRUE, env = "OMP_NUM_THREADS=1")
    v <- strsplit(o[length(o)], " ")[[1]]
    out <- rbind(out, c(epochs = ep, ours = cpu(t), torch = as.numeric(v[4])))
  }
  per_ours <- diff(out[, "ours"]) / 12; per_torch <- diff(out[, "torch"]) / 12
  cat(sprintf("\nPer iteration (%s form, marginal, 12 iterations): scalebayes %.2f CPU s, PyTorch %.2f CPU s, ratio %.2f; fixed cost of the R call %.1f CPU s\n",
              form, per_ours, per_torch, per_torch / per_ours, out[1, "ours"] - 6 * per_ours))
}
table2_marginal()
