# Per-iteration cost of HAMCMC-SA (and HAMCMC) against SGLD-SA on the regression of Wang, Deng & Lin (2021,
# Figure 2): n = 100, x ~ N_p(0, Sigma) with Sigma_ij = 0.8^|i-j|, beta = (3, 1, 0, ...), noise variance 3, SSGL
# prior with v0 = 0.1, v1 = 100, a = 1, b = p, SA of the latents. Minibatch 50 (the paper gives none), 1 thread,
# one chain, the draws of one coefficient stored, step 1e-3 constant (timing only: the chains need not mix).
# Best of `reps` whole calls per cell, divided by the iterations. The matrix form (O(p^3) per iteration) at p = 200
# only.
#   Rscript bench/hamcmc.R [reps]
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
res <- NULL
for (p in as.integer(names(iters))) {
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
res$ratio_to_sgld <- res$us_per_iter / res$us_per_iter[res$sampler == "SGLD-SA"][match(res$p, unique(res$p))]
res$us_per_iter_per_1000p <- res$us_per_iter / res$p * 1000
print(res, digits = 3, row.names = FALSE)
