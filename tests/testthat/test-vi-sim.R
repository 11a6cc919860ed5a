test_that("sparse_vi_sim has the authors' dimensions and defaults", {
  d <- sparse_vi_sim(seed = 1)
  expect_equal(dim(d$x), c(3000L, 200L))
  expect_equal(dim(d$x_test), c(10000L, 200L))
  expect_length(d$y, 3000L)
  expect_length(d$y_test, 10000L)
  expect_identical(d$active, 1:5)
  expect_identical(d$noise_sd, 1)
  # x ~ U(-1, 1): range, mean 0, variance 1/3 (sd of the variance estimate ~ 0.0002 over 600 000 entries)
  expect_true(all(d$x > -1 & d$x < 1))
  expect_equal(mean(d$x), 0, tolerance = 0.005)
  expect_equal(var(as.vector(d$x)), 1 / 3, tolerance = 0.005)
  # noise sd measured against the truth: sd 1, se of the sd ~ 1 / sqrt(2 n) ~ 0.013 (train), 0.007 (test)
  expect_equal(sd(d$y - d$truth(d$x)), 1, tolerance = 0.05)
  expect_equal(sd(d$y_test - d$truth(d$x_test)), 1, tolerance = 0.03)
  expect_equal(mean(d$y_test - d$truth(d$x_test)), 0, tolerance = 0.03)
  # the response depends on inputs 1-5 only: correlation of y with x2 is clearly nonzero, with x6.. not
  expect_gt(abs(cor(d$y, d$x[, 2])), 0.5)
  expect_lt(max(abs(cor(d$y, d$x[, 6:200]))), 0.1)
})

test_that("the truth function is f0 of Bai et al. on known points", {
  f <- sparse_vi_sim(n = 10, n_test = 10, p = 5, seed = 1)$truth
  expect_equal(f(c(0, 0, 0, 0, 0)), 0)
  expect_equal(f(c(0, 1, 0, 0, 0)), 7)
  expect_equal(f(c(1, 1, 0, 0, 0)), 3.5)
  expect_equal(f(c(-1, -0.5, 0, 0, 0)), -1.75)
  expect_equal(f(c(0, 0, 1, 1, 0)), 5 * sin(1))
  expect_equal(f(c(0, 0, 0.5, -0.6, 0)), 5 * sin(-0.3))
  expect_equal(f(c(0, 0, 0, 0, 1)), 2)
  expect_equal(f(c(0.5, 0.2, 0.3, 0.4, -0.7, 9, 9)), 7 * 0.2 / 1.25 + 5 * sin(0.12) - 1.4)
  m <- rbind(c(0, 1, 0, 0, 0, 5), c(0, 0, 0, 0, 1, -5))
  expect_equal(f(m), c(7, 2))
  expect_error(f(1:4), class = "scalebayes_error_input")
  # noise-free data are the truth exactly
  d0 <- sparse_vi_sim(n = 50, n_test = 20, p = 8, seed = 3, noise_sd = 0)
  expect_equal(d0$y, f(d0$x))
  expect_equal(d0$y_test, f(d0$x_test))
})

test_that("sparse_vi_sim is reproducible from its seed and leaves the session's RNG alone", {
  set.seed(99)
  before <- .Random.seed
  a <- sparse_vi_sim(n = 40, n_test = 30, p = 7, seed = 12)
  expect_identical(.Random.seed, before)
  b <- sparse_vi_sim(n = 40, n_test = 30, p = 7, seed = 12)
  expect_identical(a[c("x", "y", "x_test", "y_test")], b[c("x", "y", "x_test", "y_test")])
  c2 <- sparse_vi_sim(n = 40, n_test = 30, p = 7, seed = 13)
  expect_false(isTRUE(all.equal(a$x, c2$x)))
  # seed = NULL draws the seed from R's RNG, so set.seed() works
  set.seed(5); u <- sparse_vi_sim(n = 20, n_test = 5, p = 5)
  set.seed(5); v <- sparse_vi_sim(n = 20, n_test = 5, p = 5)
  expect_identical(u$y, v$y)
  # the documented stream: training x row by row, training noise, then the test set
  e <- withr::with_seed(12L, {
    x <- matrix(runif(40 * 7, -1, 1), 40, 7, byrow = TRUE)
    eps <- rnorm(40)
    xt <- matrix(runif(30 * 7, -1, 1), 30, 7, byrow = TRUE)
    list(x = x, eps = eps, xt = xt)
  }, .rng_kind = "Mersenne-Twister", .rng_normal_kind = "Inversion", .rng_sample_kind = "Rejection")
  expect_equal(unname(a$x), e$x)
  expect_equal(a$y - a$truth(a$x), e$eps)
  expect_equal(unname(a$x_test), e$xt)
  expect_identical(colnames(a$x), paste0("V", 1:7))
})

test_that("sparse_vi_sim rejects bad input with classed errors", {
  expect_error(sparse_vi_sim(p = 4, seed = 1), class = "scalebayes_error_input")
  expect_error(sparse_vi_sim(n = 0, seed = 1), class = "scalebayes_error_input")
  expect_error(sparse_vi_sim(n_test = 2.5, seed = 1), class = "scalebayes_error_input")
  expect_error(sparse_vi_sim(noise_sd = -1, seed = 1), class = "scalebayes_error_input")
  expect_error(sparse_vi_sim(seed = -3), class = "scalebayes_error_input")
})
