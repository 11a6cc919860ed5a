# Tables 1-3, setting B (n = 50, p = 40 / 60 / 80), Bayesian-lasso arm of blasso_compare(route = "paper_code")
# against monomvn::blasso itself run as the authors' wbb_simu.R ran it (T = 500, icept = FALSE, draws 301-500)
# on the SAME simulated datasets (the test hook cpp_compare_data draws dataset b exactly as the comparison does),
# and against the committed results of the earlier preset (data-raw/blasso-compare-paper-parts). Reports the
# coefficient MSE per arm and the paired differences with their standard errors.
# Run from the package root:  Rscript bench/blasso_monomvn_paired.R [datasets = 60] [part = all|monomvn|ours|report] [p]
# (part = monomvn with a p runs that cell only, saving bench/out/paired-monomvn-<datasets>-p<p>.rds; report reads
# the per-cell files when the all-cells one is absent)
suppressMessages(library(scalebayes))
# the test hooks (cpp_compare_data): the package installed with SCALEBAYES_TEST_HOOKS=1, as tools/setup.sh does
source("tests/testthat/helper-test-hooks.R")
args <- commandArgs(trailingOnly = TRUE)
K <- if (length(args) >= 1) as.integer(args[1]) else 60L
part <- if (length(args) >= 2) args[2] else "all"
seed <- 20210421
ps <- c(40L, 60L, 80L)
one_p <- if (length(args) >= 3) as.integer(args[3]) else NA_integer_
cells <- scalebayes:::compare_cells("B", if (is.na(one_p)) ps else one_p, "50")
dir.create("bench/out", showWarnings = FALSE)
if (part %in% c("all", "monomvn")) {
  t0 <- proc.time()[["elapsed"]]
  mono <- do.call(rbind, lapply(seq_len(nrow(cells)), function(k) {
    cl <- cells[k, ]
    do.call(rbind, lapply(seq_len(K), function(b) {
      d <- cpp_compare_data(cl$n, cl$p, cl$setting, cl$id, seed, b - 1, TRUE)
      set.seed(1000 * cl$p + b)
      bl <- monomvn::blasso(d$x, d$y, T = 500, icept = FALSE, verb = 0)
      m <- colMeans(bl$beta[301:500, ])
      data.frame(p = cl$p, dataset = b, monomvn_mse_coef = mean((m - d$beta)^2))
    }))
  }))
  attr(mono, "seconds") <- proc.time()[["elapsed"]] - t0
  saveRDS(mono, if (is.na(one_p)) sprintf("bench/out/paired-monomvn-%d.rds", K) else
    sprintf("bench/out/paired-monomvn-%d-p%d.rds", K, one_p))
}
if (part %in% c("all", "ours")) {
  t0 <- proc.time()[["elapsed"]]
  cmp <- blasso_compare(settings = "B", p = ps, n = "50", datasets = K, methods = "blasso", route = "paper_code",
                        seed = seed, threads = 1, quiet = TRUE)
  ours <- attr(cmp, "per_dataset")[, c("p", "dataset", "blasso_mse_coef")]
  attr(ours, "seconds") <- proc.time()[["elapsed"]] - t0
  saveRDS(ours, sprintf("bench/out/paired-ours-%d.rds", K))
}
if (part == "all" || part == "report") {
  mf <- sprintf("bench/out/paired-monomvn-%d.rds", K)
  if (file.exists(mf)) mono <- readRDS(mf) else {
    parts <- lapply(ps, function(p) readRDS(sprintf("bench/out/paired-monomvn-%d-p%d.rds", K, p)))
    mono <- do.call(rbind, parts)
    attr(mono, "seconds") <- sum(vapply(parts, attr, numeric(1), "seconds"))
  }
  ours <- readRDS(sprintf("bench/out/paired-ours-%d.rds", K))
  old <- do.call(rbind, lapply(list.files("data-raw/blasso-compare-paper-parts", full.names = TRUE), function(f) {
    x <- attr(readRDS(f), "per_dataset")
    x[x$setting == "B" & x$n_rule == "50" & x$p %in% ps, c("p", "dataset", "blasso_mse_coef")]
  }))
  names(old)[3] <- "old_mse_coef"
  a <- merge(merge(mono, ours, by = c("p", "dataset")), old, by = c("p", "dataset"))
  se <- function(v) stats::sd(v) / sqrt(length(v))
  tab <- do.call(rbind, lapply(split(a, a$p), function(d) data.frame(
    p = d$p[1], datasets = nrow(d), monomvn = mean(d$monomvn_mse_coef), ours = mean(d$blasso_mse_coef),
    old_preset = mean(d$old_mse_coef),
    ours_minus_monomvn = mean(d$blasso_mse_coef - d$monomvn_mse_coef), se1 = se(d$blasso_mse_coef - d$monomvn_mse_coef),
    old_minus_monomvn = mean(d$old_mse_coef - d$monomvn_mse_coef), se2 = se(d$old_mse_coef - d$monomvn_mse_coef),
    sd_mse = stats::sd(d$monomvn_mse_coef))))
  pooled <- function(v) sprintf("%.3f +- %.3f", mean(v), se(v))
  print(format(tab, digits = 3), row.names = FALSE)
  cat("pooled ours - monomvn:", pooled(a$blasso_mse_coef - a$monomvn_mse_coef),
      "| pooled old preset - monomvn:", pooled(a$old_mse_coef - a$monomvn_mse_coef), "\n")
  cat(sprintf("seconds: monomvn %.0f, ours %.0f\n", attr(mono, "seconds"), attr(ours, "seconds")))
}
