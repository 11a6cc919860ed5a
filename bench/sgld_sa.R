# Benchmark: the Table 1 run of Deng et al. (2019) (n = 100, p = 1000, 500 000 SGLD-SA iterations,
# minibatch 50) with scalebayes::sgld_sa() on one thread, against a plain R implementation of the same
# algorithm (vectorized over coefficients, one R-level loop over iterations) run for a fraction of the
# iterations and extrapolated linearly to 500 000 (labelled as such).
#
# Usage: Rscript bench/sgld_sa.R [iterations_R]      (default 5000 R iterations)
suppressPackageStartupMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
it_r <- if (length(args)) as.integer(args[1]) else 5000L
T_full <- 500000L

d <- scalebayes:::sgld_sa_simulate(n = 100, p = 1000, corr = 0.6, seed = 1)
v0 <- 0.1
sigma0 <- 1

# ---- plain R implementation of SGLD-SA (same update order as the engine) ---------------------------------
sgld_sa_r <- function(x, y, iterations, batch = 50, v0 = 0.1, v1 = 10, a = 1, b = ncol(x), nu = 1,
                      lambda = 1, sigma = 1, delta = 0.5, rho = 1, eps0 = 1e-3, gam = 1 / 3,
                      A = 10, Z = 1000, alpha = 0.7, burnin = iterations %/% 2, seed = 1) {
  set.seed(seed)
  N <- nrow(x); p <- ncol(x)
  beta <- numeric(p)
  rho <- rep(rho, p); k0 <- (1 - rho) / v0; k1 <- rho / v1
  sum_beta <- numeric(p); n_avg <- 0
  for (k in seq_len(iterations)) {
    idx <- sample.int(N, batch)
    xb <- x[idx, , drop = FALSE]
    r <- y[idx] - drop(xb %*% beta)
    if (k >= 2) {
      w <- min(1, A * (k - 1 + Z)^(-alpha))
      la <- log(delta) + dnorm(beta, 0, sigma * sqrt(v1), log = TRUE)
      lb <- log(1 - delta) - log(2 * sigma * v0) - abs(beta) / (sigma * v0)
      rho <- (1 - w) * rho + w / (1 + exp(lb - la))
      k0 <- (1 - w) * k0 + w * (1 - rho) / v0
      k1 <- (1 - w) * k1 + w * rho / v1
      delta <- (1 - w) * delta + w * (sum(rho) + a - 1) / (a + b + p - 2)
      Ra <- N + p + nu + 2; Rb <- sum(k0 * abs(beta))
      Rc <- N / batch * sum(r^2) + sum(k1 * beta^2) + nu * lambda
      sigma <- (1 - w) * sigma + w * (Rb + sqrt(Rb^2 + 4 * Ra * Rc)) / (2 * Ra)
    }
    eps <- eps0 * k^(-gam)
    grad <- N / batch * drop(crossprod(xb, r)) / sigma^2 - k0 * sign(beta) / sigma - k1 * beta / sigma^2
    beta <- beta + eps * grad + rnorm(p, 0, sqrt(2 * eps))
    if (k > burnin) { sum_beta <- sum_beta + beta; n_avg <- n_avg + 1 }
  }
  list(coef = sum_beta / n_avg, sigma = sigma, delta = delta)
}

cat(sprintf("scalebayes %s, %s, %s\n", utils::packageVersion("scalebayes"), R.version.string, Sys.time()))
cat(sprintf("CPU: %s\n", system("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2", intern = TRUE)))

t_cpp <- system.time(fit <- sgld_sa(d$x, d$y, method = "sa", iterations = T_full, batch_size = 50, v0 = v0,
                                    v1 = 10, intercept = FALSE, newx = d$x_test, threads = 1, seed = 1,
                                    quiet = TRUE,
                                    control = sgmcmc_control(ssgl = sgmcmc_ssgl(sigma_init = sigma0, rho_init = 1, b = 1000))))
mse_cpp <- mean((predict(fit)$fit - d$y_test)^2)

t_r <- system.time(fr <- sgld_sa_r(d$x, d$y, it_r, v0 = v0, sigma = sigma0, b = 1000))
t_r_extrap <- t_r[["elapsed"]] * T_full / it_r

cpu <- function(t) t[["user.self"]] + t[["sys.self"]]
cat(sprintf("sgld_sa() C++, 1 thread, %d iterations: %.2f s elapsed, %.2f s CPU; test MSE %.2f\n",
            T_full, t_cpp[["elapsed"]], cpu(t_cpp), mse_cpp))
cat(sprintf("plain R, %d iterations: %.2f s elapsed, %.2f s CPU -> extrapolated to %d iterations: %.0f s elapsed, %.0f s CPU\n",
            it_r, t_r[["elapsed"]], cpu(t_r), T_full, t_r_extrap, cpu(t_r) * T_full / it_r))
cat(sprintf("speed-up (extrapolated R / C++): %.0fx elapsed, %.0fx CPU\n", t_r_extrap / t_cpp[["elapsed"]],
            cpu(t_r) * T_full / it_r / cpu(t_cpp)))
cat(sprintf("load average at the end: %s\n", paste(readLines("/proc/loadavg"), collapse = " ")))
cat(sprintf("goal <= 30 s on one core: %s (elapsed), %s (CPU)\n", if (t_cpp[["elapsed"]] <= 30) "met" else "NOT met",
            if (cpu(t_cpp) <= 30) "met" else "NOT met"))
