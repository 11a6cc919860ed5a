# Batched convolutional networks (nn/batched.hpp: convolutions, pooling, reshape): the hand-written batched
# forward and backward pass equals one unbatched network per member with autograd (float64, 1e-12), one
# grouped convolution (the GPU form) equals one convolution per member (the CPU form), and WBB draws and SG-MCMC
# chains of a convolutional network do not depend on the group or the threads (bitwise) and equal the unbatched
# ones up to rounding.

bconv_nets <- function() {
  list(
    conv2d = list(input = c(1L, 8L, 8L), q = 2L,
                  body = nn_sequential(layer_conv2d(4, 3), layer_relu(), layer_maxpool2d(2),
                                       layer_conv2d(3, 3, stride = 1, padding = "valid"), layer_tanh(),
                                       layer_avgpool2d(2), layer_flatten(), layer_dense(5), layer_sigmoid())),
    strided = list(input = c(2L, 7L, 7L), q = 1L,
                   body = nn_sequential(layer_conv2d(3, 3, stride = 2, padding = 1), layer_relu(), layer_flatten(),
                                        layer_dense(4), layer_relu())),
    conv1d = list(input = 12L, q = 3L,
                  body = nn_sequential(layer_reshape(c(2, 6)), layer_conv1d(3, 3, stride = 2, padding = 1),
                                       layer_relu(), layer_flatten(), layer_dense(4), layer_tanh())),
    dense_to_image = list(input = 6L, q = 1L,
                          body = nn_sequential(layer_dense(16), layer_relu(), layer_reshape(c(1, 4, 4)),
                                               layer_conv2d(2, 3), layer_relu(), layer_avgpool2d(2),
                                               layer_flatten()))
  )
}

test_that("the batched forward and backward pass of convolutional networks equals autograd per member", {
  skip_if_no_torch()
  set.seed(7)
  G <- 3L; m <- 5L
  for (nm in names(bconv_nets())) {
    net <- bconv_nets()[[nm]]
    tab <- scalebayes:::nn_resolve(net$body, net$input, net$q)
    spec <- scalebayes:::nn_engine_spec(tab, net$input, "gaussian")
    P <- sum(tab$params)
    theta <- matrix(rnorm(P * G, sd = 0.5), P, G)
    dout <- array(rnorm(net$q * m * G), c(net$q, m, G))
    for (shared in c(TRUE, FALSE)) {
      n <- if (shared) m else m * G
      x <- array(rnorm(n * prod(net$input)), c(n, net$input))
      for (grouped in c(FALSE, TRUE)) {
        r <- cpp_nn_batched_test(spec, theta, x, dim(x), dout, shared, grouped)
        info <- paste(nm, "shared", shared, "grouped", grouped)
        expect_equal(r$out, r$ref_out, tolerance = 1e-12, info = info)
        expect_equal(r$grad, r$ref_grad, tolerance = 1e-12, info = info)
        expect_gt(sum(abs(r$ref_grad[seq_len(P - net$q * 4L), ])), 0)  # the hidden layers get gradient
      }
    }
  }
})

bconv_data <- function(n = 60, seed = 3) {
  set.seed(seed)
  x <- array(rnorm(n * 64), c(n, 8, 8))
  list(x = x, num = apply(x[, 3:5, 3:5], 1, mean) * 3 + rnorm(n, sd = 0.3),
       cls = factor(ifelse(x[, 4, 4] + x[, 5, 5] > 0, "a", "b")))
}
bconv_model <- function() {
  nn_sequential(layer_conv2d(4, 3), layer_relu(), layer_maxpool2d(2), layer_conv2d(3, 3), layer_relu(),
                layer_flatten(), layer_dense(6), layer_relu())
}

test_that("WBB draws of a convolutional network are batched and do not depend on the group or the threads", {
  skip_if_no_torch()
  d <- bconv_data()
  f <- function(batch, threads = 1L, float64 = FALSE, y = d$num) {
    wbb_nn(d$x, y, model = bconv_model(), draws = 5L, epochs = 3L, batch_size = 16L, seed = 2L, threads = threads,
           quiet = TRUE, batch = batch, newx = d$x[1:4, , ], control = nn_control(float64 = float64))
  }
  ref <- f(1L)
  expect_true(ref$settings$batched)
  expect_true(f("auto")$settings$batched)
  same_draws(ref, f(TRUE))
  same_draws(ref, f(2L, threads = 2L))
  # against one network per thread (autograd): float64 to rounding, both families
  for (y in list(d$num, d$cls)) same_draws(f(FALSE, float64 = TRUE, y = y), f(TRUE, float64 = TRUE, y = y), 1e-12)
})

test_that("SG-MCMC chains of a convolutional network are batched and equal the unbatched chains", {
  skip_if_no_torch()
  d <- bconv_data()
  f <- function(batch, threads = 1L, sampler = "sghmc", float64 = FALSE) {
    suppress_convergence(sgld_sa(d$x, d$num, model = bconv_model(), sampler = sampler, iterations = 40L,
                                 batch_size = 20L, burnin = 10L, thin = 2L, chains = 3L, seed = 4L, threads = threads,
                                 quiet = TRUE, batch = batch, newx = d$x[1:3, , ],
                                 control = sgmcmc_control(step_size = 1e-3, float64 = float64)))
  }
  ref <- f(1L)
  expect_true(ref$settings$batched)
  b <- f(TRUE, threads = 2L)
  expect_equal(as.matrix(ref), as.matrix(b), tolerance = 0)
  expect_equal(ref$pred, b$pred, tolerance = 0)
  expect_equal(ref$trace$loss, b$trace$loss, tolerance = 0)
  for (s in c("sghmc", "hamcmc_sa")) {
    a <- f(FALSE, sampler = s, float64 = TRUE)
    b <- f(TRUE, sampler = s, float64 = TRUE)
    expect_false(a$settings$batched)
    expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-10, info = s)
    expect_equal(a$pred, b$pred, tolerance = 1e-10, info = s)
    expect_equal(a$trace$loss, b$trace$loss, tolerance = 1e-10, info = s)
  }
})
