# Issue 61 item 4 (one meaning per argument: ?predict-types) and the rest of item 8 (bad inputs reported as data
# problems, before any chain runs), and item 7's loo() / waic() / pp_check() methods.

rules_data <- function(n = 80, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * 3), n, 3, dimnames = list(NULL, c("a", "b", "c")))
  eta <- drop(x %*% c(1.5, -1, 0))
  data.frame(x, y = eta + rnorm(n), z = factor(ifelse(runif(n) < plogis(eta), "yes", "no"), levels = c("no", "yes")))
}

test_that("predict(): type = \"response\" is the default of every linear fit, as of networks (issue 61)", {
  d <- rules_data()
  f <- wbb(z ~ a + b + c, data = d, family = "binomial", draws = 20, seed = 1, quiet = TRUE)
  nd <- d[1:7, ]
  p <- predict(f, newdata = nd)
  expect_equal(p$fit, colMeans(posterior_epred(f, newdata = nd)), tolerance = 1e-12)
  expect_true(all(p$fit > 0 & p$fit < 1))
  expect_equal(predict(f, newdata = nd, type = "link")$fit, colMeans(posterior_linpred(f, newdata = nd)),
               tolerance = 1e-12)
  wl <- weighted_lasso(z ~ a + b + c, data = d, family = "binomial", lambda = 0.01)
  expect_equal(predict(wl, newdata = nd), stats::plogis(predict(wl, newdata = nd, type = "link")))
  cv <- cv_weighted_lasso(z ~ a + b + c, data = d, family = "binomial", seed = 1)
  expect_true(all(predict(cv, newdata = nd) > 0 & predict(cv, newdata = nd) < 1))
})

test_that("predict(type = \"class\"): a factor of the response's levels for every binomial fit (issue 61)", {
  d <- rules_data()
  nd <- d[1:9, ]
  f <- wbb(z ~ a + b + c, data = d, family = "binomial", draws = 20, seed = 1, quiet = TRUE)
  cl <- predict(f, newdata = nd, type = "class")
  expect_s3_class(cl, "factor")
  expect_identical(levels(cl), c("no", "yes"))
  expect_identical(as.character(cl), ifelse(predict(f, newdata = nd)$fit > 0.5, "yes", "no"))
  wl <- weighted_lasso(z ~ a + b + c, data = d, family = "binomial", lambda = 0.01)
  expect_identical(as.character(predict(wl, newdata = nd, type = "class")),
                   unname(ifelse(predict(wl, newdata = nd) > 0.5, "yes", "no")))
  # a 0/1 response: levels "0", "1"
  x <- as.matrix(d[, c("a", "b", "c")])
  y01 <- as.integer(d$z == "yes")
  f01 <- wbb(x, y01, family = "binomial", draws = 20, seed = 1, quiet = TRUE)
  cl01 <- predict(f01, x[1:9, ], type = "class")
  expect_identical(levels(cl01), c("0", "1"))
  expect_identical(as.integer(as.character(cl01)), as.integer(predict(f01, x[1:9, ])$fit > 0.5))
  # a path: one column per lambda
  path <- weighted_lasso(x, y01, family = "binomial", lambda = c(0.1, 0.01))
  expect_identical(dim(predict(path, x[1:4, ], type = "class")), c(4L, 2L))
  # no draws of a class; no class of a gaussian fit
  expect_error(predict(f, newdata = nd, type = "class", draws = TRUE), class = "scalebayes_error_input")
  g <- wbb(y ~ a + b + c, data = d, draws = 10, seed = 1, quiet = TRUE)
  expect_error(predict(g, newdata = nd, type = "class"), class = "scalebayes_error_not_applicable")
})

test_that("cv_weighted_lasso() of a formula predicts a data frame (issue 61)", {
  d <- rules_data()
  cv <- cv_weighted_lasso(y ~ a + b + c, data = d, seed = 1)
  p <- predict(cv, newdata = d[1:3, ])
  expect_length(p, 3L)
  expect_equal(unname(p), unname(predict(cv, newdata = as.matrix(d[1:3, c("a", "b", "c")]))))
  expect_equal(unname(predict(cv, newdata = d[1:3, ], s = "lambda.min")),
               unname(drop(cbind(1, as.matrix(d[1:3, c("a", "b", "c")])) %*% coef(cv, s = "lambda.min"))))
})

test_that("every formula fit predicts from a data frame (issue 61)", {
  d <- rules_data(60)
  nd <- d[1:4, ]
  fits <- suppressWarnings(list(
    wbb = wbb(y ~ a + b + c, data = d, draws = 10, seed = 1, quiet = TRUE),
    weighted_lasso = weighted_lasso(y ~ a + b + c, data = d, lambda = 0.1),
    cv = cv_weighted_lasso(y ~ a + b + c, data = d, seed = 1),
    blasso = blasso(y ~ a + b + c, data = d, iterations = 40, chains = 1, seed = 1, quiet = TRUE),
    sgld_sa = sgld_sa(y ~ a + b + c, data = d, iterations = 60, chains = 1, seed = 1, quiet = TRUE),
    hamcmc_sa = hamcmc_sa(y ~ a + b + c, data = d, iterations = 60, chains = 1, seed = 1, quiet = TRUE),
    wbb_nn = wbb_nn(y ~ a + b + c, data = d, model = nn_mlp(3), draws = 2, epochs = 2, seed = 1, quiet = TRUE)
  ))
  for (nm in names(fits)) {
    p <- predict(fits[[nm]], newdata = nd)
    m <- if (is.data.frame(p)) p$fit else p
    expect_identical(NROW(m), 4L, label = nm)
    expect_true(all(is.finite(m)), label = nm)
  }
})

test_that("prob is an interval mass, probs quantile levels; method arguments are never partial-matched (issue 61)", {
  d <- rules_data()
  f <- wbb(y ~ a + b + c, data = d, draws = 20, seed = 1, quiet = TRUE)
  expect_named(summary(f, prob = 0.5)[, c("q25", "q75")])
  expect_named(summary(f, probs = c(0.1, 0.9))[, c("q10", "q90")])
  expect_error(summary(f, pro = 0.5), class = "scalebayes_error_dots")        # was probs = 0.5: the median
  expect_error(summary(f, par = "a"), class = "scalebayes_error_dots")        # was pars
  expect_error(posterior_interval(f, pr = 0.5), class = "scalebayes_error_dots")
  e <- expect_error(predict(f, newdata = d[1:2, ], typ = "link"), class = "scalebayes_error_dots")
  expect_equal(e$arg, "typ")
  e <- expect_error(predict(f, newdata = d[1:2, ], draws = 5), class = "scalebayes_error_input")
  expect_equal(e$arg, "draws")
  expect_match(conditionMessage(e), "set when fitting")
})

test_that("sgld_sa() / hamcmc_sa(): a constant or underflowing y is a data error before any chain (issue 61)", {
  d <- rules_data(60)
  x <- as.matrix(d[, c("a", "b", "c")])
  e <- expect_error(sgld_sa(x, rep(1, 60), iterations = 50, seed = 1, quiet = TRUE), class = "scalebayes_error_degenerate")
  expect_equal(e$arg, "y")
  expect_match(conditionMessage(e), "constant")
  e <- expect_error(sgld_sa(x, d$y * 1e-300, iterations = 50, seed = 1, quiet = TRUE), class = "scalebayes_error_scaling")
  expect_equal(e$arg, "y")
  e <- expect_error(hamcmc_sa(x, d$y * 1e-300, iterations = 50, seed = 1, quiet = TRUE), class = "scalebayes_error_scaling")
  expect_equal(e$arg, "y")
  expect_error(sgld_sa(x * 1e300, d$y, iterations = 50, seed = 1, quiet = TRUE), class = "scalebayes_error_scaling")
  expect_error(wbb(x, d$y * 1e-300, draws = 5, seed = 1), class = "scalebayes_error_scaling")
})

test_that("hamcmc_sa(iterations = 1): coef_sd is the sd of the kept draws, not NaN (issue 61)", {
  d <- rules_data(60)
  x <- as.matrix(d[, c("a", "b", "c")])
  f <- suppressWarnings(hamcmc_sa(x, d$y, iterations = 1, seed = 1, quiet = TRUE))
  expect_true(all(is.finite(f$coef_sd)))
  dr <- as.matrix(f)
  expect_gte(nrow(dr), 2L)
  pop_sd <- function(v) sqrt(mean((v - mean(v))^2))  # the pooled second moment around the pooled mean
  expect_equal(unname(f$coef_sd[-1]), unname(apply(dr[, -1, drop = FALSE], 2, pop_sd)), tolerance = 1e-8)
})

test_that("wbb_nn(): a response whose squares overflow is a scaling error, not \"lower lr\" (issue 61)", {
  d <- rules_data(40)
  x <- as.matrix(d[, c("a", "b", "c")])
  e <- expect_error(wbb_nn(x, d$y * 1e300, model = nn_mlp(3), draws = 2, epochs = 2, seed = 1, quiet = TRUE),
                    class = "scalebayes_error_scaling")
  expect_equal(e$arg, "y")
})

test_that("sgmcmc_target(): an argument it does not have is a classed error naming it (issue 61)", {
  e <- expect_error(sgmcmc_target("gaussian", mean = 0, variance = 1e6), class = "scalebayes_error_dots")
  expect_equal(e$arg, "variance")
  expect_match(conditionMessage(e), "cov")
  expect_error(sgmcmc_target("gaussian", mean = 0, cov = diag(1), sigm = 2), class = "scalebayes_error_dots")
  expect_s3_class(sgmcmc_target("gaussian", mean = 0, cov = matrix(1e6)), "sb_sgmcmc_target")
})

test_that("loo(), waic() and pp_check() methods of a fit (issue 61, item 7)", {
  skip_if_not_installed("loo")
  d <- rules_data(50)
  x <- as.matrix(d[, c("a", "b", "c")])
  f <- wbb(x, d$y, draws = 60, seed = 1, quiet = TRUE)
  l <- suppressWarnings(loo::loo(f))
  expect_s3_class(l, "psis_loo")
  ref <- suppressWarnings(loo::loo(log_lik(f), r_eff = rep(1, 50)))
  expect_equal(l$estimates, ref$estimates)
  w <- suppressWarnings(loo::waic(f))
  expect_equal(w$estimates, suppressWarnings(loo::waic(log_lik(f)))$estimates)
  skip_if_not_installed("bayesplot")
  expect_s3_class(bayesplot::pp_check(f, ndraws = 10, seed = 1), "ggplot")
  expect_error(bayesplot::pp_check(f, type = "no_such_plot"), class = "scalebayes_error_input")
})
