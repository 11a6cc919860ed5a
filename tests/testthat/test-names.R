# One name per thing (inst/design.md): every renamed argument still works for one release with a warning of class
# "scalebayes_warning_deprecated" and gives the result of the new name; giving both names is an error.

nm_data <- local({
  set.seed(21)
  x <- matrix(rnorm(50 * 4), 50, 4, dimnames = list(NULL, paste0("x", 1:4)))
  y <- drop(x %*% c(1, 0, -1, 0)) + rnorm(50)
  tf_y <- sin(seq(0, 6, length.out = 40)) + rnorm(40, sd = 0.3)
  list(x = x, y = y, tf_y = tf_y)
})

expect_deprecated <- function(expr) expect_warning(expr, class = "scalebayes_warning_deprecated")

test_that("blasso(iter = ) is blasso(iterations = ), with a deprecation warning; both is an error", {
  d <- nm_data
  new <- blasso(d$x, d$y, lambda = 1, chains = 2, iterations = 25, burnin = 5, seed = 3, quiet = TRUE)
  expect_deprecated(old <- blasso(d$x, d$y, lambda = 1, chains = 2, iter = 25, burnin = 5, seed = 3, quiet = TRUE))
  expect_identical(old$draws, new$draws)
  expect_identical(old$settings$iterations, 25L)
  expect_equal(nrow(new$draws), 50)
  expect_error(blasso(d$x, d$y, lambda = 1, iter = 25, iterations = 25, quiet = TRUE), class = "scalebayes_error_input")
})

test_that("blasso() chains split into chunks (and through future) give the draws of one process", {
  skip_if_fast_tier()
  d <- nm_data
  ctl_rj <- blasso_control(preset = "monomvn")
  runs <- list(fixed = list(lambda = 1), eb = list(lambda = "eb"), gamma = list(lambda = "gamma"),
               rj = list(lambda = "gamma", control = ctl_rj))
  for (nm in names(runs)) {
    args <- c(list(d$x, d$y, chains = 3, iterations = 40, burnin = 10, seed = 9, quiet = TRUE), runs[[nm]])
    one <- do.call(blasso, args)
    split <- do.call(blasso, c(args, list(chunks = 3, threads = 1)))
    two <- do.call(blasso, c(args, list(chunks = 2)))
    for (f in list(split, two)) {
      expect_identical(f$draws, one$draws, label = nm)
      expect_identical(f$chain, one$chain, label = nm)
      expect_identical(f$sigma2, one$sigma2, label = nm)
      expect_identical(f$lambda, one$lambda, label = nm)
      expect_identical(f$model_size, one$model_size, label = nm)
      expect_identical(f$em_trace, one$em_trace, label = nm)
      expect_identical(f$rj_accept, one$rj_accept, label = nm)
    }
  }
  # chunks beyond the number of chains are capped; a bad value is a classed error
  expect_identical(blasso(d$x, d$y, lambda = 1, chains = 2, iterations = 10, burnin = 0, seed = 1, quiet = TRUE,
                          chunks = 5)$draws,
                   blasso(d$x, d$y, lambda = 1, chains = 2, iterations = 10, burnin = 0, seed = 1, quiet = TRUE)$draws)
  expect_error(blasso(d$x, d$y, chunks = 0, quiet = TRUE), class = "scalebayes_error_input")
  expect_error(blasso(d$x, d$y, future = NA, quiet = TRUE), class = "scalebayes_error_input")
  skip_if_not_installed("future.apply")
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  args <- list(d$x, d$y, lambda = "eb", chains = 3, iterations = 30, burnin = 10, seed = 4, quiet = TRUE)
  one <- do.call(blasso, args)
  fu <- do.call(blasso, c(args, list(future = TRUE, chunks = 3)))
  expect_identical(fu$draws, one$draws)
  expect_identical(fu$lambda_hat, one$lambda_hat)
  skip_on_cran()
  future::plan(future::multisession, workers = 2)
  fu2 <- do.call(blasso, c(args, list(future = TRUE)))
  expect_identical(fu2$draws, one$draws)
  expect_identical(fu2$chain, one$chain)
})

test_that("wbb_control(chunks = , future = ) still work with a deprecation warning; wbb(chunks = , future = ) is the place", {
  d <- nm_data
  new <- wbb(d$x, d$y, lambda = 3, draws = 12, seed = 2, quiet = TRUE, chunks = 3)
  expect_deprecated(ctl <- wbb_control(chunks = 3))
  old <- wbb(d$x, d$y, lambda = 3, draws = 12, seed = 2, quiet = TRUE, control = ctl)
  expect_identical(old$draws, new$draws)
  expect_error(wbb(d$x, d$y, lambda = 3, draws = 12, quiet = TRUE, control = ctl, chunks = 2),
               class = "scalebayes_error_input")
  expect_deprecated(ctl_f <- wbb_control(future = FALSE))
  expect_identical(wbb(d$x, d$y, lambda = 3, draws = 12, seed = 2, quiet = TRUE, control = ctl_f)$draws, new$draws)
  expect_error(wbb(d$x, d$y, lambda = 3, draws = 12, quiet = TRUE, control = ctl_f, future = FALSE),
               class = "scalebayes_error_input")
  # no warning when neither is given in wbb_control()
  expect_no_warning(wbb_control(nfolds = 5))
  skip_if_not_installed("future.apply")
  old_plan <- future::plan(future::sequential)
  on.exit(future::plan(old_plan), add = TRUE)
  expect_deprecated(expect_deprecated(ctl_ft <- wbb_control(future = TRUE, chunks = 2)))
  expect_identical(wbb(d$x, d$y, lambda = 3, draws = 12, seed = 2, quiet = TRUE, control = ctl_ft)$draws, new$draws)
  expect_identical(wbb(d$x, d$y, lambda = 3, draws = 12, seed = 2, quiet = TRUE, future = TRUE, chunks = 2)$draws,
                   new$draws)
})

test_that("predict() and plot() of trend_filter_wbb and plot() of a WBB path take prob (level deprecated)", {
  # the interval mass is `prob` in every method (rstantools's name; issue 39); `level`, its name in the release
  # before, works for one release with a warning
  d <- nm_data
  fit <- trend_filter_wbb(d$tf_y, k = 1, lambda = 2, draws = 30, seed = 1, quiet = TRUE)
  new <- predict(fit, prob = 0.8)
  expect_deprecated(old <- predict(fit, level = 0.8))
  expect_identical(old, new)
  # the band is the central 80% of the draws
  expect_equal(new$lower, unname(apply(fit$draws, 2, quantile, 0.1)))
  expect_error(predict(fit, prob = 0.8, level = 0.8), class = "scalebayes_error_input")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_deprecated(plot(fit, band = "quantile", level = 0.8))
  expect_no_warning(plot(fit, band = "quantile", prob = 0.8))
  expect_error(plot(fit, prob = 0.8, level = 0.8), class = "scalebayes_error_input")
  path <- wbb(d$x, d$y, lambda = c(5, 2), draws = 10, seed = 1, quiet = TRUE)
  expect_deprecated(plot(path, level = 0.5))
  expect_no_warning(plot(path, prob = 0.5))
  expect_error(plot(path, prob = 0.5, level = 0.5), class = "scalebayes_error_input")
})

test_that("wbb_figure2(mh_iter = ) is wbb_figure2(iterations = ), with a deprecation warning", {
  new <- wbb_figure2(draws = 50, seed = 2, reading = "paper_code", iterations = 200, kappa = 1)
  expect_deprecated(old <- wbb_figure2(draws = 50, seed = 2, reading = "paper_code", mh_iter = 200, kappa = 1))
  expect_identical(old$draws, new$draws)
  expect_identical(new$iterations, 200L)
  expect_error(wbb_figure2(draws = 50, reading = "paper_code", mh_iter = 200, iterations = 200),
               class = "scalebayes_error_input")
})

test_that("every linear function that runs several draws or chains takes seed, threads, quiet, chunks and future", {
  for (f in list(wbb.default, trend_filter_wbb, blasso, blasso_compare, wbb_figure3)) {
    expect_true(all(c("seed", "threads", "quiet", "chunks", "future") %in% names(formals(f))))
  }
  expect_true(all(c("seed", "threads", "quiet") %in% names(formals(wbb_figure2))))
  expect_true(all(c("seed", "threads", "quiet") %in% names(formals(cv_weighted_lasso))))
})

test_that("wbb_control(standardize = ) still works with a deprecation warning; wbb(standardize = ) is the place", {
  d <- nm_data
  new <- wbb(d$x, d$y, lambda = 3, draws = 8, seed = 2, quiet = TRUE, standardize = FALSE)
  expect_deprecated(ctl <- wbb_control(standardize = FALSE))
  old <- wbb(d$x, d$y, lambda = 3, draws = 8, seed = 2, quiet = TRUE, control = ctl)
  expect_identical(old$draws, new$draws)
  expect_false(old$settings$standardize)
  expect_false(identical(new$draws, wbb(d$x, d$y, lambda = 3, draws = 8, seed = 2, quiet = TRUE)$draws))
  expect_error(wbb(d$x, d$y, lambda = 3, draws = 8, quiet = TRUE, control = ctl, standardize = TRUE),
               class = "scalebayes_error_input")
  expect_no_warning(wbb_control(nfolds = 4, intercept = TRUE))
})

test_that("the front ends share the names of the design table (inst/design.md, One name per thing)", {
  has <- function(f, args) expect_true(all(args %in% names(formals(f))), label = paste(deparse(substitute(f)), toString(args)))
  # draws, keep_draws, seed, threads, quiet in every bootstrap front end
  for (f in list(wbb.default, wbb_nn)) has(f, c("draws", "keep_draws", "standardize", "seed", "threads", "quiet"))
  has(trend_filter_wbb, c("draws", "seed", "threads", "quiet"))
  # new inputs: newdata first, newx its synonym
  for (cl in c("sb_fit", "sb_weighted_lasso", "sb_trend_filter", "sb_vae", "sb_cv", "sb_nn_fit")) {
    expect_true(all(c("newdata", "newx") %in% names(formals(getS3method("predict", cl)))), label = cl)
  }
  # no second name for a concept of the table among the exported functions' arguments
  ns <- asNamespace("scalebayes")
  args <- unique(unlist(lapply(getNamespaceExports("scalebayes"), function(f) {
    g <- get(f, ns)
    if (is.function(g)) names(formals(g))
  })))
  expect_length(intersect(args, c("n_draws", "ndraws", "nsamples", "verbose", "progress", "n_threads", "ncores",
                                  "cores", "level", "conf_level", "keep_draw", "new_x", "new_data")), 0L)
})

test_that("predict() of trend_filter() and vae() fits take newdata (newx its synonym)", {
  d <- nm_data
  tf <- trend_filter(d$tf_y, k = 1, lambda = 2)
  expect_identical(predict(tf, newdata = c(2.5, 7)), predict(tf, newx = c(2.5, 7)))
  expect_identical(predict(tf, c(2.5, 7)), predict(tf, newx = c(2.5, 7)))
  expect_error(predict(tf, newdata = 1, newx = 1), class = "scalebayes_error_input")
  expect_error(predict(tf, 2, lamda = 1), class = "scalebayes_error_dots")
  # rows by position: no name taken from the neighbouring fitted value
  expect_null(names(predict(tf, c(2.5, 7))))
})

test_that("trend_filter(), generalized_lasso() and tf_lambda_max() take penalty_factor (penalty_weights deprecated)", {
  d <- nm_data
  m <- length(d$tf_y) - 2L  # k = 1: n - k - 1 differences
  pf <- seq(0.5, 1.5, length.out = m)
  new <- trend_filter(d$tf_y, k = 1, lambda = 2, penalty_factor = pf)
  expect_deprecated(old <- trend_filter(d$tf_y, k = 1, lambda = 2, penalty_weights = pf))
  expect_identical(old$beta, new$beta)
  expect_false(identical(new$beta, trend_filter(d$tf_y, k = 1, lambda = 2)$beta))
  expect_error(trend_filter(d$tf_y, k = 1, lambda = 2, penalty_factor = pf, penalty_weights = pf),
               class = "scalebayes_error_input")
  expect_error(trend_filter(d$tf_y, k = 1, lambda = 2, penalty_factor = 0), "penalty_factor", class = "scalebayes_error_input")
  expect_deprecated(l_old <- tf_lambda_max(d$tf_y, k = 1, penalty_weights = pf))
  expect_identical(l_old, tf_lambda_max(d$tf_y, k = 1, penalty_factor = pf))
  D <- diff(diag(length(d$tf_y)))
  g_new <- generalized_lasso(d$tf_y, D, lambda = 1, penalty_factor = 2)
  expect_deprecated(g_old <- generalized_lasso(d$tf_y, D, lambda = 1, penalty_weights = 2))
  expect_identical(g_old$beta, g_new$beta)
})

test_that("trend_filter_wbb(lambda = \"1se\") is cross-validation with that rule, as wbb()", {
  d <- nm_data
  a <- trend_filter_wbb(d$tf_y, k = 1, lambda = "1se", draws = 5, seed = 3, quiet = TRUE)
  b <- trend_filter_wbb(d$tf_y, k = 1, lambda_rule = "1se", draws = 5, seed = 3, quiet = TRUE)
  expect_identical(a$lambda, b$lambda)
  expect_identical(a$lambda, a$cv$lambda_1se)
  expect_identical(a$draws, b$draws)
  expect_identical(trend_filter_wbb(d$tf_y, k = 1, lambda = "min", draws = 5, seed = 3, quiet = TRUE)$lambda, a$cv$lambda_min)
  expect_error(trend_filter_wbb(d$tf_y, k = 1, lambda = "best", draws = 5, quiet = TRUE), class = "scalebayes_error_input")
})
