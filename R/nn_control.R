# Training settings of the neural-network functions.

#' Training settings for neural networks
#'
#' Each weighted fit of [wbb_nn()] minimizes \eqn{F(\theta) = \sum_i w_i l_i(\theta) + \lambda \sum_g
#' w_{0g} \|W_g\|^2} by minibatch stochastic gradient descent from its own random initialization. A
#' minibatch \eqn{B} estimates \eqn{F/n} without bias by \eqn{|B|^{-1} \sum_{i \in B} w_i l_i + (\lambda/n)
#' \sum_g w_{0g}\|W_g\|^2}: the same minimizer as \eqn{F}, with `lr` on the usual mean-loss scale.
#'
#' @param optimizer `"adam"`, `"sgd"` (with `momentum`) or `"rmsprop"` (with `alpha` and `eps`; no momentum,
#'   not centered: PyTorch's defaults).
#' @param lr Learning rate.
#' @param epochs Passes over the data (each a fresh random order).
#' @param batch_size Minibatch size (the last batch of an epoch may be smaller). `NULL` (the default):
#'   `min(50, n)` for `n` training examples. A given size larger than `n` is an error. With a batch-norm
#'   layer, a last minibatch of one example is merged into the one before it (training mode needs two).
#' @param max_steps If given, exactly this many optimizer steps (overrides `epochs`).
#' @param grad_tol If positive, stop early once the full-data gradient norm of \eqn{F/n}, checked after
#'   every epoch, is below it; the final gradient norm of every fit is then reported.
#' @param certify Evaluate \eqn{F} and the full-data gradient norm of \eqn{F/n} at the end of every fit (one
#'   extra forward and backward pass over the data), reported per draw as `objective` and `grad_norm`: how
#'   far each draw is from a stationary point. `FALSE` skips the pass (both are then `NA`). The pass costs
#'   one to two training epochs (measured: 6.5 s against 4.0 s per epoch for the 2-Conv-2-FC network on
#'   10,000 images, most of it page faults on fresh activation memory), negligible for runs of many epochs.
#' @param momentum SGD momentum.
#' @param betas,eps Adam's moment decay rates and denominator constant (`eps` is also RMSprop's).
#' @param alpha RMSprop's decay rate of the running average of squared gradients, in (0, 1).
#' @param history Record, for every draw and epoch, the mean minibatch loss (on the minibatch scale: an
#'   unbiased estimate of \eqn{F/n}) and the training accuracy on the minibatches (classification), returned
#'   as the fit's `history` data frame. Accumulated on the device and read once per epoch.
#' @param weight_dist Data weights: `"exponential"` (i.i.d. Exp(1), the WBB), `"multinomial"` (resampling
#'   counts: the bootstrap) or `"unit"` (all 1: every draw is a plain fit from its own initialization and
#'   minibatch order, a deep ensemble).
#' @param init Initial weights: `"fan_in"` (PyTorch's default: weights and biases uniform on
#'   \eqn{\pm 1/\sqrt{fan_{in}}}) or `"glorot"` (TensorFlow's default: weights uniform on
#'   \eqn{\pm\sqrt{6/(fan_{in} + fan_{out})}}, biases 0). Drawn from each draw's random stream.
#' @param float64 Train in double precision (default single, as deep-learning libraries do).
#' @param torch_threads LibTorch intra-op threads per worker (1: parallelism comes from `threads`).
#' @param chunks,future Deprecated here: give them to [wbb_nn()]. Split the draws into `chunks` run through [future.apply::future_lapply()] under
#'   the user's [future::plan()] (`chunks = NULL`: one per future worker when `future = TRUE`, else one),
#'   as in [wbb_control()]; identical to a single run with the same seed.
#' @param normalize_weights,weight_mode How data weights enter the loss. The method: `weight_mode =
#'   "example"` (\eqn{w_i} multiplies \eqn{l_i}) and unnormalized weights. The other settings reproduce
#'   the WBB authors' MNIST script and are not the method: `normalize_weights = TRUE` divides the weights
#'   by their mean; `"shuffled"` weights each example by the weight of an independent random position;
#'   `"batch_mean"` multiplies a minibatch's mean loss by the mean weight of an independent random batch
#'   (the script multiplied a loss vector of length B by a B x 1 weight matrix, which TensorFlow broadcasts
#'   to B x B before averaging).
#' @return A list of class `sb_nn_control`.
#' @export
#' @examples
#' nn_control(epochs = 50, lr = 1e-3)
nn_control <- function(optimizer = c("adam", "sgd", "rmsprop"), lr = 1e-3, epochs = 100L, batch_size = NULL, max_steps = NULL,
                       grad_tol = 0, certify = TRUE, momentum = 0.9, betas = c(0.9, 0.999), eps = 1e-8,
                       weight_dist = c("exponential", "multinomial", "unit"), init = c("fan_in", "glorot"), float64 = FALSE, torch_threads = 1L,
                       chunks = NULL, future = FALSE, normalize_weights = FALSE,
                       weight_mode = c("example", "shuffled", "batch_mean"), alpha = 0.99, history = TRUE) {
  optimizer <- sb_match_arg(optimizer)
  moved <- c("chunks", "future")[c(!missing(chunks), !missing(future))]
  if (length(moved)) {
    sb_warn(c("{.code nn_control({moved[1]} = )} is deprecated: {.arg {moved[1]}} is an argument of {.fn wbb_nn} (as of {.fn sgld_sa}, {.fn wbb}).",
              i = "It will be removed from {.fn nn_control} in the next release."), kind = "deprecated")
  }
  if (!is.numeric(betas) || length(betas) != 2L || anyNA(betas) || any(betas < 0) || any(betas >= 1)) {
    sb_abort(c("{.arg betas} must be two numbers in [0, 1).", x = "You supplied {.val {format(betas)}}."), arg = "betas")
  }
  # single precision (the default) rounds an eps below the smallest normal float32 towards 0, and Adam / RMSprop
  # then divide by zero on a zero gradient coordinate
  if (isFALSE(float64) && is.numeric(eps) && length(eps) == 1L && !is.na(eps) && eps > 0 && eps < 1.1754944e-38) {
    sb_abort(c("{.arg eps} = {format(eps)} is below single precision's smallest normal number (1.18e-38).",
               i = "Use e.g. {.code eps = 1e-8}, or {.code float64 = TRUE}."), arg = "eps")
  }
  structure(list(
    optimizer = optimizer,
    lr = check_number(lr, lower = 0, upper = 1e6, lower_open = TRUE),
    epochs = check_count(epochs, max = 1e7, fix = "Use fewer epochs."),
    batch_size = check_count(batch_size, max = 1e8, allow_null = TRUE),
    max_steps = check_count(max_steps, allow_null = TRUE, max = 1e10),
    grad_tol = check_number(grad_tol, lower = 0, upper = 1e300),
    certify = check_flag(certify),
    momentum = check_number(momentum, lower = 0, upper = 1, upper_open = TRUE),
    betas = as.double(betas),
    eps = check_number(eps, lower = 0, upper = 1, lower_open = TRUE),
    weight_dist = sb_match_arg(weight_dist),
    init = sb_match_arg(init),
    float64 = check_flag(float64),
    torch_threads = check_count(torch_threads, max = 256L),
    chunks = check_count(chunks, allow_null = TRUE, max = 1e6),
    future = check_flag(future),
    normalize_weights = check_flag(normalize_weights),
    weight_mode = sb_match_arg(weight_mode),
    alpha = check_number(alpha, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE),
    history = check_flag(history)
  ), class = "sb_nn_control")
}

# The list the engine reads (src/torch_glue.h: train_from()).
nn_engine_control <- function(control, device, keep_weights) {
  list(optimizer = match(control$optimizer, c("sgd", "adam", "rmsprop")) - 1L, lr = control$lr,
       momentum = control$momentum, beta1 = control$betas[1], beta2 = control$betas[2], eps = control$eps,
       alpha = control$alpha %||% 0.99, history = control$history %||% TRUE, epochs = as.double(control$epochs),
       batch_size = as.double(control$batch_size %||% 50L),  # NULL: min(50, n) (the engine takes min(., n))
       max_steps = if (is.null(control$max_steps)) 0 else as.double(control$max_steps),
       grad_tol = control$grad_tol, certify = control$certify,
       weight_mode = match(control$weight_mode, c("example", "shuffled", "batch_mean")) - 1L,
       normalize_weights = control$normalize_weights, torch_threads = control$torch_threads,
       device = device, float64 = control$float64, keep_weights = keep_weights)
}

#' @export
print.sb_nn_control <- function(x, ...) {
  cat("<sb_nn_control>", x$optimizer, "lr", format(x$lr), "|",
      if (is.null(x$max_steps)) paste(x$epochs, "epochs") else paste(x$max_steps, "steps"),
      "| batch", x$batch_size %||% "min(50, n)", "| weights", x$weight_dist, if (x$float64) "| float64" else "| float32", "\n")
  invisible(x)
}
