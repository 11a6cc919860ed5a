# Simulated data of Deng et al. (2019): section 5.1 (linear, Table 1) and appendix C (logistic, Table 4).
# Internal; used by the tests, bench/sgld_sa.R and vignettes/precompute-sgld.R.
#
# x ~ N_p(0, Sigma) with Sigma_ij = corr^|i-j| (generated as an AR(1) recursion across columns),
# beta = (b1, b2, b3, 0, ..., 0) with b1..3 ~ N((3, 2, 1), 0.2^2);
# gaussian: y = x beta + N(0, noise_var = 3); binomial: y ~ Bern(plogis(x beta + N(0, noise_var = 1/2))).
sgld_sa_simulate <- function(n = 100, p = 1000, corr = 0.6, family = c("gaussian", "binomial"), n_test = 50,
                             noise_var = if (family == "gaussian") 3 else 0.5, seed = 1) {
  family <- match.arg(family)
  sb_with_seed(seed, {
    ar1 <- function(m) {
      z <- matrix(stats::rnorm(m * p), m, p)
      if (p > 1) for (j in 2:p) z[, j] <- corr * z[, j - 1] + sqrt(1 - corr^2) * z[, j]
      z
    }
    beta <- c(stats::rnorm(3, c(3, 2, 1), 0.2), rep(0, p - 3))
    x <- ar1(n)
    x_test <- ar1(n_test)
    gen <- function(x) {
      eta <- drop(x %*% beta) + stats::rnorm(nrow(x), 0, sqrt(noise_var))
      if (family == "gaussian") eta else stats::rbinom(nrow(x), 1, stats::plogis(eta))
    }
    y <- gen(x)
    y_test <- gen(x_test)
    colnames(x) <- colnames(x_test) <- paste0("V", seq_len(p))
    list(x = x, y = y, x_test = x_test, y_test = y_test, beta = beta, family = family)
  })
}
