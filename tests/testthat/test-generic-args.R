# One meaning per argument in the generics (issue 61, item 4): `prob` is an interval mass, `probs` quantiles;
# base generics that pass their own arguments (sigma() -> nobs(use.fallback = )) work.
test_that("summary(prob = ) is the central interval, not a partial match of probs", {
  data(diabetes, package = "scalebayes", envir = environment())
  f <- blasso(diabetes$x, diabetes$y, iterations = 400, chains = 2, seed = 1, quiet = TRUE)
  s <- summary(f, prob = 0.5)
  expect_true(all(c("q25", "q50", "q75") %in% names(s)))
  expect_equal(s$q25, unname(apply(as.matrix(f), 2, stats::quantile, 0.25)))
  expect_identical(names(summary(f)), names(summary(f, prob = 0.95)))
  expect_error(summary(f, prob = 0.5, probs = 0.5), class = "scalebayes_error_input")
  expect_error(summary(f, prob = 2), class = "scalebayes_error_input")
  expect_error(summary(f, prb = 0.5), class = "scalebayes_error_dots")
})

test_that("sigma() gives the posterior mean noise sd, or a classed error", {
  data(diabetes, package = "scalebayes", envir = environment())
  f <- blasso(diabetes$x, diabetes$y, iterations = 400, chains = 2, seed = 1, quiet = TRUE)
  expect_equal(sigma(f), mean(sqrt(f$sigma2)))
  expect_gt(sigma(f), 45)
  expect_lt(sigma(f), 65)
  expect_identical(stats::nobs(f, use.fallback = TRUE), 442L)
  w <- wbb(diabetes$x, diabetes$y, draws = 20, seed = 1, quiet = TRUE)
  expect_error(sigma(w), class = "scalebayes_error_not_applicable")
  g <- suppressWarnings(sgld_sa(diabetes$x, diabetes$y, seed = 1, quiet = TRUE, chains = 2))
  expect_equal(sigma(g), mean(g$latent$sigma))
})
