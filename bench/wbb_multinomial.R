# Benchmark: WBB draws of a multinomial lasso, wbb(family = "multinomial"), against an R loop of glmnet solving
# the same weighted objective, in one process (issue 59).
#   Rscript bench/wbb_multinomial.R          (iris and a simulated n = 5,000, p = 50, K = 4; ~8 minutes on 2 cores)
#   Rscript bench/wbb_multinomial.R iris     (one case)
# For each case and type.multinomial ("ungrouped", "grouped"): lambda = 0.1 lambda_max of the unweighted
# problem, data weights and separate prior weights i.i.d. Exp(1). glmnet gets the already-standardized x,
# standardize = FALSE and the mapped lambda / penalty factors (glmnet_lambda()), so it solves exactly the same
# problem, at its default thresh (1e-7) and at thresh = 1e-14 (the accuracy of every scalebayes draw). Prints
# seconds, ms per draw and the ratios (glmnet loop time per draw / wbb time per draw); wbb with 1 and 2 threads.
suppressPackageStartupMessages({ library(scalebayes); library(glmnet) })
set.seed(1)

standardize <- function(x) scale(x, scale = apply(x, 2, function(v) sqrt(mean((v - mean(v))^2))))

# glmnet's fits that fail (near-separable draws with a nearly unpenalized feature: "convergence not reached after
# maxit iterations", an error of glmnet's coef extraction) are counted in glmnet_failed; their time is included.
glmnet_failed <- 0L
glmnet_loop <- function(x, y, lambda, draws, thresh, type) {
  n <- nrow(x); p <- ncol(x)
  t0 <- proc.time()[["elapsed"]]
  for (t in seq_len(draws)) {
    w <- rexp(n); pf <- rexp(p)
    ok <- tryCatch({
      suppressWarnings(glmnet(x, y, family = "multinomial", weights = w, penalty.factor = pf,
                              lambda = glmnet_lambda(lambda, w, pf), standardize = FALSE, thresh = thresh,
                              type.multinomial = type, maxit = 1e6))
      TRUE
    }, error = function(e) FALSE)
    if (!ok) glmnet_failed <<- glmnet_failed + 1L
  }
  proc.time()[["elapsed"]] - t0
}

kkt_max <- NA_real_
not_conv <- NA_integer_
time_wbb <- function(x, y, lambda, draws, threads, type, reps = 3) {
  ts <- numeric(reps)
  for (r in seq_len(reps)) {
    ts[r] <- system.time(fit <- suppressWarnings(wbb(x, y, family = "multinomial", lambda = lambda, draws = draws, threads = threads,
                                    seed = 1, quiet = TRUE, standardize = FALSE, type_multinomial = type)))[["elapsed"]]
  }
  kkt_max <<- fit$diagnostics$kkt_max  # the largest KKT violation (relative to lambda) over the draws
  not_conv <<- fit$diagnostics$not_converged
  stats::median(ts)
}

sim <- function(n, p, K) {
  x <- standardize(matrix(rnorm(n * p), n, p) + 0.3 * rnorm(n))
  B <- matrix(0, p, K)
  B[1:8, ] <- rnorm(8 * K)
  eta <- x %*% B
  pr <- exp(eta) / rowSums(exp(eta))
  y <- factor(apply(pr, 1, function(q) sample(K, 1, prob = q)))
  list(x = x, y = y)
}

cases <- list(iris = list(x = standardize(as.matrix(iris[, 1:4])), y = iris$Species, draws = 1000, glmnet_draws = 200),
              n5000_p50_K4 = c(sim(5000, 50, 4), draws = 100, glmnet_draws = 20))

# Rscript bench/wbb_multinomial.R <case> runs only that case (iris or n5000_p50_K4)
if (length(commandArgs(TRUE))) cases <- cases[intersect(names(cases), commandArgs(TRUE))]
rows <- list()
for (nm in names(cases)) for (type in c("ungrouped", "grouped")) {
  cs <- cases[[nm]]
  lmax <- weighted_lasso(cs$x, cs$y, family = "multinomial", standardize = FALSE, nlambda = 2,
                         type_multinomial = type)$lambda[1]
  lambda <- 0.1 * lmax
  w1 <- time_wbb(cs$x, cs$y, lambda, cs$draws, 1, type)
  w2 <- time_wbb(cs$x, cs$y, lambda, cs$draws, 2, type)
  glmnet_failed <- 0L
  g7 <- glmnet_loop(cs$x, cs$y, lambda, cs$glmnet_draws, 1e-7, type)
  f7 <- glmnet_failed
  glmnet_failed <- 0L
  g14 <- glmnet_loop(cs$x, cs$y, lambda, cs$glmnet_draws, 1e-14, type)
  f14 <- glmnet_failed
  per <- function(t, d) 1000 * t / d
  rows[[length(rows) + 1L]] <- data.frame(
    case = nm, type = type, n = nrow(cs$x), p = ncol(cs$x), K = nlevels(cs$y), draws = cs$draws,
    wbb_1thr_ms = per(w1, cs$draws), wbb_2thr_ms = per(w2, cs$draws),
    glmnet_1e7_ms = per(g7, cs$glmnet_draws), glmnet_1e14_ms = per(g14, cs$glmnet_draws),
    ratio_1e7_1thr = per(g7, cs$glmnet_draws) / per(w1, cs$draws),
    ratio_1e7_2thr = per(g7, cs$glmnet_draws) / per(w2, cs$draws),
    ratio_1e14_2thr = per(g14, cs$glmnet_draws) / per(w2, cs$draws), kkt_max = kkt_max,
    wbb_not_conv = not_conv, glmnet_failed_1e7 = f7, glmnet_failed_1e14 = f14)
  print(rows[[length(rows)]], digits = 3, row.names = FALSE)
}
cat("\nms per draw; ratio = glmnet loop ms per draw / wbb ms per draw\n")
print(do.call(rbind, rows), digits = 3, row.names = FALSE)
