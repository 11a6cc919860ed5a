# HAMCMC-SA and HAMCMC (sgmcmc/lbfgs.hpp; sgld_sa(sampler = "hamcmc_sa" | "hamcmc"), hamcmc_sa()). The engine's
# recursions are checked against dense computations in tests/cpp/test_lbfgs.cpp; here: the LibTorch storage
# gives the Eigen numbers, the R interface, thread invariance, a sampling check of the matrix form against the
# exact Gaussian posterior, divergence and bad inputs.

# The damped inverse-BFGS matrix and its square-root factor written directly (Powell damping with B0 = gamma I,
# gamma = max(y'y / s'y, gamma_min) from the newest pair).
dense_lbfgs <- function(S, Y, r, gmin) {
  d <- nrow(S)
  m <- ncol(S)
  s <- S[, m]
  y <- Y[, m]
  gam <- if (sum(s * y) > 0) max(sum(y * y) / sum(s * y), gmin) else if (sum(s * s) > 0) max(sqrt(sum(y * y) / sum(s * s)), gmin) else gmin
  H <- diag(d) / gam
  R <- diag(d) / sqrt(gam)
  B <- diag(d) * gam
  sybar <- numeric(m)
  for (i in seq_len(m)) {
    s <- S[, i]
    y <- Y[, i]
    sBs0 <- gam * sum(s * s)
    th <- if (sum(s * y) < r * sBs0) (1 - r) * sBs0 / (sBs0 - sum(s * y)) else 1
    yb <- th * y + (1 - th) * gam * s
    rho <- 1 / sum(s * yb)
    sybar[i] <- sum(s * yb)
    V <- diag(d) - rho * s %*% t(yb)
    Bs <- drop(B %*% s)
    q <- sqrt(sum(s * yb) / sum(s * Bs)) * Bs + yb
    R <- (diag(d) - rho * s %*% t(q)) %*% R
    H <- V %*% H %*% t(V) + rho * s %*% t(s)
    B <- B + rho * yb %*% t(yb) - Bs %*% t(Bs) / sum(s * Bs)
  }
  list(H = H, R = R, gamma = gam, sybar = sybar, B = B)
}

test_that("the LibTorch storage gives the Eigen numbers of the damped L-BFGS memory (float64)", {
  skip_if_not(isTRUE(scalebayes_info()$torch$available), "built without LibTorch")
  set.seed(3)
  d <- 9
  A <- matrix(rnorm(d * d), d) / 3
  Hs <- crossprod(A) + diag(d) * 0.3
  S <- matrix(rnorm(d * 4), d)
  Y <- Hs %*% S + matrix(rnorm(d * 4, sd = 2), d)  # noisy pairs: some are damped
  Y[, 2] <- -Y[, 2]
  v <- rnorm(d)
  z <- rnorm(d)
  r <- cpp_test_lbfgs_ops(S, Y, v, z, 3L, 0.2, 0.7, 4L)
  for (nm in names(r$eigen)) expect_equal(r$torch[[nm]], r$eigen[[nm]], tolerance = 1e-12, info = nm)
  ref <- dense_lbfgs(S[, 2:4], Y[, 2:4], 0.2, 0.7)
  expect_equal(r$eigen$G, drop(ref$H %*% v), tolerance = 1e-10)
  expect_equal(r$eigen$S, drop(ref$R %*% z), tolerance = 1e-10)
  expect_equal(r$eigen$gamma, ref$gamma, tolerance = 1e-12)
  expect_equal(r$eigen$sybar, ref$sybar, tolerance = 1e-10)
  # the diagonal form's diag(G~) at linear cost against the dense inverse
  expect_equal(r$eigen$diag, diag(ref$H), tolerance = 1e-10)
  # independent identities: G~ = B^{-1} (recursion 5), S~ S~' = G~, s'ybar >= r s'B0 s
  expect_equal(ref$H, solve(ref$B), tolerance = 1e-8)
  expect_equal(tcrossprod(ref$R), ref$H, tolerance = 1e-10)
  expect_true(all(r$eigen$sybar >= 0.2 * ref$gamma * colSums(S[, 2:4]^2) * (1 - 1e-12)))
})

test_that("a batched group's masked push leaves a member the memory of its own pairs (float64)", {
  skip_if_not(isTRUE(scalebayes_info()$torch$available), "built without LibTorch")
  set.seed(4)
  d <- 7
  A <- matrix(rnorm(d * d), d) / 3
  S <- matrix(rnorm(d * 5), d)
  Y <- (crossprod(A) + diag(d) * 0.3) %*% S + matrix(rnorm(d * 5, sd = 0.5), d)
  v <- rnorm(d)
  z <- rnorm(d)
  # member 1 skips pairs: the first two (its memory not yet full), then one among full memories
  for (keep in list(c(FALSE, FALSE, TRUE, TRUE, TRUE), c(TRUE, FALSE, TRUE, FALSE, TRUE), c(FALSE, TRUE, TRUE, TRUE, FALSE))) {
    for (M in c(1L, 2L, 3L)) {
      r <- cpp_test_lbfgs_masked(S, Y, keep, v, z, M, 0.2, 0.7)
      for (nm in c("G", "S", "diag")) {
        expect_equal(r$batched[[nm]][, 1], r$single[[1]][[nm]], tolerance = 1e-13, info = paste(nm, M))
        expect_equal(r$batched[[nm]][, 2], r$single[[2]][[nm]], tolerance = 1e-13, info = paste(nm, M))
      }
      expect_equal(r$batched$gamma, c(r$single[[1]]$gamma, r$single[[2]]$gamma), tolerance = 1e-13)
    }
  }
})

hamcmc_data <- function(n = 60, p = 8, seed = 1) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  for (j in 2:p) x[, j] <- 0.8 * x[, j - 1] + 0.6 * x[, j]  # correlated columns
  y <- drop(x[, 1:2] %*% c(2, -1)) + rnorm(n)
  list(x = x, y = y)
}

# Minibatch HAMCMC with consecutive pairs runs with a classed "experimental" warning (it drifted in tests); it is
# asserted once here and muffled in the other calls of this file. The transport form, which drifted too, was
# removed: asking for it is a classed error that points to the lowrank form.
test_that("the experimental forms warn, the matrix form does not; the transport form is gone", {
  d <- hamcmc_data()
  cnd <- rlang::catch_cnd(sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "transport")), classes = "scalebayes_error")
  expect_s3_class(cnd, "scalebayes_error_removed")
  expect_s3_class(cnd, "scalebayes_error_input")
  expect_match(conditionMessage(cnd), "lowrank", fixed = TRUE)
  expect_error(hamcmc_sa(d$x, d$y, iterations = 50, seed = 1, quiet = TRUE,
                         control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "transport"))), class = "scalebayes_error_removed")
  # (consecutive minibatches: batch_size below n; the default batch of a regression of at most 10,000 rows is all)
  expect_warning(hamcmc_sa_engine(d$x, d$y, sampler = "hamcmc", iterations = 50, seed = 1, quiet = TRUE,
                                  batch_size = 50,
                                  control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(curvature = "consecutive"))),
                 class = "scalebayes_warning_experimental")
  # same-batch pairs (the default) are not experimental
  expect_no_warning(hamcmc_sa_engine(d$x, d$y, sampler = "hamcmc", iterations = 50, seed = 1, quiet = TRUE),
                    class = "scalebayes_warning_experimental")
  expect_no_warning(hamcmc_sa_engine(d$x, d$y, iterations = 50, seed = 1, quiet = TRUE),
                    class = "scalebayes_warning_experimental")
  expect_no_warning(hamcmc_sa_engine(d$x, d$y, sampler = "hamcmc", batch_size = nrow(d$x), iterations = 50,
                                     seed = 1, quiet = TRUE), class = "scalebayes_warning_experimental")
})
# The calls below check the engine on the data as given, one chain at the stated step: the settings of
# helper-sgmcmc-engine.R (the defaults before issue 37).
hamcmc_sa <- function(...) {
  withCallingHandlers(hamcmc_sa_engine(...),
                      scalebayes_warning_experimental = function(w) invokeRestart("muffleWarning"))
}
sgld_sa <- function(...) {
  withCallingHandlers(sgld_sa_engine(...),
                      scalebayes_warning_experimental = function(w) invokeRestart("muffleWarning"))
}

test_that("hamcmc_sa() runs regression chains, labels them and is thread invariant", {
  d <- hamcmc_data()
  for (smp in c("hamcmc_sa", "hamcmc")) {
    ctl <- sgmcmc_control(step_size = 0.02, step = sgmcmc_step(schedule = "constant"))
    f1 <- hamcmc_sa(d$x, d$y, sampler = smp, iterations = 2000, chains = 3, threads = 1, seed = 5, quiet = TRUE,
                    control = ctl)
    f2 <- hamcmc_sa(d$x, d$y, sampler = smp, iterations = 2000, chains = 3, threads = 2, seed = 5, quiet = TRUE,
                    control = ctl)
    expect_identical(f1$draws, f2$draws)
    expect_identical(f1$method, if (smp == "hamcmc_sa") "HAMCMC-SA + SSGL-SA" else "HAMCMC + SSGL-SA")
    expect_true(all(is.finite(f1$draws)))
    # HAMCMC-SA (matrix form, the default here) finds the strong signal (posterior mean of beta_1 near 2); HAMCMC
    # with minibatch curvature pairs is not stable on this target at this step (see ?hamcmc_sa)
    if (smp == "hamcmc_sa") expect_lt(abs(coef(f1)[[2]] - 2), 0.6)
    # sgld_sa(sampler = ) is the same call
    f3 <- sgld_sa(d$x, d$y, sampler = smp, iterations = 2000, chains = 3, threads = 1, seed = 5, quiet = TRUE,
                  control = ctl)
    expect_identical(f3$draws, f1$draws)
  }
  # the diagonal form is thread invariant and, at minibatch 20, stays with the matrix form and SGLD where the
  # removed transport form drifted to |beta| ~ 1e4 (?hamcmc_sa)
  ctl <- sgmcmc_control(step_size = 0.02, step = sgmcmc_step(schedule = "constant"), lbfgs = sgmcmc_lbfgs(sa_form = "diagonal"))
  dg1 <- hamcmc_sa(d$x, d$y, iterations = 4000, batch_size = 20, chains = 3, threads = 1, seed = 5, quiet = TRUE,
                   control = ctl)
  dg2 <- hamcmc_sa(d$x, d$y, iterations = 4000, batch_size = 20, chains = 3, threads = 2, seed = 5, quiet = TRUE,
                   control = ctl)
  expect_identical(dg1$draws, dg2$draws)
  expect_lt(max(abs(dg1$draws)), 10)
  expect_lt(abs(coef(dg1)[[2]] - 2), 0.6)
  # every form and curvature runs; they differ from each other and from SGLD
  base <- list(x = d$x, y = d$y, iterations = 500, seed = 2, quiet = TRUE)
  fits <- list(
    diagonal = do.call(hamcmc_sa, c(base, list(control = sgmcmc_control(step_size = 0.02, lbfgs = sgmcmc_lbfgs(sa_form = "diagonal"))))),
    lowrank = do.call(hamcmc_sa, c(base, list(control = sgmcmc_control(step_size = 0.02, lbfgs = sgmcmc_lbfgs(sa_form = "lowrank"))))),
    consecutive = do.call(hamcmc_sa, c(base, list(control = sgmcmc_control(step_size = 0.02,
                                                                           lbfgs = sgmcmc_lbfgs(sa_form = "diagonal", curvature = "consecutive"))))),
    matrix = do.call(hamcmc_sa, c(base, list(control = sgmcmc_control(step_size = 0.02)))),
    normalize = do.call(hamcmc_sa, c(base, list(control = sgmcmc_control(step_size = 0.02, lbfgs = sgmcmc_lbfgs(normalize = TRUE))))),
    sgld = do.call(sgld_sa, c(base, list(control = sgmcmc_control(step_size = 0.02)))))
  for (f in fits) expect_true(all(is.finite(coef(f))))
  expect_identical(fits$matrix$settings$control$sa_form, "matrix")
  cf <- sapply(fits, function(f) f$draws[nrow(f$draws), ])
  expect_equal(nrow(unique(t(round(cf, 12)))), length(fits))
})

test_that("the diagonal and lowrank forms sample the Gaussian posterior of a fixed-prior linear model with minibatches", {
  skip_on_cran()
  d <- hamcmc_data(n = 80, p = 4, seed = 2)
  P <- crossprod(d$x) + diag(4) / 4
  V <- solve(P)
  m <- drop(V %*% crossprod(d$x, d$y))
  sdv <- sqrt(diag(V))
  for (form in c("diagonal", "lowrank")) {
    fit <- hamcmc_sa(d$x, d$y, method = "none", sparse = FALSE, intercept = FALSE, iterations = 40000,
                     burnin = 5000, batch_size = 20, seed = 9, quiet = TRUE,
                     control = sgmcmc_control(step_size = 0.05,
                                              step = sgmcmc_step(schedule = "constant"),
                                              ssgl = sgmcmc_ssgl(prior_var = 4, sigma_init = 1),
                                              lbfgs = sgmcmc_lbfgs(sa_form = form)))
    # measured (diagonal): mean errors 0.04 sd, sds within 6 %, correlation -0.67 against -0.70 (same
    # tolerances as the matrix form's test below)
    expect_lt(max(abs(coef(fit) - m) / sdv), 0.25, label = form)
    expect_equal(apply(fit$draws, 2, sd), sdv, tolerance = 0.15, ignore_attr = TRUE, label = form)
    expect_equal(cor(fit$draws)[1, 2], cov2cor(V)[1, 2], tolerance = 0.1, label = form)
  }
})

test_that("the matrix form samples the Gaussian posterior of a fixed-prior linear model", {
  skip_on_cran()
  d <- hamcmc_data(n = 80, p = 4, seed = 2)
  s0 <- 1
  pv <- 4
  # method = "none", no SSGL prior (sparse = FALSE), no intercept, sigma fixed at sigma_init: a Gaussian posterior
  P <- crossprod(d$x) / s0^2 + diag(4) / pv
  V <- solve(P)
  m <- drop(V %*% crossprod(d$x, d$y)) / s0^2
  fit <- hamcmc_sa(d$x, d$y, method = "none", sparse = FALSE, intercept = FALSE, iterations = 40000,
                   burnin = 5000, batch_size = 80, seed = 9, quiet = TRUE,
                   control = sgmcmc_control(step_size = 0.05,
                                            step = sgmcmc_step(schedule = "constant"),
                                            ssgl = sgmcmc_ssgl(prior_var = pv, sigma_init = s0),
                                            lbfgs = sgmcmc_lbfgs(sa_form = "matrix", precond_A = 1, precond_Z = 10, precond_alpha = 1)))
  sdv <- sqrt(diag(V))
  expect_lt(max(abs(coef(fit) - m) / sdv), 0.25)
  expect_equal(apply(fit$draws, 2, sd), sdv, tolerance = 0.15, ignore_attr = TRUE)
  # the posterior correlation of the correlated columns is reproduced
  expect_equal(cor(fit$draws)[1, 2], cov2cor(V)[1, 2], tolerance = 0.1)
})

test_that("HAMCMC samples a Gaussian posterior with full-batch curvature pairs", {
  skip_on_cran()
  d <- hamcmc_data()
  P <- crossprod(d$x) + diag(8) / 4
  V <- solve(P)
  m <- drop(solve(P, crossprod(d$x, d$y)))
  fit <- hamcmc_sa(d$x, d$y, sampler = "hamcmc", method = "none", sparse = FALSE, intercept = FALSE,
                   iterations = 4000, batch_size = 60, seed = 5, quiet = TRUE,
                   control = sgmcmc_control(step_size = 0.05, step = sgmcmc_step(schedule = "constant"), ssgl = sgmcmc_ssgl(prior_var = 4), lbfgs = sgmcmc_lbfgs(memory = 3)))
  sdv <- sqrt(diag(V))
  expect_lt(max(abs(coef(fit) - m) / sdv), 0.6)
  expect_equal(apply(fit$draws, 2, sd), sdv, tolerance = 0.3, ignore_attr = TRUE)
})

test_that("a diverging HAMCMC-SA chain is a classed error with the last good state", {
  d <- hamcmc_data()
  err <- expect_error(hamcmc_sa(d$x * 1e3, d$y, method = "none", iterations = 200, seed = 1, quiet = TRUE,
                                control = sgmcmc_control(step_size = 1e4, step = sgmcmc_step(schedule = "constant"))),
                      class = "scalebayes_error_divergence")
  expect_true(all(is.finite(err$last_state$beta)))
})

test_that("bad HAMCMC settings are classed errors that name the argument", {
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(memory = 0)), class = "scalebayes_error", regexp = "memory")
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(memory = 1.5)), class = "scalebayes_error", regexp = "memory")
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(damping_r = 1)), class = "scalebayes_error", regexp = "damping_r")
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(gamma_min = 0)), class = "scalebayes_error", regexp = "gamma_min")
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "dense")), class = "scalebayes_error", regexp = "sa_form")
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(curvature = "same")), class = "scalebayes_error", regexp = "curvature")
  expect_error(sgmcmc_control(lbfgs = sgmcmc_lbfgs(precond_alpha = 2)), class = "scalebayes_error", regexp = "precond_alpha")
  d <- hamcmc_data()
  expect_error(hamcmc_sa(d$x, d$y, sampler = "hamcmc", iterations = 10, quiet = TRUE,
                         control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(memory = 1))), class = "scalebayes_error", regexp = "memory")
  expect_error(sgld_sa(d$x, d$y, sampler = "hamcmc_x", iterations = 10, quiet = TRUE), class = "scalebayes_error",
               regexp = "sampler")
  x <- matrix(rnorm(5 * 2001), 5)
  e <- expect_error(hamcmc_sa(x, rnorm(5), iterations = 10, quiet = TRUE, intercept = FALSE,
                              control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "matrix"))), class = "scalebayes_error")
  expect_match(conditionMessage(e), "2,000")
  expect_identical(e$arg, "sa_form")
})

test_that("HAMCMC-SA samples a network's weights (LibTorch), thread invariant; matrix form is regression only", {
  skip_if_not(isTRUE(scalebayes_info()$torch$available), "built without LibTorch")
  set.seed(4)
  x <- matrix(rnorm(120 * 3), 120)
  y <- drop(x %*% c(1, -1, 0.5)) + rnorm(120, sd = 0.3)
  args <- list(x = x, y = y, model = nn_mlp(4), epochs = 3, batch_size = 30, chains = 2, seed = 3, quiet = TRUE,
               control = sgmcmc_control(step_size = 1e-3))
  f1 <- do.call(hamcmc_sa, c(args, threads = 1))
  f2 <- do.call(hamcmc_sa, c(args, threads = 2))
  expect_identical(f1$method, "HAMCMC-SA + SSGL-SA")
  expect_equal(f1$weights, f2$weights)
  expect_true(all(is.finite(unlist(f1$weights))))
  expect_identical(f1$settings$control$sa_form, "diagonal")  # the default for a network
  # the lowrank form on LibTorch storage: finite, thread invariant
  lr <- utils::modifyList(args, list(control = sgmcmc_control(step_size = 1e-3, lbfgs = sgmcmc_lbfgs(sa_form = "lowrank", sa_memories = 3))))
  g1 <- do.call(hamcmc_sa, c(lr, threads = 1))
  g2 <- do.call(hamcmc_sa, c(lr, threads = 2))
  expect_equal(g1$weights, g2$weights)
  expect_true(all(is.finite(unlist(g1$weights))))
  expect_false(isTRUE(all.equal(g1$weights, f1$weights)))
  expect_error(do.call(hamcmc_sa, utils::modifyList(args, list(control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "matrix"))))),
               class = "scalebayes_error", regexp = "regression only")
})

test_that("the trace reports the preconditioned step exactly on an isotropic Gaussian", {
  # target N(0, 0.25 I): every curvature pair is exact (y = 4 s), so gamma = 4, no damping, the L-BFGS inverse
  # Hessian is 0.25 I. With precond_init = "curvature" (the default) G_1 = I / gamma_1 = 0.25 I (the probe pair
  # is exact too), so every step from the first is 0.25 g; with "identity" (G_1 = I, Algorithm 2 as printed) the
  # SA average tends to 0.25 I from I: the drift is 0.25 g and the noise 0.5 z once sum(omega_k) is large (about
  # 24 over 1,000 iterations: the start's weight is below e^-24), and at iteration 100 (sum 6.7) the drift is
  # still 0.25 + 0.75 e^-6.7 = 0.2509. HAMCMC, with no SA of the preconditioner, has 0.25 I from its first full
  # memory on. SGLD reports nothing.
  tg <- sgmcmc_target("gaussian", mean = rep(0, 5), cov = diag(0.25, 5))
  for (init in c("curvature", "identity")) for (form in c("diagonal", "matrix", "lowrank")) {
    lab <- paste(init, form)
    f <- suppressWarnings(sgmcmc_density_engine(tg, init = rep(1, 5), sampler = "hamcmc_sa", iterations = 1000,
                                         seed = 1, quiet = TRUE,
                                         control = sgmcmc_control(step_size = 0.01,
                                                                  trace_every = 100,
                                                                  lbfgs = sgmcmc_lbfgs(sa_form = form, precond_init = init))))
    last <- f$trace[nrow(f$trace), ]
    expect_equal(last$gamma, 4, tolerance = 1e-8, info = lab)
    expect_equal(last$drift_ratio, 0.25, tolerance = 1e-6, info = lab)
    # (the lowrank form's noise sums K + 1 normal vectors, so its length relative to the first one is random)
    if (form %in% c("diagonal", "matrix")) expect_equal(last$noise_ratio, 0.5, tolerance = 1e-6, info = lab)
    if (init == "curvature") {
      expect_equal(f$trace$drift_ratio, rep(0.25, 10), tolerance = 1e-6, info = lab)
    } else {
      # G~ = 0.25 I averaged into G_1 = I: every step in between is in [0.25, 1], the first traced one visibly
      expect_true(all(f$trace$drift_ratio > 0.25 - 1e-6 & f$trace$drift_ratio <= 1 + 1e-8), info = lab)
      expect_gt(f$trace$drift_ratio[1], 0.2505)
    }
  }
  h <- sgmcmc_density_engine(tg, init = rep(1, 5), sampler = "hamcmc", iterations = 200, seed = 1, quiet = TRUE,
                      control = sgmcmc_control(step_size = 0.01, trace_every = 50))
  expect_equal(h$trace$drift_ratio, rep(0.25, 4), tolerance = 1e-6)
  expect_equal(h$trace$gamma, rep(4, 4), tolerance = 1e-8)
  s <- sgmcmc_density_engine(tg, init = rep(1, 5), sampler = "sgld", iterations = 200, seed = 1, quiet = TRUE)
  expect_false(any(c("drift_ratio", "noise_ratio", "gamma") %in% names(s$trace)))
})

test_that("a sparse network's curvature pairs leave out the weights whose sign changed (the Laplace spike's jump)", {
  skip_if_fast_tier()
  skip_on_cran()
  # The SSGL spike's gradient -kappa0 sign(theta) / sigma jumps by 2 kappa0 / sigma where a weight crosses zero;
  # kept in a pair, that jump inflates y's / s'y ever more as the steps shrink, and the preconditioner collapses.
  # Measured on 500 MNIST digits, nn_mlp(32), step 0.1, iterations 201-400: median drift |G g| / |g| 5.5e-4 and
  # gamma 2.0e4 with the sign changes left out (4.1e-4 / 2.2e4 before the probe's first point moved off the kink);
  # 9.8e-6 and 1.1e5 with them kept (that earlier build with the calls of drop_sign_changes() removed; at step
  # 0.003: 5.6e-4 / 1.1e5 against 9.6e-7 / 2.4e6). The bounds sit near the geometric middles.
  md <- mnist_digits()
  x <- matrix(md$x, dim(md$x)[1])[1:500, ]
  f <- suppressWarnings(sgld_sa(x, md$y[1:500], model = nn_mlp(32), sampler = "hamcmc_sa", chains = 1,
                                iterations = 400, seed = 1, quiet = TRUE,
                                control = sgmcmc_control(step_size = 0.1, trace_every = 10)))
  tr <- f$trace[f$trace$iteration > 200, ]
  expect_gt(median(tr$drift_ratio), 6e-5)
  expect_lt(median(tr$gamma), 5e4)
})

test_that("the probe reaches a sparse regression's default start at 0 (G_1 = I / gamma_1, not I)", {
  skip_on_cran()
  # A regression starts at 0: a probe pair from there crosses the spike's kink in every coefficient, so the
  # probe's first point moves those coordinates off it first. Measured on raw Boston (intercept, every
  # coefficient sparse): drift |G g| / |g| at iteration 1 is 0.0011 (gamma_1 about 930); before that fix it was
  # 1.02 (gamma_1 = gamma_min = 1), as with precond_init = "identity" (exactly 1).
  x <- as.matrix(MASS::Boston[, -14])
  run <- function(init) {
    suppressWarnings(hamcmc_sa(x, MASS::Boston$medv, seed = 1, quiet = TRUE, iterations = 3, burnin = 1, chains = 1,
                               control = sgmcmc_control(trace_every = 1,
                                                        step_size = 1e-4,
                                                        diverge_loss = Inf,
                                                        lbfgs = sgmcmc_lbfgs(precond_init = init))))
  }
  expect_lt(run("curvature")$trace$drift_ratio[1], 0.01)
  expect_equal(run("identity")$trace$drift_ratio[1], 1, tolerance = 1e-12)
})

test_that("G_1 = I / gamma_1 keeps a summed-scale step stable from the first iteration", {
  skip_on_cran()
  # With G_1 = I (Algorithm 2 as printed) a step that suits the L-BFGS scale (the summed curvature, here about
  # N = 2000 times a unit per-example curvature) is about 2000 times too long for the first iterations; with
  # G_1 = I / gamma_1 it is not. Measured at step 0.1: with "identity" the log-likelihood falls from -1.4e7 to
  # -2.1e133 in the first 50 iterations (and is -7.7e90 at 200); with "curvature" it starts at -3,970 and never
  # goes below (-3,360 at 200). Steps 0.01 and 0.5 give the same picture.
  set.seed(5)
  n <- 2000
  x <- matrix(rnorm(n * 3), n, 3)
  y <- drop(x %*% c(1, -1, 0.5) + rnorm(n))
  run <- function(init) {
    suppressWarnings(sgld_sa(x, y, sampler = "hamcmc_sa", method = "none", sparse = FALSE, intercept = FALSE,
                             chains = 1, iterations = 200, burnin = 100, seed = 1, quiet = TRUE,
                             control = sgmcmc_control(step_size = 0.1,
                                                      trace_every = 1,
                                                      diverge_loss = Inf,
                                                      step = sgmcmc_step(schedule = "constant"),
                                                      lbfgs = sgmcmc_lbfgs(sa_form = "diagonal", precond_init = init))))
  }
  good <- run("curvature")
  expect_gt(min(good$trace$loglik[1:50]), 2 * good$trace$loglik[1])
  expect_gt(min(good$trace$loglik), 2 * good$trace$loglik[1])
  bad <- run("identity")
  expect_lt(min(bad$trace$loglik[1:50]), 1e3 * good$trace$loglik[1])
})
