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

# Table 1's design with 5 signals (3, 2, 1, 2, 3)
sim <- function(n, p, seed) {
  set.seed(seed)
  S <- 0.6^abs(outer(1:p, 1:p, "-"))
  x <- matrix(rnorm(n * p), n, p) %*% chol(S)
  y <- drop(x %*% c(3, 2, 1, 2, 3, rep(0, p - 5))) + rnorm(n, sd = sqrt(3))
  list(x = x, y = y)
}

if ("selection" %in% which) {
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

# p > n (n = 100, p = 1,000, Table 1's design): is a missed signal a defect of the defaults or information-limited?
# Per seed: each signal's t statistic in the true 5-variable model (standardized columns, as sgld_sa() sees them);
# sgld_sa() / hamcmc_sa() inclusion with every default (and the SA's delta); blasso(rj = TRUE) inclusion frequency
# (rj_prior = "size": uniform on the model size, the multiplicity control p > n needs; "models", every subset
# equally likely, is delta = 1/2); and the exact inclusion of each signal given the other four, under the same
# spike-and-slab with a point-mass spike (the default Laplace spike, scale 0.2 sigma / sqrt(N), is narrower than a
# tenth of the signals' se): slab N(0, sigma^2 v1) with v1 = 10 on the standardized scale, flat intercept, p(sigma^2)
# proportional to 1 / sigma^2, and prior odds delta / (1 - delta) at delta = 5 / (2p - 1), the mode of delta under
# the SA's Beta(1, b = p) prior with the 5 signals in (the SA's own estimate, fit$latent$delta, is 0.002-0.003).
# Run: BENCH_PN_SEEDS=1:6 Rscript bench/sgmcmc_defaults.R selection_pn
if ("selection_pn" %in% which) {
  seeds <- eval(parse(text = Sys.getenv("BENCH_PN_SEEDS", "1:6")))
  sel_samplers <- strsplit(Sys.getenv("BENCH_SELECT_SAMPLERS", "sgld hamcmc_sa"), " +")[[1]]
  sel_samplers <- sel_samplers[nzchar(sel_samplers)]  # BENCH_SELECT_SAMPLERS="": the t and exact columns only
  use_blasso <- Sys.getenv("BENCH_PN_BLASSO", "1") != "0" && length(sel_samplers) > 0
  n <- 100; p <- 1000; v1 <- 10; delta <- 5 / (2 * p - 1)
  # log marginal likelihood of the model with columns g (centred, standardized), up to a constant shared by models
  log_ml <- function(xs, yc, g) {
    n <- length(yc)
    if (!length(g)) return(-(n - 1) / 2 * log(sum(yc^2)))
    X <- xs[, g, drop = FALSE]
    A <- crossprod(X) + diag(1 / v1, length(g))
    R <- chol(A)
    b <- backsolve(R, forwardsolve(t(R), crossprod(X, yc)))
    rss <- sum(yc^2) - sum(crossprod(X, yc) * b)
    -0.5 * (2 * sum(log(diag(R))) + length(g) * log(v1)) - (n - 1) / 2 * log(rss)
  }
  cat(sprintf("\n== selection, p > n: n = %d, p = %d, signals (3, 2, 1, 2, 3), every default ==\n", n, p))
  rows <- list()
  for (seed in seeds) {
    d <- sim(n, p, seed)
    colnames(d$x) <- paste0("V", seq_len(p))
    xs <- scale(d$x, scale = FALSE)
    xs <- sweep(xs, 2L, sqrt(colMeans(xs^2)), "/")
    yc <- d$y - mean(d$y)
    ols <- summary(stats::lm(yc ~ xs[, 1:5]))$coefficients[-1, ]
    tval <- ols[, 3]
    bf <- vapply(1:5, function(j) exp(log_ml(xs, yc, 1:5) - log_ml(xs, yc, setdiff(1:5, j))), 1)
    exact <- 1 / (1 + (1 - delta) / (delta * bf))
    fmt <- function(v) paste(sprintf("%.2f", v), collapse = " ")
    cat(sprintf("seed %d: t of the signals %s\n", seed, paste(sprintf("%.1f", tval), collapse = " ")))
    cat(sprintf("        exact given the other 4 (delta = %.3f): BF %s, inclusion %s\n", delta,
                paste(sprintf("%.3g", bf), collapse = " "), fmt(exact)))
    row <- data.frame(seed = seed, t3 = tval[3], bf3 = bf[3], exact3 = exact[3])
    for (s in sel_samplers) {
      t <- system.time(f <- suppressWarnings(sgld_sa(d$x, d$y, seed = 1, sampler = s)))[["elapsed"]]
      inc <- f$inclusion
      cat(sprintf("        %-9s signals %s, nulls mean %.4f max %.3f, delta %.4f (%.1f s)\n", s, fmt(inc[1:5]),
                  mean(inc[-(1:5)]), max(inc[-(1:5)]), mean(f$latent$delta), t))
      row[[paste0(s, "_min")]] <- min(inc[1:5])
      row[[paste0(s, "_s3")]] <- inc[3]
      row[[paste0(s, "_nulls")]] <- mean(inc[-(1:5)])
    }
    if (use_blasso) {
      tb <- system.time(br <- blasso(d$x, d$y, lambda = "gamma", seed = 1,
                                     control = blasso_control(rj = TRUE, rj_prior = "size")))[["elapsed"]]
      ib <- colMeans(br$draws[, colnames(br$draws) %in% names(f$inclusion), drop = FALSE] != 0)
      ib <- ib[names(f$inclusion)]
      cat(sprintf("        blasso rj signals %s, nulls mean %.4f max %.3f (%.1f s)\n", fmt(ib[1:5]),
                  mean(ib[-(1:5)]), max(ib[-(1:5)]), tb))
      row$blasso_s3 <- ib[3]
      row$blasso_nulls <- mean(ib[-(1:5)])
    }
    rows[[length(rows) + 1L]] <- row
  }
  cat("\n")
  print(do.call(rbind, rows), digits = 3, row.names = FALSE)
}
