# The network training loop (nn/train.hpp) over an objective: a test-only objective through the real loop
# (cpp_nn_train_check), RMSprop, the per-epoch history and the step counter of wbb_nn().

# The test objective of cpp_nn_train_check (src/torch_nn_test_hooks.cpp): f = x beta + b + c (c owned by the objective),
# G = sum (y - f)^2 / 2 + lambda / 2 (|beta|^2 + c^2). Its minimizer: c = 0 and the ridge fit with an
# unpenalized intercept.
train_check_data <- function(n = 60, p = 3, seed = 4) {
  set.seed(seed)
  x <- scale(matrix(rnorm(n * p), n, p))
  y <- drop(x %*% c(1, -0.5, 0.25)[seq_len(p)]) + 0.3 + rnorm(n)
  list(x = x, y = y, n = n, p = p)
}
ridge_offset_optimum <- function(x, y, lambda) {
  X1 <- cbind(1, x)
  b <- drop(solve(crossprod(X1) + diag(c(0, rep(lambda, ncol(x)))), crossprod(X1, y)))
  c(b[-1], b[1])  # the engine's order: weights, then the bias
}
# G / n and its gradient (weights, bias, offset) in R.
ridge_offset_grad <- function(theta, c0, x, y, lambda) {
  n <- nrow(x); p <- ncol(x)
  beta <- theta[seq_len(p)]; b <- theta[p + 1]
  r <- y - drop(x %*% beta) - b - c0
  list(value = (sum(r^2) / 2 + lambda / 2 * (sum(beta^2) + c0^2)) / n,
       grad = c(-drop(crossprod(x, r)) + lambda * beta, -sum(r), -sum(r) + lambda * c0) / n)
}
engine_ctl <- function(...) scalebayes:::nn_engine_control(nn_control(float64 = TRUE, ...), "cpu", FALSE)

test_that("a test-only objective trained by the real loop reaches its closed-form minimizer", {
  skip_if_no_torch()
  d <- train_check_data()
  lambda <- 3
  opt <- ridge_offset_optimum(d$x, d$y, lambda)
  theta0 <- c(0.2, -0.1, 0.4, -0.3)
  # full-batch SGD with momentum (a contraction on this quadratic): the objective's own offset is optimized too
  r <- cpp_nn_train_check(d$x, d$y, theta0, 1.5, lambda,
                                       engine_ctl(optimizer = "sgd", lr = 0.3, momentum = 0.5, batch_size = d$n,
                                                  max_steps = 2000), seed = 1)
  expect_equal(r$params, opt, tolerance = 1e-10)
  expect_lt(max(abs(r$params - opt)), 1e-6)
  expect_lt(abs(r$offset), 1e-6)
  expect_equal(r$steps, 2000)
  expect_equal(r$steps_counted, 2000)
  # the certificate is the objective's own: G at the end on the sum scale, gradient norm ~ 0
  expect_equal(r$objective, ridge_offset_grad(opt, 0, d$x, d$y, lambda)$value * d$n, tolerance = 1e-10)
  expect_lt(r$grad_norm, 1e-8)
  # minibatches of 7 (9 per epoch) on data a linear model fits exactly, no penalty: every minibatch gradient
  # vanishes at the fit, so minibatch SGD converges to it; grad_tol stops the run early
  ye <- drop(d$x %*% c(1, -0.5, 0.25)) + 0.3
  r2 <- cpp_nn_train_check(d$x, ye, theta0, 1.5, 0,
                                        engine_ctl(optimizer = "sgd", lr = 0.05, momentum = 0.5, batch_size = 7,
                                                   epochs = 3000, grad_tol = 1e-9), seed = 2)
  expect_true(r2$converged)
  expect_lt(r2$grad_norm, 1e-9)
  expect_lt(r2$epochs, 3000)
  expect_equal(r2$steps, r2$epochs * 9)
  expect_equal(r2$steps_counted, r2$steps)
  expect_equal(r2$steps_counted + r2$steps_skipped, 3000 * 9)  # the bar reaches its total
  expect_lt(max(abs(r2$params[1:3] - c(1, -0.5, 0.25))), 1e-6)
  expect_lt(abs(r2$params[4] + r2$offset - 0.3), 1e-6)  # b + c is identified, not b and c
})

test_that("RMSprop steps follow the hand formula and reach the same optimum", {
  skip_if_no_torch()
  d <- train_check_data(n = 30)
  lambda <- 2
  theta0 <- c(0.5, -0.2, 0.1, 0.05)
  c0 <- -0.7
  lr <- 0.01; alpha <- 0.9; eps <- 1e-8
  v <- 0
  th <- c(theta0, c0)
  for (k in 1:4) {
    g <- ridge_offset_grad(th[1:4], th[5], d$x, d$y, lambda)$grad
    v <- alpha * v + (1 - alpha) * g^2
    th <- th - lr * g / (sqrt(v) + eps)
    r <- cpp_nn_train_check(d$x, d$y, theta0, c0, lambda,
                                         engine_ctl(optimizer = "rmsprop", lr = lr, alpha = alpha, eps = eps,
                                                    batch_size = d$n, max_steps = k), seed = 1)
    expect_equal(c(r$params, r$offset), th, tolerance = 1e-12)
  }
  # the first step moves every coordinate by lr / sqrt(1 - alpha) against the sign of its gradient
  r1 <- cpp_nn_train_check(d$x, d$y, theta0, c0, lambda,
                                        engine_ctl(optimizer = "rmsprop", lr = lr, alpha = alpha, batch_size = d$n,
                                                   max_steps = 1), seed = 1)
  g0 <- ridge_offset_grad(theta0, c0, d$x, d$y, lambda)$grad
  expect_equal(c(r1$params, r1$offset) - c(theta0, c0), -sign(g0) * lr / sqrt(1 - alpha), tolerance = 1e-6)
  # with a decaying effective step (small lr), RMSprop ends near the closed form
  r <- cpp_nn_train_check(d$x, d$y, theta0, c0, lambda,
                                       engine_ctl(optimizer = "rmsprop", lr = 1e-4, batch_size = d$n,
                                                  max_steps = 20000), seed = 1)
  expect_lt(max(abs(c(r$params, r$offset) - c(ridge_offset_optimum(d$x, d$y, lambda), 0))), 1e-3)
})

test_that("the per-epoch history is the mean minibatch loss on the objective's scale", {
  skip_if_no_torch()
  d <- train_check_data()
  lambda <- 1
  theta0 <- c(1, 1, 1, 1)
  # full-batch gradient descent on a convex quadratic with a small step: one minibatch per epoch, so the
  # history is G / n before each step, computed here in R, and non-increasing
  r <- cpp_nn_train_check(d$x, d$y, theta0, 0.5, lambda,
                                       engine_ctl(optimizer = "sgd", lr = 0.1, momentum = 0, batch_size = d$n,
                                                  epochs = 25), seed = 1)
  expect_length(r$history_loss, 25)
  expect_true(all(is.nan(r$history_accuracy)))
  th <- c(theta0, 0.5)
  manual <- numeric(25)
  for (k in 1:25) {
    gg <- ridge_offset_grad(th[1:4], th[5], d$x, d$y, lambda)
    manual[k] <- gg$value
    th <- th - 0.1 * gg$grad
  }
  expect_equal(r$history_loss, manual, tolerance = 1e-12)
  expect_true(all(diff(r$history_loss) <= 0))
  # minibatches of 8 (8 per epoch, the last of 4): each epoch's value is the mean of its minibatch losses;
  # on average it decreases
  r2 <- cpp_nn_train_check(d$x, d$y, theta0, 0.5, lambda,
                                        engine_ctl(optimizer = "adam", lr = 0.05, batch_size = 8, epochs = 30),
                                        seed = 3)
  expect_length(r2$history_loss, 30)
  expect_equal(r2$steps_counted, 30 * 8)
  expect_lt(mean(tail(r2$history_loss, 10)), mean(head(r2$history_loss, 10)))
  expect_gt(min(r2$history_loss), ridge_offset_grad(ridge_offset_optimum(d$x, d$y, lambda), 0, d$x, d$y, lambda)$value * 0.5)
  # max_steps ending inside an epoch: the partial epoch is a row too
  r3 <- cpp_nn_train_check(d$x, d$y, theta0, 0.5, lambda,
                                        engine_ctl(optimizer = "sgd", lr = 0.01, batch_size = 8, max_steps = 20),
                                        seed = 3)
  expect_length(r3$history_loss, 3)  # 8 + 8 + 4 steps
  expect_equal(r3$epochs, 3)
})

test_that("wbb_nn() returns the history and counts every optimizer step", {
  skip_if_no_torch()
  set.seed(5)
  n <- 70
  x <- matrix(rnorm(n * 4), n, 4)
  y <- factor(ifelse(x[, 1] - x[, 2] + rnorm(n, sd = 0.5) > 0, "a", "b"))
  fit <- wbb_nn(x, y, model = nn_mlp(6), draws = 4, seed = 2, quiet = TRUE, threads = 2,
                control = nn_control(epochs = 5, batch_size = 16, lr = 0.01))
  h <- fit$history
  expect_s3_class(h, "data.frame")
  expect_equal(nrow(h), 4 * 5)
  expect_equal(h$draw, rep(1:4, each = 5))
  expect_equal(h$epoch, rep(1:5, 4))
  expect_true(all(h$accuracy >= 0 & h$accuracy <= 1))
  expect_true(all(is.finite(h$loss) & h$loss > 0))
  # per_epoch = ceiling(70 / 16) = 5 steps: draws x epochs x batches
  expect_equal(fit$steps_counted, 4 * 5 * 5)
  expect_equal(fit$steps_counted, sum(fit$steps))
  # chunks and threads do not change the history (a function of the draw's stream)
  fit2 <- wbb_nn(x, y, model = nn_mlp(6), draws = 4, seed = 2, quiet = TRUE, threads = 1,
                 chunks = 2, control = nn_control(epochs = 5, batch_size = 16, lr = 0.01))
  expect_identical(fit2$history, h)
  expect_equal(fit2$steps_counted, 100)
  # gaussian: no accuracy; max_steps: the partial last epoch is a row; history = FALSE: none kept
  yg <- x[, 1] + rnorm(n)
  g <- wbb_nn(x, yg, model = nn_mlp(3), draws = 2, seed = 1, quiet = TRUE,
              control = nn_control(max_steps = 12, batch_size = 16, optimizer = "rmsprop"))
  expect_equal(nrow(g$history), 2 * 3)
  expect_true(all(is.nan(g$history$accuracy)))
  expect_equal(g$steps_counted, 24)
  expect_null(wbb_nn(x, yg, model = nn_mlp(3), draws = 1, seed = 1, quiet = TRUE,
                     control = nn_control(epochs = 1, history = FALSE))$history)
})

test_that("diverged draws show in the history and in print()", {
  skip_if_no_torch()
  set.seed(1)
  xs <- scale(matrix(rnorm(400), 200, 2)); ys <- drop(xs %*% c(1, -1)) + rnorm(200)
  f <- suppressWarnings(wbb_nn(xs, ys, model = nn_mlp(16), draws = 6, newx = xs[1:5, ], newy = ys[1:5],
                               quiet = TRUE, seed = 3,
                               control = nn_control(optimizer = "sgd", lr = 0.5, momentum = 0.9, epochs = 5), standardize = FALSE))
  bad <- which(f$status == "diverged")
  skip_if(length(bad) == 0 || length(bad) == 6, "no mixed divergence with this LibTorch")
  last <- tapply(f$history$loss, f$history$draw, function(l) l[length(l)])
  # a diverged draw's last epoch has a non-finite mean loss, or its last step left a non-finite objective
  expect_true(all(!is.finite(last[bad]) | is.na(f$objective[bad])))
  expect_true(any(!is.finite(last[bad])))
  expect_true(all(is.finite(last[-bad])))
  expect_true(all(tabulate(f$history$draw, 6)[-bad] == 5))
  out <- capture.output(print(f))
  expect_equal(grep("^  draws: ", out, value = TRUE), sprintf("  draws: %d done, %d diverged (only done draws enter the summaries)",
                               6 - length(bad), length(bad)))
})

test_that("nn_control() validates the optimizer settings", {
  expect_equal(nn_control(optimizer = "rmsprop")$optimizer, "rmsprop")
  expect_equal(nn_control(optimizer = "rmsprop", alpha = 0.9)$alpha, 0.9)
  expect_equal(scalebayes:::nn_engine_control(nn_control(optimizer = "rmsprop"), "cpu", FALSE)$optimizer, "rmsprop")
  expect_equal(scalebayes:::nn_engine_control(nn_control(optimizer = "sgd"), "cpu", FALSE)$optimizer, "sgd")
  expect_equal(scalebayes:::nn_engine_control(nn_control(), "cpu", FALSE)$optimizer, "adam")
  expect_error(nn_control(optimizer = "adagrad"), class = "scalebayes_error")
  expect_error(nn_control(alpha = 1), class = "scalebayes_error")
  expect_error(nn_control(alpha = 0), class = "scalebayes_error")
  expect_error(nn_control(alpha = NA), class = "scalebayes_error")
  expect_error(nn_control(history = "yes"), class = "scalebayes_error")
})

test_that("a last minibatch of one example is merged into the one before it when asked (batch norm), else unchanged", {
  skip_if_no_torch()
  d <- train_check_data(n = 11)
  theta0 <- c(0.2, -0.1, 0.4, -0.3)
  run <- function(batch_size, merge, ...) {
    ctl <- engine_ctl(optimizer = "sgd", lr = 0.05, momentum = 0, batch_size = batch_size, ...)
    ctl$merge_single_batch <- merge
    cpp_nn_train_check(d$x, d$y, theta0, 0.5, 1, ctl, seed = 3)
  }
  # 11 = 5 + 5 + 1: merged, 2 steps per epoch (5 + 6); not merged, 3
  m <- run(5, TRUE, epochs = 4)
  u <- run(5, FALSE, epochs = 4)
  expect_equal(m$steps, 4 * 2)
  expect_equal(u$steps, 4 * 3)
  expect_length(m$history_loss, 4)
  expect_equal(m$steps_counted + m$steps_skipped, 8)
  # a batch size that leaves no single example: the flag changes nothing, bit for bit
  expect_identical(run(4, TRUE, epochs = 3)[c("params", "offset", "steps")], run(4, FALSE, epochs = 3)[c("params", "offset", "steps")])
  # 11 examples in batches of 10: merged, the one minibatch is the whole permuted epoch, exactly the full
  # batch of the same permutation (same stream, same slice)
  expect_identical(run(10, TRUE, epochs = 5)[c("params", "offset", "steps")],
                   run(11, FALSE, epochs = 5)[c("params", "offset", "steps")])
})

test_that("wbb_nn() with batch norm trains when an epoch ends in a single example; other draws are unchanged", {
  skip_if_no_torch()
  set.seed(7)
  x <- matrix(rnorm(101 * 3), 101, 3)
  y <- factor(rep(c("a", "b"), length.out = 101))
  f <- wbb_nn(x, y, model = nn_mlp(4, batchnorm = TRUE), draws = 2, control = nn_control(epochs = 2),
              seed = 1, threads = 1, quiet = TRUE)
  expect_true(all(f$status == "done"))
  expect_equal(f$steps, c(4, 4))  # 101 = 50 + 51 per epoch
  g <- wbb_nn(x, y, model = nn_mlp(4), draws = 2, control = nn_control(epochs = 2), seed = 1, threads = 1, quiet = TRUE,
              keep_draws = TRUE)
  expect_equal(g$steps, c(6, 6))  # without batch norm: 50 + 50 + 1, as before
  expect_error(wbb_nn(x, y, model = nn_mlp(4, batchnorm = TRUE), draws = 1, control = nn_control(epochs = 1, batch_size = 1),
                      quiet = TRUE), class = "scalebayes_error_input")
  expect_error(sgld_sa(x, y, model = nn_mlp(4, batchnorm = TRUE), batch_size = 1, iterations = 5, quiet = TRUE),
               "batch norm", class = "scalebayes_error_input")
  # the VAE's encoder or decoder alike (the layer table's needs_two column, the engine's rule)
  expect_error(vae(plogis(x), encoder = nn_mlp(4, batchnorm = TRUE), decoder = nn_mlp(4), batch_size = 1, epochs = 1,
                   quiet = TRUE), "batch norm", class = "scalebayes_error_input")
  expect_error(vae(plogis(x), encoder = nn_mlp(4), decoder = nn_mlp(4, batchnorm = TRUE), batch_size = 1, epochs = 1,
                   quiet = TRUE), "batch norm", class = "scalebayes_error_input")
})

test_that("nn_control(batch_size = NULL) is min(50, n): the draws of 50 for n >= 50 and of n below; larger than n is an error", {
  skip_if_no_torch()
  set.seed(8)
  x <- matrix(rnorm(60 * 2), 60, 2)
  y <- rnorm(60)
  fit <- function(x, y, ...) wbb_nn(x, y, model = nn_mlp(3), draws = 2, seed = 2, threads = 1, quiet = TRUE,
                                     keep_draws = TRUE, control = nn_control(epochs = 2, ...))$weights
  expect_identical(fit(x, y), fit(x, y, batch_size = 50))
  expect_identical(fit(x[1:30, ], y[1:30]), fit(x[1:30, ], y[1:30], batch_size = 30))
  expect_error(fit(x[1:30, ], y[1:30], batch_size = 31), "must not exceed", class = "scalebayes_error_input")
  expect_error(sgld_sa(x[1:30, ], y[1:30], model = nn_mlp(3), batch_size = 31, iterations = 5, quiet = TRUE),
               "must not exceed", class = "scalebayes_error_input")
  expect_null(nn_control()$batch_size)
  expect_output(print(nn_control()), "min\\(50, n\\)")
})

test_that("nn_control(torch_threads = ) leaves the session's LibTorch thread count as it was", {
  skip_if_no_torch()
  before <- scalebayes:::cpp_torch_info()$threads
  set.seed(9)
  x <- matrix(rnorm(40), 20, 2)
  y <- rnorm(20)
  wbb_nn(x, y, model = nn_mlp(3), draws = 1, quiet = TRUE, threads = 1,
         control = nn_control(epochs = 1, torch_threads = before + 1))
  expect_equal(scalebayes:::cpp_torch_info()$threads, before)
  sgld_sa_engine(x, y, model = nn_mlp(3), iterations = 5, quiet = TRUE, threads = 1)
  expect_equal(scalebayes:::cpp_torch_info()$threads, before)
})

test_that("inputs that overflow single precision warn at preparation and their draws are not 'done'", {
  skip_if_no_torch()
  set.seed(10)
  x <- matrix(rnorm(40), 20, 2)
  y <- factor(rep(c("a", "b"), 10))
  expect_warning(scalebayes:::nn_prepare_x(x * 1e20), class = "scalebayes_warning_scaling")
  expect_no_warning(scalebayes:::nn_prepare_x(x * 1e10))
  expect_warning(scalebayes:::nn_prepare_y(rnorm(20) * 1e20, 20, "gaussian"), class = "scalebayes_warning_scaling")
  # every draw has a non-finite loss or certificate: a classed error, never status "done" with NA norms
  expect_error(suppressWarnings(wbb_nn(x * 1e25, y, model = nn_mlp(4), draws = 2, quiet = TRUE, seed = 1,
                                       control = nn_control(epochs = 1), standardize = FALSE)),
               class = "scalebayes_error_convergence")
  # the engine's rule: a finite loss but a non-finite certificate is a divergence (test objective, float32:
  # gradients of about 1e20 square to Inf in single precision)
  d <- train_check_data(n = 10, p = 1)
  ctl <- scalebayes:::nn_engine_control(nn_control(optimizer = "sgd", lr = 1e-30, momentum = 0, batch_size = 10,
                                                   max_steps = 1), "cpu", FALSE)
  r <- cpp_nn_train_check(d$x * 1e12, d$y * 1e8, c(0, 0), 0, 0, ctl, seed = 1)
  expect_true(is.finite(r$objective))
  expect_false(is.finite(r$grad_norm))
  expect_true(r$diverged)
})

test_that("the SG-MCMC engine refuses one-example minibatches for batch norm itself (behind R's check)", {
  skip_if_no_torch()
  set.seed(11)
  x <- matrix(rnorm(40), 20, 2)
  y <- rnorm(20)
  # R's check (check_nn_batch_size) replaced by a pass-through for this test: the engine's guard answers
  ns <- asNamespace("scalebayes")
  orig <- get("check_nn_batch_size", ns)
  unlockBinding("check_nn_batch_size", ns)
  assign("check_nn_batch_size", function(batch_size, ...) batch_size, ns)
  on.exit({
    assign("check_nn_batch_size", orig, ns)
    lockBinding("check_nn_batch_size", ns)
  }, add = TRUE)
  expect_error(sgld_sa(x, y, model = nn_mlp(4, batchnorm = TRUE), batch_size = 1, iterations = 5, quiet = TRUE),
               "at least 2 for a network with batch norm", class = "scalebayes_error_engine")
  # batch_size 2 trains
  expect_s3_class(sgld_sa_engine(x, y, model = nn_mlp(4, batchnorm = TRUE), batch_size = 2, iterations = 5, quiet = TRUE, seed = 1),
                  "sb_nn_fit")
})
