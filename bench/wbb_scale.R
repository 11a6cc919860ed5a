# Benchmark (issue 59, item 5): per-draw cost of the WBB lasso as n and p grow, side by side with an R loop of
# glmnet on the same weights, in one process.
#   Rscript bench/wbb_scale.R            the p rows: n = 1e4, p = 10 .. 1e5, 0.1 % non-zeros (a few minutes)
#   Rscript bench/wbb_scale.R dense      the n rows: dense x, p = 100, n = 1e3 .. 1e6 (gaussian)
#   Rscript bench/wbb_scale.R big        the 1e6 x 1e4 sparse binomial row (0.1 % non-zeros, 1e7 non-zeros)
#   Rscript bench/wbb_scale.R sparse dense big    all of them
# Each row: a dgCMatrix x (N(0, 1) non-zeros), y from 5 true coefficients, lambda = 0.2 lambda_max of the unweighted
# problem (fixed, no CV in the timing), standardize = FALSE in both (glmnet gets the raw sparse x and centres it
# implicitly, as scalebayes does), data weights and separate prior weights i.i.d. Exp(1), glmnet at the mapped
# lambda / penalty factors (glmnet_lambda()), thresh = 1e-7 (its default) and 1e-14.
# Prints ms per draw (scalebayes: the whole wbb() call, with its checks, standardization and unweighted fit,
# divided by the draws; glmnet: one glmnet() call per draw), the ratios to the glmnet loop, and the peak memory: R's heap ("max used" of gc()) and the
# process's resident peak (VmHWM) over the row.
suppressPackageStartupMessages({ library(scalebayes); library(glmnet); library(Matrix) })
args <- commandArgs(TRUE)
big <- "big" %in% args
dense <- "dense" %in% args
sparse <- "sparse" %in% args || !length(args)
`%||%` <- function(a, b) if (is.null(a)) b else a

vm_hwm <- function() {
  s <- tryCatch(readLines("/proc/self/status"), error = function(e) character())
  v <- grep("^VmHWM:", s, value = TRUE)
  if (length(v)) as.numeric(gsub("[^0-9]", "", v)) / 1024 else NA_real_  # MB
}

sim_sparse <- function(n, p, density, family, seed = 1) {
  set.seed(seed)
  x <- if (density < 1) rsparsematrix(n, p, density) else matrix(rnorm(n * p), n, p)
  k <- min(5, p)
  # the true coefficients on the columns with the most non-zeros, so that they carry signal
  top <- if (density < 1) order(diff(x@p), decreasing = TRUE)[seq_len(k)] else seq_len(k)
  eta <- drop(as.matrix(x[, top, drop = FALSE] %*% rep(c(3, -3, 2, -2, 1), length.out = k)))
  y <- if (family == "gaussian") eta + rnorm(n) else rbinom(n, 1, plogis(eta))
  lmax <- weighted_lasso(x, y, family = family, standardize = FALSE, nlambda = 1)$lambda[1]
  list(x = x, y = y, lambda = 0.2 * lmax, family = family)
}

glmnet_loop <- function(cs, draws, thresh) {
  n <- nrow(cs$x); p <- ncol(cs$x)
  set.seed(2)
  t0 <- proc.time()[["elapsed"]]
  for (t in seq_len(draws)) {
    w <- rexp(n); pf <- rexp(p)
    glmnet(cs$x, cs$y, family = cs$family, weights = w, penalty.factor = pf, standardize = FALSE,
           lambda = glmnet_lambda(cs$lambda, w, pf), thresh = thresh)
  }
  (proc.time()[["elapsed"]] - t0) / draws
}

time_wbb <- function(cs, draws, threads) {
  t <- system.time(fit <- wbb(cs$x, cs$y, family = cs$family, lambda = cs$lambda, draws = draws, threads = threads,
                              seed = 1, quiet = TRUE, standardize = FALSE, prior_weights = "separate"))[["elapsed"]]
  list(per_draw = t / draws, fit = fit)
}

rows <- if (sparse) list(
  list(n = 1e4, p = 10, family = "gaussian", draws = 200, gd = 50),
  list(n = 1e4, p = 100, family = "gaussian", draws = 200, gd = 50),
  list(n = 1e4, p = 1e3, family = "gaussian", draws = 100, gd = 20),
  list(n = 1e4, p = 1e4, family = "gaussian", draws = 40, gd = 8),
  list(n = 1e4, p = 1e5, family = "gaussian", draws = 10, gd = 3),
  list(n = 1e4, p = 1e3, family = "binomial", draws = 50, gd = 10),
  list(n = 1e4, p = 1e5, family = "binomial", draws = 6, gd = 2)
)
# dense x, p = 100: the n rows
if (dense) rows <- c(rows, list(
  list(n = 1e3, p = 100, family = "gaussian", draws = 400, gd = 100, density = 1),
  list(n = 1e4, p = 100, family = "gaussian", draws = 200, gd = 40, density = 1),
  list(n = 1e5, p = 100, family = "gaussian", draws = 200, gd = 8, density = 1),
  list(n = 1e6, p = 100, family = "gaussian", draws = 100, gd = 2, density = 1),
  list(n = 1e5, p = 100, family = "binomial", draws = 100, gd = 4, density = 1)))
if (big) rows <- c(rows, list(list(n = 1e6, p = 1e4, family = "binomial", draws = 4, gd = 1)))

cat(sprintf("%-9s %-7s %-8s %8s %6s %10s %10s %10s %10s %8s %8s %9s %9s %7s\n", "family", "n", "p", "nnz", "draws",
            "sb1_ms", "sb2_ms", "gl7_ms", "gl14_ms", "gl7/sb1", "gl7/sb2", "Rpeak_MB", "RSSpk_MB", "nonzero"))
for (r in rows) {
  gc(reset = TRUE)
  cs <- sim_sparse(r$n, r$p, r$density %||% 1e-3, r$family)
  s1 <- time_wbb(cs, r$draws, 1)
  s2 <- time_wbb(cs, r$draws, 2)
  g7 <- glmnet_loop(cs, r$gd, 1e-7)
  g14 <- glmnet_loop(cs, r$gd, 1e-14)
  rpeak <- sum(gc()[, 6])
  nzc <- mean(rowSums(as.matrix(s1$fit)[, -1, drop = FALSE] != 0))
  cat(sprintf("%-9s %-7.0e %-8.0e %8d %6d %10.2f %10.2f %10.2f %10.2f %8.1f %8.1f %9.0f %9.0f %7.1f\n", r$family, r$n,
              r$p, if (is.matrix(cs$x)) length(cs$x) else length(cs$x@x), r$draws, 1e3 * s1$per_draw, 1e3 * s2$per_draw, 1e3 * g7, 1e3 * g14,
              g7 / s1$per_draw, g7 / s2$per_draw, rpeak, vm_hwm(), nzc))
  rm(cs, s1, s2)
}
cat("machine:", Sys.info()[["nodename"]], "|", parallel::detectCores(), "cores |", R.version.string, "| glmnet",
    format(packageVersion("glmnet")), "|", format(Sys.time(), tz = "UTC", usetz = TRUE), "\n")
