# summary() of the fits without posterior draws and of WBB lambda paths: one row per lambda, holding the fit's
# own numbers (not recomputed differently), and a print method.
test_that("summary() of point fits and lambda paths tabulates the fit per lambda", {
  data(diabetes, package = "scalebayes", envir = environment())
  y <- diabetes$y[1:100]
  cv <- cv_weighted_lasso(diabetes$x, diabetes$y, nfolds = 5, seed = 1)
  s <- summary(cv)
  expect_s3_class(s, "summary_sb_table")
  expect_equal(s$table$lambda, cv$lambda)
  expect_equal(s$table$cv_error, cv$cvm)
  expect_equal(s$table$nonzero, unname(colSums(coef(cv$fit)[-1, ] != 0)))
  expect_match(s$table$chosen[cv$index_min], "min")
  expect_match(s$table$chosen[cv$index_1se], "1se")
  expect_equal(unname(s$extra[[1]][, "lambda_min"]), unname(drop(coef(cv, s = "lambda.min"))))

  tf <- trend_filter(y, k = 1, lambda = c(10, 100))
  s <- summary(tf)
  expect_equal(s$table$df, tf$df)
  expect_equal(s$table$rss, unname(colSums((y - tf$beta)^2)))
  expect_true(all(s$table$converged))

  D <- diff(diag(20))
  gl <- generalized_lasso(y[1:20], D = D, lambda = c(1, 10))
  s <- summary(gl)
  expect_equal(s$table$rss, unname(colSums((y[1:20] - gl$beta)^2)))
  expect_equal(s$table$objective, gl$primal)

  ctf <- cv_trend_filter(y, k = 1, nlambda = 8)
  s <- summary(ctf)
  expect_equal(s$table$cv_error, ctf$cv)
  expect_match(s$table$chosen[ctf$index_min], "min")
  st <- sure_trend_filter(y, k = 1, nlambda = 8)
  s <- summary(st)
  expect_equal(s$table$sure, st$sure)
  expect_identical(s$table$chosen[st$index_min], "min")

  wp <- wbb(diabetes$x, diabetes$y, lambda = c(10, 100), draws = 20, seed = 1)
  s <- summary(wp)
  expect_equal(unname(s$extra[["posterior means"]]), unname(coef(wp)))
  expect_equal(unname(s$extra[["posterior sds"]][, 2]), unname(apply(wp$fits[[2]]$draws, 2, sd)))
  for (f in list(cv, tf, gl, ctf, st, wp)) {
    out <- capture.output(print(summary(f)))
    expect_gt(length(out), 2)
  }
  expect_error(summary(tf, foo = 1), class = "scalebayes_error_dots")
})
