# Issue 61, item 7 (the methods a user of rstanarm / glm expects): posterior's as_draws() and summarise_draws(),
# as.data.frame(), logLik() (against lm() and glm() at lambda = 0, where the WBB point estimate is the MLE),
# wbb(y ~ x - 1) without an "(Intercept)" column, family objects, blasso(family = ), trend_filter_wbb() of a
# formula on unsorted rows.

i61 <- local({
  set.seed(61)
  n <- 60
  x <- matrix(rnorm(n * 3), n, 3, dimnames = list(NULL, paste0("x", 1:3)))
  y <- drop(1 + x %*% c(1, 0, -0.5)) + rnorm(n)
  yb <- rbinom(n, 1, stats::plogis(0.3 + x[, 1]))
  list(x = x, y = y, yb = yb, d = data.frame(y = y, yb = yb, x))
})

test_that("posterior::as_draws() and summarise_draws() work on a fit (issue 61)", {
  f <- wbb(i61$x, i61$y, lambda = 2, draws = 40, seed = 1, quiet = TRUE, threads = 1)
  a <- posterior::as_draws(f)
  expect_s3_class(a, "draws_df")
  expect_equal(a, as_draws_df(f))
  s <- suppressWarnings(posterior::summarise_draws(f))  # (posterior's ESS-capping note on 40 draws)
  expect_s3_class(s, "draws_summary")
  expect_equal(s$variable, colnames(as.matrix(f)))
  expect_equal(as.numeric(s$mean), unname(colMeans(as.matrix(f))))
  s2 <- posterior::summarise_draws(f, "mean", "sd")
  expect_equal(names(s2), c("variable", "mean", "sd"))
  expect_equal(as.numeric(s2$sd), unname(apply(as.matrix(f), 2, stats::sd)))
  # a point fit: the classed error of its as_draws_df(), not posterior's "same length"
  p <- weighted_lasso(i61$x, i61$y, lambda = 2)
  expect_error(posterior::summarise_draws(p), class = "scalebayes_error_not_applicable")
  expect_error(posterior::as_draws(p), class = "scalebayes_error_not_applicable")
})

test_that("as.data.frame() of a fit is its draws, one row per draw (issue 61)", {
  f <- blasso(i61$x, i61$y, lambda = 1, chains = 2, iterations = 20, burnin = 5, seed = 2, quiet = TRUE, threads = 1)
  df <- as.data.frame(f)
  expect_s3_class(df, "data.frame")
  expect_equal(names(df), colnames(as.matrix(f)))
  expect_equal(unname(as.matrix(df)), unname(as.matrix(f)))
  expect_equal(names(as.data.frame(f, pars = "x2")), "x2")
  expect_error(as.data.frame(f, foo = 1), class = "scalebayes_error_dots")
})

test_that("logLik() of a WBB fit at lambda = 0 is that of lm() / glm() (issue 61)", {
  d <- i61$d
  # gaussian: the unweighted optimum at lambda = 0 is the least-squares fit; logLik.lm's sigma is the ML one
  f <- wbb(y ~ x1 + x2 + x3, data = d, lambda = 0, draws = 20, seed = 1, quiet = TRUE, threads = 1,
           control = wbb_control(tol = 1e-12))
  ref <- stats::logLik(stats::lm(y ~ x1 + x2 + x3, data = d))
  ll <- stats::logLik(f)
  expect_s3_class(ll, "logLik")
  # coefficients agree to the solver's tolerance; the log-likelihood is flat at the optimum (second order)
  expect_equal(as.numeric(ll), as.numeric(ref), tolerance = 1e-8)
  expect_equal(attr(ll, "df"), attr(ref, "df"))
  expect_equal(attr(ll, "nobs"), 60L)
  expect_equal(stats::AIC(f), stats::AIC(stats::lm(y ~ x1 + x2 + x3, data = d)), tolerance = 1e-8)
  # binomial
  fb <- wbb(yb ~ x1 + x2, data = d, family = "binomial", lambda = 0, draws = 20, seed = 1, quiet = TRUE,
            threads = 1, control = wbb_control(tol = 1e-12))
  rb <- stats::logLik(stats::glm(yb ~ x1 + x2, data = d, family = binomial()))
  expect_equal(as.numeric(stats::logLik(fb)), as.numeric(rb), tolerance = 1e-6)
  expect_equal(attr(stats::logLik(fb), "df"), attr(rb, "df"))
  # a lasso: df counts the non-zero coefficients of the point estimate
  fl <- wbb(i61$x, i61$y, lambda = 20, draws = 20, seed = 1, quiet = TRUE, threads = 1)
  expect_equal(attr(stats::logLik(fl), "df"), sum(fl$estimate != 0) + 1L)
  # a fit where it is not defined: classed, pointing to log_lik()
  tf <- trend_filter_wbb(sin(1:40 / 5), k = 1, lambda = 1, draws = 10, seed = 1, quiet = TRUE)
  expect_error(stats::logLik(tf), class = "scalebayes_error_not_applicable", regexp = "log_lik")
})

test_that("wbb(y ~ x - 1) has no (Intercept) column (issue 61)", {
  d <- i61$d
  f <- wbb(y ~ x1 + x2 - 1, data = d, lambda = 1, draws = 30, seed = 1, quiet = TRUE, threads = 1)
  expect_equal(colnames(as.matrix(f)), c("x1", "x2"))
  expect_equal(names(coef(f)), c("x1", "x2"))
  # the same draws as the matrix interface without an intercept
  g <- wbb(i61$x[, 1:2], i61$y, lambda = 1, draws = 30, seed = 1, quiet = TRUE, threads = 1,
           control = wbb_control(intercept = FALSE))
  expect_equal(unname(as.matrix(f)), unname(as.matrix(g)))
  # predictions: slopes only
  p <- predict(f, newdata = d[1:3, ])
  expect_equal(p$fit, unname(drop(as.matrix(d[1:3, c("x1", "x2")]) %*% colMeans(as.matrix(f)))), tolerance = 1e-12)
  expect_equal(dim(log_lik(f)), c(30L, 60L))
})

test_that("wbb() takes a family object; another link is a classed error (issue 61)", {
  d <- i61$d
  a <- wbb(yb ~ x1 + x2, data = d, family = binomial(), lambda = 1, draws = 20, seed = 1, quiet = TRUE, threads = 1)
  b <- wbb(yb ~ x1 + x2, data = d, family = "binomial", lambda = 1, draws = 20, seed = 1, quiet = TRUE, threads = 1)
  expect_identical(a$draws, b$draws)
  # a two-level factor response with a family object (the message used to say add family = "binomial")
  d$yf <- factor(d$yb, labels = c("no", "yes"))
  a2 <- wbb(yf ~ x1 + x2, data = d, family = binomial(), lambda = 1, draws = 20, seed = 1, quiet = TRUE, threads = 1)
  expect_identical(a2$draws, b$draws)
  expect_error(wbb(yb ~ x1, data = d, family = binomial(link = "probit"), lambda = 1, draws = 5, quiet = TRUE),
               class = "scalebayes_error_input", regexp = "canonical")
})

test_that("blasso(family = ) is a classed error naming wbb() (issue 61)", {
  expect_error(blasso(i61$x, i61$yb, family = "binomial"), class = "scalebayes_error_input", regexp = "wbb")
  expect_error(blasso(yb ~ x1, data = i61$d, family = binomial()), class = "scalebayes_error_input")
  f <- blasso(i61$x, i61$y, family = "gaussian", lambda = 1, chains = 1, iterations = 10, burnin = 5, seed = 1,
              quiet = TRUE, threads = 1)
  expect_s3_class(f, "sb_blasso")
})

test_that("trend_filter_wbb() of a formula sorts the rows itself (issue 61)", {
  set.seed(3)
  x <- sort(runif(50, 0, 10))
  y <- sin(x) + rnorm(50, sd = 0.3)
  o <- sample(50)
  d <- data.frame(y = y[o], x = x[o])
  f <- trend_filter_wbb(y ~ x, data = d, k = 1, lambda = 2, draws = 20, seed = 1, quiet = TRUE)
  g <- trend_filter_wbb(y, x, k = 1, lambda = 2, draws = 20, seed = 1, quiet = TRUE)
  expect_equal(f$draws, g$draws)
  expect_equal(f$x, x)
  expect_equal(d$x[f$row_order], x)
  # the matrix interface still asks for sorted data
  expect_error(trend_filter_wbb(y[o], x[o], k = 1, lambda = 2, draws = 5), class = "scalebayes_error_input")
  # ties: the fix does not name a `weights` argument trend_filter_wbb() does not have
  e <- tryCatch(trend_filter_wbb(c(1, 2, 3, 4, 5, 6), c(1, 2, 2, 3, 4, 5), k = 1, lambda = 1, draws = 5),
                error = identity)
  expect_s3_class(e, "scalebayes_error_input")
  expect_no_match(conditionMessage(e), "pass their counts as")
  expect_match(conditionMessage(e), "aggregate")
})

test_that("a VAE: ndraws() agrees with as_draws_df(), predict() names newdata (issue 61; fixed on main before)", {
  skip_if_no_torch()
  set.seed(1)
  x <- matrix(runif(40 * 6), 40, 6)
  fit <- vae(x, latent = 2, encoder = nn_mlp(8), decoder = nn_mlp(8), epochs = 2, seed = 2, quiet = TRUE, threads = 1)
  expect_equal(ndraws(fit), posterior::ndraws(as_draws_df(fit)))
  e <- expect_error(predict(fit, x[, 1:5]), class = "scalebayes_error_input")
  expect_equal(e$arg, "newdata")
  expect_error(predict(fit, x = x), class = "scalebayes_error_dots")
})
