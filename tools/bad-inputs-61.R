# Issue 61, item 8 (and item 7's loo / waic / pp_check): each bad input in a fresh Rscript process, with what
# happens (the condition's classes and first line, or the value). Usage (against an install in R_LIBS):
#   Rscript tools/bad-inputs-61.R [timeout_seconds] > bad-inputs.txt
args <- commandArgs(TRUE)
timeout <- if (length(args)) as.numeric(args[1]) else 60
pre <- 'suppressPackageStartupMessages(library(scalebayes)); set.seed(1)
x <- matrix(rnorm(60 * 3), 60, 3); y <- drop(x %*% c(1, -1, 0.5)) + rnorm(60)
d <- data.frame(x, y = y)'
cases <- list(
  gaussian_d3000 = 'system.time(sgmcmc_density(sgmcmc_target("gaussian", mean = rep(0, 3000), cov = diag(3000)), iterations = 200, control = sgmcmc_control(step_size = 0.01), seed = 1))',
  wbb_loss_no_minimum = 'f <- wbb_loss(loss = function(theta, data, weights) list(value = -sum(theta), gradient = rep(-1, 2)), init = c(0, 0), data = data.frame(a = 1:10), draws = 5, seed = 1); summary(f)',
  tf_x_1e300 = 'trend_filter_wbb(rnorm(100), x = (1:100) * 1e300, draws = 10, seed = 1)',
  elliptic_kle_size = 'elliptic_kle_data(n = 1e6, grid = 50)',
  sgld_constant_y = 'sgld_sa(x, rep(1, 60), iterations = 200, seed = 1)',
  sgld_y_1e_300 = 'sgld_sa(x, y * 1e-300, iterations = 200, seed = 1)',
  sgld_x_1e300 = 'sgld_sa(x * 1e300, y, iterations = 200, seed = 1)',
  hamcmc_constant_y = 'hamcmc_sa(x, rep(1, 60), iterations = 200, seed = 1)',
  wbb_nn_y_1e300 = 'wbb_nn(x, y * 1e300, model = nn_mlp(4), draws = 2, epochs = 2, seed = 1)',
  log_lik_exact_fit = 'f <- wbb(x, rep(1, 60), draws = 10, seed = 1); range(log_lik(f))',
  log_lik_newy_1e300 = 'f <- wbb(x, y, draws = 10, seed = 1); range(log_lik(f, newdata = x, newy = y * 1e300))',
  bbb_batch = 'bbb(x, y, model = nn_mlp(4), batch = 16, epochs = 2, seed = 1)',
  wl_weights_1e300 = 'weighted_lasso(x, y, weights = c(1e300, rep(1, 59)))$kkt',
  ksd_c_tiny = 'f <- sgld_sa(x, y, iterations = 300, seed = 1); ksd(f, c = 1e-300)',
  hamcmc_iterations_1 = 'f <- hamcmc_sa(x, y, iterations = 1, seed = 1); f$coef_sd',
  ksd_no_method = 'ksd(wbb(x, y, draws = 10, seed = 1))',
  nan_gradient_init = 'sgmcmc_density(function(b) list(log_density = -sum(b^2), gradient = rep(NaN, 2)), init = c(0, 0), iterations = 100, seed = 1)',
  nan_gradient_warmup = 'sgmcmc_density(function(b) list(log_density = -sum(b^2), gradient = if (sum(b^2) > 0.5) rep(NaN, 2) else -2 * b), init = c(0, 0), iterations = 100, seed = 1)',
  vae_predict_names = 'v <- vae(matrix(runif(200 * 4), 200, 4), latent = 1, encoder = nn_mlp(4), decoder = nn_mlp(4), epochs = 1, seed = 1); predict(v, newdata = matrix(1, 2, 3))',
  newdata_character = 'f <- wbb(y ~ ., data = d, draws = 10, seed = 1); nd <- d[1:2, ]; nd$X1 <- c("a", "b"); predict(f, newdata = nd)',
  newdata_na = 'f <- wbb(y ~ ., data = d, draws = 10, seed = 1); nd <- d[1:2, ]; nd$X1[1] <- NA; predict(f, newdata = nd)',
  target_variance = 'sgmcmc_target("gaussian", mean = 0, variance = 1e6)',
  target_cov_1e6 = 'f <- sgmcmc_density(sgmcmc_target("gaussian", mean = 0, cov = matrix(1e6)), iterations = 200, seed = 1); summary(f)',
  loo_fit = 'f <- wbb(x, y, draws = 50, seed = 1); class(loo::loo(f))',
  waic_fit = 'f <- wbb(x, y, draws = 50, seed = 1); class(loo::waic(f))',
  pp_check_fit = 'f <- wbb(x, y, draws = 50, seed = 1); class(bayesplot::pp_check(f))'
)
run_case <- function(name, code) {
  script <- tempfile(fileext = ".R")
  writeLines(c(pre, sprintf(
    'r <- tryCatch(withCallingHandlers({v <- {%s}; cat("VALUE:", paste(utils::capture.output(print(v)), collapse = " | "), "\\n")},
      warning = function(w) {cat("WARNING", paste(class(w)[1:2], collapse = "/"), ":", conditionMessage(w), "\\n"); invokeRestart("muffleWarning")}),
      error = function(e) cat("ERROR", paste(utils::head(class(e), 2), collapse = "/"), ":", conditionMessage(e), "\\n"))', code)), script)
  t0 <- Sys.time()
  out <- suppressWarnings(system2("timeout", c(timeout, file.path(R.home("bin"), "Rscript"), script), stdout = TRUE, stderr = TRUE))
  el <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  st <- attr(out, "status") %||% 0L
  msg <- gsub("\\s+", " ", paste(out, collapse = " "))
  cat(sprintf("### %s (%.1f s%s)\n%s\n\n", name, el, if (identical(st, 124L)) ", TIMEOUT" else "", substr(msg, 1, 600)))
}
`%||%` <- function(a, b) if (is.null(a)) b else a
sel <- if (length(args) > 1) args[-1] else names(cases)
for (nm in sel) run_case(nm, cases[[nm]])
