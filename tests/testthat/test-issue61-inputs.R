# Issue 61, item 8 (bad inputs): each gets a classed error or warning naming the argument, before any engine runs.

test_that("trend filtering checks the scale of x as it does that of y (issue 61)", {
  set.seed(1)
  y <- sin((1:100) / 10) + rnorm(100, sd = 0.1)
  e <- expect_error(trend_filter_wbb(y, x = (1:100) * 1e300, lambda = 1, draws = 5), class = "scalebayes_error_scaling")
  expect_equal(e$arg, "x")
  expect_match(conditionMessage(e), "Rescale")
  expect_error(trend_filter_wbb(y, x = (1:100) * 1e-300, lambda = 1, draws = 5), class = "scalebayes_error_scaling")
  expect_error(trend_filter(y, x = (1:100) * 1e300, lambda = 1), class = "scalebayes_error_scaling")
  # the same data on an ordinary scale: the fit does not depend on the scale of x beyond lambda's units, and
  # the check lets through scales double precision holds (k = 3: the cube of the gaps)
  expect_s3_class(trend_filter(y, x = (1:100) * 1e50, k = 3, lambda = 1), "sb_trend_filter")
})

test_that("generalized_lasso() checks the scale of y (issue 61)", {
  set.seed(2)
  y <- cumsum(rnorm(30))
  D <- diff(diag(30))
  expect_error(generalized_lasso(y * 1e300, D, lambda = 1), class = "scalebayes_error_scaling")
  expect_error(generalized_lasso(y * 1e300, D, path = TRUE), class = "scalebayes_error_scaling")
  expect_s3_class(generalized_lasso(y, D, lambda = 1), "sb_point_fit")
})

test_that("elliptic_kle_data() checks the size of its result before the engine allocates it (issue 61)", {
  t0 <- proc.time()[["elapsed"]]
  e <- expect_error(elliptic_kle_data(n = 1e6, grid = 50), class = "scalebayes_error_memory")
  expect_equal(e$arg, "n")
  expect_lt(proc.time()[["elapsed"]] - t0, 5)
})

test_that("log_lik() of a WBB fit warns when it is not finite, and says why (issue 61)", {
  set.seed(3)
  x <- matrix(rnorm(120), 60, 2)
  # a constant response: every draw fits it exactly, the plug-in noise sd is 0 and the density infinite
  f <- wbb(x, rep(1, 60), lambda = 1, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  w <- expect_warning(ll <- log_lik(f), class = "scalebayes_warning_non_finite")
  expect_true(all(ll == Inf))
  expect_match(conditionMessage(w), "noise sd 0")
  # responses on another scale: -Inf
  y <- drop(x %*% c(1, -1)) + rnorm(60)
  g <- wbb(x, y, lambda = 1, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  expect_silent(log_lik(g))
  w2 <- expect_warning(ll2 <- log_lik(g, newdata = x, newy = y * 1e300), class = "scalebayes_warning_non_finite")
  expect_true(all(ll2 == -Inf))
  expect_match(conditionMessage(w2), "scale")
})

test_that("ksd(): a kernel scale beyond double precision and a fit class without a method (issue 61)", {
  set.seed(4)
  d <- matrix(rnorm(200), 100, 2)
  expect_true(is.finite(ksd(d, score = -d)$ksd))
  e <- expect_error(ksd(d, score = -d, c = 1e-300), class = "scalebayes_error_scaling")
  expect_equal(e$arg, "c")
  expect_error(ksd(d, score = -d, c = 1e300), class = "scalebayes_error_scaling")
  x <- matrix(rnorm(120), 60, 2)
  f <- wbb(x, drop(x %*% c(1, 0)) + rnorm(60), lambda = 1, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  e2 <- expect_error(ksd(f), class = "scalebayes_error_not_applicable")
  expect_match(conditionMessage(e2), "as.matrix")
  expect_no_match(conditionMessage(e2), "must be a matrix")
})

test_that("bbb() and sparse_vi() do not take batch = for batch_size (issue 61)", {
  x <- matrix(rnorm(40), 20, 2)
  y <- rnorm(20)
  e <- expect_error(bbb(x, y, batch = 16), class = "scalebayes_error_input")
  expect_equal(e$arg, "batch")
  expect_match(conditionMessage(e), "batch_size = 16", fixed = TRUE)
  expect_error(sparse_vi(x, y, batch = 16), class = "scalebayes_error_input")
})

test_that("weighted_lasso() warns when its KKT check fails for extreme weights (issue 61)", {
  set.seed(5)
  x <- matrix(rnorm(240), 60, 4)
  y <- drop(x %*% c(1, 0, -1, 0)) + rnorm(60)
  w <- c(1e300, rep(1, 59))
  e <- expect_warning(p <- weighted_lasso(x, y, weights = w), class = "scalebayes_warning_kkt")
  expect_match(conditionMessage(e), "weights")
  expect_gt(max(p$kkt), 1)
  # ordinary weights: finite KKT values, no warning
  expect_no_warning(q <- weighted_lasso(x, y, weights = rep(c(1, 3), 30)))
  expect_true(all(is.finite(q$kkt)))
})

test_that("predict() with new data: a character column and NA rows get the right fix (issue 61)", {
  set.seed(6)
  d <- data.frame(y = rnorm(40), x1 = rnorm(40), x2 = rnorm(40))
  f <- wbb(y ~ x1 + x2, data = d, lambda = 1, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  nd <- d[1:3, ]
  nd$x2 <- as.character(nd$x2)
  e <- expect_error(predict(f, newdata = nd), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "x2")
  expect_match(conditionMessage(e), "as.numeric")
  expect_no_match(conditionMessage(e), "columns")
  nd <- d[1:3, ]
  nd$x2[2] <- NA
  e2 <- expect_error(predict(f, newdata = nd), class = "scalebayes_error_input")
  expect_no_match(conditionMessage(e2), "na.action")
  expect_match(conditionMessage(e2), "na.omit")
  # the fix it names works
  expect_equal(nrow(predict(f, newdata = na.omit(nd))), 2L)
  # fitting still offers na.action
  d$x2[5] <- NA
  e3 <- expect_error(wbb(y ~ x1 + x2, data = d, lambda = 1, draws = 5, quiet = TRUE), class = "scalebayes_error_input")
  expect_match(conditionMessage(e3), "na.action")
})

test_that("wbb(loss = ): the convergence test is scale-aware (issue 61)", {
  set.seed(7)
  d <- data.frame(x = rnorm(80))
  d$y <- rbinom(80, 1, stats::plogis(0.5 + d$x))
  logistic <- function(theta, data, weights) {
    X <- cbind(1, data$x)
    eta <- drop(X %*% theta)
    list(value = sum(weights * (log1p(exp(eta)) - data$y * eta)),
         gradient = drop(crossprod(X, weights * (stats::plogis(eta) - data$y))))
  }
  ref <- wbb(loss = logistic, init = c(a = 0, b = 0), data = d, draws = 20, seed = 1, quiet = TRUE, threads = 1)
  mle <- stats::coef(stats::glm(y ~ x, data = d, family = binomial()))
  expect_equal(unname(ref$estimate), unname(mle), tolerance = 1e-6)
  # the same loss times 1e-300: the same optimum, not `init` returned as converged
  tiny <- function(theta, data, weights) {
    r <- logistic(theta, data, weights)
    list(value = 1e-300 * r$value, gradient = 1e-300 * r$gradient)
  }
  f <- suppressWarnings(wbb(loss = tiny, init = c(a = 0, b = 0), data = d, draws = 20, seed = 1, quiet = TRUE,
                            threads = 1, control = wbb_loss_control(check_gradient = FALSE)))
  expect_true(all(f$diagnostics$converged))
  expect_equal(unname(f$estimate), unname(mle), tolerance = 1e-5)
  expect_equal(unname(f$draws), unname(ref$draws), tolerance = 1e-5)
  # a loss without a minimum: no draw is "converged" (before: draws of 4e17 marked converged)
  nomin <- function(theta, data, weights) list(value = -sum(theta), gradient = rep(-1, 2))
  expect_warning(g <- wbb(loss = nomin, init = c(0, 0), data = d, draws = 5, seed = 1, quiet = TRUE, threads = 1,
                          control = wbb_loss_control(check_gradient = FALSE)),
                 class = "scalebayes_warning_convergence")
  expect_false(any(g$diagnostics$converged))
  expect_error(suppressWarnings(wbb(loss = nomin, init = c(0, 0), data = d, draws = 5, seed = 1, quiet = TRUE,
                                    threads = 1, control = wbb_loss_control(on_failure = "drop"))),
               class = "scalebayes_error_convergence")
})
