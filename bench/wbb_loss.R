# wbb(loss = ) against a bayesboot-style R loop (weights from the same streams, optim(method = "BFGS") per draw):
# logistic regression with an intercept and 2 slopes, n = 200, 1,000 draws.
# Run: Rscript bench/wbb_loss.R (with scalebayes installed). Output: bench/wbb_loss.out.txt.
suppressPackageStartupMessages(library(scalebayes))
set.seed(1)
n <- 200
d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
d$y <- rbinom(n, 1, plogis(0.3 + d$x1 - 0.7 * d$x2))
X <- cbind(1, d$x1, d$x2)
loss <- function(theta, data, weights) {
  eta <- drop(X %*% theta)
  list(value = sum(weights * (log1p(exp(eta)) - data$y * eta)),
       gradient = drop(crossprod(X, weights * (plogis(eta) - data$y))))
}
D <- 1000
t_wbb <- system.time(fit <- wbb(loss = loss, init = c(a = 0, b1 = 0, b2 = 0), data = d, draws = D, seed = 1,
                                quiet = TRUE))[["elapsed"]]
# the same draws by an R loop: the engine's weights, optim() per draw
W <- as.matrix(wbb(statistic = function(data, weights) weights, data = d, draws = D, seed = 1, quiet = TRUE))
t_loop <- system.time({
  th <- t(apply(W, 1, function(w) {
    stats::optim(c(0, 0, 0), function(b) loss(b, d, w)$value, function(b) loss(b, d, w)$gradient,
                 method = "BFGS", control = list(reltol = 1e-12, maxit = 1000))$par
  }))
})[["elapsed"]]
t_glm <- system.time({
  tg <- t(apply(W, 1, function(w) suppressWarnings(stats::coef(stats::glm.fit(X, d$y, weights = w,
                                                                              family = stats::binomial())))))
})[["elapsed"]]
cat(sprintf("n = %d, p = 3, %d draws\n", n, D))
cat(sprintf("wbb(loss = )        %6.2f s  (L-BFGS iterations per draw: mean %.1f; loss calls per draw: mean %.1f; all converged: %s)\n",
            t_wbb, mean(fit$diagnostics$iterations), mean(fit$diagnostics$evaluations), all(fit$diagnostics$converged)))
cat(sprintf("R loop, optim BFGS  %6.2f s  (max |difference| to wbb(loss = ): %.1e)\n", t_loop, max(abs(th - fit$draws))))
cat(sprintf("R loop, glm.fit     %6.2f s  (max |difference| to wbb(loss = ): %.1e)\n", t_glm, max(abs(tg - fit$draws))))
