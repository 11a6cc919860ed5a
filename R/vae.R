# The variational autoencoder (Kingma & Welling 2014): vae() and its methods. The engine (nn/vi/vae.hpp)
# minimizes the negative ELBO with the one training loop of every network method (src/torch_nn.cpp: cpp_nn_vae,
# cpp_nn_vae_apply).

#' Variational autoencoder
#'
#' Kingma & Welling (2014), as in the VAE section of the Toronto tutorial on variational inference for
#' networks. The encoder network maps an example \eqn{x} to the mean \eqn{m(x)} and the log-variance
#' \eqn{v(x)} of the Gaussian \eqn{q(z \mid x) = N(m(x), \mathrm{diag}\, e^{v(x)})} over `latent` latent
#' values (its output layer has `2 * latent` units); the decoder network maps \eqn{z} to one Bernoulli logit
#' \eqn{f_d(z)} per value of \eqn{x} (its output layer has \eqn{D} units). With the prior \eqn{p(z) = N(0, I)}
#' the ELBO of an example is
#' \deqn{\mathcal{L}(x) = E_{q(z|x)}\Big[\sum_d x_d f_d(z) - \log(1 + e^{f_d(z)})\Big] - \frac12 \sum_j
#'   \big(m_j^2 + e^{v_j} - 1 - v_j\big),}{L(x) = E_q[ sum_d x_d f_d(z) - log(1 + exp(f_d(z))) ] -
#'   (1/2) sum_j (m_j^2 + exp(v_j) - 1 - v_j),}
#' the expected reconstruction log-likelihood minus the KL divergence from the prior (closed form). Its
#' mean over the data is maximized by minibatch steps of [nn_control()]'s optimizer with the
#' reparameterization \eqn{z = m(x) + e^{v(x)/2} \epsilon}, \eqn{\epsilon \sim N(0, I)} (`samples` draws of
#' \eqn{\epsilon} per example and step), the noise drawn from the fit's own random stream: the same `seed`
#' gives the same fit for any `threads`.
#'
#' @param x Data with values in \[0, 1\]: an n x D matrix, or an n x height x width array of images (as
#'   [mnist_digits()]'s `x`). Values between 0 and 1 are used as they are (the cross-entropy of
#'   Kingma & Welling's MNIST experiments); nothing is binarized.
#' @param latent Dimension of the latent space (2 for the manifold plot).
#' @param encoder,decoder Networks made by [nn_mlp()] or [nn_sequential()]; their output layers are added
#'   (`2 * latent` units for the encoder, D for the decoder). The decoder's input is the `latent` values.
#' @param epochs,batch_size Override those of `control`.
#' @param samples Draws of \eqn{z} per example and step (Kingma & Welling's L; 1 suffices with minibatches
#'   of 100, their setting).
#' @param device,threads,seed,quiet As for [wbb_nn()]. One fit runs on one worker: `threads` changes nothing
#'   in the result.
#' @param control [nn_control()]: optimizer, learning rate, epochs, minibatch size, `float64`,
#'   `torch_threads`. Settings of the weighted bootstrap (`weight_dist`, `weight_mode`, `normalize_weights`,
#'   `grad_tol`) are errors.
#' @return An object of class `c("sb_vae", "sb_fit")`: `trace` (per epoch: the mean ELBO, reconstruction negative
#'   log-likelihood and KL per example over the epoch's minibatches), `elbo` (the last epoch's), `latent_means`
#'   and `latent_sds` (the encoder's means and sds of \eqn{q(z \mid x)} for the training data), the networks'
#'   parameters and specifications, settings, `interrupted`, `elapsed`. Methods: `print()`, `summary()`, `plot()`
#'   (see [plot.sb_vae()]), `predict()` (reconstructions), `as.matrix()` (the latent means), `as_draws_df()` and `posterior_interval()`
#'   (draws of latent codes; see [sb_vae-methods]), [nn_export()] and [nn_torch_code()] (the encoder and the
#'   decoder for PyTorch), and [vae_encode()], [vae_decode()], [vae_generate()].
#' @references Kingma, D. P. and Welling, M. (2014). Auto-encoding variational Bayes. *ICLR*.
#' @seealso [plot.sb_vae()], [vae_encode()].
#' @export
#' @examples
#' if (sb_torch_available()) {
#'   set.seed(1)
#'   # 300 noisy 4 x 4 "bars": horizontal or vertical
#'   bars <- t(replicate(300, {
#'     m <- matrix(0, 4, 4)
#'     if (runif(1) < 0.5) m[sample(4, 1), ] <- 1 else m[, sample(4, 1)] <- 1
#'     pmin(1, pmax(0, m + rnorm(16, sd = 0.05)))
#'   }))
#'   fit <- vae(bars, latent = 2, encoder = nn_mlp(32), decoder = nn_mlp(32), epochs = 60, seed = 1,
#'              control = nn_control(lr = 5e-3))
#'   print(fit)
#'   # two points of the latent space, decoded: bars
#'   round(matrix(vae_decode(fit, c(1.5, 0)), 4), 2)
#'   round(matrix(vae_decode(fit, c(0, 1.5)), 4), 2)
#' }
vae <- function(x, latent = 2L, encoder = nn_mlp(c(512)), decoder = nn_mlp(c(512)), epochs = NULL, batch_size = NULL,
                samples = 1L, device = "cpu", threads = NULL, seed = NULL, quiet = NULL, control = nn_control()) {
  call <- rlang::current_env()
  t0 <- proc.time()[["elapsed"]]
  latent <- check_count(latent, min = 1L, max = 10000L, arg = "latent", call = call)
  samples <- check_count(samples, min = 1L, max = 10000L, arg = "samples", call = call)
  for (a in c("encoder", "decoder")) {
    if (!inherits(get(a), "sb_nn_spec")) {
      sb_abort(c("{.arg {a}} must be a network made by {.fn nn_mlp} or {.fn nn_sequential}.",
                 x = "You supplied {.obj_type_friendly {get(a)}}."), arg = a, call = call)
    }
  }
  control <- nn_control_args(vi_check_control(control, call), epochs, batch_size, call)
  if (!is.null(control$validation)) {  # the VAE's objective has no held-out-loss hook (R/nn_control.R)
    sb_abort(c("{.code nn_control(validation = )} is for {.fn wbb_nn}, {.fn bbb} and {.fn sparse_vi}; {.fn vae} has none.",
               i = "Leave {.arg validation} and {.arg patience} out of {.arg control}."), arg = "control", call = call)
  }
  device <- check_backend(device, call)
  rs <- run_settings(seed, threads, quiet, call = call)
  xd <- vae_prepare_x(x, "x", call)
  D <- prod(xd$shape)
  etab <- tryCatch(nn_resolve(encoder, xd$shape, 2L * latent, call = call), scalebayes_error = function(e) {
    sb_abort(c("The encoder does not fit the data (one example: {paste(xd$shape, collapse = ' x ')}).",
               x = "{conditionMessage(e)}"), arg = "encoder", call = call)
  })
  dtab <- tryCatch(nn_resolve(decoder, latent, D, call = call), scalebayes_error = function(e) {
    sb_abort(c("The decoder does not fit its input of {latent} latent value{?s}.", x = "{conditionMessage(e)}"),
             arg = "decoder", call = call)
  })
  bs_tab <- rbind(etab[, c("kind", "params", "needs_two")], dtab[, c("kind", "params", "needs_two")])
  control$batch_size <- check_nn_batch_size(control$batch_size, xd$n, bs_tab, call = call, in_control = TRUE)
  init <- control$init
  espec <- nn_engine_spec(etab, xd$shape, "gaussian")
  dspec <- nn_engine_spec(dtab, latent, "binomial")
  espec$init <- dspec$init <- init
  ctrl <- nn_engine_control(control, device, FALSE)
  res <- sb_call_engine(cpp_nn_vae(espec, dspec, xd$x, xd$dim, ctrl,
                                   list(latent = as.double(latent), samples = samples, label = "VAE"),
                                   engine_run(rs)), call = call)
  if (res$status == 2L) {
    sb_abort(c("The VAE fit diverged (the negative ELBO became infinite or NaN).",
               i = "Lower {.arg lr} in {.fn nn_control}."), kind = "convergence", arg = "control", call = call)
  }
  rows <- res$epochs
  tr <- matrix(res$trace, ncol = 4L, byrow = TRUE)[seq_len(rows), , drop = FALSE]
  trace <- data.frame(epoch = tr[, 1], elbo = tr[, 2], nll = tr[, 3], kl = tr[, 4], loss = res$loss[seq_len(rows)])
  fit <- structure(list(
    latent = latent, input_shape = xd$shape, image = xd$image, n = xd$n, D = D,
    encoder_spec = espec, decoder_spec = dspec, encoder_table = etab, decoder_table = dtab,
    encoder = encoder, decoder = decoder,
    params = list(encoder = res$enc_params, decoder = res$dec_params, encoder_buffers = res$enc_buffers,
                  decoder_buffers = res$dec_buffers),
    trace = trace, elbo = if (rows) trace$elbo[rows] else NA_real_,
    settings = list(epochs = control$epochs, batch_size = control$batch_size, optimizer = control$optimizer,
                    lr = control$lr, samples = samples, float64 = control$float64, seed = rs$seed, nobs = xd$n),
    control = control, steps = res$steps, interrupted = isTRUE(res$interrupted),
    status = c("not run", "done", "diverged", "interrupted")[res$status + 1L], device = res$device,
    call = match.call()
  ), class = c("sb_vae", "sb_fit"))
  enc <- vae_encode(fit, x)
  fit$latent_means <- enc$mean
  fit$latent_sds <- enc$sd  # q(z | x) of the training data: as_draws_df() draws from it
  fit$elapsed <- proc.time()[["elapsed"]] - t0
  if (fit$interrupted) {
    sb_warn(c("Interrupted: the fit holds the networks reached after {rows} epoch{?s} ({res$steps} steps).",
              i = "Its trace stops there."), kind = "interrupted")
  }
  fit
}

# Data of a VAE: nn_prepare_x() (finite, a matrix or an image array), values in [0, 1]. `image`: c(height, width)
# for an n x height x width array (the engine flattens row by row), NULL for a matrix.
vae_prepare_x <- function(x, arg, call, shape = NULL) {
  xd <- nn_prepare_x(x, arg, call)
  r <- range(xd$x)
  if (r[1] < 0 || r[2] > 1) {
    sb_abort(c("{.arg {arg}} must have values in [0, 1]: the decoder's likelihood is Bernoulli per value.",
               x = "Its values range from {format(r[1], digits = 4)} to {format(r[2], digits = 4)}.",
               i = "Scale the data to [0, 1] first (images: divide by 255)."), arg = arg, call = call)
  }
  d <- dim(x)
  xd$image <- if (length(d) == 3L) as.integer(d[2:3]) else NULL
  if (!is.null(shape) && !identical(as.integer(xd$shape), as.integer(shape))) {
    sb_abort(c("{.arg {arg}} must have the shape of the fit's data.",
               x = "One example of {.arg {arg}} is {paste(xd$shape, collapse = ' x ')}; the fit's are {paste(shape, collapse = ' x ')}."),
             arg = arg, call = call)
  }
  xd
}

vae_check_fit <- function(fit, call) {
  if (!inherits(fit, "sb_vae")) {
    sb_abort(c("{.arg fit} must be a fit made by {.fn vae}.", x = "You supplied {.obj_type_friendly {fit}}."),
             arg = "fit", call = call)
  }
  check_backend("cpu", call)
}

vae_apply <- function(fit, what, x = double(), xdim = integer(), samples = 1L, seed = 0, call = rlang::caller_env()) {
  p <- fit$params
  sb_call_engine(cpp_nn_vae_apply(fit$encoder_spec, fit$decoder_spec, p$encoder, p$encoder_buffers, p$decoder,
                                  p$decoder_buffers, what, x, as.integer(xdim), as.integer(samples), as.double(seed),
                                  isTRUE(fit$settings$float64)), call = call)
}

# Decoded probabilities (n x D, the engine's order) in the shape of the fit's data: an n x D matrix, or for
# image data an n x height x width array.
vae_shape_out <- function(fit, prob) {
  if (is.null(fit$image)) return(prob)
  h <- fit$image[1]
  w <- fit$image[2]
  aperm(array(prob, c(nrow(prob), w, h)), c(1L, 3L, 2L))  # the engine's value d = (row - 1) * w + col
}

#' Encode, decode and generate with a variational autoencoder
#'
#' `vae_encode()` returns the means and standard deviations of \eqn{q(z \mid x)} for new data;
#' `vae_decode()` the decoder's pixel probabilities \eqn{\mathrm{sigmoid}(f(z))} for given latent values;
#' `vae_generate()` decodes `n` draws \eqn{z \sim N(0, I)} of the prior (new examples, as probabilities).
#'
#' @param fit A fit made by [vae()].
#' @param x Data of the fit's shape (a matrix, or an array of images), values in \[0, 1\].
#' @param z Latent values: an n x latent matrix (or a vector of `latent` values).
#' @param n Number of examples to generate.
#' @param seed Seed of the draws of \eqn{z} (`NULL`: from R's generator).
#' @return `vae_encode()`: a list of n x latent matrices `mean` and `sd`. `vae_decode()`, `vae_generate()`:
#'   probabilities in the fit's data shape (an n x D matrix, or an n x height x width array); `vae_generate()`
#'   adds the draws as attribute `"z"`.
#' @export
#' @examples
#' if (sb_torch_available()) {
#'   x <- matrix(rbinom(200 * 9, 1, 0.3), 200, 9)
#'   fit <- vae(x, encoder = nn_mlp(16), decoder = nn_mlp(16), epochs = 5, seed = 1, quiet = TRUE)
#'   str(vae_encode(fit, x[1:3, ]))
#'   dim(vae_generate(fit, 4, seed = 1))
#' }
vae_encode <- function(fit, x) {
  call <- rlang::current_env()
  vae_check_fit(fit, call)
  vae_encode_x(fit, x, "x", call)
}

# The encoder's means and sds at data `x`, whose errors name `arg` (predict(newdata = ) names its own).
vae_encode_x <- function(fit, x, arg, call) {
  if (is.null(fit$image) && is.null(dim(x)) && is.numeric(x) && length(x) == fit$D) x <- matrix(x, 1L)
  xd <- vae_prepare_x(x, arg, call, shape = fit$input_shape)
  vae_apply(fit, "encode", xd$x, xd$dim, call = call)
}

#' @rdname vae_encode
#' @export
vae_decode <- function(fit, z) {
  call <- rlang::current_env()
  vae_check_fit(fit, call)
  if (is.numeric(z) && is.null(dim(z)) && length(z) == fit$latent) z <- matrix(z, 1L)
  if (!is.numeric(z) || !is.matrix(z) || ncol(z) != fit$latent || nrow(z) < 1L || any(!is.finite(z))) {
    sb_abort(c("{.arg z} must be a finite numeric matrix with {fit$latent} column{?s} (one per latent dimension).",
               x = "You supplied {.obj_type_friendly {z}}{if (is.matrix(z)) paste0(' with ', ncol(z), ' columns') else ''}."),
             arg = "z", call = call)
  }
  storage.mode(z) <- "double"
  prob <- vae_apply(fit, "decode", z, dim(z), call = call)$prob
  bad <- which(rowSums(!is.finite(prob)) > 0)
  if (length(bad)) {
    # a decoder's activations overflow (Inf - Inf in the output layer) far out in the latent space
    sb_abort(c("{.arg z} is too far from the prior's mass: decoding gives non-finite probabilities for {length(bad)} row{?s}, the first row {bad[1]} (largest |z| {format(max(abs(z[bad[1], ])), digits = 3)}).",
               i = "The prior of the latent space is N(0, I): use points within a few units of 0."),
             arg = "z", call = call)
  }
  vae_shape_out(fit, prob)
}

#' @rdname vae_encode
#' @export
vae_generate <- function(fit, n = 16L, seed = NULL) {
  call <- rlang::current_env()
  vae_check_fit(fit, call)
  n <- check_count(n, min = 1L, max = 1e6, arg = "n", call = call)
  seed <- resolve_seed(seed, call)
  r <- vae_apply(fit, "generate", xdim = c(n, fit$latent), seed = seed, call = call)
  out <- vae_shape_out(fit, r$prob)
  attr(out, "z") <- r$z
  out
}

# A Monte-Carlo estimate of the ELBO per example at the fit's networks (`samples` draws of z per example from
# rng::Stream(seed, 0)): an n x 3 matrix (elbo, nll, kl).
vae_elbo <- function(fit, x, samples = 1L, seed = 1) {
  call <- rlang::current_env()
  vae_check_fit(fit, call)
  xd <- vae_prepare_x(x, "x", call, shape = fit$input_shape)
  m <- vae_apply(fit, "elbo", xd$x, xd$dim, samples = samples, seed = seed, call = call)$elbo
  colnames(m) <- c("elbo", "nll", "kl")
  m
}

# The latent manifold (Kingma & Welling 2014, Figure 4; the tutorial's Figure 3): decoded images on an n x n grid
# of z = (qnorm(u1), qnorm(u2)) over linearly spaced u in (0, 1), z2 decreasing down the rows, z1 increasing along
# the columns; one (n h) x (n w) matrix of probabilities, row 1 at the top.
vae_manifold <- function(fit, n = 20L, call = rlang::caller_env()) {
  if (fit$latent != 2L) {
    sb_abort(c("The manifold plot needs a 2-dimensional latent space; this fit has {fit$latent}.",
               i = "Fit with {.code latent = 2}, or use {.code type = \"latent\"}."), arg = "type", call = call)
  }
  hw <- vae_image_dim(fit, call)
  n <- check_count(n, min = 2L, max = 200L, arg = "n", call = call)
  u <- stats::qnorm(seq(0.5 / n, 1 - 0.5 / n, length.out = n))
  g <- expand.grid(z1 = u, z2 = rev(u))  # z1 fastest: row a of the grid holds z2 = rev(u)[a]
  p <- vae_apply(fit, "decode", as.matrix(g), c(nrow(g), 2L), call = call)$prob
  img <- vae_images(fit, p, hw)
  out <- matrix(0, n * hw[1], n * hw[2])
  for (k in seq_len(nrow(g))) {
    a <- (k - 1L) %/% n
    b <- (k - 1L) %% n
    out[a * hw[1] + seq_len(hw[1]), b * hw[2] + seq_len(hw[2])] <- img[k, , ]
  }
  attr(out, "z") <- u
  out
}

# Height and width of one example as an image: the array's, or a square matrix row (R's column-major order).
vae_image_dim <- function(fit, call) {
  if (!is.null(fit$image)) return(fit$image)
  s <- round(sqrt(fit$D))
  if (s * s != fit$D) {
    sb_abort(c("The fit's examples are not images ({fit$D} values, not a square).",
               i = "Fit with an n x height x width array to plot decoded examples."), arg = "x", call = call)
  }
  c(s, s)
}
# Probabilities (n x D, engine order) as an n x h x w array [example, row, col].
vae_images <- function(fit, p, hw) {
  if (!is.null(fit$image)) return(vae_shape_out(fit, p))
  array(p, c(nrow(p), hw[1], hw[2]))  # a matrix row x[i, ] = c(image) in R's column-major order
}

#' Plot a variational autoencoder
#'
#' `type = "manifold"`: decoded examples on a grid of the 2-dimensional latent space, \eqn{z = (\Phi^{-1}(u_1),
#' \Phi^{-1}(u_2))} for linearly spaced \eqn{u} (Kingma & Welling 2014, Figure 4; Figure 3 of the Toronto
#' tutorial). `"latent"`: the encoder's means of the training data (or of `newx`), coloured by `labels`.
#' `"trace"`: the ELBO per example over the epochs.
#'
#' @param x A fit made by [vae()].
#' @param type `"manifold"` (the default for a 2-dimensional latent space), `"latent"` or `"trace"` (the default
#'   otherwise).
#' @param n Grid size of the manifold (n x n examples).
#' @param labels Labels of the points (e.g. digit classes) for `"latent"`: one per row of the data.
#' @param newx Data to encode for `"latent"` (default: the training data's stored means).
#' @param ... Passed to the plotting function.
#' @return `x`, invisibly; for `"manifold"` the image matrix (probabilities, row 1 at the top), invisibly.
#' @export
plot.sb_vae <- function(x, type = c("manifold", "latent", "trace"), n = 20L, labels = NULL, newx = NULL, ...) {
  call <- rlang::current_env()
  # the default: the manifold of a 2-dimensional latent space, else the ELBO trace (which every fit has)
  if (missing(type) && !identical(as.integer(x$latent), 2L)) type <- "trace"
  type <- sb_match_arg(type)
  if (type == "trace") {
    graphics::plot(x$trace$epoch, x$trace$elbo, type = "l", xlab = "epoch", ylab = "ELBO per example", ...)
    return(invisible(x))
  }
  if (type == "manifold") {
    vae_check_fit(x, call)
    m <- vae_manifold(x, n, call = call)
    graphics::image(seq_len(ncol(m)), seq_len(nrow(m)), t(m[nrow(m):1, , drop = FALSE]), col = grDevices::gray(seq(1, 0, length.out = 64)),
                    axes = FALSE, xlab = "z1", ylab = "z2", asp = 1, ...)
    return(invisible(m))
  }
  mu <- if (is.null(newx)) x$latent_means else vae_encode(x, newx)$mean
  if (ncol(mu) < 2L) {
    sb_abort("The latent plot needs at least 2 latent dimensions; this fit has {ncol(mu)}.", arg = "type", call = call)
  }
  if (!is.null(labels) && length(labels) != nrow(mu)) {
    sb_abort(c("{.arg labels} must have one value per example.", x = "{length(labels)} labels for {nrow(mu)} examples."),
             arg = "labels", call = call)
  }
  col <- if (is.null(labels)) "black" else grDevices::hcl.colors(nlevels(factor(labels)), "Dark 3")[as.integer(factor(labels))]
  graphics::plot(mu[, 1], mu[, 2], col = col, pch = 20, cex = 0.5, xlab = "z1 (mean of q)", ylab = "z2 (mean of q)", ...)
  if (!is.null(labels)) {
    graphics::legend("topright", legend = levels(factor(labels)), col = grDevices::hcl.colors(nlevels(factor(labels)), "Dark 3"),
                     pch = 20, bty = "n", cex = 0.8)
  }
  invisible(x)
}

#' @export
print.sb_vae <- function(x, ...) {
  cat(sprintf("<sb_vae> variational autoencoder: %d latent dimension%s; n = %d examples of %s\n", x$latent,
              if (x$latent == 1L) "" else "s", x$n,
              if (is.null(x$image)) paste(x$D, "values") else paste(paste(x$image, collapse = " x "), "pixels")))
  cat(sprintf("Encoder %s | decoder %s | %s parameters\n", nn_arch_string(x$encoder_table, x$input_shape),
              nn_arch_string(x$decoder_table, x$latent),
              format(length(x$params$encoder) + length(x$params$decoder), big.mark = ",")))
  tr <- x$trace
  if (nrow(tr)) {
    last <- tr[nrow(tr), ]
    cat(sprintf("%d epochs (%s, lr %g, batch %d): ELBO per example %.2f (reconstruction NLL %.2f, KL %.2f)%s\n",
                nrow(tr), x$settings$optimizer, x$settings$lr, x$settings$batch_size, last$elbo, last$nll, last$kl,
                if (x$interrupted) " [interrupted]" else ""))
  }
  invisible(x)
}

#' @export
summary.sb_vae <- function(object, ...) {
  tr <- object$trace
  structure(list(latent = object$latent, n = object$n, D = object$D, epochs = nrow(tr),
                 final = if (nrow(tr)) tr[nrow(tr), c("elbo", "nll", "kl")] else NULL,
                 best_elbo = if (nrow(tr)) max(tr$elbo) else NA_real_,
                 latent_sd = apply(object$latent_means, 2, stats::sd), settings = object$settings,
                 elapsed = object$elapsed, interrupted = object$interrupted), class = "summary.sb_vae")
}

#' @export
print.summary.sb_vae <- function(x, ...) {
  cat(sprintf("Variational autoencoder: %d latent dimensions, n = %d, D = %d\n", x$latent, x$n, x$D))
  if (!is.null(x$final)) {
    cat(sprintf("After %d epochs: ELBO per example %.3f = -(NLL %.3f + KL %.3f); best epoch %.3f\n", x$epochs,
                x$final$elbo, x$final$nll, x$final$kl, x$best_elbo))
  }
  cat("SD of the encoded means per latent dimension:", format(x$latent_sd, digits = 3), "\n")
  cat(sprintf("Settings: %s, lr %g, batch %d, %d sample%s of z per example, seed %s; %.1f s%s\n", x$settings$optimizer,
              x$settings$lr, x$settings$batch_size, x$settings$samples, if (x$settings$samples == 1L) "" else "s",
              format(x$settings$seed), x$elapsed, if (x$interrupted) " (interrupted)" else ""))
  invisible(x)
}

#' @export
#' @rdname vae
#' @param object A fit made by [vae()].
#' @param newdata For `predict()`: data to reconstruct (no default: give the data).
#' @param newx Synonym of `newdata` (its name before; the package's one name for new inputs is `newdata`).
#' @param type For `predict()`: `"reconstruction"` (decoded probabilities at the mean of \eqn{q(z \mid x)}) or
#'   `"latent"` (the means of \eqn{q(z \mid x)}).
#' @param ... Not used: any argument given here is an error.
predict.sb_vae <- function(object, newdata = NULL, type = c("reconstruction", "latent"), ..., newx = NULL) {
  call <- rlang::current_env()
  sb_check_dots(..., fn = "predict")
  type <- sb_match_arg(type)
  nd <- sb_newdata(object, newdata, newx, call = call)
  if (is.null(nd)) sb_abort("Give the data to reconstruct as {.arg newdata}.", arg = "newdata", call = call)
  arg <- attr(nd, "sb_arg") %||% "newdata"
  attr(nd, "sb_arg") <- NULL
  vae_check_fit(object, call)
  mu <- vae_encode_x(object, nd, arg, call)$mean
  if (type == "latent") return(mu)
  vae_decode(object, mu)
}

# ---- export of the encoder and the decoder (nn_export(), nn_torch_code()) -----------------------------------------

# nn_export() of a VAE: one state dict per network, through the export of every network fit (cpp_nn_export()).
vae_export <- function(fit, path, draw, network, call) {
  vae_check_fit(fit, call)
  if (!identical(draw, "mean")) {
    sb_abort(c("A {.fn vae} fit has one set of network weights (fitted by maximizing the ELBO), not posterior draws.",
               i = "Leave {.arg draw} at {.val mean}: the export writes the fitted weights."),
             kind = "not_applicable", also = "state", arg = "draw", call = call)
  }
  nets <- c("encoder", "decoder")
  if (is.null(network)) network <- nets
  if (!is.character(network) || !length(network) || anyNA(network) || !all(network %in% nets) || anyDuplicated(network)) {
    sb_abort(c("{.arg network} must be {.val encoder}, {.val decoder} or both (the default).",
               x = "You supplied {.val {format(network)}}."), arg = "network", call = call)
  }
  if (!is.character(path) || length(path) != length(network)) {
    sb_abort(c("{.arg path} must give one file per network exported: {length(network)} ({.val {network}}).",
               x = "You supplied {length(path)} value{?s}.",
               i = "E.g. {.code nn_export(fit, c(\"encoder.pt\", \"decoder.pt\"))}, or {.code network = \"encoder\"} with one file."),
             arg = "path", call = call)
  }
  out <- character(length(network))
  for (k in seq_along(network)) {
    out[k] <- nn_check_out_path(path[k], call)
    net <- network[k]
    spec <- fit[[paste0(net, "_spec")]]
    sb_call_engine(cpp_nn_export(spec, as.double(fit$params[[net]]), vae_buffers(fit, net),
                                 isTRUE(fit$settings$float64), out[k]), call = call)
  }
  invisible(stats::setNames(out, network))
}

# The batch-norm running statistics of one network as nn_fit_buffers() gives them: a list named by the engine's buffer
# names, in the engine's order (cpp_nn_describe()).
vae_buffers <- function(fit, net) {
  b <- fit$params[[paste0(net, "_buffers")]]
  if (!length(b)) return(list())
  desc <- cpp_nn_describe(fit[[paste0(net, "_spec")]])
  out <- split(as.double(b), factor(rep(desc$buffer, desc$buffer_size), levels = desc$buffer))
  nbt <- grepl("\\.num_batches_tracked$", names(out))
  out[nbt] <- lapply(out[nbt], round)
  out
}

# nn_torch_code() of a VAE: the two torch.nn.Sequential modules and encode() / decode() as vae_encode() / vae_decode().
vae_torch_code <- function(x, call) {
  enc <- nn_torch_modules(x$encoder_table, as.integer(x$input_shape), NULL, call)
  dec <- nn_torch_modules(x$decoder_table, as.integer(x$latent), NULL, call)
  L <- x$latent
  float64 <- isTRUE(x$settings$float64)
  img <- !is.null(x$image)
  code <- c(
    sprintf("# PyTorch modules of a scalebayes variational autoencoder (vae(): %d latent dimension%s, %s parameters);",
            L, if (L == 1L) "" else "s",
            format(length(x$params$encoder) + length(x$params$decoder), big.mark = ",")),
    "# generated by scalebayes::nn_torch_code().",
    sprintf("# encoder: [n, %s] -> [n, %d]: the means (columns 0..%d) and log-variances (columns %d..%d) of q(z | x).",
            paste(x$input_shape, collapse = ", "), 2L * L, L - 1L, L, 2L * L - 1L),
    sprintf("# decoder: z [n, %d] -> [n, %d] Bernoulli logits of the %d values of an example%s.", L, x$D, x$D,
            if (img) sprintf(" (row by row: reshape to [n, %d, %d])", x$image[1], x$image[2]) else ""),
    "# encode(x) gives the means and sds of q(z | x) (vae_encode()), decode(z) the probabilities (vae_decode()).",
    "# Load the state dicts written by scalebayes::nn_export(fit, c(\"encoder.pt\", \"decoder.pt\")):",
    "#   encoder.load_state_dict(torch.load(\"encoder.pt\")); decoder.load_state_dict(torch.load(\"decoder.pt\"))",
    "#   encoder.eval(); decoder.eval()",
    "import torch",
    "from torch import nn",
    "",
    "encoder = nn.Sequential(", enc$lines, ")",
    "decoder = nn.Sequential(", dec$lines, ")",
    if (float64) c("encoder = encoder.double()  # the fit was trained in double precision", "decoder = decoder.double()"),
    "",
    "",
    "def encode(x):",
    "    h = encoder(x)",
    sprintf("    return h[:, :%d], torch.exp(0.5 * h[:, %d:])", L, L),
    "",
    "",
    "def decode(z):",
    if (img) sprintf("    return torch.sigmoid(decoder(z)).reshape(-1, %d, %d)", x$image[1], x$image[2])
    else "    return torch.sigmoid(decoder(z))",
    "")
  structure(paste(code, collapse = "\n"), class = "sb_nn_torch_code")
}

# ---- the draws methods of a VAE ----------------------------------------------------------------------------------

#' Draws methods of a variational autoencoder
#'
#' A [vae()] fit (class `c("sb_vae", "sb_fit")`) approximates, for each example \eqn{x}, the posterior of its latent
#' code by \eqn{q(z \mid x) = N(m(x), \mathrm{diag}\, s(x)^2)}; its network weights are point estimates (fitted by
#' maximizing the ELBO), with no posterior. So:
#' * `as.matrix()` returns the latent means of the training data, \eqn{m(x_i)}, an n x latent matrix with columns
#'   `"z[1]"`, `"z[2]"`, ... (the points of `plot(fit, type = "latent")`; for other data [vae_encode()] gives the
#'   means and the sds).
#' * The draw generics of every fit ([sb_fit-methods]: `as_draws_df()`, `as_draws_matrix()`, `as_draws_array()`,
#'   and [posterior_interval()]) give draws of the latent codes of the training data: with `draws = T`, T draws
#'   \eqn{z_i \sim q(z \mid x_i)} for every example, as variables `"z[i,j]"` (example i, latent dimension j), one
#'   chain. Two arguments of their own, given by name: `draws` (default 1000) and `seed`, which they need for
#'   reproducible draws (`NULL`: R's RNG). Without `pars`, at most 100 examples (the first) are drawn: `pars`
#'   chooses the examples (indices).
#' * `ndraws()` is 1000, the number of draws those generics give by default.
#' * `coef()` is a classed error (`scalebayes_error_not_applicable`): a VAE has no regression coefficients, and
#'   its network weights, which [nn_export()] writes for PyTorch, are no posterior.
#'
#' @param x,object A [vae()] fit.
#' @param pars Latent dimensions (indices or names `"z[j]"`).
#' @param ... Not used: any argument given here is an error.
#' @return `as.matrix()`: an n x latent matrix.
#' @name sb_vae-methods
#' @examples
#' if (sb_torch_available()) {
#'   x <- matrix(rbinom(200 * 9, 1, 0.3), 200, 9)
#'   fit <- vae(x, encoder = nn_mlp(16), decoder = nn_mlp(16), epochs = 5, seed = 1, quiet = TRUE)
#'   head(as.matrix(fit))
#'   posterior::summarise_draws(as_draws_df(fit, pars = 1:2, draws = 500, seed = 1))
#' }
NULL

#' @rdname sb_vae-methods
#' @export
as.matrix.sb_vae <- function(x, pars = NULL, ...) {
  sb_check_dots(..., fn = "as.matrix")
  m <- x$latent_means
  colnames(m) <- paste0("z[", seq_len(ncol(m)), "]")
  select_pars(m, pars)
}

#' @rdname sb_vae-methods
#' @export
coef.sb_vae <- function(object, ...) {
  sb_not_applicable(c("A VAE has no regression coefficients, and its network weights are point estimates, not a posterior.",
                      i = "For the latent codes use {.fn as.matrix} (the training data's means), {.fn vae_encode} or {.fn as_draws_df}; {.fn nn_export} writes the networks."))
}

# The draws of sb_fit's draw generics (R/draws-methods.R): latent codes of training examples.
sb_draw_matrix.sb_vae <- function(x, pars, call, fn, draws = 1000L, seed = NULL, ...) {
  sb_check_dots(..., fn = fn, call = call)
  vae_latent_draws(x, pars, draws, seed, call)
}

# draws x (examples x latent) matrix of z_i ~ q(z | x_i) for the chosen training examples, columns "z[i,j]"
# (example-major), from the stored means and sds of the training data.
vae_latent_draws <- function(fit, pars, draws, seed, call) {
  draws <- check_count(draws, arg = "draws", call = call, max = 1e7)
  n <- nrow(fit$latent_means)
  if (is.null(pars)) {
    pars <- seq_len(min(n, 100L))
  } else if (!is.numeric(pars) || !length(pars) || anyNA(pars) || any(pars < 1 | pars > n) || any(pars != round(pars))) {
    sb_abort("{.arg pars} must be indices of training examples, between 1 and {n}.", arg = "pars", call = call)
  }
  pars <- as.integer(pars)
  sds <- fit$latent_sds
  if (is.null(sds)) {
    sb_abort(c("This fit does not store the sds of q(z | x) of its training data.",
               i = "Refit with this version of scalebayes, or draw from {.fn vae_encode}'s means and sds."),
             kind = "state", arg = "x", call = call)
  }
  L <- fit$latent
  check_result_memory(8 * as.double(draws) * length(pars) * L, "draws", call = call,
                      fix = "Use fewer {.arg draws} or fewer examples ({.arg pars}).")
  m <- as.vector(t(fit$latent_means[pars, , drop = FALSE]))  # example-major: (i, 1), (i, 2), ...
  s <- as.vector(t(sds[pars, , drop = FALSE]))
  seed <- resolve_seed(seed, call)
  eps <- withr::with_seed(as.integer(seed %% .Machine$integer.max), matrix(stats::rnorm(draws * length(m)), draws))
  z <- sweep(sweep(eps, 2L, s, "*"), 2L, m, "+")
  colnames(z) <- sprintf("z[%d,%d]", rep(pars, each = L), rep(seq_len(L), length(pars)))
  z
}
