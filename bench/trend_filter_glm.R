# Benchmark: Poisson and logistic trend filtering (scalebayes, trend_filter(family = )) against glmgen's
# trendfilter(family = "poisson" / "logistic") (Ramdas & Tibshirani's ADMM, C library), in one process.
#   Rscript bench/trend_filter_glm.R     (about 2 minutes on a 2-core machine)
# glmgen is not on CRAN: build it from github.com/glmgen/glmgen (R_pkg/glmgen, e.g. R CMD INSTALL -l /tmp/lib_glmgen
# R_pkg/glmgen) and put that library on R_LIBS. Without it only scalebayes is timed.
# Objectives are compared on one scale: sum_i (b(beta_i) - y_i beta_i) + lambda ||D beta||_1 as half deviance
# (scalebayes' objective; glmgen's differs by a constant), evaluated here for both fits, with scalebayes' certified
# relative duality gap alongside. Results: bench/RESULTS.md (Poisson / logistic trend filtering section).
suppressPackageStartupMessages(library(scalebayes))
have_glmgen <- requireNamespace("glmgen", quietly = TRUE)
cat(sprintf("date: %s | R %s | cores: %d | scalebayes %s | glmgen %s\n", format(Sys.time(), tz = "UTC"),
            getRversion(), parallel::detectCores(), utils::packageVersion("scalebayes"),
            if (have_glmgen) as.character(utils::packageVersion("glmgen")) else "not installed"))

cpu <- function(expr) {
  t <- system.time(expr, gcFirst = FALSE)
  unname(t[["user.self"]] + t[["sys.self"]])
}
objective <- function(family, y, x, k, lambda, beta) {
  n <- length(y)
  scalebayes:::cpp_tf_glm_certify(family, as.double(y), rep(1, n), x, rep(1, n), k, lambda, beta,
                                  rep(0, n - k - 1))$primal
}

rows <- list()
for (family in c("poisson", "binomial")) {
  for (n in c(1000, 10000)) {
    for (k in 0:2) {
      set.seed(n + k)
      x <- as.double(seq_len(n))
      f <- sin(4 * pi * x / n)
      y <- if (family == "poisson") rpois(n, exp(1 + f)) else rbinom(n, 1, plogis(2 * f))
      lmax <- trend_filter(y, x, k = k, lambda = 1e300, family = family)$lambda_max
      lambda <- lmax * 1e-3
      t_sb <- cpu(ours <- trend_filter(y, x, k = k, lambda = lambda, family = family))
      obj_sb <- objective(family, y, x, k, lambda, ours$beta[, 1])
      t_gg <- obj_gg <- NA
      if (have_glmgen) {
        fam_gg <- if (family == "poisson") "poisson" else "logistic"
        ctl <- glmgen::trendfilter.control.list(obj_tol = 1e-10, max_iter = 2000L)
        t_gg <- cpu(gg <- glmgen::trendfilter(x, y, k = k, family = fam_gg, lambda = lambda, control = ctl))
        obj_gg <- objective(family, y, x, k, lambda, as.double(gg$beta[, 1]))
      }
      rows[[length(rows) + 1L]] <- data.frame(
        family = family, n = n, k = k, lambda = signif(lambda, 3), sb_cpu = t_sb, sb_rel_gap = signif(ours$rel_gap, 2),
        sb_newton = ours$iter, glmgen_cpu = t_gg, glmgen_minus_sb_rel = signif((obj_gg - obj_sb) / obj_sb, 3),
        cpu_ratio_glmgen_over_sb = signif(t_gg / t_sb, 3))
      print(rows[[length(rows)]], row.names = FALSE)
    }
  }
}
res <- do.call(rbind, rows)
cat("\nsummary (glmgen_minus_sb_rel > 0: glmgen's objective is higher than scalebayes' certified one)\n")
print(res, row.names = FALSE)

# ---- WBB: draws per second of trend_filter_wbb(family = ), n = 1000, k = 1 -------------------------------------------
set.seed(3)
n <- 1000
x <- as.double(seq_len(n))
y <- rpois(n, exp(1 + sin(4 * pi * x / n)))
lambda <- trend_filter(y, x, k = 1, lambda = 1e300, family = "poisson")$lambda_max * 1e-3
for (th in c(1, 2)) {
  el <- system.time(w <- trend_filter_wbb(y, x, k = 1, lambda = lambda, family = "poisson", draws = 200, seed = 1,
                                          threads = th, quiet = TRUE))[["elapsed"]]
  cat(sprintf("WBB poisson n = %d, k = 1, 200 draws, %d thread(s): %.2f s elapsed, max rel gap %.2g, Newton steps %s\n",
              n, th, el, max(w$diagnostics$rel_gap), paste(range(w$diagnostics$iter), collapse = "-")))
}
