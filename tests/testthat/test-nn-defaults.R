# First calls with default settings give sensible results (issue: "defaults a first call can trust").

skip_if_no_torch()

test_that("the centre of the network warm-up grid (net_lr / N of the sampler table, the fixed default before) fits standardized Boston", {
  skip_if_not_installed("MASS")
  data(Boston, package = "MASS", envir = environment())
  x <- as.matrix(Boston[, -14]); y <- Boston$medv
  set.seed(1); te <- sample(nrow(x), 51)
  xs <- scale(x, colMeans(x[-te, ]), apply(x[-te, ], 2, sd))
  for (s in c("sghmc", "sgld")) {
    f <- sgld_sa_engine(xs[-te, ], y[-te], model = nn_mlp(50), sampler = s, epochs = 200, batch_size = 50,
                 newx = xs[te, ], newy = y[te], seed = 1, quiet = TRUE, threads = 1)
    # measured: SGHMC 3.1, SGLD 3.1 with the response standardized too (the default since standardize = TRUE for
    # networks); x standardized and y as given (standardize = FALSE): 3.6, 3.2; the old step default 1e-3 gave about 25
    expect_lt(f$rmse_mean, 4)
    expect_equal(f$settings$step_size, c(sgld = 0.3, sghmc = 0.03)[[s]] / length(y[-te]))
  }
})

test_that("the centre of the network warm-up grid trains the 128-64 MNIST MLP without diverging", {
  skip_if_fast_tier()
  m <- tryCatch(mnist_digits(), error = function(e) NULL)
  skip_if(is.null(m), "MNIST digits not available")
  n <- 5000  # mnist_digits() is in a fixed random order: every class is in the first 5000
  x <- matrix(m$x[seq_len(n), , ], n) / max(m$x)
  y <- factor(m$y[seq_len(n)])
  te <- 4001:5000
  for (s in c("sghmc", "sgld")) {
    f <- sgld_sa_engine(x[-te, ], y[-te], model = nn_mlp(c(128, 64)), sampler = s, epochs = 5, newx = x[te, ],
                 newy = y[te], seed = 1, quiet = TRUE, threads = 1)
    expect_true(all(is.na(f$diverged_at)))
    # measured here: SGHMC 0.88, SGLD 0.88 on pixels standardized per column (the default; standardize = FALSE:
    # 0.78, 0.83); chance 0.1; the old step default diverged
    expect_gt(f$accuracy_mean, 0.7)
  }
})

test_that("class labels never fit a gaussian network silently", {
  x <- matrix(rnorm(60), 30, 2)
  y01 <- rep(c(0, 1), 15)
  f <- wbb_nn(x, y01, model = nn_mlp(2), draws = 1, epochs = 1, quiet = TRUE, seed = 1)
  expect_equal(f$family, "binomial")  # numeric 0/1: binomial, as the help says
  digits <- rep(0:9, 3)
  expect_warning(g <- wbb_nn(x, digits, model = nn_mlp(2), draws = 1, epochs = 1, quiet = TRUE, seed = 1),
                 "factor", class = "scalebayes_warning_family")
  expect_equal(g$family, "gaussian")
  expect_no_warning(wbb_nn(x, digits, family = "gaussian", model = nn_mlp(2), draws = 1, epochs = 1, quiet = TRUE))
  expect_equal(wbb_nn(x, factor(digits), model = nn_mlp(2), draws = 1, epochs = 1, quiet = TRUE)$family,
               "multinomial")
})

test_that("the deprecated network argument names still work, with a classed warning", {
  x <- matrix(rnorm(60), 30, 2)
  y <- factor(rep(c("a", "b"), 15))
  a <- wbb_nn(x, y, model = nn_mlp(2), draws = 2, epochs = 1, quiet = TRUE, seed = 3)
  expect_warning(b <- wbb_nn(x, y, model = nn_mlp(2), draws = 2, epochs = 1, quiet = TRUE, seed = 3,
                             keep_weights = TRUE), class = "scalebayes_warning_deprecated")
  expect_identical(a$weights, b$weights)
  expect_error(wbb_nn(x, y, model = nn_mlp(2), keep_weights = TRUE, keep_draws = TRUE), "keep_draws")
  expect_warning(c1 <- wbb_nn(x, y, model = nn_mlp(2), draws = 2, quiet = TRUE, seed = 3,
                              control = nn_control(epochs = 1, chunks = 2)), class = "scalebayes_warning_deprecated")
  expect_identical(c1$weights, a$weights)
  # epochs / batch_size at the top level are nn_control()'s
  d <- wbb_nn(x, y, model = nn_mlp(2), draws = 2, quiet = TRUE, seed = 3, control = nn_control(epochs = 1))
  expect_identical(d$weights, a$weights)
  expect_warning(s <- sgld_sa_engine(x, y, model = nn_mlp(2), iterations = 20, quiet = TRUE, seed = 1, keep = 3),
                 class = "scalebayes_warning_deprecated")
  expect_equal(nrow(s$weights), 3)  # at most 3 stored draws per chain
})

test_that("sgld_sa() network chains through future give the draws of one process", {
  skip_if_not_installed("future.apply")
  x <- matrix(rnorm(80), 40, 2)
  y <- x[, 1] + rnorm(40)
  one <- sgld_sa_engine(x, y, model = nn_mlp(3), iterations = 40, chains = 3, seed = 9, quiet = TRUE, threads = 1)
  future::plan(future::sequential)
  on.exit(future::plan(future::sequential), add = TRUE)
  fut <- sgld_sa_engine(x, y, model = nn_mlp(3), iterations = 40, chains = 3, seed = 9, quiet = TRUE, threads = 1,
                 future = TRUE, chunks = 2)
  expect_identical(fut$weights, one$weights)
  expect_identical(fut$chain, one$chain)
  expect_identical(fut$weights_final, one$weights_final)
})

test_that("keep_draws stores evenly spaced draws; the running means use every kept iteration", {
  x <- matrix(rnorm(80), 40, 2)
  y <- x[, 1] + rnorm(40)
  all <- sgld_sa_engine(x, y, model = nn_mlp(3), iterations = 100, burnin = 50, seed = 4, quiet = TRUE, keep_draws = Inf,
                 newx = x[1:3, ])
  few <- sgld_sa_engine(x, y, model = nn_mlp(3), iterations = 100, burnin = 50, seed = 4, quiet = TRUE, keep_draws = 10,
                 newx = x[1:3, ])
  expect_equal(nrow(all$weights), 50)
  expect_identical(few$weights, all$weights[seq(1, 50, by = 5), ])
  expect_identical(few$pred, all$pred[seq(1, 50, by = 5), ])
  expect_identical(few$pred_mean, all$pred_mean)
  expect_identical(few$weights_mean, all$weights_mean)
})
