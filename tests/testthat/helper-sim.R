# Simulated regression problems shared by the tests.
sim_gaussian <- function(n, p, k = 3, seed = 1, rho = 0) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  if (rho > 0) x <- x + rho * rnorm(n)
  beta <- c(seq(2, 1, length.out = k), rep(0, p - k))
  y <- drop(x %*% beta) + rnorm(n)
  colnames(x) <- paste0("x", seq_len(p))
  list(x = x, y = y, beta = beta)
}
sim_binomial <- function(n, p, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  y <- rbinom(n, 1, plogis(0.3 + x[, 1] - 0.8 * x[, 2]))
  list(x = x, y = y)
}
glmnet_coef <- function(x, y, family, w, pf, lambda, alpha = 1) {
  eq <- glmnet_equivalent(lambda, alpha, w, pf, family, y)
  g <- glmnet::glmnet(x, y, family = family, weights = w, penalty.factor = pf, alpha = eq$alpha,
                      lambda = eq$lambda, standardize = FALSE, thresh = 1e-14, maxit = 1e6)
  as.numeric(stats::coef(g))
}
