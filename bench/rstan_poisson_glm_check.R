# Does rstan's `y ~ poisson_log_glm(X, a, b)` give NUTS the right log density? (issue 56, the Poisson NUTS
# reference of bench/sgmcmc_scale.R, whose chains did not move with that statement.) The same model three ways:
# the sampling statement, `target += poisson_log_glm_lpmf(...)` and `y ~ poisson_log(a + X * b)`; log_prob() and
# grad_log_prob() at three parameter values, n = 1,000 rows, p = 5. A sampling statement may drop constants, so
# the forms' log densities may differ by a constant, never by a function of the parameters.
#   Rscript bench/rstan_poisson_glm_check.R      # three Stan compiles (1-8 minutes each); output in
#                                                # bench/rstan_poisson_glm_check.out.txt
suppressPackageStartupMessages(library(rstan))
if (!dir.exists(rstan::rstan_options("boost_lib"))) rstan::rstan_options(boost_lib = "/usr/include")
cat("rstan", as.character(packageVersion("rstan")), "StanHeaders", as.character(packageVersion("StanHeaders")), "\n")
hdr <- "data { int<lower=1> N; int<lower=1> P; matrix[N, P] X; int<lower=0> y[N]; }
parameters { real a; vector[P] b; }
model {
  a ~ normal(0, 100);
  target += -sum(fabs(b)) - 0.5 * dot_self(b);
"
code_tilde <- paste0(hdr, "  y ~ poisson_log_glm(X, a, b);\n}")
code_target <- paste0(hdr, "  target += poisson_log_glm_lpmf(y | X, a, b);\n}")
code_plain <- paste0(hdr, "  y ~ poisson_log(a + X * b);\n}")
set.seed(1); N <- 1000; P <- 5
X <- matrix(rnorm(N * P), N, P); b0 <- c(0.2, -0.1, 0, 0.1, 0)
y <- rpois(N, exp(0.3 + drop(X %*% b0)))
dat <- list(N = N, P = P, X = X, y = y)
fits <- lapply(list(tilde = code_tilde, target = code_target, plain = code_plain), function(code) {
  sm <- stan_model(model_code = code)
  sampling(sm, data = dat, chains = 1, iter = 1, algorithm = "Fixed_param", refresh = 0)
})
pars <- list(c(0.3, b0), c(0, rep(0, P)), c(1, 0.5, -0.5, 0.2, 0, 0.1))
# log-likelihood by hand, full and without the -lgamma(y+1) constant
ll <- function(th) { eta <- th[1] + drop(X %*% th[-1]); sum(y * eta - exp(eta)) }
for (i in seq_along(pars)) {
  th <- pars[[i]]
  lp <- sapply(fits, function(f) log_prob(f, th, adjust_transform = FALSE))
  gr <- sapply(fits, function(f) grad_log_prob(f, th, adjust_transform = FALSE))
  cat(sprintf("theta %d: log_prob tilde %.4f target %.4f plain %.4f | target - tilde %.4f | plain - tilde %.4f | sum(y eta - e^eta) %.4f\n",
              i, lp["tilde"], lp["target"], lp["plain"], lp["target"] - lp["tilde"], lp["plain"] - lp["tilde"], ll(th)))
  cat(sprintf("          max |grad tilde - grad target| %.3g, max |grad plain - grad target| %.3g\n",
              max(abs(gr[, "tilde"] - gr[, "target"])), max(abs(gr[, "plain"] - gr[, "target"]))))
}
