# k = 1 Newton paths: "auto" (dual normal equations in double / long double, QR restart) against the Givens QR,
# on problems beyond the benchmark (bench/RESULTS.md, rerun 4). Usage: Rscript bench/trend_filter_k1_paths.R
library(scalebayes)
run <- function(label, y, x, w, ratio) {
  lam <- ratio * tf_lambda_max(y, x, k = 1, weights = w)
  a <- system.time(fa <- suppressWarnings(trend_filter(y, x, k = 1, weights = w, lambda = lam)))[["elapsed"]]
  q <- system.time(fq <- suppressWarnings(trend_filter(y, x, k = 1, weights = w, lambda = lam, control = tf_control(newton = "qr"))))[["elapsed"]]
  cat(sprintf("%-34s ratio %.0e | auto %6.2f s %3d it gap %.1e | qr %6.2f s %3d it gap %.1e | dP/P %.1e\n", label, ratio, a, fa$iter, fa$rel_gap, q, fq$iter, fq$rel_gap, (fa$primal - fq$primal) / fq$primal))
}
set.seed(11)
for (n in c(2e5, 5e5)) { x <- seq_len(n); y <- sin(4*pi*x/n)*exp(3*x/n) + rnorm(n, sd = 2)
  for (r in c(1e-3, 1e-5)) run(sprintf("unweighted n=%g", n), y, x, rep(1, n), r) }
for (n in c(1e5, 2e5)) { x <- seq_len(n); y <- sin(4*pi*x/n)*exp(3*x/n) + rnorm(n, sd = 2); w <- rexp(n)
  for (r in c(1e-2, 1e-4)) run(sprintf("Exp(1) weights n=%g", n), y, x, w, r) }
for (n in c(1e4, 3e4)) { x <- sort(runif(n)); y <- sin(6 * x) + rnorm(n, sd = 0.3); w <- 10^runif(n, -8, 0)
  for (r in c(1e-3, 1e-5)) run(sprintf("uneven x, w over 8 decades n=%g", n), y, x, w, r) }
n <- 5e4; x <- sort(runif(n)); y <- sin(6 * x) + rnorm(n, sd = 0.3); w <- 10^runif(n, -3, 0)
for (r in c(1e-3, 1e-5)) run("uneven x, w over 3 decades n=5e4", y, x, w, r)
