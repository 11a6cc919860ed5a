# Bias of the sampler forms on a correlated 5-d Gaussian target (sgmcmc_density(), built-in "gaussian"), the
# measurement quoted in ?hamcmc_sa and inst/design-sgmcmc.md ("Density targets"). Run from the package root:
#   nice -n 10 Rscript bench/density_forms.R
# Per form: 4 chains x 30 000 iterations (SGLD: 1.25e6, step 0.002) from 0, burn-in 2 000, constant step 0.01,
# memory 3, omega_k = 2 (50 + k)^-0.75. Reported: the largest |error of a mean| / sd, the largest relative error of
# a variance, the largest |z| of the 5 means and 15 covariance entries (se from the effective sample size), and
# the largest relative error of the covariance matrix (Frobenius norm of the error / of the covariance).
suppressPackageStartupMessages(library(scalebayes))
`%||%` <- function(a, b) if (is.null(a)) b else a
S <- 0.6^abs(outer(1:5, 1:5, "-")) * outer(c(1, 2, 0.5, 1, 1.5), c(1, 2, 0.5, 1, 1.5))
mu <- c(1, -2, 0.5, 0, 3)
tg <- sgmcmc_target("gaussian", mean = mu, cov = S)
zs <- function(fit) {
  x <- unclass(posterior::as_draws_array(fit))
  m <- colMeans(as.matrix(fit))
  zm <- sapply(1:5, function(i) (mean(x[, , i]) - mu[i]) / (sd(x[, , i]) / sqrt(posterior::ess_mean(x[, , i]))))
  zc <- c()
  for (i in 1:5) for (j in i:5) {
    v <- (x[, , i] - m[i]) * (x[, , j] - m[j])
    zc <- c(zc, (mean(v) - S[i, j]) / (sd(v) / sqrt(posterior::ess_mean(v))))
  }
  max(abs(c(zm, zc)))
}
forms <- list(
  "SGLD (step 0.002)" = list(sampler = "sgld", step = 0.002, iterations = 1.25e6, thin = 100),
  "HAMCMC-SA matrix" = list(sampler = "hamcmc_sa", sa_form = "matrix"),
  "HAMCMC-SA matrix, consecutive" = list(sampler = "hamcmc_sa", sa_form = "matrix", curvature = "consecutive"),
  "HAMCMC-SA matrix, normalized" = list(sampler = "hamcmc_sa", sa_form = "matrix", normalize = TRUE),
  # (the rows "HAMCMC-SA transport" and "transport, omega ~ 1" of density_forms.out.txt were run before the
  # transport form was removed: ?hamcmc_sa)
  "HAMCMC-SA lowrank" = list(sampler = "hamcmc_sa", sa_form = "lowrank"),
  "HAMCMC-SA diagonal" = list(sampler = "hamcmc_sa", sa_form = "diagonal"),
  "HAMCMC" = list(sampler = "hamcmc"),
  "HAMCMC, normalized" = list(sampler = "hamcmc", normalize = TRUE))
rows <- list()
for (nm in names(forms)) {
  f <- forms[[nm]]
  ctl <- sgmcmc_control(step_size = f$step %||% 0.01,
                        step = sgmcmc_step(schedule = "constant"),
                        lbfgs = sgmcmc_lbfgs(memory = 3, precond_init = "identity", sa_form = f$sa_form, normalize = isTRUE(f$normalize), curvature = f$curvature %||% "same_batch", precond_A = f$pA %||% 2, precond_Z = f$pZ %||% 50, precond_alpha = f$palpha %||% 0.75))
  t0 <- proc.time()[[3]]
  fit <- withCallingHandlers(
    tryCatch(sgmcmc_density(tg, init = rep(0, 5), sampler = f$sampler, iterations = f$iterations %||% 30000,
                            burnin = 2000, thin = f$thin %||% 4, chains = 4, seed = 11, threads = 1, quiet = TRUE,
                            control = ctl), scalebayes_error_divergence = function(e) e),
    scalebayes_warning = function(w) invokeRestart("muffleWarning"))
  if (inherits(fit, "condition") || any(fit$diverged)) {
    rows[[nm]] <- data.frame(form = nm, mean_err_sd = NA, var_rel_err = NA, cov_rel_err = NA, max_z = NA,
                             diverged = TRUE, seconds = proc.time()[[3]] - t0)
    next
  }
  m <- as.matrix(fit)
  C <- cov(m)
  rows[[nm]] <- data.frame(form = nm, mean_err_sd = max(abs(colMeans(m) - mu) / sqrt(diag(S))),
                           var_rel_err = max(abs(diag(C) / diag(S) - 1)),
                           cov_rel_err = norm(C - S, "F") / norm(S, "F"), max_z = zs(fit), diverged = FALSE,
                           seconds = proc.time()[[3]] - t0)
}
`%||%` <- function(a, b) if (is.null(a)) b else a
out <- do.call(rbind, rows)
rownames(out) <- NULL
print(format(out, digits = 3), right = FALSE)
