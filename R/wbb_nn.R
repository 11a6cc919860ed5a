# The weighted Bayesian bootstrap for neural networks (Newton, Polson & Xu 2021, section 3.4).

#' Weighted Bayesian bootstrap for neural networks
#'
#' Each draw \eqn{t} trains a fresh network on
#' \deqn{\theta^{(t)} = \arg\min_\theta \sum_i w_i l_i(\theta) + \lambda \sum_g w_{0g} \|W_g\|^2}{theta(t) = argmin sum_i w_i l_i + lambda sum_g w0_g ||W_g||^2}
#' with fresh i.i.d. Exp(1) data weights \eqn{w_i} and prior weights \eqn{w_0} (one shared by all weight
#' matrices, `prior_weights = "common"`, as in the paper; one per weight matrix, `"separate"`; or none).
#' \eqn{l_i} is the cross-entropy (multinomial), the Bernoulli deviance / 2 (binomial) or the squared
#' error / 2 (gaussian); biases and batch-normalization parameters are not penalized. `lambda` is on the
#' paper's sum scale (the paper's Figure 5 uses 1e-4).
#'
#' Every draw starts from its own random initialization and minibatch order, both taken from the random
#' stream of that draw, so a seed gives the same draws for any `threads` or `chunks`. The optimization runs
#' for `control$epochs` epochs (or `max_steps` steps, or until the gradient norm falls below `grad_tol`);
#' a network objective is non-convex, so each draw is a local optimum reached from a random start: the
#' spread of the draws mixes the bootstrap's posterior spread with the optimizer's.
#'
#' Draws run in parallel threads on the CPU (LibTorch with one intra-op thread each), and one after another on
#' a GPU (`device = "cuda"`). Small networks (MLPs, small convolutional networks) train many draws at once as
#' one batched network (`batch`, see "Batched draws"), which is several times faster; every draw is the same
#' whatever the batching.
#'
#' @param x Inputs: a numeric matrix (examples x features) or an array (examples x height x width, or
#'   examples x channels x height x width) for convolutional networks. Or a model formula, `y ~ x1 + x2` or `y ~ .`, with the variables in `data`: see [sb_formula]. The design
#'   (factors expanded into indicator columns) is then `x`; the intercept is the network's biases, so the formula
#'   keeps it (`- 1` is an error). Image arrays take the `x`, `y` form.
#' @param y Responses: a factor (classes), 0/1 or logical (binomial), or numbers (gaussian). For gaussian and
#'   binomial networks, an n x q matrix gives q outputs (the output layer has q units; the loss of an example
#'   is the sum of its q losses, and predictions come back with q columns). Not given with a formula, whose
#'   left side is the response (`cbind(y1, y2) ~ .` for q outputs).
#' @inheritParams wbb
#' @param model A network: [nn_sequential()], or its shortcuts [nn_mlp()] and [nn_cnn()]. The output layer
#'   (one unit per output) is appended from the data.
#' @param family `"multinomial"`, `"binomial"` or `"gaussian"`; `NULL` chooses from `y`.
#' @param lambda Penalty (sum scale), a non-negative number.
#' @param prior_weights `"common"`, `"separate"` or `"none"`.
#' @param draws Number of WBB draws.
#' @param newx,newy Test inputs (and responses): per-draw predictions on `newx` are kept, and with `newy`
#'   the per-draw test accuracy (classification) or RMSE (gaussian).
#' @param keep_draws Keep every draw's parameters (and batch-norm running statistics), so that [predict()] works
#'   on any new inputs and [coef()], [as.matrix()], [posterior_interval()] and [nn_export()] have draws
#'   (default `TRUE`; stored as float32 unless `nn_control(float64 = TRUE)`: 4 bytes x draws x parameters,
#'   shown by `print()`). `FALSE` keeps only the predictions on `newx`.
#' @param keep_weights Deprecated name of `keep_draws`.
#' @param epochs,batch_size The training length and minibatch size of every draw: the same as
#'   `nn_control(epochs = , batch_size = )`, given here as in [sgld_sa()] (`NULL`: the control's).
#' @param future,chunks Run the draws in `chunks` through the future framework on the workers of the user's
#'   `future::plan()` (`future.apply`); draw t always uses random stream t, so the draws equal a
#'   single-process run. `chunks = NULL`: one per worker.
#' @param device `"cpu"`, `"cuda"` or `"auto"`. CUDA requested but unavailable is an error.
#' @param threads Worker threads on the CPU (default [sb_default_threads()]).
#' @param seed,quiet As in [wbb()].
#' @param control [nn_control()].
#' @param standardize Train on standardized data (default `TRUE`; see "Standardization"). `FALSE`: on the data
#'   as given, as earlier versions did (a seed then gives the draws it gave before).
#' @param batch Train several draws at once as one batched network: `"auto"` (default: batched when the
#'   network has a batched form, see "Batched draws"), `TRUE` (batched; an error for a network without a batched
#'   form), `FALSE` (one network per thread, as before), or a number of draws per batch.
#' @section Batched draws:
#' A batched network holds the draws of a batch as one network whose weights have a leading draw dimension
#' (PyTorch users write it with `torch.baddbmm`): one matrix product computes a layer for every draw, each draw
#' with its own data weights, prior weights, initialization, minibatch order and optimizer state, so that draw
#' t is exactly the draw of random stream t: a seed gives the same draws for any `batch`, `threads` or
#' `chunks` (in our tests bitwise; against `batch = FALSE` up to floating-point rounding, about 1e-7 in float32
#' after a short run, 1e-12 in float64). A draw that diverges stops alone. The draws are split into contiguous
#' batches: one per thread, but at most 131,072 parameters per batch (draws x parameters) and about 2 million
#' activation values (draws x one minibatch's layer outputs), so that a batch's weights, gradients, optimizer
#' state and layer outputs stay in the cache (larger networks: smaller batches, down to one draw).
#' Networks of linear layers, 1d and 2d convolutions, max and average pooling, flatten, reshape and activations
#' (relu, tanh, sigmoid) have a batched form; batch normalization and dropout train one network per thread.
#' On the CPU each draw's convolution is its own call within the batch (one grouped convolution was slower
#' there and changed float32 results with the batch size); on a GPU a layer is one grouped convolution.
#' Convolutional networks: 40 draws of a small conv1d network (300 sequences) about 3.3 times as fast as one
#' network per thread; image CNNs whose convolutions dominate the arithmetic about as fast as one network
#' per thread (1.0-1.3 times on MNIST CNNs, `bench/batched.R` section 7).
#' Measured on a 2-core CPU (`bench/batched.R`, `bench/RESULTS.md`): 100 draws of a 13-50-50-1 MLP on 405 Boston
#' rows about 12 times as fast as one network per thread and twice the same batched network written in
#' PyTorch; the 784-128-64-10 MLP 1.4-1.6 times (its matrix products, the same in both, dominate); batched was
#' faster at every size measured (up to 1.3 million parameters), so `"auto"` always batches a network that can.
#' With `nn_control(validation = )` the draws train one network per thread whatever `batch` says (a message
#' says so): the batched networks have no held-out-loss hook; the draws are then those of `batch = FALSE`.
#' The fit records the choice: `fit$settings$batch` (what was asked), `fit$settings$batched` (whether the
#' draws ran batched), `fit$settings$batch_group` (the draws per batch asked for; `NA`: the engine's sizes) and
#' `fit$settings$unbatched` (why the draws trained one network at a time, e.g. the layer without a batched form
#' that `"auto"` found; `NA` when batched).
#' @section Standardization:
#' With `standardize = TRUE` the inputs are centred and scaled to unit standard deviation (divisor n) before
#' training: column by column for a matrix `x` (a constant column keeps scale 1), and by one mean and one sd
#' over all values for images (an array `x`, or a network whose first layer with parameters is a convolution),
#' so that an image stays an image (every pixel and channel gets the same affine map, and convolutions,
#' pooling and padding keep their meaning). A gaussian response is centred and scaled as well (each column of
#' a matrix `y`); classification responses are left alone. The transform is computed from the training data
#' and stored in the fit (`fit$scaling`).
#'
#' The network is trained on that scale, and everything it returns is on the user's scale: the predictions on
#' `newx` (`pred`, `pred_mean`) and the test RMSE against `newy`, and [predict()] on new raw inputs (it
#' applies the stored transform, and maps a gaussian network's outputs back), with its intervals and per-draw
#' predictions. The prior acts on the standardized scale: `lambda` penalizes the weights of the network on
#' standardized data, the learning rate and the optimizer's steps are those of the standardized problem, and
#' so are the parameters (`weights`, [coef()], [as.matrix()]), the per-draw `objective` and `grad_norm` and the
#' training `history`. [nn_export()] folds the transform into the exported network (first and output layer),
#' which therefore takes raw inputs and returns raw-scale outputs.
#' @section Band coverage:
#' On a simulated regression with a known 1-hidden-layer tanh network as f (2 inputs, noise sd 0.3, 300 training
#' and 200 test rows, an `nn_mlp(8)` fit of 1,000 epochs, 5 seeds; `bench/nn_coverage.R`,
#' `vignette("variational")` section 4), `wbb_nn()` (50 draws)'s 90 % bands covered the true f at 0.73 of the test inputs and
#' its 90 % predictive intervals covered new y at 0.89 (averages over the seeds); the predictive interval ([predictive_interval()], [posterior_predict()]) adds to each draw of f normal noise with that draw's `sigma`, its root mean squared training residual, since the bootstrap has no noise parameter.

#' @section Interrupts:
#' Ctrl-C stops the engine at its next check and returns the partial fit of what finished (networks 1..k of the same-seed run that finished (done or diverged)),
#' with one warning of class `scalebayes_warning_interrupted` and `fit$interrupted` `TRUE`; when nothing
#' finished it is R's interrupt. See [scalebayes-interrupts].
#' @return A network fit (class `c("sb_wbb_nn", "sb_nn_fit", "sb_fit")`, see [sb_nn_fit-methods]) with
#'   `weights` (draws x parameters, when kept), `pred` (draws x examples x classes array of class
#'   probabilities, or draws x examples for binomial / gaussian with a vector `y`, draws x examples x q for a
#'   matrix `y`), `pred_mean`, `accuracy` (or `rmse`, per draw over all outputs) and `accuracy_mean` (or
#'   `rmse_mean`, of the posterior predictive mean) with `newy`, per-draw `objective`, `grad_norm`, `steps` and
#'   `status` (`"done"`, `"diverged"`), `sigma` (gaussian, one output, kept draws: each draw's root mean squared
#'   residual on the training data, the noise sd that [posterior_predict()] and [log_lik()] use), `data` (the
#'   training inputs and responses, see [sb_nn_fit-methods]), `history` (with `nn_control(history = TRUE)`: a data frame with one row
#'   per draw and epoch, columns `draw`, `epoch`, `loss` (mean minibatch loss, an estimate of \eqn{F/n}) and
#'   `accuracy` (training accuracy on the minibatches; `NaN` for gaussian); a diverged draw's rows end with the
#'   epoch whose loss became non-finite, or its last step left a non-finite `objective`; with
#'   `nn_control(validation = )` also `val_loss` and `val_accuracy`, and the fit's `validation` holds the held-out
#'   `rows`, `patience` and each draw's `best_epoch`), `steps_counted`
#'   (optimizer steps counted by the progress display, all draws), the layer table, the settings, `seed` and
#'   `timing`.
#' @references Newton, M. A., Polson, N. G. and Xu, J. (2021). Weighted Bayesian bootstrap for scalable
#'   posterior distributions. *Canadian Journal of Statistics* 49, 421-437.
#' @export
#' @examples
#' if (sb_torch_available()) {
#'   set.seed(1)
#'   x <- matrix(rnorm(200 * 4), 200, 4)
#'   y <- factor(ifelse(x[, 1] + x[, 2] > 0, "a", "b"))
#'   fit <- wbb_nn(x, y, model = nn_mlp(8), draws = 4, epochs = 5, newx = x, newy = y, seed = 1)
#'   fit
#'   predict(fit, x[1:5, ])  # probability of "b" (fit, se, lower, upper) and the predicted class
#'   predict(fit, x[1, ])    # one example
#' }
wbb_nn <- function(x, y, model = nn_mlp(), family = NULL, lambda = 1e-4,
                   prior_weights = c("common", "separate", "none"), draws = 100L, newx = NULL, newy = NULL,
                   keep_draws = TRUE, epochs = NULL, batch_size = NULL, future = FALSE, chunks = NULL,
                   device = "cpu", threads = NULL, seed = NULL, quiet = NULL, control = nn_control(),
                   standardize = TRUE, batch = "auto", keep_weights, data = NULL, subset = NULL, na.action = NULL,
                   contrasts = NULL) {
  if (!missing(x) && sb_is_formula(x)) {
    return(sb_formula_fit(environment(), "wbb_nn", wbb_nn, match.call(), intercept = "none", response = "network"))
  }
  sb_formula_only(environment())
  call <- rlang::current_env()
  ctx <- nn_start(model, family, device, call, match.call())
  control <- nn_control_args(check_nn_control(control, call = call), epochs, batch_size, call)
  prior_weights <- sb_match_arg(prior_weights)
  lambda <- check_number(lambda, lower = 0, upper = 1e12)
  draws <- check_count(draws, max = 1e7, fix = "Split very long runs into chunks.")
  keep_draws <- sb_renamed_arg(if (!missing(keep_weights)) keep_weights, keep_draws, "keep_weights", "keep_draws",
                               missing(keep_draws), "wbb_nn", call = call, old_missing = missing(keep_weights))
  keep_draws <- check_flag(keep_draws, arg = "keep_draws", call = call)
  if (missing(future) && isTRUE(control$future)) future <- TRUE  # nn_control(future = ) (deprecated there)
  rs <- wbb_run_settings(draws, threads, seed, quiet, chunks %||% control$chunks, future, call = call)
  held <- nn_validation_take(call, control, rs$seed, call)  # nn_control(validation = ): rows out of x, y
  p <- nn_prepare(ctx, x, y, newx, newy, standardize, control$batch_size, in_control = TRUE,
                  init = control$init, units = draws, keep_draws = keep_draws)
  control$batch_size <- p$batch_size
  keep_history <- wbb_nn_check_history(control, draws, p$xd$n, call)
  ctrl <- nn_validation_engine(nn_engine_control(control, ctx$device, keep_draws), p, held, call)
  ctrl$batch <- nn_batch_arg(batch, "draws", call)  # the engine decides (nn::decide_wbb_batch(), R/nn_batch.R)
  nd <- p$nd
  # Ctrl-C (?scalebayes-interrupts): the networks 1..k that finished (done or diverged: status 1 or 2), each
  # chunk's results being blocks of equal size per draw
  parts <- wbb_run(rs, function(first, count) {
    r <- cpp_nn_wbb(p$spec, p$xd$x, p$xd$dim, p$yd$y, if (is.null(nd)) double() else nd$x,
                    if (is.null(nd)) integer() else nd$dim, ctrl, lambda,
                    wbb_engine_settings(rs, first, count, prior_weights, control$weight_dist))
    if (isTRUE(r$interrupted)) r$prefix <- match(FALSE, r$status %in% c(1L, 2L), nomatch = length(r$status) + 1L) - 1L
    r
  }, call = call, cut = function(r, k) {
    count <- length(r$status)
    for (nm in c("pred", "params", "buffers", "objective", "grad_norm", "steps", "status", "history", "epochs")) {
      if (length(r[[nm]])) r[[nm]] <- r[[nm]][seq_len(length(r[[nm]]) %/% count * k)]
    }
    r
  })
  stopped <- attr(parts, "interrupted")
  if (!is.null(stopped)) draws <- stopped$completed
  decided <- nn_batch_settings(parts[[1L]]$batch)
  if (identical(parts[[1L]]$batch$why, "validation")) {  # the batched networks have no validation hook
    rlang::inform("nn_control(validation = ) trains one network per thread (batch = FALSE).",
                  class = "scalebayes_message_validation")
  }
  cat_num <- function(name) unlist(lapply(parts, `[[`, name), use.names = FALSE)
  status <- nn_decode_status(cat_num("status"))
  ok <- status == "done"
  if (!any(ok)) nn_abort_diverged("Every draw diverged", p$standardize, call)
  pred <- pred_mean <- NULL
  if (!is.null(nd)) {
    pred <- nn_decode_pred(cat_num("pred"), p$n_out, nd$n, draws, p$family, p$yd$levels, p$scaling)
    if (p$n_out == 1L) pred[!ok, ] <- NA else pred[!ok, , ] <- NA
    pred_mean <- nn_pred_mean(pred, ok)
  }
  store <- if (keep_draws) nn_decode_store(cat_num("params"), cat_num("buffers"), p$desc, draws)
  history <- if (keep_history) wbb_nn_history(parts, cat_num, draws)
  validation <- NULL
  if (!is.null(held)) {
    history <- nn_validation_columns(history, cat_num("val_history"), parts[[1L]]$history_rows, "draw")
    validation <- list(rows = held$rows, n = NROW(held$y), patience = control$patience, best_epoch = cat_num("best_epoch"))
  }
  n_bad <- sum(status == "diverged")
  if (n_bad > 0) {
    sb_warn(c("{n_bad} of {draws} draw{?s} diverged (non-finite loss) and {?was/were} left out of the summaries.",
              i = "Lower {.arg lr} in {.fn nn_control}."), kind = "convergence")
  }
  details <- sprintf("lambda %.4g (sum scale), prior weights %s, data weights %s; %s lr %.3g, %s, batch %d",
                     lambda, prior_weights, control$weight_dist, control$optimizer, control$lr,
                     if (is.null(control$max_steps)) paste(control$epochs, "epochs") else paste(control$max_steps, "steps"),
                     control$batch_size)
  fit <- nn_build(ctx, p, "sb_wbb_nn", "WBB", rs, device = parts[[1L]]$device,
           settings = list(draws = draws, prior_weights = prior_weights, lambda = lambda, control = control,
                           keep_draws = keep_draws, batch = batch,  # asked; then what ran (R/nn_batch.R)
                           batched = decided$batched, batch_group = decided$batch_group,
                           unbatched = decided$unbatched),
           weights = store$weights, buffers = store$buffers, status = status, pred = pred, pred_mean = pred_mean,
           details = details, training = history, float64 = isTRUE(control$float64),
           objective = cat_num("objective"), grad_norm = cat_num("grad_norm"), steps = cat_num("steps"),
           steps_counted = sum(cat_num("steps_counted")), lambda = lambda, history = history,
           validation = validation)
  fit$sigma <- wbb_nn_sigma(fit, p)
  if (!is.null(stopped)) fit <- sb_partial_fit(fit, draws, stopped$requested, unit = "networks")
  fit
}

# The noise sd of each draw of a gaussian bootstrap network (one output), which has no noise parameter: the root
# mean squared residual of the draw's network on its (unweighted) training data, on the user's scale; NA for a draw
# that did not finish; NULL without kept weights or for classification. posterior_predict() and log_lik() use it
# (?sb_fit-generics).
wbb_nn_sigma <- function(fit, p) {
  if (fit$family != "gaussian" || p$n_out != 1L || is.null(.subset2(fit, "weights"))) return(NULL)
  x <- p$data$x
  attr(x, "sb_arg") <- "x"
  pr <- nn_predict_draws(fit, x, warn_scale = FALSE)  # finished draws x training examples (x was checked)
  out <- rep(NA_real_, length(fit$status))
  out[fit$status == "done"] <- sqrt(rowMeans(sweep(pr, 2L, as.double(p$data$y))^2))
  out
}

# The training history of a WBB network run (draws x epochs rows of loss and accuracy) must fit in a data frame;
# returns whether it is kept (nn_control(history = ); controls made before the option existed: TRUE).
wbb_nn_check_history <- function(control, draws, n, call) {
  keep <- isTRUE(control$history %||% TRUE)
  rows <- if (is.null(control$max_steps)) control$epochs else ceiling(control$max_steps / ceiling(n / min(control$batch_size, n)))
  if (keep && as.double(draws) * rows * 2 > .Machine$integer.max) {
    sb_abort(c("The training history would hold {format(as.double(draws) * rows, digits = 3)} rows (draws x epochs).",
               i = "Use {.code nn_control(history = FALSE)}, or fewer {.arg draws} or epochs."),
             arg = "control", call = call)
  }
  keep
}

# The (draw, epoch, loss, accuracy) table of the engine's chunks: each draw's rows up to the epochs it ran.
wbb_nn_history <- function(parts, cat_num, draws) {
  ep <- cat_num("epochs")
  rows <- parts[[1L]]$history_rows
  h <- matrix(cat_num("history"), ncol = 2L, byrow = TRUE)
  keep <- rep((seq_len(draws) - 1) * rows, ep) + sequence(ep)
  data.frame(draw = rep(seq_len(draws), ep), epoch = sequence(ep), loss = h[keep, 1L], accuracy = h[keep, 2L])
}

# "group[i]" for every parameter of the groups (a group of one parameter: its name alone), vectorized: 8.7 million
# names take 11 s here against 23 s group by group, which is why fits keep names on demand (R/nn_fit.R).
nn_param_names <- function(desc) {
  sz <- as.integer(desc$size)
  if (!sum(sz)) return(character())  # paste0() would give "[]" for no parameters
  r <- paste0(rep.int(desc$group, sz), "[", sequence(sz), "]")
  one <- sz == 1L
  if (any(one)) r[cumsum(sz)[one]] <- desc$group[one]
  r
}

# The predicted class (0-based) from response-scale predictions of one draw or the posterior mean: the
# most probable class (ties: the first); binomial: P(y = 1) > 0.5. prob: examples x classes, or a vector.
nn_class <- function(prob, family) {
  if (family == "binomial") return(as.integer(prob > 0.5))
  k <- if (is.null(dim(prob))) length(prob) else dim(prob)[length(dim(prob))]
  max.col(matrix(prob, ncol = k), "first") - 1L
}

# Per-draw RMSE of draws x examples [x outputs] predictions against y (a vector, or examples x outputs): over
# examples and outputs.
nn_rmse <- function(pred, y) {
  if (length(dim(pred)) == 3L) return(vapply(seq_len(dim(pred)[1]), function(t) sqrt(mean((pred[t, , ] - y)^2)), numeric(1)))
  sqrt(rowMeans((pred - matrix(y, nrow(pred), ncol(pred), byrow = TRUE))^2))
}

# Per-draw accuracy (draws x examples [x classes] predictions; y the 0-based classes).
nn_accuracy <- function(pred, y, family) {
  if (family == "binomial" && length(dim(pred)) == 3L) {  # q outputs: over examples and outputs
    return(vapply(seq_len(dim(pred)[1]), function(t) mean((pred[t, , ] > 0.5) == y), numeric(1)))
  }
  one <- function(t) if (family == "binomial") pred[t, ] else pred[t, , , drop = FALSE]
  vapply(seq_len(dim(pred)[1]), function(t) mean(nn_class(one(t), family) == y), numeric(1))
}
