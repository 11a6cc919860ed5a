# Dropout layers (nn_mlp(dropout =), nn_cnn(dropout =)): layer tables, identity in prediction mode, the
# rescaled Bernoulli masks of training mode (mean and variance against the exact values), masks drawn from
# the network's own generator (same seed, same draws for any number of threads), bad rates.

test_that("dropout adds parameter-free layers where the papers put them", {
  tab <- scalebayes:::nn_resolve(nn_mlp(c(6, 4), dropout = 0.5), 5L, 3L)
  expect_equal(tab$kind, c("linear", "relu", "dropout", "linear", "relu", "dropout", "linear"))
  expect_equal(tab$rate, c(0, 0, 0.5, 0, 0, 0.5, 0))
  plain <- scalebayes:::nn_resolve(nn_mlp(c(6, 4)), 5L, 3L)
  expect_equal(sum(tab$params), sum(plain$params))
  expect_false("dropout" %in% plain$kind)
  cnn <- scalebayes:::nn_resolve(nn_cnn(dropout = 0.5), c(1L, 28L, 28L), 10L)
  i <- which(cnn$kind == "dropout")
  expect_length(i, 1L)
  expect_equal(cnn$kind[i - 1L], "flatten")  # on the 64 x 7 x 7 maps, before fc1
  expect_equal(cnn$kind[i + 1L], "linear")
  expect_equal(cnn$shape[i], "3136")
  expect_equal(sum(cnn$params), sum(scalebayes:::nn_resolve(nn_cnn(), c(1L, 28L, 28L), 10L)$params))
  expect_equal(scalebayes:::nn_layer_code("dropout"), 9L)
  expect_output(print(nn_cnn(dropout = 0.5), input = c(1, 28, 28), output = 10), "dropout\\(0.5\\)")
  expect_output(print(nn_mlp(8, dropout = 0.25)), "dropout 0.25")
  skip_if_no_torch()
  for (case in list(list(nn_mlp(c(6, 4), dropout = 0.3), 5L), list(nn_cnn(channels = 3, kernel = 3, hidden = 5, dropout = 0.5), c(1L, 8L, 8L)))) {
    tab <- scalebayes:::nn_resolve(case[[1]], case[[2]], 3L)
    d <- scalebayes:::cpp_nn_describe(scalebayes:::nn_engine_spec(tab, case[[2]], "multinomial"))
    expect_equal(d$n_parameters, sum(tab$params))
    expect_equal(d$n_penalized, sum(tab$penalized))
  }
})

test_that("bad dropout rates are classed errors naming the argument", {
  for (bad in list(1, -0.1, 1.5, NA_real_, "a", c(0.1, 0.2))) {
    expect_error(nn_mlp(4, dropout = bad), class = "scalebayes_error_input", regexp = "dropout")
    expect_error(nn_cnn(dropout = bad), class = "scalebayes_error_input", regexp = "dropout")
  }
  expect_silent(nn_mlp(4, dropout = 0))
})

dropout_net <- function(p, hidden = 30L, input = 4L, out = 2L) {
  tab <- scalebayes:::nn_resolve(nn_mlp(hidden, activation = "tanh", dropout = p), input, out)
  scalebayes:::nn_engine_spec(tab, input, "multinomial")
}

test_that("dropout is the identity in prediction mode and keeps the mean in training mode (exact moments)", {
  skip_if_no_torch()
  set.seed(4)
  p <- 0.4
  spec <- dropout_net(p)
  spec0 <- dropout_net(0)
  P <- 4 * 30 + 30 + 30 * 2 + 2
  theta <- rnorm(P, sd = 0.5)
  x1 <- rnorm(4)
  n <- 20000L
  X <- matrix(x1, n, 4, byrow = TRUE)  # one example, n times: every row gets its own mask
  fwd <- function(s, train, seed = 3) {
    matrix(cpp_nn_forward(s, theta, X, dim(X), train, seed, 0, TRUE), n, 2, byrow = TRUE)
  }
  ev <- fwd(spec, FALSE)
  expect_identical(ev, fwd(spec0, FALSE))
  expect_identical(ev, fwd(spec0, TRUE))  # no dropout layer: training mode changes nothing either
  # exact moments: output_k = b_k + sum_j W_kj h_j m_j / (1 - p), m_j ~ Bernoulli(1 - p)
  W1 <- matrix(theta[1:120], 30, 4, byrow = TRUE)
  b1 <- theta[121:150]
  W2 <- matrix(theta[151:210], 2, 30, byrow = TRUE)
  b2 <- theta[211:212]
  h <- tanh(drop(W1 %*% x1) + b1)
  mu <- drop(W2 %*% h) + b2
  v <- drop(W2^2 %*% h^2) * p / (1 - p)
  expect_equal(ev[1, ], mu, tolerance = 1e-12)
  tr <- fwd(spec, TRUE)
  se_mean <- sqrt(v / n)
  expect_true(all(abs(colMeans(tr) - mu) < 4.5 * se_mean))
  dev2 <- sweep(tr, 2, mu)^2
  se_var <- apply(dev2, 2, stats::sd) / sqrt(n)
  expect_true(all(abs(colMeans(dev2) - v) < 4.5 * se_var))
  # the masks: each hidden unit is dropped (contributes 0) or scaled by 1/(1-p); with one hidden unit the
  # output takes exactly two values, the dropped one with frequency p
  spec1 <- dropout_net(p, hidden = 1L)
  th1 <- rnorm(4 + 1 + 2 + 2)
  o <- matrix(cpp_nn_forward(spec1, th1, X, dim(X), TRUE, 5, 0, TRUE), n, 2, byrow = TRUE)[, 1]
  h1 <- tanh(sum(th1[1:4] * x1) + th1[5])
  kept <- abs(o - (th1[8] + th1[6] * h1 / (1 - p))) < 1e-12
  dropped <- abs(o - th1[8]) < 1e-12
  expect_true(all(kept | dropped))
  expect_lt(abs(mean(dropped) - p), 4.5 * sqrt(p * (1 - p) / n))
  # masks come from the network's generator, seeded from the stream: same seed same masks, another not
  expect_identical(tr, fwd(spec, TRUE))
  expect_false(identical(tr, fwd(spec, TRUE, seed = 4)))
})

test_that("wbb_nn with dropout: same seed, same draws for 1 and 2 threads; dropout changes the draws", {
  skip_if_no_torch()
  set.seed(6)
  x <- matrix(rnorm(100 * 4), 100, 4)
  y <- factor(ifelse(x[, 1] + x[, 2] > 0, "a", "b"))
  run <- function(threads, dropout = 0.5, model = nn_mlp(8, dropout = dropout)) {
    wbb_nn(x, y, model = model, draws = 4, keep_draws = TRUE, threads = threads, seed = 21, quiet = TRUE,
           control = nn_control(epochs = 3, batch_size = 20))
  }
  f1 <- run(1)
  f2 <- run(2)
  expect_identical(f1$weights, f2$weights)
  expect_identical(f1$objective, f2$objective)
  f0 <- run(1, dropout = 0)
  expect_equal(dim(f0$weights), dim(f1$weights))
  expect_false(isTRUE(all.equal(unname(f0$weights), unname(f1$weights))))
  cnn <- nn_cnn(channels = 2, kernel = 3, hidden = 4, dropout = 0.5)
  img <- array(runif(40 * 64), c(40, 1, 8, 8))
  lab <- factor(sample(c("u", "v"), 40, TRUE))
  g <- function(threads) {
    wbb_nn(img, lab, model = cnn, draws = 3, keep_draws = TRUE, threads = threads, seed = 2, quiet = TRUE,
           control = nn_control(epochs = 2, batch_size = 10))$weights
  }
  expect_identical(g(1), g(2))
})

test_that("sgld_sa networks with dropout: a chain depends only on (seed, chain)", {
  skip_if_no_torch()
  set.seed(7)
  x <- matrix(rnorm(80 * 3), 80, 3)
  y <- factor(ifelse(x[, 1] > 0, "a", "b"))
  run <- function(threads) {
    sgld_sa_engine(x, y, model = nn_mlp(6, dropout = 0.3), iterations = 30, burnin = 10, thin = 5, batch_size = 16,
            chains = 2, threads = threads, keep_draws = TRUE, seed = 9, quiet = TRUE)$weights
  }
  expect_identical(run(1), run(2))
})
