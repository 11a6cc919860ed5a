# Engine pieces that are hard to reach through the fitting functions: the parallel driver's stop and
# error paths, and the random streams.

test_that("the driver runs every item once, stops on request and rethrows worker errors", {
  r <- cpp_test_driver(200, 2, -1, -1)
  expect_equal(r$completed, 200)
  expect_false(r$interrupted)
  expect_true(all(r$hit == 1))
  s <- cpp_test_driver(2000, 2, 20, -1)  # 2 ms per item: the stop comes long before the end
  expect_true(s$interrupted)
  expect_lt(s$completed, 2000)
  expect_equal(sum(s$hit), s$completed)
  expect_error(cpp_test_driver(50, 2, -1, 10), "item failed on purpose")
})

test_that("streams are reproducible, distinct, and have the right moments", {
  f <- cpp_test_rng
  expect_identical(f(1, 100, 0, 0, 7, 3), f(1, 100, 0, 0, 7, 3))
  expect_false(identical(f(1, 100, 0, 0, 7, 3), f(1, 100, 0, 0, 7, 4)))
  expect_false(identical(f(1, 100, 0, 0, 7, 3), f(1, 100, 0, 0, 8, 3)))
  # streams 0..1999, first uniform of each: uniform by a KS test (independent seeding per stream)
  u1 <- vapply(0:1999, function(s) f(0, 1, 0, 0, 1, s), numeric(1))
  expect_gt(ks.test(u1, "punif")$p.value, 0.001)
  n <- 20000
  # Moments within 5 standard errors (SE from the known variance of each distribution).
  z <- f(1, n, 0, 0, 1, 1); expect_lt(abs(mean(z)), 5 / sqrt(n)); expect_lt(abs(var(z) - 1), 5 * sqrt(2 / n))
  e <- f(2, n, 0, 0, 1, 2); expect_lt(abs(mean(e) - 1), 5 / sqrt(n))
  for (a in c(0.3, 2.5)) {
    g <- f(3, n, a, 0, 1, 3)
    expect_lt(abs(mean(g) - a), 5 * sqrt(a / n))
    expect_gt(ks.test(g, "pgamma", shape = a)$p.value, 0.001)
  }
  bt <- f(4, n, 2, 3, 1, 4); expect_gt(ks.test(bt, "pbeta", 2, 3)$p.value, 0.001)
  # inverse Gaussian: mean mu, variance mu^3 / lambda; the CDF in closed form
  pig <- function(q, mu, lam) pnorm(sqrt(lam / q) * (q / mu - 1)) +
    exp(2 * lam / mu) * pnorm(-sqrt(lam / q) * (q / mu + 1))
  ig <- f(5, n, 1.5, 2, 1, 5)
  expect_gt(ks.test(ig, pig, mu = 1.5, lam = 2)$p.value, 0.001)
  # huge mu (1 / |beta| for beta ~ 0): the draw tends to the Levy law lambda / Z^2; no NaN or zero
  big <- f(5, n, 1e12, 2, 1, 6)
  expect_true(all(is.finite(big) & big > 0))
  expect_gt(ks.test(big, function(q) 2 * pnorm(-sqrt(2 / q)))$p.value, 0.001)
})
