# Variational inference for networks: sparse_vi() (Bai, Song & Cheng 2020) and bbb() (Bayes by Backprop,
# variational dropout, pruning). Both are thin wrappers over vi_run(): the engine (nn/vi/) minimizes the negative
# ELBO with the one training loop of every network method, and the fit is built by new_sb_nn_fit().

#' Spike-and-slab variational inference for sparse networks
#'
#' Bai, Song & Cheng (2020), Algorithm 1. Every weight (and, with `vi_control(bias_spike = TRUE)`, every
#' bias) of the linear and convolution layers has the spike-and-slab prior \eqn{\lambda N(0, \sigma_0^2) +
#' (1 - \lambda) \delta_0} and the variational family \eqn{\gamma N(\mu, \sigma^2)}, \eqn{\gamma \sim}
#' Bernoulli(\eqn{\phi}). The negative ELBO, with the closed-form KL per weight
#' \deqn{\phi \log\frac{\phi}{\lambda} + (1-\phi)\log\frac{1-\phi}{1-\lambda} + \phi\left[\log\frac{\sigma_0}{\sigma} + \frac{\sigma^2 + \mu^2}{2\sigma_0^2} - \frac12\right],}{phi log(phi/lambda) + (1-phi) log((1-phi)/(1-lambda)) + phi [log(sigma0/sigma) + (sigma^2+mu^2)/(2 sigma0^2) - 1/2],}
#' is minimized by minibatch steps of [nn_control()]'s optimizer, the KL weighted by m / n for a minibatch of
#' m of the n examples, the inclusions sampled by the hard Gumbel-softmax with the straight-through gradient
#' (`vi_control(tau = )`). A weight is selected when \eqn{\phi > 0.5}.
#'
#' @inheritParams wbb_nn
#' @param lambda Prior inclusion probability, in (0, 1]: `NULL` (default) uses the paper's
#'   \eqn{\lambda_{opt} = \exp(-\{\log T + \delta[(L+1)\log N + \log(\sqrt{n} p)]\})} with T the number of
#'   variational parameters (weights and biases), L the hidden layers, N the widest hidden layer, n the
#'   examples and p the inputs. 1 fixes \eqn{\phi = 1}: a dense Bayesian network with the slab as its Gaussian
#'   prior. A vector gives one fit each (run in parallel, each with its own random stream): a list of fits.
#'   \eqn{\lambda_{opt}} is a prior expecting less than one nonzero weight: every weight q keeps costs at least
#'   \eqn{-\log\lambda} nats, and on small data the ELBO's optimum is a very sparse network. Measured on 2,000
#'   MNIST digits with the default [nn_mlp()] (log \eqn{\lambda_{opt}} = -14.1; accuracy on 1,000 further digits,
#'   `bench/sparse_vi_mnist_defaults.R`): 54-62 of 109,184 weights kept and 0.76-0.80 (seeds 1-3) after the
#'   default 100 epochs, 37 and 0.63 after 300; `log_lambda = -2.5` (\eqn{\lambda_{opt}} without its
#'   \eqn{\log T}) 0.89-0.90 with a diffuse q (about 5,000 weights in a draw, 190 with \eqn{\phi > 0.5});
#'   `lambda = 1` 0.872 / 0.898 / 0.883. [bbb()]'s 0.913-0.925 with its own defaults is a q far from the ELBO's
#'   optimum (Adam 1e-3 for 100 epochs leaves the KL at 176,000 nats, sigma at a tenth of the prior's): at
#'   Adam 5e-3 or after 300 epochs it scores 0.867-0.871, as `lambda = 1` does (`bench/sparse_vi_dense_vs_bbb.R`;
#'   `lambda = 1` is `bbb()` with `vi_control(estimator = "weights", prior_sd = 1.3)` and Adam 5e-3).
#' @param log_lambda The same on the log scale (for values below double precision's range, e.g. -460 on the
#'   Figure 1 grid); give `lambda` or `log_lambda`.
#' @param delta The constant of \eqn{\lambda_{opt}} (Bai et al.'s code: 0.1).
#' @param draws Draws of q kept (their parameters and predictions on `newx`): the posterior sample every
#'   generic works on.
#' @param control [nn_control()]: optimizer, learning rate, epochs, minibatch size. The default learning rate
#'   of [sparse_vi()] is Bai et al.'s 5e-3 (the inclusion logits start at logit(0.99) = 4.6 and must travel).
#'   Settings of the weighted bootstrap (`weight_dist`, `weight_mode`, `normalize_weights`, `grad_tol`) are
#'   errors.
#' @param vi [vi_control()].
#' @param batch Not used: a variational fit trains one network, so it has no batched draws (the meaning of
#'   `batch` in [wbb_nn()] and [sgld_sa()]); giving it is an error that points to `batch_size`, the minibatch size.
#' @param standardize Fit q on standardized data (default `TRUE`), as [wbb_nn()] trains (see its section
#'   "Standardization"): inputs centred and scaled to unit sd per column (images: one mean and sd over all
#'   pixels), a gaussian response centred and scaled (per column for a matrix `y`). The prior (the slab sd or
#'   prior sd, the inclusion probability, the mixture or log-uniform prior), the learning rate, q itself
#'   (`variational`, the draws, `weights_mean`, [coef()]) and the `trace` (negative ELBO, NLL, KL) are those of
#'   the standardized problem; the predictions (`pred`, `pred_mean`, `pred_mean_q`, [predict()] on new raw
#'   inputs through the stored `fit$scaling`), the test RMSE (also in `pruning`) and the noise sd `noise_sd` (one
#'   per output for a matrix `y`) are on the user's scale, and so is a fixed `vi_control(noise_sd = )`.
#'   [nn_export()] folds the transform into the exported network. `FALSE`: the data as given.
#' @section Band coverage:
#' On a simulated regression with a known 1-hidden-layer tanh network as f (2 inputs, noise sd 0.3, 300 training
#' and 200 test rows, an `nn_mlp(8)` fit of 1,000 epochs, 5 seeds; `bench/nn_coverage.R`,
#' `vignette("variational")` section 4), `sparse_vi()`'s 90 % bands covered the true f at 0.38 of the test inputs and
#' its 90 % predictive intervals covered new y at 0.90 (averages over the seeds): the predictive interval holds its level through the learned noise sd while the band of f is too narrow for a fit whose error in f (RMSE 0.39) is larger than the other methods'.
#' @return A network fit of class `c("sb_vi_nn", "sb_nn_fit", "sb_fit")` (see [sb_nn_fit-methods]) with, beside
#'   the common fields, `variational` (a data frame of `mu`, `sigma`, `phi` per parameter), `inclusion` (the
#'   \eqn{\phi} of every weight), `trace` (per epoch: negative ELBO, negative log-likelihood and KL on the sum
#'   scale, share of weights kept, training accuracy, noise sd), `description_length` (the KL in bits and per
#'   weight), `lambda`, `noise_sd`; `weights_mean` is the mean of q (\eqn{\phi\mu}). A vector `lambda` gives
#'   an `sb_vi_grid`: a list of such fits, one per value, with the generics of a path (see [sb_vi_grid-methods]).
#' @references Bai, J., Song, Q. and Cheng, G. (2020). Efficient variational inference for sparse deep learning
#'   with theoretical guarantee. *NeurIPS 33*.
#' @seealso [bbb()], [vi_control()], [sparse_vi_sim()].
#' @export
#' @examples
#' if (sb_torch_available()) {
#'   set.seed(1)
#'   x <- matrix(runif(400 * 10, -1, 1), 400, 10)
#'   y <- 2 * x[, 1] - x[, 2] + rnorm(400, sd = 0.3)
#'   fit <- sparse_vi(x, y, model = nn_mlp(8), epochs = 30, draws = 20, seed = 1,
#'                    control = nn_control(lr = 5e-3))
#'   fit
#'   predict(fit, x[1:5, ])  # posterior mean (fit), sd (se) and 95% interval (lower, upper)
#' }
sparse_vi <- function(x, y, model = nn_mlp(), family = NULL, lambda = NULL, log_lambda = NULL, delta = 0.1,
                      draws = 100L, newx = NULL, newy = NULL, keep_draws = TRUE, epochs = NULL, batch_size = NULL,
                      device = "cpu", threads = NULL, seed = NULL, quiet = NULL, control = nn_control(lr = 5e-3),
                      vi = vi_control(), standardize = TRUE, data = NULL, subset = NULL, na.action = NULL, contrasts = NULL,
                      batch = NULL) {
  vi_no_batch(batch, "sparse_vi")
  if (!missing(x) && sb_is_formula(x)) {
    return(sb_formula_fit(environment(), "sparse_vi", sparse_vi, match.call(), intercept = "none",
                          response = "network"))
  }
  sb_formula_only(environment())
  call <- rlang::current_env()
  if (!is.null(lambda) && !is.null(log_lambda)) {
    sb_abort("Give {.arg lambda} or {.arg log_lambda}, not both.", arg = "lambda", call = call)
  }
  if (!is.null(lambda)) {
    if (!is.numeric(lambda) || !length(lambda) || anyNA(lambda) || any(lambda <= 0 | lambda > 1)) {
      sb_abort(c("{.arg lambda} must be prior inclusion probabilities in (0, 1].",
                 x = "You supplied {.val {format(lambda)}}.",
                 i = "For values below 1e-300 use {.arg log_lambda}."), arg = "lambda", call = call)
    }
    log_lambda <- log(lambda)
  } else if (!is.null(log_lambda)) {
    if (!is.numeric(log_lambda) || !length(log_lambda) || anyNA(log_lambda) || any(log_lambda > 0) ||
        any(!is.finite(log_lambda))) {
      sb_abort(c("{.arg log_lambda} must be finite numbers at most 0.", x = "You supplied {.val {format(log_lambda)}}."),
               arg = "log_lambda", call = call)
    }
  }
  delta <- check_number(delta, lower = 0, upper = 100, arg = "delta", call = call)
  if (!inherits(vi, "sb_vi_control")) {
    sb_abort(c("{.arg vi} must be made by {.fn vi_control}.", x = "You supplied {.obj_type_friendly {vi}}."),
             arg = "vi", call = call)
  }
  if (identical(vi$estimator, "local") || identical(vi$estimator, "per_example")) {
    sb_abort(c("{.code estimator = \"{vi$estimator}\"} needs Gaussian pre-activations; spike-and-slab q does not have them.",
               i = "Use {.code vi_control(estimator = \"weights\")} (the default of {.fn sparse_vi})."),
             arg = "vi", call = call)
  }
  vi$estimator <- "weights"
  vi$prior_sd <- vi$prior_sd %||% 1.3
  vi_run("sparse_vi", "spike_slab", mcall = match.call(), call = call, x = x, y = y, model = model, family = family,
         log_lambda = log_lambda, delta = delta, draws = draws, newx = newx, newy = newy, keep_draws = keep_draws,
         epochs = epochs, batch_size = batch_size, device = device, threads = threads, seed = seed, quiet = quiet,
         control = control, vi = vi, standardize = standardize)
}

#' Bayes by Backprop, variational dropout and pruning
#'
#' Mean-field Gaussian variational inference for a network (Blundell et al. 2015), by default with the local
#' reparameterization trick (Kingma, Salimans & Welling 2015; `vi_control(estimator = )`), the prior
#' `"gaussian"` \eqn{N(0, s^2)} (`vi_control(prior_sd = )`), `"scale_mixture"` (Blundell et al.;
#' `vi_control(mixture = )`, KL by Monte Carlo) or `"log_uniform"` (variational dropout with a learned
#' \eqn{\alpha = \sigma^2/\mu^2} per weight: sparse variational dropout, Molchanov et al. 2017, or with
#' `vi_control(alpha_max = 1)` Kingma et al.'s). With `prune`, the weights whose signal-to-noise ratio
#' \eqn{|\mu|/\sigma} is below `prune` (log-uniform prior: whose \eqn{\log\alpha} is above `prune`, 3 in
#' Molchanov et al.) leave q, and the rest is trained for `retrain_epochs` more epochs (Graves 2011; the
#' tutorial's Table 2).
#'
#' @inheritParams sparse_vi
#' @param prior `"gaussian"`, `"scale_mixture"` or `"log_uniform"`.
#' @param prune `NULL` (no pruning) or the threshold described above.
#' @param retrain_epochs Epochs of training after pruning.
#' @section Band coverage:
#' On a simulated regression with a known 1-hidden-layer tanh network as f (2 inputs, noise sd 0.3, 300 training
#' and 200 test rows, an `nn_mlp(8)` fit of 1,000 epochs, 5 seeds; `bench/nn_coverage.R`,
#' `vignette("variational")` section 4), `bbb()`'s 90 % bands covered the true f at 0.65 of the test inputs and
#' its 90 % predictive intervals covered new y at 0.90 (averages over the seeds): the band of f is too narrow, as mean-field Gaussian q is known to be.
#' @return As [sparse_vi()]: class `c("sb_vi_nn", "sb_nn_fit", "sb_fit")`; with `prune`, also `pruning` (weights
#'   kept, their share, and the test error of the mean of q before pruning, after pruning and after retraining
#'   when `newy` was given).
#' @references Blundell, C., Cornebise, J., Kavukcuoglu, K. and Wierstra, D. (2015). Weight uncertainty in
#'   neural networks. *ICML*. Kingma, D. P., Salimans, T. and Welling, M. (2015). Variational dropout and the
#'   local reparameterization trick. *NeurIPS*. Molchanov, D., Ashukha, A. and Vetrov, D. (2017). Variational
#'   dropout sparsifies deep neural networks. *ICML*.
#' @seealso [sparse_vi()], [vi_control()].
#' @export
#' @examples
#' if (sb_torch_available()) {
#'   set.seed(1)
#'   x <- matrix(rnorm(300 * 4), 300, 4)
#'   y <- factor(ifelse(x[, 1] + x[, 2] > 0, "a", "b"))
#'   fit <- bbb(x, y, model = nn_mlp(16), epochs = 20, draws = 20, newx = x, newy = y, seed = 1)
#'   fit
#' }
bbb <- function(x, y, model = nn_mlp(), family = NULL, prior = c("gaussian", "scale_mixture", "log_uniform"),
                prune = NULL, retrain_epochs = 0L, draws = 100L, newx = NULL, newy = NULL, keep_draws = TRUE,
                epochs = NULL, batch_size = NULL, device = "cpu", threads = NULL, seed = NULL, quiet = NULL,
                control = nn_control(), vi = vi_control(), standardize = TRUE, data = NULL, subset = NULL, na.action = NULL, contrasts = NULL,
                batch = NULL) {
  vi_no_batch(batch, "bbb")
  if (!missing(x) && sb_is_formula(x)) {
    return(sb_formula_fit(environment(), "bbb", bbb, match.call(), intercept = "none", response = "network"))
  }
  sb_formula_only(environment())
  call <- rlang::current_env()
  prior <- sb_match_arg(prior)
  if (!inherits(vi, "sb_vi_control")) {
    sb_abort(c("{.arg vi} must be made by {.fn vi_control}.", x = "You supplied {.obj_type_friendly {vi}}."),
             arg = "vi", call = call)
  }
  if (!is.null(prune)) prune <- check_number(prune, lower = -1e6, upper = 1e6, arg = "prune", call = call)
  retrain_epochs <- check_count(retrain_epochs, min = 0L, max = 1e7, arg = "retrain_epochs", call = call)
  if (retrain_epochs > 0 && is.null(prune)) {
    sb_abort(c("{.arg retrain_epochs} retrains after pruning, and {.arg prune} is {.code NULL}.",
               i = "Give a pruning threshold, e.g. {.code prune = 1}, or drop {.arg retrain_epochs}."),
             arg = "retrain_epochs", call = call)
  }
  vi$estimator <- vi$estimator %||% "local"
  vi$prior_sd <- vi$prior_sd %||% 1
  vi_run("bbb", prior, mcall = match.call(), call = call, x = x, y = y, model = model, family = family,
         log_lambda = 0, delta = 0, draws = draws, newx = newx, newy = newy, keep_draws = keep_draws,
         epochs = epochs, batch_size = batch_size, device = device, threads = threads, seed = seed, quiet = quiet,
         control = control, vi = vi, prune = prune, retrain_epochs = retrain_epochs, standardize = standardize)
}

# nn_control() settings that belong to the weighted bootstrap: an error in a variational method.
vi_check_control <- function(control, call) {
  check_nn_control(control, call)
  wbb_only <- c(weight_dist = control$weight_dist != "exponential", normalize_weights = isTRUE(control$normalize_weights),
                weight_mode = control$weight_mode != "example", grad_tol = control$grad_tol > 0)
  if (any(wbb_only)) {
    bad <- names(wbb_only)[wbb_only]
    sb_abort(c("{.code nn_control({bad[1]} = )} is a setting of the weighted bootstrap ({.fn wbb_nn}), not of variational inference.",
               i = "Leave it at its default in {.fn nn_control}."), arg = "control", call = call)
  }
  control
}

# The paper's lambda_opt (Bai et al. 2020, Theorem 4.1's rate): log lambda = -(log T + delta ((L + 1) log N +
# log(sqrt(n) p))) with T the variational parameters, L the hidden parameter layers, N the widest of them (the
# paper's networks have equal widths), n the examples, p the inputs.
vi_log_lambda_opt <- function(tab, input, n, delta) {
  pl <- tab[tab$params > 0 & nn_kind_is(tab$kind, "variational"), , drop = FALSE]
  T <- sum(pl$params)
  L <- nrow(pl) - 1L
  N <- if (L > 0) max(pl$out[seq_len(L)]) else 1

  -(log(T) + delta * ((L + 1) * log(N) + log(sqrt(n) * prod(input))))
}

# The network pipeline (R/nn_pipeline.R) for both variational methods: one engine call fits q for every lambda
# (sparse_vi()'s grid; bbb(): one), and each becomes a fit (vi_decode_fit()); a grid is an sb_vi_grid.
vi_run <- function(method, prior, mcall, call, x, y, model, family, log_lambda, delta, draws, newx, newy, keep_draws,
                   epochs, batch_size, device, threads, seed, quiet, control, vi, prune = NULL, retrain_epochs = 0L,
                   standardize = TRUE) {
  ctx <- nn_start(model, family, device, call, mcall)
  control <- nn_control_args(vi_check_control(control, call), epochs, batch_size, call)
  draws <- check_count(draws, max = 1e6, arg = "draws", call = call)
  keep_draws <- check_flag(keep_draws, arg = "keep_draws", call = call)
  rs <- run_settings(seed, threads, quiet, call = call)
  held <- nn_validation_take(rlang::current_env(), control, rs$seed, call)  # nn_control(validation = )
  p <- nn_prepare(ctx, x, y, newx, newy, standardize, control$batch_size, in_control = TRUE,
                  init = control$init, units = as.double(draws) * max(1L, length(log_lambda)),
                  keep_draws = keep_draws)
  control$batch_size <- p$batch_size
  if (method == "sparse_vi" && is.null(log_lambda)) log_lambda <- vi_log_lambda_opt(p$tab, p$xd$shape, p$xd$n, delta)
  other <- unique(p$tab$kind[nn_kind_is(p$tab$kind, "variational") & p$tab$kind != "linear"])
  if (vi$estimator == "per_example" && length(other)) {  # (the engine's rule: nn/vi/variational.hpp)
    sb_abort(c("{.code estimator = \"per_example\"} is for linear layers; this network has {.val {other}} layers.",
               i = "Use {.code \"local\"} or {.code \"weights\"}."), arg = "vi", call = call)
  }
  label <- switch(method, sparse_vi = "Sparse VI", bbb = "Bayes by Backprop")
  vctl <- list(prior = prior,  # prior and estimator by name (nn/vi/variational.hpp's tables)
               estimator = vi$estimator, samples = vi$samples,
               tau = vi$tau, prior_sd = vi$prior_sd, mix_pi = vi$mixture[[1]], mix_sd1 = vi$mixture[[2]],
               mix_sd2 = vi$mixture[[3]], alpha_max = vi$alpha_max, bias_spike = vi$bias_spike,
               init_sigma = vi$init_sigma, init_phi = vi$init_phi, init_mu = vi$init_mu %||% 0,
               noise_sd = nn_scale_sigma_arg(vi$noise_sd, p$scaling, "vi_control(noise_sd = )", call) %||% 0,
               kl_weight = vi$kl_weight, kl_warmup = vi$kl_warmup %||% 0, log_lambda = as.double(log_lambda),
               draws = as.double(draws), prune = if (is.null(prune)) NA_real_ else prune,
               retrain_epochs = as.double(retrain_epochs), keep_draws = keep_draws, label = label)
  nd <- p$nd
  res <- sb_call_engine(cpp_nn_vi(p$spec, p$xd$x, p$xd$dim, p$yd$y, if (is.null(nd)) double() else nd$x,
                                  if (is.null(nd)) integer() else nd$dim,
                                  nn_validation_engine(nn_engine_control(control, ctx$device, keep_draws), p, held, call),
                                  vctl, engine_run(rs)), call = call)
  status <- nn_decode_status(res$status)
  if (all(status == "diverged")) nn_abort_diverged("The variational fit diverged", p$standardize, call)
  a <- list(method = method, label = label, prior = prior, vi = vi, control = control, draws = draws,
            keep_draws = keep_draws, log_lambda = log_lambda, prune = prune, retrain_epochs = retrain_epochs, run = rs,
            held = held)
  out <- lapply(seq_along(log_lambda), function(i) vi_decode_fit(i, status[i], res, ctx, p, a))
  if (isTRUE(res$interrupted)) {
    sb_warn(c("Interrupted: the fit holds the state q reached (epochs done: {paste(res$epochs, collapse = ', ')}).",
              i = "Its draws are draws of that q."), kind = "interrupted")
  }
  if (any(status == "diverged") && length(out) > 1) {
    sb_warn("{sum(status == 'diverged')} of {length(out)} fits diverged.", kind = "convergence")
  }
  if (length(out) == 1L) return(out[[1L]])
  structure(out, class = "sb_vi_grid", lambda = exp(log_lambda), log_lambda = log_lambda)
}

# Fit i of a variational run (status `st`): its slices of the engine's per-fit results -- kept draws, predictions,
# the (epoch, -ELBO, NLL, KL, kept, noise) trace, q's mean, sd and inclusion probability, the pruning stages --
# decoded into an sb_vi_nn fit. `a`: vi_run()'s method settings.
vi_decode_fit <- function(i, st, res, ctx, p, a) {
  desc <- p$desc; P <- desc$n_parameters; B <- sum(desc$buffer_size); nd <- p$nd; n_out <- p$n_out
  family <- p$family; sc <- p$scaling; draws <- a$draws; vi <- a$vi; control <- a$control
  m <- if (is.null(nd)) 0L else nd$n * n_out
  sl <- function(v, n, k) if (length(v)) v[(k - 1) * n + seq_len(n)] else v
  part <- function(v, n) if (is.raw(v)) v[((i - 1) * n * draws * 4) + seq_len(n * draws * 4)] else sl(v, n * draws, i)
  draw_status <- factor(rep(if (st == "diverged") "diverged" else "done", draws), levels = nn_status_levels)
  if (st == "not run") draw_status[] <- "not run"
  store <- if (a$keep_draws) nn_decode_store(part(res$params, P), if (B > 0) part(res$buffers, B), desc, draws)
  pred <- pred_mean <- NULL
  shape_q <- function(v) nn_unscale_pred(vi_shape_pred(v, nd$n, n_out, family, p$yd$levels), sc)  # one network's
  if (m > 0) {
    pred <- nn_decode_pred(sl(res$pred, m * draws, i), n_out, nd$n, draws, family, p$yd$levels, sc)
    okd <- draw_status == "done"
    pred_mean <- if (any(okd)) nn_pred_mean(pred, okd)
  }
  ep <- res$epochs[i]
  tr <- matrix(sl(res$trace, res$trace_rows * 6, i), ncol = 6L, byrow = TRUE)[seq_len(ep), , drop = FALSE]
  acc <- sl(res$accuracy, res$trace_rows, i)[seq_len(ep)]
  trace <- data.frame(epoch = tr[, 1], neg_elbo = tr[, 2], nll = tr[, 3], kl = tr[, 4], kept = tr[, 5],
                      accuracy = acc, noise_sd = tr[, 6])
  mu <- sl(res$mu, P, i); sg <- sl(res$sigma, P, i); ph <- sl(res$phi, P, i); mk <- sl(res$mask, P, i)
  # the weight tensors of q (not batch norm's): groups are "layer<i>_<kind>.<tensor>"
  w_group <- grepl("\\.weight$", desc$group) & nn_kind_is(sub("^layer[0-9]+_(.*)\\.[a-z_]+$", "\\1", desc$group), "variational")
  is_weight <- rep(w_group, desc$size)
  kl_last <- if (ep > 0) tr[ep, 4] else NA_real_
  dl <- c(kl_bits = kl_last / log(2), bits_per_weight = kl_last / log(2) / max(1, sum(mk > 0 & sg > 0)),
          weights = sum(sg > 0))
  noise <- if (family == "gaussian" && ep > 0) tr[ep, 6] else NA_real_
  if (!is.null(sc$y_scale)) {  # the noise sd on the user's scale (one per output when q > 1 were scaled separately)
    noise <- noise * sc$y_scale
    trace$noise_sd <- nn_unscale_sigma(trace$noise_sd, sc)
  }
  lam <- exp(a$log_lambda[i])
  details <- c(
    switch(a$method,
           sparse_vi = sprintf("spike-and-slab q, lambda %s (log %.4g), slab sd %.3g, tau %.3g, K %d, %s estimator",
                               format(lam, digits = 3), a$log_lambda[i], vi$prior_sd, vi$tau, vi$samples, vi$estimator),
           bbb = sprintf("Gaussian q, %s prior%s, K %d, %s estimator", a$prior,
                         switch(a$prior, gaussian = sprintf(" (sd %.3g)", vi$prior_sd),
                                scale_mixture = sprintf(" (pi %.3g, sds %.3g, %.3g)", vi$mixture[1], vi$mixture[2], vi$mixture[3]),
                                log_uniform = if (is.finite(vi$alpha_max)) sprintf(" (alpha <= %.3g)", vi$alpha_max) else " (sparse VD)"),
                         vi$samples, vi$estimator)),
    sprintf("%s lr %.3g, %d epochs%s, batch %d; weights kept by q: %s of %s (%.1f%%); KL %.4g bits (%.3g per weight)",
            control$optimizer, control$lr, control$epochs,
            if (!is.null(a$prune)) sprintf(" + %d retraining after pruning at %.3g", a$retrain_epochs, a$prune) else "",
            control$batch_size,
            format(sum(is_weight & mk > 0 & (ph > 0.5)), big.mark = ","), format(sum(is_weight), big.mark = ","),
            100 * mean((mk > 0 & ph > 0.5)[is_weight]), dl[["kl_bits"]], dl[["bits_per_weight"]]),
    if (family == "gaussian") sprintf("noise sd %s%s", paste(sprintf("%.4g", noise), collapse = "/"),
                                      if (is.null(vi$noise_sd)) " (estimated)" else " (fixed)")
  )
  fit <- nn_build(ctx, p, "sb_vi_nn", a$label, a$run, device = res$device,
    settings = list(draws = draws, control = control, vi = vi, prior = a$prior, keep_draws = a$keep_draws,
                    prune = a$prune, retrain_epochs = a$retrain_epochs),
    weights = store$weights, buffers = store$buffers, status = draw_status, pred = pred, pred_mean = pred_mean,
    details = details, training = data.frame(fit = rep(i, ep), epoch = tr[, 1], loss = tr[, 2] / p$xd$n, accuracy = acc),
    float64 = isTRUE(control$float64), weights_mean = mu * ph * (mk > 0),
    variational = nn_lazy_names(data.frame(mu = mu, sigma = sg, phi = ph, kept = mk > 0), rep(TRUE, length(desc$size))),
    inclusion = nn_lazy_names(ph[is_weight], w_group), trace = trace, description_length = dl, lambda = lam,
    log_lambda = a$log_lambda[i], noise_sd = noise, fit_status = as.character(st), steps = res$steps[i],
    interrupted = isTRUE(res$interrupted) && st != "done",
    pred_mean_q = if (m > 0) shape_q(sl(res$pred_mean_q, m, i)))
  if (!is.null(a$held)) {  # nn_control(validation = ): the held-out loss per epoch, the best epoch
    h <- matrix(sl(res$val_history, res$trace_rows * 2, i), ncol = 2L, byrow = TRUE)
    e <- fit$training$epoch
    fit$training$val_loss <- h[e, 1L]
    fit$training$val_accuracy <- h[e, 2L]
    fit$validation <- list(rows = a$held$rows, n = NROW(a$held$y), patience = control$patience, best_epoch = res$best_epoch[i])
  }
  if (!is.null(a$prune) && st != "not run") {
    stages <- sl(res$pred_stages, 2 * m, i)
    newy <- p$newy_d$y
    err <- function(v) if (is.null(newy) || m == 0) NA_real_ else vi_error(shape_q(v), newy, family)
    kept_w <- sum(is_weight & mk > 0)
    fit$pruning <- data.frame(threshold = a$prune, weights = sum(is_weight), kept = kept_w,
                              percent = 100 * kept_w / sum(is_weight),
                              error_before = if (m > 0) err(stages[seq_len(m)]) else NA_real_,
                              error_pruned = if (m > 0) err(stages[m + seq_len(m)]) else NA_real_,
                              error_retrained = if (a$retrain_epochs > 0 && !is.null(fit$pred_mean_q)) vi_error(fit$pred_mean_q, newy, family) else NA_real_,
                              retrain_epochs = a$retrain_epochs)
  }
  fit
}

# Response-scale predictions of one network (examples x outputs from the engine's row-major block).
vi_shape_pred <- function(v, n, n_out, family, levels) {
  if (n_out == 1L) return(v)
  p <- matrix(v, n, n_out, byrow = TRUE)
  if (family == "multinomial") colnames(p) <- levels
  p
}

# Test error of one network's predictions: RMSE (gaussian) or 1 - accuracy.
vi_error <- function(p, y, family) {
  if (family == "gaussian") return(sqrt(mean((p - y)^2)))
  1 - mean(nn_class(p, family) == y)
}

# `batch` means batched draws (wbb_nn(), sgld_sa(): several networks trained at once); a VI fit trains one network,
# so it has none. Before it was no argument here and `batch = 16` partially matched `batch_size` (issue 61).
vi_no_batch <- function(batch, name, call = rlang::caller_env()) {
  if (is.null(batch)) return(invisible(NULL))
  sb_abort(c("{.fn {name}} has no {.arg batch}: in {.fn wbb_nn} and {.fn sgld_sa} it means draws trained together, and a variational fit trains one network.",
             i = if (is.numeric(batch) && length(batch) == 1L) "For minibatches of {batch} examples give {.code batch_size = {batch}}." else "For the minibatch size give {.arg batch_size}."),
           arg = "batch", call = call)
}
