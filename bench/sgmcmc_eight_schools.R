# The 8-schools non-centred posterior (10 parameters: mu, log tau, eta_1..8; Rubin 1981's data) as an R target of
# sgmcmc_density() with every default, against Stan's NUTS on the same model (rstan, if installed: 4 chains of
# 20,000 kept iterations, adapt_delta 0.95; else the reference stored below from that run): per sampler the
# largest |mean error| / NUTS sd, the sd ratios, max R-hat, seconds, and whether the fit warned (the trust check
# of the preconditioned samplers, class scalebayes_warning_untrusted; R/ksd.R).
# Run: Rscript bench/sgmcmc_eight_schools.R [samplers, default: sgld sghmc sgnht hamcmc_sa hamcmc]
suppressPackageStartupMessages(library(scalebayes))
samplers <- commandArgs(TRUE)
if (!length(samplers)) samplers <- c("sgld", "sghmc", "sgnht", "hamcmc_sa", "hamcmc")
es_y <- c(28, 8, -3, 7, -1, 1, 18, 12)
es_s <- c(15, 10, 16, 11, 9, 11, 10, 18)
# theta = (mu, log tau, eta); mu ~ N(0, 5), tau ~ half-Cauchy(0, 5), eta ~ N(0, 1), y_j ~ N(mu + tau eta_j, s_j),
# with the log-Jacobian of tau = exp(log tau)
es_target <- function(th) {
  mu <- th[1]; lt <- th[2]; eta <- th[3:10]; tau <- exp(lt)
  m <- mu + tau * eta
  r <- (es_y - m) / es_s^2
  list(log_density = -mu^2 / 50 - log1p(tau^2 / 25) + lt - sum(eta^2) / 2 - sum((es_y - m)^2 / es_s^2) / 2,
       gradient = c(-mu / 25 + sum(r), 1 - 2 * tau^2 / 25 / (1 + tau^2 / 25) + sum(r * eta) * tau, -eta + r * tau))
}
pn <- c("mu", "log_tau", paste0("eta", 1:8))
# NUTS reference measured on 2026-12-02 with the code below (rstan 2.21.7, seed 1)
ref <- data.frame(mean = c(4.3898, 0.7896, 0.3147, 0.0931, -0.0875, 0.0620, -0.1597, -0.0725, 0.3507, 0.0712),
                  sd = c(3.3205, 1.1862, 0.9847, 0.9398, 0.9646, 0.9418, 0.9306, 0.9422, 0.9585, 0.9733), row.names = pn)
if (requireNamespace("rstan", quietly = TRUE) && nzchar(Sys.getenv("BENCH_NUTS"))) {
  if (!dir.exists(rstan::rstan_options("boost_lib"))) rstan::rstan_options(boost_lib = "/usr/include")
  code <- "data{real y[8]; real<lower=0> s[8];} parameters{real mu; real<lower=0> tau; vector[8] eta;}
  model{ mu ~ normal(0,5); tau ~ cauchy(0,5); eta ~ normal(0,1); y ~ normal(mu + tau*eta, s);}"
  t <- system.time(fit <- rstan::sampling(rstan::stan_model(model_code = code), data = list(y = es_y, s = es_s),
                                          chains = 4, iter = 25000, warmup = 5000, seed = 1, refresh = 0,
                                          control = list(adapt_delta = 0.95)))[["elapsed"]]
  e <- rstan::extract(fit)
  d <- cbind(e$mu, log(e$tau), e$eta)
  ref <- data.frame(mean = colMeans(d), sd = apply(d, 2, stats::sd), row.names = pn)
  cat(sprintf("NUTS: %.1f s (compile and sample), %d divergences\n", t, rstan::get_num_divergent(fit)))
}
cat("sampler    seconds  iterations  max|mean err|/sd  sd ratio range   max R-hat  warned\n")
for (s in samplers) {
  warned <- character()
  t <- system.time(f <- withCallingHandlers(
    sgmcmc_density(es_target, init = rep(0, 10), sampler = s, seed = 1, quiet = TRUE),
    warning = function(w) { warned <<- c(warned, if (inherits(w, "scalebayes_warning_untrusted")) "untrusted" else class(w)[1]); invokeRestart("muffleWarning") }))[["elapsed"]]
  d <- as.matrix(f)
  err <- abs(colMeans(d) - ref$mean) / ref$sd
  ratio <- apply(d, 2, stats::sd) / ref$sd
  cat(sprintf("%-10s %7.1f %11d %17.2f   %5.2f - %5.2f   %9.3f  %s\n", s, t, f$settings$iterations, max(err),
              min(ratio), max(ratio), max(f$diagnostics$convergence$rhat),
              if (length(warned)) paste(unique(warned), collapse = ",") else "no"))
  kt <- f$diagnostics$ksd_test
  if (!is.null(kt)) cat(sprintf("           Stein E[s x] for log tau %.2f (se %.2f), p %.2g; KSD test p %.2g\n",
                                kt$stein[2], kt$stein_se[2], kt$stein_p_value, kt$p_value))
}
