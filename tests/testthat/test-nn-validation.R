# nn_control(validation = , patience = ): held-out rows, the per-epoch held-out loss, early stopping with the best
# epoch's weights (R/nn_control.R; engine: nn/train.hpp train_loop's validation hook).

val_data <- function(n = 120, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * 3), n, 3)
  list(x = x, y = x[, 1] + sin(2 * x[, 2]) + rnorm(n, sd = 0.5))
}

test_that("bad validation and patience values are classed errors naming the argument", {
  for (v in list(0, 1, 1.5, -0.2, NA_real_, "a", c(1, 1), c(0, 3), c(2.5, 4))) {
    e <- expect_error(nn_control(validation = v), class = "scalebayes_error_input")
    expect_identical(e$arg, "validation")
  }
  for (p in list(0, -1, 2.5, "a")) {
    e <- expect_error(nn_control(validation = 0.2, patience = p), class = "scalebayes_error_input")
    expect_identical(e$arg, "patience")
  }
  e <- expect_error(nn_control(patience = 5), class = "scalebayes_error_input")  # nothing to watch
  expect_identical(e$arg, "patience")
  e <- expect_error(nn_control(validation = 0.2, history = FALSE), class = "scalebayes_error_input")
  expect_identical(e$arg, "history")
  expect_null(nn_control()$validation)
  expect_null(nn_control()$patience)
})

test_that("the split is reproducible from the seed and row numbers out of range are an error", {
  s1 <- scalebayes:::nn_validation_split(nn_control(validation = 0.25), 100, 7, NULL)
  s2 <- scalebayes:::nn_validation_split(nn_control(validation = 0.25), 100, 7, NULL)
  s3 <- scalebayes:::nn_validation_split(nn_control(validation = 0.25), 100, 8, NULL)
  expect_identical(s1, s2)
  expect_false(identical(s1$hold, s3$hold))
  expect_length(s1$hold, 25L)
  expect_identical(sort(c(s1$hold, s1$keep)), 1:100)
  skip_if_no_torch()
  d <- val_data()
  e <- expect_error(wbb_nn(d$x, d$y, model = nn_mlp(4), draws = 1, epochs = 1, seed = 1, quiet = TRUE,
                           control = nn_control(validation = c(5, 500))), class = "scalebayes_error_input")
  expect_identical(e$arg, "validation")
})

test_that("wbb_nn(): held-out rows are not trained on, and their loss is recorded per epoch", {
  skip_if_no_torch()
  d <- val_data()
  hold <- c(3, 10, 20, 33, 41, 57, 60, 77, 90, 101)
  fv <- NULL
  expect_message(fv <- wbb_nn(d$x, d$y, model = nn_mlp(6), draws = 3, epochs = 8, seed = 5, quiet = TRUE,
                              control = nn_control(validation = hold)), class = "scalebayes_message_validation")
  # the same draws as a fit on the kept rows alone: the held-out rows never reach a gradient or the scaling
  f0 <- wbb_nn(d$x[-hold, ], d$y[-hold], model = nn_mlp(6), draws = 3, epochs = 8, seed = 5, quiet = TRUE, batch = FALSE)
  expect_identical(as.matrix(fv), as.matrix(f0))
  expect_identical(fv$history$loss, f0$history$loss)
  expect_identical(fv$validation$rows, as.integer(hold))
  expect_identical(nrow(fv$history), 3L * 8L)
  # the recorded held-out loss is the mean squared error / 2 of each draw's final network on the training scale
  dr <- scalebayes:::nn_predict_draws(fv, structure(d$x[hold, ], sb_arg = "x"), warn_scale = FALSE)
  sc <- fv$scaling$y_scale
  mine <- rowMeans(sweep(dr, 2L, d$y[hold])^2) / 2 / sc^2
  last <- fv$history$val_loss[fv$history$epoch == 8]
  expect_equal(last, mine, tolerance = 1e-4)  # float32 network: relative rounding of about 1e-6 per layer
  # batched and unbatched agree: validation trains one network per thread whatever `batch` says
  fb <- suppressMessages(wbb_nn(d$x, d$y, model = nn_mlp(6), draws = 3, epochs = 8, seed = 5, quiet = TRUE, batch = TRUE,
                                control = nn_control(validation = hold)))
  expect_identical(as.matrix(fb), as.matrix(fv))
  expect_output(print(fv), "validation: 10 held-out rows")
  # dropout and batch norm: the held-out pass (eval mode) neither draws masks nor moves the running statistics
  for (m in list(nn_mlp(6, dropout = 0.3), nn_mlp(6, batchnorm = TRUE))) {
    a <- suppressMessages(wbb_nn(d$x, d$y, model = m, draws = 2, epochs = 4, seed = 5, quiet = TRUE,
                                 control = nn_control(validation = hold)))
    b <- wbb_nn(d$x[-hold, ], d$y[-hold], model = m, draws = 2, epochs = 4, seed = 5, quiet = TRUE, batch = FALSE)
    expect_identical(as.matrix(a), as.matrix(b))
    expect_identical(a$buffers, b$buffers)
  }
})

test_that("patience stops an overfitting network early and restores the best epoch's weights", {
  skip_if_no_torch()
  d <- val_data(80, seed = 2)
  ctl <- nn_control(validation = 0.4, patience = 5, lr = 0.02, float64 = TRUE)
  f <- wbb_nn(d$x, d$y, model = nn_mlp(c(64, 64)), draws = 2, epochs = 400, lambda = 0, seed = 3, quiet = TRUE,
              batch = FALSE, control = ctl)
  ran <- tapply(f$history$epoch, f$history$draw, max)
  expect_true(all(ran < 400))                                  # stopped early
  expect_equal(as.numeric(ran), f$validation$best_epoch + 5)   # exactly patience epochs past the best
  best <- f$history$val_loss[f$history$epoch == rep(f$validation$best_epoch, ran)]
  expect_equal(best, as.numeric(tapply(f$history$val_loss, f$history$draw, min)))
  # the returned draws are the best epoch's networks (float64: agreement to rounding)
  hold <- f$validation$rows
  dr <- scalebayes:::nn_predict_draws(f, structure(d$x[hold, ], sb_arg = "x"), warn_scale = FALSE)
  mine <- rowMeans(sweep(dr, 2L, d$y[hold])^2) / 2 / f$scaling$y_scale^2
  expect_equal(mine, best, tolerance = 1e-10)
  expect_true(all(mine < f$history$val_loss[f$history$epoch == rep(ran, ran)]))  # not the last epoch's
})

test_that("bbb() and sparse_vi(): held-out rows are not trained on; patience restores the best q", {
  skip_if_no_torch()
  d <- val_data()
  hold <- seq(4, 120, by = 6)
  bv <- bbb(d$x, d$y, model = nn_mlp(6), draws = 5, epochs = 6, seed = 2, quiet = TRUE,
            control = nn_control(validation = hold))
  b0 <- bbb(d$x[-hold, ], d$y[-hold], model = nn_mlp(6), draws = 5, epochs = 6, seed = 2, quiet = TRUE)
  expect_identical(as.matrix(bv), as.matrix(b0))
  expect_true(all(is.finite(bv$training$val_loss)))
  sv <- sparse_vi(d$x, d$y, model = nn_mlp(6), draws = 5, epochs = 6, seed = 2, quiet = TRUE,
                  control = nn_control(lr = 5e-3, validation = hold))
  s0 <- sparse_vi(d$x[-hold, ], d$y[-hold], model = nn_mlp(6), draws = 5, epochs = 6, seed = 2, quiet = TRUE)
  expect_identical(as.matrix(sv), as.matrix(s0))
  bp <- bbb(d$x, d$y, model = nn_mlp(c(64, 64)), draws = 5, epochs = 300, seed = 2, quiet = TRUE,
            control = nn_control(validation = 0.4, patience = 3, lr = 0.05, float64 = TRUE))
  ran <- max(bp$training$epoch)
  expect_lt(ran, 300)
  expect_identical(ran, bp$validation$best_epoch + 3)
  expect_identical(min(bp$training$val_loss), bp$training$val_loss[bp$validation$best_epoch])
})

test_that("vae() refuses a validation control instead of ignoring it", {
  skip_if_no_torch()
  x <- matrix(runif(40 * 4), 40, 4)
  e <- expect_error(vae(x, latent = 2, epochs = 1, seed = 1, quiet = TRUE, control = nn_control(validation = 0.2)),
                    class = "scalebayes_error_input")
  expect_identical(e$arg, "control")
})

test_that("validation = list(x = , y = ): separate held-out data, training on every row", {
  skip_if_no_torch()
  d <- val_data()
  v <- val_data(40, seed = 9)
  f <- suppressMessages(wbb_nn(d$x, d$y, model = nn_mlp(6), draws = 2, epochs = 5, seed = 5, quiet = TRUE,
                               control = nn_control(validation = list(x = v$x, y = v$y))))
  f0 <- wbb_nn(d$x, d$y, model = nn_mlp(6), draws = 2, epochs = 5, seed = 5, quiet = TRUE, batch = FALSE)
  expect_identical(as.matrix(f), as.matrix(f0))
  dr <- scalebayes:::nn_predict_draws(f, structure(v$x, sb_arg = "x"), warn_scale = FALSE)
  mine <- rowMeans(sweep(dr, 2L, v$y)^2) / 2 / f$scaling$y_scale^2
  expect_equal(f$history$val_loss[f$history$epoch == 5], mine, tolerance = 1e-4)
  expect_output(print(f), "validation: 40 held-out rows")
  e <- expect_error(nn_control(validation = list(x = v$x)), class = "scalebayes_error_input")
  expect_identical(e$arg, "validation")
  e <- expect_error(nn_control(validation = data.frame(a = 1:3)[0, , drop = FALSE]), class = "scalebayes_error_input")
  expect_identical(e$arg, "validation")
  # a data frame needs a formula fit
  e <- expect_error(suppressMessages(wbb_nn(d$x, d$y, model = nn_mlp(6), draws = 1, epochs = 1, seed = 5, quiet = TRUE,
                                            control = nn_control(validation = data.frame(a = 1:3)))),
                    class = "scalebayes_error_input")
  expect_identical(e$arg, "validation")
  e <- expect_error(suppressMessages(wbb_nn(d$x, d$y, model = nn_mlp(6), draws = 1, epochs = 1, seed = 5, quiet = TRUE,
                                            control = nn_control(validation = list(x = v$x[, 1:2], y = v$y)))),
                    class = "scalebayes_error_input")
  expect_identical(e$arg, "validation")
})

test_that("validation = <data frame> with a formula: the fit's formula makes the held-out inputs and response", {
  skip_if_no_torch()
  d <- val_data()
  v <- val_data(40, seed = 9)
  dtr <- data.frame(y = d$y, a = d$x[, 1], b = d$x[, 2], g = factor(rep(c("u", "v"), 60)))
  dva <- data.frame(y = v$y, a = v$x[, 1], b = v$x[, 2], g = factor(rep(c("v", "u"), 20)))
  f <- suppressMessages(wbb_nn(y ~ a + b + g, data = dtr, model = nn_mlp(6), draws = 2, epochs = 5, seed = 5,
                               quiet = TRUE, control = nn_control(validation = dva)))
  # the same held-out loss as the inputs made by hand from the formula (dummy column of g) as list(x, y)
  xv <- cbind(a = dva$a, b = dva$b, gv = as.numeric(dva$g == "v"))
  f2 <- suppressMessages(wbb_nn(cbind(a = dtr$a, b = dtr$b, gv = as.numeric(dtr$g == "v")), dtr$y, model = nn_mlp(6),
                                draws = 2, epochs = 5, seed = 5, quiet = TRUE,
                                control = nn_control(validation = list(x = xv, y = dva$y))))
  expect_equal(f$history$val_loss, f2$history$val_loss, tolerance = 1e-6)
  expect_true(all(is.finite(f$history$val_loss)))
  expect_output(print(nn_control(validation = dva)), "data frame of 40 rows")
  # the response missing, a new level: classed errors naming validation
  e <- expect_error(suppressMessages(wbb_nn(y ~ a + b + g, data = dtr, model = nn_mlp(6), draws = 1, epochs = 1,
                                            quiet = TRUE, control = nn_control(validation = dva[, -1]))),
                    class = "scalebayes_error")
  expect_identical(e$arg, "validation")
  bad <- dva
  bad$g <- factor(rep(c("v", "w"), 20))
  e <- expect_error(suppressMessages(wbb_nn(y ~ a + b + g, data = dtr, model = nn_mlp(6), draws = 1, epochs = 1,
                                            quiet = TRUE, control = nn_control(validation = bad))),
                    class = "scalebayes_error")
  expect_identical(e$arg, "validation")
})
