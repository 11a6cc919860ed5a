# The one network-fit object (inst/design-nn.md, "One fit object"). Every method that produces networks
# (wbb_nn(), sgld_sa() with a model, and the methods to come) builds its fit with new_sb_nn_fit(), so every
# network fit answers the same generics: print, summary, plot, predict (on new data), coef, as.matrix,
# as_draws_matrix / as_draws_df / as_draws_array, posterior_interval, nobs, and nn_export(). The draw generics
# (as.matrix, as_draws_*, posterior_interval) and nobs are sb_fit's (R/draws-methods.R), which read a network
# fit's draws through sb_draw_matrix() / sb_draw_chain() below.
#
# Kept draws are stored compactly: float32 unless the network was trained in float64 (`sb_nn_store`: the
# bytes and the dimensions), and without column names (names are made on demand from the parameter groups).
# `fit$weights` / `fit$buffers` / `fit$weights_final` decode them ($.sb_nn_fit); `fit[["weights"]]` is the
# stored form.

# ---- compact storage -------------------------------------------------------------------------------------

# m: a P x draws matrix (one column per draw, the engine's layout: no transposition on the way in or to the
# engine). `dim` is kept as draws x P, the user's view.
nn_pack <- function(m, float64 = FALSE) {
  if (is.null(m) || inherits(m, "sb_nn_store")) return(m)
  d <- rev(dim(m) %||% c(length(m), 1L))
  if (float64) return(structure(list(values = as.double(m), dim = d), class = "sb_nn_store"))
  structure(list(raw = writeBin(as.double(m), raw(), size = 4L, endian = "little"), dim = d),
            class = "sb_nn_store")
}

# A store from the engine's kept draws: float32 bytes (a raw vector, what a float32 network's engine call
# returns: stored as they are) or doubles (a float64 network), `n` values per draw.
nn_store_engine <- function(v, n, draws) {
  if (is.raw(v)) return(structure(list(raw = v, dim = c(draws, n)), class = "sb_nn_store"))
  structure(list(values = as.double(v), dim = c(draws, n)), class = "sb_nn_store")
}

# The engine's layout (P x draws) of a store, or draws x P named (`engine = FALSE`, the user's view).
nn_unpack <- function(s, names = NULL, engine = FALSE) {
  if (!inherits(s, "sb_nn_store")) return(s)
  n <- prod(s$dim)
  v <- if (is.null(s$raw)) s$values else readBin(s$raw, "double", n = n, size = 4L, endian = "little")
  m <- matrix(v, s$dim[2], s$dim[1])
  if (engine) return(m)
  m <- t(m)
  if (!is.null(names) && length(names) == ncol(m)) colnames(m) <- names
  m
}

# Kept, finished draws in the engine's layout (P x draws) for the engine's entry points; buffers: B x draws, or
# a 0 x 0 matrix for a network without batch norm.
# (A plain draws x values matrix in the field, as in fits of earlier versions or set by hand, works too.)
nn_engine_params <- function(fit) nn_engine_layout(.subset2(fit, "weights"), fit$status == "done")
nn_engine_buffers <- function(fit) {
  b <- nn_engine_layout(.subset2(fit, "buffers"), fit$status == "done")
  if (is.null(b) || !nrow(b)) matrix(0, 0, 0) else b
}
nn_engine_layout <- function(s, ok) {
  if (is.null(s)) return(NULL)
  m <- if (inherits(s, "sb_nn_store")) nn_unpack(s, engine = TRUE) else t(unname(as.matrix(s)))
  m[, ok, drop = FALSE]
}

nn_store_bytes <- function(s) {
  if (!inherits(s, "sb_nn_store")) return(0)
  if (is.null(s$raw)) 8 * length(s$values) else length(s$raw)
}

# Per-parameter values of some groups whose names are made on access (`$.sb_nn_fit`): `values` (a vector, or a data
# frame that gets a first column `parameter`) for the parameters of the groups in `groups` (logical, one per
# parameter group), in the engine's order. Naming millions of parameters costs seconds, so a fit pays it only
# when the field is read.
nn_lazy_names <- function(values, groups) structure(list(values = values, groups = groups), class = "sb_nn_lazy_names")

nn_lazy_decode <- function(fit, v) {
  g <- .subset2(fit, "param_groups")
  nm <- nn_param_names(list(group = g$group[v$groups], size = g$size[v$groups]))
  if (is.data.frame(v$values)) return(cbind(data.frame(parameter = nm, stringsAsFactors = FALSE), v$values))
  stats::setNames(v$values, nm)
}

#' @export
`$.sb_nn_fit` <- function(x, name) {
  v <- .subset2(x, name)
  if (inherits(v, "sb_nn_lazy_names")) return(nn_lazy_decode(x, v))
  if (!inherits(v, "sb_nn_store")) return(v)
  nn_unpack(v, switch(name, buffers = , buffers_final = nn_buffer_names(x), nn_fit_param_names(x)))
}

# Parameter names "group[i]" in the engine's order (Net::copy_to), made on demand.
nn_fit_param_names <- function(fit) {
  g <- .subset2(fit, "param_groups")
  nn_param_names(list(group = g$group, size = g$size))
}
nn_buffer_names <- function(fit) {
  g <- .subset2(fit, "buffer_groups")
  if (is.null(g) || !length(g$group)) return(character())
  nn_param_names(list(group = g$group, size = g$size))
}

# ---- the constructor ---------------------------------------------------------------------------------------

# weights / buffers: parameters (buffer values) x draws matrices of the kept draws, one column per draw in the
# engine's order (NULL: not kept); status: a
# factor per kept draw ("done", "diverged", "interrupted", "not run"); chain: chain of each kept draw (NULL:
# one); pred: draws x examples [x outputs] predictions on the fit's newx; pred_mean: the posterior predictive
# mean there; newy: the test responses (0-based classes for classification); details: method-specific lines
# for print(); training: a data frame (draw or chain, epoch or iteration, loss, accuracy) of the training
# history; weights_mean: the posterior mean of every parameter when it is known without the kept draws;
# scaling: the transform the network was trained under (R/nn_standardize.R; NULL: none), with pred and
# pred_mean already on the user's scale.
new_sb_nn_fit <- function(subclass, method, weights, buffers = NULL, status, chain = NULL, pred = NULL,
                          pred_mean = NULL, newy = NULL, family, levels, model, layers, spec, desc, settings, seed,
                          call, device, timing, details = character(), training = NULL, weights_mean = NULL,
                          float64 = FALSE, scaling = NULL, ...) {
  ok <- status == "done"
  fit <- list(
    method = method, weights = nn_pack(weights, float64), buffers = nn_pack(buffers, float64),
    weights_mean = if (!is.null(weights_mean)) unname(weights_mean),
    status = status, chain = chain, pred = pred, pred_mean = pred_mean, newy = newy,
    family = family, levels = levels, model = model, layers = layers, spec = spec,
    n_parameters = desc$n_parameters,
    param_groups = list(group = desc$group, size = desc$size, penalized = desc$penalized),
    buffer_groups = list(group = desc$buffer %||% character(), size = desc$buffer_size %||% numeric()),
    training = training, details = details, seed = seed, call = call, device = device,
    settings = c(settings, list(float64 = float64)), timing = timing, scaling = scaling, ...
  )
  if (!is.null(newy) && !is.null(pred_mean)) {
    if (family == "gaussian") {
      fit$rmse_mean <- sqrt(mean((pred_mean - newy)^2))
    } else {
      fit$accuracy_mean <- mean(nn_class(pred_mean, family) == newy)  # binomial q: over examples and outputs
    }
    if (!is.null(pred)) {
      metric <- if (family == "gaussian") nn_rmse(pred, newy) else nn_accuracy(pred, newy, family)
      metric[!ok] <- NA
      fit[[if (family == "gaussian") "rmse" else "accuracy"]] <- metric
    }
  }
  structure(fit, class = c(subclass, "sb_nn_fit", "sb_fit"))
}

# The kept, finished draws of the weights (draws x parameters, named), or NULL when none were kept.
nn_fit_draws <- function(fit) {
  w <- fit$weights
  if (is.null(w)) return(NULL)
  w[fit$status == "done", , drop = FALSE]
}

nn_need_draws <- function(fit, what, arg = "x", call = rlang::caller_env()) {
  w <- nn_fit_draws(fit)
  if (is.null(w)) {
    sb_abort(c("{what} needs the kept draws of the weights, and this fit kept none.",
               i = "Refit with {.code keep_draws = TRUE} (the default)."), kind = "state", arg = arg, call = call)
  }
  if (!nrow(w)) {
    sb_abort(c("{what} needs at least one finished draw; this fit has none.",
               i = "Every draw diverged or the run was interrupted before the first kept draw; see {.code print(fit)}."),
             kind = "state", arg = arg, call = call)
  }
  w
}

# ---- print ---------------------------------------------------------------------------------------------

nn_arch_string <- function(tab, input) {
  one <- function(i) {
    r <- tab[i, ]
    switch(r$kind,
           linear = sprintf("dense %d", r$out),
           conv2d = sprintf("conv %d@%dx%d", r$out, r$kernel, r$kernel),
           conv1d = sprintf("conv1d %d@%d", r$out, r$kernel),
           maxpool2d = sprintf("maxpool %d", r$kernel), avgpool2d = sprintf("avgpool %d", r$kernel),
           dropout = sprintf("dropout %g", r$rate), batchnorm = "batchnorm",
           r$kind)
  }
  paste(c(paste(input, collapse = "x"), vapply(seq_len(nrow(tab)), one, "")), collapse = " > ")
}

nn_format_bytes <- function(b) {
  if (b < 1024) sprintf("%.0f bytes", b) else if (b < 1024^2) sprintf("%.0f kB", b / 1024) else if (b < 1024^3) sprintf("%.1f MB", b / 1024^2) else sprintf("%.2f GB", b / 1024^3)
}

#' @export
print.sb_nn_fit <- function(x, ...) {
  s <- x$settings
  sgmcmc_print_diverged(x)  # SG-MCMC chains (R/sgmcmc_checks.R); NULL for the other network fits
  cat(sprintf("<%s> %s posterior of a network (%s parameters), %s, on %s\n", class(x)[1], x$method,
              format(x$n_parameters, big.mark = ","), x$family, x$device))
  cat("  network: ", nn_arch_string(x$layers, s$input), "\n", sep = "")
  if (!is.null(x$scaling)) cat("  scale: ", nn_scaling_line(x$scaling), "\n", sep = "")
  for (l in x$details) cat("  ", l, "\n", sep = "")
  tab <- table(x$status)
  tab <- tab[tab > 0]
  st <- if (length(tab)) paste(tab, names(tab), collapse = ", ") else "none"
  cat("  draws: ", st, if (any(names(tab) != "done")) " (only done draws enter the summaries)", "\n", sep = "")
  w <- .subset2(x, "weights")
  if (!is.null(w)) {
    cat(sprintf("  kept: %d x %s weights (%s, %s); opt out with keep_draws = FALSE\n", w$dim[1],
                format(w$dim[2], big.mark = ","), if (is.null(w$raw)) "float64" else "float32",
                nn_format_bytes(nn_store_bytes(w) + nn_store_bytes(.subset2(x, "buffers")))))
  } else {
    cat("  kept: no weights (keep_draws = FALSE): predict() works on the fit's newx only\n")
  }
  d <- .subset2(x, "data")
  if (!is.null(d)) {
    cat(sprintf("  data: %s training examples kept for fitted(), log_lik(), ... (%s; drop with fit$data <- NULL)\n",
                format(NROW(d$y), big.mark = ","), nn_format_bytes(as.double(utils::object.size(d)))))
  }
  tr <- x$training
  if (!is.null(tr) && nrow(tr)) {
    unit <- names(tr)[1]
    last <- tr[!duplicated(tr[[unit]], fromLast = TRUE), , drop = FALSE]
    acc <- mean(last$accuracy, na.rm = TRUE)
    cat(sprintf("  training (last %s of each %s): loss %.4g%s\n", names(tr)[2], unit, mean(last$loss, na.rm = TRUE),
                if (is.finite(acc)) sprintf(", accuracy %.4f", acc) else ""))
  }
  va <- .subset2(x, "validation")  # nn_control(validation = ): R/nn_control.R
  if (!is.null(va) && !is.null(tr) && !is.null(tr$val_loss)) cat(nn_validation_line(va, tr), "\n", sep = "")
  ok <- x$status == "done"
  if (!is.null(x$accuracy) && any(ok)) {
    a <- x$accuracy[ok]
    q <- stats::quantile(a, c(0.025, 0.975), names = FALSE)
    cat(sprintf("  test accuracy per draw: mean %.4f, 95%% interval [%.4f, %.4f]\n", mean(a), q[1], q[2]))
  }
  if (!is.null(x$rmse) && any(ok)) {
    a <- x$rmse[ok]
    q <- stats::quantile(a, c(0.025, 0.975), names = FALSE)
    cat(sprintf("  test RMSE per draw: mean %.4g, 95%% interval [%.4g, %.4g]\n", mean(a), q[1], q[2]))
  }
  if (!is.null(x$accuracy_mean)) cat(sprintf("  test accuracy of the posterior predictive mean: %.4f\n", x$accuracy_mean))
  if (!is.null(x$rmse_mean)) cat(sprintf("  test RMSE of the posterior predictive mean: %.4g\n", x$rmse_mean))
  state <- if (isTRUE(x$interrupted)) " (interrupted: the fit holds the state reached)" else ""
  cat(sprintf("  time %.1f s%s\n", x$timing[["elapsed"]], state))
  invisible(x)
}

# ---- draws generics --------------------------------------------------------------------------------------

#' Methods for network fits
#'
#' Every network fit (class `sb_nn_fit`: [wbb_nn()], [sgld_sa()] with a `model`) answers the generics of every
#' scalebayes fit. The posterior draws are the network's parameters (weights, biases, batch-norm scales), one
#' row per kept draw, named `"<group>[i]"` in the engine's order (the group names are those of
#' `print(model, input = , output = )`); they are kept by default (float32 unless the network was trained in
#' float64; `keep_draws = FALSE` opts out).
#'
#' * `coef()`: the posterior mean (or median) of every parameter.
#' * `as.matrix()`, `as_draws_matrix()`, `as_draws_df()`, `as_draws_array()`: the kept draws (chains kept for
#'   [sgld_sa()]). Without kept weights they hold the per-draw test metric and training objective instead.
#' * `posterior_interval()`: central intervals of the parameters.
#' * These draw methods, and `nobs()`, are those of every scalebayes fit ([sb_fit-methods]), which read a network
#'   fit's finished kept draws; chains are numbered 1..K over the chains that finished.
#' * `summary()`: the posterior of the test accuracy (or RMSE), the accuracy of the posterior-mean predictor,
#'   per-example predictive summaries (predicted class, its probability and credible interval, predictive
#'   entropy), and per-tensor summaries of the parameters.
#' * `predict()`: on the fit's `newx` (stored at fit time) or on any new inputs (from the kept draws), one or many,
#'   in the shape of every fit's `predict()` (described in one place, [predict.sb_fit()], "Network fits"): a data
#'   frame of `fit`, `se`, `lower`, `upper` per example (plus the predicted `class` for classification; each
#'   column an examples x classes matrix for a multinomial network), or with `draws = TRUE` the draws x examples
#'   matrix (draws x examples x classes array). `type = "class"` gives the predicted classes.
#' * `vcov()`: the posterior covariance of the kept parameter draws (parameters x parameters: large for big
#'   networks). `ndraws()`: the number of finished draws.
#' * `fitted()`, `residuals()`, `log_lik()`, `posterior_linpred()`, `posterior_epred()`, `posterior_predict()`,
#'   `predictive_interval()` ([sb_fit-generics]): at the training data, or at `newdata` (a data frame holding the
#'   response for a fit of a formula; otherwise the inputs, with `newy` where responses are needed), from the kept
#'   draws, so that `loo::loo(log_lik(fit))` and `bayesplot::ppc_dens_overlay(y, posterior_predict(fit))` work as
#'   for the linear fits. Networks with several gaussian or binomial outputs per example are not scored by them
#'   (a classed error; `predict(draws = TRUE)` has their draws).
#'
#' **Training data.** Every network fit keeps its training inputs and responses as the front end got them
#' (`fit$data`, a list of `x` and `y`: the design matrix of a formula). R does not copy them: while the data
#' given to the fit exist in the session, the fit shares their memory, and the fit's own cost is that of the
#' data when it is saved (`saveRDS()`) or when the data are removed from the session: 8 bytes per value of double
#' inputs (376 MB for the 60,000 MNIST training images of 784 pixels, 188 MB as the integers [mnist()] reads with `scale = FALSE`),
#' 16 kB for the 60-row design of a `medv ~ .` formula on Boston. `print()` shows the size; `fit$data <- NULL` drops them (the generics then need `newdata`). The
#' generics at the training data predict every training example with every kept draw (draws x examples, x classes
#' for a multinomial network).
#' * `plot()`: the posterior of the test metric, the training history, or the marginals of parameters.
#'
#' A network trained on standardized data (`standardize = TRUE`, the default of [wbb_nn()], [sgld_sa()],
#' [bbb()], [sparse_vi()]) has its parameters on that scale (`coef()`, `as.matrix()`, `posterior_interval()`
#' and the training history describe the network on standardized data), while `predict()` takes raw inputs
#' (the stored transform `fit$scaling` is applied) and returns predictions on the user's scale, as are the
#' stored predictions and test metrics. [nn_export()] folds the transform into the exported network.
#'
#' @param x,object A network fit.
#' @param pars Parameter names or indices (default all; `plot()` shows at most 16).
#' @param type `coef()`: `"mean"` or `"median"`. `predict()`: `"response"` (default: the mean for gaussian, the
#'   class probabilities for classification), `"link"` (gaussian: the same; binomial: the log-odds; not for a
#'   multinomial network) or `"class"` (the most probable class under the posterior predictive mean, a factor):
#'   the rule of every fit, [predict-types].
#'   `"draws"` is `draws = TRUE` (kept); `"interval"` and `"prob"` (the default's old names) work for one release
#'   with a warning. `plot()`: `"metric"`
#'   (posterior of the test accuracy or RMSE; needs `newy` at fit time), `"training"` (loss and accuracy per
#'   epoch of every draw, or per trace point of every chain) or `"weights"` (marginal histograms).
#' @param newdata New inputs with the example shape the network was trained on (a data frame for a fit of a
#'   formula); `NULL`: the fit's `newx`.
#' @param newx Synonym of `newdata`.
#' @param interval `predict()`: `"credible"` (the posterior of the mean or probability) or `"prediction"` (of a
#'   new observation: gaussian noise with each draw's noise sd, see [sb_fit-generics], or Bernoulli draws; not
#'   for a multinomial network).
#' @param prob Mass of the central intervals (the name in every method, as in rstantools).
#' @param level Deprecated name of `prob` (works for one release, with a warning).
#' @param draws `predict()`: `TRUE` gives the draws x examples matrix (draws x examples x classes array for a
#'   multinomial network) instead of the data frame, as every fit's `predict()`.
#' @param ... Unused; a misspelled argument is an error (class `scalebayes_error_dots`).
#' @return See the list above.
#' @name sb_nn_fit-methods
NULL

#' @rdname sb_nn_fit-methods
#' @export
coef.sb_nn_fit <- function(object, type = c("mean", "median"), ...) {
  sb_check_dots(...)
  type <- sb_match_arg(type)
  w <- nn_fit_draws(object)
  if (is.null(w) || !nrow(w)) {
    m <- object$weights_mean
    if (type == "mean" && !is.null(m)) return(stats::setNames(m, nn_fit_param_names(object)))
    w <- nn_need_draws(object, "coef()", arg = "object")
  }
  if (type == "mean") colMeans(w) else apply(w, 2, stats::median)
}

# The per-draw quantities of a fit without kept weights.
nn_draw_metrics <- function(x) {
  ok <- x$status == "done"
  cols <- list(accuracy = x$accuracy, rmse = x$rmse, objective = x$objective)
  cols <- Filter(function(v) !is.null(v) && length(v) == length(ok), cols)
  if (!length(cols)) return(NULL)
  do.call(cbind, cols)[ok, , drop = FALSE]
}

nn_draws_or_metrics <- function(x, pars, call = rlang::caller_env()) {
  w <- nn_fit_draws(x)
  if (is.null(w)) {
    w <- nn_draw_metrics(x)
    if (is.null(w)) nn_need_draws(x, "This method", call = call)
  } else if (!nrow(w)) {
    nn_need_draws(x, "This method", call = call)
  }
  select_pars(w, pars)
}

# The draws of the generics defined once for every fit (R/draws-methods.R): the finished kept draws, or the per-draw
# metrics when no weights were kept; chains numbered 1..K over the finished draws.
sb_draw_matrix.sb_nn_fit <- function(x, pars, call, fn, ...) {
  sb_check_dots(..., fn = fn, call = call)
  nn_draws_or_metrics(x, pars, call = call)
}
sb_draw_chain.sb_nn_fit <- function(x, n) {
  chain <- x$chain
  if (is.null(chain) || is.null(nn_fit_draws(x))) return(rep(1L, n))
  chain <- chain[x$status == "done"]
  match(chain, sort(unique(chain)))
}

#' @rdname sb_nn_fit-methods
#' @export
vcov.sb_nn_fit <- function(object, ...) {
  sb_check_dots(..., fn = "vcov")
  w <- nn_need_draws(object, "vcov()", arg = "object")
  if (nrow(w) < 2L) sb_abort("{.fn vcov} needs at least 2 finished draws.", kind = "state")
  stats::cov(w)
}

# ---- summary ---------------------------------------------------------------------------------------------

#' @rdname sb_nn_fit-methods
#' @export
summary.sb_nn_fit <- function(object, ..., prob = 0.95, level = NULL) {
  sb_check_dots(..., fn = "summary")
  level <- sb_interval_prob(prob, missing(prob), level, NULL, "summary")
  if (length(object$status)) check_nn_fit_done(object)  # draws, none completed: a classed error (R/validate.R)
  ok <- object$status == "done"
  a <- (1 - level) / 2
  out <- list(draws = sum(ok), level = level, family = object$family, label = object$method)
  metric <- if (!is.null(object$accuracy)) object$accuracy[ok] else if (!is.null(object$rmse)) object$rmse[ok]
  if (length(metric)) {
    out$metric_name <- if (!is.null(object$accuracy)) "accuracy" else "rmse"
    out$metric <- c(mean = mean(metric), sd = stats::sd(metric), stats::quantile(metric, c(a, 0.5, 1 - a)))
  }
  out$mean_predictor <- if (!is.null(object$accuracy_mean)) c(accuracy = object$accuracy_mean)
                        else if (!is.null(object$rmse_mean)) c(rmse = object$rmse_mean)
  w <- nn_fit_draws(object)
  if (!is.null(w) && nrow(w)) {
    g <- .subset2(object, "param_groups")
    grp <- rep(seq_along(g$group), g$size)
    per <- lapply(seq_along(g$group), function(k) w[, grp == k, drop = FALSE])
    out$parameters <- data.frame(
      tensor = g$group, size = g$size,
      mean_abs = vapply(per, function(m) mean(abs(colMeans(m))), 0),
      mean_sd = vapply(per, function(m) if (nrow(m) > 1) mean(apply(m, 2, stats::sd)) else NA_real_, 0),
      share_zero = vapply(per, function(m) mean(m == 0), 0),
      row.names = NULL)
  }
  q_out <- object$settings$n_out %||% 1L
  pm <- object$pred_mean
  if (!is.null(object$pred) && any(ok) && (object$family == "multinomial" || (object$family == "binomial" && q_out == 1L))) {
    pmm <- if (object$family == "multinomial") pm else cbind(1 - pm, pm)
    cls <- nn_class(pm, object$family) + 1L
    p_cls <- pmm[cbind(seq_len(nrow(pmm)), cls)]
    draws_cls <- if (object$family == "multinomial") {
      vapply(seq_along(cls), function(i) object$pred[ok, i, cls[i]], numeric(sum(ok)))
    } else {
      pr <- object$pred[ok, , drop = FALSE]
      pr[, cls == 1] <- 1 - pr[, cls == 1]
      pr
    }
    draws_cls <- matrix(draws_cls, nrow = sum(ok))
    q <- apply(draws_cls, 2, stats::quantile, probs = c(a, 1 - a), names = FALSE)
    ent <- -rowSums(ifelse(pmm > 0, pmm * log(pmm), 0))
    lev <- if (is.null(object$levels)) c("0", "1") else object$levels
    out$examples <- data.frame(class = factor(lev[cls], levels = lev), prob = p_cls, lower = q[1, ], upper = q[2, ],
                               entropy = ent, correct = if (!is.null(object$newy)) cls - 1L == object$newy else NA)
  }
  structure(out, class = "summary_sb_nn_fit")
}

#' @export
print.summary_sb_nn_fit <- function(x, ...) {
  cat(sprintf("%s network posterior: %d finished draws, %s\n", x$label, x$draws, x$family))
  if (!is.null(x$metric)) {
    cat(sprintf("Test %s per draw:\n", x$metric_name))
    print(round(x$metric, 4))
  }
  if (!is.null(x$mean_predictor)) {
    cat(sprintf("Posterior predictive mean: test %s %.4f\n", names(x$mean_predictor), x$mean_predictor))
  }
  if (!is.null(x$parameters)) {
    cat("Parameters by tensor (mean |posterior mean|, mean posterior sd, share exactly zero):\n")
    p <- x$parameters
    num <- vapply(p, is.double, logical(1))
    p[num] <- lapply(p[num], signif, 3)
    print(p, row.names = FALSE)
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

# ---- predict ---------------------------------------------------------------------------------------------

#' @rdname sb_nn_fit-methods
#' @export
predict.sb_nn_fit <- function(object, newdata = NULL, ..., type = c("response", "link", "class"), draws = FALSE,
                              interval = c("credible", "prediction"), newx = NULL, prob = 0.95, level = NULL) {
  sb_check_dots(..., fn = "predict")
  call <- rlang::current_env()
  prob <- sb_interval_prob(prob, missing(prob), level, NULL, "predict")
  draws <- sb_check_draws_flag(draws)
  # kept values of `type`: "draws" is draws = TRUE (no warning); "prob" and "interval" are deprecated (the
  # default now gives the mean and the interval)
  if (is.character(type) && length(type) == 1L && !is.na(type)) {
    if (type == "draws") {
      draws <- TRUE
      type <- "response"
    } else if (type %in% c("prob", "interval")) {
      sb_deprecated(paste0("type = \"", type, "\""), "type = \"response\"", "predict", what = "value")
      type <- "response"
    }
  }
  type <- sb_match_arg(type)
  interval <- sb_match_arg(interval, partial = TRUE)
  fam <- object$family
  if (type == "class" && fam == "gaussian") {
    sb_abort("{.code type = \"class\"} needs a classification fit; this one is gaussian.", arg = "type")
  }
  if (type == "class" && draws) sb_class_no_draws(call)
  if (type == "link" && fam == "multinomial") {
    sb_not_applicable(c("A multinomial network has no single linear predictor per example.",
                        i = "Use {.code type = \"response\"} for the class probabilities."), arg = "type")
  }
  if (interval == "prediction" && fam == "multinomial") {
    sb_not_applicable(c("A prediction interval of a class label is not defined.",
                        i = "Use {.fn posterior_predict} for draws of the class, or the credible interval of its probability."),
                      arg = "interval")
  }
  # newdata or newx; a data frame of a formula fit becomes its design (R/generics.R, the one helper of every fit)
  nd <- sb_newdata(object, newdata, newx)
  pr <- nn_predict_draws(object, nd, call = call)  # draws x examples [x outputs], response scale, or NULL
  need <- draws || type == "link" || interval == "prediction"
  if (is.null(pr) && need) {
    what <- if (draws) "{.code draws = TRUE}" else if (type == "link") "{.code type = \"link\"}" else "{.code interval = \"prediction\"}"
    sb_abort(c(paste(what, "needs per-draw predictions, and this fit kept none."),
               i = "Refit with {.code keep_draws = TRUE} (the default), or pass {.arg newdata} when fitting."),
             arg = "newdata", kind = "state")
  }
  mean_resp <- if (is.null(pr)) object$pred_mean else nn_draws_mean(pr)
  as_class <- function(m) factor(object$levels[nn_class(m, fam) + 1L], levels = object$levels)
  if (type == "class") return(as_class(mean_resp))
  if (interval == "prediction") pr <- sb_draw_response(object, pr, NULL, call = call)
  else if (type == "link" && fam == "binomial") pr <- stats::qlogis(pr)
  if (draws) return(pr)
  nn_predict_frame(pr, if (is.null(pr)) mean_resp, prob, if (fam != "gaussian") as_class(mean_resp))
}

# Response-scale predictions of the finished draws: at new inputs (from the kept weights), or the stored ones at
# the fit's newx (NULL when the fit kept only their mean).
nn_predict_draws <- function(object, nd, call = rlang::caller_env(), warn_scale = TRUE) {
  ok <- object$status == "done"
  if (is.null(nd)) {
    if (is.null(object$pred_mean)) {
      sb_abort(c("This fit has no stored predictions.", i = "Pass {.arg newdata} here (or {.arg newx} when fitting)."),
               arg = "newdata", call = call)
    }
    pr <- object$pred
    if (is.null(pr)) return(NULL)
  } else {
    arg <- attr(nd, "sb_arg") %||% "newdata"
    attr(nd, "sb_arg") <- NULL
    w <- nn_need_draws(object, "Predicting new inputs", arg = arg, call = call)
    # one example: a vector of the features (or one image, without the examples dimension)
    input <- object$settings$input
    if (!is.data.frame(nd) && is.numeric(nd) && length(nd) == prod(input) &&
        (identical(as.integer(dim(nd)), as.integer(input)) || (is.null(dim(nd)) && length(input) == 1L))) {
      nd <- array(nd, c(1L, input))
    }
    sc <- object$scaling
    x <- nn_prepare_x(nd, arg, warn_scale = warn_scale && is.null(sc), call = call)
    if (!identical(x$shape, object$settings$input)) {
      sb_abort(c("{.arg {arg}} must have the example shape the network was trained on ({paste(object$settings$input, collapse = ' x ')}).",
                 x = "It has {paste(x$shape, collapse = ' x ')}."), arg = arg, call = call)
    }
    x <- nn_scale_x(x, sc)  # the training scale (R/nn_standardize.R)
    flat <- sb_call_engine(cpp_nn_predict(object$spec, nn_engine_params(object), nn_engine_buffers(object), x$x,
                                          x$dim, isTRUE(object$settings$float64)), call = call)
    k <- if (object$family == "multinomial") length(object$levels) else object$settings$n_out %||% 1L
    return(nn_decode_pred(flat, k, x$n, nrow(w), object$family, object$levels, sc))
  }
  if (length(dim(pr)) == 3L) pr[ok, , , drop = FALSE] else pr[ok, , drop = FALSE]
}

nn_draws_mean <- function(pr) if (length(dim(pr)) == 3L) apply(pr, c(2L, 3L), mean) else colMeans(pr)

# ---- The one decoder of the engine's network results (wbb_nn(), sgld_sa() networks, bbb() / sparse_vi(),
# predict()) ------------------------------------------------------------------------------------------------------

nn_status_levels <- c("done", "diverged", "interrupted", "not run")
# The engine's status codes (0 not run, 1 done, 2 diverged, 3 interrupted) as a fit's factor.
nn_decode_status <- function(code) {
  factor(c("not run", "done", "diverged", "interrupted")[code + 1L], levels = nn_status_levels)
}

# Predictions as the engine writes them (draw by draw, example by example, the outputs innermost) in a fit's shape
# (nn_shape_pred()).
nn_decode_pred <- function(flat, n_out, n, draws, family, levels, scaling) {
  nn_shape_pred(aperm(array(flat, c(n_out, n, draws)), c(3L, 2L, 1L)), family, levels, scaling)
}
# draws x examples x outputs as a fit holds them: draws x examples for one output, the classes naming the third
# dimension of a multinomial network; on the user's scale (R/nn_standardize.R).
nn_shape_pred <- function(pr, family, levels, scaling) {
  d <- dim(pr)
  if (d[3L] == 1L) {
    pr <- matrix(pr, d[1L], d[2L])
  } else if (family == "multinomial") {
    dimnames(pr) <- list(NULL, NULL, levels)
  }
  nn_unscale_pred(pr, scaling)
}
# The predictive mean over the draws marked `ok`.
nn_pred_mean <- function(pr, ok) {
  nn_draws_mean(if (length(dim(pr)) == 3L) pr[ok, , , drop = FALSE] else pr[ok, , drop = FALSE])
}

# The kept draws of the parameters and buffers, from the engine's blocks of P (B) values per draw (float32 bytes
# for a float32 network, stored as they are).
nn_decode_store <- function(params, buffers, desc, draws) {
  B <- sum(desc$buffer_size %||% 0)
  list(weights = nn_store_engine(params, desc$n_parameters, draws),
       buffers = if (B > 0) nn_store_engine(buffers, B, draws))
}

# The checks every network front end starts with: a network spec, and the family (NULL: from the response).
nn_check_model_family <- function(model, family, call) {
  if (!inherits(model, "sb_nn_spec")) {
    sb_abort(c("{.arg model} must be a network made by {.fn nn_sequential}, {.fn nn_mlp} or {.fn nn_cnn}.",
               x = "You supplied {.obj_type_friendly {model}}."), arg = "model", call = call)
  }
  if (!is.null(family)) family <- sb_match_arg(family, c("multinomial", "binomial", "gaussian"), call = call)
  family
}

# predict()'s one shape (as every fit's: ?predict.sb_fit): a data frame with one row per example and columns fit,
# se, lower, upper (the draws' mean, sd and central interval of mass prob); several outputs (the classes of a
# multinomial network) make each column an examples x outputs matrix; classification adds the predicted class.
# pr: draws x examples [x outputs], or NULL with `mean` (the stored mean only: se, lower, upper NA).
nn_predict_frame <- function(pr, mean, prob, class = NULL) {
  a <- (1 - prob) / 2
  if (is.null(pr)) {
    na <- mean
    na[] <- NA_real_
    cols <- list(fit = mean, se = na, lower = na, upper = na)
  } else {
    over <- if (length(dim(pr)) == 3L) c(2L, 3L) else 2L
    q <- function(p) apply(pr, over, stats::quantile, p, names = FALSE)
    cols <- list(fit = nn_draws_mean(pr), se = apply(pr, over, stats::sd), lower = q(a), upper = q(1 - a))
  }
  cols <- lapply(cols, function(v) if (is.null(dim(v))) unname(v) else v)
  if (!is.null(class)) cols$class <- class
  n <- NROW(cols$fit)
  structure(cols, class = "data.frame", row.names = .set_row_names(n))
}

# ---- plot ------------------------------------------------------------------------------------------------

#' @rdname sb_nn_fit-methods
#' @export
plot.sb_nn_fit <- function(x, type = NULL, pars = NULL, ...) {
  metric <- if (!is.null(x$accuracy)) x$accuracy else x$rmse
  ok <- x$status == "done"
  if (is.null(type)) type <- if (!is.null(metric) && sum(ok) > 1L) "metric" else if (!is.null(x$training)) "training" else "weights"
  type <- sb_match_arg(type, c("metric", "training", "weights"))
  if (type == "metric") {
    if (is.null(metric) || sum(ok) < 2L) {
      sb_abort(c("No per-draw test metric to plot.", i = "Pass {.arg newx} and {.arg newy} when fitting, or use {.code type = \"training\"}."),
               arg = "type")
    }
    metric <- metric[ok]
    acc <- !is.null(x$accuracy)
    lab <- if (acc) "test accuracy" else "test RMSE"
    d <- stats::density(metric, from = if (acc) 0 else min(metric), to = if (acc) 1 else max(metric))
    graphics::plot(d, main = sprintf("%s posterior of the %s (%d draws)", x$method, lab, length(metric)), xlab = lab, ...)
    graphics::polygon(d, col = grDevices::adjustcolor("firebrick", 0.2), border = "firebrick")
    graphics::rug(metric)
  } else if (type == "training") {
    tr <- x$training
    if (is.null(tr) || !nrow(tr)) sb_abort("This fit kept no training history.", arg = "type")
    unit <- names(tr)[1]; step <- names(tr)[2]
    has_acc <- any(is.finite(tr$accuracy))
    op <- graphics::par(mfrow = c(1L, if (has_acc) 2L else 1L))
    on.exit(graphics::par(op), add = TRUE)
    for (v in c("loss", if (has_acc) "accuracy")) {
      graphics::plot(range(tr[[step]]), range(tr[[v]][is.finite(tr[[v]])]), type = "n", xlab = step, ylab = v,
                     main = sprintf("training %s per %s", v, unit), ...)
      for (u in unique(tr[[unit]])) {
        r <- tr[[unit]] == u
        graphics::lines(tr[[step]][r], tr[[v]][r], col = grDevices::adjustcolor("grey20", 0.4))
      }
    }
  } else {
    d <- nn_need_draws(x, "plot(type = \"weights\")")
    d <- select_pars(d, pars)
    if (is.null(pars) && ncol(d) > 16L) d <- d[, seq_len(16L), drop = FALSE]
    plot.sb_fit(list(draws = d), breaks = 30, ...)
  }
  invisible(x)
}
