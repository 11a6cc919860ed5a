# The SG-MCMC engine seams (issue "engine seams"): the storage concept's new operations agree between the Eigen
# and the LibTorch policy in float64 and with plain R; the network model's second gradient on the same minibatch
# replays the minibatch exactly and records nothing; per-example weights enter the network likelihood example
# by example; unknown sampler / method names are errors in the glue. The step-policy seam itself (test-only
# policies through the real run_chain) is tested in tests/cpp/test_sgmcmc.cpp (test-cpp-engine.R).

engine_ctl <- function(...) {
  ctl <- scalebayes:::sgmcmc_engine_control(sgmcmc_control(), 3, NaN, trace_every = 1L, family = "gaussian",
                                            method = "sa", sampler = "sgld", iterations = 10L, batch_size = 5L,
                                            burnin = 0L, thin = 1L, v0 = 0.1, v1 = 10, keep = 1:4, chains = 1L)
  ctl$chain_offset <- 0
  utils::modifyList(ctl, list(...))
}

test_that("the glue refuses an unknown sampler, method or step schedule instead of running SGLD", {
  set.seed(1)
  x <- matrix(rnorm(60), 20, 3)
  y <- rnorm(20)
  run <- list(seed = 1, threads = 1L, quiet = TRUE)
  call_engine <- function(ctl) scalebayes:::cpp_sgld_sa(x, y, c(1L, 1L, 1L), TRUE, matrix(0, 0, 3),
                                                        matrix(0, 4, 1), ctl, run)
  ok <- call_engine(engine_ctl())
  expect_length(ok$chains, 1L)
  expect_error(call_engine(engine_ctl(sampler = "sgdl")), "unknown sampler 'sgdl'")
  expect_error(call_engine(engine_ctl(method = "SA")), "unknown method \"SA\"", fixed = TRUE)
  expect_error(call_engine(engine_ctl(step_schedule = "cosine")), "unknown step_schedule \"cosine\"", fixed = TRUE)
})

test_that("storage operations agree between the Eigen and LibTorch policies in float64 and with plain R", {
  skip_if_no_torch()
  set.seed(2)
  a <- rnorm(7)
  b <- rnorm(7)
  cc <- c(-1, 2, 0, 0.5, -3, 1, 0)
  alpha <- 0.3
  sigma <- 1.7
  delta <- 0.2
  r <- cpp_test_storage_ops(a, b, cc, alpha, sigma, delta)
  for (nm in names(r$eigen)) expect_equal(r$torch[[nm]], r$eigen[[nm]], tolerance = 1e-13, info = nm)
  e <- r$eigen
  expect_equal(e$dot, sum(a * b), tolerance = 1e-14)
  expect_equal(e$axpy, b + alpha * a, tolerance = 1e-14)
  expect_identical(e$where_scalar, sigma)
  expect_identical(e$where_array, ifelse(cc > 0, a, b))
  expect_equal(e$group_dot, sum(a^2) + sum(cc^2), tolerance = 1e-14)
  # SSGL prior gradient at rho = 0.5: -kappa0 sign(b) / sigma - kappa1 b / sigma^2, kappa0 = 0.5 / v0, kappa1 = 0.5 / v1
  expect_equal(e$prior_grad, -(0.5 / 0.1) * sign(a) / sigma - (0.5 / 10) * a / sigma^2, tolerance = 1e-14)
  # eq. (12): delta N(b; 0, sigma^2 v1) / (delta N(b; 0, sigma^2 v1) + (1 - delta) Laplace(b; 0, sigma v0))
  slab <- delta * dnorm(a, 0, sigma * sqrt(10))
  spike <- (1 - delta) * exp(-abs(a) / (sigma * 0.1)) / (2 * sigma * 0.1)
  expect_equal(e$inclusion, slab / (slab + spike), tolerance = 1e-12)
  # one SA step with omega = alpha from rho = 0.5 (group 1) and 0.3 (group 2)
  expect_equal(e$rho, (1 - alpha) * 0.5 + alpha * slab / (slab + spike), tolerance = 1e-12)
  expect_equal(e$kappa0, (1 - alpha) * 0.5 / 0.1 + alpha * (1 - e$rho) / 0.1, tolerance = 1e-12)
})

net_data <- function(n = 24, p = 4, seed = 3) {
  set.seed(seed)
  list(x = matrix(runif(n * p, -1, 1), n, p), y = rnorm(n))
}
net_spec <- function(model, p, family = "gaussian", n_out = 1L) {
  tab <- scalebayes:::nn_resolve(model, p, n_out)
  tab$penalized[scalebayes:::nn_kind_is(tab$kind, "sparse")] <- TRUE
  scalebayes:::nn_engine_spec(tab, p, family)
}

test_that("a network's second gradient on the same minibatch replays its dropout masks and records nothing", {
  skip_if_no_torch()
  d <- net_data()
  idx <- c(3L, 7L, 1L, 20L, 11L, 5L)
  for (model in list(nn_mlp(c(6, 5), dropout = 0.4), nn_mlp(c(6), batchnorm = TRUE))) {
    r <- cpp_test_net_regradient(net_spec(model, 4L), d$x, dim(d$x), d$y, idx, double(), 9)
    expect_identical(r$second, r$first)           # same values, same minibatch, same masks
    expect_true(r$state_unchanged)               # dropout generator and batch-norm statistics as after pass 1
    expect_equal(r$recorded_examples, length(idx))  # the trace counted the first pass only
    expect_gt(r$n_buffers, 0L)
    expect_true(all(is.finite(r$first)))
  }
  # with dropout a fresh minibatch on the same rows draws new masks (so the replay above was not trivial)
  r <- cpp_test_net_regradient(net_spec(nn_mlp(c(6, 5), dropout = 0.4), 4L), d$x, dim(d$x), d$y,
                                            idx, double(), 9)
  expect_false(isTRUE(all.equal(r$fresh, r$first)))
})

test_that("per-example weights enter the network log-likelihood gradient example by example", {
  skip_if_no_torch()
  d <- net_data(n = 10)
  idx <- 1:10
  spec <- net_spec(nn_mlp(c(3), activation = "tanh"), 4L)
  g <- function(w) cpp_test_net_regradient(spec, d$x, dim(d$x), d$y, idx, w, 4)$first
  unweighted <- g(double())
  expect_equal(g(rep(1, 10)), unweighted, tolerance = 1e-14)
  # the gradient is linear in the weights: g(w) = sum_i w_i g(e_i)
  set.seed(5)
  w <- rexp(10)
  per_example <- vapply(1:10, function(i) g(replace(numeric(10), i, 1)), numeric(length(unweighted)))
  expect_equal(g(w), drop(per_example %*% w), tolerance = 1e-12)
  expect_equal(rowSums(per_example), unweighted, tolerance = 1e-12)
})

test_that("sgld_sa(weights = ) for networks: zero weights drop examples exactly, bad weights are classed errors", {
  skip_if_no_torch()
  set.seed(6)
  x <- matrix(runif(80 * 3, -1, 1), 80, 3)
  y <- x[, 1] - x[, 2] + rnorm(80, sd = 0.2)
  fit_w <- function(w, xx = x, yy = y) {
    sgld_sa_engine(xx, yy, model = nn_mlp(c(4)), method = "none", epochs = 2, batch_size = nrow(xx), seed = 1,
            quiet = TRUE, weights = w, keep_draws = TRUE, control = sgmcmc_control(step_size = 1e-3))
  }
  # full batch (no minibatch draws), latent variables and sigma fixed: weights 1 on the first 60 rows and 0 on
  # the last 20 give the chain of the first 60 rows alone (same initial network, same noise)
  a <- fit_w(c(rep(1, 60), rep(0, 20)))
  b <- fit_w(NULL, x[1:60, ], y[1:60])
  expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-5)
  # and weights 2 on those rows is a different chain (the weights are used)
  d <- fit_w(c(rep(2, 60), rep(0, 20)))
  expect_gt(max(abs(as.matrix(d) - as.matrix(b))), 1e-3)
  expect_error(fit_w(rep(-1, 80)), class = "scalebayes_error_input")
  expect_error(fit_w(rep(1, 3)), class = "scalebayes_error_input")
  expect_error(sgld_sa(x, y, iterations = 10, weights = rep(1, 80), quiet = TRUE), class = "scalebayes_error_input")
})

test_that("sgld_sa() networks take an n x q gaussian or binomial y: one likelihood term per output", {
  skip_if_no_torch()
  set.seed(8)
  x <- matrix(runif(90 * 3, -1, 1), 90, 3)
  y <- cbind(x[, 1] + rnorm(90, sd = 0.1), x[, 2] - x[, 3] + rnorm(90, sd = 0.1))
  fit <- sgld_sa_engine(x, y, model = nn_mlp(c(6)), epochs = 3, batch_size = 30, seed = 2, quiet = TRUE,
                 newx = x[1:7, ], newy = y[1:7, ], keep_draws = TRUE, control = sgmcmc_control(step_size = 1e-3))
  expect_equal(dim(fit$pred_mean), c(7L, 2L))
  expect_equal(dim(fit$pred), c(length(fit$rmse), 7L, 2L))
  # RMSE over examples and outputs, by hand from the stored draws
  expect_equal(fit$rmse, apply(fit$pred, 1, function(p) sqrt(mean((p - y[1:7, ])^2))), tolerance = 1e-12)
  expect_equal(fit$rmse_mean, sqrt(mean((fit$pred_mean - y[1:7, ])^2)), tolerance = 1e-12)
  # a one-column matrix is the vector case, draw for draw
  a <- sgld_sa_engine(x, y[, 1, drop = FALSE], model = nn_mlp(c(6)), epochs = 2, seed = 3, quiet = TRUE, keep_draws = TRUE)
  b <- sgld_sa_engine(x, y[, 1], model = nn_mlp(c(6)), epochs = 2, seed = 3, quiet = TRUE, keep_draws = TRUE)
  expect_identical(as.matrix(a), as.matrix(b))
  # binomial q outputs: the trace's minibatch accuracy is over examples and outputs
  yb <- (y > 0) * 1
  fb <- sgld_sa_engine(x, yb, model = nn_mlp(c(6)), family = "binomial", epochs = 3, batch_size = 30, seed = 4,
                quiet = TRUE, newx = x, newy = yb, keep_draws = TRUE)
  expect_true(all(fb$trace$accuracy >= 0 & fb$trace$accuracy <= 1))
  expect_equal(fb$accuracy_mean, mean((fb$pred_mean > 0.5) == yb))
  expect_error(sgld_sa(x, y, model = nn_mlp(c(6)), epochs = 1, quiet = TRUE, newx = x[1:3, ], newy = y[1:3, 1]),
               class = "scalebayes_error_input")
})
