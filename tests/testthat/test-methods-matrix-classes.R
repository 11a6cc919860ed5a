# Every fit class x every generic (issue 39, "Done when"): each generic gives a value, or, where it cannot apply,
# an error of class scalebayes_error_not_applicable (which says why and what to use) - never an error of base R or
# of another package, never a silent NULL. test-methods-matrix.R and test-methods-matrix-nn.R check the values of
# the fits with draws against independent computations; this file covers every class, those without draws
# included, with one table: a row per fit (tiny, so that the file runs in seconds) naming the generics that do not
# apply to it; every other generic must return a value.

mc_data <- local({
  set.seed(11)
  n <- 40
  x <- matrix(rnorm(n * 3), n, 3, dimnames = list(NULL, paste0("x", 1:3)))
  y <- drop(x %*% c(1.5, 0, -1)) + rnorm(n)
  tx <- sort(runif(40, 0, 10))
  list(x = x, y = y, tx = tx, ty = sin(tx) + rnorm(40, sd = 0.3), tcount = rpois(40, exp(1 + sin(tx) / 2)),
       yk = cut(y, stats::quantile(y, c(0, 1 / 3, 2 / 3, 1)), labels = c("a", "b", "c"), include.lowest = TRUE))
})

mc_generics <- list(
  print = function(f, nx) utils::capture.output(print(f)),
  summary = function(f, nx) summary(f),
  plot = function(f, nx) {
    grDevices::pdf(NULL)
    on.exit(grDevices::dev.off())
    plot(f)
  },
  predict = function(f, nx) predict(f, nx),
  predict_one_row = function(f, nx) predict(f, if (is.matrix(nx)) nx[1, ] else nx[1]),
  coef = function(f, nx) coef(f),
  fitted = function(f, nx) fitted(f),
  residuals = function(f, nx) residuals(f),
  update = function(f, nx) update(f, evaluate = FALSE),
  nobs = function(f, nx) nobs(f),
  vcov = function(f, nx) vcov(f),
  log_lik = function(f, nx) log_lik(f),
  posterior_predict = function(f, nx) posterior_predict(f),
  posterior_epred = function(f, nx) posterior_epred(f),
  posterior_linpred = function(f, nx) posterior_linpred(f),
  predictive_interval = function(f, nx) predictive_interval(f),
  ndraws = function(f, nx) ndraws(f),
  prior_summary = function(f, nx) prior_summary(f),
  posterior_interval = function(f, nx) posterior_interval(f),
  as_draws_df = function(f, nx) as_draws_df(f),
  as_draws_matrix = function(f, nx) as_draws_matrix(f),
  as.matrix = function(f, nx) as.matrix(f)
)

# the generics that need posterior draws, and those that need data (a response model)
mc_posterior <- c("vcov", "log_lik", "posterior_predict", "posterior_epred", "posterior_linpred",
                  "predictive_interval", "ndraws", "prior_summary", "posterior_interval", "as_draws_df",
                  "as_draws_matrix", "as.matrix")
mc_data_generics <- c("predict", "predict_one_row", "fitted", "residuals", "log_lik", "posterior_predict",
                      "posterior_epred", "posterior_linpred", "predictive_interval")

# Check one fit against every generic: `na` the generics that must be not-applicable errors.
mc_check <- function(f, nx, na, label) {
  for (g in names(mc_generics)) {
    if (g %in% na) {
      expect_error(mc_generics[[g]](f, nx), class = "scalebayes_error_not_applicable", label = paste(label, g))
    } else {
      v <- tryCatch(mc_generics[[g]](f, nx), error = function(e) e)
      if (inherits(v, "error")) {
        fail(sprintf("%s: %s() failed: %s", label, g, conditionMessage(v)))
      } else {
        expect_false(is.null(v), label = paste0(label, ": ", g, "() is NULL"))
      }
    }
  }
}

test_that("every fit class answers every generic with a value or a not-applicable error", {
  d <- mc_data
  nx <- d$x[1:3, ] + 0.1
  tnx <- c(1.5, 2.5, 7)
  loss <- function(theta, data, weights) {
    list(value = sum(weights * (data - theta)^2) / 2, gradient = -sum(weights * (data - theta)))
  }
  rows <- list(
    wbb = list(wbb(d$x, d$y, lambda = 5, draws = 10, seed = 1, quiet = TRUE, threads = 1), nx, character()),
    blasso = list(blasso(d$x, d$y, chains = 2, iterations = 40, burnin = 20, seed = 2, quiet = TRUE, threads = 1),
                  nx, character()),
    sgld_sa = list(suppressWarnings(sgld_sa(d$x, d$y, iterations = 200, burnin = 100, chains = 2, seed = 3,
                                            quiet = TRUE, threads = 1)), nx, character()),
    hamcmc_sa = list(suppressWarnings(hamcmc_sa(d$x, d$y, iterations = 200, burnin = 100, chains = 2, seed = 6,
                                                quiet = TRUE, threads = 1,
                                                control = sgmcmc_control(step_size = 0.05))), nx, character()),
    trend_filter_wbb = list(trend_filter_wbb(d$ty, d$tx, k = 1, lambda = 2, draws = 10, seed = 4, quiet = TRUE,
                                             threads = 1), tnx, character()),
    sgmcmc_density = list(suppressWarnings(sgmcmc_density(sgmcmc_target("gaussian", c(0, 1), diag(2)),
                                                          iterations = 100, chains = 2, seed = 5, quiet = TRUE,
                                                          threads = 1, control = sgmcmc_control(step_size = 0.1))),
                          nx, c(mc_data_generics, "nobs")),
    wbb_loss = list(wbb(loss = loss, init = c(mu = 0), data = d$y, draws = 10, seed = 6, quiet = TRUE), nx,
                    mc_data_generics),
    # several lambda values: a path of fits, one per lambda
    wbb_path = list(wbb(d$x, d$y, lambda = c(5, 1), draws = 10, seed = 1, quiet = TRUE, threads = 1), nx,
                    c("predict", "predict_one_row", "fitted", "residuals", mc_posterior)),
    weighted_lasso = list(weighted_lasso(d$x, d$y, lambda = c(5, 1)), nx, mc_posterior),
    # the multinomial family (issue 59): three classes from the same design
    wbb_multinomial = list(wbb(d$x, d$yk, family = "multinomial", lambda = 0.05, draws = 10, seed = 1, quiet = TRUE,
                               threads = 1), nx, "residuals"),
    weighted_lasso_multinomial = list(weighted_lasso(d$x, d$yk, family = "multinomial", lambda = c(0.1, 0.05)), nx,
                                      c("residuals", mc_posterior)),
    cv_weighted_lasso = list(cv_weighted_lasso(d$x, d$y, nfolds = 3, seed = 1), nx, mc_posterior),
    trend_filter = list(trend_filter(d$ty, d$tx, k = 1, lambda = c(2, 1)), tnx, mc_posterior),
    # Poisson trend filtering (issue 58, item 4): counts from the same design points
    trend_filter_wbb_poisson = list(trend_filter_wbb(d$tcount, d$tx, k = 1, lambda = 2, draws = 10, seed = 4,
                                                     quiet = TRUE, threads = 1, family = "poisson"), tnx, character()),
    trend_filter_poisson = list(trend_filter(d$tcount, d$tx, k = 1, lambda = c(2, 1), family = "poisson"), tnx,
                                mc_posterior),
    generalized_lasso = list(suppressWarnings(generalized_lasso(d$ty, diff(diag(40)), nlambda = 4)), NULL,
                             c("predict", "predict_one_row", mc_posterior)),
    cv_trend_filter = list(cv_trend_filter(d$ty, d$tx, k = 1, nfolds = 3, nlambda = 4), tnx,
                           c("predict", "predict_one_row", "coef", "fitted", "residuals", mc_posterior)),
    sure_trend_filter = list(sure_trend_filter(d$ty, d$tx, k = 1, nlambda = 4), tnx,
                             c("predict", "predict_one_row", "coef", "fitted", "residuals", mc_posterior))
  )
  for (nm in names(rows)) mc_check(rows[[nm]][[1]], rows[[nm]][[2]], rows[[nm]][[3]], nm)
  # the classes covered: every fitting function's (networks and VAEs below)
  classes <- vapply(rows, function(r) class(r[[1]])[1], "")
  expect_setequal(unique(classes), c("sb_wbb", "sb_blasso", "sb_sgld_sa", "sb_trend_filter_wbb", "sb_sgmcmc_density",
                                     "sb_wbb_loss", "sb_wbb_path", "sb_weighted_lasso", "sb_cv", "sb_trend_filter",
                                     "sb_generalized_lasso", "sb_cv_trend_filter", "sb_tf_sure",
                                     "sb_trend_filter_glm_wbb", "sb_trend_filter_glm"))
})

test_that("the model generics of fits without draws give the fit at the data", {
  d <- mc_data
  tf <- trend_filter(d$ty, d$tx, k = 1, lambda = c(2, 1))
  expect_equal(fitted(tf), unname(tf$beta))
  expect_equal(residuals(tf), d$ty - unname(tf$beta))
  expect_identical(nobs(tf), 40L)
  one <- trend_filter(d$ty, d$tx, k = 1, lambda = 2)
  expect_equal(fitted(one), unname(one$beta[, 1]))
  gl <- suppressWarnings(generalized_lasso(d$ty, diff(diag(40)), nlambda = 4))
  expect_identical(coef(gl), fitted(gl))
  expect_equal(residuals(gl), d$ty - unname(gl$beta))
  cv <- cv_weighted_lasso(d$x, d$y, nfolds = 3, seed = 1)
  expect_equal(fitted(cv, s = "lambda.min"), predict(cv, d$x, s = "lambda.min"))
  expect_equal(residuals(cv), d$y - predict(cv, d$x))
  path <- wbb(d$x, d$y, lambda = c(5, 1), draws = 10, seed = 1, quiet = TRUE, threads = 1)
  cf <- coef(path)
  expect_identical(dim(cf), c(4L, 2L))
  expect_equal(cf[, 2], coef(path$fits[[2]]))
  expect_identical(nobs(path), 40L)
  expect_error(predict(path, d$x[1:2, ]), "fit\\$fits", class = "scalebayes_error_not_applicable")
  expect_error(log_lik(tf), "trend_filter_wbb", class = "scalebayes_error_not_applicable")
  expect_error(fitted(cv_trend_filter(d$ty, d$tx, k = 1, nfolds = 3, nlambda = 4)), "\\$fit",
               class = "scalebayes_error_not_applicable")
  expect_error(fitted(tf, bogus = 1), "bogus", class = "scalebayes_error_dots")
})

test_that("network fits and VAEs answer every generic with a value or a not-applicable error", {
  skip_if_no_torch()
  d <- mc_data
  nx <- d$x[1:3, ]
  yc <- factor(ifelse(d$y > 0, "u", "v"))
  # a network fit keeps its training data: every data generic answers there (a path of fits, one per lambda, does
  # not: pick one of its fits)
  path_na <- c("fitted", "residuals", "log_lik", "posterior_predict", "posterior_epred", "posterior_linpred",
               "predictive_interval")
  nn_na <- character()
  rows <- list(
    wbb_nn = list(wbb_nn(d$x, yc, model = nn_mlp(3), draws = 3, epochs = 2, seed = 1, quiet = TRUE, threads = 1),
                  nx, nn_na),
    sgld_sa_nn = list(suppressWarnings(sgld_sa(d$x, d$y, model = nn_mlp(3), iterations = 40, burnin = 20,
                                               seed = 2, quiet = TRUE, threads = 1)), nx, nn_na),
    bbb = list(bbb(d$x, yc, model = nn_mlp(3), draws = 3, epochs = 2, seed = 3, quiet = TRUE, threads = 1), nx,
               nn_na),
    # sparse_vi() over several lambda values: a path of fits, one per lambda (pick one for a posterior's generics)
    sparse_vi_grid = list(sparse_vi(d$x, yc, model = nn_mlp(3), log_lambda = c(-2, -6), draws = 3, epochs = 2,
                                    seed = 3, quiet = TRUE, threads = 1), nx, union(path_na, mc_posterior)),
    # a VAE has no response and no parameter posterior; its draws (and posterior intervals) are of latent codes
    vae = list(vae(matrix(runif(40 * 4), 40, 4), latent = 1, encoder = nn_mlp(4), decoder = nn_mlp(4), epochs = 1,
                   seed = 1, quiet = TRUE), matrix(runif(8), 2, 4),
               c("coef", "fitted", "residuals", "vcov", "log_lik", "posterior_predict", "posterior_epred",
                 "posterior_linpred", "predictive_interval"))
  )
  for (nm in names(rows)) mc_check(rows[[nm]][[1]], rows[[nm]][[2]], rows[[nm]][[3]], nm)
  # with new data the data generics of a network apply
  f <- rows$bbb[[1]]
  expect_identical(dim(log_lik(f, newdata = nx, newy = yc[1:3])), c(3L, 3L))
  expect_identical(dim(posterior_epred(f, newdata = nx)), c(3L, 3L))
})
