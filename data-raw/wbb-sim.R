# The WBB paper's simulation (settings A(i), A(ii), B), as the authors' wbb_simu.R draws it: 2n rows (n
# training, n test), AR(0.8) correlated predictors with variance 0.1, noise for a signal-to-noise ratio of 2.
# Shared by data-raw/wbb-paper-code-check.R and data-raw/wbb-glmnet-cells.R.
sim <- function(setting, p, n) {
  b0 <- switch(setting, "A(i)" = rep(1, 10), "A(ii)" = c(rep(1, 5), rep(10, 5)), "B" = rep(1, p))
  beta <- c(b0, rep(0, p - length(b0)))
  x <- matrix(rnorm(2 * n * p), 2 * n, p) %*% chol(0.1 * 0.8^abs(outer(1:p, 1:p, "-")))
  mu <- drop(x %*% beta)
  list(x = x, y = mu + sqrt(sum(mu^2) / (2 * n * 2)) * rnorm(2 * n), beta = beta)
}
