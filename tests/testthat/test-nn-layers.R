# nn_sequential() and its layers: one definition per layer kind in the engine (nn/layers_spec.hpp), shapes
# and parameter counts from the engine's torch-free planner, nn_mlp() / nn_cnn() as shortcuts producing the
# engine layer lists they always produced, the new kinds (avgpool2d, reshape, batchnorm 1d/2d by input),
# networks with q outputs (n x q gaussian / binomial y).

# Engine layer lists of nn_mlp() / nn_cnn() computed by the R code before nn_sequential() existed (the old
# nn_resolve() / nn_engine_spec(), at commit da6567f): the shortcuts must give exactly these (same layers,
# same parameters in the same order, hence the same initial weights and draws).
old_specs <- list(
  mlp_784 = list(model = quote(nn_mlp(c(128, 64))), input = 784L, output = 10L, family = "multinomial",
    kind = c(0L, 6L, 0L, 6L, 0L),
    out = c(128L, 0L, 64L, 0L, 10L),
    kernel = c(0L, 0L, 0L, 0L, 0L), stride = c(1L, 1L, 1L, 1L, 1L),
    padding = c(0L, 0L, 0L, 0L, 0L), penalized = c(TRUE, FALSE, TRUE, FALSE, TRUE),
    rate = c(0, 0, 0, 0, 0),
    shape = c("128", "128", "64", "64", "10"), params = c(100480, 0, 8256, 0, 650)),
  mlp_img = list(model = quote(nn_mlp(c(6, 4), activation = "tanh", batchnorm = TRUE, dropout = 0.3)), input = c(1L, 5L, 5L), output = 3L, family = "multinomial",
    kind = c(5L, 0L, 4L, 7L, 9L, 0L, 4L, 7L, 9L, 0L),
    out = c(0L, 6L, 0L, 0L, 0L, 4L, 0L, 0L, 0L, 3L),
    kernel = c(0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), stride = c(1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L),
    padding = c(0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), penalized = c(FALSE, TRUE, FALSE, FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, TRUE),
    rate = c(0, 0, 0, 0, 0.3, 0, 0, 0, 0.3, 0),
    shape = c("25", "6", "6", "6", "6", "4", "4", "4", "4", "3"), params = c(0, 156, 12, 0, 0, 28, 8, 0, 0, 15)),
  mlp_none = list(model = quote(nn_mlp(NULL)), input = 4L, output = 1L, family = "gaussian",
    kind = 0L,
    out = 1L,
    kernel = 0L, stride = 1L,
    padding = 0L, penalized = TRUE,
    rate = 0,
    shape = "1", params = 5L),
  cnn_default = list(model = quote(nn_cnn()), input = c(1L, 28L, 28L), output = 10L, family = "multinomial",
    kind = c(1L, 6L, 2L, 1L, 6L, 2L, 5L, 0L, 6L, 0L),
    out = c(32L, 0L, 0L, 64L, 0L, 0L, 0L, 200L, 0L, 10L),
    kernel = c(5L, 0L, 2L, 5L, 0L, 2L, 0L, 0L, 0L, 0L), stride = c(1L, 1L, 2L, 1L, 1L, 2L, 1L, 1L, 1L, 1L),
    padding = c(2L, 0L, 0L, 2L, 0L, 0L, 0L, 0L, 0L, 0L), penalized = c(TRUE, FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, TRUE, FALSE, TRUE),
    rate = c(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    shape = c("32 x 28 x 28", "32 x 28 x 28", "32 x 14 x 14", "64 x 14 x 14", "64 x 14 x 14", "64 x 7 x 7", "3136", "200", "200", "10"), params = c(832, 0, 0, 51264, 0, 0, 0, 627400, 0, 2010)),
  cnn_valid = list(model = quote(nn_cnn(padding = "valid")), input = c(1L, 28L, 28L), output = 10L, family = "multinomial",
    kind = c(1L, 6L, 2L, 1L, 6L, 2L, 5L, 0L, 6L, 0L),
    out = c(32L, 0L, 0L, 64L, 0L, 0L, 0L, 200L, 0L, 10L),
    kernel = c(5L, 0L, 2L, 5L, 0L, 2L, 0L, 0L, 0L, 0L), stride = c(1L, 1L, 2L, 1L, 1L, 2L, 1L, 1L, 1L, 1L),
    padding = c(0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), penalized = c(TRUE, FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, TRUE, FALSE, TRUE),
    rate = c(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    shape = c("32 x 24 x 24", "32 x 24 x 24", "32 x 12 x 12", "64 x 8 x 8", "64 x 8 x 8", "64 x 4 x 4", "1024", "200", "200", "10"), params = c(832, 0, 0, 51264, 0, 0, 0, 205000, 0, 2010)),
  cnn_bn = list(model = quote(nn_cnn(channels = c(64, 64), kernel = 4, hidden = c(256, 64), batchnorm = TRUE)), input = c(1L, 28L, 28L), output = 10L, family = "multinomial",
    kind = c(1L, 6L, 2L, 1L, 6L, 2L, 5L, 0L, 4L, 6L, 0L, 6L, 0L),
    out = c(64L, 0L, 0L, 64L, 0L, 0L, 0L, 256L, 0L, 0L, 64L, 0L, 10L),
    kernel = c(4L, 0L, 2L, 4L, 0L, 2L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), stride = c(1L, 1L, 2L, 1L, 1L, 2L, 1L, 1L, 1L, 1L, 1L, 1L, 1L),
    padding = c(1L, 0L, 0L, 1L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), penalized = c(TRUE, FALSE, FALSE, TRUE, FALSE, FALSE, FALSE, TRUE, FALSE, FALSE, TRUE, FALSE, TRUE),
    rate = c(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
    shape = c("64 x 27 x 27", "64 x 27 x 27", "64 x 13 x 13", "64 x 12 x 12", "64 x 12 x 12", "64 x 6 x 6", "2304", "256", "256", "256", "64", "64", "10"), params = c(1088, 0, 0, 65600, 0, 0, 0, 590080, 512, 0, 16448, 0, 650)),
  cnn_small = list(model = quote(nn_cnn(channels = c(3, 4), kernel = 3, hidden = 6, pool = 1, activation = "sigmoid", dropout = 0.5)), input = c(2L, 10L, 10L), output = 1L, family = "binomial",
    kind = c(1L, 8L, 1L, 8L, 5L, 9L, 0L, 8L, 0L),
    out = c(3L, 0L, 4L, 0L, 0L, 0L, 6L, 0L, 1L),
    kernel = c(3L, 0L, 3L, 0L, 0L, 0L, 0L, 0L, 0L), stride = c(1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L, 1L),
    padding = c(1L, 0L, 1L, 0L, 0L, 0L, 0L, 0L, 0L), penalized = c(TRUE, FALSE, TRUE, FALSE, FALSE, FALSE, TRUE, FALSE, TRUE),
    rate = c(0, 0, 0, 0, 0, 0.5, 0, 0, 0),
    shape = c("3 x 10 x 10", "3 x 10 x 10", "4 x 10 x 10", "4 x 10 x 10", "400", "400", "6", "6", "1"), params = c(57, 0, 112, 0, 0, 0, 2406, 0, 7)),
  cnn_pad = list(model = quote(nn_cnn(channels = 2, kernel = 3, padding = 2, hidden = NULL)), input = c(3L, 6L, 7L), output = 2L, family = "multinomial",
    kind = c(1L, 6L, 2L, 5L, 0L),
    out = c(2L, 0L, 0L, 0L, 2L),
    kernel = c(3L, 0L, 2L, 0L, 0L), stride = c(1L, 1L, 2L, 1L, 1L),
    padding = c(2L, 0L, 0L, 0L, 0L), penalized = c(TRUE, FALSE, FALSE, FALSE, TRUE),
    rate = c(0, 0, 0, 0, 0),
    shape = c("2 x 8 x 9", "2 x 8 x 9", "2 x 4 x 4", "32", "2"), params = c(56, 0, 0, 0, 66)))

test_that("nn_mlp() and nn_cnn() give the engine layer lists of the old R resolver", {
  for (nm in names(old_specs)) {
    e <- old_specs[[nm]]
    tab <- scalebayes:::nn_resolve(eval(e$model), e$input, e$output)
    spec <- scalebayes:::nn_engine_spec(tab, e$input, e$family)
    expect_identical(spec$layers, list(kind = e$kind, out = e$out, kernel = e$kernel, stride = e$stride,
                                       padding = e$padding, penalized = e$penalized, rate = e$rate), info = nm)
    expect_identical(spec$input, as.integer(e$input), info = nm)
    expect_identical(tab$shape, e$shape, info = nm)
    expect_equal(tab$params, e$params, info = nm)
  }
  # the same layers written out with nn_sequential() give the same engine list
  a <- scalebayes:::nn_resolve(nn_cnn(), c(1L, 28L, 28L), 10L)
  b <- scalebayes:::nn_resolve(nn_sequential(layer_conv2d(32, 5), layer_relu(), layer_maxpool2d(2), layer_conv2d(64, 5),
                                             layer_relu(), layer_maxpool2d(2), layer_flatten(), layer_dense(200),
                                             layer_relu()), c(1L, 28L, 28L), 10L)
  expect_identical(scalebayes:::nn_engine_spec(a, c(1L, 28L, 28L), "multinomial"),
                   scalebayes:::nn_engine_spec(b, c(1L, 28L, 28L), "multinomial"))
  expect_s3_class(nn_mlp(), "sb_nn_sequential")
  expect_s3_class(nn_cnn(), "sb_nn_spec")
})

# Hand count of a network with every kind: input 3 x 12 x 12.
seq_net <- function() {
  nn_sequential(layer_conv2d(4, 3, stride = 2, padding = 1), layer_batchnorm(), layer_relu(),
                layer_avgpool2d(2, stride = 1), layer_maxpool2d(2), layer_flatten(), layer_dropout(0.2),
                layer_dense(18), layer_batchnorm(), layer_tanh(), layer_reshape(c(2, 3, 3)),
                layer_conv2d(5, 2, padding = "valid"), layer_sigmoid(), layer_flatten(),
                layer_dense(7, penalized = FALSE))
}

test_that("engine shapes and parameter counts match a hand count", {
  tab <- scalebayes:::nn_resolve(seq_net(), c(3L, 12L, 12L), 2L)
  # conv 3x3 stride 2 pad 1 on 12: (12 + 2 - 3) %/% 2 + 1 = 6; avgpool 2 stride 1: 5; maxpool 2: 2
  expect_equal(tab$kind, c("conv2d", "batchnorm2d", "relu", "avgpool2d", "maxpool2d", "flatten", "dropout", "linear",
                           "batchnorm1d", "tanh", "reshape", "conv2d", "sigmoid", "flatten", "linear", "linear"))
  expect_equal(tab$shape, c("4 x 6 x 6", "4 x 6 x 6", "4 x 6 x 6", "4 x 5 x 5", "4 x 2 x 2", "16", "16", "18", "18",
                            "18", "2 x 3 x 3", "5 x 2 x 2", "5 x 2 x 2", "20", "7", "2"))
  expect_equal(tab$params, c(4 * 3 * 9 + 4, 8, 0, 0, 0, 0, 0, 16 * 18 + 18, 36, 0, 0, 5 * 2 * 4 + 5, 0, 0, 20 * 7 + 7,
                             7 * 2 + 2))
  expect_equal(tab$penalized[tab$kind %in% c("linear", "conv2d")], c(TRUE, TRUE, TRUE, FALSE, TRUE))
  expect_output(print(seq_net(), input = c(3, 12, 12), output = 2), "Total parameters: 670")
  expect_output(print(seq_net()), "reshape\\(2 x 3 x 3\\)")
  skip_if_no_torch()  # the network LibTorch builds has exactly the planned tensors
  spec <- scalebayes:::nn_engine_spec(tab, c(3L, 12L, 12L), "multinomial")
  d <- scalebayes:::cpp_nn_describe(spec)
  p <- scalebayes:::cpp_nn_plan(spec)
  expect_equal(d$n_parameters, sum(tab$params))
  expect_identical(d[c("group", "size", "penalized")], p[c("group", "size", "penalized")])
  expect_equal(d$n_penalized, p$n_penalized)
})

test_that("engine shapes and parameter counts match PyTorch", {
  skip_if_fast_tier()
  py <- "/usr/bin/python3"
  skip_if_not(file.exists(py) && identical(suppressWarnings(system2(py, c("-c", shQuote("import torch")), stdout = FALSE, stderr = FALSE)), 0L),
              "PyTorch (python3-torch) not available")
  code <- "
import torch, torch.nn as nn
torch.manual_seed(0)
m = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.AvgPool2d(2, stride=1),
    nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.2), nn.Linear(16, 18), nn.BatchNorm1d(18), nn.Tanh(),
    nn.Unflatten(1, (2, 3, 3)), nn.Conv2d(2, 5, 2), nn.Sigmoid(), nn.Flatten(), nn.Linear(20, 7), nn.Linear(7, 2))
m.eval()
x = torch.zeros(2, 3, 12, 12)
for l in m:
    x = l(x)
    print(' x '.join(str(d) for d in x.shape[1:]), sum(p.numel() for p in l.parameters()))
"
  out <- system2(py, c("-c", shQuote(code)), stdout = TRUE)
  ref <- do.call(rbind, strsplit(out, " (?=[0-9]+$)", perl = TRUE))
  tab <- scalebayes:::nn_resolve(seq_net(), c(3L, 12L, 12L), 2L)
  expect_equal(tab$shape, ref[, 1])
  expect_equal(tab$params, as.numeric(ref[, 2]))
  # nn_cnn() on 28 x 28: the documented counts
  code2 <- "
import torch.nn as nn
for pad, f in ((2, 3136), (0, 1024)):
    m = nn.Sequential(nn.Conv2d(1, 32, 5, padding=pad), nn.Conv2d(32, 64, 5, padding=pad), nn.Linear(f, 200), nn.Linear(200, 10))
    print(sum(p.numel() for p in m.parameters()))
"
  counts <- as.numeric(system2(py, c("-c", shQuote(code2)), stdout = TRUE))
  expect_equal(counts, c(681506, 259106))
  expect_equal(sum(scalebayes:::nn_resolve(nn_cnn(), c(1L, 28L, 28L), 10L)$params), counts[1])
  expect_equal(sum(scalebayes:::nn_resolve(nn_cnn(padding = "valid"), c(1L, 28L, 28L), 10L)$params), counts[2])
})

test_that("layers that do not fit their input are classed errors naming the layer", {
  expect_error(print(nn_sequential(layer_flatten(), layer_reshape(c(2, 5))), input = 12, output = 2),
               class = "scalebayes_error_input", regexp = "cannot reshape 12")
  expect_error(print(nn_sequential(layer_reshape(c(2, 5))), input = c(1, 3, 4), output = 2),
               class = "scalebayes_error_input", regexp = "layer1_reshape")
  expect_error(layer_reshape(c(2, 0)), class = "scalebayes_error_input", regexp = "shape")
  expect_error(layer_reshape("a"), class = "scalebayes_error_input")
  expect_error(print(nn_sequential(layer_dense(4)), input = c(1, 3, 4), output = 2),
               class = "scalebayes_error_input", regexp = "flat input")
  expect_error(print(nn_sequential(layer_conv2d(2, 5, padding = "valid")), input = c(1, 3, 4), output = 2),
               class = "scalebayes_error_input", regexp = "larger than")
  expect_error(print(nn_sequential(layer_avgpool2d(5), layer_flatten()), input = c(1, 4, 4), output = 2),
               class = "scalebayes_error_input", regexp = "pooling window")
  expect_error(print(nn_sequential(layer_conv2d(2, 3)), input = c(1, 6, 6), output = 2),
               class = "scalebayes_error_input", regexp = "flat")
  expect_error(scalebayes:::nn_resolve(nn_cnn(kernel = 9, padding = "valid", channels = c(4, 4, 4)), c(1L, 12L, 12L), 2L),
               class = "scalebayes_error_input")
  expect_error(nn_sequential(layer_relu(), "dense"), class = "scalebayes_error_input")
  expect_error(layer_conv2d(4, 3, padding = "full"), class = "scalebayes_error_input", regexp = "padding")
  expect_error(layer_dropout(1), class = "scalebayes_error_input", regexp = "rate")
  expect_error(layer_dense(0), class = "scalebayes_error_input", regexp = "units")
})

test_that("avgpool2d averages its windows and reshape keeps the values in order", {
  skip_if_no_torch()
  set.seed(4)
  n <- 3
  x <- array(rnorm(n * 2 * 4 * 5), c(n, 2, 4, 5))
  pool_out <- function(kernel, stride) {
    h <- (4 - kernel) %/% stride + 1; w <- (5 - kernel) %/% stride + 1
    m <- 2 * h * w
    tab <- scalebayes:::nn_resolve(nn_sequential(layer_avgpool2d(kernel, stride), layer_flatten()), c(2L, 4L, 5L), m)
    spec <- scalebayes:::nn_engine_spec(tab, c(2L, 4L, 5L), "gaussian")
    theta <- c(as.vector(t(diag(m))), rep(0, m))  # output layer: identity weights (row-major), zero bias
    got <- matrix(cpp_nn_forward(spec, theta, x, dim(x), FALSE, 1, 0, TRUE), n, byrow = TRUE)
    want <- t(vapply(seq_len(n), function(i) {
      unlist(lapply(1:2, function(ch) {
        v <- outer(seq_len(h), seq_len(w), Vectorize(function(a, b) {
          mean(x[i, ch, (a - 1) * stride + seq_len(kernel), (b - 1) * stride + seq_len(kernel)])
        }))
        as.vector(t(v))  # row-major within a channel
      }))
    }, numeric(m)))
    expect_equal(got, want, tolerance = 1e-12)
  }
  pool_out(2, 2)
  pool_out(3, 1)
  # reshape to 4 x 5 x 2 and back: values unchanged (row-major per example)
  tab <- scalebayes:::nn_resolve(nn_sequential(layer_flatten(), layer_reshape(c(4, 5, 2)), layer_flatten()), c(2L, 4L, 5L), 40L)
  spec <- scalebayes:::nn_engine_spec(tab, c(2L, 4L, 5L), "gaussian")
  expect_equal(spec$layers$target, list(integer(), c(4L, 5L, 2L), integer(), integer()))
  got <- matrix(cpp_nn_forward(spec, c(as.vector(diag(40)), rep(0, 40)), x, dim(x), FALSE, 1, 0, TRUE), n, byrow = TRUE)
  want <- t(apply(x, 1, function(a) as.vector(aperm(a, c(3, 2, 1)))))
  expect_equal(got, want, tolerance = 1e-12)
})

test_that("an nn_sequential network with avgpool2d and reshape fits with wbb_nn", {
  skip_if_no_torch()
  set.seed(5)
  n <- 24
  x <- array(runif(n * 8 * 8), c(n, 1, 8, 8))
  y <- factor(sample(c("a", "b", "c"), n, TRUE))
  net <- nn_sequential(layer_conv2d(3, 3), layer_relu(), layer_avgpool2d(2), layer_flatten(), layer_dense(16),
                       layer_reshape(c(1, 4, 4)), layer_conv2d(2, 3, padding = "valid"), layer_relu(),
                       layer_flatten())
  # (no batch normalization here: its running statistics are not among the kept weights, so predict() from
  # weights would differ from the draws' own predictions)
  fit <- wbb_nn(x, y, model = net, draws = 2, newx = x[1:5, , , , drop = FALSE], keep_draws = TRUE, seed = 1,
                quiet = TRUE, control = nn_control(epochs = 1, batch_size = 8))
  expect_equal(dim(fit$pred), c(2L, 5L, 3L))
  expect_equal(fit$n_parameters, sum(fit$layers$params))
  expect_true(all(abs(apply(fit$pred, c(1, 2), sum) - 1) < 1e-5))
  expect_equal(predict(fit, newx = x[1:5, , , , drop = FALSE], type = "draws"), fit$pred, tolerance = 1e-5,
               ignore_attr = TRUE)
  expect_output(print(fit), "network: .*avgpool")
  # the same seed gives the same draws
  fit2 <- wbb_nn(x, y, model = net, draws = 2, newx = x[1:5, , , , drop = FALSE], seed = 1, quiet = TRUE,
                 control = nn_control(epochs = 1, batch_size = 8))
  expect_identical(fit2$pred, fit$pred)
})

test_that("q-column gaussian and binomial losses are the sums over outputs", {
  skip_if_no_torch()
  set.seed(6)
  n <- 9; p <- 3; q <- 4
  x <- matrix(rnorm(n * p), n, p)
  w <- rexp(n)
  for (family in c("gaussian", "binomial")) {
    y <- if (family == "gaussian") matrix(rnorm(n * q), n, q) else matrix(rbinom(n * q, 1, 0.5), n, q)
    tab <- scalebayes:::nn_resolve(nn_mlp(NULL), p, q)
    spec <- scalebayes:::nn_engine_spec(tab, p, family)
    theta <- rnorm(sum(tab$params))
    W <- matrix(theta[seq_len(q * p)], q, p, byrow = TRUE)
    f <- x %*% t(W) + matrix(theta[q * p + seq_len(q)], n, q, byrow = TRUE)
    l <- if (family == "gaussian") rowSums((y - f)^2) / 2 else rowSums(log1p(exp(f)) - y * f)
    r <- scalebayes:::cpp_nn_objective(spec, x, dim(x), y, w, theta, 0.3, 1.5)
    expect_equal(r$objective, sum(w * l) + 0.3 * 1.5 * sum(W^2), tolerance = 1e-10, info = family)
  }
})

test_that("wbb_nn with an n x q response predicts q outputs; wrong widths are classed errors", {
  skip_if_no_torch()
  set.seed(7)
  n <- 30; p <- 3; q <- 2
  x <- matrix(rnorm(n * p), n, p)
  y <- cbind(x[, 1] - x[, 2], 2 * x[, 3]) + matrix(rnorm(n * q, sd = 0.1), n, q)
  fit <- wbb_nn(x, y, model = nn_mlp(5), draws = 2, newx = x[1:4, ], newy = y[1:4, ], keep_draws = TRUE,
                seed = 2, quiet = TRUE, control = nn_control(epochs = 1, batch_size = 10, float64 = TRUE))
  expect_equal(fit$family, "gaussian")
  expect_equal(dim(fit$pred), c(2L, 4L, 2L))
  expect_equal(dim(fit$pred_mean), c(4L, 2L))
  expect_equal(fit$rmse, apply(fit$pred, 1, function(m) sqrt(mean((m - y[1:4, ])^2))))
  expect_equal(predict(fit, newx = x[1:4, ], type = "draws"), fit$pred, tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(tail(fit$layers$out, 1), 2L)
  yb <- matrix(rbinom(n * 3, 1, 0.5), n, 3)
  fb <- wbb_nn(x, yb, model = nn_mlp(4), family = "binomial", draws = 2, newx = x[1:4, ], newy = yb[1:4, ],
               seed = 2, quiet = TRUE, control = nn_control(epochs = 1, batch_size = 10))
  expect_equal(dim(fb$pred), c(2L, 4L, 3L))
  expect_true(all(fb$pred > 0 & fb$pred < 1))
  expect_true(all(fb$history$accuracy >= 0 & fb$history$accuracy <= 1))  # over examples and outputs
  expect_equal(fb$accuracy, apply(fb$pred, 1, function(m) mean((m > 0.5) == yb[1:4, ])))
  expect_error(wbb_nn(x, y, model = nn_mlp(5), draws = 1, newx = x[1:4, ], newy = y[1:4, 1], quiet = TRUE),
               class = "scalebayes_error_input", regexp = "2 columns")
  expect_error(wbb_nn(x, cbind(y, 1), model = nn_mlp(5), draws = 1, newx = x[1:4, ], newy = y[1:4, ], quiet = TRUE),
               class = "scalebayes_error_input", regexp = "3 columns")
  expect_error(wbb_nn(x, y, model = nn_mlp(5), family = "multinomial", draws = 1, quiet = TRUE),
               class = "scalebayes_error_input", regexp = "one class per example")
  expect_error(wbb_nn(x, y[1:10, ], model = nn_mlp(5), draws = 1, quiet = TRUE), class = "scalebayes_error_input")
  expect_error(sgld_sa(x, y[1:10, ], model = nn_mlp(5), iterations = 10, quiet = TRUE), class = "scalebayes_error_input")
})

test_that("device = \"auto\" is resolved by the engine's one rule", {
  skip_if_no_torch()
  expect_identical(scalebayes:::check_backend("auto"), if (sb_torch_available("cuda")) "cuda" else "cpu")
  expect_identical(scalebayes:::check_backend("cpu"), "cpu")
  expect_error(scalebayes:::check_backend("gpu"), class = "scalebayes_error_input")
})

test_that("every network function accepts an nn_sequential() specification", {
  skip_if_no_torch()
  set.seed(8)
  n <- 30
  x <- array(runif(n * 6 * 6), c(n, 1, 6, 6))
  y <- factor(sample(c("a", "b", "c"), n, TRUE))
  net <- nn_sequential(layer_conv2d(2, 3), layer_tanh(), layer_avgpool2d(2), layer_flatten(), layer_dropout(0.1),
                       layer_dense(5), layer_sigmoid())
  w <- wbb(x, y, model = net, draws = 2, keep_draws = TRUE, seed = 1, quiet = TRUE,
           control = nn_control(epochs = 1, batch_size = 10))
  expect_s3_class(w, "sb_wbb_nn")
  expect_equal(ncol(w$weights), (2 * 9 + 2) + (18 * 5 + 5) + (5 * 3 + 3))
  adv <- nn_adversarial(w, x, y, zeta = 0, clip = NULL)
  expect_equal(adv$accuracy, mean(predict(w, newx = x, type = "class") == y))
  s <- sgld_sa_engine(x, y, model = net, iterations = 20, batch_size = 10, keep_draws = TRUE, seed = 2, quiet = TRUE)
  expect_s3_class(s, "sb_sgld_sa_nn")
  expect_equal(ncol(s$weights), ncol(w$weights))
  expect_error(wbb_nn(x, y, model = list(layers = list()), draws = 1, quiet = TRUE), class = "scalebayes_error_input",
               regexp = "nn_sequential")
})
