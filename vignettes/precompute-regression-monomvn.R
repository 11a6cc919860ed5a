# The Bayesian-lasso arm of Tables 1-3 in the configuration the WBB paper's code ran (monomvn::blasso
# defaults: reversible jump, lambda^2 ~ Gamma(2, 0.1), no intercept, unit-SD columns, thin = min(p, n - 1)),
# with our sampler, for a reduced number of datasets (reversible jump with monomvn's thinning costs ~1 s per
# dataset at p = 120). Run from the package root:
#   Rscript vignettes/precompute-regression-monomvn.R [B = 10] [threads = 2]
library(scalebayes)
args <- as.integer(commandArgs(trailingOnly = TRUE))
B <- if (length(args) >= 1) args[1] else 10L
threads <- if (length(args) >= 2) args[2] else 2L
t <- system.time(res <- blasso_compare(datasets = B, methods = "blasso", blasso = "monomvn", seed = 20210421,
                                       threads = threads, quiet = TRUE))[["elapsed"]]
attr(res, "config")$elapsed <- t
saveRDS(res, sprintf("inst/extdata/blasso-compare-monomvn-B%d.rds", B), compress = "xz")
print(res)
