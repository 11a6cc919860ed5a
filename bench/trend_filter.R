# Benchmark: weighted trend filtering (scalebayes) against genlasso, in one process.
#   Rscript bench/trend_filter.R            (about 10 minutes on a 2-core machine; from the package root)
# Prints CPU and elapsed times and ratios; results are recorded in bench/RESULTS.md (trend filtering section).
suppressPackageStartupMessages(library(scalebayes))
# the test hooks (cpp_tf_difference): the package installed with SCALEBAYES_TEST_HOOKS=1, as tools/setup.sh does
source("tests/testthat/helper-test-hooks.R")
stopifnot(requireNamespace("genlasso", quietly = TRUE))
cat(sprintf("date: %s | R %s | cores: %d | scalebayes %s | genlasso %s\n", format(Sys.time(), tz = "UTC"),
            getRversion(), parallel::detectCores(), utils::packageVersion("scalebayes"),
            utils::packageVersion("genlasso")))

cpu <- function(expr) {
  t <- system.time(expr, gcFirst = FALSE)
  c(cpu = unname(t[["user.self"]] + t[["sys.self"]]), elapsed = unname(t[["elapsed"]]))
}
signal <- function(n) { i <- seq_len(n); sin(4 * pi * i / n) * exp(3 * i / n) }

# ---- 1. one weighted draw, n = 500, k = 3, lambda = 1000 (paper's Figure 4 setting) ------------------------
set.seed(1)
n <- 500; k <- 3; lambda <- 1000
y <- signal(n) + rnorm(n, sd = 2)
D <- cpp_tf_difference(as.double(seq_len(n)), k)
G <- 3  # genlasso draws (each takes seconds)
ws <- replicate(200, rexp(n), simplify = FALSE)
t_gl <- numeric(G); obj_gl <- obj_sb <- numeric(G)
objective <- function(b, w) 0.5 * sum(w * (y - b)^2) + lambda * sum(abs(D %*% b))
for (g in seq_len(G)) {
  w <- ws[[g]]
  tg <- cpu(fit_g <- genlasso::genlasso(sqrt(w) * y, X = diag(sqrt(w)), D = D, minlam = lambda))
  t_gl[g] <- tg[["cpu"]]
  ours <- trend_filter(y, k = k, lambda = lambda, weights = w)
  obj_gl[g] <- objective(coef(fit_g, lambda = lambda)$beta, w)
  obj_sb[g] <- objective(ours$beta[, 1], w)
}
reps <- length(ws)
gaps <- numeric(reps)
t_sb <- cpu(for (r in seq_len(reps)) gaps[r] <- trend_filter(y, k = k, lambda = lambda, weights = ws[[r]])$rel_gap)
per_sb <- t_sb[["cpu"]] / reps
tg_unw <- cpu(genlasso::trendfilter(y, ord = k))
cat("\n## 1. One weighted problem, n = 500, k = 3, lambda = 1000\n")
cat(sprintf("genlasso::genlasso(X = diag(sqrt(w)), minlam = 1000): %.2f s CPU per draw (mean of %d)\n", mean(t_gl), G))
cat(sprintf("genlasso::trendfilter (unweighted, full path):        %.2f s CPU\n", tg_unw[["cpu"]]))
cat(sprintf("scalebayes trend_filter (weighted, incl. R overhead): %.2f ms CPU per draw (mean of %d)\n",
            1000 * per_sb, reps))
cat(sprintf("ratio genlasso / scalebayes: %.0fx\n", mean(t_gl) / per_sb))
cat(sprintf("scalebayes relative duality gap over the %d draws: max %.2e, median %.2e\n", reps, max(gaps),
            stats::median(gaps)))
cat(sprintf("weighted objective, genlasso vs scalebayes (draws 1..%d): %s\n", G,
            paste(sprintf("%.4f vs %.4f", obj_gl, obj_sb), collapse = "; ")))
cat("(genlasso's path algorithm loses accuracy at n = 500, k = 3: its objective is higher)\n")

# ---- 2. scaling in n and k -----------------------------------------------------------------------------
# lambda = ratio_k * lambda_max (ratio_3 = 2e-5 matches lambda = 1000 at n = 500, k = 3)
ratio <- c(`0` = 1e-3, `1` = 1e-4, `2` = 1e-5, `3` = 2e-5)
cat("\n## 2. Scaling (single unweighted solve to relative gap 1e-8, lambda = ratio_k * lambda_max)\n")
cat(sprintf("%-8s %-2s %-10s %-10s %-10s %-10s %-6s %-10s %-10s\n", "n", "k", "cpu_s", "elapsed_s", "rel_gap",
            "rounding", "iter", "genlasso_s", "ratio"))
last <- c(0, 0, 0, 0)
for (n in c(1e3, 1e4, 1e5, 1e6)) {
  set.seed(2)
  y <- signal(n) + rnorm(n, sd = 2)
  for (k in 0:3) {
    if (last[k + 1] > 30) {
      cat(sprintf("%-8d %-2d skipped (previous size took %.0f s)\n", as.integer(n), k, last[k + 1]))
      next
    }
    lmax <- tf_lambda_max(y, k = k)
    lam <- ratio[[as.character(k)]] * lmax
    tt <- cpu(f <- suppressWarnings(trend_filter(y, k = k, lambda = lam)))
    last[k + 1] <- tt[["elapsed"]]
    gs <- NA_real_
    if (n <= 1e3) {
      tg <- cpu(g <- if (k == 0) genlasso::fusedlasso1d(y) else genlasso::trendfilter(y, ord = k))
      gs <- tg[["cpu"]]
    }
    cat(sprintf("%-8d %-2d %-10.4f %-10.4f %-10.2e %-10.2e %-6d %-10s %-10s\n", as.integer(n), k, tt[["cpu"]],
                tt[["elapsed"]], f$rel_gap, f$rounding_rel, f$iter, if (is.na(gs)) "-" else sprintf("%.2f", gs),
                if (is.na(gs)) "-" else sprintf("%.0fx", gs / tt[["cpu"]])))
  }
}

# ---- 3. WBB, T = 1000, n = 500, k = 3, lambda = 1000, 1 and 2 threads -------------------------------------
set.seed(3)
n <- 500
y <- signal(n) + rnorm(n, sd = 2)
cat("\n## 3. trend_filter_wbb, T = 1000, n = 500, k = 3, lambda = 1000\n")
for (th in 1:2) {
  tt <- cpu(fit <- trend_filter_wbb(y, k = 3, lambda = 1000, draws = 1000, threads = th, seed = 1, quiet = TRUE))
  cat(sprintf("threads = %d: elapsed %.2f s, CPU %.2f s, max rel gap %.2e, mean Newton steps %.1f\n", th,
              tt[["elapsed"]], tt[["cpu"]], fit$diagnostics$max_rel_gap, mean(fit$diagnostics$iter)))
}
cat(sprintf("(genlasso at %.2f s per draw would need about %.0f s for T = 1000)\n", mean(t_gl), 1000 * mean(t_gl)))

# ---- 4. generalized lasso lambda_max for rank-deficient D (2-D grid graphs) ---------------------------------
# The exact value (linear program, certified bracket) against the feasible dual of the ridge-regularized normal
# equations (the previous engine's value, an upper bound) and against genlasso's first path knot.
grid_D <- function(r, c) {
  g <- expand.grid(i = 1:r, j = 1:c)
  e <- rbind(cbind(which(g$i < r), which(g$i < r) + 1), cbind(which(g$j < c), which(g$j < c) + r))
  Matrix::sparseMatrix(i = rep(seq_len(nrow(e)), 2), j = c(e[, 1], e[, 2]),
                       x = rep(c(-1, 1), each = nrow(e)), dims = c(nrow(e), r * c))
}
cat("\n## 4. generalized lasso lambda_max on r x r grids (y ~ N(0, 1), unit weights)\n")
cat(sprintf("%-8s %-8s %-12s %-12s %-10s %-10s %-12s\n", "grid", "n", "exact", "ridge_bound", "ratio",
            "lp_rel_gap", "elapsed_s"))
for (r in c(10, 100, 300)) {
  set.seed(r)
  D <- grid_D(r, r)
  y <- rnorm(r * r)
  Dc <- methods::as(D, "CsparseMatrix")
  tt <- cpu(lm <- scalebayes:::cpp_genlasso_lambda_max(y, rep(1, r * r), nrow(D), ncol(D), Dc@i, Dc@p, Dc@x, 1))
  cat(sprintf("%-8s %-8d %-12.6g %-12.6g %-10.3f %-10.1e %-12.3f\n", paste0(r, "x", r), r * r, lm$lambda_max,
              lm$ridge_bound, lm$ridge_bound / lm$lambda_max, lm$rel_gap, tt[["elapsed"]]))
  if (r == 10) {
    gl <- genlasso::genlasso(y, D = as.matrix(D))
    cat(sprintf("   genlasso's first knot on the 10 x 10 grid: %.6g\n", gl$lambda[1]))
  }
}
