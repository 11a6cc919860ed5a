# Adversarial robustness of a network posterior: the fast gradient sign method against the model average
# (Deng, Zhang, Liang & Lin 2019, section 5.3). Engine: inst/include/scalebayes/nn/adversarial.hpp.

#' Adversarial accuracy of a network posterior (FGSM against the model average)
#'
#' Attacks the Bayesian model average of the kept draws with the fast gradient sign method (Goodfellow,
#' Shlens and Szegedy 2015) and reports its accuracy on the perturbed inputs, as in section 5.3 of Deng,
#' Zhang, Liang and Lin (2019). With \eqn{\bar p(x) = T^{-1} \sum_t p(x; \theta_t)} the posterior-mean class
#' probabilities (softmax; binomial: the sigmoid and two-class cross-entropy), every input is moved to
#' \deqn{x_{adv} = \mathrm{clip}(x + \zeta\, \mathrm{sign}(\nabla_x L(x)))}{x_adv = clip(x + zeta * sign(grad_x L(x)))}
#' where \eqn{L(x) = -\log \bar p(x)[y]} is the cross-entropy of the model average at the clean input: the
#' gradient flows through every draw, so the attack targets the averaged predictor, not one network. The
#' networks are evaluated in prediction mode (no dropout; batch normalization with its running statistics).
#'
#' The authors' code (`tools/attacker.py` of their repository) differs in two ways, both available here: it
#' builds the adversarial images from one sampled network and then evaluates the ensemble of draws on them
#' (a transfer attack: `attack_draws = ` the index of that draw), and its loss is the paper's
#' \eqn{\max_y \log P(y \mid x)}, i.e. the predicted class rather than the true one (`label = "predicted"`).
#' For a single network (one draw) the source makes no difference; for a posterior the attack from one draw
#' is weaker against the average (measured in `vignette("sgld-sa-networks")`).
#'
#' A fit trained on standardized data (`standardize = TRUE`, the default) is attacked on the raw inputs: `x`,
#' `zeta`, `clip` and the returned inputs are on the scale of the data the fit was called with (the gradient
#' is taken through the stored transform).
#'
#' @param fit A network fit with kept draws ([wbb_nn()], or [sgld_sa()] with a `model`: kept by default);
#'   multinomial or binomial.
#' @param x Inputs with the example shape the network was trained on (matrix or array, examples first).
#' @param y True labels: values of the fit's classes (`fit$levels`), or 0/1 / logical for binomial fits.
#' @param zeta Perturbation sizes (non-negative; on the scale of `x`; at most 1e30).
#' @param clip The range the perturbed inputs are clipped to (`c(0, 1)` for images scaled to `[0, 1]`), or
#'   `NULL` for none. Finite bounds must lie within +-1e30 (the largest inputs a network takes); without
#'   clipping, `max(abs(x)) + max(zeta)` must too, so that no attacked image is infinite.
#' @param batch Examples per chunk (memory: one draw's forward and backward pass on `batch` examples).
#' @param keep_x Also return the adversarial inputs (a list, one array like `x` per `zeta`, as the
#'   attribute `"x_adv"`).
#' @param attack_draws `NULL` (default): the attack is the gradient of the model average of every kept draw.
#'   Otherwise indices of the completed draws (rows of `fit$weights` when none diverged) whose average builds
#'   the attack, e.g. `nrow(fit$weights)` for the last draw, as the authors did; every draw is still evaluated.
#' @param label `"true"` (default): the loss is the cross-entropy at the true label; `"predicted"`: at the
#'   class the attacking average predicts on the clean input (the paper's \eqn{\max_y \log P(y \mid x)}).
#' @return A data frame of class `sb_nn_adversarial` with one row per `zeta`: `zeta`, `accuracy` (of the model
#'   average on the perturbed inputs), `mean_draw_accuracy` (each draw's own accuracy on the same inputs,
#'   averaged over draws) and `n` (examples); attributes `draws`, `method`, `device`, `attack_draws` and
#'   `label`. `plot()` draws accuracy against `zeta`.
#' @references Deng, W., Zhang, X., Liang, F. and Lin, G. (2019). An adaptive empirical Bayesian method for
#'   sparse deep learning. *NeurIPS 32*.
#'
#'   Goodfellow, I. J., Shlens, J. and Szegedy, C. (2015). Explaining and harnessing adversarial examples.
#'   *ICLR*.
#' @export
#' @examples
#' if (sb_torch_available()) {
#'   set.seed(1)
#'   x <- matrix(runif(200 * 4), 200, 4)
#'   y <- factor(ifelse(x[, 1] > x[, 2], "a", "b"))
#'   fit <- wbb_nn(x, y, model = nn_mlp(8), draws = 4,
#'                 control = nn_control(epochs = 5), seed = 1)
#'   adv <- nn_adversarial(fit, x, y, zeta = c(0, 0.05, 0.1))
#'   print(adv)
#'   plot(adv)
#' }
nn_adversarial <- function(fit, x, y, zeta = c(0, 0.1, 0.2, 0.3, 0.4, 0.5), clip = c(0, 1), batch = 1000,
                           keep_x = FALSE, attack_draws = NULL, label = c("true", "predicted")) {
  call <- rlang::current_env()
  if (!inherits(fit, "sb_nn_fit")) {
    sb_abort(c("{.arg fit} must be a network fit ({.fn wbb_nn} or {.fn sgld_sa} with a {.arg model}).",
               x = "You supplied {.obj_type_friendly {fit}}."), arg = "fit", call = call)
  }
  if (is.null(.subset2(fit, "weights"))) {  # (fit$weights would decode every draw)
    sb_abort(c("{.arg fit} keeps no weights: the attack needs every draw's parameters.",
               i = "Refit with {.code keep_draws = TRUE} (the default)."),
             arg = "fit", call = call)
  }
  if (identical(fit$family, "gaussian")) {
    sb_abort(c("{.arg fit} is a regression (gaussian) network; adversarial accuracy needs a classifier.",
               i = "Fit a {.code \"multinomial\"} or {.code \"binomial\"} network."), arg = "fit", call = call)
  }
  if ((fit$settings$n_out %||% 1L) > 1L && !identical(fit$family, "multinomial")) {
    sb_abort(c("{.arg fit} has {fit$settings$n_out} binomial outputs; the attack needs one class per example.",
               i = "Fit a {.code \"multinomial\"} network or one with a single 0/1 output."), arg = "fit", call = call)
  }
  device <- check_backend("cpu", call)
  ok <- fit$status == "done"
  if (!any(ok)) sb_abort("{.arg fit} has no completed draw.", i = "Refit the network.", arg = "fit", call = call)
  xd <- nn_prepare_x(x, "x", call, warn_scale = is.null(fit$scaling))
  if (!identical(xd$shape, as.integer(fit$settings$input))) {
    sb_abort(c("{.arg x} must have the example shape the network was trained on ({paste(fit$settings$input, collapse = ' x ')}).",
               x = "It has {paste(xd$shape, collapse = ' x ')}.",
               i = "Pass inputs arranged like the training data (examples first)."), arg = "x", call = call)
  }
  yd <- nn_prepare_y(y, xd$n, fit$family, levels = fit$levels, arg = "y", call = call)
  if (!is.numeric(zeta) || !length(zeta) || anyNA(zeta) || any(!is.finite(zeta)) || any(zeta < 0)) {
    sb_abort(c("{.arg zeta} must be finite non-negative perturbation sizes.",
               x = "You supplied {.val {format(utils::head(zeta, 5))}}.",
               i = "Use e.g. {.code zeta = c(0, 0.1, 0.2)} (on the scale of {.arg x})."), arg = "zeta", call = call)
  }
  if (is.null(clip)) clip <- c(-Inf, Inf)
  if (!is.numeric(clip) || length(clip) != 2L || anyNA(clip) || clip[1] >= clip[2]) {
    sb_abort(c("{.arg clip} must be {.code NULL} or two numbers {.code c(lower, upper)} with lower < upper.",
               x = "You supplied {.val {format(clip)}}.", i = "Images scaled to [0, 1] use {.code clip = c(0, 1)}."),
             arg = "clip", call = call)
  }
  float64 <- isTRUE(fit$settings$float64) || isTRUE(fit$settings$control$float64)
  check_adversarial_range(xd$x, zeta, clip, call)
  batch <- check_count(batch, arg = "batch", max = 1e7, fix = "Use a smaller batch.")
  keep_x <- check_flag(keep_x)
  label <- sb_match_arg(label)
  n_ok <- sum(ok)
  if (!is.null(attack_draws) && (!is.numeric(attack_draws) || !length(attack_draws) || anyNA(attack_draws) ||
                                 any(attack_draws != round(attack_draws)) || any(attack_draws < 1 | attack_draws > n_ok) ||
                                 anyDuplicated(attack_draws))) {
    sb_abort(c("{.arg attack_draws} must be {.code NULL} or distinct indices of the fit's kept draws (1 to {n_ok}).",
               x = "You supplied {.val {format(utils::head(attack_draws, 5))}}.",
               i = "Use e.g. {.code attack_draws = {n_ok}} for the last draw."), arg = "attack_draws", call = call)
  }
  if (keep_x) check_result_size(length(zeta), length(xd$x), "zeta", call = call)
  dev <- if (!is.null(fit$device) && startsWith(fit$device, "cuda")) "cuda" else device
  # a standardized fit (R/nn_standardize.R): the attack is on the raw inputs. One global scale s: the same
  # attack on the training scale with perturbations zeta / s and clipping at (clip - m) / s; per-column scales:
  # the transform folded into the first layer of every draw, which then takes the raw inputs.
  sc <- fit$scaling
  params <- nn_engine_params(fit)
  x_eng <- xd
  zeta_eng <- as.double(zeta)
  clip_eng <- as.double(clip)
  if (!is.null(sc) && sc$x_global) {
    x_eng <- nn_scale_x(xd, sc)
    zeta_eng <- zeta_eng / sc$x_scale
    clip_eng <- (clip_eng - sc$x_center) / sc$x_scale
  } else if (!is.null(sc)) {
    g <- .subset2(fit, "param_groups")
    params <- nn_fold_params(params, fit$layers, g$group, g$size, fit$settings$input, sc, call = call)
  }
  res <- sb_call_engine(cpp_nn_adversarial(fit$spec, params, nn_engine_buffers(fit), x_eng$x, x_eng$dim, yd$y,
                                            zeta_eng, clip_eng, batch, dev, float64, keep_x,
                                            as.integer(attack_draws), label == "predicted"), call = call)
  out <- data.frame(zeta = as.double(zeta), accuracy = res$accuracy, mean_draw_accuracy = res$mean_draw_accuracy,
                    n = xd$n)
  attr(out, "draws") <- sum(ok)
  attr(out, "method") <- if (inherits(fit, "sb_wbb_nn")) "WBB" else fit$method %||% "network"
  attr(out, "device") <- res$device
  attr(out, "attack_draws") <- if (is.null(attack_draws)) seq_len(n_ok) else as.integer(attack_draws)
  attr(out, "label") <- label
  if (keep_x) {
    d <- xd$dim
    per <- length(xd$x)
    attr(out, "x_adv") <- lapply(seq_along(zeta), function(z) {
      a <- array(res$x_adv[(z - 1) * per + seq_len(per)], rev(d))  # row-major from the engine
      a <- aperm(a, rev(seq_along(d)))
      dim(a) <- dim(x)
      if (!is.null(sc) && sc$x_global) {  # the attacked inputs on the raw scale: x + s (x_adv_s - x_s), clipped
        x0 <- xd$x
        dim(x0) <- dim(x)
        a <- if (zeta[z] == 0) x0 else x0 + sc$x_scale * (a - (x0 - sc$x_center) / sc$x_scale)
        a <- pmin(pmax(a, clip[1]), clip[2])
      }
      a
    })
  }
  class(out) <- c("sb_nn_adversarial", "data.frame")
  out
}

#' @rdname nn_adversarial
#' @param ... Passed to [graphics::plot()].
#' @export
plot.sb_nn_adversarial <- function(x, ...) {
  y <- cbind(x$accuracy, x$mean_draw_accuracy)
  graphics::matplot(x$zeta, y, type = "b", pch = c(19, 1), lty = c(1, 2), col = c("firebrick", "grey40"),
                    ylim = c(0, 1), xlab = expression(zeta), ylab = "accuracy",
                    main = if (length(attr(x, "attack_draws") %||% 0L) < attr(x, "draws"))
                      sprintf("FGSM from %d of %d %s draws", length(attr(x, "attack_draws")), attr(x, "draws"),
                              attr(x, "method"))
                    else sprintf("FGSM against the %s model average (%d draws)", attr(x, "method"), attr(x, "draws")),
                    ...)
  graphics::legend("bottomleft", c("model average", "single draws (mean)"), pch = c(19, 1), lty = c(1, 2),
                   col = c("firebrick", "grey40"), bty = "n")
  invisible(x)
}

# The attacked images must be inputs a network can take: finite, and no larger than nn_prepare_x() accepts
# (1e30; single precision ends at 3.4e38). clip's finite bounds must lie within that range, and without
# clipping (clip = NULL: c(-Inf, Inf)) max |x| + max zeta too: x + zeta * sign(gradient) would otherwise be
# +-Inf, or so large that the network's outputs are, and the accuracies those of meaningless images.
check_adversarial_range <- function(x, zeta, clip, call = rlang::caller_env()) {
  lim <- 1e30
  fin <- clip[is.finite(clip)]
  if (length(fin) && max(abs(fin)) > lim) {
    sb_abort(c("{.arg clip} = c({format(clip[1])}, {format(clip[2])}) lies beyond the inputs a network takes (at most {format(lim)} in absolute value; single precision ends at 3.4e38).",
               i = "Use bounds within the range of the inputs, e.g. {.code clip = c(0, 1)} for images scaled to [0, 1]."),
             arg = "clip", call = call)
  }
  if (max(zeta) > lim) {
    sb_abort(c("{.arg zeta} = {format(max(zeta), digits = 3)} is beyond the inputs a network takes (at most {format(lim)}).",
               i = "Use perturbations on the scale of {.arg x}."), arg = "zeta", call = call)
  }
  if (!all(is.finite(clip)) && max(abs(x)) + max(zeta) > lim) {
    sb_abort(c("{.arg zeta} up to {format(max(zeta), digits = 3)} would push the inputs beyond {format(lim)} without clipping: the attacked images would overflow the network.",
               i = "Use smaller perturbations (on the scale of {.arg x}), or bound the images with {.arg clip}."),
             arg = "zeta", call = call)
  }
  invisible(NULL)
}
