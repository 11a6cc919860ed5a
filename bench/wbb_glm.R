# Benchmark: wbb() against an R loop of glmnet solving the same weighted objective, in one process.
#   Rscript bench/wbb_glm.R            (all cases; ~1-2 minutes on 2 cores)
# For each case: lambda fixed (CV on the unweighted problem for diabetes; 0.1 * lambda_max otherwise), data
# weights and separate prior weights i.i.d. Exp(1). glmnet gets the already-standardized x, standardize =
# FALSE, and the mapped lambda / penalty factors (glmnet_lambda()), so it solves exactly the same problem;
# it runs at its default thresh (1e-7, the paper's route) and at thresh = 1e-14 (comparable accuracy).
# Prints seconds, ms per draw and ratios; scalebayes with 1 and 2 threads.
suppressPackageStartupMessages({ library(scalebayes); library(glmnet) })
set.seed(1)

standardize <- function(x) scale(x, scale = apply(x, 2, function(v) sqrt(mean((v - mean(v))^2))))

glmnet_loop <- function(x, y, lambda, draws, thresh) {
  n <- nrow(x); p <- ncol(x)
  t0 <- proc.time()[["elapsed"]]
  for (t in seq_len(draws)) {
    w <- rexp(n); pf <- rexp(p)
    g <- glmnet(x, y, weights = w, penalty.factor = pf, lambda = glmnet_lambda(lambda, w, pf),
                standardize = FALSE, thresh = thresh)
  }
  proc.time()[["elapsed"]] - t0
}

time_wbb <- function(x, y, lambda, draws, threads, reps = 3) {
  # median of `reps` runs, lambda fixed (no CV in the timing), standardization already applied
  ts <- replicate(reps, system.time(wbb(x, y, lambda = lambda, draws = draws, threads = threads, seed = 1,
                                        quiet = TRUE, standardize = FALSE))[["elapsed"]])
  stats::median(ts)
}

cases <- list()
data(diabetes, package = "scalebayes")
xd <- standardize(diabetes$x)
cvd <- cv_weighted_lasso(xd, diabetes$y, seed = 1, quiet = TRUE, standardize = FALSE)
cases$diabetes <- list(x = xd, y = diabetes$y, lambda = cvd$lambda_min, draws = 1000, glmnet_draws = 300)

sim <- function(n, p, k) {
  x <- matrix(rnorm(n * p), n, p)
  x <- standardize(x + 0.3 * rnorm(n))
  beta <- c(rnorm(k, 0, 2), rep(0, p - k))
  y <- drop(x %*% beta) + rnorm(n, sd = 2)
  lmax <- max(abs(crossprod(x, y - mean(y))))
  list(x = x, y = y, lambda = 0.1 * lmax)
}
cases$n5000_p200 <- c(sim(5000, 200, 20), draws = 100, glmnet_draws = 30)
cases$n100_p1000 <- c(sim(100, 1000, 10), draws = 200, glmnet_draws = 60)

rows <- list()
for (nm in names(cases)) {
  cs <- cases[[nm]]
  g7 <- glmnet_loop(cs$x, cs$y, cs$lambda, cs$glmnet_draws, 1e-7) / cs$glmnet_draws
  g14 <- glmnet_loop(cs$x, cs$y, cs$lambda, cs$glmnet_draws, 1e-14) / cs$glmnet_draws
  s1 <- time_wbb(cs$x, cs$y, cs$lambda, cs$draws, 1) / cs$draws
  s2 <- time_wbb(cs$x, cs$y, cs$lambda, cs$draws, 2) / cs$draws
  fit <- wbb(cs$x, cs$y, lambda = cs$lambda, draws = 20, seed = 1, quiet = TRUE,
             standardize = FALSE)
  rows[[nm]] <- data.frame(
    case = nm, n = nrow(cs$x), p = ncol(cs$x), T = cs$draws,
    glmnet_ms = 1000 * g7, glmnet_tight_ms = 1000 * g14, sb_1t_ms = 1000 * s1, sb_2t_ms = 1000 * s2,
    speedup_1t = g7 / s1, speedup_1t_tight = g14 / s1, speedup_2t = g7 / s2, threads_2_vs_1 = s1 / s2,
    nonzero = mean(rowSums(fit$draws[, -1] != 0)), kkt_max = fit$diagnostics$kkt_max
  )
}
res <- do.call(rbind, rows)
rownames(res) <- NULL
cat(sprintf("scalebayes %s, %s, %d cores, %s\n", utils::packageVersion("scalebayes"),
            R.version.string, parallel::detectCores(), format(Sys.time(), "%Y-%m-%d %H:%M")))
cat("ms per draw; speedup = glmnet loop time / scalebayes time (glmnet default thresh; _tight: thresh 1e-14)\n")
print(format(res, digits = 3), row.names = FALSE)
invisible(res)
