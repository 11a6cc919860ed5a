# stan_target() on the 8-schools non-centred model (the model of bench/sgmcmc_eight_schools.R, written in Stan):
# 1. the cost of one evaluation (log density and gradient) through the Stan path against the same target written
#    in R: microseconds per call of the target as sgmcmc_density() calls it (stan_target()'s function: one
#    rstan::log_prob(gradient = TRUE)), of rstan::log_prob() itself, of rstan::grad_log_prob(), and of the
#    hand-written R function;
# 2. SGLD with every default on the Stan target against the NUTS reference stored in bench/sgmcmc_eight_schools.R
#    (on the unconstrained scale mu, log tau, eta: fit$unconstrained_draws), and the whole call's time against
#    the R target's.
# Needs rstan (compiles the model: about a minute). Run: Rscript bench/stan_target.R
suppressPackageStartupMessages(library(scalebayes))
stopifnot(requireNamespace("rstan", quietly = TRUE))
es_y <- c(28, 8, -3, 7, -1, 1, 18, 12)
es_s <- c(15, 10, 16, 11, 9, 11, 10, 18)
code <- "data { real y[8]; real<lower=0> s[8]; }
parameters { real mu; real<lower=0> tau; vector[8] eta; }
model { mu ~ normal(0, 5); tau ~ cauchy(0, 5); eta ~ normal(0, 1); y ~ normal(mu + tau * eta, s); }"
t_compile <- system.time(tg <- stan_target(code, data = list(y = es_y, s = es_s), model_name = "eight_schools"))
cat(sprintf("compile and load: %.1f s\n", t_compile[["elapsed"]]))
es_target <- function(th) {
  mu <- th[1]; lt <- th[2]; eta <- th[3:10]; tau <- exp(lt)
  m <- mu + tau * eta
  r <- (es_y - m) / es_s^2
  list(log_density = -mu^2 / 50 - log1p(tau^2 / 25) + lt - sum(eta^2) / 2 - sum((es_y - m)^2 / es_s^2) / 2,
       gradient = c(-mu / 25 + sum(r), 1 - 2 * tau^2 / 25 / (1 + tau^2 / 25) + sum(r * eta) * tau, -eta + r * tau))
}
set.seed(1)
pts <- matrix(stats::runif(10 * 2000, -2, 2), 10)
# the two targets agree: the same gradient, log densities equal up to Stan's dropped constant
g_diff <- max(abs(sapply(1:200, function(i) tg(pts[, i])$gradient - es_target(pts[, i])$gradient)))
c_diff <- range(sapply(1:200, function(i) tg(pts[, i])$log_density - es_target(pts[, i])$log_density))
cat(sprintf("Stan vs R target: max |gradient difference| %.2g, log density difference in [%.6f, %.6f]\n",
            g_diff, c_diff[1], c_diff[2]))
sf <- tg$fit
per_call <- function(f, reps = 10L) {  # microseconds per call over reps x 2000 points
  t <- system.time(for (r in seq_len(reps)) for (i in seq_len(ncol(pts))) f(pts[, i]))[["elapsed"]]
  1e6 * t / (reps * ncol(pts))
}
invisible(per_call(tg, 1L))  # warm-up: the first calls of each function are byte-compiled
us <- c(r_function = per_call(es_target),
        stan_target = per_call(tg),
        log_prob = per_call(function(u) rstan::log_prob(sf, u, adjust_transform = TRUE, gradient = TRUE)),
        grad_log_prob = per_call(function(u) rstan::grad_log_prob(sf, u, adjust_transform = TRUE)),
        log_prob_then_grad = per_call(function(u) {
          rstan::log_prob(sf, u, adjust_transform = TRUE)
          rstan::grad_log_prob(sf, u, adjust_transform = TRUE)
        }),
        instance_log_prob = per_call(function(u) sf@.MISC$stan_fit_instance$log_prob(u, TRUE, TRUE)))
cat("microseconds per evaluation (log density and gradient), 20,000 calls each:\n")
print(round(data.frame(us = us, ratio_to_r_function = us / us[["r_function"]]), 2))
# SGLD with every default, both targets from the same start (rep(0, 10))
ref <- data.frame(mean = c(4.3898, 0.7896, 0.3147, 0.0931, -0.0875, 0.0620, -0.1597, -0.0725, 0.3507, 0.0712),
                  sd = c(3.3205, 1.1862, 0.9847, 0.9398, 0.9646, 0.9418, 0.9306, 0.9422, 0.9585, 0.9733))
cat("target                   seconds  iterations  us/iteration  max|mean err|/sd  sd ratio range  max R-hat\n")
# Stan's default starts (seed 1): uniform(-2, 2) per chain from R's generator seeded by the run's seed; the
# R function started at the first of them takes the same warm-up path (the chains start at its draws)
u0 <- withr::with_seed(1, stats::runif(10, -2, 2))
for (what in c("stan_target", "r_function", "stan_target_random_init", "r_function_random_init")) {
  warned <- character()
  t <- system.time(f <- withCallingHandlers(switch(what,
    stan_target = sgmcmc_density(tg, init = rep(0, 10), seed = 1, quiet = TRUE),
    r_function = sgmcmc_density(es_target, init = rep(0, 10), seed = 1, quiet = TRUE),
    stan_target_random_init = sgmcmc_density(tg, seed = 1, quiet = TRUE),
    r_function_random_init = sgmcmc_density(es_target, init = u0, seed = 1, quiet = TRUE)),
    warning = function(w) { warned <<- c(warned, class(w)[1]); invokeRestart("muffleWarning") }))[["elapsed"]]
  d <- if (is.null(f$unconstrained_draws)) as.matrix(f) else f$unconstrained_draws
  err <- abs(colMeans(d) - ref$mean) / ref$sd
  ratio <- apply(d, 2, stats::sd) / ref$sd
  total_it <- f$settings$iterations * f$settings$chains
  cat(sprintf("%-24s %7.1f %11d %13.1f %17.2f   %5.2f - %5.2f  %9.3f\n", what, t, f$settings$iterations,
              1e6 * f$timing[["elapsed"]] / total_it, max(err), min(ratio), max(ratio),
              max(f$diagnostics$convergence$rhat)))
  cat(sprintf("    metric warm-up fell back to the grid: %s; warnings: %s; worst mean %s, worst sd %s\n",
              !is.null(f$warmup$grid_fallback), if (length(warned)) paste(unique(warned), collapse = ",") else "none",
              colnames(d)[which.max(err)], colnames(d)[which.max(abs(log(ratio)))]))
  if (what == "stan_target") { cat("constrained-scale summary (Stan's names):\n"); print(utils::head(summary(f), 3)) }
}
