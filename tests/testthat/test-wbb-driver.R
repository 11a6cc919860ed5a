# The one WBB driver (inst/include/scalebayes/wbb/driver.hpp): keying, thread and chunk invariance, and the
# solver concept exercised by two test solvers (src/wbb_driver_check.cpp) and the package's real ones.

driver_run <- function(y, solver, prior = "separate", n_prior = 3L, first = 0, count = 6, threads = 1L,
                       dist = "exponential", lambda = 2, seed = 11) {
  rs <- list(seed = seed, threads = threads, quiet = TRUE)
  cpp_wbb_driver_check(y, lambda, solver, n_prior,
                                    scalebayes:::wbb_engine_settings(rs, first, count, prior, dist))
}

test_that("the driver hands each solver Exp(1) (or resample-count) weights of stream (seed, draw), then the same stream", {
  y <- c(1.5, -0.3, 2.2, 0.7, 1.1)
  n <- length(y)
  for (prior in c("separate", "common", "none")) {
    a <- driver_run(y, 0L, prior, count = 9, threads = 1L)
    m <- c(separate = 3L, common = 1L, none = 0L)[[prior]]
    expect_equal(dim(a), c(9L, n + m + 1L))
    # identical for any number of threads and any split into chunks (global draw index)
    expect_identical(driver_run(y, 0L, prior, count = 9, threads = 2L), a)
    expect_identical(rbind(driver_run(y, 0L, prior, first = 0, count = 4), driver_run(y, 0L, prior, first = 4, count = 5)), a)
    expect_true(all(a > 0 & is.finite(a)))
    expect_false(anyDuplicated(a[, 1]) > 0)
  }
  # data weights come first in the stream whatever the prior: the same n numbers for every prior
  expect_identical(driver_run(y, 0L, "none")[, 1:n], driver_run(y, 0L, "separate")[, 1:n])
  # the prior weights follow the data weights: the first prior weight of "common" is that of "separate"
  expect_identical(driver_run(y, 0L, "common")[, n + 1], driver_run(y, 0L, "separate")[, n + 1])
  # multinomial data weights are resample counts summing to n
  mw <- driver_run(y, 0L, "none", dist = "multinomial", count = 50)[, 1:n]
  expect_true(all(rowSums(mw) == n) && all(mw == round(mw)))
  # Exp(1) data and prior weights: mean 1 and variance 1 within Monte-Carlo error (the sample mean has sd
  # 1 / sqrt(N); the sample variance of Exp(1) draws has sd sqrt((mu4 - 1) / N) = sqrt(8 / N)), 4 SE each
  big <- driver_run(y, 0L, "separate", count = 2000)
  for (cols in list(data = 1:n, prior = n + 1:3)) {
    v <- as.vector(big[, cols])
    N <- length(v)
    expect_lt(abs(mean(v) - 1), 4 / sqrt(N))
    expect_lt(abs(var(v) - 1), 4 * sqrt(8 / N))
    # and the whole distribution: Kolmogorov-Smirnov against pexp (N >= 6000: D ~ 0.02 is detectable; the
    # p-value of a correct engine is uniform, so this fixed-seed check fails a correct engine w.p. 1e-4)
    expect_gt(suppressWarnings(stats::ks.test(v, "pexp"))$p.value, 1e-4)
  }
  # the stream goes on to the solver: its next number is U(0, 1)
  expect_gt(stats::ks.test(big[, n + 4], "punif")$p.value, 1e-4)
  # weights are independent across observations: correlation of neighbouring columns within 4 SE of 0
  expect_lt(abs(cor(big[, 1], big[, 2])), 4 / sqrt(2000))
  # multinomial counts of an n-out-of-n resample: each count is Binomial(n, 1 / n) (mean 1, variance
  # (n - 1) / n); over 2000 draws x n counts the sample variance has SE ~ sqrt(2 / N) at most
  mc <- as.vector(driver_run(y, 0L, "none", dist = "multinomial", count = 2000)[, 1:n])
  expect_lt(abs(var(mc) - (n - 1) / n), 4 * sqrt(3 / length(mc)))
  expect_equal(mean(mc), 1)
  expect_lt(abs(mean(mc == 0) - (1 - 1 / n)^n), 4 * sqrt(0.25 / length(mc)))
})

test_that("a second solver type gets the same weights: ridge mean = its closed form", {
  y <- c(1.5, -0.3, 2.2, 0.7, 1.1)
  n <- length(y)
  rec <- driver_run(y, 0L, "common", count = 20)
  mu <- driver_run(y, 1L, "common", count = 20, threads = 2L, lambda = 2)
  w <- rec[, 1:n]
  w0 <- rec[, n + 1]
  expect_equal(mu[, 1], drop(w %*% y) / (rowSums(w) + 2 * w0), tolerance = 1e-14)
  expect_identical(driver_run(y, 1L, "common", first = 7, count = 3, lambda = 2), mu[8:10, , drop = FALSE])
})

test_that("the group mode keys every member as one draw: the same weights and stream for any group size", {
  n <- 5L
  for (prior in c("separate", "common", "none")) {
    one <- driver_run(rep(0, n), 0L, prior, first = 3, count = 9)  # run_draws(), draws 3 .. 11
    k <- ncol(one)
    for (G in c(1L, 2L, 4L, 9L, 20L)) {
      for (threads in 1:2) {
        rs <- list(seed = 11, threads = threads, quiet = TRUE)
        r <- cpp_wbb_driver_groups_check(n, 3L, G, scalebayes:::wbb_engine_settings(rs, 3, 9, prior, "exponential"), -1L)
        info <- paste(prior, "group", G, "threads", threads)
        expect_identical(r$record[, 1:k], one, info = info)
        # contiguous groups of G local draws, the last one smaller
        expect_identical(r$record[, k + 1], (seq_len(9) - 1) %/% G * G, info = info)
        expect_identical(r$completed, 9)
      }
    }
  }
})

test_that("a stop request in the middle of a group keeps the finished groups, the draws of an uninterrupted run", {
  n <- 4L
  rs <- function(threads) list(seed = 5, threads = threads, quiet = TRUE)
  full <- cpp_wbb_driver_groups_check(n, 2L, 3L, scalebayes:::wbb_engine_settings(rs(1L), 0, 12, "separate",
                                                                                  "exponential"), -1L)
  expect_false(full$interrupted)
  for (stop_group in 0:3) {
    r <- cpp_wbb_driver_groups_check(n, 2L, 3L, scalebayes:::wbb_engine_settings(rs(1L), 0, 12, "separate",
                                                                                 "exponential"), stop_group)
    info <- paste("stop in group", stop_group)
    expect_true(r$interrupted, info = info)
    # one worker: the groups before the stopped one are finished and counted, the stopped group is not
    expect_identical(r$completed, 3 * stop_group, info = info)
    kept <- seq_len(3 * stop_group)
    expect_identical(r$record[kept, , drop = FALSE], full$record[kept, , drop = FALSE], info = info)
    # the half of the stopped group it reached is the uninterrupted run's too; nothing after it was solved
    half <- 3 * stop_group + 1:2
    expect_identical(r$record[half, ], full$record[half, ], info = info)
    if (stop_group < 3) expect_true(all(r$record[(3 * stop_group + 3):12, ] == 0), info = info)
  }
  # two workers: every counted draw is a finished group's, identical to the uninterrupted run's
  r <- cpp_wbb_driver_groups_check(n, 2L, 3L, scalebayes:::wbb_engine_settings(rs(2L), 0, 12, "separate",
                                                                               "exponential"), 1L)
  expect_true(r$interrupted)
  expect_true(r$completed %in% c(0, 3, 6, 9))
  solved <- which(rowSums(r$record != 0) > 0)
  expect_identical(r$record[solved, ], full$record[solved, ])
})

test_that("wbb() draws are the weighted optima for the driver's weights of stream (seed, t)", {
  data(diabetes, package = "scalebayes")
  x <- diabetes$x[1:120, 1:6]
  y <- diabetes$y[1:120]
  fit <- wbb(x, y, lambda = 0, draws = 5, seed = 21, prior_weights = "none", quiet = TRUE, threads = 2)
  rec <- driver_run(y, 0L, "none", count = 5, seed = 21)
  for (t in 1:5) {
    ls <- stats::lm.wfit(cbind(1, x), y, rec[t, seq_along(y)])
    expect_equal(unname(fit$draws[t, ]), unname(ls$coefficients), tolerance = 1e-7)
  }
})

test_that("trend_filter_wbb() draws are the weighted optima for the driver's weights of stream (seed, t)", {
  set.seed(5)
  y <- cumsum(rnorm(40)) + rnorm(40)
  fit <- trend_filter_wbb(y, k = 0, lambda = 2, draws = 4, seed = 8, quiet = TRUE, threads = 2)
  rec <- driver_run(y, 0L, "common", count = 4, seed = 8)
  expect_identical(fit$w0, rec[, 41])
  for (t in 1:4) {
    f <- trend_filter(y, k = 0, lambda = 2 * rec[t, 41], weights = rec[t, 1:40])
    expect_equal(unname(fit$draws[t, ]), unname(f$beta[, 1]), tolerance = 1e-10)
  }
})

test_that("every WBB front end takes the same chunk rule and the old lambda_rule spellings", {
  set.seed(6)
  y <- cumsum(rnorm(30))
  a <- trend_filter_wbb(y, k = 1, lambda = 3, draws = 7, seed = 2, quiet = TRUE)
  b <- trend_filter_wbb(y, k = 1, lambda = 3, draws = 7, seed = 2, quiet = TRUE, chunks = 3)
  expect_identical(a$draws, b$draws)
  expect_identical(a$w0, b$w0)
  expect_warning(wbb_control(lambda_rule = "lambda_1se"), class = "scalebayes_warning_deprecated")
  expect_identical(suppressWarnings(wbb_control(lambda_rule = "lambda_min"))$lambda_rule, "min")
  expect_warning(c1 <- trend_filter_wbb(y, k = 1, draws = 3, seed = 2, quiet = TRUE, lambda_rule = "lambda_min"),
                 class = "scalebayes_warning_deprecated")
  expect_identical(c1$settings$lambda_rule, "min")
  expect_error(wbb_control(lambda_rule = "max"), class = "scalebayes_error")
  expect_error(trend_filter_wbb(y, k = 1, lambda = 1, chunks = 0), class = "scalebayes_error")
})
