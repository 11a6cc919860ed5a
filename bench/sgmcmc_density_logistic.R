# sgmcmc_density() with every default on a 10-parameter logistic regression written as an R target (issue 56,
# item 1: "an sgmcmc_density() R target of 10 parameters <= 20 s"). Rscript bench/sgmcmc_density_logistic.R
suppressPackageStartupMessages(library(scalebayes))
set.seed(1); n <- 500; d <- 10
X <- matrix(rnorm(n * d), n, d); b <- seq(-1, 1, length.out = d)
y <- rbinom(n, 1, plogis(X %*% b))
target <- function(theta) {
  eta <- drop(X %*% theta)
  list(log_density = sum(y * eta - log1p(exp(eta))) - sum(theta^2) / 8,
       gradient = drop(crossprod(X, y - plogis(eta))) - theta / 4)
}
t <- system.time(f <- sgmcmc_density(target, init = rep(0, d), seed = 1, quiet = TRUE))[["elapsed"]]
cat(sprintf("sgmcmc_density 10-d logistic R target: %.1f s, iterations %s, max R-hat %.3f, min ESS %.0f\n", t,
            f$settings$iterations, max(f$diagnostics$convergence$rhat), min(f$diagnostics$convergence$ess_bulk)))
