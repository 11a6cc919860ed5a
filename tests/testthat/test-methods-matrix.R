# The methods matrix (inst/design.md, "One name per thing"): every fit class with posterior draws supports print,
# summary, plot, predict (on new data), coef, as.matrix, as_draws_matrix / as_draws_df / as_draws_array,
# posterior_interval and nobs. The test is a table: `mm_fits` (one row per fit: the fit and what the generic calls
# need to know about it) x `mm_generics` (one check per generic, each against an independent computation from the
# draws). Rows for the network classes are added to `mm_fits` the same way (a fit, `newx`, `predict_mean`,
# `expected_mean`, `chains`, `nobs`).
#
# A row: fit; newx (new data for predict()); predict_mean(out): the posterior predictive means from predict()'s
# value; expected_mean(fit, newx): the same computed here from the draws; chains: number of chains; nobs; and
# optionally coef_cols (the coef() entries that belong to the columns of as.matrix(), default all).

mm_data <- local({
  set.seed(11)
  n <- 60
  x <- matrix(rnorm(n * 4), n, 4, dimnames = list(NULL, paste0("x", 1:4)))
  y <- drop(x %*% c(1.5, 0, -1, 0.5)) + rnorm(n)
  tf_x <- sort(runif(50, 0, 10))
  tf_y <- sin(tf_x) + rnorm(50, sd = 0.3)
  list(x = x, y = y, newx = x[1:5, ] + 0.1, tf_x = tf_x, tf_y = tf_y, tf_newx = c(0.5, 2.25, 7.1))
})

# predictive mean of a linear model with intercept from the draws: newx %*% draws averaged
mm_linear_mean <- function(fit, newx) {
  d <- as.matrix(fit)
  rowMeans(cbind(1, newx) %*% t(d))
}

mm_fits <- local({
  d <- mm_data
  sg_full <- sgld_sa(d$x, d$y, iterations = 2000, burnin = 1000, thin = 1, chains = 2, seed = 3, quiet = TRUE,
                     threads = 1)
  list(
    wbb = list(fit = wbb(d$x, d$y, lambda = 5, draws = 40, seed = 1, quiet = TRUE, threads = 1), newx = d$newx,
               predict_mean = function(out) out$fit, expected_mean = mm_linear_mean, chains = 1L, nobs = 60L),
    blasso = list(fit = blasso(d$x, d$y, lambda = 1, chains = 3, iterations = 30, burnin = 10, seed = 2, quiet = TRUE,
                               threads = 1),
                  newx = d$newx, predict_mean = function(out) out$fit, expected_mean = mm_linear_mean, chains = 3L,
                  nobs = 60L),
    sgld_sa = list(fit = sg_full, newx = d$newx, predict_mean = identity, expected_mean = mm_linear_mean,
                   chains = 2L, nobs = 60L),
    # only some coefficients' draws kept: predictions use the running means of all coefficients, which are those
    # of the same run keeping every draw (same seed), checked against that run's draws
    sgld_sa_keep = list(fit = sgld_sa(d$x, d$y, iterations = 2000, burnin = 1000, thin = 1, chains = 2, seed = 3,
                                      quiet = TRUE, threads = 1, keep_draws = c("x1", "x3")),
                        newx = d$newx, predict_mean = identity,
                        expected_mean = function(fit, newx) mm_linear_mean(sg_full, newx), chains = 2L, nobs = 60L,
                        coef_cols = c("x1", "x3")),
    # k = 1: the discrete spline is the piecewise-linear interpolant of the fitted values
    trend_filter_wbb = list(fit = trend_filter_wbb(d$tf_y, d$tf_x, k = 1, lambda = 2, draws = 30, seed = 4,
                                                   quiet = TRUE, threads = 1),
                            newx = d$tf_newx, predict_mean = function(out) out$mean,
                            expected_mean = function(fit, newx) {
                              stats::approx(fit$x, colMeans(as.matrix(fit)), newx)$y
                            },
                            chains = 1L, nobs = 50L),
    # a density target has no data: predict() says so with a classed error, nobs() has none
    sgmcmc_density = list(fit = sgmcmc_density(sgmcmc_target("gaussian", c(0, 1), diag(2)), iterations = 200,
                                               chains = 2, seed = 5, quiet = TRUE, threads = 1),
                          newx = d$newx, no_data = TRUE, chains = 2L, nobs = integer(0))
  )
})

mm_generics <- list(
  print = function(row) {
    out <- utils::capture.output(r <- print(row$fit))
    expect_identical(r, row$fit)
    expect_match(out[1], class(row$fit)[1], fixed = TRUE)
    expect_match(out[1], sprintf("%d draws of %d parameters", nrow(row$fit$draws), ncol(row$fit$draws)), fixed = TRUE)
  },
  summary = function(row) {
    s <- summary(row$fit, probs = c(0.1, 0.5))
    d <- as.matrix(row$fit)
    expect_identical(s$parameter, colnames(d))
    expect_equal(s$mean, unname(colMeans(d)))
    expect_equal(s$sd, unname(apply(d, 2, sd)))
    expect_equal(s$q10, unname(apply(d, 2, quantile, 0.1)))
    expect_equal(s$p_zero, unname(colMeans(d == 0)))
  },
  plot = function(row) {
    grDevices::pdf(NULL)
    on.exit(grDevices::dev.off())
    expect_identical(plot(row$fit), row$fit)
  },
  predict = function(row) {
    if (isTRUE(row$no_data)) return(expect_error(predict(row$fit, row$newx), class = "scalebayes_error_state"))
    m <- row$predict_mean(predict(row$fit, row$newx))
    expect_length(m, NROW(row$newx))
    expect_equal(unname(m), unname(row$expected_mean(row$fit, row$newx)), tolerance = 1e-10)
  },
  coef = function(row) {
    d <- as.matrix(row$fit)
    cf <- coef(row$fit)
    cols <- if (is.null(row$coef_cols)) colnames(d) else row$coef_cols
    if (is.null(row$coef_cols)) expect_identical(names(cf), colnames(d))
    expect_equal(cf[cols], colMeans(d)[cols], tolerance = 1e-12)
  },
  as.matrix = function(row) {
    d <- as.matrix(row$fit)
    expect_true(is.matrix(d) && is.numeric(d))
    expect_identical(d, row$fit$draws)
    expect_identical(as.matrix(row$fit, pars = 1), d[, 1, drop = FALSE])
  },
  as_draws_matrix = function(row) {
    m <- as_draws_matrix(row$fit)
    d <- as.matrix(row$fit)
    expect_s3_class(m, "draws_matrix")
    expect_identical(posterior::variables(m), colnames(d))
    expect_equal(posterior::nchains(m), row$chains)
    expect_equal(unclass(m)[, ncol(d)], unname(d[, ncol(d)]), ignore_attr = TRUE)
  },
  as_draws_df = function(row) {
    df <- as_draws_df(row$fit)
    d <- as.matrix(row$fit)
    ch <- if (is.null(row$fit$chain)) rep(1L, nrow(d)) else row$fit$chain
    expect_s3_class(df, "draws_df")
    expect_equal(posterior::ndraws(df), nrow(d))
    expect_equal(df$.chain, ch)
    expect_equal(df[[colnames(d)[1]]], unname(d[, 1]))
  },
  as_draws_array = function(row) {
    a <- as_draws_array(row$fit)
    d <- as.matrix(row$fit)
    ch <- if (is.null(row$fit$chain)) rep(1L, nrow(d)) else row$fit$chain
    expect_identical(dim(a), c(nrow(d) %/% row$chains, row$chains, ncol(d)))
    last <- row$chains
    expect_equal(unclass(a)[, last, ncol(d)], unname(d[ch == last, ncol(d)]), ignore_attr = TRUE)
  },
  posterior_interval = function(row) {
    pi <- posterior_interval(row$fit, prob = 0.8)
    d <- as.matrix(row$fit)
    expect_identical(dim(pi), c(ncol(d), 2L))
    expect_identical(colnames(pi), c("10%", "90%"))
    expect_equal(unname(pi[, 1]), unname(apply(d, 2, quantile, 0.1)))
    expect_equal(unname(pi[, 2]), unname(apply(d, 2, quantile, 0.9)))
  },
  nobs = function(row) {
    expect_identical(as.integer(nobs(row$fit)), row$nobs)
  }
)

for (g in names(mm_generics)) {
  for (f in names(mm_fits)) {
    local({
      gen <- mm_generics[[g]]
      row <- mm_fits[[f]]
      test_that(sprintf("methods matrix: %s() on a %s fit", g, f), {
        gen(row)
      })
    })
  }
}

test_that("the matrix covers every fit class with draws", {
  classes <- vapply(mm_fits, function(r) class(r$fit)[1], "")
  expect_setequal(unique(classes), c("sb_wbb", "sb_blasso", "sb_sgld_sa", "sb_trend_filter_wbb",
                                       "sb_sgmcmc_density"))
})

test_that("unequal chains: as_draws_df() and as_draws_matrix() keep them, as_draws_array() says why it cannot", {
  d <- matrix(c(1, 2, 3, 4, 5, 10, 20, 30, 40, 50), 5, 2, dimnames = list(NULL, c("a", "b")))
  fit <- scalebayes:::new_sb_fit(draws = d, estimate = colMeans(d), method = "test", subclass = "sb_test",
                                 chain = c(1L, 1L, 1L, 2L, 2L))
  df <- as_draws_df(fit)
  expect_equal(posterior::nchains(df), 2)
  expect_equal(df$.iteration, c(1, 2, 3, 1, 2))
  expect_equal(df$b, d[, "b"])
  m <- as_draws_matrix(fit)
  expect_equal(posterior::ndraws(m), 5)
  expect_equal(posterior::nchains(m), 2)
  expect_error(as_draws_array(fit), class = "scalebayes_error_state")
})

test_that("predict() without new data: a classed error where the fit keeps no data", {
  expect_error(predict(mm_fits$blasso$fit), class = "scalebayes_error_input")
  expect_error(predict(mm_fits$wbb$fit), class = "scalebayes_error_input")
  expect_error(predict(mm_fits$sgld_sa$fit), class = "scalebayes_error_input")
  # trend filtering keeps its inputs: predict() gives the fit at the data
  tf <- mm_fits$trend_filter_wbb$fit
  expect_equal(predict(tf)$mean, unname(colMeans(as.matrix(tf))))
})
