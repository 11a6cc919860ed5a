# Per-iteration overhead of a minibatched model in sgmcmc_density() (issue 60, item 2): the R path
# (sgmcmc_model(log_lik = <R function>)) and the compiled path (a scalebayes::Target behind an external pointer,
# scalebayes/target.hpp), on the same Bayesian linear regression (p = 3 coefficients, N = 10,000 rows, minibatches
# of 100 rows, a Gaussian prior), SGLD at a fixed step, one chain, in the same process. Reported: microseconds per
# iteration of each path; the R path's own cost (the user's log_lik and log_prior called directly in an R loop on
# the same minibatches) and its overhead over that; and the compiled path against the built-in gaussian target
# (no data: the engine's own cost per iteration). Control variates (a second log_lik call per iteration) too.
#   R_LIBS=<lib> nice Rscript bench/sgmcmc_model.R
suppressPackageStartupMessages(library(scalebayes))
cat(sprintf("%s; load: %s\n", format(Sys.time(), tz = "UTC", usetz = TRUE), paste(readLines("/proc/loadavg"), collapse = "")))

set.seed(1)
N <- 10000L
X <- cbind(1, matrix(rnorm(N * 2), N, 2))
colnames(X) <- c("x0", "x1", "x2")
y <- drop(X %*% c(1, -0.5, 0.25) + rnorm(N))
df <- data.frame(y = y, X)
mat <- cbind(y = y, X)
lik_df <- function(theta, rows) {
  Z <- cbind(rows$x0, rows$x1, rows$x2)
  r <- rows$y - drop(Z %*% theta)
  list(log_lik = -0.5 * sum(r * r), gradient = drop(crossprod(Z, r)))
}
lik_mat <- function(theta, rows) {
  Z <- rows[, 2:4, drop = FALSE]
  r <- rows[, 1] - drop(Z %*% theta)
  list(log_lik = -0.5 * sum(r * r), gradient = drop(crossprod(Z, r)))
}
prior <- function(theta) list(log_prior = -sum(theta^2) / 200, gradient = -theta / 100)

t_compile <- system.time(Rcpp::sourceCpp(system.file("examples", "target_models.cpp", package = "scalebayes")))[["elapsed"]]
cat(sprintf("sourceCpp of the compiled model: %.1f s\n", t_compile))

S <- solve(crossprod(X) + diag(1 / 100, 3))
mu <- drop(S %*% crossprod(X, y))
ctl <- sgmcmc_control(step_size = 1e-6, step = sgmcmc_step(schedule = "constant"))
ctl_cv <- sgmcmc_control(step_size = 1e-6, step = sgmcmc_step(schedule = "constant", gradient = "control_variate"))
per_iter <- function(target, iterations, control = ctl, init = mu) {
  t <- system.time(f <- suppressWarnings(sgmcmc_density(target, init = init, iterations = iterations, chains = 1,
                                                      control = control, seed = 1, quiet = TRUE)))[["elapsed"]]
  stopifnot(!any(f$diverged))
  1e6 * t / iterations
}
reps <- 3
best <- function(f) min(replicate(reps, f()))
n <- 100L
it_r <- 10000L
it_c <- 400000L
us <- list()
us$r_df <- best(function() per_iter(sgmcmc_model(lik_df, data = df, log_prior = prior, batch_size = n), it_r))
us$r_mat <- best(function() per_iter(sgmcmc_model(lik_mat, data = mat, log_prior = prior, batch_size = n), it_r))
us$r_noprior <- best(function() per_iter(sgmcmc_model(lik_mat, data = mat, batch_size = n), it_r))
# the user's functions alone on the same kind of minibatches, called from an R loop
own <- function(lik, data, rows_of) {
  rows <- replicate(200, sort(sample.int(N, n)), simplify = FALSE)
  t <- system.time(for (k in 1:(it_r / 200)) for (r in rows) { lik(mu, rows_of(data, r)); prior(mu) })[["elapsed"]]
  1e6 * t / it_r
}
get_df <- scalebayes:::model_row_getter(df, "data.frame")  # the rows as the package subsets them
get_mat <- scalebayes:::model_row_getter(mat, "matrix")
us$own_df <- best(function() own(lik_df, df, function(d, r) get_df(r)))
us$own_mat <- best(function() own(lik_mat, mat, function(d, r) get_mat(r)))
us$c <- best(function() per_iter(sgmcmc_model(blr_model(X, y), batch_size = n), it_c))
us$c_cv <- best(function() per_iter(sgmcmc_model(blr_model(X, y), batch_size = n), it_c, ctl_cv))
us$r_mat_cv <- best(function() per_iter(sgmcmc_model(lik_mat, data = mat, log_prior = prior, batch_size = n), it_r, ctl_cv))
us$builtin <- best(function() per_iter(sgmcmc_target("gaussian", mean = mu, cov = S), it_c))
cat(sprintf("\nN = %d rows, p = 3, minibatch %d, SGLD, fixed step, one chain; best of %d runs; microseconds per iteration\n",
            N, n, reps))
tab <- data.frame(
  path = c("R log_lik, data frame", "R log_lik, matrix", "R log_lik, matrix, no log_prior",
           "  (user's log_lik + log_prior + row subset alone in an R loop, data frame)",
           "  (user's log_lik + log_prior + row subset alone in an R loop, matrix)",
           "compiled model (external pointer)", "compiled model, control variates",
           "R log_lik, matrix, control variates", "built-in gaussian target (no data)"),
  us_per_iteration = round(unlist(us[c("r_df", "r_mat", "r_noprior", "own_df", "own_mat", "c", "c_cv", "r_mat_cv", "builtin")]), 2))
print(tab, row.names = FALSE)
cat(sprintf("\nR path overhead over the user's own code: data frame %.1f us (%.2fx), matrix %.1f us (%.2fx)\n",
            us$r_df - us$own_df, us$r_df / us$own_df, us$r_mat - us$own_mat, us$r_mat / us$own_mat))
cat(sprintf("R path / compiled path: data frame %.0fx, matrix %.0fx\n", us$r_df / us$c, us$r_mat / us$c))
cat(sprintf("compiled path / built-in target (the model's 100 rows and the dispatch): %.2fx\n", us$c / us$builtin))
cat(sprintf("control variates / plain: compiled %.2fx, R %.2fx\n", us$c_cv / us$c, us$r_mat_cv / us$r_mat))
cat(sprintf("load after: %s\n", paste(readLines("/proc/loadavg"), collapse = "")))
