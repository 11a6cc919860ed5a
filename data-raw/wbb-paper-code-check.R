# Side check of blasso_compare(route = "paper_code") against the packages the WBB authors used: the same
# computation written directly with glmnet and monomvn (independent datasets from R's RNG), for a few cells.
# Reports per cell the mean (and Monte-Carlo se) of each metric, and for WBB the share of draws whose glmnet
# default path ends above the CV lambda (coef(s = lambda) then returns the end of the path).
# Run from the package root: Rscript data-raw/wbb-paper-code-check.R [datasets = 20]
suppressMessages({library(glmnet); library(monomvn)})
args <- as.integer(commandArgs(trailingOnly = TRUE))
B <- if (length(args) >= 1) args[1] else 20L
cells <- list(list("A(i)", 40, 50), list("B", 40, 50), list("B", 80, 50))
source("data-raw/wbb-sim.R")  # sim(setting, p, n)
metrics <- function(draws, beta, xt, yt) {
  m <- colMeans(draws)
  lo <- apply(draws, 2, stats::quantile, 0.025); hi <- apply(draws, 2, stats::quantile, 0.975)
  c(mse_coef = mean((m - beta)^2), mse_pred = mean((yt - xt %*% m)^2),
    coverage = mean(outer(beta, lo, ">=") & outer(beta, hi, "<=")))  # p x p: beta_i against interval j
}
set.seed(20210421)
res <- list()
for (cl in cells) {
  setting <- cl[[1]]; p <- cl[[2]]; n <- cl[[3]]
  t0 <- proc.time()[["elapsed"]]
  per <- t(replicate(B, {
    d <- sim(setting, p, n); tr <- 1:n; te <- n + 1:n
    lam <- cv.glmnet(d$x, d$y, intercept = FALSE, nfolds = 3)$lambda.min
    clamped <- 0
    wd <- t(replicate(200, {
      f <- glmnet(d$x[tr, ], d$y[tr], weights = rexp(n), penalty.factor = rexp(p), intercept = FALSE)
      clamped <<- clamped + (min(f$lambda) > lam)
      as.numeric(coef(f, s = lam))[-1]
    }))
    bl <- blasso(d$x[tr, ], d$y[tr], T = 500, icept = FALSE, verb = 0)
    c(wbb = metrics(wd, d$beta, d$x[te, ], d$y[te]), clamped = clamped / 200,
      blasso = metrics(bl$beta[301:500, ], d$beta, d$x[te, ], d$y[te]))
  }))
  s <- data.frame(setting = setting, p = p, n = n, stat = colnames(per), mean = colMeans(per),
                  se = apply(per, 2, stats::sd) / sqrt(B), row.names = NULL)
  cat(sprintf("%s p = %d n = %d: %d datasets, %.0f s\n", setting, p, n, B, proc.time()[["elapsed"]] - t0))
  print(s[, -(1:3)], digits = 3, row.names = FALSE)
  res[[length(res) + 1]] <- s
}
out <- do.call(rbind, res)
saveRDS(out, "data-raw/wbb-paper-code-check.rds")
