# Benchmark: wbb() against an R loop of glmnet solving the same weighted objective, in one process.
#   Rscript bench/wbb_glm.R            (all cases; ~2-3 minutes on 2 cores)
#   Rscript bench/wbb_glm.R poisson    (only the Poisson rows, issue 59: log link, exposure offset)
# For each case: lambda fixed (CV on the unweighted problem for diabetes; 0.1 * lambda_max otherwise), data
# weights and separate prior weights i.i.d. Exp(1). glmnet gets the already-standardized x, standardize =
# FALSE, and the mapped lambda / penalty factors (glmnet_lambda()), so it solves exactly the same problem;
# it runs at its default thresh (1e-7, the paper's route) and at thresh = 1e-14 (comparable accuracy).
# Prints seconds, ms per draw and ratios; scalebayes with 1 and 2 threads.
suppressPackageStartupMessages({ library(scalebayes); library(glmnet) })
set.seed(1)

standardize <- function(x) scale(x, scale = apply(x, 2, function(v) sqrt(mean((v - mean(v))^2))))

glmnet_loop <- function(x, y, lambda, draws, thresh, family = "gaussian", offset = NULL) {
  n <- nrow(x); p <- ncol(x)
  t0 <- proc.time()[["elapsed"]]
  for (t in seq_len(draws)) {
    w <- rexp(n); pf <- rexp(p)
    g <- glmnet(x, y, family = family, weights = w, penalty.factor = pf, lambda = glmnet_lambda(lambda, w, pf),
                standardize = FALSE, thresh = thresh, offset = offset)
  }
  proc.time()[["elapsed"]] - t0
}

time_wbb <- function(x, y, lambda, draws, threads, reps = 3, family = "gaussian", offset = NULL) {
  # median of `reps` runs, lambda fixed (no CV in the timing), standardization already applied
  ts <- replicate(reps, system.time(wbb(x, y, family = family, lambda = lambda, draws = draws, threads = threads,
                                        seed = 1, quiet = TRUE, standardize = FALSE, offset = offset))[["elapsed"]])
  stats::median(ts)
}

only_poisson <- identical(commandArgs(TRUE), "poisson")
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
if (only_poisson) cases <- list()

# Poisson rows (log link, log exposure as offset): MASS's Insurance claims (64 cells, District + Group + Age
# dummies, offset log(Holders)), lambda by 8-fold CV of the unweighted problem; and a simulated count
# regression with exposures, lambda = 0.1 lambda_max.
ins <- MASS::Insurance
xi <- model.matrix(~ District + factor(Group, ordered = FALSE) + factor(Age, ordered = FALSE), ins)[, -1]
xi <- standardize(xi)
cvi <- cv_weighted_lasso(xi, ins$Claims, family = "poisson", offset = log(ins$Holders), nfolds = 8, seed = 1,
                         quiet = TRUE, standardize = FALSE)
cases$insurance_pois <- list(x = xi, y = ins$Claims, lambda = cvi$lambda_min, draws = 1000, glmnet_draws = 300,
                             family = "poisson", offset = log(ins$Holders))
sim_pois <- function(n, p, k) {
  x <- standardize(matrix(rnorm(n * p), n, p))
  expo <- runif(n, 0.5, 2)
  y <- rpois(n, expo * exp(0.5 + drop(x[, seq_len(k)] %*% rnorm(k, 0, 0.3))))
  off <- log(expo)
  lmax <- weighted_lasso(x, y, family = "poisson", offset = off, standardize = FALSE, nlambda = 2)$lambda[1]
  list(x = x, y = y, lambda = 0.1 * lmax, family = "poisson", offset = off)
}
cases$n2000_p50_pois <- c(sim_pois(2000, 50, 5), draws = 200, glmnet_draws = 60)

rows <- list()
for (nm in names(cases)) {
  cs <- cases[[nm]]
  fam <- if (is.null(cs$family)) "gaussian" else cs$family
  g7 <- glmnet_loop(cs$x, cs$y, cs$lambda, cs$glmnet_draws, 1e-7, fam, cs$offset) / cs$glmnet_draws
  g14 <- glmnet_loop(cs$x, cs$y, cs$lambda, cs$glmnet_draws, 1e-14, fam, cs$offset) / cs$glmnet_draws
  s1 <- time_wbb(cs$x, cs$y, cs$lambda, cs$draws, 1, family = fam, offset = cs$offset) / cs$draws
  s2 <- time_wbb(cs$x, cs$y, cs$lambda, cs$draws, 2, family = fam, offset = cs$offset) / cs$draws
  fit <- wbb(cs$x, cs$y, family = fam, lambda = cs$lambda, draws = 20, seed = 1, quiet = TRUE,
             standardize = FALSE, offset = cs$offset)
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
