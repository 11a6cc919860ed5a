# What the SG-MCMC defaults give and cost (issue "Posteriors you can trust"): a new user's first calls.
#   1. raw diabetes (442 x 10), a held-out fifth: every sampler of sgld_sa() with defaults: held-out RMSE / lm's,
#      max R-hat, min bulk ESS, the warm-up's step and time, the chosen run length, the whole call's time;
#   2. the logistic regression of data-raw/nuts_logistic.R against the stored NUTS posterior: largest mean error
#      in NUTS sds, range of sd ratios, bulk ESS per second of the whole call; with rstan installed, Stan's NUTS on
#      the same model in this process (sampling time, and ESS per second) beside it;
#   3. sgmcmc_density() on the banana with defaults: quantile errors against 10^6 exact draws in Monte-Carlo
#      standard errors.
# Run from the package root:  Rscript bench/sgmcmc_trust.R  (about 3 minutes on 2 cores with rstan's compile;
# output in bench/sgmcmc_trust.out.txt).
suppressPackageStartupMessages(library(scalebayes))
cat("scalebayes", format(utils::packageVersion("scalebayes")), "|", R.version.string, "|", format(Sys.time()), "\n")
cat("cores:", parallel::detectCores(), "\n\n")
muffle <- function(expr) withCallingHandlers(expr, warning = function(w) {
  cat("  [warning] ", conditionMessage(w), "\n", sep = "")
  invokeRestart("muffleWarning")
})
samplers <- c("sgld", "sghmc", "sgnht", "hamcmc_sa", "hamcmc")

cat("== 1. Raw diabetes, defaults, held-out fifth (set.seed(42)) ==\n")
data(diabetes)
x <- diabetes$x; y <- diabetes$y
set.seed(42)
test <- sample(nrow(x), nrow(x) %/% 5)
lmf <- stats::lm.fit(cbind(1, x[-test, ]), y[-test])
rmse_lm <- sqrt(mean((y[test] - cbind(1, x[test, ]) %*% lmf$coefficients)^2))
cat(sprintf("lm held-out RMSE %.2f; mean(y) %.1f\n", rmse_lm, mean(y[-test])))
rows <- list()
for (s in samplers) for (seed in 1:2) {
  t0 <- proc.time()[["elapsed"]]
  f <- muffle(sgld_sa(x[-test, ], y[-test], sampler = s, seed = seed, quiet = TRUE))
  el <- proc.time()[["elapsed"]] - t0
  cv <- f$diagnostics$convergence
  ci <- posterior_interval(f)["(Intercept)", ]
  rows[[length(rows) + 1]] <- data.frame(
    sampler = s, seed = seed, rmse_ratio = sqrt(mean((y[test] - predict(f, x[test, ])$fit)^2)) / rmse_lm,
    max_rhat = max(cv$rhat), min_ess = min(cv$ess_bulk), step = signif(f$settings$step_size, 3),
    capped = f$warmup$capped, iterations = f$settings$iterations, warmup_s = round(f$warmup$seconds, 2),
    total_s = round(el, 2), intercept_ci_holds_mean = ci[1] < mean(y[-test]) && mean(y[-test]) < ci[2])
}
print(do.call(rbind, rows), row.names = FALSE, digits = 4)

cat("\n== 2. Logistic regression (n = 200, 6 coefficients, N(0, 4) priors) against NUTS ==\n")
ref <- readRDS(system.file("extdata", "nuts_logistic.rds", package = "scalebayes"))
cat("stored reference:", ref$made_with, "\n")
rows <- list()
for (s in samplers) {
  t0 <- proc.time()[["elapsed"]]
  f <- muffle(sgld_sa(ref$x, ref$y, family = "binomial", sampler = s, method = "none", sparse = FALSE, seed = 1,
                      quiet = TRUE, control = sgmcmc_control(ssgl = sgmcmc_ssgl(prior_var = ref$prior_var))))
  el <- proc.time()[["elapsed"]] - t0
  d <- as.matrix(f)
  r <- apply(d, 2, stats::sd) / ref$sd
  cv <- f$diagnostics$convergence
  rows[[length(rows) + 1]] <- data.frame(
    sampler = s, max_abs_mean_err_sd = max(abs((colMeans(d) - ref$mean) / ref$sd)), sd_ratio_min = min(r),
    sd_ratio_max = max(r), max_rhat = max(cv$rhat), min_ess = min(cv$ess_bulk), total_s = round(el, 2),
    ess_per_s = round(min(cv$ess_bulk) / el, 1))
}
if (requireNamespace("rstan", quietly = TRUE)) {
  if (!nzchar(system.file("include", package = "BH"))) rstan::rstan_options(boost_lib = "/usr/include")
  code <- "data { int<lower=0> n; int<lower=0> p; matrix[n, p] x; int<lower=0, upper=1> y[n]; }
           parameters { real a; vector[p] b; }
           model { a ~ normal(0, 2); b ~ normal(0, 2); y ~ bernoulli_logit(a + x * b); }"
  t0 <- proc.time()[["elapsed"]]
  m <- rstan::stan_model(model_code = code)
  comp <- proc.time()[["elapsed"]] - t0
  t0 <- proc.time()[["elapsed"]]
  fit <- rstan::sampling(m, data = list(n = nrow(ref$x), p = ncol(ref$x), x = ref$x, y = ref$y), chains = 4,
                         cores = 2, iter = 2000, seed = 1, refresh = 0)
  el <- proc.time()[["elapsed"]] - t0
  a <- as.array(fit)[, , 1:6]
  ess <- min(apply(a, 3, posterior::ess_bulk))
  rows[[length(rows) + 1]] <- data.frame(
    sampler = "Stan NUTS (1000 warm-up + 1000 per chain)", max_abs_mean_err_sd = NA, sd_ratio_min = NA,
    sd_ratio_max = NA, max_rhat = max(apply(a, 3, posterior::rhat)), min_ess = ess, total_s = round(el, 2),
    ess_per_s = round(ess / el, 1))
  cat(sprintf("rstan compile %.1f s (not in total_s)\n", comp))
} else cat("(rstan not installed: no in-process NUTS timing)\n")
print(do.call(rbind, rows), row.names = FALSE, digits = 4)

cat("\n== 3. Banana target, sgmcmc_density() defaults, quantile error in Monte-Carlo se ==\n")
ex <- banana_exact_draws(1e6, seed = 1)
probs <- c(0.025, 0.25, 0.5, 0.75, 0.975)
for (s in c("sgld", "sghmc")) for (seed in 1:2) {
  t0 <- proc.time()[["elapsed"]]
  f <- muffle(sgmcmc_density(sgmcmc_target("banana"), sampler = s, seed = seed, quiet = TRUE))
  el <- proc.time()[["elapsed"]] - t0
  z <- sapply(1:2, function(j) {
    d <- posterior::as_draws_array(f)[, , j]
    (stats::quantile(as.vector(d), probs, names = FALSE) - stats::quantile(ex[, j], probs, names = FALSE)) /
      vapply(probs, function(p) posterior::mcse_quantile(d, p), numeric(1))
  })
  cat(sprintf("%-5s seed %d: %7d iterations, step %.4g, max R-hat %.4f, |z| of 5 quantiles x 2: max %.2f, %.2f s\n",
              s, seed, f$settings$iterations, f$settings$step_size, max(f$diagnostics$convergence$rhat),
              max(abs(z)), el))
}
