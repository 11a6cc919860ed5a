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
#' @param validation Hold rows of the training data out of training and record the loss on them after every
#'   epoch (as Keras's `validation_split` / luz's `valid_data`): `NULL` (default, no validation), one number in
#'   (0, 1) (that fraction of the rows, at least one, drawn at random from the fit's `seed`, so that a seed gives
#'   the same split), a vector of two or more row numbers of the training data (with a formula: rows of the
#'   model frame, after `subset` and `na.action`), or `list(x = , y = )`, separate held-out inputs and responses
#'   in the form of `x` and `y` (Keras's `validation_data`; not with a formula), or, with a formula, a data
#'   frame of held-out rows holding the formula's variables (made into inputs and response by the fit's
#'   formula, its factor levels and contrasts, as `predict(newdata = )` does). The held-out rows are
#'   removed before anything else (standardization included) and never trained on; the fit keeps their row
#'   numbers (`fit$validation$rows`) and the per-epoch held-out loss (the training loss \eqn{l_i}, unweighted,
#'   on the training scale; mean over the held-out rows) and accuracy (classification) in `fit$history`
#'   (columns `val_loss`, `val_accuracy`). For [wbb_nn()] each draw's network, for [bbb()] / [sparse_vi()] the
#'   network at the mean of q, evaluated in eval mode. Used by [wbb_nn()], [bbb()] and [sparse_vi()]; [wbb_nn()]
#'   then trains one network per thread (`batch = FALSE`, with a message: the batched networks have no
#'   validation hook). The SG-MCMC network chains ([sgld_sa()] / [hamcmc_sa()] with `model = `) take no
#'   `nn_control()` and have no validation here: stopping a chain when a held-out loss stops improving is not
#'   a valid sampler rule (the draws would no longer come from the chain's stationary distribution).
#' @param patience With `validation`: stop a fit (each WBB draw, each variational fit on its own) once this many
#'   epochs in a row have not lowered its lowest held-out loss so far, and end with the parameters (and
#'   batch-norm statistics) of the epoch with the lowest held-out loss (`fit$validation$best_epoch`), as Keras's
#'   `EarlyStopping(patience = , restore_best_weights = TRUE)`. `NULL` (default): train all epochs (the held-out
#'   loss is only recorded). Requires `history = TRUE`.
#' @return A list of class `sb_nn_control`.
#' @export
#' @examples
#' nn_control(epochs = 50, lr = 1e-3)
#' nn_control(epochs = 200, validation = 0.2, patience = 10)  # early stopping on 20 % held-out rows
nn_control <- function(optimizer = c("adam", "sgd", "rmsprop"), lr = 1e-3, epochs = 100L, batch_size = NULL, max_steps = NULL,
                       grad_tol = 0, certify = TRUE, momentum = 0.9, betas = c(0.9, 0.999), eps = 1e-8,
                       weight_dist = c("exponential", "multinomial", "unit"), init = c("fan_in", "glorot"), float64 = FALSE, torch_threads = 1L,
                       chunks = NULL, future = FALSE, normalize_weights = FALSE,
                       weight_mode = c("example", "shuffled", "batch_mean"), alpha = 0.99, history = TRUE,
                       validation = NULL, patience = NULL) {
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
  validation <- check_nn_validation(validation)
  patience <- check_count(patience, allow_null = TRUE, max = 1e7, fix = "Give a whole number of epochs, at least 1.")
  if (!is.null(patience) && is.null(validation)) {
    sb_abort(c("{.arg patience} needs held-out rows to watch.",
               i = "Give {.arg validation} too, e.g. {.code nn_control(validation = 0.2, patience = {patience})}."),
             arg = "patience")
  }
  if (!is.null(validation) && isFALSE(history)) {
    sb_abort(c("{.arg validation} records the held-out loss in the training history.",
               i = "Keep {.code history = TRUE}."), arg = "history")
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
    history = check_flag(history),
    validation = validation,
    patience = patience
  ), class = "sb_nn_control")
}

# The list the engine reads (src/torch_glue.h: train_from()); optimizer and weight_mode by name (the engine's
# tables: nn/train.hpp, nn/objective.hpp).
nn_engine_control <- function(control, device, keep_weights) {
  list(optimizer = control$optimizer, lr = control$lr,
       momentum = control$momentum, beta1 = control$betas[1], beta2 = control$betas[2], eps = control$eps,
       alpha = control$alpha %||% 0.99, history = control$history %||% TRUE, epochs = as.double(control$epochs),
       batch_size = as.double(control$batch_size %||% 50L),  # NULL: min(50, n) (the engine takes min(., n))
       max_steps = if (is.null(control$max_steps)) 0 else as.double(control$max_steps),
       grad_tol = control$grad_tol, certify = control$certify,
       weight_mode = control$weight_mode,
       normalize_weights = control$normalize_weights, torch_threads = control$torch_threads,
       device = device, float64 = control$float64, keep_weights = keep_weights,
       patience = as.double(control$patience %||% 0))
}

# nn_control(validation = ): NULL, a fraction in (0, 1), or two or more distinct row numbers (whole numbers >= 1).
check_nn_validation <- function(validation, call = rlang::caller_env()) {
  if (is.null(validation)) return(NULL)
  bad <- function(what) {
    sb_abort(c("{.arg validation} must be a fraction in (0, 1), two or more row numbers of the training data, or {.code list(x = , y = )}.",
               x = what, i = "E.g. {.code validation = 0.2} holds out a fifth of the rows."),
             arg = "validation", call = call)
  }
  if (is.data.frame(validation)) {
    # held-out rows of a formula fit (Keras's validation_data): the fit's formula makes them its inputs and
    # response (sb_formula_fit(): nn_validation_frame()); a matrix fit refuses it there
    if (nrow(validation) < 1L) bad("You supplied a data frame with no rows.")
    return(structure(list(frame = validation), class = "sb_nn_validation_frame"))
  }
  if (is.list(validation)) {  # separate held-out data (Keras's validation_data = (x, y)); checked by the fit
    if (!setequal(names(validation), c("x", "y"))) bad("A list must have exactly the elements {.code x} and {.code y}.")
    return(structure(validation[c("x", "y")], class = "sb_nn_validation_data"))
  }
  if (!is.numeric(validation) || anyNA(validation) || any(!is.finite(validation))) {
    bad("You supplied {.obj_type_friendly {validation}}.")
  }
  if (length(validation) == 1L) {
    if (validation <= 0 || validation >= 1) bad("You supplied {format(validation)}, outside (0, 1).")
    return(as.double(validation))
  }
  if (any(validation != round(validation)) || any(validation < 1) || anyDuplicated(validation)) {
    bad("Row numbers must be distinct whole numbers of at least 1.")
  }
  as.integer(validation)
}

# A data frame given as nn_control(validation = ) to a formula fit (model frame d, sb_formula_frame()): the
# held-out inputs and response in the fit's design, as list(x = , y = ). Called by sb_formula_fit() on the
# front end's control before the fit; `control` unchanged when it holds no data frame.
nn_validation_frame <- function(control, d, call) {
  v <- control$validation
  if (!inherits(v, "sb_nn_validation_frame")) return(control)
  x <- sb_model_matrix_new(d, v$frame, arg = "validation", call = call)
  y <- sb_response_new(d, v$frame)
  if (is.null(y)) {
    sb_abort(c("The data frame given as {.code nn_control(validation = )} must hold the response of the formula.",
               x = "It has no column {.var {all.vars(attr(d$terms, 'variables')[[attr(d$terms, 'response') + 1L]])}}."),
             arg = "validation", call = call)
  }
  if (NROW(y) != nrow(x)) {
    sb_abort(c("The data frame given as {.code nn_control(validation = )} has missing values.",
               x = "{nrow(v$frame)} rows, {nrow(x)} complete."), arg = "validation", call = call)
  }
  control$validation <- structure(list(x = x, y = y), class = "sb_nn_validation_data")
  control
}

# The held-out rows of a network fit with n training rows (NULL without validation): a fraction drawn from the
# fit's seed (R's stream, restored afterwards), or the row numbers given; returns list(hold, keep), both sorted.
nn_validation_split <- function(control, n, seed, call) {
  v <- control$validation
  if (is.null(v) || inherits(v, "sb_nn_validation_data")) return(NULL)
  if (length(v) == 1L) {
    m <- max(1L, as.integer(round(v * n)))
    hold <- sort(sb_with_seed(seed, sample.int(n, m)))
  } else {
    if (max(v) > n) {
      sb_abort(c("{.arg validation} names rows beyond the {n} rows of the training data.",
                 x = "Largest row number: {max(v)}."), arg = "validation", call = call)
    }
    hold <- sort(v)
  }
  keep <- setdiff(seq_len(n), hold)
  if (length(keep) < 2L) {
    sb_abort(c("{.arg validation} leaves {length(keep)} row{?s} to train on.", i = "Hold out fewer rows."),
             arg = "validation", call = call)
  }
  list(hold = hold, keep = keep)
}

# Rows i of a matrix, an array (examples first), a data frame, a factor or a vector.
nn_rows <- function(x, i) {
  if (is.null(x)) return(NULL)
  d <- dim(x)
  if (is.null(d)) return(x[i])
  if (is.data.frame(x) || length(d) == 2L) return(x[i, , drop = FALSE])
  do.call(`[`, c(list(x, i), rep(list(quote(expr = )), length(d) - 1L), list(drop = FALSE)))
}

# Splits the training data of a network front end (x, y in env, and the seed): the held-out rows are removed from
# env$x / env$y and returned as list(x, y, rows) (NULL without validation).
nn_validation_take <- function(env, control, seed, call) {
  v <- control$validation
  if (inherits(v, "sb_nn_validation_data")) return(list(x = v$x, y = v$y, rows = integer()))  # given held-out data
  if (inherits(v, "sb_nn_validation_frame")) {
    sb_abort(c("A data frame as {.code nn_control(validation = )} needs a formula fit, whose formula reads it.",
               i = "Give {.code validation = list(x = , y = )} with inputs of the shape of {.arg x}."),
             arg = "validation", call = call)
  }
  n <- if (is.null(dim(env$x))) length(env$x) else dim(env$x)[1L]
  sp <- nn_validation_split(control, n, seed, call)
  if (is.null(sp)) return(NULL)
  out <- list(x = nn_rows(env$x, sp$hold), y = nn_rows(env$y, sp$hold), rows = sp$hold)
  env$x <- nn_rows(env$x, sp$keep)
  env$y <- nn_rows(env$y, sp$keep)
  out
}

# The engine control's entries val_x, val_xdim, val_y: the held-out rows prepared and scaled as the training data
# of p (nn_prepare()).
nn_validation_engine <- function(ctrl, p, held, call) {
  if (is.null(held)) return(ctrl)
  xd <- tryCatch(nn_prepare_newx(held$x, p$xd, call, warn_scale = FALSE), scalebayes_error = function(e) {
    msg <- conditionMessage(e)  # as a value: never cli markup
    sb_abort(c("{.code nn_control(validation = list(x = ))} must be inputs of the shape of {.arg x}.", x = "{msg}"),
             arg = "validation", call = call)
  })
  vd <- nn_scale_x(xd, p$scaling)
  vy <- nn_scale_y(nn_prepare_y(held$y, vd$n, p$family, levels = p$yd$levels, arg = "y", call = call,
                                q_expected = p$yd$q, warn_scale = FALSE), p$scaling)
  ctrl$val_x <- as.double(vd$x)
  ctrl$val_xdim <- as.integer(vd$dim)
  ctrl$val_y <- as.double(vy$y)
  ctrl
}

# The per-epoch held-out loss and accuracy of `units` fits (engine val_history: rows x 2 per fit) as columns for
# the history data frame with columns unit (draw / fit) and epoch.
nn_validation_columns <- function(history, val, rows, unit_col = "draw") {
  if (is.null(history) || !length(val)) return(history)
  h <- matrix(val, ncol = 2L, byrow = TRUE)
  at <- (history[[unit_col]] - 1) * rows + history$epoch
  history$val_loss <- h[at, 1L]
  history$val_accuracy <- h[at, 2L]
  history
}

#' @export
print.sb_nn_control <- function(x, ...) {
  cat("<sb_nn_control>", x$optimizer, "lr", format(x$lr), "|",
      if (is.null(x$max_steps)) paste(x$epochs, "epochs") else paste(x$max_steps, "steps"),
      "| batch", x$batch_size %||% "min(50, n)", "| weights", x$weight_dist, if (x$float64) "| float64" else "| float32",
      if (!is.null(x$validation)) paste("| validation", if (inherits(x$validation, "sb_nn_validation_data")) "data given"
                                        else if (inherits(x$validation, "sb_nn_validation_frame")) sprintf("data frame of %d rows", nrow(x$validation$frame))
                                        else if (length(x$validation) == 1L) format(x$validation) else paste(length(x$validation), "rows")),
      if (!is.null(x$patience)) paste("| patience", x$patience), "\n")
  invisible(x)
}

# print()'s line for a fit with held-out rows: how many, the held-out loss at each fit's best epoch (mean over
# draws / fits) and, with patience, the epochs the fits stopped at.
nn_validation_line <- function(va, tr) {
  unit <- names(tr)[1]
  best <- tapply(tr$val_loss, tr[[unit]], function(v) if (all(is.na(v))) NA_real_ else min(v, na.rm = TRUE))
  acc <- tapply(tr$val_accuracy, tr[[unit]], function(v) if (all(is.na(v))) NA_real_ else max(v, na.rm = TRUE))
  last <- tapply(tr$epoch, tr[[unit]], max)
  sprintf("  validation: %d held-out rows; best held-out loss %.4g%s (mean over %ss)%s", va$n %||% length(va$rows),
          mean(best, na.rm = TRUE), if (any(is.finite(acc))) sprintf(", best accuracy %.4f", mean(acc, na.rm = TRUE)) else "",
          unit, if (is.null(va$patience)) "" else sprintf("; patience %d: ran %s epochs, best epoch %s",
                                                             va$patience, nn_range_text(last), nn_range_text(va$best_epoch)))
}
nn_range_text <- function(v) {
  v <- v[is.finite(v)]
  if (!length(v)) return("-")
  if (min(v) == max(v)) format(min(v)) else paste0(min(v), "-", max(v))
}
