# blasso_control(preset = "monomvn") against monomvn::blasso itself on p > n data, within Monte-Carlo error.

# Monte-Carlo standard error of the mean of v by batch means (v: the kept draws of one chain, or of several
# chains stacked; `chains` batches per chain keep batches inside chains).
mc_se <- function(v, chains = 1L, batches = 20L) {
  per <- length(v) / chains
  b <- unlist(lapply(seq_len(chains), function(k) {
    s <- v[(k - 1) * per + seq_len(per)]
    g <- cut(seq_along(s), batches, labels = FALSE)
    tapply(s, g, mean)
  }))
  stats::sd(b) / sqrt(length(b))
}

test_that("preset 'monomvn' matches monomvn::blasso(icept = FALSE) on p > n data within Monte-Carlo error", {
  skip_on_cran()
  skip_if_not_installed("monomvn")
  set.seed(11)
  n <- 30; p <- 40
  x <- matrix(rnorm(n * p), n, p)
  # a response far from mean zero: monomvn's icept = FALSE leaves its mean in the residuals (x is centred, y is
  # not, sigma^2 keeps n - 1 degrees of freedom), which scalebayes's intercept = FALSE must do too
  y <- 4 + drop(x[, 1:4] %*% c(3, -2, 1.5, 1)) + rnorm(n)
  set.seed(12)
  mm <- monomvn::blasso(x, y, T = 1600, icept = FALSE, verb = 0)
  keep <- 101:1600
  mono <- list(s2 = mm$s2[keep], m = mm$m[keep], l2 = mm$lambda2[keep], b = mm$beta[keep, 1:4])
  run <- function(intercept) {
    f <- blasso(x, y, lambda = "gamma", chains = 4, iterations = 400, burnin = 200, seed = 3, threads = 1,
                quiet = TRUE, control = blasso_control(preset = "monomvn", intercept = intercept, diagnostics = FALSE))
    list(s2 = f$sigma2, m = f$model_size, l2 = f$lambda^2, b = f$draws[, paste0("x", 1:4)])
  }
  colnames(x) <- paste0("x", 1:p)
  ours <- run(FALSE)
  z <- function(a, b, ca, cb) (mean(a) - mean(b)) / sqrt(mc_se(a, ca)^2 + mc_se(b, cb)^2)
  zs <- c(s2 = z(ours$s2, mono$s2, 4, 1), m = z(ours$m, mono$m, 4, 1), l2 = z(ours$l2, mono$l2, 4, 1),
          vapply(1:4, function(j) z(ours$b[, j], mono$b[, j], 4, 1), numeric(1)))
  expect_true(all(abs(zs) < 4), info = paste(names(zs), round(zs, 2), collapse = " "))
  expect_true(any(mono$b[, 1] != 0) && mean(mono$m) > 4)  # the comparison is not between empty models
  # the comparison can fail: the intercept model (y centred) is a different posterior for this y
  icpt <- run(TRUE)
  expect_gt(abs(z(icpt$s2, mono$s2, 4, 1)), 8)
})

test_that("preset 'monomvn' allows active sets up to n - 1 coefficients, as monomvn's M = min(p, n - 1)", {
  set.seed(5)
  n <- 12; p <- 30
  x <- matrix(rnorm(n * p), n, p)
  y <- drop(x %*% rep(1, p)) + rnorm(n, sd = 0.1)
  f <- blasso(x, y, lambda = "gamma", chains = 2, iterations = 300, burnin = 100, seed = 1, threads = 1,
              quiet = TRUE, control = blasso_control(preset = "monomvn", diagnostics = FALSE))
  expect_equal(max(f$model_size), n - 1)
  expect_equal(max(rowSums(f$draws[, -1] != 0)), n - 1)
  # without the preset the cap stays n - 2 with an intercept (the other rj runs are unchanged)
  g <- blasso(x, y, lambda = "gamma", chains = 2, iterations = 300, burnin = 100, seed = 1, threads = 1,
              quiet = TRUE, control = blasso_control(rj = TRUE, standardize = TRUE, scale = "l2",
                                                    sigma2_prior = c(0, 0), diagnostics = FALSE), thin = n - 1)
  expect_equal(max(g$model_size), n - 2)
})
