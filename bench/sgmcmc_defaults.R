# SG-MCMC regression with every default, as a new user calls it, beside blasso() on the same data: whole-call
# seconds, the run length and warm-up the defaults chose, min bulk ESS / max R-hat over the coefficients,
# held-out RMSE (a fixed 80 / 20 split), and the inclusion probabilities against blasso(rj = TRUE)'s inclusion
# frequencies (the default v0 = 0.2 / sqrt(N) and the old default 0.1); then the selection with every default on
# Table 1's design (Sigma_ij = 0.6^|i-j|, noise variance 3) with 5 signals (3, 2, 1, 2, 3) at n = 200, p = 50
# (beside blasso(rj = TRUE)) and n = 100, p = 1,000, for SGLD and HAMCMC-SA (BENCH_SELECT_SAMPLERS).
# Run: Rscript bench/sgmcmc_defaults.R [data sets: diabetes boston ames selection]   (results: bench/RESULTS.md)
# BENCH_SAMPLERS="sgld sghmc" restricts the samplers (HAMCMC-SA / HAMCMC on ames take 5-10 minutes).
suppressPackageStartupMessages(library(scalebayes))
`%||%` <- function(a, b) if (is.null(a)) b else a
which <- commandArgs(TRUE)
if (!length(which)) which <- c("diabetes", "boston", "ames", "selection")
samplers <- strsplit(Sys.getenv("BENCH_SAMPLERS", "sgld sghmc sgnht hamcmc_sa hamcmc"), " +")[[1]]

split_rows <- function(n, seed = 1) { set.seed(seed); sample(n, round(0.8 * n)) }
rmse <- function(a, b) sqrt(mean((a - b)^2))

datasets <- list(
  diabetes = function() { d <- scalebayes::diabetes; data.frame(y = d$y, unclass(d$x)) },
  boston = function() { d <- MASS::Boston; names(d)[names(d) == "medv"] <- "y"; d },
  ames = function() {
    a <- modeldata::ames
    num <- vapply(a, is.numeric, logical(1))
    d <- a[, num]
    d$y <- log10(d$Sale_Price)
    d$Sale_Price <- NULL
    d
  })

for (nm in intersect(names(datasets), which)) {
  d <- datasets[[nm]]()
  tr <- split_rows(nrow(d))
  dtr <- d[tr, ]
  dte <- d[-tr, ]
  cat(sprintf("\n== %s: %d training rows, %d predictors ==\n", nm, nrow(dtr), ncol(d) - 1L))
  tb <- system.time(b <- blasso(y ~ ., data = dtr, seed = 1))[["elapsed"]]
  pb <- predict(b, newdata = dte)
  pb <- if (is.list(pb)) pb$fit %||% pb[[1]] else pb
  cat(sprintf("%-10s %6.2f s  test RMSE %.4g\n", "blasso", tb, rmse(drop(as.matrix(pb)[, 1]), dte$y)))
  for (s in samplers) {
    warn <- character()
    t <- system.time(f <- withCallingHandlers(sgld_sa(y ~ ., data = dtr, seed = 1, sampler = s),
                                                warning = function(w) { warn <<- c(warn, conditionMessage(w)); invokeRestart("muffleWarning") }))[["elapsed"]]
    cv <- f$diagnostics$convergence
    p <- predict(f, newdata = dte)
    p <- if (is.list(p)) p$fit %||% p[[1]] else p
    cat(sprintf("%-10s %6.2f s  %7d it/chain, warm-up %6d it %.2f s  min ESS %5.0f  max R-hat %.3f  test RMSE %.4g%s\n",
                s, t, f$settings$iterations, f$warmup$iterations, f$warmup$seconds, min(cv$ess_bulk), max(cv$rhat),
                rmse(drop(as.matrix(p)[, 1]), dte$y), if (length(warn)) "  [convergence warning]" else ""))
  }
  if (nm == "diabetes") {
    f <- sgld_sa(y ~ ., data = d, seed = 1, v0 = 0.1)
    f2 <- sgld_sa(y ~ ., data = d, seed = 1)
    br <- blasso(y ~ ., data = d, lambda = "gamma", control = blasso_control(rj = TRUE), seed = 1)
    inc_b <- colMeans(br$draws[, names(f$inclusion), drop = FALSE] != 0)
    cat("inclusion, all 442 rows: sgld_sa() rho vs blasso(rj = TRUE) frequency\n")
    print(round(rbind(`sgld_sa v0 = 0.1 (old default)` = f$inclusion, `sgld_sa default` = f2$inclusion, blasso_rj = inc_b), 3))
  }
}

if ("selection" %in% which) {
  sim <- function(n, p, seed) {
    set.seed(seed)
    S <- 0.6^abs(outer(1:p, 1:p, "-"))
    x <- matrix(rnorm(n * p), n, p) %*% chol(S)
    y <- drop(x %*% c(3, 2, 1, 2, 3, rep(0, p - 5))) + rnorm(n, sd = sqrt(3))
    list(x = x, y = y)
  }
  cat("\n== selection: Table 1's design, signals (3, 2, 1, 2, 3), every default ==\n")
  sel_samplers <- strsplit(Sys.getenv("BENCH_SELECT_SAMPLERS", "sgld hamcmc_sa"), " +")[[1]]
  for (case in list(c(200, 50), c(100, 1000))) {
    for (seed in 1:3) for (s in sel_samplers) {
      d <- sim(case[1], case[2], seed)
      t <- system.time(f <- suppressWarnings(sgld_sa(d$x, d$y, seed = 1, sampler = s)))[["elapsed"]]
      inc <- f$inclusion
      line <- sprintf("n = %4d p = %4d seed %d: %s signals %s, nulls mean %.3f max %.3f (%.1f s)", case[1], case[2],
                      seed, s, paste(sprintf("%.2f", inc[1:5]), collapse = " "), mean(inc[-(1:5)]), max(inc[-(1:5)]), t)
      if (case[2] <= 50 && s == sel_samplers[1]) {
        tb <- system.time(br <- blasso(d$x, d$y, lambda = "gamma", control = blasso_control(rj = TRUE), seed = 1))[["elapsed"]]
        ib <- colMeans(br$draws[, names(inc), drop = FALSE] != 0)
        line <- paste0(line, sprintf(";  blasso rj signals %s, nulls mean %.3f (%.1f s)",
                                     paste(sprintf("%.2f", ib[1:5]), collapse = " "), mean(ib[-(1:5)]), tb))
      }
      cat(line, "\n")
    }
  }
}
