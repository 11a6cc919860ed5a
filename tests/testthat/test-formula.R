# The formula interface of every front end (issue 39, item 1; R/model_frame.R): f(y ~ ., data = d) fits f(x, y)
# on the design of the formula (same seed, same draws), factors through their contrasts, predict(newdata = <data
# frame>) from the stored terms, update(fit, . ~ . - x1), and classed errors for bad formula input.

fm_data <- local({
  set.seed(39)
  n <- 40
  d <- data.frame(x1 = rnorm(n), x2 = rnorm(n), x3 = rnorm(n),
                  g = factor(sample(c("a", "b", "c"), n, replace = TRUE)))
  d$y <- d$x1 - d$x2 + 0.5 * (d$g == "b") + rnorm(n, sd = 0.5)
  d$cls <- factor(ifelse(d$y + rnorm(n) > 0, "yes", "no"))
  x <- model.matrix(y ~ x1 + x2 + x3 + g, d)[, -1]
  list(d = d, x = x, y = d$y, cls = d$cls,
       tf = data.frame(t = seq(0.5, 20, by = 0.5), z = sin(seq(0.5, 20, by = 0.5) / 3) + rnorm(40, sd = 0.2)))
})
fm_sg_ctrl <- sgmcmc_control(step_size = 1e-3)

# every linear front end: the fit of the formula, the fit of x and y, and what to compare
fm_linear <- function() {
  d <- fm_data$d; x <- fm_data$x; y <- fm_data$y
  f <- y ~ x1 + x2 + x3 + g
  quiet_conv <- function(expr) suppressWarnings(expr, classes = "scalebayes_warning_convergence")
  list(
    wbb = list(wbb(f, data = d, lambda = 3, draws = 10, seed = 1, quiet = TRUE, threads = 1),
               wbb(x, y, lambda = 3, draws = 10, seed = 1, quiet = TRUE, threads = 1)),
    blasso = list(blasso(f, data = d, lambda = 1, chains = 2, iterations = 20, burnin = 5, seed = 1, quiet = TRUE),
                  blasso(x, y, lambda = 1, chains = 2, iterations = 20, burnin = 5, seed = 1, quiet = TRUE)),
    sgld_sa = list(quiet_conv(sgld_sa(f, data = d, iterations = 100, chains = 2, seed = 1, quiet = TRUE,
                                      control = fm_sg_ctrl)),
                   quiet_conv(sgld_sa(x, y, iterations = 100, chains = 2, seed = 1, quiet = TRUE, control = fm_sg_ctrl))),
    hamcmc_sa = list(quiet_conv(hamcmc_sa(f, data = d, iterations = 100, chains = 2, seed = 1, quiet = TRUE,
                                          control = fm_sg_ctrl)),
                     quiet_conv(hamcmc_sa(x, y, iterations = 100, chains = 2, seed = 1, quiet = TRUE,
                                          control = fm_sg_ctrl))),
    trend_filter_wbb = list(
      trend_filter_wbb(z ~ t, data = fm_data$tf, k = 1, lambda = 2, draws = 10, seed = 1, quiet = TRUE),
      trend_filter_wbb(fm_data$tf$z, fm_data$tf$t, k = 1, lambda = 2, draws = 10, seed = 1, quiet = TRUE))
  )
}

test_that("every linear front end: f(y ~ ., data = d) gives the draws of f(x, y) on the formula's design", {
  fits <- fm_linear()
  for (nm in names(fits)) {
    a <- fits[[nm]][[1]]
    b <- fits[[nm]][[2]]
    expect_identical(a$draws, b$draws, label = nm)
    expect_identical(a$call[[1]], as.name(nm), label = nm)
    expect_false(is.null(a$terms), label = nm)
  }
  # the design is model.matrix() without its column of ones; factors by their treatment contrasts
  expect_identical(colnames(fits$blasso[[1]]$draws), c("(Intercept)", "x1", "x2", "x3", "gb", "gc"))
  expect_identical(unname(fits$blasso[[1]]$data$x), unname(fm_data$x))
  expect_identical(fits$wbb[[1]]$contrasts, list(g = "contr.treatment"))
  expect_identical(fits$wbb[[1]]$xlevels, list(g = c("a", "b", "c")))
  # `y ~ .` is every other column
  d <- fm_data$d[c("y", "x1", "x2", "x3", "g")]
  dot <- wbb(y ~ ., d, lambda = 3, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  expect_identical(dot$draws, fits$wbb[[2]]$draws)
})

test_that("weighted_lasso() and cv_weighted_lasso() take a formula", {
  d <- fm_data$d; x <- fm_data$x; y <- fm_data$y
  a <- weighted_lasso(y ~ x1 + x2 + x3 + g, data = d, lambda = c(5, 1))
  b <- weighted_lasso(x, y, lambda = c(5, 1))
  expect_identical(a$coefficients, b$coefficients)
  expect_identical(predict(a, newdata = d[1, ]), predict(b, newdata = x[1, , drop = FALSE]))
  expect_identical(a$call[[1]], quote(weighted_lasso))
  u <- update(a, . ~ . - x1)
  expect_identical(rownames(u$coefficients), c("(Intercept)", "x2", "x3", "gb", "gc"))
  cva <- cv_weighted_lasso(y ~ x1 + x2 + x3 + g, data = d, nfolds = 3, seed = 2, threads = 1, quiet = TRUE)
  cvb <- cv_weighted_lasso(x, y, nfolds = 3, seed = 2, threads = 1, quiet = TRUE)
  expect_identical(cva$cvm, cvb$cvm)
  expect_identical(cva$lambda_min, cvb$lambda_min)
  # binomial: a two-level factor response
  ab <- weighted_lasso(cls ~ x1 + x2 + g, data = d, family = "binomial", lambda = 2)
  bb <- weighted_lasso(x[, c("x1", "x2", "gb", "gc")], fm_data$cls, family = "binomial", lambda = 2)
  expect_identical(ab$coefficients, bb$coefficients)
})

test_that("predict(newdata = <one row of the data frame>) rebuilds the design from the stored terms", {
  fits <- fm_linear()
  d <- fm_data$d
  for (nm in setdiff(names(fits), "trend_filter_wbb")) {
    a <- fits[[nm]][[1]]
    b <- fits[[nm]][[2]]
    p1 <- predict(a, newdata = d[1, ])
    expect_identical(nrow(p1), 1L, label = nm)
    expect_identical(p1, predict(b, newdata = fm_data$x[1, , drop = FALSE]), label = nm)
    expect_identical(predict(a, newdata = d[1:3, ], draws = TRUE), predict(b, newdata = fm_data$x[1:3, ], draws = TRUE),
                     label = nm)
  }
  # a data frame with the factor only: the columns of the other levels are 0, whatever levels the frame carries
  one <- data.frame(x1 = 0, x2 = 0, x3 = 0, g = "c")
  expect_identical(predict(fits$wbb[[1]], newdata = one), predict(fits$wbb[[2]], newdata = c(0, 0, 0, 0, 1)))
  # trend filtering: a data frame with the input
  tf <- fits$trend_filter_wbb
  expect_identical(predict(tf[[1]], newdata = data.frame(t = c(3.25, 7))), predict(tf[[2]], newdata = c(3.25, 7)))
  # a new factor level is an error naming the column
  nd <- d[1:2, ]
  nd$g <- factor(c("a", "z"))
  expect_error(predict(fits$blasso[[1]], newdata = nd), "`g`", class = "scalebayes_error_new_levels")
  expect_error(predict(fits$blasso[[1]], newdata = nd), class = "scalebayes_error_input")
  # a variable missing from newdata
  expect_error(predict(fits$blasso[[1]], newdata = d[1:2, c("x1", "x2")]), "x3", class = "scalebayes_error_input")
})

test_that("log_lik(), residuals() and posterior_predict() take a data frame; the response comes from it", {
  fits <- fm_linear()
  a <- fits$blasso[[1]]
  b <- fits$blasso[[2]]
  d <- fm_data$d
  expect_identical(log_lik(a, newdata = d[1:5, ]), log_lik(b, newdata = fm_data$x[1:5, ], newy = fm_data$y[1:5]))
  expect_identical(residuals(a, newdata = d[1:5, ]), residuals(b, newdata = fm_data$x[1:5, ], newy = fm_data$y[1:5]))
  expect_identical(log_lik(a), log_lik(b))
  expect_identical(fitted(a), fitted(b))
  expect_identical(posterior_predict(a, newdata = d[1:3, ], seed = 1),
                   posterior_predict(b, newdata = fm_data$x[1:3, ], seed = 1))
  # without the response in the data frame, newy is needed (as before)
  expect_error(log_lik(a, newdata = d[1:5, c("x1", "x2", "x3", "g")]), class = "scalebayes_error_input")
})

test_that("update(fit, . ~ . - x1) changes the formula of every front end, and update() reruns the formula call", {
  fits <- fm_linear()
  d <- fm_data$d
  for (nm in c("wbb", "blasso", "sgld_sa", "hamcmc_sa")) {
    a <- fits[[nm]][[1]]
    u <- suppressWarnings(update(a, . ~ . - x1), classes = "scalebayes_warning_convergence")
    expect_false("x1" %in% colnames(u$draws), label = nm)
    expect_true("x2" %in% colnames(u$draws), label = nm)
    expect_identical(u$call[[1]], as.name(nm), label = nm)
    cl <- update(a, . ~ . - x1, seed = 5, evaluate = FALSE)
    expect_identical(cl$seed, 5)
    expect_identical(cl$data, quote(d))
  }
  f <- y ~ x1 + x2 + x3 + g  # the call reruns where its objects are
  w <- update(fits$wbb[[1]], draws = 12)
  expect_identical(nrow(w$draws), 12L)
  tf <- update(fits$trend_filter_wbb[[1]], draws = 5)
  expect_identical(nrow(tf$draws), 5L)
  # a fit of x and y has no formula to update
  expect_error(update(fits$blasso[[2]], . ~ . - x1), class = "scalebayes_error_input")
})

test_that("the formula's intercept is the front end's intercept setting; - 1 turns it off", {
  d <- fm_data$d; x <- fm_data$x; y <- fm_data$y
  x0 <- model.matrix(y ~ x1 + x2 - 1, d)
  a <- blasso(y ~ x1 + x2 - 1, data = d, lambda = 1, chains = 2, iterations = 20, burnin = 5, seed = 1, quiet = TRUE)
  b <- blasso(x0, y, lambda = 1, chains = 2, iterations = 20, burnin = 5, seed = 1, quiet = TRUE,
              control = blasso_control(intercept = FALSE))
  expect_identical(a$draws, b$draws)
  expect_false("(Intercept)" %in% colnames(a$draws))
  a <- suppressWarnings(sgld_sa(y ~ x1 + x2 - 1, data = d, iterations = 100, chains = 2, seed = 1, quiet = TRUE,
                                control = fm_sg_ctrl), classes = "scalebayes_warning_convergence")
  b <- suppressWarnings(sgld_sa(x0, y, intercept = FALSE, iterations = 100, chains = 2, seed = 1, quiet = TRUE,
                                control = fm_sg_ctrl), classes = "scalebayes_warning_convergence")
  expect_identical(a$draws, b$draws)
  expect_identical(weighted_lasso(y ~ x1 + x2 + 0, data = d, lambda = 2)$coefficients,
                   weighted_lasso(x0, y, lambda = 2, intercept = FALSE)$coefficients)
  a <- wbb(y ~ x1 + x2 - 1, data = d, lambda = 3, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  b <- wbb(x0, y, lambda = 3, draws = 10, seed = 1, quiet = TRUE, threads = 1,
           control = wbb_control(intercept = FALSE))
  expect_identical(a$draws, b$draws)
  # with `- 1` a factor gets all its levels (as in lm())
  a <- weighted_lasso(y ~ g - 1, data = d, lambda = 2)
  expect_identical(rownames(a$coefficients), c("(Intercept)", "ga", "gb", "gc"))
  # an explicit setting that contradicts the formula is an error naming it
  expect_error(weighted_lasso(y ~ x1, data = d, intercept = FALSE), class = "scalebayes_error_input")
  expect_error(sgld_sa(y ~ x1 - 1, data = d, intercept = TRUE), "intercept", class = "scalebayes_error_input")
  expect_error(blasso(y ~ x1, data = d, control = blasso_control(intercept = FALSE)), "control",
               class = "scalebayes_error_input")
  # no intercept setting: - 1 is an error
  expect_error(trend_filter_wbb(z ~ t - 1, data = fm_data$tf, lambda = 1, draws = 5), "- 1",
               class = "scalebayes_error_input")
})

test_that("subset and na.action: the rows of the model frame", {
  d <- fm_data$d; x <- fm_data$x; y <- fm_data$y
  keep <- d$x1 > -0.5
  a <- blasso(y ~ x1 + x2 + x3 + g, data = d, subset = x1 > -0.5, lambda = 1, chains = 2, iterations = 20,
              burnin = 5, seed = 1, quiet = TRUE)
  b <- blasso(x[keep, ], y[keep], lambda = 1, chains = 2, iterations = 20, burnin = 5, seed = 1, quiet = TRUE)
  expect_identical(a$draws, b$draws)
  expect_identical(update(a, iterations = 10)$settings$nobs, sum(keep))
  dna <- d
  dna$x2[3] <- NA
  expect_error(weighted_lasso(y ~ x1 + x2, data = dna, lambda = 1), "na.omit", class = "scalebayes_error_input")
  a <- weighted_lasso(y ~ x1 + x2, data = dna, lambda = 1, na.action = na.omit)
  expect_identical(a$coefficients, weighted_lasso(x[-3, c("x1", "x2")], y[-3], lambda = 1)$coefficients)
  expect_identical(unname(c(a$na.action)), 3L)
  expect_identical(nobs(a), 39L)
  # contrasts: kept and used by predict()
  a <- wbb(y ~ x1 + g, data = d, contrasts = list(g = "contr.sum"), lambda = 3, draws = 10, seed = 1, quiet = TRUE,
           threads = 1)
  xs <- model.matrix(y ~ x1 + g, d, contrasts.arg = list(g = "contr.sum"))[, -1]
  b <- wbb(xs, y, lambda = 3, draws = 10, seed = 1, quiet = TRUE, threads = 1)
  expect_identical(a$draws, b$draws)
  expect_identical(predict(a, newdata = d[2, ]), predict(b, newdata = xs[2, , drop = FALSE]))
})

test_that("bad formula input: classed errors naming the argument", {
  d <- fm_data$d
  expect_input_error <- function(expr, pattern = NULL) expect_error(expr, pattern, class = "scalebayes_error_input")
  # no response
  for (f in list(blasso, wbb, weighted_lasso, sgld_sa, hamcmc_sa, cv_weighted_lasso, wbb_nn, bbb, sparse_vi)) {
    expect_input_error(f(~ x1 + x2, data = d), "no response")
  }
  expect_input_error(trend_filter_wbb(~ t, data = fm_data$tf), "no response")
  # data that is not a data frame
  expect_input_error(blasso(y ~ x1, data = as.matrix(d[1:3])), "data")
  expect_input_error(wbb(y ~ x1, data = 1:3), "data")
  # variables not found
  expect_input_error(sgld_sa(y ~ x1 + nope, data = d), "nope")
  expect_input_error(weighted_lasso(y ~ x1 + nope, data = d), "nope")
  # the whole data set is never printed into the message (hamcmc_sa() did, as "unused argument (data = ...)")
  e <- tryCatch(hamcmc_sa(y ~ x1 + nope, data = d), error = identity)
  expect_s3_class(e, "scalebayes_error_input")
  expect_lt(nchar(conditionMessage(e)), 300)
  # a response of the wrong type
  expect_input_error(blasso(g ~ x1, data = d), "response")
  expect_input_error(wbb(cls ~ x1, data = d), "binomial")
  dc <- d
  dc$chr <- as.character(d$cls)
  expect_input_error(weighted_lasso(chr ~ x1, data = dc, family = "binomial"), "factor")
  expect_input_error(trend_filter_wbb(g ~ t, data = cbind(fm_data$tf, g = d$g)), "response")
  # no predictors
  expect_input_error(blasso(y ~ 1, data = d), "no predictors")
  # y with a formula; formula arguments with a matrix
  expect_input_error(blasso(y ~ x1, fm_data$y, data = d), "y")
  expect_input_error(blasso(fm_data$x, fm_data$y, data = d), "data")
  expect_input_error(weighted_lasso(fm_data$x, fm_data$y, subset = 1:10), "subset")
  expect_input_error(trend_filter_wbb(fm_data$tf$z, data = fm_data$tf), "data")
})

test_that("errors raised inside a formula call name the user's call, not the inner one", {
  d <- fm_data$d
  for (expr in list(quote(sgld_sa(y ~ x1, data = d, batch = TRUE)), quote(hamcmc_sa(y ~ x1, d, batch = TRUE)),
                    quote(wbb(y ~ x1, data = d, draws = -1)), quote(blasso(y ~ x1, data = d, burnin = -1)))) {
    e <- tryCatch(eval(expr), error = identity)
    expect_s3_class(e, "scalebayes_error_input")
    shown <- paste(deparse(conditionCall(e)), collapse = " ")
    expect_no_match(shown, ".sb_arg", fixed = TRUE)
    expect_match(shown, "y ~ x1", fixed = TRUE)
  }
})

test_that("network front ends: the formula's numeric design (factors expanded) is x", {
  skip_if_no_torch()
  d <- fm_data$d; x <- fm_data$x; y <- fm_data$y
  f <- y ~ x1 + x2 + x3 + g
  net <- nn_mlp(3)
  quiet_conv <- function(expr) suppressWarnings(expr, classes = "scalebayes_warning_convergence")
  pairs <- list(
    wbb_nn = list(wbb_nn(f, data = d, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1),
                  wbb_nn(x, y, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1)),
    wbb = list(wbb(f, data = d, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1),
               wbb(x, y, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1)),
    bbb = list(bbb(cls ~ x1 + x2 + g, data = d, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE,
                   threads = 1),
               bbb(x[, c("x1", "x2", "gb", "gc")], fm_data$cls, model = net, draws = 2, epochs = 2, seed = 1,
                   quiet = TRUE, threads = 1)),
    sparse_vi = list(sparse_vi(f, data = d, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1),
                     sparse_vi(x, y, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1)),
    sgld_sa = list(quiet_conv(sgld_sa(f, data = d, model = net, iterations = 40, chains = 2, seed = 1, quiet = TRUE,
                                      threads = 1, control = fm_sg_ctrl)),
                   quiet_conv(sgld_sa(x, y, model = net, iterations = 40, chains = 2, seed = 1, quiet = TRUE,
                                      threads = 1, control = fm_sg_ctrl)))
  )
  for (nm in names(pairs)) {
    a <- pairs[[nm]][[1]]
    b <- pairs[[nm]][[2]]
    expect_identical(a$weights, b$weights, label = nm)
    expect_identical(a$call[[1]], as.name(nm), label = nm)
    xb <- if (nm == "bbb") x[1, c("x1", "x2", "gb", "gc"), drop = FALSE] else x[1, , drop = FALSE]
    expect_identical(predict(a, newdata = d[1, ]), predict(b, newdata = xb), label = nm)
  }
  # newx given to the fitting function as a data frame: the same design
  a <- wbb_nn(f, data = d, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1, newx = d[1:4, ])
  b <- wbb_nn(x, y, model = net, draws = 2, epochs = 2, seed = 1, quiet = TRUE, threads = 1, newx = x[1:4, ])
  expect_identical(a$pred, b$pred)
  # update() with a new formula; the intercept is the network's biases: - 1 is an error
  u <- update(pairs$wbb_nn[[1]], . ~ . - x1)
  expect_identical(u$settings$input, 4L)
  expect_error(wbb_nn(y ~ x1 - 1, data = d, model = net, draws = 2, epochs = 1), "- 1",
               class = "scalebayes_error_input")
  expect_error(bbb(y ~ x1 + 0, data = d, model = net, draws = 2, epochs = 1), class = "scalebayes_error_input")
  expect_error(sgld_sa(y ~ x1, data = d, model = net, intercept = FALSE), class = "scalebayes_error_input")
})
