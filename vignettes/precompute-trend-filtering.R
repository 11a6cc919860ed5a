# Precomputes the heavy parts of vignettes/trend-filtering.Rmd and writes inst/extdata/trend-filtering.rds.
#   R_LIBS=<lib with scalebayes> Rscript vignettes/precompute-trend-filtering.R     (about 10 min on 2 cores)
suppressPackageStartupMessages(library(scalebayes))
out <- list(date = format(Sys.time(), tz = "UTC"), cores = parallel::detectCores())
truth_fun <- function(n) { i <- seq_len(n); sin(4 * pi * i / n) * exp(3 * i / n) }
n <- 500
f0 <- truth_fun(n)

# ---- Figure 4, both settings, T = 1000 ---------------------------------------------------------------
fig <- list()
for (s in list(list(sd = 2, lambda = 1000, seed = 500), list(sd = 1, lambda = 5000, seed = 501))) {
  set.seed(s$seed)
  y <- f0 + rnorm(n, sd = s$sd)
  tt <- system.time(fit <- trend_filter_wbb(y, k = 3, lambda = s$lambda, draws = 1000, seed = s$seed, quiet = TRUE))
  p <- predict(fit)
  fig[[sprintf("sd%g_lambda%g", s$sd, s$lambda)]] <- list(
    sd = s$sd, lambda = s$lambda, y = y, summary = p, elapsed = tt[["elapsed"]],
    max_rel_gap = fit$diagnostics$max_rel_gap, mean_iter = mean(fit$diagnostics$iter))
}
out$figure4 <- fig

# ---- coverage of the true curve over repeated datasets ----------------------------------------------
# WBB band (T draws) vs a parametric residual bootstrap band (B refits of y* = fit + sigma_hat * N(0, 1)),
# lambda fixed at the paper's 1000, noise sd 2.
R <- 100; T <- 500; B <- 500; lambda <- 1000; sd <- 2
cov_wbb_q <- cov_wbb_se <- cov_boot <- matrix(NA, R, n)
width_wbb <- width_boot <- numeric(R)
t_wbb <- t_boot <- 0
for (r in seq_len(R)) {
  set.seed(10000 + r)
  y <- f0 + rnorm(n, sd = sd)
  t_wbb <- t_wbb + system.time(
    fit <- trend_filter_wbb(y, k = 3, lambda = lambda, draws = T, seed = r, quiet = TRUE))[["elapsed"]]
  p <- predict(fit, prob = 0.95)
  cov_wbb_q[r, ] <- p$lower <= f0 & f0 <= p$upper
  cov_wbb_se[r, ] <- abs(p$estimate - f0) <= 2 * p$se
  width_wbb[r] <- mean(p$upper - p$lower)
  t_boot <- t_boot + system.time({
    bh <- p$estimate
    tf <- trend_filter(y, k = 3, lambda = lambda)
    sig <- sqrt(sum((y - bh)^2) / (n - tf$df))
    bs <- matrix(NA, B, n)
    for (b in seq_len(B)) bs[b, ] <- trend_filter(bh + rnorm(n, sd = sig), k = 3, lambda = lambda)$beta[, 1]
    q <- apply(bs, 2, stats::quantile, probs = c(0.025, 0.975), names = FALSE)
  })[["elapsed"]]
  cov_boot[r, ] <- q[1, ] <= f0 & f0 <= q[2, ]
  width_boot[r] <- mean(q[2, ] - q[1, ])
  if (r %% 10 == 0) message("dataset ", r)
}
out$coverage <- list(R = R, T = T, B = B, lambda = lambda, sd = sd,
                     wbb_quantile = colMeans(cov_wbb_q), wbb_se = colMeans(cov_wbb_se), boot = colMeans(cov_boot),
                     width_wbb = width_wbb, width_boot = width_boot, t_wbb = t_wbb, t_boot = t_boot)

# ---- n = 1e5 timings ---------------------------------------------------------------------------------
set.seed(7)
N <- 1e5
yb <- truth_fun(N) + rnorm(N, sd = 2)
big <- list()
for (k in 0:1) {
  lmax <- tf_lambda_max(yb, k = k)
  lam <- c(1e-3, 1e-4)[k + 1] * lmax
  tt <- system.time(f <- trend_filter(yb, k = k, lambda = lam))
  big[[paste0("k", k)]] <- list(lambda = lam, elapsed = tt[["elapsed"]], rel_gap = f$rel_gap, iter = f$iter)
}
tt <- system.time(wb <- trend_filter_wbb(yb, k = 0, lambda = big$k0$lambda, draws = 100, seed = 1, quiet = TRUE))
big$wbb_k0 <- list(draws = 100, elapsed = tt[["elapsed"]], threads = sb_default_threads())
out$big <- big
dir.create("inst/extdata", showWarnings = FALSE)
saveRDS(out, "inst/extdata/trend-filtering.rds", compress = "xz")
message("wrote inst/extdata/trend-filtering.rds")
