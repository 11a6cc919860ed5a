# nn_adversarial(): FGSM against the model average of kept draws. The adversarial inputs of softmax / logistic
# regressions against the closed-form gradient of the averaged cross-entropy (one and several draws), the
# clean accuracy against predict(), a trained model losing accuracy under attack, bad inputs.

softmax_rows <- function(eta) {
  e <- exp(eta - apply(eta, 1, max))
  e / rowSums(e)
}

# Per-draw softmax-regression weights (rows of a fit's weights: K x p matrix row-major, then K biases) and
# the class probabilities of each draw at x.
softmax_draws <- function(weights, x, K) {
  p <- ncol(x)
  lapply(seq_len(nrow(weights)), function(t) {
    w <- weights[t, ]
    W <- matrix(w[1:(K * p)], K, p, byrow = TRUE)
    list(W = W, P = softmax_rows(sweep(x %*% t(W), 2, w[K * p + 1:K], "+")))
  })
}

# Closed form: L = -log pbar_y, pbar = mean_t softmax(x W_t' + b_t); grad_x L = -(1 / (T pbar_y)) sum_t
# P_ty (W_t[y, ] - sum_k P_tk W_t[k, ]).
fgsm_softmax_r <- function(weights, x, yi, K, zeta, clip) {
  d <- softmax_draws(weights, x, K)
  pbar <- Reduce(`+`, lapply(d, `[[`, "P")) / length(d)
  idx <- cbind(seq_len(nrow(x)), yi + 1L)
  g <- Reduce(`+`, lapply(d, function(m) m$P[idx] * (m$W[yi + 1L, , drop = FALSE] - m$P %*% m$W)))
  g <- -g / (length(d) * pbar[idx])
  lapply(zeta, function(z) pmin(pmax(x + z * sign(g), clip[1]), clip[2]))
}

# n examples of 3 uniform inputs with random labels a / b / c.
three_class_data <- function(seed, n = 60) {
  set.seed(seed)
  list(x = matrix(runif(n * 3), n, 3), y = factor(sample(c("a", "b", "c"), n, TRUE)), n = n)
}

test_that("against a softmax regression the adversarial inputs are x + zeta * sign(closed-form gradient)", {
  skip_if_no_torch()
  d <- three_class_data(11)
  x <- d$x; y <- d$y; n <- d$n
  zeta <- c(0, 0.05, 0.3)
  for (draws in c(1, 3)) {
    fit <- wbb_nn(x, y, model = nn_mlp(integer()), draws = draws, keep_draws = TRUE, seed = 3, quiet = TRUE,
                  control = nn_control(epochs = 2, batch_size = 10, float64 = TRUE), standardize = FALSE)
    for (clip in list(NULL, c(0.1, 0.9))) {
      adv <- nn_adversarial(fit, x, y, zeta = zeta, clip = clip, keep_x = TRUE)
      want <- fgsm_softmax_r(fit$weights, x, as.integer(y) - 1L, 3L, zeta, clip %||% c(-Inf, Inf))
      for (z in seq_along(zeta)) expect_equal(attr(adv, "x_adv")[[z]], want[[z]], tolerance = 1e-12)
      expect_equal(adv$zeta, zeta)
      expect_equal(adv$n, rep(n, 3))
      expect_equal(attr(adv, "draws"), draws)
    }
  }
})

test_that("the authors' variant: attack from some draws at the predicted class, every draw evaluated", {
  skip_if_no_torch()
  d <- three_class_data(13)
  x <- d$x; y <- d$y
  fit <- wbb_nn(x, y, model = nn_mlp(integer()), draws = 4, keep_draws = TRUE, seed = 5, quiet = TRUE,
                control = nn_control(epochs = 2, batch_size = 10, float64 = TRUE), standardize = FALSE)
  zeta <- c(0, 0.4)
  src <- c(4, 2)
  W <- fit$weights
  avg_prob <- function(rows, xx) Reduce(`+`, lapply(softmax_draws(W[rows, , drop = FALSE], xx, 3L), `[[`, "P")) / length(rows)
  pred_src <- max.col(avg_prob(src, x), ties.method = "first") - 1L
  for (label in c("true", "predicted")) {
    adv <- nn_adversarial(fit, x, y, zeta = zeta, clip = c(0, 1), keep_x = TRUE, attack_draws = src, label = label)
    yi <- if (label == "true") as.integer(y) - 1L else pred_src
    want <- fgsm_softmax_r(W[src, , drop = FALSE], x, yi, 3L, zeta, c(0, 1))
    expect_equal(attr(adv, "x_adv")[[2]], want[[2]], tolerance = 1e-12)
    # evaluated by the average of all four draws against the true labels
    acc <- mean(max.col(avg_prob(1:4, want[[2]]), ties.method = "first") == as.integer(y))
    expect_equal(adv$accuracy[2], acc)
    expect_equal(attr(adv, "attack_draws"), as.integer(src))
    expect_equal(attr(adv, "label"), label)
  }
  expect_false(identical(pred_src, as.integer(y) - 1L))  # the two labels differ here, so both were exercised
  expect_error(nn_adversarial(fit, x, y, attack_draws = 5), "attack_draws", class = "scalebayes_error_input")
  expect_error(nn_adversarial(fit, x, y, attack_draws = c(1, 1)), "attack_draws", class = "scalebayes_error_input")
  expect_error(nn_adversarial(fit, x, y, label = "max"), "label", class = "scalebayes_error_input")
})

test_that("against a logistic regression (binomial) the adversarial inputs follow sign((p - y) w)", {
  skip_if_no_torch()
  set.seed(12)
  n <- 50
  x <- matrix(rnorm(n * 2), n, 2)
  y <- as.integer(x[, 1] + rnorm(n) > 0)
  fit <- wbb_nn(x, y, model = nn_mlp(integer()), family = "binomial", draws = 1, keep_draws = TRUE, seed = 4,
                quiet = TRUE, control = nn_control(epochs = 2, batch_size = 10, float64 = TRUE), standardize = FALSE)
  w <- unname(fit$weights[1, ])
  pr <- plogis(drop(x %*% w[1:2]) + w[3])
  g <- (pr - y) %o% w[1:2]
  adv <- nn_adversarial(fit, x, y, zeta = c(0, 0.2), clip = NULL, keep_x = TRUE)
  expect_equal(attr(adv, "x_adv")[[2]], x + 0.2 * sign(g), tolerance = 1e-12)
  expect_equal(attr(adv, "x_adv")[[1]], x)
  pa <- plogis(drop(attr(adv, "x_adv")[[2]] %*% w[1:2]) + w[3])
  expect_equal(adv$accuracy[2], mean((pa > 0.5) == y))
  expect_equal(adv$accuracy[2], adv$mean_draw_accuracy[2])  # one draw
})

test_that("at zeta = 0 the accuracies are those of predict() (model average and single draws)", {
  skip_if_no_torch()
  set.seed(13)
  n <- 150
  x <- matrix(runif(n * 4), n, 4)
  y <- factor(ifelse(x[, 1] + x[, 2] > 1, "a", ifelse(x[, 3] > 0.5, "b", "c")))
  fit <- wbb_nn(x, y, model = nn_mlp(6), draws = 4, keep_draws = TRUE, seed = 8, quiet = TRUE,
                control = nn_control(epochs = 3, batch_size = 16, float64 = TRUE))
  adv <- nn_adversarial(fit, x, y, zeta = c(0, 0.1), batch = 40)  # chunks of 40: 150 is not a multiple
  expect_equal(adv$accuracy[1], mean(predict(fit, newx = x, type = "class") == y))
  dr <- predict(fit, newx = x, type = "draws")
  per_draw <- vapply(seq_len(4), function(t) mean(max.col(dr[t, , ], "first") == as.integer(y)), numeric(1))
  expect_equal(adv$mean_draw_accuracy[1], mean(per_draw))
  expect_equal(nn_adversarial(fit, x, y, zeta = c(0, 0.1), batch = 1000)$accuracy, adv$accuracy)
})

test_that("a trained network loses accuracy under attack (wbb_nn and sgld_sa fits); plot method", {
  skip_if_no_torch()
  set.seed(14)
  n <- 300
  x <- matrix(runif(n * 4), n, 4)
  y <- factor(ifelse(x[, 1] > x[, 2], "a", "b"))
  fit <- wbb_nn(x, y, model = nn_mlp(16), draws = 3, keep_draws = TRUE, seed = 5, quiet = TRUE,
                control = nn_control(epochs = 30, batch_size = 32, lr = 0.01))
  adv <- nn_adversarial(fit, x, y)
  expect_s3_class(adv, "sb_nn_adversarial")
  expect_named(adv, c("zeta", "accuracy", "mean_draw_accuracy", "n"))
  expect_gt(adv$accuracy[1], 0.8)
  expect_lt(adv$accuracy[6], adv$accuracy[1] - 0.3)
  pdf(NULL)
  expect_identical(plot(adv), adv)
  dev.off()
  sg <- sgld_sa_engine(x, y, model = nn_mlp(8, dropout = 0.2), iterations = 200, burnin = 100, thin = 20,
                batch_size = 30, keep_draws = TRUE, seed = 2, quiet = TRUE)
  a2 <- nn_adversarial(sg, x, y, zeta = c(0, 0.5))
  expect_equal(attr(a2, "draws"), nrow(sg$weights))
  expect_equal(a2$accuracy[1], mean(predict(sg, newx = x, type = "class") == y), tolerance = 2 / n)
  expect_lt(a2$accuracy[2], a2$accuracy[1])
})

test_that("bad inputs are classed errors naming the argument", {
  skip_if_no_torch()
  set.seed(15)
  x <- matrix(runif(40 * 3), 40, 3)
  y <- factor(sample(c("a", "b", "c"), 40, TRUE))
  ctl <- nn_control(epochs = 1)
  fit <- wbb_nn(x, y, model = nn_mlp(3), draws = 2, keep_draws = TRUE, seed = 1, quiet = TRUE, control = ctl)
  nokeep <- wbb_nn(x, y, model = nn_mlp(3), draws = 2, seed = 1, quiet = TRUE, control = ctl, keep_draws = FALSE)
  gauss <- wbb_nn(x, x[, 1], model = nn_mlp(3), draws = 2, keep_draws = TRUE, seed = 1, quiet = TRUE,
                  control = ctl)
  expect_error(nn_adversarial(nokeep, x, y), class = "scalebayes_error_input", regexp = "keep_draws")
  expect_error(nn_adversarial(gauss, x, x[, 1]), class = "scalebayes_error_input", regexp = "classifier")
  expect_error(nn_adversarial(list(), x, y), class = "scalebayes_error_input", regexp = "fit")
  expect_error(nn_adversarial(fit, x[, 1:2], y), class = "scalebayes_error_input", regexp = "example shape")
  expect_error(nn_adversarial(fit, x, factor(rep("z", 40))), class = "scalebayes_error_input", regexp = "not trained on")
  expect_error(nn_adversarial(fit, x, y[1:5]), class = "scalebayes_error_input", regexp = "one value per example")
  expect_error(nn_adversarial(fit, x, y, zeta = -0.1), class = "scalebayes_error_input", regexp = "zeta")
  expect_error(nn_adversarial(fit, x, y, zeta = c(0, NA)), class = "scalebayes_error_input", regexp = "zeta")
  expect_error(nn_adversarial(fit, x, y, clip = c(1, 0)), class = "scalebayes_error_input", regexp = "clip")
  expect_error(nn_adversarial(fit, x, y, batch = 0), class = "scalebayes_error_input", regexp = "batch")
  x0 <- x
  invisible(nn_adversarial(fit, x, y, zeta = 0.3))
  expect_identical(x, x0)  # the caller's data are never written
})

test_that("image inputs: the caller's layout is kept; the direction is the sign of the finite-difference gradient", {
  skip_if_no_torch()
  set.seed(16)
  img <- array(runif(12 * 2 * 6 * 6), c(12, 2, 6, 6))
  lab <- factor(sample(c("u", "v", "w"), 12, TRUE))
  fit <- wbb_nn(img, lab, model = nn_cnn(channels = 2, kernel = 3, hidden = 4, dropout = 0.5, activation = "tanh"), draws = 2,
                keep_draws = TRUE, seed = 3, quiet = TRUE, control = nn_control(epochs = 1, float64 = TRUE))
  adv <- nn_adversarial(fit, img, lab, zeta = c(0, 0.1), clip = NULL, keep_x = TRUE)
  xa <- attr(adv, "x_adv")
  expect_identical(xa[[1]], img)
  expect_equal(dim(xa[[2]]), dim(img))
  d <- abs(xa[[2]] - img)
  expect_true(all(abs(d - 0.1) < 1e-12 | d == 0))  # sign(0) = 0 leaves an input where it is
  expect_gt(mean(d > 0), 0.5)
  # central differences of the model average's cross-entropy (from predict(), in R) at every 7th input
  loss <- function(xx) {
    pb <- apply(predict(fit, newx = xx, type = "draws"), c(2L, 3L), mean)
    -sum(log(pb[cbind(seq_len(12), as.integer(lab))]))
  }
  k <- which(seq_along(img) %% 7 == 0)
  fd <- vapply(k, function(j) {
    a <- img
    b <- img
    a[j] <- a[j] + 1e-6
    b[j] <- b[j] - 1e-6
    (loss(a) - loss(b)) / 2e-6
  }, numeric(1))
  big <- abs(fd) > 1e-7
  expect_gt(sum(big), 100)
  expect_equal(sign(xa[[2]][k] - img[k])[big], sign(fd)[big])
  g <- array(runif(10 * 5 * 5), c(10, 5, 5))  # n x height x width: one channel
  gl <- factor(sample(c("u", "v"), 10, TRUE))
  f2 <- wbb_nn(g, gl, model = nn_cnn(channels = 2, kernel = 3, hidden = 3), draws = 1, keep_draws = TRUE,
               seed = 3, quiet = TRUE, control = nn_control(epochs = 1, float64 = TRUE))
  expect_identical(attr(nn_adversarial(f2, g, gl, zeta = 0, keep_x = TRUE), "x_adv")[[1]], g)
})
