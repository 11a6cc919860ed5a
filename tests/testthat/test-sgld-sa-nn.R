# sgld_sa() for networks: the chain driver of the regression run on a LibTorch model. Exactness against plain
# (full-batch) gradient steps with and without the SSGL prior, an exact Gaussian posterior, thread invariance,
# divergence rollback, pruning and bad inputs.

lin_data <- function(n = 40, seed = 2) {
  set.seed(seed)
  x <- matrix(rnorm(n * 2), n, 2)
  list(x = x, y = drop(x %*% c(1, -0.5)) + 0.3 + rnorm(n))
}

# SGLD with the prior switched off (huge prior variance, no sparse layer), no noise (huge inverse temperature)
# and sigma fixed at 1 is gradient ascent on the log-likelihood.
sgd_control <- function(step, ..., init = NULL) {
  sgmcmc_control(step_size = step, step = sgmcmc_step(schedule = "constant", temperature = 1e300),
                 ssgl = sgmcmc_ssgl(prior_var = 1e300, ...), float64 = TRUE, init = init)
}

test_that("with the prior off and no noise, a network chain is plain gradient descent (full batch, against R)", {
  skip_if_no_torch()
  d <- lin_data()
  n <- nrow(d$x)
  run <- function(step, iters) {
    sgld_sa_engine(d$x, d$y, model = nn_mlp(hidden = integer()), method = "none", sparse_layers = FALSE,
            iterations = iters, burnin = 0, thin = 1, batch_size = n, keep_draws = TRUE, seed = 5, quiet = TRUE,
            control = sgd_control(step), standardize = FALSE)
  }
  init <- run(0, 2)$weights[1, ]  # step 0: the initial network
  eps <- 0.004
  fit <- run(eps, 30)
  theta <- init  # weight[1], weight[2], bias
  X1 <- cbind(d$x, 1)
  path <- matrix(NA, 30, 3)
  for (k in 1:30) {
    theta <- theta + eps * drop(crossprod(X1, d$y - X1 %*% theta))  # (N/n) sum r_i x_i / sigma^2, N = n
    path[k, ] <- theta
  }
  expect_equal(unname(fit$weights), path, tolerance = 1e-12)
  expect_equal(colnames(fit$weights), c("layer1_linear.weight[1]", "layer1_linear.weight[2]", "layer1_linear.bias"))
})

test_that("without noise, the SSGL prior gradient of a sparse layer is the paper's (full batch, against R)", {
  skip_if_no_torch()
  d <- lin_data()
  n <- nrow(d$x)
  run <- function(step) {
    sgld_sa_engine(d$x, d$y, model = nn_mlp(hidden = integer()), method = "none", v0 = 0.1, v1 = 10,
            iterations = 25, burnin = 0, thin = 1, batch_size = n, keep_draws = TRUE, seed = 6, quiet = TRUE,
            control = sgd_control(step, rho_init = 0.3, sigma_init = 2), standardize = FALSE)
  }
  init <- run(0)$weights[1, ]
  eps <- 0.003
  fit <- run(eps)
  k0 <- (1 - 0.3) / 0.1  # kappa0 = (1 - rho) / v0, kappa1 = rho / v1 (method "none": frozen)
  k1 <- 0.3 / 10
  sigma <- 2
  X1 <- cbind(d$x, 1)
  theta <- init
  path <- matrix(NA, 25, 3)
  for (k in 1:25) {
    g <- drop(crossprod(X1, d$y - X1 %*% theta)) / sigma^2
    g[1:2] <- g[1:2] - k0 * sign(theta[1:2]) / sigma - k1 * theta[1:2] / sigma^2  # the bias is not sparse
    theta <- theta + eps * g
    path[k, ] <- theta
  }
  expect_equal(unname(fit$weights), path, tolerance = 1e-12)
})

test_that("one SA step off the cap uses omega = A (1 + Z)^-alpha: A, Z and alpha all enter (network)", {
  # With step size 0 the weights stay at their start and one SA step (iteration 2) moves each inclusion
  # probability to (1 - omega) rho_0 + omega g(theta): every reported rho is affine in omega. Two runs at the
  # cap (omega = 0.1 and 0.3, whatever A, Z, alpha) fix that line; the runs off the cap must lie on it at
  # omega = A (1 + Z)^-alpha, for three settings that each change one of A, Z, alpha.
  skip_if_no_torch()
  d <- lin_data()
  run <- function(A, Z, alpha, cap) {
    sgld_sa_engine(d$x, d$y, model = nn_mlp(hidden = integer()), method = "sa", v0 = 0.1, v1 = 10,
            iterations = 2, burnin = 0, thin = 1, batch_size = nrow(d$x), seed = 6, quiet = TRUE,
            control = sgd_control(0, rho_init = 0.4, sigma_init = 2, delta_init = 0.3, sa_A = A, sa_Z = Z,
                                  sa_alpha = alpha, sa_cap = cap))$inclusion
  }
  r1 <- run(1e6, 0, 0.5, 0.1)
  r3 <- run(1e6, 0, 0.5, 0.3)
  slope <- (r3 - r1) / 0.2
  expect_gt(max(abs(slope)), 1e-3)  # the SA step does move rho
  for (set in list(c(A = 2, Z = 3, alpha = 0.6), c(A = 1.5, Z = 3, alpha = 0.6), c(A = 2, Z = 8, alpha = 0.9))) {
    w <- set[["A"]] * (1 + set[["Z"]])^-set[["alpha"]]
    expect_equal(run(set[["A"]], set[["Z"]], set[["alpha"]], 1), r1 + (w - 0.1) * slope, tolerance = 1e-9,
                 info = paste(names(set), set, collapse = " "))
  }
})

test_that("likelihood_sd fixes the Gaussian likelihood's variance (the authors' squared-error sum)", {
  skip_if_no_torch()
  d <- lin_data()
  n <- nrow(d$x)
  run <- function(step) {
    sgld_sa_engine(d$x, d$y, model = nn_mlp(hidden = integer()), method = "sa", sparse_layers = FALSE,
            iterations = 20, burnin = 0, thin = 1, batch_size = n, keep_draws = TRUE, seed = 7, quiet = TRUE,
            control = sgd_control(step, sigma_init = 3, likelihood_sd = sqrt(1 / 2)), standardize = FALSE)
  }
  init <- run(0)$weights[1, ]
  fit <- run(0.002)
  X1 <- cbind(d$x, 1)
  theta <- init
  path <- matrix(NA, 20, 3)
  for (k in 1:20) {  # gradient of -sum r_i^2 (variance 1/2), whatever sigma does
    theta <- theta + 0.002 * 2 * drop(crossprod(X1, d$y - X1 %*% theta))
    path[k, ] <- theta
  }
  expect_equal(unname(fit$weights), path, tolerance = 1e-12)
  expect_false(isTRUE(all.equal(fit$latent$sigma, 3)))  # sigma still adapts (here: no sparse weights, so from I)
  # no sparse layer: the per-weight fields are empty, not an error (a regression of the lazily named fields)
  expect_identical(fit$inclusion, stats::setNames(numeric(), character()))
  expect_identical(ncol(fit$delta), 0L)
  expect_true(is.na(mean(fit$inclusion)))
  expect_output(print(fit), "no sparse layer: Gaussian prior (variance 1e+300) on every parameter", fixed = TRUE)
  expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(likelihood_sd = 0)), class = "scalebayes_error_input")
})

test_that("SGHMC on a network without hidden layers samples the exact Gaussian posterior", {
  skip_if_no_torch()
  d <- lin_data(40, seed = 4)
  pv <- 4
  fit <- sgld_sa_engine(d$x, d$y, model = nn_mlp(hidden = integer()), sampler = "sghmc", method = "none",
                 sparse_layers = FALSE, iterations = 40000, burnin = 4000, thin = 2, batch_size = 40,
                 keep_draws = TRUE, seed = 3, quiet = TRUE,
                 control = sgmcmc_control(step_size = 5e-4,
                                          float64 = TRUE,
                                          step = sgmcmc_step(schedule = "constant", friction = 0.1),
                                          ssgl = sgmcmc_ssgl(prior_var = pv)), standardize = FALSE)
  X1 <- cbind(d$x, 1)
  prec <- crossprod(X1) + diag(3) / pv  # sigma = 1 (method "none" keeps sigma_init)
  V <- solve(prec)
  mu <- drop(V %*% crossprod(X1, d$y))
  w <- fit$weights
  # Monte-Carlo standard errors by batch means (20 batches)
  bm_se <- function(v) {
    b <- colMeans(matrix(v[seq_len(20 * (length(v) %/% 20))], ncol = 20))
    stats::sd(b) / sqrt(20)
  }
  se_mean <- apply(w, 2, bm_se)
  expect_true(all(abs(colMeans(w) - mu) < 4 * se_mean), info = paste(colMeans(w) - mu, se_mean))
  # variances: s.e. of the sample variance by batch means of the centred squares
  sq <- sweep(w, 2, mu)^2
  se_var <- apply(sq, 2, bm_se)
  expect_true(all(abs(colMeans(sq) - diag(V)) < 4 * se_var), info = paste(colMeans(sq), diag(V), se_var))
})

test_that("SGHMC on a one-hidden-unit tanh network agrees with a long random-walk Metropolis run", {
  skip_if_fast_tier()
  skip_if_no_torch()
  skip_on_cran()
  set.seed(11)
  n <- 30
  x <- matrix(runif(n, -2, 2), n, 1)
  y <- 1.5 * tanh(1.2 * x[, 1] - 0.3) + 0.2 + rnorm(n, sd = 0.3)
  xs <- matrix(c(-1.5, 0, 1.5), 3, 1)
  s2 <- 0.3^2  # method "none": sigma stays at sigma_init, the likelihood's sd
  pv <- 4      # N(0, 4) on all four parameters
  fit <- sgld_sa_engine(x, y, model = nn_mlp(1, activation = "tanh"), sampler = "sghmc", method = "none",
                 sparse_layers = FALSE, iterations = 60000, burnin = 5000, thin = 5, batch_size = n, newx = xs,
                 keep_draws = TRUE, seed = 2, quiet = TRUE,
                 control = sgmcmc_control(step_size = 1e-4,
                                          float64 = TRUE,
                                          step = sgmcmc_step(schedule = "constant", friction = 0.1),
                                          ssgl = sgmcmc_ssgl(sigma_init = 0.3, prior_var = pv)))
  # the same posterior by random-walk Metropolis in R; parameters (w1, b1, w2, b2); the posterior has the
  # sign symmetry (w1, b1, w2) -> -(w1, b1, w2), so compare predictions, which it leaves unchanged
  logpost <- function(t) -sum((y - t[3] * tanh(t[1] * x[, 1] + t[2]) - t[4])^2) / (2 * s2) - sum(t^2) / (2 * pv)
  t <- c(1, 0, 1, 0)
  lp <- logpost(t)
  M <- 200000
  keep <- matrix(NA_real_, M / 10, 3)
  z <- matrix(rnorm(4 * M, sd = 0.06), M, 4)
  u <- log(runif(M))
  for (i in seq_len(M)) {
    prop <- t + z[i, ]
    lq <- logpost(prop)
    if (u[i] < lq - lp) {
      t <- prop
      lp <- lq
    }
    if (i %% 10 == 0) keep[i / 10, ] <- t[3] * tanh(t[1] * xs[, 1] + t[2]) + t[4]
  }
  keep <- keep[-seq_len(2000), ]
  bm_se <- function(v) stats::sd(colMeans(matrix(v[seq_len(20 * (length(v) %/% 20))], ncol = 20))) / sqrt(20)
  se <- sqrt(apply(fit$pred, 2, bm_se)^2 + apply(keep, 2, bm_se)^2)
  expect_true(all(abs(colMeans(fit$pred) - colMeans(keep)) < 4 * se),
              info = paste(round(colMeans(fit$pred), 4), round(colMeans(keep), 4), round(se, 4)))
  # variances: mean squared deviation from the Metropolis mean, with batch-means standard errors
  m <- colMeans(keep)
  sq1 <- sweep(fit$pred, 2, m)^2
  sq2 <- sweep(keep, 2, m)^2
  se_v <- sqrt(apply(sq1, 2, bm_se)^2 + apply(sq2, 2, bm_se)^2)
  expect_true(all(abs(colMeans(sq1) - colMeans(sq2)) < 4 * se_v),
              info = paste(round(colMeans(sq1), 5), round(colMeans(sq2), 5), round(se_v, 5)))
})

test_that("draws do not depend on the number of threads; chains differ", {
  skip_if_no_torch()
  set.seed(1)
  x <- matrix(rnorm(100 * 4), 100, 4)
  y <- factor(ifelse(x[, 1] - x[, 2] > 0, "a", "b"))
  f <- function(threads) {
    sgld_sa_engine(x, y, model = nn_mlp(6), sampler = "sghmc", iterations = 300, batch_size = 20, chains = 2,
            threads = threads, newx = x[1:10, ], keep_draws = Inf, seed = 4, quiet = TRUE,
            control = sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(schedule = "constant")))
  }
  a <- f(1)
  b <- f(2)
  expect_identical(a$weights, b$weights)
  expect_identical(a$pred_mean, b$pred_mean)
  expect_identical(a$trace, b$trace)
  expect_false(isTRUE(all.equal(a$weights[a$chain == 1, ], a$weights[a$chain == 2, ])))
  expect_equal(a$family, "binomial")
  expect_equal(dim(a$pred), c(sum(a$saved), 10L))
  expect_equal(a$pred_mean, colMeans(a$pred), tolerance = 1e-6)
  expect_equal(predict(a)$fit, a$pred_mean, tolerance = 1e-5)  # float32 running mean vs mean of the kept draws
})

test_that("a classification chain learns, and SA adapts the inclusion probabilities per weight", {
  skip_if_no_torch()
  set.seed(2)
  x <- matrix(rnorm(300 * 6), 300, 6)
  cls <- max.col(cbind(x[, 1], x[, 2], -x[, 1] - x[, 2]))
  y <- factor(c("u", "v", "w")[cls])
  fit <- sgld_sa_engine(x[1:200, ], y[1:200], model = nn_mlp(8), sampler = "sghmc", method = "sa", epochs = 60,
                 batch_size = 20, newx = x[201:300, ], newy = y[201:300], seed = 2, quiet = TRUE,
                 control = sgmcmc_control(step_size = 5e-4, step = sgmcmc_step(schedule = "constant"), ssgl = sgmcmc_ssgl(sa_Z = 10)))
  expect_s3_class(fit, "sb_sgld_sa_nn")
  expect_equal(fit$family, "multinomial")
  expect_gt(fit$accuracy_mean, 0.8)
  expect_equal(length(fit$inclusion), 6 * 8 + 8 * 3)  # the two weight matrices
  expect_true(all(fit$inclusion >= 0 & fit$inclusion <= 1))
  expect_gt(stats::sd(fit$inclusion), 0)  # adapted per weight
  expect_equal(dim(fit$pred_mean), c(100L, 3L))
  expect_equal(rowSums(fit$pred_mean), rep(1, 100), tolerance = 1e-5)
  expect_equal(levels(predict(fit, type = "class")), c("u", "v", "w"))
  expect_true(all(fit$trace$accuracy >= 0 & fit$trace$accuracy <= 1))
  expect_gt(tail(fit$trace$accuracy, 1), 0.7)  # minibatch accuracy since the previous trace point
  expect_output(print(fit), "SGHMC-SA posterior of a network")
  # only the chosen layer gets the prior
  f2 <- sgld_sa_engine(x[1:200, ], y[1:200], model = nn_mlp(8), sparse_layers = 2, iterations = 50, seed = 2, quiet = TRUE)
  expect_equal(length(f2$inclusion), 8 * 3)
})

test_that("magnitude pruning reaches the scheduled sparsity; annealing is labelled", {
  skip_if_no_torch()
  d <- lin_data(80)
  fit <- sgld_sa_engine(d$x[, c(1, 2, 1, 2)] + rnorm(320, sd = 0.1), d$y, model = nn_mlp(10), sampler = "sghmc",
                 iterations = 2000, batch_size = 20, seed = 1, quiet = TRUE,
                 control = sgmcmc_control(step_size = 1e-4,
                                          step = sgmcmc_step(schedule = "constant", anneal = 1.001),
                                          ssgl = sgmcmc_ssgl(prune = TRUE, prune_S = 0.5, prune_D = 0.9, prune_U = 50)))
  target <- 0.5 * (1 - 0.9^(2000 / 50))  # S (1 - D^(k/U)) at the last iteration
  n_sparse <- 4 * 10 + 10
  expect_equal(fit$sparsity, floor(target * 40) / n_sparse + floor(target * 10) / n_sparse, tolerance = 1e-12)
  expect_equal(tail(fit$trace$sparsity, 1), fit$sparsity)
  expect_match(fit$method, "^A-SGHMC-SA$")
})

test_that("a network fit says why its inclusion probabilities select nothing, and what prunes (SSGL pruning opt-in)", {
  skip_if_no_torch()
  d <- lin_data(80)
  run <- function(..., control = sgmcmc_control(step_size = 1e-4)) {
    suppressWarnings(sgld_sa(d$x, d$y, model = nn_mlp(10), iterations = 1000, batch_size = 20, chains = 1, seed = 1,
                             quiet = TRUE, control = control, ...))
  }
  fit <- run()
  expect_false(fit$settings$control$prune)
  expect_equal(fit$sparsity, 0)
  expect_true(mean(fit$inclusion) < 0.01)  # the SA's Beta(1, p) prior of delta: every weight in the spike
  expect_match(paste(fit$details, collapse = "\n"), "no pruning", fixed = TRUE)
  expect_output(print(fit), "rho selects no weight in a network; to select weights prune by magnitude", fixed = TRUE)
  pruned <- run(control = sgmcmc_control(step_size = 1e-4, ssgl = sgmcmc_ssgl(prune = TRUE)))
  target <- 0.9 * (1 - 0.99^(1000 / 50))  # sgmcmc_ssgl()'s S (1 - D^(k/U)) at the last iteration
  n_sparse <- 2 * 10 + 10
  expect_equal(pruned$sparsity, (floor(target * 20) + floor(target * 10)) / n_sparse, tolerance = 1e-12)
  expect_output(print(pruned), "magnitude pruning to the sparse rate 0.9 (1 - 0.99^(k/50)) at iteration k", fixed = TRUE)
  expect_output(print(pruned), "the magnitude pruning selects them", fixed = TRUE)
  # no explanation where the inclusion probabilities do select (method = "none" keeps rho at delta_init = 0.5)
  off <- run(method = "none")
  expect_false(any(grepl("rho selects no weight", off$details, fixed = TRUE)))
})

test_that("a network chain continues from given parameters or from a fit (sgmcmc_control(init = ))", {
  skip_if_no_torch()
  d <- lin_data()
  n <- nrow(d$x)
  run <- function(iters, init = NULL, chains = 1, step = 0.004) {
    sgld_sa_engine(d$x, d$y, model = nn_mlp(3), method = "none", sparse_layers = FALSE, iterations = iters, burnin = 0,
            thin = 1, batch_size = n, keep_draws = TRUE, seed = 5, quiet = TRUE, chains = chains,
            control = sgd_control(step, init = init))
  }
  # noiseless full-batch steps: 30 then 20 from where the first run stopped is 50 in one go
  straight <- run(50)
  first <- run(30)
  expect_equal(run(20, init = first)$weights_final, straight$weights_final, tolerance = 1e-12)
  expect_equal(run(20, init = first$weights_final[1, ])$weights_final, straight$weights_final, tolerance = 1e-12)
  # a matrix gives each chain its own start; a step of 0 keeps it
  start <- cbind(first$weights_final[1, ], straight$weights_final[1, ])
  two <- run(2, init = start, chains = 2, step = 0)
  expect_equal(unname(two$weights_final), unname(t(start)), tolerance = 1e-6)
  # a wbb_nn fit with kept weights: chain c starts from draw c
  wb <- wbb_nn(d$x, d$y, model = nn_mlp(3), draws = 2, keep_draws = TRUE, seed = 3, quiet = TRUE,
               control = nn_control(epochs = 3))
  from_wbb <- run(2, init = wb, chains = 3, step = 0)
  expect_equal(unname(from_wbb$weights_final), unname(wb$weights[c(1, 2, 1), ]), tolerance = 1e-6)
  # wrong starts are classed errors naming init
  expect_error(run(2, init = rep(0, 5)), "one value per network parameter", class = "scalebayes_error_input")
  expect_error(run(2, init = matrix(0, 3, 1)), "network parameters x chains", class = "scalebayes_error_input")
  other <- sgld_sa_engine(d$x, d$y, model = nn_mlp(4), iterations = 2, seed = 1, quiet = TRUE)
  expect_error(run(2, init = other), "different architecture", class = "scalebayes_error_input")
  wb0 <- wbb_nn(d$x, d$y, model = nn_mlp(3), draws = 1, seed = 3, quiet = TRUE, control = nn_control(epochs = 1),
                keep_draws = FALSE)
  expect_error(run(2, init = wb0), "keep_draws", class = "scalebayes_error_input")
  expect_error(sgld_sa(d$x, d$y, iterations = 10, quiet = TRUE, control = sgmcmc_control(init = first)),
               "network fit", class = "scalebayes_error_input")
  expect_error(sgmcmc_control(init = "a"), "init", class = "scalebayes_error_input")
  expect_output(print(sgmcmc_control(init = first)), "sb_sgld_sa_nn")
})

test_that("a diverging network chain is stopped, reported and left out; all chains diverged is an error", {
  skip_if_no_torch()
  d <- lin_data(50)
  P <- sgld_sa_engine(d$x, d$y, model = nn_mlp(5), iterations = 2, quiet = TRUE, seed = 1)$n_parameters
  set.seed(3)
  init <- cbind(rnorm(P, sd = 0.3), rnorm(P, sd = 30))  # chain 2 starts where a step of 0.01 explodes
  args <- list(d$x, d$y, model = nn_mlp(5), method = "none", iterations = 400, chains = 2, seed = 1, quiet = TRUE,
               newx = d$x[1:5, ], control = sgmcmc_control(step_size = 0.01, init = init))
  expect_warning(fit <- suppress_convergence(do.call(sgld_sa, args)), class = "scalebayes_warning_diverged")
  expect_identical(fit$diverged, c(FALSE, TRUE))
  expect_match(fit$diverged_why[2], "training loss per example reached")
  expect_lt(fit$iterations_done[2], 400)
  # left out of the draws and every average: the fit is chain 1's alone
  one <- suppress_convergence(do.call(sgld_sa, utils::modifyList(args, list(chains = 1L,
           control = sgmcmc_control(step_size = 0.01, init = init[, 1, drop = FALSE])))))
  expect_identical(unique(fit$chain), 1L)
  expect_equal(fit$weights_mean, one$weights_mean, tolerance = 1e-6)
  expect_equal(fit$pred_mean, one$pred_mean, tolerance = 1e-6)
  expect_output(print(fit), "^DIVERGED: 1 of 2 chains \\(chain 2 at iteration")
  # the loss rule off (diverge_loss = Inf): only a non-finite state stops the chain, later
  args$control <- sgmcmc_control(step_size = 0.01, init = init, diverge_loss = Inf)
  late <- suppressWarnings(do.call(sgld_sa, args))
  expect_true(is.na(late$diverged_why[2]) || late$diverged_at[2] > fit$diverged_at[2])
  # every chain diverged: a classed error naming the step
  e <- expect_error(sgld_sa_engine(d$x, d$y * 1e3, model = nn_mlp(5), method = "none", iterations = 400, burnin = 0,
                                   seed = 1, quiet = TRUE, standardize = FALSE, chains = 2,
                                   control = sgmcmc_control(step_size = 10, step = sgmcmc_step(schedule = "constant"))),
                    class = "scalebayes_error_diverged")
  expect_s3_class(e, "scalebayes_error_divergence")
  expect_match(conditionMessage(e), "step_size")
  # the iteration of each chain's divergence is a field of the error (no need to parse the message)
  expect_length(e$diverged_at, 2L)
  expect_true(all(e$diverged_at >= 1 & e$diverged_at <= 400))
  expect_match(conditionMessage(e), paste0("iteration ", e$diverged_at[1]), fixed = TRUE)
  expect_error(sgmcmc_control(diverge_loss = 1), class = "scalebayes_error_input")
})

test_that("bad network arguments are classed errors naming the argument", {
  skip_if_no_torch()
  d <- lin_data(30)
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), sparse_layers = 3), class = "scalebayes_error_input")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), sparse_layers = c(1, 1)), "sparse_layers")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), epochs = 2, iterations = 10), "epochs")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), epochs = 0), class = "scalebayes_error_input")
  expect_error(sgld_sa(d$x, d$y, epochs = 3), "networks only")
  expect_error(sgld_sa(d$x, d$y, keep_draws = FALSE), "keep_draws", class = "scalebayes_error_input")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), intercept = FALSE), "regression")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), keep_draws = -1), "keep_draws", class = "scalebayes_error_input")
  expect_error(sgld_sa(d$x, d$y, model = "mlp"), class = "scalebayes_error_input")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), newy = d$y), "newx")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), newx = d$x[, 1, drop = FALSE]), "newx")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), batch_size = 31), "batch_size")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), control = sgmcmc_control(init = 1)), "init")
  expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), family = "poisson"), class = "scalebayes_error_input")
  # device = "cuda" follows the build: it runs where the build has CUDA and a device is present, else it is
  # the classed backend error
  info <- scalebayes_info()$torch
  if (isTRUE(info$cuda_available) && isTRUE(info$cuda_devices > 0)) {
    fc <- sgld_sa_engine(d$x, d$y, model = nn_mlp(4), device = "cuda", iterations = 20, seed = 1, quiet = TRUE)
    expect_match(fc$device, "cuda")
    expect_true(all(is.finite(fc$weights_mean)))
  } else {
    expect_error(sgld_sa(d$x, d$y, model = nn_mlp(4), device = "cuda"), class = "scalebayes_error_backend")
  }
  expect_error(sgld_sa(d$x, c(d$y[-1], NA), model = nn_mlp(4)), "NA")
  expect_error(predict(sgld_sa_engine(d$x, d$y, model = nn_mlp(4), iterations = 20, quiet = TRUE, keep_draws = FALSE), newx = d$x), "keep_draws")
})

test_that("a chain that explodes before its first trace point is stopped there (the loss rule's start level)", {
  skip_if_no_torch()
  skip_if_not_installed("MASS")
  B <- MASS::Boston
  x <- as.matrix(B[, -14]); y <- B$medv
  # raw responses, step 0.01: the training loss is about 1e28 at the first trace point and stays there, so a
  # reference taken from the first traced loss alone would never stop it
  args <- list(x, y, model = nn_mlp(), standardize = FALSE, iterations = 200, chains = 1L, seed = 1, quiet = TRUE,
               control = sgmcmc_control(step_size = 0.01, trace_every = 10))
  e <- expect_error(do.call(sgld_sa, args), class = "scalebayes_error_diverged")
  expect_match(conditionMessage(e), "training loss per example reached .* at iteration 10 ")
  args$control <- sgmcmc_control(step_size = 0.01, trace_every = 10, diverge_loss = Inf)
  late <- suppressWarnings(do.call(sgld_sa, args))  # without the rule: "done", at a loss of 2e28
  expect_false(any(late$diverged))
  expect_gt(min(late$trace$loss), 1e6)
})
