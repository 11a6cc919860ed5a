# The gradient estimators vi_control(estimator = ) takes (the engine's names: nn/vi/variational.hpp).
vi_estimators <- c("local", "weights", "per_example")

# Settings of the variational methods (sparse_vi(), bbb()).

#' Settings of variational inference for networks
#'
#' The variational family is mean-field Gaussian on every weight and bias of the linear and convolution
#' layers, \eqn{\theta \sim N(\mu, \sigma^2)} with \eqn{\sigma = \log(1 + e^\rho)}, times an inclusion
#' \eqn{\gamma \sim} Bernoulli(\eqn{\phi}) for [sparse_vi()]'s spike-and-slab family. Batch-normalization
#' scales and shifts are point estimates. Training, optimizer and minibatches are set by [nn_control()].
#'
#' @param samples Monte-Carlo forward passes per minibatch (K of Bai et al.'s Algorithm 1). On a small network
#'   a pass costs per-operation overhead, so the K passes run as one pass over the minibatch repeated K times:
#'   with the `"local"` estimator each row draws its own noise; with `"weights"` K weight sets are drawn and
#'   each linear layer is a batched product (a network with a variational convolution loops). The
#'   `"per_example"` estimator, and a network with batch norm (whose batch statistics would see the copies),
#'   run the K passes one after another. On a 13-50-50-1 MLP, K = 8 costs 1.4 to 1.7 times K = 1 stacked
#'   (about 4 times looped).
#' @param tau Temperature of the Gumbel-softmax relaxation of \eqn{\gamma} ([sparse_vi()]): the forward pass
#'   uses the hard inclusion, which is exactly Bernoulli(\eqn{\phi}) for any `tau`; the gradient is that of
#'   the relaxed one (straight-through).
#' @param estimator How the expected log-likelihood gradient is estimated: `"local"` (the local
#'   reparameterization trick of Kingma et al. 2015: pre-activations sampled from their Gaussian
#'   distribution; exact for linear layers, for convolutions only each pre-activation's marginal is right),
#'   `"weights"` (one draw of every weight per minibatch, Blundell et al. 2015; the only choice for
#'   [sparse_vi()], whose pre-activations are not Gaussian) or `"per_example"` (an independent weight draw for
#'   every example; linear layers only; slow, for comparing estimators). `NULL`: `"local"` for [bbb()],
#'   `"weights"` for [sparse_vi()].
#' @param init_sigma Initial \eqn{\sigma} of every weight (default \eqn{\log(1 + e^{-6})}, Bai et al.'s).
#' @param init_phi Initial inclusion probability ([sparse_vi()]), in (0, 1).
#' @param init_mu `NULL`: the means start at the network's initialization ([nn_control()]'s `init`); a
#'   number b: uniform on (-b, b) (Bai et al.: 0.6).
#' @param prior_sd Standard deviation of the Gaussian prior ([bbb()]) or of the slab ([sparse_vi()]'s
#'   \eqn{\sigma_0}). `NULL`: 1 for [bbb()], 1.3 for [sparse_vi()] (Bai et al.'s code).
#' @param mixture Scale-mixture prior of [bbb()] (`prior = "scale_mixture"`): `c(pi, sd1, sd2)`, the prior
#'   \eqn{\pi N(0, s_1^2) + (1 - \pi) N(0, s_2^2)} (Blundell et al. 2015).
#' @param alpha_max Log-uniform prior of [bbb()] (`prior = "log_uniform"`, variational dropout): the dropout
#'   rate \eqn{\alpha = \sigma^2 / \mu^2} is capped at `alpha_max`. `Inf`: sparse variational dropout
#'   (Molchanov et al. 2017); 1: variational dropout as in Kingma et al. (2015).
#' @param bias_spike Spike-and-slab prior on the biases too ([sparse_vi()]; Bai et al.'s code: `TRUE`).
#'   `FALSE`: biases get the slab alone.
#' @param noise_sd Gaussian likelihood: the noise standard deviation, or `NULL` to estimate it (a point
#'   estimate that maximizes the ELBO).
#' @param kl_weight Multiplies the KL term of the negative ELBO (1: the ELBO; other values are tempered or
#'   "cold" posteriors, not the method).
#' @param kl_warmup Epochs of KL warm-up (0: none): epoch e weights the KL by \eqn{\min(1, e / }`kl_warmup`\eqn{)},
#'   as variational dropout is often started (Molchanov et al. 2017 also start from a pretrained network). It
#'   changes the path, not the optimum: with the log-uniform prior the KL, whose size does not grow with n,
#'   competes with a log-likelihood that does, and on small data the ELBO's optimum is a nearly empty network.
#'   Measured on 1,000 MNIST digits with a 784-100-100-10 network (10 epochs): accuracy at chance with or without a
#'   5-epoch warm-up; with `kl_weight = 0.01` (the KL's weight at n = 100,000) 84% with 30% of the weights kept.
#'   The trace's negative ELBO always uses the full KL.
#' @param ... Nothing: a name that is not one of the settings above is an error that names it and the closest
#'   setting.
#' @return A list of class `sb_vi_control`.
#' @seealso [sparse_vi()], [bbb()], [nn_control()].
#' @export
#' @examples
#' vi_control(samples = 2, init_mu = 0.6)
vi_control <- function(samples = 1L, tau = 0.5, estimator = NULL, init_sigma = log1p(exp(-6)), init_phi = 0.99,
                       init_mu = NULL, prior_sd = NULL, mixture = c(0.5, 1, exp(-6)), alpha_max = Inf,
                       bias_spike = TRUE, noise_sd = NULL, kl_weight = 1, kl_warmup = 0, ...) {
  check_unknown_args(...names(), ...length(), "vi_control")
  if (!is.null(estimator)) estimator <- sb_match_arg(estimator, vi_estimators)
  if (!is.numeric(mixture) || length(mixture) != 3L || anyNA(mixture) || !(mixture[1] > 0 && mixture[1] < 1) ||
      any(mixture[2:3] <= 0) || any(!is.finite(mixture))) {
    sb_abort(c("{.arg mixture} must be {.code c(pi, sd1, sd2)} with pi in (0, 1) and positive finite sds.",
               x = "You supplied {.val {format(mixture)}}."), arg = "mixture")
  }
  if (!is.numeric(alpha_max) || length(alpha_max) != 1L || is.na(alpha_max) || alpha_max <= 0) {
    sb_abort(c("{.arg alpha_max} must be a positive number (or {.code Inf}).", x = "You supplied {.val {format(alpha_max)}}."),
             arg = "alpha_max")
  }
  structure(list(
    samples = check_count(samples, max = 1000L, arg = "samples"),
    tau = check_number(tau, lower = 0, upper = 1e6, lower_open = TRUE, arg = "tau"),
    estimator = estimator,
    init_sigma = check_number(init_sigma, lower = 0, upper = 1e3, lower_open = TRUE, arg = "init_sigma"),
    init_phi = check_number(init_phi, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE, arg = "init_phi"),
    init_mu = if (!is.null(init_mu)) check_number(init_mu, lower = 0, upper = 1e3, lower_open = TRUE, arg = "init_mu"),
    prior_sd = if (!is.null(prior_sd)) check_number(prior_sd, lower = 0, upper = 1e6, lower_open = TRUE, arg = "prior_sd"),
    mixture = stats::setNames(as.double(mixture), c("pi", "sd1", "sd2")),
    alpha_max = as.double(alpha_max),
    bias_spike = check_flag(bias_spike, arg = "bias_spike"),
    noise_sd = if (!is.null(noise_sd)) check_number(noise_sd, lower = 0, upper = 1e12, lower_open = TRUE, arg = "noise_sd"),
    kl_weight = check_number(kl_weight, lower = 0, upper = 1e6, arg = "kl_weight"),
    kl_warmup = check_number(kl_warmup, lower = 0, upper = 1e7, arg = "kl_warmup")
  ), class = "sb_vi_control")
}

#' @export
print.sb_vi_control <- function(x, ...) {
  cat("<sb_vi_control> K =", x$samples, "| estimator", x$estimator %||% "(method default)", "| tau", format(x$tau),
      "| init sigma", format(x$init_sigma, digits = 3), "phi", format(x$init_phi), "| noise sd",
      if (is.null(x$noise_sd)) "estimated" else format(x$noise_sd), "\n")
  invisible(x)
}
