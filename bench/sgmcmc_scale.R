# Where minibatches win: sgld_sa() against Stan's NUTS (rstan) on the same logistic (or Poisson) model as n
# grows. Issue item: "wall time to a bulk ESS of 400 for every coefficient, and the posterior means / sds
# against NUTS's", at n = 1e4, 1e5, 1e6 rows.
#
# The model (both samplers): y_i ~ Bernoulli(logit^-1(a + x_i' b)), x standardized here (mean 0, sd 1, so
# sgld_sa()'s own standardization is the identity and both samplers see the same coordinates), the prior that
# sgld_sa(method = "none") holds fixed: a ~ N(0, 100^2), b_j with log density -|b_j| - b_j^2 / 2 (the SSGL prior
# frozen at kappa0 = kappa1 = 1, sigma = 1). BENCH_FAMILY=poisson: y_i ~ Poisson(exp(a + x_i' b)) with the same
# prior (Stan: target += poisson_log_glm_lpmf), a = 0 and the slopes' signals 0.2 / -0.1 (mean count about 1.1). sgld_sa() runs with every other default (control variates at
# n > 10,000, the metric warm-up, 4 chains on 2 threads); NUTS runs `BENCH_CHAINS` chains (default 2) on 2 cores
# with `BENCH_NUTS_ITER` warm-up and as many sampling iterations (default 300; Stan's defaults otherwise).
# ESS per second = the smallest bulk ESS over the coefficients / the whole call's elapsed seconds (NUTS: the
# sampling call without the compile). Also timed: sgld_sa() with its default method = "sa" (the adaptive
# spike-and-slab prior, which Stan cannot express), and plain minibatches (gradient = "minibatch") at 1e5.
#
#   Rscript bench/sgmcmc_scale.R            # n = 1e4, 1e5 (about 2 minutes)
#   BENCH_N=1e4,1e5,1e6 Rscript bench/sgmcmc_scale.R   # with n = 1e6 (about 10 minutes: NUTS dominates)
#   BENCH_P=20 (default) sets p; BENCH_NUTS=0 skips Stan.
#   BENCH_FAMILY=poisson Rscript bench/sgmcmc_scale.R            # the Poisson model
#   BENCH_P=100 Rscript bench/sgmcmc_scale.R                     # the p = 100 logistic rows
#   BENCH_MINIBATCH=0 skips the plain-minibatch row at 1e5 (its chains do not move; 250-800 s on a loaded machine).
#   BENCH_STAN_CACHE=/tmp/pois.rds reuses a compiled Stan model between runs (the compile is not timed anyway).
suppressPackageStartupMessages(library(scalebayes))
ns <- as.numeric(strsplit(Sys.getenv("BENCH_N", "1e4,1e5"), ",")[[1]])
p <- as.integer(Sys.getenv("BENCH_P", "20"))
nuts_iter <- as.integer(Sys.getenv("BENCH_NUTS_ITER", "300"))
nuts_chains <- as.integer(Sys.getenv("BENCH_CHAINS", "2"))
use_nuts <- Sys.getenv("BENCH_NUTS", "1") != "0" && requireNamespace("rstan", quietly = TRUE)
family <- match.arg(Sys.getenv("BENCH_FAMILY", "binomial"), c("binomial", "poisson"))
cat(sprintf("%s, %s; %s; load %s\n", family, format(Sys.time(), tz = "UTC", usetz = TRUE), R.version.string,
            paste(readLines("/proc/loadavg", warn = FALSE), collapse = " ")))

simulate <- function(n, p, seed = 1) {
  set.seed(seed)
  x <- matrix(stats::rnorm(n * p), n, p)
  if (family == "poisson") {
    b <- c(rep(0.2, 5), rep(-0.1, 5), rep(0, p - 10))
    y <- stats::rpois(n, exp(drop(x %*% b)))
  } else {
    b <- c(rep(0.5, 5), rep(-0.25, 5), rep(0, p - 10))
    y <- stats::rbinom(n, 1, stats::plogis(-0.5 + drop(x %*% b)))
  }
  # sgld_sa()'s standardization: centred, divided by the population sd
  x <- sweep(x, 2L, colMeans(x))
  x <- sweep(x, 2L, sqrt(colMeans(x^2)), "/")
  colnames(x) <- paste0("x", seq_len(p))
  list(x = x, y = y)
}

stan_code <- if (family == "poisson") "
data { int<lower=1> N; int<lower=1> P; matrix[N, P] X; int<lower=0> y[N]; }
parameters { real a; vector[P] b; }
model {
  a ~ normal(0, 100);
  target += -sum(fabs(b)) - 0.5 * dot_self(b);
  // not `y ~ poisson_log_glm(X, a, b)`: in rstan 2.21.7 (StanHeaders 2.21.0-7) the sampling statement drops the
  // data term sum(y * eta - exp(eta)) from the log density while keeping its gradient (measured with log_prob()
  // and grad_log_prob(): bench/rstan_poisson_glm_check.R; reported as stan-dev/math#1498, stan-dev/rstan#722),
  // so the energy NUTS checks is wrong and the chains did not move. The target += form is right.
  target += poisson_log_glm_lpmf(y | X, a, b);
}" else "
data { int<lower=1> N; int<lower=1> P; matrix[N, P] X; int<lower=0, upper=1> y[N]; }
parameters { real a; vector[P] b; }
model {
  a ~ normal(0, 100);
  target += -sum(fabs(b)) - 0.5 * dot_self(b);
  y ~ bernoulli_logit_glm(X, a, b);
}"
# Stan's inits: its default (uniform(-2, 2) on every coefficient) for the logistic model; 0 for the Poisson one,
# where a random start puts eta = a + x'b at sd about 5 (counts up to e^20). (The Poisson chains that did not move,
# bulk ESS 1 from random and from zero inits, recorded in bench/RESULTS.md, were the sampling-statement bug below
# the Stan program, not the inits: BENCH_NUTS_INIT=random runs the Poisson model from Stan's random inits.)
nuts_init <- Sys.getenv("BENCH_NUTS_INIT", if (family == "poisson") "0" else "random")
sm <- NULL
if (use_nuts) {
  if (!dir.exists(rstan::rstan_options("boost_lib"))) rstan::rstan_options(boost_lib = "/usr/include")
  # BENCH_STAN_CACHE=<file.rds>: the compiled model is read from there when it was compiled from this program
  cache <- Sys.getenv("BENCH_STAN_CACHE", "")
  if (nzchar(cache) && file.exists(cache)) {
    sm <- readRDS(cache)
    if (!identical(as.character(sm@model_code), stan_code)) sm <- NULL
  }
  if (is.null(sm)) {
    t_c <- system.time(sm <- rstan::stan_model(model_code = stan_code))[["elapsed"]]
    cat(sprintf("Stan compile: %.0f s (not counted)\n", t_c))
    if (nzchar(cache)) saveRDS(sm, cache)
  } else {
    cat(sprintf("Stan model read from %s (compiled from the same program)\n", cache))
  }
}

min_ess <- function(d) min(apply(d, 2L, posterior::ess_bulk))
rows <- list()
for (n in ns) {
  d <- simulate(n, p)
  cat(sprintf("\n== %s, n = %s, p = %d ==\n", family, format(n, big.mark = ","), p))
  t_s <- system.time(f <- sgld_sa(d$x, d$y, family = family, method = "none", seed = 1, quiet = TRUE))[["elapsed"]]
  dr <- posterior::as_draws_matrix(f)
  dr <- dr[, c("(Intercept)", colnames(d$x)), drop = FALSE]
  m_s <- colMeans(dr)
  s_s <- apply(dr, 2L, stats::sd)
  e_s <- min_ess(dr)
  cat(sprintf("sgld_sa(method = \"none\"): %.1f s, %s iterations x 4 chains, batch %d, min bulk ESS %.0f, %.1f ESS/s\n",
              t_s, format(f$settings$iterations, big.mark = ","), f$settings$batch_size, e_s, e_s / t_s))
  t_d <- system.time(fd <- sgld_sa(d$x, d$y, family = family, seed = 1, quiet = TRUE))[["elapsed"]]
  cat(sprintf("sgld_sa() every default (method = \"sa\"): %.1f s, min bulk ESS %.0f, inclusion of the 10 signals %.2f-%.2f, of the %d nulls mean %.3f\n",
              t_d, min(fd$diagnostics$convergence$ess_bulk, na.rm = TRUE), min(fd$inclusion[1:10]),
              max(fd$inclusion[1:10]), p - 10, mean(fd$inclusion[-(1:10)])))
  row <- data.frame(family = family, n = n, p = p, sgld_s = t_s, sgld_ess = e_s, sgld_ess_s = e_s / t_s, sgld_iter = f$settings$iterations,
                    sgld_batch = f$settings$batch_size, default_sa_s = t_d,
                    signals_min_incl = min(fd$inclusion[1:10]), nulls_mean_incl = mean(fd$inclusion[-(1:10)]))
  if (n <= 1e5 && n > 1e4 && Sys.getenv("BENCH_MINIBATCH", "1") != "0") {
    t_m <- system.time(fm <- suppressWarnings(sgld_sa(d$x, d$y, family = family, method = "none", seed = 1, quiet = TRUE,
                                                      control = sgmcmc_control(step = sgmcmc_step(gradient = "minibatch")))))[["elapsed"]]
    dm <- posterior::as_draws_matrix(fm)[, c("(Intercept)", colnames(d$x)), drop = FALSE]
    cat(sprintf("sgld_sa(gradient = \"minibatch\"): %.1f s, batch %d, %s iterations, min bulk ESS %.0f, %.2f ESS/s\n",
                t_m, fm$settings$batch_size, format(fm$settings$iterations, big.mark = ","), min_ess(dm), min_ess(dm) / t_m))
    row$minibatch_s <- t_m
    row$minibatch_ess <- min_ess(dm)
  }
  if (!is.null(sm)) {
    t_n <- system.time(fit <- rstan::sampling(sm, data = list(N = nrow(d$x), P = p, X = d$x, y = d$y), chains = nuts_chains,
                                              cores = 2, iter = 2 * nuts_iter, warmup = nuts_iter, seed = 1,
                                              init = nuts_init,
                                              refresh = 0))[["elapsed"]]
    a <- as.matrix(fit)
    a <- a[, c("a", paste0("b[", seq_len(p), "]")), drop = FALSE]
    e_n <- min_ess(a)
    m_n <- colMeans(a)
    s_n <- apply(a, 2L, stats::sd)
    err <- max(abs(m_s - m_n) / s_n)
    ratio <- range(s_s / s_n)
    cat(sprintf("NUTS (%d chains x %d + %d): %.1f s, min bulk ESS %.0f, %.2f ESS/s\n", nuts_chains, nuts_iter, nuts_iter,
                t_n, e_n, e_n / t_n))
    cat(sprintf("sgld_sa vs NUTS: max |mean diff| / NUTS sd %.3f, sd ratio %.3f-%.3f, ESS/s ratio %.1f\n", err,
                ratio[1], ratio[2], (e_s / t_s) / (e_n / t_n)))
    row <- cbind(row, data.frame(nuts_s = t_n, nuts_ess = e_n, nuts_ess_s = e_n / t_n, mean_err_sd = err,
                                 sd_ratio_lo = ratio[1], sd_ratio_hi = ratio[2], ess_s_ratio = (e_s / t_s) / (e_n / t_n)))
  }
  rows[[length(rows) + 1L]] <- row
}
res <- do.call(rbind, lapply(rows, function(r) { for (k in c("minibatch_s", "minibatch_ess")) if (is.null(r[[k]])) r[[k]] <- NA; r }))
cat("\n")
print(res, digits = 3, row.names = FALSE)
out <- Sys.getenv("BENCH_OUT", "")
if (nzchar(out)) saveRDS(res, out)
