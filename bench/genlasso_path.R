# Exact generalized-lasso path: genlasso vs scalebayes in the same process (full path unless maxsteps says),
# then the path against the certified interior point on a 50-value grid (trend_filter() / generalized_lasso()
# defaults), for the help's "when is the path faster".
# Run: R_LIBS=<lib with scalebayes> Rscript bench/genlasso_path.R   (needs genlasso)
suppressMessages({library(scalebayes); library(genlasso)})
tm <- function(expr) { t0 <- proc.time()[["elapsed"]]; v <- force(expr); list(v = v, t = proc.time()[["elapsed"]] - t0) }
row <- function(name, g, s) {
  K <- min(length(g$v$lambda), length(s$v$lambda))
  cat(sprintf("| %s | %d / %d | %.2f s | %.3f s | %.1f | %.0f | %.0f | %.1e |\n",
              name, length(g$v$lambda), length(s$v$lambda), g$t, s$t, g$t / s$t, length(g$v$lambda) / g$t,
              length(s$v$lambda) / s$t, max(abs(g$v$lambda[1:K] - s$v$lambda[1:K]) / g$v$lambda[1:K])))
}
cat("| problem | knots genlasso / scalebayes | genlasso | scalebayes | ratio | knots/s genlasso | knots/s scalebayes | max rel. knot diff |\n|---|---|---|---|---|---|---|---|\n")
set.seed(1)
for (n in c(500, 2000)) for (k in 1:2) {
  x <- seq_len(n)
  y <- sin(x / (n / 12)) + rnorm(n, sd = 0.3)
  g <- tm(trendfilter(y, ord = k, maxsteps = 2000))
  s <- tm(suppressWarnings(trend_filter(y, k = k, path = TRUE, maxsteps = 2000)))
  row(sprintf("trend filter n = %d, k = %d%s", n, k, if (n == 2000) " (maxsteps 2000)" else ""), g, s)
}
y2 <- as.numeric(outer(1:30, 1:30, function(i, j) (i > 15) + (j > 10))) + rnorm(900, sd = 0.5)
for (ms in c(200, 2000)) {
  g <- tm(fusedlasso2d(y2, dim1 = 30, dim2 = 30, maxsteps = ms))
  s <- tm(suppressWarnings(generalized_lasso(y2, fused_lasso_2d(30, 30), path = TRUE, maxsteps = ms)))
  row(sprintf("fused lasso 2-D 30 x 30 (maxsteps %d)", ms), g, s)
  if (ms == 2000) {
    l <- sort(unique(c(g$v$lambda, s$v$lambda)), decreasing = TRUE)
    l <- l[l >= max(min(g$v$lambda), min(s$v$lambda))]
    cat(sprintf("    30 x 30: primal paths at all %d knots of both: max |beta diff| %.1e\n", length(l),
                max(abs(coef(g$v, lambda = l)$beta - coef(s$v, lambda = l)$beta))))
  }
}
# design matrix X: a full path takes tens of milliseconds, so each is timed in CPU time (user + sys) over 15
# alternating repetitions of 5 fits each (medians); the same knots, beta and df are checked against genlasso
cpu <- function(f) { t0 <- proc.time(); for (i in 1:5) f(); sum((proc.time() - t0)[c(1, 2)]) / 5 }
for (sz in list(c(200, 100), c(500, 200))) {
  nX <- sz[1]; p <- sz[2]
  X <- matrix(rnorm(nX * p), nX, p)
  yx <- as.numeric(X %*% rep(c(0, 1, -1, 0.5), each = p / 4) + rnorm(nX))
  D1 <- getD1d(p); Ds <- fused_lasso_1d(p)
  g <- genlasso(yx, X, D1)
  s <- generalized_lasso(yx, Ds, X = X, path = TRUE)
  K <- min(length(g$lambda), length(s$lambda))
  tg <- ts <- numeric(15)
  for (r in 1:15) {
    tg[r] <- cpu(function() genlasso(yx, X, D1))
    ts[r] <- cpu(function() generalized_lasso(yx, Ds, X = X, path = TRUE))
  }
  cat(sprintf("| %d x %d X, fused lasso 1-D D (full path; CPU medians of 15 x 5) | %d / %d | %.4f s | %.4f s | %.1f | %.0f | %.0f | %.1e (beta %.1e, df equal: %s) |\n",
              nX, p, length(g$lambda), length(s$lambda), median(tg), median(ts), median(tg) / median(ts),
              length(g$lambda) / median(tg), length(s$lambda) / median(ts),
              max(abs(g$lambda[1:K] - s$lambda[1:K]) / g$lambda[1:K]),
              max(abs(g$beta[, 1:K] - s$beta[, 1:K])) / max(abs(g$beta)), identical(as.numeric(g$df), as.numeric(s$df))))
}

cat("\nPath (all knots) against the grid interior point (50 lambdas, lambda_max .. 1e-5 lambda_max for trend filtering, 1e-4 for generalized_lasso):\n")
cat("| problem | knots | path | grid (50 lambdas) | path / grid |\n|---|---|---|---|---|\n")
for (n in c(200, 500, 2000, 5000)) for (k in 1:2) {
  x <- seq_len(n)
  y <- sin(x / (n / 12)) + rnorm(n, sd = 0.3)
  ms <- if (n <= 2000) 10000 else 2000
  s <- tm(suppressWarnings(trend_filter(y, k = k, path = TRUE, maxsteps = ms)))
  gr <- tm(trend_filter(y, k = k))
  cat(sprintf("| trend filter n = %d, k = %d | %d%s | %.3f s | %.3f s | %.2f |\n", n, k, length(s$v$lambda),
              if (s$v$completepath) " (complete)" else " (maxsteps)", s$t, gr$t, s$t / gr$t))
}
for (d in c(10, 30)) {
  yy <- as.numeric(outer(1:d, 1:d, function(i, j) (i > d / 2) + (j > d / 3))) + rnorm(d * d, sd = 0.5)
  s <- tm(suppressWarnings(generalized_lasso(yy, fused_lasso_2d(d, d), path = TRUE, maxsteps = 10000)))
  gr <- tm(generalized_lasso(yy, fused_lasso_2d(d, d)))
  cat(sprintf("| fused lasso 2-D %d x %d | %d%s | %.3f s | %.3f s | %.2f |\n", d, d, length(s$v$lambda),
              if (s$v$completepath) " (complete)" else " (maxsteps)", s$t, gr$t, s$t / gr$t))
}
