# Tests for blasso(): the Bayesian lasso Gibbs sampler.

diabetes_xy <- function() {
  if (exists("diabetes", envir = asNamespace("scalebayes"), inherits = FALSE) ||
      file.exists(system.file("data", package = "scalebayes"))) {
    e <- new.env()
    ok <- tryCatch({utils::data("diabetes", package = "scalebayes", envir = e); TRUE},
                   warning = function(w) FALSE, error = function(e) FALSE)
    if (ok && exists("diabetes", envir = e)) return(list(x = unclass(e$diabetes$x), y = e$diabetes$y))
  }
  skip_if_not_installed("lars")
  e <- new.env()
  utils::data("diabetes", package = "lars", envir = e)
  list(x = unclass(e$diabetes$x), y = e$diabetes$y)
}

test_that("inverse Gaussian draws follow the IG law, also for huge mu", {
  pig <- function(x, mu, l) {  # exact CDF, in a form that is finite for huge mu
    a <- sqrt(l / x)
    stats::pnorm(a * (x / mu - 1)) + exp(2 * l / mu + stats::pnorm(-a * (x / mu + 1), log.p = TRUE))
  }
  for (mu in c(0.5, 3, 1e3, 1e8, 1e15)) {
    d <- cpp_rinvgauss(4000L, mu, 2, 11)
    expect_true(all(is.finite(d) & d > 0))
    # Kolmogorov-Smirnov against the exact CDF; with a fixed seed the test either passes or fails for good.
    expect_gt(suppressWarnings(stats::ks.test(d, pig, mu = mu, l = 2)$p.value), 1e-3)
    # E[1/X] = 1/mu + 1/lambda is finite even as mu -> Inf (Levy limit): the quantity the EB E-step uses.
    # sd(1/X) <= sqrt(1/(mu lambda) + 2/lambda^2) = 1 here: tolerance 5 standard errors.
    expect_lt(abs(mean(1 / d) - (1 / mu + 1 / 2)), 5 * 1 / sqrt(4000))
  }
  d <- cpp_rinvgauss(1000L, 1e300, 1, 3)  # beta_j ~ 1e-300
  expect_true(all(is.finite(d) & d > 0))
})

test_that("empirical-Bayes lambda on the diabetes data matches Park & Casella (0.237)", {
  dd <- diabetes_xy()
  fit <- blasso(dd$x, dd$y, lambda = "eb", chains = 4, iterations = 500, burnin = 100, seed = 42, quiet = TRUE)
  # MCEM noise: over seeds 1-10 with these settings the estimate had mean 0.2363 and sd 0.0008 (measured);
  # Park & Casella print 3 digits. Tolerance 0.005: about 6 Monte-Carlo sd plus their rounding.
  expect_equal(fit$lambda_hat, 0.237, tolerance = 0.005 / 0.237)
  expect_s3_class(fit, "sb_blasso")
  expect_s3_class(fit, "sb_fit")
  expect_named(fit$diagnostics, c("parameter", "rhat", "ess_bulk", "ess_tail"))
  expect_true(all(fit$diagnostics$rhat < 1.05))
  # Park & Casella Figure 2 / Table: posterior medians of bmi and ltg are large and positive
  med <- coef(fit, type = "median")
  expect_gt(med[["bmi"]], 400)
  expect_gt(med[["ltg"]], 400)
})

conjugate_check <- function(n, p, seed) {
  set.seed(seed)
  x <- matrix(rnorm(n * p), n, p)
  y <- drop(x[, 1:2] %*% c(1.5, -1)) + rnorm(n)
  tau2 <- seq(0.2, 2, length.out = p)
  a <- 2; b <- 1.5
  fit <- blasso(x, y, lambda = 1, chains = 4, iterations = 2000, burnin = 0, seed = seed, quiet = TRUE,
                control = blasso_control(fixed_tau2 = tau2, sigma2_prior = c(a, b)))
  xc <- sweep(x, 2, colMeans(x)); yc <- y - mean(y)
  A <- crossprod(xc) + diag(1 / tau2, p)
  m <- drop(solve(A, crossprod(xc, yc)))
  q <- sum(yc^2) - sum(crossprod(xc, yc) * m)
  shape <- a + (n - 1) / 2; rate <- b + q / 2
  s2_mean <- rate / (shape - 1)
  s2_sd <- s2_mean / sqrt(shape - 2)
  cov_beta <- s2_mean * solve(A)
  # tau^2 fixed => every sweep is an exact independent draw: Monte-Carlo SE = sd / sqrt(8000).
  nd <- nrow(fit$draws)
  z_mean <- (colMeans(fit$draws[, -1]) - m) / sqrt(diag(cov_beta) / nd)
  expect_lt(max(abs(z_mean)), 4.5)
  expect_lt(abs(mean(fit$sigma2) - s2_mean) / (s2_sd / sqrt(nd)), 4.5)
  # variances: SE of a sample variance of a t-ish variable ~ var * sqrt(2 / nd) * (1 + kurtosis slack)
  v <- apply(fit$draws[, -1], 2, var)
  expect_lt(max(abs(v / diag(cov_beta) - 1)), 6 * sqrt(2 / nd) * 1.5)
  # the intercept given beta, sigma2 is N(ybar - xbar' beta, sigma2 / n): its mean is ybar - xbar' m
  se_i <- sqrt((s2_mean / n + drop(colMeans(x) %*% cov_beta %*% colMeans(x))) / nd)
  expect_lt(abs(mean(fit$draws[, 1]) - (mean(y) - sum(colMeans(x) * m))) / se_i, 4.5)
}

test_that("exact agreement with the conjugate normal-inverse-gamma case (Cholesky path, p <= n)", {
  conjugate_check(n = 40, p = 6, seed = 1)
})

test_that("exact agreement with the conjugate normal-inverse-gamma case (BCM path, p > n)", {
  conjugate_check(n = 12, p = 30, seed = 2)
})

sbc_ranks <- function(n, p, sims, L, thin, seed, rj = FALSE) {
  # Simulation-based calibration (Talts et al. 2018): draw (beta, sigma2) from the prior, y from the model,
  # L posterior draws; the rank of the truth among them is uniform on 0..L if the sampler is right.
  set.seed(seed)
  lam <- 1.5; a <- 3; b <- 2
  ranks <- matrix(NA_integer_, sims, p + 1)
  ctl <- blasso_control(sigma2_prior = c(a, b), intercept = FALSE, rj = rj, diagnostics = FALSE)
  x <- matrix(rnorm(n * p), n, p)
  for (s in seq_len(sims)) {
    s2 <- 1 / rgamma(1, a, b)
    tau2 <- rexp(p, lam^2 / 2)
    beta <- rnorm(p, 0, sqrt(s2 * tau2))
    if (rj) {  # model prior: every subset equally likely (n - 1 >= p, so the size cap does not bind)
      beta[runif(p) < 0.5] <- 0
    }
    y <- drop(x %*% beta) + rnorm(n, 0, sqrt(s2))
    fit <- blasso(x, y, lambda = lam, chains = 1, iterations = L, burnin = 50, thin = thin, seed = s,
                  quiet = TRUE, threads = 1, control = ctl)
    d <- cbind(fit$draws, fit$sigma2)
    truth <- c(beta, s2)
    # ties (exact zeros under rj) are broken at random
    ranks[s, ] <- vapply(seq_len(p + 1), function(j) {
      lo <- sum(d[, j] < truth[j]); eq <- sum(d[, j] == truth[j])
      lo + sample.int(eq + 1, 1) - 1L
    }, integer(1))
  }
  ranks
}

sbc_chisq_p <- function(ranks, L, bins) {
  apply(ranks, 2, function(r) {
    counts <- tabulate(floor(r * bins / (L + 1)) + 1, bins)
    stats::chisq.test(counts)$p.value
  })
}

test_that("simulation-based calibration: rank histograms are uniform (fixed lambda)", {
  # p <= n (Cholesky path) and p > n (BCM path). 10 bins of 10 ranks (L = 99); the chi-square p-values
  # are Bonferroni-corrected over the parameters at 1% overall.
  L <- 99
  r1 <- sbc_ranks(n = 10, p = 3, sims = 300, L = L, thin = 3, seed = 10)
  p1 <- sbc_chisq_p(r1, L, 10)
  expect_gt(min(p1), 0.01 / length(p1))
  r2 <- sbc_ranks(n = 5, p = 8, sims = 300, L = L, thin = 3, seed = 20)
  p2 <- sbc_chisq_p(r2[, c(1, 2, 9)], L, 10)
  expect_gt(min(p2), 0.01 / length(p2))
})

test_that("simulation-based calibration of the reversible-jump option", {
  L <- 99
  # p = 8, n = 12: models of all sizes are visited (the size cap n - 1 does not bind)
  r <- sbc_ranks(n = 12, p = 8, sims = 300, L = L, thin = 8, seed = 77, rj = TRUE)
  p <- sbc_chisq_p(r, L, 10)
  expect_gt(min(p), 0.01 / length(p))
})

test_that("p > n runs for every lambda route, and draws do not depend on threads", {
  set.seed(3)
  x <- matrix(rnorm(20 * 60), 20, 60)
  y <- drop(x[, 1:3] %*% c(3, -2, 2)) + rnorm(20)
  ctl <- blasso_control(em_max = 300)
  f1 <- blasso(x, y, lambda = "eb", chains = 2, iterations = 200, burnin = 100, seed = 5, quiet = TRUE, threads = 1,
               control = ctl)
  f2 <- blasso(x, y, lambda = "eb", chains = 2, iterations = 200, burnin = 100, seed = 5, quiet = TRUE, threads = 2,
               control = ctl)
  expect_identical(f1$draws, f2$draws)
  expect_identical(f1$sigma2, f2$sigma2)
  expect_true(is.finite(f1$lambda_hat) && f1$lambda_hat > 0)
  expect_true(all(is.finite(f1$draws)))
  expect_equal(f1$settings$sampler, "bcm")
  fg <- blasso(x, y, lambda = "gamma", chains = 2, iterations = 200, burnin = 100, seed = 5, quiet = TRUE)
  expect_true(all(is.finite(fg$lambda)) && length(unique(fg$lambda)) > 1)
  expect_true("lambda" %in% fg$diagnostics$parameter)
  fg1 <- blasso(x, y, lambda = "gamma", chains = 2, iterations = 200, burnin = 100, seed = 5, quiet = TRUE, threads = 1)
  expect_identical(fg$draws, fg1$draws)
  expect_identical(fg$lambda, fg1$lambda)
  fr <- blasso(x, y, lambda = "gamma", iterations = 100, burnin = 50, seed = 5, quiet = TRUE,
               control = blasso_control(preset = "monomvn"))
  fr2 <- blasso(x, y, lambda = "gamma", chains = 2, iterations = 30, burnin = 20, seed = 6, quiet = TRUE,
                control = blasso_control(preset = "monomvn"), threads = 1)
  fr3 <- blasso(x, y, lambda = "gamma", chains = 2, iterations = 30, burnin = 20, seed = 6, quiet = TRUE,
                control = blasso_control(preset = "monomvn"), threads = 2)
  expect_identical(fr2$draws, fr3$draws)
  expect_equal(fr$settings$thin, 19L)
  expect_true("(Intercept)" %in% colnames(fr$draws))  # monomvn's default icept = TRUE
  expect_true(all(fr$model_size <= 19))
  # the three strong signals are in the model far more often than an average coefficient (monomvn::blasso
  # itself, T = 1500, includes them 0.79-0.88 of the time on these data, with about 18 of 60 active)
  expect_gt(min(colMeans(fr$draws[, 2:4] != 0)), 1.5 * mean(fr$model_size) / 60)
})

test_that("predict() returns means and intervals", {
  set.seed(4)
  x <- matrix(rnorm(80 * 4), 80, 4)
  y <- drop(x %*% c(2, 0, 0, 1)) + 3 + rnorm(80)
  fit <- blasso(x, y, lambda = 0.5, chains = 2, iterations = 300, burnin = 100, seed = 1, quiet = TRUE)
  pr <- predict(fit, x[1:5, ])
  expect_equal(pr$fit, drop(cbind(1, x[1:5, ]) %*% coef(fit)), tolerance = 1e-10)
  expect_true(all(pr$lower < pr$fit & pr$fit < pr$upper))
  pp <- predict(fit, x[1:5, ], interval = "prediction")
  expect_true(all(pp$upper - pp$lower > pr$upper - pr$lower))
  expect_error(predict(fit, x[, 1:3]), class = "scalebayes_error")
})

test_that("bad inputs give classed errors", {
  x <- matrix(rnorm(40), 20, 2); y <- rnorm(20)
  expect_error(blasso(x, y[-1], quiet = TRUE), class = "scalebayes_error")
  expect_error(blasso("a", y, quiet = TRUE), class = "scalebayes_error")
  expect_error(blasso(x, y, lambda = -1, quiet = TRUE), class = "scalebayes_error")
  expect_error(blasso(x, y, lambda = "ml", quiet = TRUE), class = "scalebayes_error")
  expect_error(blasso(x, y, chains = 0, quiet = TRUE), class = "scalebayes_error")
  expect_error(blasso(x, y, thin = 1.5, quiet = TRUE), class = "scalebayes_error")
  expect_error(blasso(x, rep(1, 20), quiet = TRUE), class = "scalebayes_error")
  x2 <- x; x2[3, 1] <- NA
  expect_error(blasso(x2, y, quiet = TRUE), class = "scalebayes_error")
  expect_error(blasso(x, y, control = list()), class = "scalebayes_error")
  expect_error(blasso_control(sigma2_prior = c(-1, 1)), class = "scalebayes_error")
  expect_error(blasso_control(gamma_prior = 1), class = "scalebayes_error")
  expect_error(blasso(x, y, lambda = "eb", control = blasso_control(rj = TRUE), quiet = TRUE),
               class = "scalebayes_error")
  expect_error(blasso(x, y, control = blasso_control(fixed_tau2 = 1), quiet = TRUE), class = "scalebayes_error")
})

test_that("R-hat and ESS are computed when read, not by blasso(), and are posterior's numbers", {
  set.seed(7)
  x <- matrix(rnorm(60 * 4), 60, 4)
  y <- drop(x %*% c(1, 0, 0, -1)) + rnorm(60)
  fit <- blasso(x, y, lambda = "gamma", chains = 3, iterations = 200, burnin = 50, seed = 2, quiet = TRUE)
  expect_length(.subset2(fit, "diagnostics"), 0L)  # nothing stored by the call
  d <- fit$diagnostics
  expect_identical(d, fit$diagnostics)  # recomputed the same way on every read
  expect_identical(d$parameter, c(colnames(fit$draws), "sigma2", "lambda"))
  a <- posterior::as_draws_array(array(cbind(fit$draws, sigma2 = fit$sigma2, lambda = fit$lambda)[order(fit$chain), ],
                                       dim = c(200, 3, 7), dimnames = list(NULL, NULL, d$parameter)))
  expect_identical(d$rhat, unname(apply(a, 3, posterior::rhat)))
  expect_identical(d$ess_bulk, unname(apply(a, 3, posterior::ess_bulk)))
  expect_identical(d$ess_tail, unname(apply(a, 3, posterior::ess_tail)))
  expect_output(print(fit), sprintf("max R-hat: %.3f", max(d$rhat)), fixed = TRUE)
  # the other elements are read as before (exact names first, partial matching as for lists)
  expect_identical(fit$sigma2, .subset2(fit, "sigma2"))
  expect_identical(fit$lambda, .subset2(fit, "lambda"))
  expect_s3_class(fit$timing, "proc_time")
  f0 <- blasso(x, y, lambda = 1, chains = 2, iterations = 50, burnin = 10, seed = 2, quiet = TRUE,
               control = blasso_control(diagnostics = FALSE))
  expect_identical(f0$diagnostics, list())
  expect_false(any(grepl("R-hat", capture.output(print(f0)))))
})
