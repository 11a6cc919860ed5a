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
#' Draws run in parallel threads on the CPU, one network per thread (LibTorch with one intra-op thread
#' each), and one after another on a GPU (`device = "cuda"`).
#'
#' @param x Inputs: a numeric matrix (examples x features) or an array (examples x height x width, or
#'   examples x channels x height x width) for convolutional networks.
#' @param y Responses: a factor (classes), 0/1 or logical (binomial), or numbers (gaussian). For gaussian and
#'   binomial networks, an n x q matrix gives q outputs (the output layer has q units; the loss of an example
#'   is the sum of its q losses, and predictions come back with q columns).
#' @param model A network: [nn_sequential()], or its shortcuts [nn_mlp()] and [nn_cnn()]. The output layer
#'   (one unit per output) is appended from the data.
#' @param family `"multinomial"`, `"binomial"` or `"gaussian"`; `NULL` chooses from `y`.
#' @param lambda Penalty (sum scale), a non-negative number.
#' @param prior_weights `"common"`, `"separate"` or `"none"`.
#' @param draws Number of WBB draws.
#' @param newx,newy Test inputs (and responses): per-draw predictions on `newx` are kept, and with `newy`
#'   the per-draw test accuracy (classification) or RMSE (gaussian).
#' @param keep_weights Keep every parameter of every draw (draws x parameters; large for big networks).
#' @param device `"cpu"`, `"cuda"` or `"auto"`. CUDA requested but unavailable is an error.
#' @param threads Worker threads on the CPU (default [sb_default_threads()]).
#' @param seed,quiet As in [wbb()].
#' @param control [nn_control()].
#' @return An object of class `sb_wbb_nn` with `pred` (draws x examples x classes array of class
#'   probabilities, or draws x examples for binomial / gaussian with a vector `y`, draws x examples x q for a
#'   matrix `y`), `pred_mean`, `accuracy` (or `rmse`, over all outputs),
#'   `weights` (if kept), per-draw `objective`, `grad_norm`, `steps` and `status` (`"done"`, `"diverged"`),
#'   `history` (with `nn_control(history = TRUE)`: a data frame with one row per draw and epoch, columns
#'   `draw`, `epoch`, `loss` (mean minibatch loss, an estimate of \eqn{F/n}) and `accuracy` (training
#'   accuracy on the minibatches; `NaN` for gaussian); a diverged draw's rows end with the epoch whose loss
#'   became non-finite, or its last step left a non-finite `objective`),
#'   `steps_counted` (optimizer steps counted by the progress display, all draws), the layer table, the
#'   settings, `seed` and `timing`; methods `print`, `summary`, `predict`, `plot`, `as.matrix`,
#'   `as_draws_df` / `as_draws_matrix`.
#' @references Newton, M. A., Polson, N. G. and Xu, J. (2021). Weighted Bayesian bootstrap for scalable
#'   posterior distributions. *Canadian Journal of Statistics* 49, 421-437.
#' @export
#' @examples
#' if (sb_torch_available()) {
#'   set.seed(1)
#'   x <- matrix(rnorm(200 * 4), 200, 4)
#'   y <- factor(ifelse(x[, 1] + x[, 2] > 0, "a", "b"))
#'   fit <- wbb_nn(x, y, model = nn_mlp(8), draws = 4, newx = x, newy = y,
#'                 control = nn_control(epochs = 5), seed = 1)
#'   fit
#' }
wbb_nn <- function(x, y, model = nn_mlp(), family = NULL, lambda = 1e-4,
                   prior_weights = c("common", "separate", "none"), draws = 100L, newx = NULL, newy = NULL,
                   keep_weights = FALSE, device = "cpu", threads = NULL, seed = NULL, quiet = NULL,
                   control = nn_control()) {
  call <- rlang::current_env()
  mcall <- match.call()
  t0 <- proc.time()[["elapsed"]]
  device <- check_backend(device, call)
  if (!inherits(model, "sb_nn_spec")) {
    sb_abort(c("{.arg model} must be a network made by {.fn nn_sequential}, {.fn nn_mlp} or {.fn nn_cnn}.",
               x = "You supplied {.obj_type_friendly {model}}."), arg = "model", call = call)
  }
  if (!is.null(family)) family <- sb_match_arg(family, c("multinomial", "binomial", "gaussian"))
  if (!inherits(control, "sb_nn_control")) {
    sb_abort(c("{.arg control} must be made by {.fn nn_control}.", x = "You supplied {.obj_type_friendly {control}}."),
             arg = "control", call = call)
  }
  prior_weights <- sb_match_arg(prior_weights)
  lambda <- check_number(lambda, lower = 0, upper = 1e12)
  draws <- check_count(draws, max = 1e7, fix = "Split very long runs into chunks.")
  keep_weights <- check_flag(keep_weights)
  rs <- wbb_run_settings(draws, threads, seed, quiet, control$chunks, control$future, call = call)
  xd <- nn_prepare_x(x, "x", call)
  yd <- nn_prepare_y(y, xd$n, family, arg = "y", call = call)
  family <- yd$family
  n_out <- if (family == "multinomial") length(yd$levels) else yd$q
  tab <- nn_resolve(model, xd$shape, n_out, call = call)
  control$batch_size <- check_nn_batch_size(control$batch_size, xd$n, tab, call = call, in_control = TRUE)  # R/validate.R
  spec <- nn_engine_spec(tab, xd$shape, family)
  spec$init <- match(control$init, c("fan_in", "glorot")) - 1L
  nd <- nn_prepare_newx(newx, xd, call)
  if (!is.null(newy)) {
    if (is.null(nd)) sb_abort("{.arg newy} needs {.arg newx}.", arg = "newy", call = call)
    newy_d <- nn_prepare_y(newy, nd$n, family, levels = yd$levels, arg = "newy", call = call, q_expected = yd$q)
  }
  if (!is.null(nd)) check_result_size(draws, nd$n * n_out, "draws", call = call)  # predictions
  if (keep_weights) check_result_size(draws, sum(tab$params), "draws", call = call)  # every parameter
  keep_history <- isTRUE(control$history %||% TRUE)  # controls made before the option existed: TRUE
  if (keep_history) {  # draws x epochs rows of (loss, accuracy)
    per_epoch <- ceiling(xd$n / min(control$batch_size, xd$n))
    rows <- if (is.null(control$max_steps)) control$epochs else ceiling(control$max_steps / per_epoch)
    if (as.double(draws) * rows * 2 > .Machine$integer.max) {
      sb_abort(c("The training history would hold {format(as.double(draws) * rows, digits = 3)} rows (draws x epochs).",
                 i = "Use {.code nn_control(history = FALSE)}, or fewer {.arg draws} or epochs."),
               arg = "control", call = call)
    }
  }
  ctrl <- nn_engine_control(control, device, keep_weights)
  newx_arr <- if (is.null(nd)) double() else nd$x
  newdim <- if (is.null(nd)) integer() else nd$dim
  engine <- function(first, count) {
    cpp_nn_wbb(spec, xd$x, xd$dim, yd$y, newx_arr, newdim, ctrl, lambda,
               wbb_engine_settings(rs, first, count, prior_weights, control$weight_dist))
  }
  parts <- wbb_run(rs, engine, call = call)
  cat_num <- function(name) unlist(lapply(parts, `[[`, name), use.names = FALSE)
  status <- factor(c("not run", "done", "diverged", "interrupted")[cat_num("status") + 1L],
                   levels = c("done", "diverged", "interrupted", "not run"))
  ok <- status == "done"
  n_bad <- sum(status == "diverged")
  if (!any(ok)) {
    sb_abort(c("Every draw diverged (the training loss became infinite or NaN).",
               i = "Lower {.arg lr} in {.fn nn_control}, or standardize the inputs and responses."),
             kind = "convergence", arg = "control", call = call)
  }
  desc <- cpp_nn_describe(spec)
  pred <- NULL
  pred_mean <- NULL
  if (!is.null(nd)) {
    pred <- array(cat_num("pred"), c(n_out, nd$n, draws))
    pred <- aperm(pred, c(3L, 2L, 1L))  # draws x examples x outputs
    if (n_out == 1L) pred <- matrix(pred, draws, nd$n)
    if (family == "multinomial") dimnames(pred) <- list(NULL, NULL, yd$levels)  # else q outputs: draws x n x q
    if (n_out == 1L) pred[!ok, ] <- NA else pred[!ok, , ] <- NA
    pred_mean <- if (n_out == 1L) colMeans(pred[ok, , drop = FALSE]) else apply(pred[ok, , , drop = FALSE], c(2L, 3L), mean)
  }
  weights <- NULL
  if (keep_weights) {
    weights <- matrix(cat_num("params"), nrow = draws, byrow = TRUE)
    colnames(weights) <- nn_param_names(desc)
  }
  history <- NULL
  if (keep_history) {
    ep <- cat_num("epochs")
    rows <- parts[[1L]]$history_rows
    h <- matrix(cat_num("history"), ncol = 2L, byrow = TRUE)
    keep <- rep((seq_len(draws) - 1) * rows, ep) + sequence(ep)
    history <- data.frame(draw = rep(seq_len(draws), ep), epoch = sequence(ep), loss = h[keep, 1L],
                          accuracy = h[keep, 2L])
  }
  if (n_bad > 0) {
    sb_warn(c("{n_bad} of {draws} draw{?s} diverged (non-finite loss) and {?was/were} left out of the summaries.",
              i = "Lower {.arg lr} in {.fn nn_control}."), kind = "convergence")
  }
  fit <- structure(list(
    pred = pred, pred_mean = pred_mean, weights = weights,
    objective = cat_num("objective"), grad_norm = cat_num("grad_norm"), steps = cat_num("steps"), status = status,
    history = history, steps_counted = sum(cat_num("steps_counted")),
    family = family, levels = yd$levels, model = model, layers = tab, n_parameters = desc$n_parameters,
    spec = spec, lambda = lambda, seed = rs$seed, call = mcall, device = parts[[1L]]$device,
    settings = list(draws = draws, prior_weights = prior_weights, threads = rs$threads, control = control,
                    nobs = xd$n, n_new = if (is.null(nd)) 0L else nd$n, input = xd$shape, n_out = n_out),
    timing = c(elapsed = proc.time()[["elapsed"]] - t0)
  ), class = c("sb_wbb_nn", "sb_nn_fit"))
  if (!is.null(newy)) {
    if (family == "gaussian") {
      fit$rmse <- nn_rmse(pred, newy_d$y)
    } else {
      fit$accuracy <- nn_accuracy(pred, newy_d$y, family)
    }
    if (!is.null(fit$rmse)) fit$rmse[!ok] <- NA
    if (!is.null(fit$accuracy)) fit$accuracy[!ok] <- NA
    fit$newy <- newy_d$y
  }
  fit
}

nn_param_names <- function(desc) {
  unlist(Map(function(g, m) if (m == 1) g else paste0(g, "[", seq_len(m), "]"), desc$group, desc$size),
         use.names = FALSE)
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

#' @export
print.sb_wbb_nn <- function(x, ...) {
  ctl <- x$settings$control
  cat(sprintf("<sb_wbb_nn> weighted Bayesian bootstrap, %d draws of a %s network (%s parameters), %s\n",
              x$settings$draws, toupper(x$model$type), format(x$n_parameters, big.mark = ","), x$family))
  cat(sprintf("  lambda %.4g (sum scale), prior weights %s, data weights %s; %s lr %.3g, %s, batch %d on %s\n",
              x$lambda, x$settings$prior_weights, ctl$weight_dist, ctl$optimizer, ctl$lr,
              if (is.null(ctl$max_steps)) paste(ctl$epochs, "epochs") else paste(ctl$max_steps, "steps"),
              ctl$batch_size, x$device))
  tab <- table(x$status)
  tab <- tab[tab > 0]
  bad <- names(tab) != "done"
  cat("  draws: ", paste(tab, names(tab), collapse = ", "),
      if (any(bad)) " (only done draws enter the summaries)", "\n", sep = "")
  if (!is.null(x$accuracy)) {
    a <- x$accuracy[x$status == "done"]
    q <- stats::quantile(a, c(0.025, 0.5, 0.975), names = FALSE)
    cat(sprintf("  test accuracy per draw: mean %.3f, median %.3f, 95%% interval [%.3f, %.3f]; posterior-mean predictor %.3f\n",
                mean(a), q[2], q[1], q[3], nn_mean_accuracy(x)))
  }
  if (!is.null(x$rmse)) {
    a <- x$rmse[x$status == "done"]
    cat(sprintf("  test RMSE per draw: mean %.4g, 95%% interval [%.4g, %.4g]\n", mean(a),
                stats::quantile(a, 0.025), stats::quantile(a, 0.975)))
  }
  cat(sprintf("  %.1f s\n", x$timing[["elapsed"]]))
  invisible(x)
}

nn_mean_accuracy <- function(x) {
  if (is.null(x$newy) || x$family == "gaussian") return(NA_real_)
  mean(nn_class(x$pred_mean, x$family) == x$newy)
}

#' Summaries and predictions of a network posterior
#'
#' `summary()` gives the posterior of the test accuracy (or RMSE), the accuracy of the posterior-mean
#' predictor, and per-example predictive summaries: the predicted class, its posterior-mean probability, a
#' credible interval for it, and the predictive entropy. `predict()` returns, for the test inputs the fit
#' was given (or for `newx` when the weights were kept), the posterior-mean probabilities, per-draw
#' predictions, or intervals.
#'
#' @param object,x A network fit: `sb_wbb_nn` ([wbb_nn()]) or `sb_sgld_sa_nn` ([sgld_sa()] with a `model`).
#' @param level Credible level.
#' @param newx New inputs (needs `keep_weights = TRUE` at fit time); `NULL`: the fit's `newx`.
#' @param type `"prob"` (posterior-mean class probabilities / means), `"class"` (most probable class under
#'   the posterior mean), `"draws"` (the per-draw array) or `"interval"` (mean and credible interval of
#'   every output).
#' @param ... Unused.
#' @return `summary()`: a list of class `summary_sb_wbb_nn`; `predict()`: see `type`.
#' @name sb_wbb_nn-methods
#' @export
summary.sb_nn_fit <- function(object, level = 0.95, ...) {
  level <- check_number(level, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  check_nn_fit_done(object)  # no completed draw: a classed error (R/validate.R)
  ok <- object$status == "done"
  a <- (1 - level) / 2
  out <- list(draws = sum(ok), level = level, family = object$family,
              label = if (inherits(object, "sb_wbb_nn")) "WBB" else object$method)
  metric <- if (!is.null(object$accuracy)) object$accuracy[ok] else if (!is.null(object$rmse)) object$rmse[ok]
  if (!is.null(metric)) {
    out$metric_name <- if (!is.null(object$accuracy)) "accuracy" else "rmse"
    out$metric <- c(mean = mean(metric), sd = stats::sd(metric),
                    stats::quantile(metric, c(a, 0.5, 1 - a)))
    out$mean_predictor <- nn_mean_accuracy(object)
  }
  q_out <- object$settings$n_out %||% 1L
  if (!is.null(object$pred) && (object$family == "multinomial" || (object$family == "binomial" && q_out == 1L))) {
    pm <- if (object$family == "multinomial") object$pred_mean else cbind(1 - object$pred_mean, object$pred_mean)
    cls <- nn_class(object$pred_mean, object$family) + 1L
    p_cls <- pm[cbind(seq_len(nrow(pm)), cls)]
    draws_cls <- if (object$family == "multinomial") {
      vapply(seq_along(cls), function(i) object$pred[ok, i, cls[i]], numeric(sum(ok)))
    } else {
      pr <- object$pred[ok, , drop = FALSE]
      pr[, cls == 1] <- 1 - pr[, cls == 1]
      pr
    }
    draws_cls <- matrix(draws_cls, nrow = sum(ok))
    q <- apply(draws_cls, 2, stats::quantile, probs = c(a, 1 - a), names = FALSE)
    ent <- -rowSums(ifelse(pm > 0, pm * log(pm), 0))
    lev <- if (is.null(object$levels)) c("0", "1") else object$levels
    out$examples <- data.frame(class = factor(lev[cls], levels = lev), prob = p_cls, lower = q[1, ], upper = q[2, ],
                               entropy = ent, correct = if (!is.null(object$newy)) cls - 1L == object$newy else NA)
  }
  structure(out, class = "summary_sb_wbb_nn")
}

#' @export
print.summary_sb_wbb_nn <- function(x, ...) {
  cat(sprintf("%s network posterior: %d draws, %s\n", x$label %||% "WBB", x$draws, x$family))
  if (!is.null(x$metric)) {
    cat(sprintf("Test %s per draw:\n", x$metric_name))
    print(round(x$metric, 4))
    if (!is.na(x$mean_predictor)) cat(sprintf("Posterior-mean predictor accuracy: %.4f\n", x$mean_predictor))
  }
  if (!is.null(x$examples)) {
    e <- x$examples
    cat(sprintf("Predictive entropy over %d test examples: median %.3f (max %.3f for %d classes)\n",
                nrow(e), stats::median(e$entropy), log(max(2L, nlevels(e$class))), nlevels(e$class)))
    if (!all(is.na(e$correct))) {
      qs <- stats::quantile(e$entropy, c(0, 0.25, 0.5, 0.75, 1))
      bins <- cut(e$entropy, unique(qs), include.lowest = TRUE)
      cat("Accuracy by predictive-entropy quartile:\n")
      print(round(tapply(e$correct, bins, mean), 3))
    }
  }
  invisible(x)
}

#' @rdname sb_wbb_nn-methods
#' @export
predict.sb_nn_fit <- function(object, newx = NULL, type = c("prob", "class", "draws", "interval"), level = 0.95, ...) {
  type <- sb_match_arg(type)
  level <- check_number(level, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
  ok <- object$status == "done"
  if (is.null(newx) && is.null(object$pred) && !is.null(object$pred_mean) && type %in% c("prob", "class")) {
    m <- object$pred_mean  # running posterior predictive mean (draws not kept)
    if (type == "prob") return(m)
    if (object$family == "gaussian") sb_abort("{.code type = \"class\"} needs a classification fit.", arg = "type")
    return(factor(object$levels[nn_class(m, object$family) + 1L], levels = object$levels))
  }
  if (is.null(newx)) {
    if (is.null(object$pred)) {
      sb_abort(c("This fit has no stored predictions.", i = "Pass {.arg newx} when fitting, or {.arg newx} here with a fit that kept its weights ({.code keep_weights = TRUE} / {.code keep_draws = TRUE})."),
               arg = "newx")
    }
    pr <- object$pred
  } else {
    if (is.null(object$weights)) {
      sb_abort(c("Predicting new inputs needs the weights of every draw.",
                 i = "Refit with {.code keep_weights = TRUE} ({.fn wbb_nn}) or {.code keep_draws = TRUE} ({.fn sgld_sa}), or pass {.arg newx} when fitting."), arg = "newx")
    }
    nd <- nn_prepare_x(newx, "newx")
    if (!identical(nd$shape, object$settings$input)) {
      sb_abort(c("{.arg newx} must have the example shape the network was trained on ({paste(object$settings$input, collapse = ' x ')}).",
                 x = "It has {paste(nd$shape, collapse = ' x ')}."), arg = "newx")
    }
    flat <- cpp_nn_predict(object$spec, t(object$weights[ok, , drop = FALSE]), nd$x, nd$dim,
                           isTRUE(object$settings$float64) || isTRUE(object$settings$control$float64))
    k <- if (object$family == "multinomial") length(object$levels) else object$settings$n_out %||% 1L
    pr <- aperm(array(flat, c(k, nd$n, sum(ok))), c(3L, 2L, 1L))
    if (k == 1L) pr <- matrix(pr, sum(ok), nd$n) else if (object$family == "multinomial") dimnames(pr) <- list(NULL, NULL, object$levels)
    ok <- rep(TRUE, sum(ok))
  }
  multi <- length(dim(pr)) == 3L
  prd <- if (multi) pr[ok, , , drop = FALSE] else pr[ok, , drop = FALSE]
  if (type == "draws") return(prd)
  m <- if (multi) apply(prd, c(2L, 3L), mean) else colMeans(prd)
  if (type == "prob") return(m)
  if (type == "class") {
    if (object$family == "gaussian") sb_abort("{.code type = \"class\"} needs a classification fit.", arg = "type")
    return(factor(object$levels[nn_class(m, object$family) + 1L], levels = object$levels))
  }
  a <- (1 - level) / 2
  if (multi) {
    lo <- apply(prd, c(2L, 3L), stats::quantile, a)
    hi <- apply(prd, c(2L, 3L), stats::quantile, 1 - a)
    return(list(mean = m, lower = lo, upper = hi))
  }
  data.frame(fit = m, lower = apply(prd, 2, stats::quantile, a), upper = apply(prd, 2, stats::quantile, 1 - a))
}

#' @rdname sb_wbb_nn-methods
#' @export
plot.sb_wbb_nn <- function(x, ...) {
  metric <- if (!is.null(x$accuracy)) x$accuracy else x$rmse
  if (is.null(metric)) {
    sb_abort(c("Nothing to plot: the fit has no test metric.", i = "Pass {.arg newx} and {.arg newy} to {.fn wbb_nn}."),
             arg = "x")
  }
  metric <- metric[x$status == "done"]
  lab <- if (!is.null(x$accuracy)) "test accuracy" else "test RMSE"
  d <- stats::density(metric, from = if (!is.null(x$accuracy)) 0 else min(metric),
                      to = if (!is.null(x$accuracy)) 1 else max(metric))
  graphics::plot(d, main = sprintf("WBB posterior of the %s (%d draws)", lab, length(metric)), xlab = lab, ...)
  graphics::polygon(d, col = grDevices::adjustcolor("firebrick", 0.2), border = "firebrick")
  graphics::rug(metric)
  invisible(x)
}

#' @rdname sb_wbb_nn-methods
#' @export
as.matrix.sb_nn_fit <- function(x, ...) {
  if (!is.null(x$weights)) return(x$weights[x$status == "done", , drop = FALSE])
  metric <- if (!is.null(x$accuracy)) cbind(accuracy = x$accuracy) else if (!is.null(x$rmse)) cbind(rmse = x$rmse)
  if (is.null(metric)) {
    sb_abort(c("This fit keeps neither weights nor a per-draw test metric.", i = "Use {.code keep_weights = TRUE} ({.fn wbb_nn}) or {.code keep_draws = TRUE} ({.fn sgld_sa}), with {.arg newy}."),
             arg = "x")
  }
  metric[x$status == "done", , drop = FALSE]
}

#' @export
as_draws_matrix.sb_nn_fit <- function(x, ...) posterior::as_draws_matrix(as.matrix(x))

#' @export
as_draws_df.sb_nn_fit <- function(x, ...) posterior::as_draws_df(as.matrix(x))
