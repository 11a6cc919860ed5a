# Exact generalized-lasso path: genlasso vs scalebayes in the same process (full path unless maxsteps says).
# Run: R_LIBS=<lib with scalebayes> Rscript bench/genlasso_path.R   (needs genlasso)
suppressMessages({library(scalebayes); library(genlasso)})
tm <- function(expr) { t0 <- proc.time()[["elapsed"]]; v <- force(expr); list(v = v, t = proc.time()[["elapsed"]] - t0) }
row <- function(name, g, s) {
  K <- min(length(g$v$lambda), length(s$v$lambda))
  cat(sprintf("%-34s knots gl %5d sb %5d | gl %8.2f s  sb %7.3f s | ratio %7.1f | knots/s gl %7.0f sb %8.0f | max rel lambda diff %.1e\n",
              name, length(g$v$lambda), length(s$v$lambda), g$t, s$t, g$t / s$t, length(g$v$lambda) / g$t,
              length(s$v$lambda) / s$t, max(abs(g$v$lambda[1:K] - s$v$lambda[1:K]) / g$v$lambda[1:K])))
}
set.seed(1)
for (n in c(500, 2000)) for (k in 1:2) {
  x <- seq_len(n)
  y <- sin(x / (n / 12)) + rnorm(n, sd = 0.3)
  g <- tm(trendfilter(y, ord = k, maxsteps = 2000))
  s <- tm(suppressWarnings(trend_filter(y, k = k, path = TRUE, maxsteps = 2000)))
  row(sprintf("trend filter n = %d, k = %d", n, k), g, s)
}
y2 <- as.numeric(outer(1:30, 1:30, function(i, j) (i > 15) + (j > 10))) + rnorm(900, sd = 0.5)
ms <- 200
g <- tm(fusedlasso2d(y2, dim1 = 30, dim2 = 30, maxsteps = ms))
s <- tm(suppressWarnings(generalized_lasso(y2, fused_lasso_2d(30, 30), path = TRUE, maxsteps = ms)))
row(sprintf("fused lasso 2-D 30 x 30 (%d knots)", ms), g, s)
