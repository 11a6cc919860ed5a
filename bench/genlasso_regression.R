# Regression check for refactors of the genlasso engine: runs trend_filter(), trend_filter_wbb() and
# generalized_lasso() on a fixed grid of problems and saves coefficients, dual solutions, iterations and gaps.
#
#   Rscript bench/genlasso_regression.R save    /tmp/genlasso-before.rds   # before the change
#   Rscript bench/genlasso_regression.R compare /tmp/genlasso-before.rds   # after: identical or <= 1e-12 rel.
#
# Grid: k = 0..3; n = 100, 1000, 1e4 (k = 3 at 1e4 included); unweighted and Exp(1)-weighted; even and
# uneven x; 6-lambda paths (warm starts) and single lambdas; newton = "qr" / "dual" for k = 1; WBB draws
# (common and separate prior weights, 2 threads); the generalized lasso on a weighted 2-D grid (lambda_max LP,
# ridge LDLT and the path). n = 1e5 for k = 1, 2. About 1-2 minutes on the 2-core VM.
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
mode <- if (length(args) >= 1) args[1] else "save"
file <- if (length(args) >= 2) args[2] else "/tmp/genlasso-before.rds"

signal <- function(x) sin(4 * pi * x) + 2 * (x > 0.5) + 3 * x^2
keep <- function(f) f[intersect(names(f), c("beta", "u", "iter", "gap", "rel_gap", "primal", "rounding_rel",
                                            "df", "lambda", "lambda_max", "lambda_max_lower", "lambda_max_rel_gap",
                                            "draws", "w0", "converged"))]
out <- list()
for (n in c(100, 1000, 10000)) {
  for (k in 0:3) {
    for (wt in c("none", "exp")) {
      for (xs in c("even", "uneven")) {
        if (n == 10000 && xs == "uneven") next
        set.seed(1000 * k + n + (wt == "exp") * 7 + (xs == "uneven") * 13)
        x <- if (xs == "even") seq_len(n) / n else sort(runif(n))
        y <- signal(x) + rnorm(n, sd = 0.5)
        w <- if (wt == "exp") rexp(n) else NULL
        key <- sprintf("tf n=%d k=%d w=%s x=%s", n, k, wt, xs)
        fit <- suppressWarnings(trend_filter(y, x, k = k, weights = w, nlambda = 6, lambda_min_ratio = 1e-5))
        out[[paste(key, "path")]] <- keep(unclass(fit))
        lam1 <- fit$lambda_max * 1e-3
        fit1 <- suppressWarnings(trend_filter(y, x, k = k, weights = w, lambda = lam1,
                                              control = tf_control(warm_start = FALSE)))
        out[[paste(key, "single")]] <- keep(unclass(fit1))
        if (k == 1 && xs == "even") {
          for (nw in c("qr", "dual")) {
            f2 <- suppressWarnings(trend_filter(y, x, k = k, weights = w, lambda = fit$lambda[3:5],
                                                control = tf_control(newton = nw)))
            out[[paste(key, "newton", nw)]] <- keep(unclass(f2))
          }
        }
        if (k == 0 && n == 1000) {
          f3 <- suppressWarnings(trend_filter(y, x, k = 0, weights = w, lambda = fit$lambda[2:4],
                                              control = tf_control(method = "ip")))
          out[[paste(key, "ip")]] <- keep(unclass(f3))
        }
      }
    }
  }
}
# large problems: long-double dual normal equations (weighted k = 1) and the precision escalation (k = 2)
for (k in 1:2) {
  for (wt in c("none", "exp")) {
    set.seed(77 + k + (wt == "exp"))
    n <- 1e5
    x <- seq_len(n) / n
    y <- signal(x) + rnorm(n, sd = 0.5)
    w <- if (wt == "exp") rexp(n) else NULL
    lmax <- trend_filter(y, x, k = k, weights = w, nlambda = 1)$lambda_max
    f <- suppressWarnings(trend_filter(y, x, k = k, weights = w, lambda = lmax * c(1e-3, 1e-5)))
    out[[sprintf("tf n=1e5 k=%d w=%s", k, wt)]] <- keep(unclass(f))
  }
}
for (k in 1:3) {
  for (pw in c("common", "separate")) {
    set.seed(50 + k)
    n <- 200
    x <- seq_len(n) / n
    y <- signal(x) + rnorm(n, sd = 0.5)
    lam <- trend_filter(y, x, k = k, nlambda = 3)$lambda_max * 1e-3
    fw <- suppressWarnings(trend_filter_wbb(y, x, k = k, lambda = lam, draws = 8, prior_weights = pw,
                                            threads = 2, seed = 11, quiet = TRUE))
    out[[sprintf("wbb k=%d %s", k, pw)]] <- keep(unclass(fw))
  }
}
grid_D <- function(r, c) {
  id <- matrix(seq_len(r * c), r, c)
  e <- rbind(cbind(as.vector(id[-r, ]), as.vector(id[-1, ])), cbind(as.vector(id[, -c]), as.vector(id[, -1])))
  D <- matrix(0, nrow(e), r * c)
  D[cbind(seq_len(nrow(e)), e[, 1])] <- -1
  D[cbind(seq_len(nrow(e)), e[, 2])] <- 1
  D
}
for (sz in c(6, 15)) {
  for (wt in c("none", "exp")) {
    set.seed(300 + sz + (wt == "exp"))
    D <- grid_D(sz, sz)
    n <- ncol(D)
    y <- rep(c(0, 2), length.out = n) * (seq_len(n) > n / 2) + rnorm(n, sd = 0.3)
    w <- if (wt == "exp") rexp(n) else NULL
    g <- suppressWarnings(generalized_lasso(y, D, weights = w, nlambda = 5))
    out[[sprintf("genlasso %dx%d w=%s", sz, sz, wt)]] <- keep(unclass(g))
    g2 <- suppressWarnings(generalized_lasso(y, D, weights = w, lambda = g$lambda[3],
                                             penalty_factor = seq(0.5, 1.5, length.out = nrow(D))))
    out[[sprintf("genlasso %dx%d w=%s pw", sz, sz, wt)]] <- keep(unclass(g2))
  }
}

if (mode == "save") {
  saveRDS(out, file)
  cat("saved", length(out), "fits to", file, "\n")
} else {
  ref <- readRDS(file)
  stopifnot(identical(names(ref), names(out)))
  worst <- 0
  nident <- 0
  ntot <- 0
  for (nm in names(ref)) {
    for (f in names(ref[[nm]])) {
      a <- ref[[nm]][[f]]
      b <- out[[nm]][[f]]
      ntot <- ntot + 1
      if (identical(a, b)) {
        nident <- nident + 1
        next
      }
      if (!identical(dim(a), dim(b)) || length(a) != length(b) || typeof(a) != typeof(b)) {
        cat("DIFFERENT SHAPE:", nm, f, "\n")
        worst <- Inf
        next
      }
      if (is.numeric(a)) {
        d <- max(abs(a - b) / pmax(abs(a), abs(b), .Machine$double.xmin), na.rm = TRUE)
        if (!identical(is.na(a), is.na(b))) d <- Inf
      } else {
        d <- Inf
      }
      cat(sprintf("differs: %-40s %-14s max rel diff %.3g\n", nm, f, d))
      worst <- max(worst, d)
    }
  }
  cat(sprintf("%d of %d fields identical; worst relative difference %.3g\n", nident, ntot, worst))
  if (worst > 1e-12) quit(status = 1)
}
