# Reference posterior from Stan's NUTS for a small Bayesian logistic regression.
#
# Made once; the result is stored in inst/extdata/nuts_logistic.rds and is read
# by tests / vignettes / benchmarks as a "gold standard" posterior (means, sds,
# quantiles and a thinned set of 4,000 draws for KSD / plots).
#
# Run from the package root:
#     nice -n 10 Rscript data-raw/nuts_logistic.R
#
# ---------------------------------------------------------------------------
# Setting up rstan on Debian 12 (R 4.2.2), as root:
#
#   apt-get update -qq
#   apt-get install -y --no-install-recommends r-cran-rstan
#     # -> rstan 2.21.7, StanHeaders 2.21.0-7, r-cran-bh 1.74.0-2,
#     #    libboost-dev 1.74 (headers in /usr/include/boost)
#
# Debian's r-cran-bh is an empty shell: /usr/lib/R/site-library/BH has no
# include/ folder, so system.file("include", package = "BH") is "" and so is
# rstan_options("boost_lib") (rstan sets it from that at load time).
# stan_model() then stops with
#     Boost not found; call install.packages('BH')
# because it checks file.exists(rstan_options("boost_lib")) before compiling,
# and passes -I"<boost_lib>" to the compiler.  Either of these fixes it
# (both were tested; the first is a one-off system change, the second is
# what this script does itself, so the script works with no system change):
#
#   (a) give BH the include folder it should have, with the usual BH layout
#       (include/boost/...), pointing at the system Boost headers:
#         mkdir -p /usr/lib/R/site-library/BH/include
#         ln -s /usr/include/boost /usr/lib/R/site-library/BH/include/boost
#       After this, system.file("include", package = "BH") is
#       /usr/lib/R/site-library/BH/include and rstan works unchanged.
#
#   (b) in the R session, before stan_model():
#         rstan_options(boost_lib = "/usr/include")
#       (or stan_model(..., boost_lib = "/usr/include")).  This adds
#       -I"/usr/include", which g++ ignores as it is already a system include
#       directory, so the headers come from /usr/include/boost either way.
#
# No ~/.R/Makevars and no PKG_CPPFLAGS are needed; Eigen comes from
# r-cran-rcppeigen, TBB from r-cran-rcppparallel, both pulled in by apt.
# Compiling the model takes about a minute on this machine.
# ---------------------------------------------------------------------------

t_start <- Sys.time()

stopifnot(file.exists("DESCRIPTION"),
          grepl("^Package: scalebayes", readLines("DESCRIPTION", n = 1)))

suppressPackageStartupMessages(library(rstan))
rstan_options(auto_write = FALSE)

# Fix (b) above, only when BH's include folder is missing.
boost_lib <- rstan_options("boost_lib")
if (is.null(boost_lib) || !nzchar(boost_lib) || !file.exists(boost_lib)) {
  if (!file.exists("/usr/include/boost/version.hpp"))
    stop("no Boost headers: apt-get install libboost-dev (or install.packages('BH'))")
  rstan_options(boost_lib = "/usr/include")
}

# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------
set.seed(20261127)
n <- 200L
p <- 5L
rho <- 0.5
Sigma <- rho^abs(outer(seq_len(p), seq_len(p), "-"))     # AR(1) correlation
x <- matrix(rnorm(n * p), n, p) %*% chol(Sigma)

# Standardize with the 1/n convention: centre, then scale to unit root mean square.
std1n <- function(x) {
  apply(x, 2, function(v) {
    v <- v - mean(v)
    v / sqrt(mean(v^2))
  })
}
x <- std1n(x)
colnames(x) <- paste0("x", seq_len(p))
# Standardizing again must leave x (numerically) unchanged.
restd_err <- max(abs(std1n(x) - x))
stopifnot(restd_err < 1e-12,
          max(abs(colMeans(x))) < 1e-12,
          max(abs(sqrt(colMeans(x^2)) - 1)) < 1e-12)

alpha_true <- -0.5
beta_true <- c(1.5, -1, 0.5, 0, 0.8)
eta_true <- alpha_true + drop(x %*% beta_true)
y <- as.integer(rbinom(n, 1L, plogis(eta_true)))

prior_var <- 4
prior_sd <- sqrt(prior_var)
coef_names <- c("(Intercept)", colnames(x))

cat(sprintf("data: n = %d, p = %d, mean(y) = %.3f, re-standardize max change = %.2e\n",
            n, p, mean(y), restd_err))

# ---------------------------------------------------------------------------
# Stan model: independent N(0, 4) priors on intercept and slopes.
# (Stan 2.21 syntax: old-style array declarations.)
# ---------------------------------------------------------------------------
stan_code <- "
data {
  int<lower=1> n;
  int<lower=1> p;
  matrix[n, p] x;
  int<lower=0, upper=1> y[n];
  real<lower=0> prior_sd;
}
parameters {
  real alpha;
  vector[p] beta;
}
model {
  alpha ~ normal(0, prior_sd);
  beta ~ normal(0, prior_sd);
  y ~ bernoulli_logit(alpha + x * beta);
}
"

t_compile <- Sys.time()
mod <- stan_model(model_code = stan_code, model_name = "logistic_ref")
t_compile <- as.numeric(difftime(Sys.time(), t_compile, units = "secs"))
cat(sprintf("compiled Stan model in %.1f s\n", t_compile))

n_chains <- 4L
n_warmup <- 2500L
n_keep <- 25000L
stan_seed <- 20261127L

t_sample <- Sys.time()
fit <- sampling(
  mod,
  data = list(n = n, p = p, x = unname(x), y = y, prior_sd = prior_sd),
  chains = n_chains, iter = n_warmup + n_keep, warmup = n_warmup,
  seed = stan_seed, refresh = 0, cores = min(2L, n_chains),
  control = list(adapt_delta = 0.9)
)
t_sample <- as.numeric(difftime(Sys.time(), t_sample, units = "secs"))
cat(sprintf("NUTS sampling: %.1f s\n", t_sample))

# ---------------------------------------------------------------------------
# Diagnostics
# ---------------------------------------------------------------------------
pars <- c("alpha", paste0("beta[", seq_len(p), "]"))
arr <- as.array(fit, pars = pars)                 # iterations x chains x params
dimnames(arr)[[3]] <- coef_names
stopifnot(identical(dim(arr), c(n_keep, n_chains, p + 1L)))

dr <- posterior::as_draws_array(arr)
rhat <- vapply(coef_names, function(nm) posterior::rhat(posterior::extract_variable_matrix(dr, nm)), 0)
ess_bulk <- vapply(coef_names, function(nm) posterior::ess_bulk(posterior::extract_variable_matrix(dr, nm)), 0)
ess_tail <- vapply(coef_names, function(nm) posterior::ess_tail(posterior::extract_variable_matrix(dr, nm)), 0)
n_div <- rstan::get_num_divergent(fit)
n_maxtree <- rstan::get_num_max_treedepth(fit)
bfmi <- rstan::get_bfmi(fit)

cat(sprintf("max Rhat = %.5f, min bulk ESS = %.0f, min tail ESS = %.0f, divergences = %d, max-treedepth hits = %d, min E-BFMI = %.3f\n",
            max(rhat), min(ess_bulk), min(ess_tail), n_div, n_maxtree, min(bfmi)))
stopifnot(max(rhat) < 1.01, n_div == 0L, min(ess_bulk) > 10000, n_maxtree == 0L)

# ---------------------------------------------------------------------------
# Summaries on all 100,000 draws
# ---------------------------------------------------------------------------
all_draws <- do.call(rbind, lapply(seq_len(n_chains), function(ch) arr[, ch, ]))
colnames(all_draws) <- coef_names
probs <- c(0.025, 0.25, 0.5, 0.75, 0.975)
post_mean <- colMeans(all_draws)
post_sd <- apply(all_draws, 2, sd)
post_q <- t(apply(all_draws, 2, quantile, probs = probs, names = FALSE))
dimnames(post_q) <- list(coef_names, paste0(100 * probs, "%"))
mcse_mean <- post_sd / sqrt(ess_bulk)

# Evenly thinned subset: every 25th kept draw of each chain (1,000 per chain),
# chains stacked in order -> 4,000 x 6.
thin_by <- n_keep / 1000L
keep_idx <- seq(thin_by, n_keep, by = thin_by)
draws <- do.call(rbind, lapply(seq_len(n_chains), function(ch) arr[keep_idx, ch, ]))
dimnames(draws) <- list(NULL, coef_names)
stopifnot(identical(dim(draws), c(4000L, p + 1L)))

# ---------------------------------------------------------------------------
# Laplace approximation (mode + inverse Hessian), used to tune the RWM
# proposal and to show how far the posterior is from Gaussian.
# ---------------------------------------------------------------------------
X1 <- cbind(1, x)
log_post <- function(th) {
  eta <- drop(X1 %*% th)
  sum(y * eta - log1p(exp(-abs(eta))) - pmax(eta, 0)) - sum(th^2) / (2 * prior_var)
}
grad_log_post <- function(th) {
  eta <- drop(X1 %*% th)
  drop(crossprod(X1, y - plogis(eta))) - th / prior_var
}
opt <- optim(rep(0, p + 1L), function(th) -log_post(th), function(th) -grad_log_post(th),
             method = "BFGS", control = list(reltol = 1e-14, maxit = 1000))
stopifnot(opt$convergence == 0)
th_mode <- opt$par
w <- plogis(drop(X1 %*% th_mode)); w <- w * (1 - w)
H <- crossprod(X1 * sqrt(w)) + diag(1 / prior_var, p + 1L)
laplace_cov <- solve(H)
laplace_sd <- sqrt(diag(laplace_cov))
names(th_mode) <- names(laplace_sd) <- coef_names

# Skewness of the marginals (0 for a Gaussian)
skew <- apply(all_draws, 2, function(v) mean((v - mean(v))^3) / sd(v)^3)

# ---------------------------------------------------------------------------
# Cross-check: long independent random-walk Metropolis in plain R
# ---------------------------------------------------------------------------
set.seed(20261128)
n_rwm <- 200000L
n_rwm_burn <- 5000L
d <- p + 1L
prop_chol <- chol((2.38^2 / d) * laplace_cov)
th <- th_mode + drop(rnorm(d) %*% chol(laplace_cov))      # dispersed start near the mode
lp <- log_post(th)
rwm <- matrix(NA_real_, n_rwm, d)
n_acc <- 0L
t_rwm <- Sys.time()
for (it in seq_len(n_rwm_burn + n_rwm)) {
  prop <- th + drop(rnorm(d) %*% prop_chol)
  lp_prop <- log_post(prop)
  if (log(runif(1)) < lp_prop - lp) {
    th <- prop; lp <- lp_prop
    if (it > n_rwm_burn) n_acc <- n_acc + 1L
  }
  if (it > n_rwm_burn) rwm[it - n_rwm_burn, ] <- th
}
t_rwm <- as.numeric(difftime(Sys.time(), t_rwm, units = "secs"))
colnames(rwm) <- coef_names
rwm_mean <- colMeans(rwm)
rwm_sd <- apply(rwm, 2, sd)
rwm_ess <- apply(rwm, 2, function(v) posterior::ess_bulk(matrix(v, ncol = 1)))
rwm_acc <- n_acc / n_rwm

z_mean <- (post_mean - rwm_mean) / post_sd            # difference in posterior-sd units
z_sd <- (post_sd - rwm_sd) / post_sd                  # relative sd difference
# Same difference in units of its Monte Carlo standard error (approx. N(0,1))
z_mcse <- (post_mean - rwm_mean) / sqrt(mcse_mean^2 + (rwm_sd / sqrt(rwm_ess))^2)
check_rwm_max_z <- max(abs(z_mean))

cat(sprintf("RWM: %d iterations (+%d burn-in) in %.1f s, acceptance %.3f, min ESS %.0f\n",
            n_rwm, n_rwm_burn, t_rwm, rwm_acc, min(rwm_ess)))
cat(sprintf("RWM vs NUTS: max |mean diff| / post sd = %.4f; max |sd diff| / post sd = %.4f; max |mean diff| / MCSE = %.2f\n",
            check_rwm_max_z, max(abs(z_sd)), max(abs(z_mcse))))
stopifnot(check_rwm_max_z < 0.1, max(abs(z_mcse)) < 5)

# ---------------------------------------------------------------------------
# Save
# ---------------------------------------------------------------------------
made_with <- sprintf(
  "rstan %s (StanHeaders %s), %s; made %s by data-raw/nuts_logistic.R; NUTS %d chains x %d kept (+%d warm-up) = %d draws, seed %d, adapt_delta 0.9; 'draws' = every %dth draw of each chain (%d)",
  as.character(packageVersion("rstan")), as.character(packageVersion("StanHeaders")),
  R.version.string, format(Sys.Date()), n_chains, n_keep, n_warmup,
  n_chains * n_keep, stan_seed, thin_by, nrow(draws))

ref <- list(
  x = x,
  y = y,
  prior_var = prior_var,
  names = coef_names,
  mean = post_mean,
  sd = post_sd,
  quantiles = post_q,
  draws = draws,
  ess_bulk = ess_bulk,
  ess_tail = ess_tail,
  rhat = rhat,
  n_divergent = n_div,
  mcse_mean = mcse_mean,
  skewness = skew,
  laplace_mode = th_mode,
  laplace_sd = laplace_sd,
  true_coef = setNames(c(alpha_true, beta_true), coef_names),
  check_rwm_max_z = check_rwm_max_z,
  check_rwm = list(n_iter = n_rwm, burn_in = n_rwm_burn, acceptance = rwm_acc,
                   mean = rwm_mean, sd = rwm_sd, ess_bulk = rwm_ess,
                   z_mean = z_mean, z_sd = z_sd, z_mcse = z_mcse),
  made_with = made_with
)

out <- file.path("inst", "extdata", "nuts_logistic.rds")
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
saveRDS(ref, out, compress = "xz")
chk <- readRDS(out)
stopifnot(identical(chk$mean, post_mean), identical(dim(chk$draws), c(4000L, 6L)))

cat("\nposterior summary (NUTS, 100,000 draws):\n")
print(round(cbind(mean = post_mean, sd = post_sd, post_q, rhat = rhat,
                  ess_bulk = ess_bulk, skew = skew,
                  laplace_mode = th_mode, laplace_sd = laplace_sd,
                  rwm_mean = rwm_mean, rwm_sd = rwm_sd, z_mean = z_mean), 4))
cat(sprintf("\nsaved %s (%.0f kB)\n", out, file.size(out) / 1024))
cat(made_with, "\n")
cat(sprintf("total wall time: %.1f s\n",
            as.numeric(difftime(Sys.time(), t_start, units = "secs"))))
