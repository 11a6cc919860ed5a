# wbb(loss = ) and wbb(statistic = ) (R/wbb_loss.R, src/wbb_loss.cpp): the WBB of a loss written in R, each draw
# solved by L-BFGS (math/lbfgs_min.hpp) in the WBB driver's inline mode, and the Bayesian bootstrap of a statistic;
# both on the weights of every WBB (the streams (seed, t): helper-wbb-weights.R recomputes them independently).

wl_data <- function(n = 60, seed = 3) {
  set.seed(seed)
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n))
  d$y <- rbinom(n, 1, stats::plogis(0.3 + d$x1 - 0.7 * d$x2))
  d$z <- 2 + d$x1 + rnorm(n)
  d
}
wl_sq <- function(theta, data, weights) {
  r <- data$z - theta
  list(value = sum(weights * r^2) / 2, gradient = -sum(weights * r))
}
wl_logistic <- function(theta, data, weights) {
  X <- cbind(1, data$x1, data$x2)
  eta <- drop(X %*% theta)
  list(value = sum(weights * (log1p(exp(eta)) - data$y * eta)),
       gradient = drop(crossprod(X, weights * (stats::plogis(eta) - data$y))))
}

test_that("a weighted mean as a loss is sum(w z) / sum(w) per draw, equal to wbb(statistic = ) for the same seed", {
  d <- wl_data()
  f <- wbb(loss = wl_sq, init = c(mu = 0), data = d, draws = 40, seed = 7, quiet = TRUE)
  expect_s3_class(f, c("sb_wbb_loss", "sb_fit"))
  expect_identical(colnames(f$draws), "mu")
  expect_identical(dim(f$draws), c(40L, 1L))
  w <- wbb_recorded_weights(nrow(d), 40, 7)$w  # the engine's streams (seed, t), recomputed independently
  exact <- drop(w %*% d$z) / rowSums(w)
  expect_equal(unname(f$draws[, 1]), exact, tolerance = 1e-12)
  expect_true(all(f$diagnostics$converged))
  expect_true(all(f$diagnostics$status == "converged"))
  expect_equal(unname(f$estimate), mean(d$z), tolerance = 1e-12)
  s <- wbb(statistic = function(data, weights) weighted.mean(data$z, weights), data = d, draws = 40, seed = 7,
           quiet = TRUE)
  expect_identical(colnames(s$draws), "statistic")
  expect_equal(unname(s$draws[, 1]), exact, tolerance = 1e-14)
  expect_equal(unname(s$draws), unname(f$draws), tolerance = 1e-12)
  # the value-with-attribute form, and a data frame given by position
  g <- wbb(d, loss = function(theta, data, weights) structure(wl_sq(theta, data, weights)$value,
                                                             gradient = wl_sq(theta, data, weights)$gradient),
           init = 0, draws = 40, seed = 7, quiet = TRUE)
  expect_identical(g$draws[, 1], f$draws[, 1])
  expect_identical(colnames(g$draws), "theta1")
  # statistic: names from its value, a vector `data`, multinomial weights are resample counts
  s2 <- wbb(statistic = function(data, weights) c(m = sum(weights * data) / sum(weights), w = sum(weights)),
            data = d$z, draws = 20, seed = 1, weight_dist = "multinomial", quiet = TRUE)
  expect_identical(colnames(s2$draws), c("m", "w"))
  expect_true(all(s2$draws[, "w"] == nrow(d)))
  expect_equal(unname(s2$draws[, "m"]), drop(wbb_recorded_weights(nrow(d), 20, 1, dist = "multinomial")$w %*% d$z) / nrow(d))
})

test_that("logistic regression as an R loss equals wbb(family = 'binomial', lambda = 0) draw by draw", {
  d <- wl_data()
  x <- as.matrix(d[, c("x1", "x2")])
  ref <- wbb(x, d$y, family = "binomial", lambda = 0, draws = 25, seed = 5, quiet = TRUE)
  f <- wbb(loss = wl_logistic, init = c(a = 0, b1 = 0, b2 = 0), data = d, draws = 25, seed = 5, quiet = TRUE,
           control = wbb_loss_control(tol = 1e-12))
  expect_true(all(f$diagnostics$converged))
  expect_equal(unname(f$draws), unname(ref$draws), tolerance = 1e-7)
  expect_equal(unname(f$estimate), unname(stats::coef(stats::glm(y ~ x1 + x2, stats::binomial, d))),
               tolerance = 1e-6)
  # the methods of every fit
  expect_equal(coef(f), colMeans(f$draws))
  expect_identical(dim(posterior_interval(f)), c(3L, 2L))
  expect_s3_class(summary(f), "summary_sb_fit")
  expect_output(print(f), "25 of 25 draws")
  expect_identical(nobs(f), nrow(d))
  expect_identical(dim(posterior::as_draws_matrix(f)), c(25L, 3L))
  expect_identical(ndraws(f), 25L)
  expect_error(predict(f), class = "scalebayes_error_not_applicable")
  expect_error(log_lik(f), class = "scalebayes_error_not_applicable")
  expect_error(fitted(f), class = "scalebayes_error_not_applicable")
  expect_error(posterior_epred(f, newdata = x), class = "scalebayes_error_not_applicable")
})

test_that("wbb(formula, data, loss = ): the loss gets the formula's design and response, as glm.fit", {
  d <- wl_data()
  d$g <- factor(rep(c("u", "v", "w"), length.out = nrow(d)))
  # the loss of glm.fit(): data$x is the design (its intercept column included), data$y the response
  lg <- function(theta, data, weights) {
    eta <- drop(data$x %*% theta)
    list(value = sum(weights * (log1p(exp(eta)) - data$y * eta)),
         gradient = drop(crossprod(data$x, weights * (stats::plogis(eta) - data$y))))
  }
  seen <- NULL
  spy <- function(theta, data, weights) {
    seen <<- data
    lg(theta, data, weights)
  }
  f <- wbb(y ~ x1 + g, data = d, loss = spy, draws = 20, seed = 5, quiet = TRUE,
           control = wbb_loss_control(tol = 1e-12))
  X <- stats::model.matrix(~ x1 + g, d)
  expect_s3_class(seen, "data.frame")
  expect_identical(names(seen), c("y", "x"))
  expect_equal(seen$x, X, ignore_attr = TRUE)
  expect_identical(colnames(seen$x), colnames(X))
  expect_identical(seen$y, d$y)
  # init: zeros named by the design's columns (the names of the draws); the same draws as the matrix form
  expect_identical(colnames(as.matrix(f)), c("(Intercept)", "x1", "gv", "gw"))
  by_hand <- wbb(loss = lg, init = stats::setNames(rep(0, 4), colnames(X)), data = seen, draws = 20, seed = 5,
                 quiet = TRUE, control = wbb_loss_control(tol = 1e-12))
  expect_identical(as.matrix(f), as.matrix(by_hand))
  expect_equal(unname(f$estimate), unname(stats::coef(stats::glm(y ~ x1 + g, stats::binomial, d))),
               tolerance = 1e-6)
  expect_identical(f$call[[1]], quote(wbb))
  # an unnamed init of the design's length takes its names; subset and `- 1` go through the model frame
  g2 <- wbb(y ~ x1 - 1, d, loss = spy, init = 0.5, draws = 5, seed = 1, quiet = TRUE, subset = x2 > 0)
  expect_identical(colnames(as.matrix(g2)), "x1")
  expect_identical(nobs(g2), sum(d$x2 > 0))
  expect_identical(ncol(seen$x), 1L)
  # update() reruns the formula on the new design
  h <- update(f, . ~ . - g, draws = 5)
  expect_identical(colnames(as.matrix(h)), c("(Intercept)", "x1"))
  # a statistic gets the same data frame
  m <- wbb(z ~ x1, data = d, statistic = function(data, weights) stats::weighted.mean(data$y, weights), draws = 10,
           seed = 2, quiet = TRUE)
  expect_identical(as.matrix(m), as.matrix(wbb(statistic = function(dd, w) stats::weighted.mean(dd$z, w), data = d,
                                               draws = 10, seed = 2, quiet = TRUE)))
  # the formula's errors are those of every front end
  expect_error(wbb(y ~ nope, data = d, loss = lg, draws = 5, quiet = TRUE), class = "scalebayes_error_input")
  expect_error(predict(f, newdata = d[1:2, ]), class = "scalebayes_error_not_applicable")
})

test_that("the same seed gives the same draws, in chunks and through future as in one process", {
  skip_if_fast_tier()
  d <- wl_data(40)
  init <- c(a = 0, b1 = 0, b2 = 0)
  a <- wbb(loss = wl_logistic, init = init, data = d, draws = 12, seed = 9, quiet = TRUE)
  expect_identical(wbb(loss = wl_logistic, init = init, data = d, draws = 12, seed = 9, quiet = TRUE, threads = 2)$draws,
                   a$draws)  # threads: accepted, no effect (R runs on the main thread)
  b <- wbb(loss = wl_logistic, init = init, data = d, draws = 12, seed = 9, quiet = TRUE, chunks = 3)
  expect_identical(b$draws, a$draws)
  expect_identical(b$diagnostics$iterations, a$diagnostics$iterations)
  expect_false(identical(wbb(loss = wl_logistic, init = init, data = d, draws = 12, seed = 10, quiet = TRUE)$draws,
                         a$draws))
  st <- function(data, weights) weighted.mean(data$z, weights)
  s <- wbb(statistic = st, data = d, draws = 12, seed = 9, quiet = TRUE)
  expect_identical(wbb(statistic = st, data = d, draws = 12, seed = 9, quiet = TRUE, chunks = 4)$draws, s$draws)
  skip_if_not_installed("future.apply")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  expect_identical(wbb(loss = wl_logistic, init = init, data = d, draws = 12, seed = 9, quiet = TRUE, chunks = 2,
                       future = TRUE)$draws, a$draws)
  skip_on_cran()
  future::plan(future::multisession, workers = 2)
  expect_identical(wbb(loss = wl_logistic, init = init, data = d, draws = 12, seed = 9, quiet = TRUE, chunks = 2,
                       future = TRUE)$draws, a$draws)
  expect_identical(wbb(statistic = st, data = d, draws = 12, seed = 9, quiet = TRUE, future = TRUE)$draws, s$draws)
})

test_that("errors of the user's function are classed and name it", {
  d <- wl_data(30)
  boom <- function(theta, data, weights) stop("my loss broke")
  e <- expect_error(wbb(loss = boom, init = 0, data = d, draws = 3, seed = 1, quiet = TRUE),
                    class = "scalebayes_error_loss")
  expect_identical(e$arg, "loss")
  expect_match(conditionMessage(e), "my loss broke")
  # an error inside a draw (not at init): raised from the engine as the same classed error
  late <- function(theta, data, weights) {
    if (!all(weights == 1)) stop("only unit weights, please")
    wl_sq(theta, data, weights)
  }
  e <- expect_error(wbb(loss = late, init = 0, data = d, draws = 3, seed = 1, quiet = TRUE),
                    class = "scalebayes_error_loss")
  expect_match(conditionMessage(e), "only unit weights")
  expect_error(wbb(loss = function(theta, data, weights) list(value = 1, gradient = c(1, 2)), init = 0, data = d,
                   draws = 2, quiet = TRUE), class = "scalebayes_error_loss", regexp = "length 2")
  # wrong length inside a draw
  grow <- function(theta, data, weights) {
    if (!all(weights == 1)) return(list(value = 1, gradient = c(1, 1)))
    wl_sq(theta, data, weights)
  }
  expect_error(wbb(loss = grow, init = 0, data = d, draws = 2, quiet = TRUE), class = "scalebayes_error_loss",
               regexp = "gradient of length 2")
  expect_error(wbb(loss = function(theta, data, weights) list(value = "a", gradient = 1), init = 0, data = d,
                   draws = 2, quiet = TRUE), class = "scalebayes_error_loss")
  expect_error(wbb(loss = function(theta, data, weights) list(value = NaN, gradient = 1), init = 0, data = d,
                   draws = 2, quiet = TRUE), class = "scalebayes_error_loss", regexp = "not finite")
  expect_error(wbb(loss = function(theta, data, weights) list(value = 1, gradient = Inf), init = 0, data = d,
                   draws = 2, quiet = TRUE), class = "scalebayes_error_loss", regexp = "gradient")
  e <- expect_error(wbb(statistic = function(data, weights) stop("stat broke"), data = d, draws = 2, quiet = TRUE),
                    class = "scalebayes_error_loss")
  expect_identical(e$arg, "statistic")
  expect_error(wbb(statistic = function(data, weights) if (all(weights == 1)) 1 else c(1, 2), data = d, draws = 2,
                   quiet = TRUE), class = "scalebayes_error_loss", regexp = "same length")
  # arguments
  expect_error(wbb(loss = wl_sq, data = d, quiet = TRUE), class = "scalebayes_error_input", regexp = "init")
  expect_error(wbb(loss = wl_sq, init = 0, quiet = TRUE), class = "scalebayes_error_input", regexp = "data")
  expect_error(wbb(loss = wl_sq, statistic = mean, init = 0, data = d), class = "scalebayes_error_input")
  expect_error(wbb(loss = function(theta) 1, init = 0, data = d), class = "scalebayes_error_input",
               regexp = "3 arguments")
  expect_error(wbb(loss = wl_sq, init = c(0, NA), data = d), class = "scalebayes_error_input")
  expect_error(wbb(loss = wl_sq, init = 0, data = d, draws = 2, bogus = 1), class = "scalebayes_error_dots")
  expect_error(wbb(d, loss = wl_sq, init = 0, data = d), class = "scalebayes_error_input")
})

test_that("a draw that does not converge is flagged, warned about, dropped or an error, never silently returned", {
  d <- wl_data(30)
  # a wrong gradient (sign flipped) fails the line search in every draw
  wrong <- function(theta, data, weights) {
    r <- wl_sq(theta, data, weights)
    r$gradient <- -r$gradient
    r
  }
  expect_warning(expect_warning(f <- wbb(loss = wrong, init = c(mu = 0), data = d, draws = 5, seed = 1, quiet = TRUE),
                                class = "scalebayes_warning_convergence"),
                 class = "scalebayes_warning_gradient")  # the finite-difference check at init saw it first
  expect_true(all(f$diagnostics$status == "line_search_failed"))
  expect_false(any(f$diagnostics$converged))
  expect_warning(wbb(loss = wrong, init = c(mu = 0), data = d, draws = 5, seed = 1, quiet = TRUE,
                     control = wbb_loss_control(check_gradient = FALSE)), class = "scalebayes_warning_convergence")
  # a gradient off by a factor still converges to the right draws (same zero) but is warned about up front
  half <- function(theta, data, weights) {
    r <- wl_logistic(theta, data, weights)
    r$gradient <- r$gradient * c(1, 0.5, 1)
    r
  }
  expect_warning(wbb(loss = half, init = c(0, 0, 0), data = d, draws = 2, seed = 1, quiet = TRUE),
                 class = "scalebayes_warning_gradient")
  # the iteration cap: Rosenbrock-like weighted loss with max_iter = 2
  rosen <- function(theta, data, weights) {
    a <- theta[2] - theta[1]^2
    b <- 1 - theta[1]
    s <- sum(weights)
    list(value = s * (100 * a^2 + b^2), gradient = s * c(-400 * a * theta[1] - 2 * b, 200 * a))
  }
  ctl <- wbb_loss_control(max_iter = 2)
  w <- expect_warning(f <- wbb(loss = rosen, init = c(-1.2, 1), data = d, draws = 4, seed = 1, quiet = TRUE,
                               control = ctl), class = "scalebayes_warning_convergence")
  expect_true(all(f$diagnostics$status == "max_iterations"))
  expect_identical(nrow(f$draws), 4L)
  expect_match(conditionMessage(w), "max_iterations: 4")
  # a gradient that is wrong only in the draws whose first weight exceeds 1: those are flagged, kept or dropped
  flaky <- function(theta, data, weights) {
    r <- wl_sq(theta, data, weights)
    if (weights[1] > 1) r$gradient <- -r$gradient
    r
  }
  ww <- wbb_recorded_weights(nrow(d), 12, 4)$w
  bad <- ww[, 1] > 1
  expect_true(any(bad) && !all(bad))  # this seed mixes both
  exact <- drop(ww %*% d$z) / rowSums(ww)
  expect_warning(k <- wbb(loss = flaky, init = c(mu = 0), data = d, draws = 12, seed = 4, quiet = TRUE),
                 class = "scalebayes_warning_convergence")
  expect_identical(nrow(k$draws), 12L)
  expect_identical(k$diagnostics$converged, !bad)
  expect_equal(unname(k$draws[!bad, 1]), exact[!bad], tolerance = 1e-10)
  expect_warning(g <- wbb(loss = flaky, init = c(mu = 0), data = d, draws = 12, seed = 4, quiet = TRUE,
                          control = wbb_loss_control(on_failure = "drop")),
                 class = "scalebayes_warning_convergence")
  expect_identical(nrow(g$draws), sum(!bad))
  expect_equal(unname(g$draws[, 1]), exact[!bad], tolerance = 1e-10)
  expect_identical(g$diagnostics$status, k$diagnostics$status)  # the diagnostics keep every draw
  expect_error(suppressWarnings(wbb(loss = flaky, init = c(mu = 0), data = d, draws = 12, seed = 4, quiet = TRUE,
                                    control = wbb_loss_control(on_failure = "error"))),
               class = "scalebayes_error_convergence")
  expect_error(suppressWarnings(wbb(loss = rosen, init = c(-1.2, 1), data = d, draws = 4, seed = 1, quiet = TRUE,
                                    control = wbb_loss_control(max_iter = 2, on_failure = "drop"))),
               class = "scalebayes_error_convergence", regexp = "No draw converged")
  # with the default cap every draw converges to the minimum (1, 1)
  h <- wbb(loss = rosen, init = c(-1.2, 1), data = d, draws = 4, seed = 1, quiet = TRUE)
  expect_true(all(h$diagnostics$converged))
  expect_equal(unname(h$draws), matrix(1, 4, 2), tolerance = 1e-6)
  # a loss that is infinite away from its domain: the line search backs off
  dom <- function(theta, data, weights) {
    if (theta <= 0) return(list(value = Inf, gradient = NaN))
    list(value = sum(weights) * theta - sum(weights * (data$z > 0)) * log(theta),
         gradient = sum(weights) - sum(weights * (data$z > 0)) / theta)
  }
  k <- wbb(loss = dom, init = 40, data = d, draws = 5, seed = 2, quiet = TRUE)
  expect_true(all(k$diagnostics$converged))
  ww <- wbb_recorded_weights(nrow(d), 5, 2)$w
  expect_equal(unname(k$draws[, 1]), drop(ww %*% (d$z > 0)) / rowSums(ww), tolerance = 1e-7)
})
