# Multinomial family (softmax, ungrouped and grouped lasso) of the coordinate-descent engine (issue 59): checked
# against glmnet (an independent solver, thresh = 1e-14) and against the exact optimality conditions of the
# objective written out here in R (not by the engine).

sim_multinomial <- function(n, p, K, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  colnames(x) <- paste0("x", seq_len(p))
  B <- matrix(0, p, K)
  B[1, ] <- seq(-1, 1, length.out = K)
  B[2, 1] <- 0.8
  B[3, K] <- -0.7
  eta <- x %*% B
  pr <- exp(eta) / rowSums(exp(eta))
  y <- factor(apply(pr, 1, function(q) sample(K, 1, prob = q)), levels = seq_len(K), labels = letters[seq_len(K)])
  list(x = x, y = y)
}

# The sum-scale objective on the scale of x (standardize = FALSE): sum_i w_i [lse(eta_i) - eta_{i y_i}] + the
# penalty (ungrouped: lambda sum_j pf_j sum_k |b_jk|; grouped: lambda sum_j pf_j ||b_j.||_2). co: (p + 1) x K.
mn_objective <- function(co, x, y, w, pf, lambda, grouped) {
  eta <- cbind(1, x) %*% co
  m <- apply(eta, 1, max)
  lse <- m + log(rowSums(exp(eta - m)))
  loss <- sum(w * (lse - eta[cbind(seq_len(nrow(x)), as.integer(y))]))
  B <- co[-1L, , drop = FALSE]
  loss + lambda * sum(pf * if (grouped) sqrt(rowSums(B^2)) else rowSums(abs(B)))
}

# Largest KKT violation relative to lambda (coefficients) and the intercepts' gradient (relative to the size of
# the gradient terms), written out in R.
mn_kkt <- function(co, x, y, w, pf, lambda, grouped) {
  eta <- cbind(1, x) %*% co
  pr <- exp(eta - apply(eta, 1, max))
  pr <- pr / rowSums(pr)
  Y <- diag(ncol(co))[as.integer(y), , drop = FALSE]
  R <- w * (Y - pr)
  G <- crossprod(x, R)  # p x K, minus the loss derivative
  B <- co[-1L, , drop = FALSE]
  l1 <- lambda * pf
  e <- if (grouped) {
    nb <- sqrt(rowSums(B^2))
    ifelse(nb == 0, pmax(0, sqrt(rowSums(G^2)) - l1), sqrt(rowSums((G - l1 * B / pmax(nb, 1e-300))^2)))
  } else {
    ifelse(B == 0, pmax(0, abs(G) - l1), abs(G - sign(B) * l1))
  }
  c(coef = max(e) / lambda, intercept = max(abs(colSums(R))) / sum(w))
}

glmnet_mn_coef <- function(x, y, w, pf, lambda, type, ...) {
  g <- glmnet::glmnet(x, y, family = "multinomial", weights = w, penalty.factor = pf,
                      lambda = glmnet_lambda(lambda, w, pf), standardize = FALSE, thresh = 1e-14, maxit = 1e6,
                      type.multinomial = type, ...)
  sapply(stats::coef(g), function(v) as.numeric(v))
}

test_that("multinomial weighted_lasso equals glmnet (objective and KKT), ungrouped and grouped, with weights", {
  skip_if_not_installed("glmnet")
  d <- sim_multinomial(150, 6, 4)
  set.seed(2)
  wts <- list(unit = rep(1, 150), exp = rexp(150))
  pf <- c(1, 1, 0.5, 1, 2, 1)
  for (type in c("ungrouped", "grouped")) for (wn in names(wts)) {
    w <- wts[[wn]]
    info <- paste(type, wn)
    lmax <- weighted_lasso(d$x, d$y, family = "multinomial", weights = w, penalty_factor = pf, standardize = FALSE,
                           nlambda = 2, type_multinomial = type)$lambda[1]
    lambda <- 0.15 * lmax
    fit <- weighted_lasso(d$x, d$y, family = "multinomial", weights = w, penalty_factor = pf, lambda = lambda,
                          standardize = FALSE, type_multinomial = type)
    co <- coef(fit)
    expect_identical(dim(co), c(7L, 4L))
    expect_identical(colnames(co), letters[1:4])
    ref <- glmnet_mn_coef(d$x, d$y, w, pf, lambda, type)
    # pf rescaled to sum to p: the same problem as ours (glmnet_lambda())
    f_ours <- mn_objective(co, d$x, d$y, w, pf, lambda, type == "grouped")
    f_ref <- mn_objective(ref, d$x, d$y, w, pf, lambda, type == "grouped")
    expect_lte((f_ours - f_ref) / abs(f_ref), 1e-10, label = paste("objective gap", info))
    expect_lte(abs(f_ours - f_ref) / abs(f_ref), 1e-8, label = paste("|objective gap|", info))
    k <- mn_kkt(co, d$x, d$y, w, pf, lambda, type == "grouped")
    expect_lte(k[["coef"]], 1e-8, label = paste("KKT", info))
    expect_lte(k[["intercept"]], 1e-8, label = paste("intercept KKT", info))
    expect_lte(max(fit$kkt), 1e-8)
    # grouped coefficients are centred across classes (the penalty's unique shift), and with them the intercepts
    if (type == "grouped") {
      expect_lt(abs(sum(co[1, ])), 1e-10)
      expect_lt(max(abs(rowSums(co[-1, ]))), 1e-8)
      expect_equal(unname(co), unname(ref), tolerance = 1e-6, info = info)
    }
  }
})

test_that("ungrouped multinomial with a nearly unpenalized feature (a small WBB prior weight) reaches the optimum", {
  skip_if_not_installed("glmnet")
  # iris with the prior weights of a WBB draw that once stalled at a KKT violation of 5e-3 (the loss is flat
  # along a common shift of a feature's coefficients; the solver now moves to the penalty's best shift)
  x <- scale(as.matrix(iris[, 1:4]))
  pf <- c(0.005977112, 0.818407190, 1.673313179, 1.503958085)
  set.seed(106)
  for (w in list(rep(1, 150), rexp(150))) {
    lmax <- weighted_lasso(x, iris$Species, family = "multinomial", standardize = FALSE, nlambda = 2)$lambda[1]
    fit <- weighted_lasso(x, iris$Species, family = "multinomial", weights = w, penalty_factor = pf,
                          lambda = 0.1 * lmax, standardize = FALSE)
    co <- coef(fit)
    expect_lte(mn_kkt(co, x, iris$Species, w, pf, 0.1 * lmax, FALSE)[["coef"]], 1e-8)
    ref <- glmnet_mn_coef(x, iris$Species, w, pf, 0.1 * lmax, "ungrouped")
    f_ours <- mn_objective(co, x, iris$Species, w, pf, 0.1 * lmax, FALSE)
    f_ref <- mn_objective(ref, x, iris$Species, w, pf, 0.1 * lmax, FALSE)
    expect_lte((f_ours - f_ref) / abs(f_ref), 1e-10)
  }
})

test_that("multinomial standardize = TRUE and the path: every lambda an optimum, lambda_max zeroes the features", {
  d <- sim_multinomial(120, 5, 3, seed = 4)
  for (type in c("ungrouped", "grouped")) {
    fit <- weighted_lasso(d$x, d$y, family = "multinomial", nlambda = 8, type.multinomial = type)
    expect_identical(dim(fit$coefficients), c(6L, 3L, 8L))
    expect_true(all(fit$coefficients[-1, , 1] == 0))
    expect_true(any(fit$coefficients[-1, , 2] != 0))
    expect_lte(max(fit$kkt), 1e-8)
    # standardized objective: columns by their population sd (unweighted); KKT written out in R on that scale
    s <- sqrt(colMeans(sweep(d$x, 2, colMeans(d$x))^2))
    xs <- sweep(d$x, 2, s, "/")
    for (l in c(3, 8)) {
      co <- fit$coefficients[, , l]
      cs <- rbind(co[1, ], co[-1, , drop = FALSE] * s)  # the same linear predictor with x / s
      k <- mn_kkt(cs, xs, d$y, rep(1, 120), rep(1, 5), fit$lambda[l], type == "grouped")
      expect_lte(k[["coef"]], 1e-8)
    }
  }
  # without intercept: still an optimum
  fit0 <- weighted_lasso(d$x, d$y, family = "multinomial", lambda = 10, intercept = FALSE, standardize = FALSE)
  expect_true(all(coef(fit0)[1, ] == 0))
  k <- mn_kkt(coef(fit0), d$x, d$y, rep(1, 120), rep(1, 5), 10, FALSE)
  expect_lte(k[["coef"]], 1e-8)
})

test_that("multinomial predict(link / response / class), summary and print of a weighted_lasso fit", {
  d <- sim_multinomial(100, 4, 3, seed = 5)
  fit <- weighted_lasso(d$x, d$y, family = "multinomial", lambda = 20, standardize = FALSE)
  co <- coef(fit)
  eta <- cbind(1, d$x[1:5, ]) %*% co
  expect_equal(predict(fit, d$x[1:5, ], type = "link"), eta, ignore_attr = TRUE)
  pr <- predict(fit, d$x[1:5, ])  # the default type, "response" (?predict-types)
  expect_equal(unname(pr), unname(exp(eta) / rowSums(exp(eta))))
  expect_identical(colnames(pr), c("a", "b", "c"))
  cl <- predict(fit, d$x[1:5, ], type = "class")
  expect_s3_class(cl, "factor")
  expect_identical(as.character(cl), c("a", "b", "c")[apply(eta, 1, which.max)])
  expect_equal(dim(fitted(fit)), c(100L, 3L))
  expect_error(residuals(fit), class = "scalebayes_error_not_applicable")
  s <- summary(fit)
  expect_true(s$path$dev_ratio > 0 && s$path$dev_ratio < 1)
  expect_output(print(s), "one column per class")
  expect_output(print(fit), "3 classes")
  path <- weighted_lasso(d$x, d$y, family = "multinomial", nlambda = 4)
  expect_identical(dim(predict(path, d$x[1:2, ], type = "response")), c(2L, 3L, 4L))
  expect_identical(dim(predict(path, d$x[1:2, ], type = "class")), c(2L, 4L))
})

test_that("bad multinomial input: classed errors naming the argument", {
  d <- sim_multinomial(60, 3, 3, seed = 6)
  err <- function(expr, arg) {
    e <- expect_error(expr, class = "scalebayes_error")
    expect_identical(e$arg, arg)
  }
  y1 <- d$y
  y1[1] <- "c"
  y1[d$y == "c"] <- "a"
  y1[1] <- "c"  # class c has one example
  err(weighted_lasso(d$x, y1, family = "multinomial", lambda = 1), "y")
  err(weighted_lasso(d$x, factor(rep("a", 60)), family = "multinomial", lambda = 1), "y")
  yna <- d$y
  yna[3] <- NA
  err(wbb(d$x, yna, family = "multinomial", lambda = 1, draws = 2), "y")
  err(cv_weighted_lasso(d$x, factor(d$y, levels = c(levels(d$y), "z")), family = "multinomial"), "y")
  err(weighted_lasso(d$x, d$y, family = "multinomial", lambda = 1, type_multinomial = "x"), "type_multinomial")
  err(weighted_lasso(d$x, d$y, family = "multinomial", lambda = 1, type_multinomial = "grouped",
                     type.multinomial = "grouped"), "type.multinomial")
  err(weighted_lasso(d$x, d$y, family = "multinomial", lambda = 1, offset = rep(0, 60)), "offset")
  err(wbb(d$x, d$y, family = "multinomial", lambda = 1, draws = 2, lower_limits = 0), "lower_limits")
  err(cv_weighted_lasso(d$x, d$y, family = "multinomial", type_measure = "auc"), "type_measure")
})

test_that("cv_weighted_lasso multinomial: deviance, class, mse and mae equal cv.glmnet with the same folds", {
  skip_if_not_installed("glmnet")
  d <- sim_multinomial(120, 4, 3, seed = 7)
  fold <- rep_len(1:4, 120)
  for (type in c("ungrouped", "grouped")) for (m in c("deviance", "class", "mse", "mae")) {
    cv <- cv_weighted_lasso(d$x, d$y, family = "multinomial", foldid = fold, standardize = FALSE, nlambda = 12,
                            type_measure = m, type_multinomial = type, quiet = TRUE)
    g <- glmnet::cv.glmnet(d$x, d$y, family = "multinomial", foldid = fold, standardize = FALSE,
                           lambda = cv$lambda / 120, type.measure = m, type.multinomial = type, thresh = 1e-14,
                           maxit = 1e6)
    info <- paste(type, m)
    expect_equal(cv$cvm, g$cvm, tolerance = if (m == "class") 1e-12 else 1e-6, info = info)
    expect_equal(cv$cvsd, g$cvsd, tolerance = if (m == "class") 1e-12 else 1e-5, info = info)
  }
  expect_identical(dim(coef(cv, s = "lambda.min")), c(5L, 3L))
  expect_s3_class(predict(cv, d$x[1:3, ], type = "class"), "factor")
  # a lambda off the path: an exact refit
  expect_identical(dim(coef(cv, s = c(30, 3))), c(5L, 3L, 2L))
})

test_that("wbb multinomial: draws are the weighted optima (glmnet at the recorded weights), thread-invariant", {
  skip_if_not_installed("glmnet")
  d <- sim_multinomial(80, 4, 3, seed = 8)
  obs_w <- rep(c(1, 2), 40)
  for (type in c("ungrouped", "grouped")) {
    f1 <- wbb(d$x, d$y, family = "multinomial", lambda = 8, draws = 6, seed = 3, threads = 1, quiet = TRUE,
              standardize = FALSE, prior_weights = "none", weights = obs_w, type_multinomial = type)
    f2 <- wbb(d$x, d$y, family = "multinomial", lambda = 8, draws = 6, seed = 3, threads = 2, quiet = TRUE,
              standardize = FALSE, prior_weights = "none", weights = obs_w, type_multinomial = type)
    expect_identical(f1$draws, f2$draws)
    f3 <- wbb(d$x, d$y, family = "multinomial", lambda = 8, draws = 6, seed = 3, threads = 1, quiet = TRUE,
              standardize = FALSE, prior_weights = "none", weights = obs_w, type_multinomial = type, chunks = 3)
    expect_identical(f1$draws, f3$draws)
    expect_identical(ncol(f1$draws), 15L)
    expect_identical(colnames(f1$draws)[1:2], c("a:(Intercept)", "a:x1"))
    expect_lte(f1$diagnostics$kkt_max, 1e-8)
    # draw 1's data weights: the driver's stream (the helper shared with the other WBB tests)
    wd <- wbb_recorded_weights(80, 1, 3, prior = "none")$w[1, ] * obs_w
    co <- matrix(f1$draws[1, ], 5, 3)
    ref <- glmnet_mn_coef(d$x, d$y, wd, rep(1, 4), 8, type)
    f_ours <- mn_objective(co, d$x, d$y, wd, rep(1, 4), 8, type == "grouped")
    f_ref <- mn_objective(ref, d$x, d$y, wd, rep(1, 4), 8, type == "grouped")
    expect_lte(abs(f_ours - f_ref) / abs(f_ref), 1e-8)
    expect_lte(mn_kkt(co, d$x, d$y, wd, rep(1, 4), 8, type == "grouped")[["coef"]], 1e-8)
  }
})

test_that("wbb multinomial generics: predict, coef, log_lik, posterior_predict, summary, the formula interface", {
  fit <- wbb(Species ~ ., data = iris, family = "multinomial", lambda = 20, draws = 20, seed = 1, quiet = TRUE)
  expect_s3_class(fit, "sb_wbb")
  co <- coef(fit)
  expect_identical(dim(co), c(5L, 3L))
  expect_identical(colnames(co), levels(iris$Species))
  nd <- iris[c(1, 51, 101), ]
  pr <- predict(fit, nd, type = "response")
  expect_identical(dim(pr$fit), c(3L, 3L))
  expect_equal(rowSums(pr$fit), rep(1, 3))
  # the average over draws of each draw's probabilities
  pd <- predict(fit, nd, type = "response", draws = TRUE)
  expect_identical(dim(pd), c(20L, 3L, 3L))
  expect_equal(pr$fit, apply(pd, c(2, 3), mean), ignore_attr = TRUE)
  expect_identical(as.character(predict(fit, nd, type = "class")), c("setosa", "versicolor", "virginica"))
  ll <- log_lik(fit)
  expect_identical(dim(ll), c(20L, 150L))
  # log p of the observed class from the draws, written out here
  eta <- cbind(1, as.matrix(iris[, 1:4])) %*% matrix(fit$draws[1, ], 5, 3)
  lp <- eta[cbind(1:150, as.integer(iris$Species))] - log(rowSums(exp(eta)))
  expect_equal(ll[1, ], unname(lp))
  expect_equal(log_lik(fit, newdata = nd)[, 1], ll[, 1])
  pp <- posterior_predict(fit, seed = 1)
  expect_identical(dim(pp), c(20L, 150L))
  expect_true(all(pp %in% 1:3))
  expect_identical(dim(fitted(fit)), c(150L, 3L))
  expect_output(print(fit), "multinomial")
  expect_identical(nrow(summary(fit)), 15L)
  # matrix interface with CV (class measure), grouped
  fitc <- wbb(as.matrix(iris[, 1:4]), iris$Species, family = "multinomial", draws = 5, seed = 2, quiet = TRUE,
              type.multinomial = "grouped", control = wbb_control(nfolds = 3, nlambda = 10, type_measure = "class"))
  expect_true(fitc$lambda > 0)
  expect_lt(max(abs(rowSums(matrix(fitc$draws[1, ], 5, 3)[-1, ]))), 1e-8)
})
