# Bad input: classed errors that name the argument; nothing crashes; the caller's data is not modified.

test_that("bad x / y / arguments give classed scalebayes errors", {
  d <- sim_gaussian(30, 4)
  x <- d$x; y <- d$y
  xna <- x; xna[2, 3] <- NA
  expect_error(wbb(xna, y, quiet = TRUE), class = "scalebayes_error", regexp = "finite")
  xinf <- x; xinf[1, 1] <- Inf
  expect_error(wbb(xinf, y, quiet = TRUE), class = "scalebayes_error")
  yn <- y; yn[4] <- NaN
  expect_error(wbb(x, yn, quiet = TRUE), class = "scalebayes_error", regexp = "y")
  expect_error(wbb(matrix(letters[1:8], 4), 1:4, quiet = TRUE), class = "scalebayes_error", regexp = "numeric")
  expect_error(wbb(x, y[-1], quiet = TRUE), class = "scalebayes_error", regexp = "length")
  expect_error(wbb(x, y, family = "binomial", quiet = TRUE), class = "scalebayes_error", regexp = "0/1")
  expect_error(wbb(x, rep(1, 30), family = "binomial", quiet = TRUE), class = "scalebayes_error")
  expect_error(wbb(x, y, lambda = -1, quiet = TRUE), class = "scalebayes_error", regexp = "lambda")
  expect_error(wbb(x, y, alpha = 1.5, quiet = TRUE), class = "scalebayes_error", regexp = "alpha")
  expect_error(wbb(x, y, draws = 0, quiet = TRUE), class = "scalebayes_error", regexp = "draws")
  expect_error(wbb(x, y, draws = 2.5, quiet = TRUE), class = "scalebayes_error", regexp = "draws")
  expect_error(wbb(x[1, , drop = FALSE], y[1], quiet = TRUE), class = "scalebayes_error", regexp = "2 rows")
  expect_error(wbb(x[, 0], y, quiet = TRUE), class = "scalebayes_error", regexp = "column")
  expect_error(wbb(x, y, threads = 0, quiet = TRUE), class = "scalebayes_error", regexp = "threads")
  expect_error(wbb(x, y, seed = -3, quiet = TRUE), class = "scalebayes_error", regexp = "seed")
  expect_error(wbb(x, y, control = list(), quiet = TRUE), class = "scalebayes_error", regexp = "control")
  expect_error(wbb(x, y, prior_weights = "both", quiet = TRUE), regexp = "prior_weights")
  expect_error(wbb_control(nfolds = 1), class = "scalebayes_error")
  expect_error(weighted_lasso(x, y, weights = rep(-1, 30)), class = "scalebayes_error", regexp = "weights")
  expect_error(weighted_lasso(x, y, penalty_factor = 1:2), class = "scalebayes_error", regexp = "penalty_factor")
  expect_error(wbb(x, y, quiet = TRUE, control = wbb_control(nfolds = 40)), class = "scalebayes_error",
               regexp = "nfolds")
})

test_that("constant and duplicated columns give warnings and sensible fits", {
  d <- sim_gaussian(40, 4)
  x <- cbind(d$x, const = 3)
  expect_warning(fit <- wbb(x, d$y, lambda = 5, draws = 20, seed = 1, quiet = TRUE), class = "scalebayes_warning")
  expect_true(all(fit$draws[, "const"] == 0))
  x2 <- cbind(d$x, dup = d$x[, 1])
  expect_warning(f2 <- wbb(x2, d$y, lambda = 5, draws = 20, seed = 1, quiet = TRUE), class = "scalebayes_warning")
  expect_lt(f2$diagnostics$kkt_max, 1e-8)
})

test_that("the caller's data are never modified", {
  d <- sim_gaussian(40, 4)
  x <- d$x; y <- d$y
  x0 <- x + 0; y0 <- y + 0
  fit <- wbb(x, y, draws = 10, seed = 1, quiet = TRUE)
  expect_identical(x, x0)
  expect_identical(y, y0)
  w <- rexp(40); w0 <- w + 0
  weighted_lasso(x, y, weights = w, lambda = 1)
  expect_identical(w, w0)
})

test_that("engine messages reach the user verbatim, braces included (LibTorch's messages have them)", {
  err <- tryCatch(scalebayes:::sb_call_engine(stop("shape mismatch in lambda(int)#1 {x} {}")), error = identity)
  expect_s3_class(err, "scalebayes_error_engine")
  expect_match(conditionMessage(err), "shape mismatch in lambda(int)#1 {x} {}", fixed = TRUE)
})

# ---- Issue 39, item 6: every bad-input finding is a classed error naming the argument --------------------------

# A condition's message without cli's formatting, on one line.
flat_msg <- function(e) gsub("[[:space:]]+", " ", conditionMessage(e))

test_that("a bad x / newx is named `x` / `newx` in every front end, not by its value", {
  d <- sim_gaussian(30, 4)
  xna <- d$x; xna[2, 3] <- NA
  xinf <- d$x; xinf[1, 1] <- Inf
  check_x <- function(e, arg) {
    expect_identical(e$arg, arg)
    expect_match(flat_msg(e), paste0("`", arg, "` must contain only finite values"), fixed = TRUE)
    expect_no_match(flat_msg(e), "<dbl", fixed = TRUE)
  }
  check_x(expect_error(sgld_sa(xna, d$y), class = "scalebayes_error_input"), "x")
  check_x(expect_error(hamcmc_sa(xinf, d$y), class = "scalebayes_error_input"), "x")
  check_x(expect_error(blasso(xna, d$y), class = "scalebayes_error_input"), "x")
  check_x(expect_error(sgld_sa(d$x, d$y, newx = xinf), class = "scalebayes_error_input"), "newx")
  fit <- suppressWarnings(sgld_sa(d$x, d$y, iterations = 100, chains = 1, seed = 1, quiet = TRUE,
                                  control = sgmcmc_control(step_size = 1e-3)))
  check_x(expect_error(predict(fit, newx = xna), class = "scalebayes_error_input"), "newx")
  # check_y_vector() reassigns its input too
  e <- expect_error(blasso(d$x, replace(d$y, 3, NaN)), class = "scalebayes_error_input")
  expect_identical(e$arg, "y")
  expect_match(flat_msg(e), "`y` must contain only finite values", fixed = TRUE)
})

test_that("Inf for a numeric setting says the setting must be finite", {
  d <- sim_gaussian(30, 4)
  cases <- list(
    sa_A = quote(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_A = Inf))), step_size = quote(sgmcmc_control(step_size = Inf)),
    tau = quote(vi_control(tau = Inf)), v1 = quote(hamcmc_sa(d$x, d$y, v1 = Inf)),
    variance = quote(elliptic_kle_data(2, variance = Inf)), noise_sd = quote(sparse_vi_sim(noise_sd = Inf)),
    prune = quote(bbb(d$x, d$y, prune = -Inf)), prior_var = quote(sgmcmc_control(ssgl = sgmcmc_ssgl(prior_var = Inf)))
  )
  for (arg in names(cases)) {
    e <- expect_error(eval(cases[[arg]]), class = "scalebayes_error_input")
    expect_identical(e$arg, arg)
    expect_match(flat_msg(e), paste0("`", arg, "` must be finite"), fixed = TRUE)
    expect_match(flat_msg(e), "You supplied (-)?Inf")
  }
  # the allowed range is stated: a positive number, or one in an interval
  expect_match(flat_msg(expect_error(sgmcmc_control(ssgl = sgmcmc_ssgl(sa_A = Inf)))), "a number > 0", fixed = TRUE)
  expect_match(flat_msg(expect_error(vi_control(tau = Inf))), "a number in (0, 1e+06]", fixed = TRUE)
  # diverge_loss takes Inf (the non-finite rule only), but not -Inf
  expect_identical(sgmcmc_control(diverge_loss = Inf)$diverge_loss, Inf)
  e <- expect_error(sgmcmc_control(diverge_loss = -Inf), class = "scalebayes_error_input")
  expect_match(flat_msg(e), "or Inf", fixed = TRUE)
})

test_that("a misspelt setting of sgmcmc_control() / vi_control() is named, with the closest valid name", {
  e <- expect_error(sgmcmc_control(stepsize = 1e-3), class = "scalebayes_error_input")
  expect_identical(e$arg, "stepsize")
  expect_match(flat_msg(e), "`sgmcmc_control()` has no argument `stepsize`", fixed = TRUE)
  expect_match(flat_msg(e), "Did you mean `step_size`?", fixed = TRUE)
  e <- expect_error(vi_control(taux = 1), class = "scalebayes_error_input")
  expect_identical(e$arg, "taux")
  expect_match(flat_msg(e), "Did you mean `tau`?", fixed = TRUE)
  # a misspelt setting of a part is named with the part it belongs to
  e <- expect_error(sgmcmc_control(temprature = 2, step_size = 1e-3), class = "scalebayes_error_input")
  expect_match(flat_msg(e), "Did you mean `step = sgmcmc_step(temperature = )`?", fixed = TRUE)
  e <- expect_error(sgmcmc_step(temprature = 2), class = "scalebayes_error_input")
  expect_match(flat_msg(e), "`sgmcmc_step()` has no argument `temprature`", fixed = TRUE)
  expect_match(flat_msg(e), "Did you mean `temperature`?", fixed = TRUE)
  # a valid call is unchanged
  expect_identical(sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(temperature = 2))$temperature, 2)
  expect_identical(vi_control(tau = 0.25)$tau, 0.25)
})

test_that("temperature has a lower bound; a frozen chain warns (an error for a density), a spike wider than the slab is an error", {
  d <- sim_gaussian(30, 4)
  e <- expect_error(sgmcmc_control(step = sgmcmc_step(temperature = 1e-300)), class = "scalebayes_error_input")
  expect_identical(e$arg, "temperature")
  expect_match(flat_msg(e), "at least 1e-08", fixed = TRUE)
  expect_identical(sgmcmc_control(step = sgmcmc_step(temperature = 1e-8))$temperature, 1e-8)
  # step_size = 0 where nothing else moves: every draw is the start (a warning; the draws are what was asked)
  w <- NULL
  f <- withCallingHandlers(sgld_sa(d$x, d$y, method = "none", iterations = 200, chains = 1, quiet = TRUE,
                                   standardize = FALSE, control = sgmcmc_control(step_size = 0)),
                           scalebayes_warning_frozen = function(c) { w <<- c; invokeRestart("muffleWarning") },
                           scalebayes_warning_convergence = function(c) invokeRestart("muffleWarning"),
                           scalebayes_warning_draws = function(c) invokeRestart("muffleWarning"))
  expect_s3_class(w, "scalebayes_warning_frozen")
  expect_match(flat_msg(w), "freezes the chain", fixed = TRUE)
  expect_true(all(apply(as.matrix(f), 2, function(v) length(unique(v)) == 1)))
  e <- expect_error(sgmcmc_density(sgmcmc_target("banana"), control = sgmcmc_control(step_size = 0)),
                    class = "scalebayes_error_input")
  expect_identical(e$arg, "step_size")
  # the SSGL spike (Laplace, sd sqrt(2) v0 sigma) must be narrower than the slab (Gaussian, sd sqrt(v1) sigma)
  e <- expect_error(sgld_sa(d$x, d$y, v0 = 2, v1 = 1), class = "scalebayes_error_input")
  expect_identical(e$arg, "v0")
  expect_match(flat_msg(e), "spike must be narrower than the slab", fixed = TRUE)
  expect_error(hamcmc_sa(d$x, d$y, v0 = 3), class = "scalebayes_error_input", regexp = "narrower")
})

test_that("data too large to square are scaling errors naming the argument, with no base R warning", {
  d <- sim_gaussian(30, 4)
  no_warning_error <- function(expr) {
    warned <- NULL
    e <- withCallingHandlers(tryCatch(expr, error = identity),
                             warning = function(w) {
                               warned <<- c(warned, conditionMessage(w))
                               invokeRestart("muffleWarning")
                             })
    expect_null(warned)
    e
  }
  e <- no_warning_error(trend_filter_wbb(sin(1:30 / 5) * 1e300, draws = 10, seed = 1, quiet = TRUE))
  expect_s3_class(e, "scalebayes_error_scaling")
  expect_identical(e$arg, "y")
  e <- no_warning_error(blasso(d$x * 1e300, d$y))
  expect_s3_class(e, "scalebayes_error_scaling")
  expect_identical(e$arg, "x")
  expect_no_match(flat_msg(e), "sigma2", fixed = TRUE)
  e <- no_warning_error(darcy_tpfa(matrix(1e300, 4, 4)))
  expect_s3_class(e, "scalebayes_error_scaling")
  expect_identical(e$arg, "kappa")
  e <- no_warning_error(darcy_tpfa(matrix(1e-300, 4, 4)))
  expect_identical(e$arg, "kappa")
  # the edges of the range solve: the pressures of a constant field are the linear ones
  expect_equal(range(darcy_tpfa(matrix(1e150, 4, 4), f = 0)$pressure), c(0.125, 0.875))
  expect_equal(range(darcy_tpfa(matrix(1e-150, 4, 4), f = 0)$pressure), c(0.125, 0.875))
})

test_that("a covariance is checked by a Cholesky factorization of its correlation form", {
  # scale does not fool it: diag(c(1e300, 1)) is positive definite
  t1 <- sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(c(1e300, 1)))
  expect_s3_class(t1, "sb_sgmcmc_target")
  e <- expect_error(sgmcmc_target("gaussian", mean = c(0, 0), cov = matrix(c(1, 2, 2, 1), 2)),
                    class = "scalebayes_error_input")
  expect_identical(e$arg, "cov")
  expect_match(flat_msg(e), "positive definite", fixed = TRUE)
  e <- expect_error(sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(c(1, -1))), class = "scalebayes_error_input")
  expect_match(flat_msg(e), "diagonal entry 2", fixed = TRUE)
  # numerically singular: a column that repeats another up to 1e-14 of its variance
  s <- matrix(1, 2, 2) + diag(c(0, 1e-14))
  expect_error(sgmcmc_target("gaussian", mean = c(0, 0), cov = s), class = "scalebayes_error_input",
               regexp = "singular")
})

test_that("an R target that stops, or has the wrong signature, is a classed error naming `target`", {
  ctl <- sgmcmc_control(step_size = 0.1)
  run <- function(tg, ...) sgmcmc_density(tg, init = c(0, 0), iterations = 50, chains = 1, control = ctl, seed = 1,
                                          quiet = TRUE, ...)
  e <- expect_error(run(function(b) stop("my target broke")), class = "scalebayes_error_target")
  expect_identical(e$arg, "target")
  expect_match(flat_msg(e), "`target` stopped with an error at `init` (chain 1)", fixed = TRUE)
  expect_match(flat_msg(e), "my target broke", fixed = TRUE)
  k <- 0
  later <- function(b) {
    k <<- k + 1
    if (k > 5) stop("later break")
    list(log_density = -sum(b^2) / 2, gradient = -b)
  }
  e <- expect_error(run(later), class = "scalebayes_error_target")
  expect_identical(e$arg, "target")
  expect_match(flat_msg(e), "during the run", fixed = TRUE)
  expect_match(flat_msg(e), "later break", fixed = TRUE)
  # the signature, checked up front
  e <- expect_error(run(function() list(log_density = 0, gradient = c(0, 0))), class = "scalebayes_error_input")
  expect_identical(e$arg, "target")
  expect_match(flat_msg(e), "must take one argument", fixed = TRUE)
  e <- expect_error(run(function(b, scale) list(log_density = -sum(b^2) / scale, gradient = -b)),
                    class = "scalebayes_error_input")
  expect_identical(e$arg, "target")
  expect_match(flat_msg(e), "`scale` has no default", fixed = TRUE)
  # further arguments with defaults, or dots, are fine
  fit <- suppressWarnings(run(function(b, scale = 1, ...) list(log_density = -sum(b^2) / 2 / scale, gradient = -b / scale)))
  expect_true(all(is.finite(as.matrix(fit))))
})

test_that("a non-finite gradient or log density of an R target is reported as the target's, not the step's", {
  ctl <- sgmcmc_control(step_size = 0.1)
  run <- function(tg) sgmcmc_density(tg, init = c(0, 0), iterations = 50, chains = 1, control = ctl, seed = 1,
                                     quiet = TRUE)
  k <- 0
  bad_grad <- function(b) {
    k <<- k + 1
    g <- -b
    if (k > 11) g[1] <- NaN  # call 1 checks init: call k + 1 is iteration k
    list(log_density = -sum(b^2) / 2, gradient = g)
  }
  e <- expect_error(run(bad_grad), class = "scalebayes_error_target")
  expect_s3_class(e, "scalebayes_error_diverged")
  expect_identical(e$arg, "target")
  expect_match(flat_msg(e), "`target` returned a non-finite gradient at iteration 11 (chain 1)", fixed = TRUE)
  expect_true(all(is.finite(e$last_state)))
  k <- 0
  bad_logd <- function(b) {
    k <<- k + 1
    list(log_density = if (k > 11) NaN else -sum(b^2) / 2, gradient = -b)
  }
  fit <- NULL
  expect_warning(fit <- suppress_convergence(run(bad_logd)), class = "scalebayes_warning_target")
  expect_true(all(is.finite(as.matrix(fit))))
  expect_true(is.nan(fit$trace$log_density[nrow(fit$trace)]))
})

test_that("one kept draw warns and leaves the sds NA; a zero gradient's drift ratio is NA, not NaN", {
  d <- sim_gaussian(30, 4)
  fit <- NULL
  expect_warning(fit <- sgld_sa(d$x, d$y, iterations = 200, burnin = 199, chains = 1, seed = 1, quiet = TRUE,
                                control = sgmcmc_control(step_size = 1e-3)), class = "scalebayes_warning_draws")
  expect_true(all(is.na(fit$coef_sd)))
  expect_false(any(is.nan(fit$coef_sd)))
  # HAMCMC-SA started at the mode of a gaussian target: the gradient there is zero
  f2 <- suppress_convergence(sgmcmc_density(sgmcmc_target("gaussian", mean = 0, cov = matrix(1)), sampler = "hamcmc_sa",
                                            iterations = 100, chains = 1, seed = 1, quiet = TRUE,
                                            control = sgmcmc_control(step_size = 0.01, trace_every = 1)))
  expect_true(is.na(f2$trace$drift_ratio[1]))
  expect_false(any(is.nan(f2$trace$drift_ratio)))
  expect_true(all(is.finite(f2$trace$drift_ratio[-1])))
})

test_that("vae_decode() far out in the latent space and nn_export() to an unwritable path name the argument", {
  skip_if_no_torch()
  set.seed(1)
  x <- matrix(rbinom(60 * 8, 1, 0.3), 60, 8)
  fit <- vae(x, latent = 2, encoder = nn_mlp(8), decoder = nn_mlp(8), epochs = 2, seed = 1, quiet = TRUE)
  e <- expect_error(vae_decode(fit, c(1e300, 0)), class = "scalebayes_error_input")
  expect_identical(e$arg, "z")
  expect_match(flat_msg(e), "non-finite probabilities", fixed = TRUE)
  expect_true(all(is.finite(vae_decode(fit, c(3, -3)))))
  skip_on_os(c("windows", "mac", "solaris"))  # /proc: Linux
  net <- wbb_nn(x, x[, 1] + rnorm(60), model = nn_mlp(3), draws = 2, seed = 1, quiet = TRUE,
                control = nn_control(epochs = 1, batch_size = 20))
  for (p in c("/proc/scalebayes-test.pt", "/proc/version")) {  # a new file, an existing one (unwritable even for root)
    e <- expect_error(nn_export(net, p), class = "scalebayes_error_input")
    expect_identical(e$arg, "path")
    expect_match(flat_msg(e), "`path` cannot be written", fixed = TRUE)
  }
})

test_that("a choice argument names its choices and what was given instead", {
  banana <- function(b) list(log_density = -sum(b^2) / 2, gradient = -b)
  # a function given where a sampler name goes (a positional slip): said as "a function", not deparsed
  e <- expect_error(sgmcmc_density(banana, c(0, 0), function(b) -b), class = "scalebayes_error_input")
  expect_identical(e$arg, "sampler")
  # every sampler of the table, the last after "or"
  names_ <- sgmcmc_samplers()$name
  expect_match(flat_msg(e), paste0("`sampler` must be one of ", paste0('"', head(names_, -1), '"', collapse = ", "),
                                   ', or "', tail(names_, 1), '"'), fixed = TRUE)
  expect_match(flat_msg(e), "You supplied a function.", fixed = TRUE)
  e <- expect_error(sgmcmc_density(banana, c(0, 0), sampler = "nuts"), class = "scalebayes_error_input")
  expect_match(flat_msg(e), 'You supplied "nuts".', fixed = TRUE)
  e <- expect_error(nn_control(init = c("fan_in", "x")), class = "scalebayes_error_input")
  expect_identical(e$arg, "init")
  expect_match(flat_msg(e), "You supplied a character vector.", fixed = TRUE)
})
