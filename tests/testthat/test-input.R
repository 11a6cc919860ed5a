# Bad input: classed errors that name the argument; nothing crashes; the caller's data is not modified.

test_that("bad x / y / arguments give classed scalebayes errors", {
  d <- sim_gaussian(30, 4)
  x <- d$x; y <- d$y
  xna <- x; xna[2, 3] <- NA
  expect_error(wbb(xna, y, quiet = TRUE), class = "scalebayes_error", regexp = "finite")
  xinf <- x; xinf[1, 1] <- Inf
  expect_error(wbb(xinf, y, quiet = TRUE), class = "scalebayes_error")
  yn <- y; yn[4] <- NaN
  expect_error(wbb(x, yn, quiet = TRUE), class = "scalebayes_error", regexp = "y")
  expect_error(wbb(matrix(letters[1:8], 4), 1:4, quiet = TRUE), class = "scalebayes_error", regexp = "numeric")
  expect_error(wbb(x, y[-1], quiet = TRUE), class = "scalebayes_error", regexp = "length")
  expect_error(wbb(x, y, family = "binomial", quiet = TRUE), class = "scalebayes_error", regexp = "0/1")
  expect_error(wbb(x, rep(1, 30), family = "binomial", quiet = TRUE), class = "scalebayes_error")
  expect_error(wbb(x, y, lambda = -1, quiet = TRUE), class = "scalebayes_error", regexp = "lambda")
  expect_error(wbb(x, y, alpha = 1.5, quiet = TRUE), class = "scalebayes_error", regexp = "alpha")
  expect_error(wbb(x, y, draws = 0, quiet = TRUE), class = "scalebayes_error", regexp = "draws")
  expect_error(wbb(x, y, draws = 2.5, quiet = TRUE), class = "scalebayes_error", regexp = "draws")
  expect_error(wbb(x[1, , drop = FALSE], y[1], quiet = TRUE), class = "scalebayes_error", regexp = "2 rows")
  expect_error(wbb(x[, 0], y, quiet = TRUE), class = "scalebayes_error", regexp = "column")
  expect_error(wbb(x, y, threads = 0, quiet = TRUE), class = "scalebayes_error", regexp = "threads")
  expect_error(wbb(x, y, seed = -3, quiet = TRUE), class = "scalebayes_error", regexp = "seed")
  expect_error(wbb(x, y, control = list(), quiet = TRUE), class = "scalebayes_error", regexp = "control")
  expect_error(wbb(x, y, prior_weights = "both", quiet = TRUE), regexp = "prior_weights")
  expect_error(wbb_control(nfolds = 1), class = "scalebayes_error")
  expect_error(weighted_lasso(x, y, weights = rep(-1, 30)), class = "scalebayes_error", regexp = "weights")
  expect_error(weighted_lasso(x, y, penalty_factor = 1:2), class = "scalebayes_error", regexp = "penalty_factor")
  expect_error(wbb(x, y, quiet = TRUE, control = wbb_control(nfolds = 40)), class = "scalebayes_error",
               regexp = "nfolds")
})

test_that("constant and duplicated columns give warnings and sensible fits", {
  d <- sim_gaussian(40, 4)
  x <- cbind(d$x, const = 3)
  expect_warning(fit <- wbb(x, d$y, lambda = 5, draws = 20, seed = 1, quiet = TRUE), class = "scalebayes_warning")
  expect_true(all(fit$draws[, "const"] == 0))
  x2 <- cbind(d$x, dup = d$x[, 1])
  expect_warning(f2 <- wbb(x2, d$y, lambda = 5, draws = 20, seed = 1, quiet = TRUE), class = "scalebayes_warning")
  expect_lt(f2$diagnostics$kkt_max, 1e-8)
})

test_that("the caller's data are never modified", {
  d <- sim_gaussian(40, 4)
  x <- d$x; y <- d$y
  x0 <- x + 0; y0 <- y + 0
  fit <- wbb(x, y, draws = 10, seed = 1, quiet = TRUE)
  expect_identical(x, x0)
  expect_identical(y, y0)
  w <- rexp(40); w0 <- w + 0
  weighted_lasso(x, y, weights = w, lambda = 1)
  expect_identical(w, w0)
})

test_that("engine messages reach the user verbatim, braces included (LibTorch's messages have them)", {
  err <- tryCatch(scalebayes:::sb_call_engine(stop("shape mismatch in lambda(int)#1 {x} {}")), error = identity)
  expect_s3_class(err, "scalebayes_error_engine")
  expect_match(conditionMessage(err), "shape mismatch in lambda(int)#1 {x} {}", fixed = TRUE)
})
