# The sb_fit methods (R/draws-methods.R) and predict.sb_wbb() against quantile(), mean(), sd() and plain R
# arithmetic on the stored draws.

methods_fit <- function() {
  data(diabetes, package = "scalebayes")
  wbb(diabetes$x, diabetes$y, lambda = 30, draws = 101, seed = 1, quiet = TRUE)
}

test_that("summary() is mean, sd, quantile() and the share of exact zeros of each column of the draws", {
  fit <- methods_fit()
  D <- fit$draws
  s <- summary(fit, probs = c(0.1, 0.5, 0.9))
  expect_equal(s$parameter, colnames(D))
  expect_equal(s$estimate, unname(fit$estimate))
  for (j in seq_len(ncol(D))) {
    v <- D[, j]
    expect_equal(s$mean[j], sum(v) / length(v))
    expect_equal(s$sd[j], sqrt(sum((v - mean(v))^2) / (length(v) - 1)))
    expect_equal(unname(unlist(s[j, c("q10", "q50", "q90")])), unname(quantile(v, c(0.1, 0.5, 0.9))))
    expect_equal(s$p_zero[j], sum(v == 0) / length(v))
  }
  expect_gt(max(s$p_zero), 0)  # the lasso draws do have exact zeros here: p_zero is exercised
  s1 <- summary(fit, probs = 0.25, pars = c("bmi", "ltg"))
  expect_equal(s1$q25, unname(apply(D[, c("bmi", "ltg")], 2, quantile, 0.25)))
})

test_that("coef() is the column mean, median or the point estimate of the draws", {
  fit <- methods_fit()
  D <- fit$draws
  expect_equal(unname(coef(fit)), unname(apply(D, 2, function(v) sum(v) / length(v))))
  expect_equal(unname(coef(fit, type = "median")), unname(apply(D, 2, function(v) quantile(v, 0.5))))
  expect_identical(coef(fit, type = "estimate"), fit$estimate)
})

test_that("posterior_interval(prob) is quantile() at (1 - prob) / 2 and 1 - (1 - prob) / 2 and covers prob", {
  fit <- methods_fit()
  D <- fit$draws
  for (prob in c(0.5, 0.8, 0.95)) {
    pi <- posterior_interval(fit, prob = prob)
    a <- (1 - prob) / 2
    expect_equal(unname(pi), unname(t(apply(D, 2, quantile, c(a, 1 - a)))))
    expect_equal(colnames(pi), paste0(c(100 * a, 100 * (1 - a)), "%"))
    # central: the share of draws inside is prob up to the discreteness of 101 draws (2 / 101) for the
    # columns without a point mass at zero
    cont <- colMeans(D == 0) == 0
    inside <- colMeans(D >= rep(pi[, 1], each = nrow(D)) & D <= rep(pi[, 2], each = nrow(D)))
    expect_true(all(abs(inside[cont] - prob) <= 2 / 101 + 1e-12), info = prob)
  }
  expect_equal(unname(drop(posterior_interval(fit, prob = 0.9, pars = 2))), unname(quantile(D[, 2], c(0.05, 0.95))))
})

test_that("predict() on a WBB fit is the mean, sd and prob quantiles of the draws' linear predictors", {
  fit <- methods_fit()
  data(diabetes, package = "scalebayes")
  nx <- diabetes$x[1:7, ]
  eta <- matrix(NA_real_, nrow(fit$draws), 7)
  for (t in seq_len(nrow(fit$draws))) {
    for (i in 1:7) eta[t, i] <- fit$draws[t, 1] + sum(fit$draws[t, -1] * nx[i, ])
  }
  expect_equal(predict(fit, nx, draws = TRUE), eta, ignore_attr = TRUE)
  pr <- predict(fit, nx, prob = 0.8)
  expect_equal(pr$fit, colMeans(eta))
  expect_equal(pr$se, apply(eta, 2, sd))
  expect_equal(pr$lower, unname(apply(eta, 2, quantile, 0.1)))
  expect_equal(pr$upper, unname(apply(eta, 2, quantile, 0.9)))
  # binomial response scale: plogis of the same draws
  d <- sim_binomial(120, 3)
  fb <- wbb(d$x, d$y, family = "binomial", lambda = 2, draws = 40, seed = 2, quiet = TRUE)
  eb <- plogis(cbind(1, d$x[1:5, ]) %*% t(fb$draws))
  pb <- predict(fb, d$x[1:5, ], type = "response", prob = 0.5)
  expect_equal(pb$fit, rowMeans(eb))
  expect_equal(pb$lower, unname(apply(eb, 1, quantile, 0.25)))
  expect_equal(pb$upper, unname(apply(eb, 1, quantile, 0.75)))
})

test_that("as_draws_array() keeps the chains of a multi-chain fit in order", {
  d <- sim_gaussian(60, 4)
  fit <- sgld_sa(d$x, d$y, iterations = 400, chains = 2, threads = 1, seed = 3, quiet = TRUE)
  arr <- posterior::as_draws_array(fit)
  expect_equal(dim(arr)[2], 2L)
  a <- unclass(arr)
  for (k in 1:2) expect_equal(unname(a[, k, ]), unname(fit$draws[fit$chain == k, , drop = FALSE]))
})
