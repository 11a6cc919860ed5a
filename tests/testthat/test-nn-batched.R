# Batched WBB draws of networks (nn/batched.hpp, wbb_nn(batch = )): a draw does not depend on how the draws
# are grouped into batches or threads (bitwise on this build: every member's matrix products and reductions
# are its own), and equals the unbatched draw of the same seed up to floating-point rounding (float64: 1e-12;
# float32 after a short run: 1e-5).

batched_data <- function(n = 120, p = 5, seed = 2) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  list(x = x, cls = factor(sample(letters[1:3], n, TRUE)), bin = as.numeric(x[, 1] + rnorm(n) > 0),
       num = drop(x %*% seq_len(p)) / 3 + rnorm(n))
}
batched_fit <- function(d, y, batch, threads = 1L, float64 = FALSE, activation = "relu", ...) {
  wbb_nn(d$x, y, model = nn_mlp(c(8, 6), activation = activation), draws = 7L, epochs = 4L, batch_size = 32L,
         seed = 3L, threads = threads, quiet = TRUE, batch = batch, newx = d$x[1:4, ],
         control = nn_control(float64 = float64, ...))
}
# same_draws(): helper-nn-batched.R

test_that("batched draws do not depend on the batch size or the threads (bitwise)", {
  skip_if_no_torch()
  d <- batched_data()
  for (y in list(d$cls, d$bin, d$num)) {
    ref <- batched_fit(d, y, batch = 1L)
    for (b in list(3L, TRUE)) same_draws(ref, batched_fit(d, y, batch = b))
    same_draws(ref, batched_fit(d, y, batch = 3L, threads = 2L))
    same_draws(ref, batched_fit(d, y, batch = TRUE, threads = 2L))
  }
})

test_that("batched draws split into chunks are the draws of one run", {
  skip_if_no_torch()
  d <- batched_data()
  f <- function(chunks) {
    wbb_nn(d$x, d$cls, model = nn_mlp(c(8, 6)), draws = 7L, epochs = 3L, seed = 3L, quiet = TRUE, batch = TRUE,
           chunks = chunks, newx = d$x[1:4, ])
  }
  same_draws(f(NULL), f(3L))
})

test_that("a member stopped early by grad_tol stops alone, as unbatched", {
  skip_if_no_torch()
  d <- batched_data()
  f <- function(batch) {
    wbb_nn(d$x, d$num, model = nn_mlp(3), draws = 6L, epochs = 40L, seed = 2L, quiet = TRUE, batch = batch,
           control = nn_control(float64 = TRUE, lr = 0.05, grad_tol = 0.05))
  }
  a <- f(FALSE)
  b <- f(TRUE)
  expect_true(length(unique(a$steps)) > 1L)  # some draws stopped before others
  same_draws(a, b, tol = 1e-10)
})

test_that("a batched draw equals the unbatched draw of the same seed (float64, every family and optimizer)", {
  skip_if_no_torch()
  d <- batched_data()
  for (y in list(d$cls, d$bin, d$num)) {
    for (opt in c("adam", "sgd", "rmsprop")) {
      a <- batched_fit(d, y, batch = FALSE, float64 = TRUE, optimizer = opt, lr = 0.01)
      b <- batched_fit(d, y, batch = 3L, float64 = TRUE, optimizer = opt, lr = 0.01)
      same_draws(a, b, tol = 1e-12)
    }
  }
  # other activations, weight modes, prior weights, data weights
  a <- batched_fit(d, d$num, batch = FALSE, float64 = TRUE, activation = "tanh", weight_mode = "shuffled")
  b <- batched_fit(d, d$num, batch = TRUE, float64 = TRUE, activation = "tanh", weight_mode = "shuffled")
  same_draws(a, b, tol = 1e-12)
  a <- batched_fit(d, d$cls, batch = FALSE, float64 = TRUE, activation = "sigmoid", weight_mode = "batch_mean",
                   weight_dist = "multinomial", normalize_weights = TRUE)
  b <- batched_fit(d, d$cls, batch = 2L, float64 = TRUE, activation = "sigmoid", weight_mode = "batch_mean",
                   weight_dist = "multinomial", normalize_weights = TRUE)
  same_draws(a, b, tol = 1e-12)
  f <- function(batch) {
    wbb_nn(d$x, d$num, model = nn_mlp(c(4, 3)), draws = 3L, epochs = 3L, seed = 5L, quiet = TRUE, batch = batch,
           prior_weights = "separate", lambda = 0.5, control = nn_control(float64 = TRUE, grad_tol = 1e-1))
  }
  same_draws(f(FALSE), f(TRUE), tol = 1e-12)
})

test_that("a batched float32 draw equals the unbatched one within float tolerance after a short run", {
  skip_if_no_torch()
  d <- batched_data()
  for (y in list(d$cls, d$num)) {
    a <- batched_fit(d, y, batch = FALSE)
    b <- batched_fit(d, y, batch = TRUE)
    expect_lt(max(abs(as.matrix(a) - as.matrix(b))), 1e-5)
    expect_lt(max(abs(a$pred - b$pred)), 1e-5)
    expect_equal(a$objective, b$objective, tolerance = 1e-5)
  }
})

test_that("a diverged member stops alone; the others are unchanged", {
  skip_if_no_torch()
  d <- batched_data()
  f <- function(batch) {
    suppressWarnings(wbb_nn(d$x, d$num * 1e3, model = nn_mlp(c(8, 6)), draws = 6L, epochs = 6L, seed = 1L,
                            quiet = TRUE, batch = batch, standardize = FALSE,
                            control = nn_control(float64 = TRUE, optimizer = "sgd", lr = 0.02, momentum = 0)))
  }
  a <- f(FALSE)
  b <- f(TRUE)
  expect_identical(a$status, b$status)
  expect_true(any(a$status == "diverged") && any(a$status == "done"))
  expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-12)  # the draws that did not diverge
  expect_identical(a$steps, b$steps)
  expect_identical(nrow(a$history), nrow(b$history))
})

test_that("batch = is checked, and networks without a batched form fall back or say why", {
  skip_if_no_torch()
  d <- batched_data()
  f <- function(batch, model = nn_mlp(4)) {
    wbb_nn(d$x, d$num, model = model, draws = 2L, epochs = 1L, seed = 1L, quiet = TRUE, batch = batch)
  }
  expect_error(f("yes"), class = "scalebayes_error")
  expect_error(f(0L), class = "scalebayes_error")
  expect_error(f(NA), class = "scalebayes_error")
  expect_error(f(TRUE, nn_mlp(4, dropout = 0.2)), "cannot be trained batched", class = "scalebayes_error")
  expect_s3_class(f("auto", nn_mlp(4, dropout = 0.2)), "sb_wbb_nn")  # auto: one network per thread
  # the fit records what was asked (batch) and what ran (batched, batch_group)
  fd <- f("auto", nn_mlp(4, dropout = 0.2))
  expect_identical(fd$settings$batch, "auto")
  expect_false(fd$settings$batched)
  expect_true(f(TRUE)$settings$batched)
  fa <- f("auto")  # a network with a batched form: batched
  expect_true(fa$settings$batched)
  expect_identical(fa$settings$batch_group, NA_integer_)
  expect_false(f(FALSE)$settings$batched)
  same_draws(f(FALSE), f(1L), tol = 1e-6)
  fit <- wbb(d$x, d$num, model = nn_mlp(4), draws = 2L, epochs = 1L, seed = 1L, quiet = TRUE, batch = 2L)
  expect_identical(fit$settings$batch, 2L)
  expect_identical(fit$settings$batch_group, 2L)
})

test_that("the predictions and certificates of a wider network do not depend on the group either (bitwise)", {
  # inputs shared by every member (predictions on newx, the final certificate) go through one product per
  # member: a broadcast product over the group chose its kernel by the group size (6e-8 apart in float32 for
  # groups of 20 and 10 of this network before)
  skip_if_no_torch()
  set.seed(4)
  x <- matrix(rnorm(200 * 13), 200, 13)
  y <- drop(x %*% rnorm(13)) + rnorm(200)
  f <- function(batch, threads = 1L) {
    wbb_nn(x, y, model = nn_mlp(c(50, 50)), draws = 20L, epochs = 2L, seed = 1L, threads = threads, quiet = TRUE,
           batch = batch, newx = x[1:50, ])
  }
  ref <- f(TRUE)
  same_draws(ref, f(TRUE, threads = 2L))
  same_draws(ref, f(5L))
})

test_that("batched predictions apply the per-network links and do not depend on the group (bitwise)", {
  # one link for every batched prediction (nn/predict.hpp member_response(): gaussian identity, binomial the
  # sigmoid through sigmoid_any_group(), multinomial the softmax over the classes): the predictions stored by
  # batched draws equal those of the per-network engine from the same draws' parameters (predict(type =
  # "draws") at the same inputs), and 37 inputs x 7 members leave elements in the tail of torch's vectorized
  # sigmoid, which must not make a member's predictions depend on its group
  skip_if_no_torch()
  d <- batched_data()
  nx <- d$x[1:37, ]
  f <- function(y, batch) {
    wbb_nn(d$x, y, model = nn_mlp(c(8, 6)), draws = 7L, epochs = 2L, batch_size = 32L, seed = 3L, quiet = TRUE,
           batch = batch, newx = nx, control = nn_control(float64 = TRUE))
  }
  for (y in list(d$bin, d$cls, d$num)) {
    ref <- f(y, 1L)
    expect_true(ref$settings$batched)
    expect_equal(ref$pred, predict(ref, newx = nx, type = "draws"), tolerance = 1e-12, ignore_attr = TRUE)
    same_draws(ref, f(y, 3L))
    same_draws(ref, f(y, TRUE))
  }
})

test_that("a fit says why it trained one network at a time", {
  skip_if_no_torch()
  d <- batched_data()
  f <- function(batch, model = nn_mlp(4)) {
    wbb_nn(d$x, d$num, model = model, draws = 2L, epochs = 1L, seed = 1L, quiet = TRUE, batch = batch)
  }
  expect_match(f("auto", nn_mlp(4, dropout = 0.2))$settings$unbatched, "dropout layer draws random numbers")
  expect_match(f("auto", nn_mlp(4, batchnorm = TRUE))$settings$unbatched,
               "batchnorm1d layer has no batched form \\(batched: linear, ")
  expect_identical(f(FALSE)$settings$unbatched, "batch = FALSE")
  expect_identical(f("auto")$settings$unbatched, NA_character_)
  expect_identical(f(TRUE)$settings$unbatched, NA_character_)
})
