# elliptic_kle_data() / darcy_tpfa(): the Darcy solver (RT0/P0 with two-point fluxes) and the KLE generator.

# face velocities of one sample as the two arrays ux ((G+1) x G: vertical faces) and uy (G x (G+1))
split_faces <- function(v, G) {
  list(ux = matrix(v[seq_len((G + 1) * G)], G + 1, G), uy = matrix(v[-seq_len((G + 1) * G)], G, G + 1))
}

test_that("constant permeability without source gives the linear pressure exactly", {
  G <- 7
  s <- darcy_tpfa(matrix(2, G, G), f = 0, pressure = c(1, 0), threads = 1, quiet = TRUE)
  xc <- (seq_len(G) - 0.5) / G
  expect_equal(drop(s$pressure), rep(1 - xc, G), tolerance = 1e-12)
  f <- split_faces(drop(s$velocity), G)
  expect_equal(f$ux, matrix(2, G + 1, G), tolerance = 1e-12)  # u = -kappa dp/dx = 2
  expect_equal(f$uy, matrix(0, G, G + 1), tolerance = 1e-12)
})

test_that("the engine's TPFA system equals one assembled independently in R", {
  set.seed(3)
  G <- 6
  k <- matrix(exp(rnorm(G * G)), G, G)  # k[i, j]: cell i along x, j along y
  fsrc <- runif(G * G)
  h <- 1 / G
  id <- function(i, j) i + G * (j - 1)
  A <- matrix(0, G * G, G * G); b <- fsrc * h^2
  hm <- function(a, c) 2 * a * c / (a + c)
  for (j in 1:G) for (i in 1:G) {
    c0 <- id(i, j)
    nb <- list(c(i + 1, j), c(i - 1, j), c(i, j + 1), c(i, j - 1))
    for (q in nb) if (q[1] >= 1 && q[1] <= G && q[2] >= 1 && q[2] <= G) {
      T <- hm(k[i, j], k[q[1], q[2]]); A[c0, c0] <- A[c0, c0] + T; A[c0, id(q[1], q[2])] <- -T
    }
    if (i == 1) { A[c0, c0] <- A[c0, c0] + 2 * k[i, j]; b[c0] <- b[c0] + 2 * k[i, j] * 1 }
    if (i == G) { A[c0, c0] <- A[c0, c0] + 2 * k[i, j]; b[c0] <- b[c0] + 2 * k[i, j] * 0.25 }
  }
  p <- solve(A, b)
  s <- darcy_tpfa(k, f = fsrc, pressure = c(1, 0.25), threads = 1, quiet = TRUE)
  expect_equal(drop(s$pressure), p, tolerance = 1e-10)
  # a vertical interior face and the left boundary face of row j = 2
  f <- split_faces(drop(s$velocity), G)
  P <- matrix(p, G, G)
  expect_equal(f$ux[3, 2], hm(k[2, 2], k[3, 2]) * (P[2, 2] - P[3, 2]) / h, tolerance = 1e-10)
  expect_equal(f$ux[1, 2], 2 * k[1, 2] * (1 - P[1, 2]) / h, tolerance = 1e-10)
  expect_equal(f$uy[4, 3], hm(k[4, 2], k[4, 3]) * (P[4, 2] - P[4, 3]) / h, tolerance = 1e-10)
})

test_that("the solver converges at order 2 on a manufactured solution", {
  # p = 1 - x + 0.5 sin(pi x) cos(pi y): p(0, y) = 1, p(1, y) = 0, dp/dy = 0 on y = 0, 1 (the generator's
  # boundary conditions); kappa = exp(0.5 sin(2 pi x) + 0.3 cos(pi y)); f = -div(kappa grad p).
  pe <- function(x, y) 1 - x + 0.5 * sin(pi * x) * cos(pi * y)
  ka <- function(x, y) exp(0.5 * sin(2 * pi * x) + 0.3 * cos(pi * y))
  fe <- function(x, y) {
    k <- ka(x, y); kx <- k * pi * cos(2 * pi * x); ky <- -k * 0.3 * pi * sin(pi * y)
    px <- -1 + 0.5 * pi * cos(pi * x) * cos(pi * y); py <- -0.5 * pi * sin(pi * x) * sin(pi * y)
    lap <- -pi^2 * sin(pi * x) * cos(pi * y)  # p_xx + p_yy
    -(kx * px + ky * py + k * lap)
  }
  Gs <- c(10, 20, 40, 80)
  err_p <- err_u <- numeric(length(Gs))
  for (m in seq_along(Gs)) {
    G <- Gs[m]; xc <- (seq_len(G) - 0.5) / G
    X <- outer(xc, rep(1, G)); Y <- outer(rep(1, G), xc)
    s <- darcy_tpfa(ka(X, Y), f = fe(X, Y), threads = 1, quiet = TRUE)
    err_p[m] <- sqrt(mean((drop(s$pressure) - pe(X, Y))^2))
    # x-velocity at the vertical faces' midpoints: -kappa dp/dx
    xf <- (0:G) / G
    XF <- outer(xf, rep(1, G)); YF <- outer(rep(1, G + 1), xc)
    ux <- -ka(XF, YF) * (-1 + 0.5 * pi * cos(pi * XF) * cos(pi * YF))
    err_u[m] <- sqrt(mean((split_faces(drop(s$velocity), G)$ux - ux)^2))
  }
  fp <- summary(lm(log(err_p) ~ log(1 / Gs)))$coefficients
  fu <- summary(lm(log(err_u) ~ log(1 / Gs)))$coefficients
  # measured order within 4 standard errors of the fit (plus 0.05 for the pre-asymptotic curvature)
  expect_lt(abs(fp[2, 1] - 2), 4 * fp[2, 2] + 0.05)
  expect_lt(abs(fu[2, 1] - 2), 4 * fu[2, 2] + 0.05)  # face velocities: also order 2 (measured 2.00-2.03)
  expect_lt(err_p[4], 1e-3)
})

test_that("every cell conserves mass and the no-flow faces carry nothing", {
  d <- elliptic_kle_data(3, grid = 20, seed = 5, threads = 1, quiet = TRUE)
  G <- 20
  for (s in 1:3) {
    f <- split_faces(d$y[s, ], G)
    div <- (f$ux[-1, ] - f$ux[-(G + 1), ] + f$uy[, -1] - f$uy[, -(G + 1)]) / G  # outward flux / face length * h
    expect_equal(div, matrix(1 / G^2, G, G), tolerance = 1e-9)  # = f |cell|
    expect_equal(f$uy[, c(1, G + 1)], matrix(0, G, 2))
    expect_equal(sum(f$ux[G + 1, ]) / G - sum(f$ux[1, ]) / G, 1, tolerance = 1e-9)  # net outflow = total source
  }
  expect_equal(dim(d$y), c(3, 2 * G * (G + 1)))
  expect_equal(dim(elliptic_kle_data(1, seed = 1, threads = 1, quiet = TRUE)$y), c(1, 5100))
})

test_that("KLE eigenvalues agree with an independent Nystrom reference (Simpson's rule)", {
  skip_if_fast_tier()
  ref1d <- function(l, m = 801) {  # Simpson weights on m nodes, symmetric form W^1/2 K W^1/2
    t <- seq(0, 1, length.out = m); h <- 1 / (m - 1)
    w <- h / 3 * c(1, rep(c(4, 2), (m - 3) / 2), 4, 1)
    K <- exp(-outer(t, t, "-")^2 / l^2)
    eigen(sqrt(w) * K * rep(sqrt(w), each = m), symmetric = TRUE, only.values = TRUE)$values
  }
  b <- cpp_kle_basis(50, 50, 0.2, 0.3, 2, 64, 500)
  r1 <- ref1d(0.2); r2 <- ref1d(0.3)
  # the midpoint rule on 500 nodes is accurate to O(m^-2): ~1e-6 relative; 4 times the nodes, 16 times closer
  expect_equal(b$values1[1:12], r1[1:12], tolerance = 1e-5)
  expect_equal(b$values2[1:12], r2[1:12], tolerance = 1e-5)
  fine <- cpp_kle_basis(4, 4, 0.2, 0.3, 2, 12, 2000)
  expect_equal(fine$values1[1:12], r1[1:12], tolerance = 1e-6)
  expect_lt(max(abs(fine$values1[1:8] / r1[1:8] - 1)), max(abs(b$values1[1:8] / r1[1:8] - 1)) / 8)
  expect_equal(sum(r1), 1, tolerance = 1e-8)  # trace of the kernel operator = integral of k(s, s) = 1
  # 2-D eigenvalues: the 64 largest products, times the variance
  all2 <- sort(2 * outer(r1[1:64], r2[1:64]), decreasing = TRUE)[1:64]
  expect_equal(b$values, all2, tolerance = 1e-5)
  expect_equal(b$values / b$values[1], all2 / all2[1], tolerance = 1e-5)
  # eigenfunctions are orthonormal (midpoint rule on a 200 x 200 grid of cells)
  B <- cpp_kle_basis(200, 200, 0.2, 0.3, 2, 64, 500)$basis
  expect_lt(max(abs(crossprod(B) / 200^2 - diag(64))), 3e-3)
})

test_that("inputs are the KLE field of the returned coefficients; settings respected", {
  d <- elliptic_kle_data(5, grid = 12, terms = 10, corr_length = c(0.3, 0.2), variance = 1.5, kappa0 = 3,
                         seed = 9, threads = 1, quiet = TRUE)
  b <- cpp_kle_basis(12, 12, 0.3, 0.2, 1.5, 10, 500)
  expect_equal(d$x, log(3) + d$coef %*% (sqrt(b$values) * t(b$basis)), tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(d$eigen$value, b$values)
  # solving the returned permeabilities again gives the same velocities
  s <- darcy_tpfa(exp(d$x), threads = 1, quiet = TRUE)
  expect_equal(s$velocity, d$y, tolerance = 1e-10)
  expect_equal(s$pressure, d$pressure, tolerance = 1e-10)
  # identity link: x is kappa itself = kappa0 + field
  di <- elliptic_kle_data(2, grid = 12, terms = 10, link = "identity", kappa0 = 20, seed = 9, threads = 1, quiet = TRUE)
  bi <- cpp_kle_basis(12, 12, 0.2, 0.3, 2, 10, 500)
  expect_equal(di$x, 20 + di$coef %*% (sqrt(bi$values) * t(bi$basis)), tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(darcy_tpfa(di$x, threads = 1, quiet = TRUE)$velocity, di$y, tolerance = 1e-10)
  expect_equal(di$coef, elliptic_kle_data(2, grid = 12, terms = 10, seed = 9, threads = 1, quiet = TRUE)$coef)
})

test_that("the data do not depend on the number of threads; seeds reproduce", {
  a <- elliptic_kle_data(7, grid = 15, seed = 11, threads = 1, quiet = TRUE)
  b <- elliptic_kle_data(7, grid = 15, seed = 11, threads = 2, quiet = TRUE)
  expect_identical(a$y, b$y)
  expect_identical(a$x, b$x)
  # sample s depends only on (seed, s): the first 3 of 7 are the 3 of a shorter run
  c3 <- elliptic_kle_data(3, grid = 15, seed = 11, threads = 2, quiet = TRUE)
  expect_identical(c3$coef, a$coef[1:3, ])
  set.seed(1); s1 <- elliptic_kle_data(2, grid = 10, threads = 1, quiet = TRUE)
  set.seed(1); s2 <- elliptic_kle_data(2, grid = 10, threads = 1, quiet = TRUE)
  expect_identical(s1$y, s2$y)
  expect_equal(mean(a$coef), 0, tolerance = 0.3)
})

test_that("bad inputs give classed errors naming the argument", {
  e <- function(expr, arg) {
    err <- expect_error(expr, class = "scalebayes_error_input")
    expect_match(conditionMessage(err), arg, fixed = TRUE)
  }
  e(elliptic_kle_data(0), "n")
  e(elliptic_kle_data(2, grid = 1), "grid")
  e(elliptic_kle_data(2, corr_length = c(0.2, -1)), "corr_length")
  e(elliptic_kle_data(2, corr_length = 0.2), "corr_length")
  e(elliptic_kle_data(2, variance = 0), "variance")
  e(elliptic_kle_data(2, kappa0 = -1), "kappa0")
  e(elliptic_kle_data(2, link = "exp"), "link")
  e(elliptic_kle_data(2, pressure = 1), "pressure")
  e(elliptic_kle_data(2, terms = 600, nystrom = 500), "terms")
  e(elliptic_kle_data(2, seed = -1), "seed")
  e(darcy_tpfa(matrix(-1, 4, 4)), "kappa")
  e(darcy_tpfa(matrix(1, 2, 10)), "kappa")
  e(darcy_tpfa("a"), "kappa")
  e(darcy_tpfa(matrix(1, 4, 4), f = 1:3), "f")
  e(darcy_tpfa(matrix(1, 4, 4), pressure = c(1, NA)), "pressure")
  # the printed additive form with a small kappa0 gives a non-positive permeability: the engine names the sample
  err <- expect_error(elliptic_kle_data(3, grid = 10, link = "identity", kappa0 = 0.1, seed = 1, threads = 1,
                                        quiet = TRUE), class = "scalebayes_error")
  expect_match(conditionMessage(err), "kappa0")
})

test_that("the identity link's default kappa0 keeps the fields positive (7; the log link's is 1)", {
  d <- elliptic_kle_data(20, grid = 20, link = "identity", seed = 2021, threads = 1, quiet = TRUE)
  expect_identical(d$settings$kappa0, 7)
  expect_true(all(d$x > 0))
  expect_identical(elliptic_kle_data(2, grid = 10, seed = 1, threads = 1, quiet = TRUE)$settings$kappa0, 1)
})
