# Benchmark: blasso() (scalebayes) against monomvn::blasso with matching priors, and the wall time of the
# WBB-paper simulation grid (Tables 1-3). Run from the package root with the package installed:
#   Rscript bench/blasso.R [grid_datasets]      (default 20 datasets per cell; the paper used 500)
#   Rscript bench/blasso.R 0 ess                (the ESS/s table only)
# Prints ESS/s (median over coefficients of posterior::ess_bulk, divided by the wall-clock seconds of the WHOLE
# call as a user makes it: system.time() around monomvn::blasso() and around blasso() with its default control,
# R-hat/ESS included as far as blasso() computes them, i.e. not at all: they are computed when fit$diagnostics
# is read) and ratios.
suppressPackageStartupMessages({
  library(scalebayes)
  library(posterior)
})
options(width = 200)
args <- commandArgs(trailingOnly = TRUE)
grid_b <- if (length(args)) as.integer(args[1]) else 20L
grid_only <- length(args) >= 2 && args[2] == "grid"
ess_only <- length(args) >= 2 && args[2] == "ess"  # Rscript bench/blasso.R 0 ess: the ESS/s table only
stopifnot(requireNamespace("monomvn", quietly = TRUE), requireNamespace("lars", quietly = TRUE))

ess_med <- function(draws) median(apply(draws, 2, function(v) posterior::ess_bulk(v)))

# lam = NULL: lambda^2 ~ Gamma(2, 0.1) on both sides; a number: lambda fixed at it on both sides (monomvn:
# lambda2 = lam^2, rd = FALSE).
bench_case <- function(label, x, y, ab, T = 5000, burn = 1000, reps = 3, lam = NULL) {
  p <- ncol(x)
  res <- list()
  for (r in seq_len(reps)) {
    # monomvn: Park & Casella lasso without RJ, lambda^2 ~ Gamma(2, 0.1) (rd), sigma2 prior ab, intercept,
    # no normalization. monomvn always runs ceil(thin * p) sweeps per kept draw for the lasso; we keep every
    # draw it returns (thin = 1 -> p sweeps each).
    t <- system.time(m <- monomvn::blasso(x, y, T = T / 5 + burn / 5, thin = 1, RJ = FALSE,
                                          lambda2 = if (is.null(lam)) 1 else lam^2,
                                          rd = if (is.null(lam)) c(2, 0.1) else FALSE,
                                          ab = ab, icept = TRUE, normalize = FALSE, verb = 0))[["elapsed"]]
    keep <- -(seq_len(burn / 5))
    em <- ess_med(m$beta[keep, , drop = FALSE])
    res[[length(res) + 1]] <- data.frame(case = label, method = "monomvn::blasso", draws = nrow(m$beta[keep, ]),
                                         seconds = t, ess = em, ess_s = em / t)
    # scalebayes: blocked Gibbs, same priors: 1 chain on 1 thread, 2 chains on 2 threads, and blasso()'s
    # defaults (4 chains x 1000 draws, burn-in 500) on 2 threads
    for (cf in list(c(1, 1, T, burn), c(2, 2, T / 2, burn), c(4, 2, 1000, 500))) {
      ch <- cf[1]
      t <- system.time(
        f <- blasso(x, y, lambda = if (is.null(lam)) "gamma" else lam, chains = ch, iterations = cf[3], burnin = cf[4],
                    threads = cf[2], seed = r, quiet = TRUE,
                    control = blasso_control(gamma_prior = c(2, 0.1), sigma2_prior = ab))
      )[["elapsed"]]
      stopifnot(f$timing[["elapsed"]] <= t + 0.01)  # fit$timing covers the call too
      e <- median(sapply(colnames(f$draws)[-1], function(nm) posterior::ess_bulk(
        matrix(f$draws[, nm], ncol = ch))))
      res[[length(res) + 1]] <- data.frame(case = label, method = sprintf("scalebayes::blasso (%d x %d, burn-in %d, %d thread%s)",
                                                                          ch, cf[3], cf[4], cf[2], if (cf[2] > 1) "s" else ""),
                                           draws = nrow(f$draws), seconds = t, ess = e, ess_s = e / t)
    }
  }
  d <- do.call(rbind, res)
  agg <- aggregate(cbind(seconds, ess, ess_s) ~ case + method + draws, d, median)
  agg$ratio_vs_monomvn <- agg$ess_s / agg$ess_s[agg$method == "monomvn::blasso"]
  agg
}

cat("Machine:", R.version$platform, "| cores:", parallel::detectCores(), "| date:", format(Sys.time(), tz = "UTC"), "UTC\n\n")

tab <- NULL
if (!grid_only) {
data(diabetes, package = "lars")
out1 <- bench_case("diabetes n=442 p=10", unclass(diabetes$x), diabetes$y, ab = c(0, 0))
set.seed(42)
n <- 50; p <- 100
S <- 0.1 * 0.8^abs(outer(1:p, 1:p, "-"))
x <- matrix(rnorm(n * p), n) %*% chol(S)
beta <- c(rep(1, 10), rep(0, p - 10))
y <- drop(x %*% beta + rnorm(n, 0, sqrt(sum((x %*% beta)^2) / (2 * n))))
out2 <- bench_case("A(i) n=50 p=100", x, y, ab = c(2, 2))
out3 <- bench_case("A(i) n=50 p=100, fixed lambda = 1", x, y, ab = c(2, 2), lam = 1)
tab <- rbind(out1, out2, out3)
print(format(tab, digits = 3), row.names = FALSE)
}
if (ess_only) quit(save = "no")

cat(sprintf("\nWBB-paper grid (Tables 1-3: 27 cells, T = 200, both methods, EB Bayesian lasso), %d datasets per cell, 2 threads:\n", grid_b))
pt <- system.time(cmp <- blasso_compare(datasets = grid_b, threads = 2, seed = 1, quiet = TRUE))
t <- pt[["elapsed"]]; cpu <- pt[["user.self"]] + pt[["sys.self"]]
cat(sprintf("  measured: wall %.1f s, CPU %.1f s (all threads) for %d datasets; load average during run: %s\n", t, cpu,
            27 * grid_b, paste(readLines("/proc/loadavg"), collapse = "")))
cat(sprintf("  extrapolated to B = 500 (x %.1f, linear in datasets): wall %.1f min at this load; CPU / 2 = %.1f min on 2 idle cores  [EXTRAPOLATION]\n",
            500 / grid_b, t * 500 / grid_b / 60, cpu / 2 * 500 / grid_b / 60))
saveRDS(list(ess = tab, grid_seconds = t, grid_cpu = cpu, grid_b = grid_b, compare = cmp), "bench/blasso-results.rds")
