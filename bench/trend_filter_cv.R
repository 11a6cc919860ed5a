# trend_filter_wbb() with its defaults (lambda by 5-fold CV, 1000 draws, k = 3): whole-call time before / after the
# cross-validation ran its paths in parallel, and whether the chosen lambda is unchanged.
#
# "before": the cross-validation as it was (R/trend_filter.R before this change): the full-data path, then one
# trend_filter() path per fold, one after another, followed by trend_filter_wbb(lambda = <its choice>) for the rest
# of the call (the rest is the same code in both). "after": trend_filter_wbb(lambda = NULL), which now solves the
# nfolds + 1 paths on `threads` workers (cpp_tf_cv_paths()). Same process, same data, same machine; each timing is
# the minimum of 2 alternating repetitions.
# Run: R_LIBS=<lib> Rscript bench/trend_filter_cv.R
suppressPackageStartupMessages(library(scalebayes))
threads <- 2L
old_cv <- function(y, x, k = 3, nfolds = 5) {  # the former cv_trend_filter() (Gaussian, unit weights)
  n <- length(y)
  fit <- suppressWarnings(trend_filter(y, x, k))
  lambda <- fit$lambda
  inner <- seq(2L, n - 1L)
  fold <- integer(n)
  fold[inner] <- rep_len(seq_len(nfolds), length(inner))
  err <- matrix(NA_real_, nfolds, length(lambda))
  for (f in seq_len(nfolds)) {
    test <- which(fold == f)
    train <- which(fold != f)
    ff <- suppressWarnings(trend_filter(y[train], x[train], k, lambda = lambda))
    pred <- scalebayes:::tf_interpolate(x[train], ff$beta, k, x[test])
    err[f, ] <- colMeans((y[test] - pred)^2)
  }
  cv <- colMeans(err)
  list(lambda = lambda, cv = cv, lambda_min = lambda[which.min(cv)])
}
sim <- function(n, seed) {
  set.seed(seed)
  i <- seq_len(n)
  list(x = i, y = sin(4 * pi * i / n) * exp(3 * i / n) + rnorm(n, sd = 2))
}
el <- function(expr) system.time(expr)[["elapsed"]]
# Do warm starts along the path help the interior point? Newton steps and time of a 50-lambda path, n = 3,000.
d3 <- sim(3000, 1)
for (ws in c(TRUE, FALSE)) {
  t3 <- el(f3 <- suppressWarnings(trend_filter(d3$y, d3$x, k = 3, control = tf_control(warm_start = ws))))
  cat(sprintf("warm_start = %s: %d Newton steps, %.2f s\n", ws, sum(f3$iter), t3))
}
if (nzchar(Sys.getenv("SB_TFCV_WARM_ONLY"))) quit(save = "no")
rows <- list()
reps <- 2L  # before and after alternate, each twice; the minimum of each (the machine is shared: times move)
for (n in c(1e3, 1e4)) {
  d <- sim(n, 1)
  tb <- ta <- tcb <- tca <- Inf
  for (r in seq_len(reps)) {
    t_old_cv <- el(o <- old_cv(d$y, d$x))
    t_rest <- el(suppressWarnings(trend_filter_wbb(d$y, d$x, lambda = o$lambda_min, seed = 1, threads = threads, quiet = TRUE)))
    t_new <- el(f <- suppressWarnings(trend_filter_wbb(d$y, d$x, seed = 1, threads = threads, quiet = TRUE)))
    tb <- min(tb, t_old_cv + t_rest); tcb <- min(tcb, t_old_cv)
    ta <- min(ta, t_new); tca <- min(tca, f$timing[["cv"]])
  }
  rows[[length(rows) + 1L]] <- data.frame(n = n, before_s = tb, after_s = ta, ratio = tb / ta, cv_before_s = tcb,
                                          cv_after_s = tca, cv_ratio = tcb / tca, cv_share_before = tcb / tb,
                                          cv_share_after = tca / ta, same_lambda = f$lambda == o$lambda_min)
  print(rows[[length(rows)]], digits = 3)
}
timing <- do.call(rbind, rows)
cat("\nWhole-call time, trend_filter_wbb() defaults (k = 3, 5-fold CV, 1000 draws), threads =", threads, "\n")
print(timing, digits = 3)
# the chosen lambda (rule "min" and "1se") and the CV curve over seeds: old sequential against new parallel
chk <- do.call(rbind, lapply(c(list(c(1e3, 1:5)), list(c(1e4, 2:3))), function(v) {
  do.call(rbind, lapply(v[-1], function(s) {
    d <- sim(v[1], s)
    o <- old_cv(d$y, d$x)
    nw <- cv_trend_filter(d$y, d$x, k = 3, threads = threads, quiet = TRUE)
    data.frame(n = v[1], seed = s, lambda_min_old = o$lambda_min, lambda_min_new = nw$lambda_min,
               same = o$lambda_min == nw$lambda_min, max_rel_cv_diff = max(abs(nw$cv / o$cv - 1)))
  }))
}))
cat("\nChosen lambda, former sequential CV against the parallel CV\n")
print(chk, digits = 4)
