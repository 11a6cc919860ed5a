# The WBB paper's diabetes study (Newton, Polson & Xu 2021, section 3.2, Figure 3), end to end:
# lambda by 10-fold CV on the unweighted lasso, T = 1000 WBB draws with common and with separate prior
# weights, the Bayesian lasso beside them, marginal posteriors of the 10 coefficients, timings. Writes the figure to a PNG.
#   Rscript inst/scripts/diabetes-study.R [output-dir]
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
out_dir <- if (length(args)) args[1] else "out"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

print(scalebayes_info())
data(diabetes, package = "scalebayes")
x <- diabetes$x
y <- diabetes$y
cat(sprintf("\nDiabetes data: n = %d, p = %d\n", nrow(x), ncol(x)))

seed <- 2021
t_sep <- system.time(fit_sep <- wbb(x, y, prior_weights = "separate", draws = 1000, seed = seed, quiet = TRUE))
t_com <- system.time(fit_com <- wbb(x, y, prior_weights = "common", draws = 1000, seed = seed, quiet = TRUE))
t_bl <- system.time(bl <- blasso(x, y, lambda = "eb", chains = 4, iterations = 1000, burnin = 500, seed = seed,
                                 quiet = TRUE))
print(fit_sep$cv)
cat(sprintf("lambda (CV min, SUM scale) = %.4g; glmnet scale = %.4g\n", fit_sep$lambda, fit_sep$lambda_glmnet))

show <- function(fit, label) {
  cat("\n== WBB,", label, "prior weights: posterior summary ==\n")
  s <- summary(fit)
  print(s, digits = 3)
  cat(sprintf("largest KKT violation over draws: %.1e (relative to lambda)\n", fit$diagnostics$kkt_max))
}
show(fit_sep, "separate")
show(fit_com, "common")
cat("\n== Bayesian lasso (Park & Casella), empirical-Bayes lambda ==\n")
print(bl)

cat("\n== Timings (seconds, including cross-validation) ==\n")
timing <- data.frame(
  run = c("WBB separate", "WBB common", "Bayesian lasso (4 chains)"),
  draws = c(1000, 1000, 4000),
  threads = fit_sep$settings$threads,
  elapsed = c(t_sep[["elapsed"]], t_com[["elapsed"]], t_bl[["elapsed"]]),
  cv = c(fit_sep$timing[["cv"]], fit_com$timing[["cv"]], NA)
)
print(timing, row.names = FALSE)

png_file <- file.path(out_dir, "diabetes_wbb_marginals.png")
grDevices::png(png_file, width = 1400, height = 900, res = 120)
op <- graphics::par(mfrow = c(2, 5), mar = c(3, 3, 2, 0.5), mgp = c(1.8, 0.6, 0))
for (v in colnames(x)) {
  a <- fit_com$draws[, v]; b <- fit_sep$draws[, v]; d <- stats::density(bl$draws[, v])
  r <- range(c(a, b)); br <- seq(r[1], r[2] + 1e-9, length.out = 41)
  ha <- graphics::hist(a, breaks = br, plot = FALSE); hb <- graphics::hist(b, breaks = br, plot = FALSE)
  graphics::plot(ha, freq = FALSE, col = grDevices::adjustcolor("steelblue", 0.5), border = NA, main = v,
                 xlab = expression(beta), ylim = c(0, max(ha$density, hb$density, d$y)), xlim = range(br, d$x))
  graphics::plot(hb, freq = FALSE, col = grDevices::adjustcolor("forestgreen", 0.5), border = NA, add = TRUE)
  graphics::lines(d, col = "firebrick", lwd = 2)
  graphics::abline(v = 0, lty = 3)
}
graphics::par(op)
invisible(grDevices::dev.off())
cat("\nFigure (Figure 3 of the paper: blue = WBB common, green = WBB separate prior weights, red = Bayesian lasso):", png_file, "\n")
cat("Share of draws exactly zero (separate weights):\n")
print(round(summary(fit_sep)$p_zero[-1], 3))
