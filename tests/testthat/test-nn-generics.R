# Issue 61, the network parts: the model generics of network fits at the training data they keep (fit$data) and at
# `newdata`; nn_export()'s default (one draw: the average of independently trained networks' weights is no network
# of the posterior) checked in PyTorch; the convergence warning of network chains (only what a longer run fixes);
# nn_torch_code()'s labels, ndraws() and predict() of a VAE.

skip_if_no_torch()
skip_if_not_installed("MASS")

gen_data <- local({
  b <- MASS::Boston
  list(train = b[1:60, ], test = b[401:406, ])
})

test_that("a formula network fit answers every model generic at its training data and at newdata with the response", {
  d <- gen_data$train
  nd <- gen_data$test
  f <- wbb_nn(medv ~ ., data = d, model = nn_mlp(4), draws = 4, epochs = 2, seed = 1, quiet = TRUE, threads = 1)
  x <- model.matrix(medv ~ ., d)[, -1]
  expect_identical(f$data$x, x)
  expect_identical(unname(f$data$y), d$medv)
  tr <- predict(f, d, draws = TRUE)  # draws x training rows
  te <- predict(f, nd, draws = TRUE)
  # the noise sd of each bootstrap draw: its root mean squared residual on the training data
  expect_equal(f$sigma, sqrt(rowMeans((tr - rep(d$medv, each = 4))^2)))
  expect_equal(fitted(f), colMeans(tr), ignore_attr = TRUE)
  expect_equal(fitted(f, newdata = nd), colMeans(te), ignore_attr = TRUE)
  expect_equal(residuals(f), d$medv - colMeans(tr), ignore_attr = TRUE)
  expect_equal(residuals(f, newdata = nd), nd$medv - colMeans(te), ignore_attr = TRUE)  # the response from nd
  ll <- log_lik(f, newdata = nd)
  expect_equal(ll, matrix(dnorm(rep(nd$medv, each = 4), te, f$sigma, log = TRUE), 4), ignore_attr = TRUE)
  expect_identical(dim(log_lik(f)), c(4L, 60L))
  expect_identical(posterior_epred(f, newdata = nd), te)
  # posterior_predict() at newdata needs no responses: the draws' means plus N(0, sigma_t^2) noise
  z <- withr::with_seed(2, matrix(rnorm(4 * 6), 4))
  expect_equal(posterior_predict(f, newdata = nd, seed = 2), te + z * f$sigma, ignore_attr = TRUE)
  pp <- posterior_predict(f, seed = 2)
  expect_identical(dim(pp), c(4L, 60L))
  pi <- predictive_interval(f, newdata = nd, seed = 2, prob = 0.5)
  expect_equal(unname(pi[, 2]), unname(apply(posterior_predict(f, newdata = nd, seed = 2), 2, quantile, 0.75)))
  if (requireNamespace("bayesplot", quietly = TRUE)) {  # the README's posterior predictive check
    expect_s3_class(bayesplot::ppc_dens_overlay(d$medv, posterior_predict(f, seed = 1)), "ggplot")
  }
  skip_if_not_installed("loo")
  expect_s3_class(suppressWarnings(loo::loo(log_lik(f))), "psis_loo")
})

test_that("without its data a network fit says to pass newdata; SG-MCMC and variational fits answer too", {
  d <- gen_data$train
  nd <- gen_data$test
  f <- wbb_nn(medv ~ ., data = d, model = nn_mlp(3), draws = 2, epochs = 1, seed = 1, quiet = TRUE, threads = 1)
  out <- capture.output(print(f))
  expect_true(any(grepl("^  data: 60 training examples kept", out)))
  g <- f
  g$data <- NULL
  for (gen in list(fitted, residuals, log_lik, posterior_predict, posterior_epred)) {
    expect_error(gen(g), "newdata", class = "scalebayes_error_not_applicable")
  }
  expect_false(any(grepl("^  data:", capture.output(print(g)))))
  expect_equal(fitted(g, newdata = nd), fitted(f, newdata = nd))
  expect_equal(posterior_predict(g, newdata = nd, seed = 1), posterior_predict(f, newdata = nd, seed = 1))
  # an SG-MCMC network: its noise sd is the chain's SA estimate of sigma
  s <- suppressWarnings(sgld_sa(medv ~ ., data = d, model = nn_mlp(3), iterations = 40, burnin = 20, chains = 2,
                                seed = 2, quiet = TRUE, threads = 1, control = sgmcmc_control(step_size = 1e-4)))
  mu <- predict(s, nd, draws = TRUE)
  sig <- s$latent$sigma[match(s$chain, s$latent$chain)]
  z <- withr::with_seed(3, matrix(rnorm(length(mu)), nrow(mu)))
  expect_equal(posterior_predict(s, newdata = nd, seed = 3), mu + z * sig, ignore_attr = TRUE)
  expect_identical(dim(log_lik(s)), c(ndraws(s), 60L))
  expect_equal(fitted(s), colMeans(predict(s, d, draws = TRUE)), ignore_attr = TRUE)
  # a classification fit given x and y: the classes coded as the generics score them
  x <- as.matrix(d[, c("rm", "lstat")])
  y <- factor(ifelse(d$medv > 22, "hi", "lo"))
  v <- bbb(x, y, model = nn_mlp(3), draws = 3, epochs = 1, seed = 3, quiet = TRUE, threads = 1)
  p <- predict(v, x, draws = TRUE)  # P(second level, "lo")
  yy <- rep(as.integer(y == "lo"), each = 3)
  expect_equal(log_lik(v), log(ifelse(yy == 1, p, 1 - p)), ignore_attr = TRUE, tolerance = 1e-6)
  expect_equal(residuals(v), as.integer(y == "lo") - colMeans(p), ignore_attr = TRUE)
  # several gaussian outputs per example: not scored by the generics, a classed error that points to predict()
  m <- wbb_nn(x, cbind(d$medv, d$crim), model = nn_mlp(3), draws = 2, epochs = 1, seed = 1, quiet = TRUE, threads = 1)
  expect_error(fitted(m), "outputs", class = "scalebayes_error_not_applicable")
})

# ---- nn_export(): one draw by default ----------------------------------------------------------------------

py_torch_ok <- function() {
  py <- "/usr/bin/python3"
  file.exists(py) && identical(suppressWarnings(system2(py, c("-c", shQuote("import torch")), stdout = FALSE,
                                                        stderr = FALSE)), 0L)
}
# response(model(x)) in PyTorch for the state dict at `pt` and the module nn_torch_code(fit); x: a matrix
py_predict <- function(fit, x, pt) {
  dir <- withr::local_tempdir()
  writeLines(nn_torch_code(fit), file.path(dir, "net.py"))
  writeLines(c(paste(dim(x), collapse = " "), sprintf("%.17g", as.vector(t(x)))), file.path(dir, "x.txt"))
  writeLines(c("import sys, torch", "ns = {}", "exec(open(sys.argv[1]).read(), ns)", "model = ns['model']",
               "f = open(sys.argv[2]); shape = [int(v) for v in f.readline().split()]",
               "x = torch.tensor([float(v) for v in f.read().split()], dtype=torch.float64).reshape(shape).float()",
               "model.load_state_dict(torch.load(sys.argv[3])); model.eval()",
               "with torch.no_grad(): p = ns['response'](model(x)).double().reshape(-1)",
               "print(' '.join(repr(float(v)) for v in p.tolist()))"), file.path(dir, "run.py"))
  out <- system2("/usr/bin/python3", c(file.path(dir, "run.py"), file.path(dir, "net.py"), file.path(dir, "x.txt"), pt),
                 stdout = TRUE, stderr = TRUE)
  as.numeric(strsplit(utils::tail(out, 1), " ")[[1]])
}

test_that("nn_export() writes draw 1 by default; the mean of a sampling fit warns; PyTorch predicts as predict(draws =)", {
  d <- gen_data$train
  x <- as.matrix(d[, c("rm", "lstat", "crim")])
  f <- wbb_nn(x, d$medv, model = nn_mlp(5), draws = 3, epochs = 3, seed = 4, quiet = TRUE, threads = 1)
  dir <- withr::local_tempdir()
  p0 <- file.path(dir, "default.pt")
  p1 <- file.path(dir, "draw1.pt")
  p3 <- file.path(dir, "draw3.pt")
  pm <- file.path(dir, "mean.pt")
  expect_no_warning(nn_export(f, p0))
  nn_export(f, p1, draw = 1)
  nn_export(f, p3, draw = 3)
  expect_identical(readBin(p0, "raw", 1e6), readBin(p1, "raw", 1e6))
  expect_warning(nn_export(f, pm, draw = "mean"), "independently trained", class = "scalebayes_warning_export_mean")
  s <- suppressWarnings(sgld_sa(x, d$medv, model = nn_mlp(3), iterations = 40, burnin = 20, chains = 2, seed = 2,
                                quiet = TRUE, threads = 1, control = sgmcmc_control(step_size = 1e-4)),
                        classes = "scalebayes_warning_convergence")
  expect_warning(nn_export(s, file.path(dir, "s.pt"), draw = "mean"), class = "scalebayes_warning_export_mean")
  # a variational fit: the mean of q is the default, and no warning
  v <- bbb(x, d$medv, model = nn_mlp(3), draws = 3, epochs = 1, seed = 3, quiet = TRUE, threads = 1)
  pv <- file.path(dir, "q.pt")
  pv2 <- file.path(dir, "q2.pt")
  expect_no_warning(nn_export(v, pv))
  expect_no_warning(nn_export(v, pv2, draw = "mean"))
  expect_identical(readBin(pv, "raw", 1e6), readBin(pv2, "raw", 1e6))
  skip_if_not(py_torch_ok(), "/usr/bin/python3 cannot import torch")
  xt <- as.matrix(gen_data$test[, c("rm", "lstat", "crim")])
  pr <- predict(f, xt, draws = TRUE)
  expect_equal(py_predict(f, xt, p0), unname(pr[1, ]), tolerance = 1e-5)
  expect_equal(py_predict(f, xt, p3), unname(pr[3, ]), tolerance = 1e-5)
  # the mean of q in PyTorch is the engine's forward at fit$weights_mean (on the raw scale)
  ndv <- scalebayes:::nn_scale_x(scalebayes:::nn_prepare_x(xt), v$scaling)
  ref <- scalebayes:::cpp_nn_predict(v$spec, matrix(v$weights_mean), matrix(0, 0, 0), ndv$x, ndv$dim, FALSE)
  expect_equal(py_predict(v, xt, pv), scalebayes:::nn_unscale_pred(as.vector(ref), v$scaling), tolerance = 1e-5)
})

test_that("nn_torch_code() names the front end of the fit", {
  d <- gen_data$train
  x <- as.matrix(d[, c("rm", "lstat")])
  v <- bbb(x, d$medv, model = nn_mlp(2), draws = 2, epochs = 1, seed = 3, quiet = TRUE, threads = 1)
  expect_match(nn_torch_code(v), "(bbb() fit (", fixed = TRUE)
  sv <- sparse_vi(x, d$medv, model = nn_mlp(2), draws = 2, epochs = 1, seed = 3, quiet = TRUE, threads = 1)
  expect_match(nn_torch_code(sv), "(sparse_vi() fit (", fixed = TRUE)
  h <- suppressWarnings(hamcmc_sa(x, d$medv, model = nn_mlp(2), iterations = 30, burnin = 10, chains = 1, seed = 1,
                                  quiet = TRUE, threads = 1, control = sgmcmc_control(step_size = 1e-4)))
  expect_match(nn_torch_code(h), "(hamcmc_sa() fit (", fixed = TRUE)
  w <- wbb_nn(x, d$medv, model = nn_mlp(2), draws = 1, epochs = 1, seed = 3, quiet = TRUE, threads = 1)
  expect_match(nn_torch_code(w), "(wbb_nn() fit (", fixed = TRUE)
})

# ---- the convergence warning of network chains -------------------------------------------------------------

# A trace (chain, iteration, loss) of `chains` chains with `n` points after burn-in 0, and probe draws of each chain.
conv_case <- function(loss, probe, chains = 4L) {
  n <- length(loss) / chains
  trace <- data.frame(chain = rep(seq_len(chains), each = n), iteration = rep(seq_len(n), chains), loss = loss)
  scalebayes:::nn_convergence(trace, 0, rep(TRUE, chains), probe, rep(seq_len(chains), each = nrow(probe) / chains))
}

test_that("chains in different modes are reported, not warned about; a descending chain and too few effective draws warn", {
  set.seed(1)
  n <- 400
  # four stationary chains, each in its own mode: the function-space R-hat is far above 1.01 (the regression rule
  # would warn), and nothing a longer run would fix is wrong
  loss <- as.vector(sapply(1:4, function(c) 0.03 * c + 0.002 * rnorm(n)))
  probe <- matrix(sapply(1:4, function(c) c + 0.1 * rnorm(100)), ncol = 1, dimnames = list(NULL, "prediction[1]"))
  conv <- conv_case(loss, probe)
  expect_gt(max(conv$rhat), 2)
  expect_warning(scalebayes:::sgmcmc_warn_convergence(conv, 1000), class = "scalebayes_warning_convergence")
  expect_lt(max(conv$rhat_within), 1.1)
  expect_gt(min(conv$ess_tail_within[-1]), 300)  # 4 chains x 100 independent draws
  expect_no_warning(expect_false(scalebayes:::nn_warn_convergence(conv, 1000, 100)))
  info <- scalebayes:::nn_convergence_info(conv)
  expect_match(info, "between chains max R-hat", fixed = TRUE)
  expect_match(info, "not a warning", fixed = TRUE)
  # one chain still descending: its loss falls by half from the first half of the kept iterations to the second
  loss2 <- loss
  loss2[1:n] <- 0.03 * (1 + 2 * exp(-seq_len(n) / 150)) + 0.002 * rnorm(n)
  conv2 <- conv_case(loss2, probe)
  expect_identical(conv2$descending[1], 1)
  expect_warning(scalebayes:::nn_warn_convergence(conv2, 1000, 100), "1 chain is still descending",
                 class = "scalebayes_warning_convergence")
  # a significant fall of 15 % (the slow descent of a network's training loss under a decaying step, which
  # a longer run keeps: 1-13 % at the defaults on Boston) is reported, and does not warn
  loss3 <- loss
  loss3[1:n] <- 0.03 * (1.2 - 0.3 * seq_len(n) / n) + 0.0002 * rnorm(n)
  conv3 <- conv_case(loss3, probe)
  expect_gt(conv3$trend_z[1], 4)
  expect_gt(conv3$trend_drop[1], 0.1)
  expect_lt(conv3$trend_drop[1], 0.25)
  expect_no_warning(scalebayes:::nn_warn_convergence(conv3, 1000, 100))
  # random-walk probe predictions: few effective draws within the chains for the 95 % intervals
  rw <- matrix(as.vector(sapply(1:4, function(c) c + cumsum(0.1 * rnorm(100)))), ncol = 1,
               dimnames = list(NULL, "prediction[1]"))
  conv4 <- conv_case(loss, rw)
  expect_lt(conv4$ess_tail_within[2], 100)
  expect_warning(scalebayes:::nn_warn_convergence(conv4, 1000, 100), "effective draws",
                 class = "scalebayes_warning_convergence")
})

test_that("a network run stopped while its loss is still falling warns; the regression's R-hat rule is unchanged", {
  set.seed(3)
  x <- matrix(rnorm(200 * 3), 200, 3)
  y <- x[, 1] - x[, 2] + rnorm(200, sd = 0.3)
  # 400 iterations of a small step: the training loss of both chains falls by half over the kept iterations
  w <- NULL
  f <- withCallingHandlers(sgld_sa(x, y, model = nn_mlp(8), iterations = 400, chains = 2, seed = 1, quiet = TRUE,
                                   threads = 1, control = sgmcmc_control(step_size = 1e-4)),
                           scalebayes_warning_convergence = function(c) {
                             w <<- c
                             invokeRestart("muffleWarning")
                           })
  expect_match(conditionMessage(w), "2 chains are still descending")
  expect_gt(f$diagnostics$convergence$trend_drop[1], 0.3)
  expect_identical(f$diagnostics$convergence$descending[1], 2)
  # the regression: Stan's R-hat / ESS thresholds, as before (a 40-iteration run warns)
  expect_warning(sgld_sa(x, y, iterations = 40, burnin = 20, chains = 2, seed = 1, quiet = TRUE, threads = 1),
                 "R-hat", class = "scalebayes_warning_convergence")
})

# ---- VAE: ndraws() and predict()'s argument ---------------------------------------------------------------------

test_that("a VAE's ndraws() is the draws its draw generics give, and predict() names newdata", {
  x <- matrix(runif(30 * 4), 30, 4)
  v <- vae(x, latent = 1, encoder = nn_mlp(3), decoder = nn_mlp(3), epochs = 1, seed = 1, quiet = TRUE)
  expect_identical(ndraws(v), 1000L)
  expect_identical(ndraws(v), posterior::ndraws(as_draws_df(v, pars = 1:2, seed = 1)))
  e <- expect_error(predict(v, newdata = x * 3), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "newdata", fixed = TRUE)
  e <- expect_error(predict(v, newx = x[, 1:3]), class = "scalebayes_error_input")
  expect_match(conditionMessage(e), "newx", fixed = TRUE)
})

test_that("fitted(newdata = ) of a linear fit is the mean of predict(type = \"response\") there", {
  data(diabetes)
  f <- wbb(diabetes$x, diabetes$y, draws = 20, seed = 1, quiet = TRUE, threads = 1)
  expect_equal(fitted(f, newdata = diabetes$x[1:5, ]), predict(f, diabetes$x[1:5, ], type = "response")$fit)
  expect_equal(fitted(f, newx = diabetes$x[1:5, ]), fitted(f)[1:5], ignore_attr = TRUE)
})
