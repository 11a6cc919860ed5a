# WBB coefficient MSE by the WBB authors' own computation (glmnet's default path, coef(s = lambda), the CV
# lambda from cv.glmnet on all 2n rows, 200 draws of Exp(1) observation weights and penalty factors), run
# directly with today's glmnet on independent datasets, for the cells where blasso_compare(route =
# "paper_code") lies above the paper's WBB number by more than the Monte-Carlo rule allows (vignette
# "regression"). Same data-generating process as data-raw/wbb-paper-code-check.R.
# Run from the package root: Rscript data-raw/wbb-glmnet-cells.R [datasets = 100]
suppressMessages(library(glmnet))
args <- as.integer(commandArgs(trailingOnly = TRUE))
B <- if (length(args) >= 1) args[1] else 100L
cells <- list(list("B", 40, 20), list("B", 40, 50), list("B", 60, 30), list("A(ii)", 40, 20),
              list("A(ii)", 60, 50), list("A(i)", 40, 20))
source("data-raw/wbb-sim.R")  # sim(setting, p, n)
set.seed(20261123)
res <- do.call(rbind, lapply(cells, function(cl) {
  setting <- cl[[1]]; p <- cl[[2]]; n <- cl[[3]]
  t0 <- proc.time()[["elapsed"]]
  mse <- replicate(B, {
    d <- sim(setting, p, n); tr <- 1:n
    lam <- cv.glmnet(d$x, d$y, intercept = FALSE, nfolds = 3)$lambda.min
    wd <- t(replicate(200, {
      f <- glmnet(d$x[tr, ], d$y[tr], weights = rexp(n), penalty.factor = rexp(p), intercept = FALSE)
      as.numeric(coef(f, s = lam))[-1]
    }))
    mean((colMeans(wd) - d$beta)^2)
  })
  r <- data.frame(setting = setting, p = p, n = n, datasets = B, wbb_mse_coef = mean(mse),
                  se = stats::sd(mse) / sqrt(B), seconds = proc.time()[["elapsed"]] - t0)
  print(r, row.names = FALSE)
  r
}))
res$glmnet <- as.character(utils::packageVersion("glmnet"))
saveRDS(res, "inst/extdata/wbb-glmnet-cells.rds")  # read by vignette "regression"
