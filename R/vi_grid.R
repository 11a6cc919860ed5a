# sparse_vi() over several values of lambda returns an `sb_vi_grid`: a list of `sb_vi_nn` fits, one per lambda in
# the order given (attributes `lambda`, `log_lambda`). It answers the generics of a path, as a glmnet fit does:
# summary() a table of the fits, coef() a parameters x lambdas matrix, predict() one prediction frame per lambda,
# plot() the share of weights kept and the test metric against log(lambda). The generics of one posterior
# (draws, intervals, log-likelihoods) need one fit: `grid[[k]]`, a classed error says so.

vi_grid_labels <- function(x) sprintf("log_lambda=%s", format(attr(x, "log_lambda"), digits = 4, trim = TRUE))

#' Methods for a `sparse_vi()` fit over a grid of lambda
#'
#' [sparse_vi()] with several values of `lambda` (`log_lambda`) returns an `sb_vi_grid`, a list of fits (one per
#' value, in the order given; `grid[[k]]` is the k-th, a fit like any other). The grid answers the generics of a
#' path: `summary()` (one row per fit: log lambda, share of weights kept by q, final negative ELBO and training
#' negative log-likelihood, the test metric when `newy` was given, the status), `coef()`, `predict()`, `plot()`,
#' `update()` and `nobs()`. The generics of one posterior (`as.matrix()`,
#' `as_draws_*()`, `posterior_interval()`, `vcov()`, `log_lik()`, `ndraws()`, `fitted()`, `residuals()`,
#' `posterior_predict()`, `posterior_epred()`, `posterior_linpred()`, `predictive_interval()`,
#' `prior_summary()`) are an error of class `scalebayes_error_not_applicable` that names the fix: pick one fit,
#' `grid[[k]]`.
#'
#' @param object,x An `sb_vi_grid`.
#' @param use.fallback Not used: accepted because stats' [stats::sigma()] passes it to `nobs()`.
#' @param newdata New inputs for [predict()] (`NULL`: the predictions stored at fit time on `newx`).
#' @param type [coef()]: `"mean"` or `"median"` of each fit's draws; [predict()]: as for one fit
#'   ([predict.sb_nn_fit()]).
#' @param ... `coef()`, `predict()`: passed to each fit's method; `plot()`: graphical parameters passed to
#'   [graphics::plot()] (not `main`, `xlab`, `ylab`); otherwise unused.
#' @return `summary()`: a data frame, one row per fit. `coef()`: a parameters x fits matrix (columns named by log
#'   lambda). `predict()`: a list of the fits' prediction data frames, named by log lambda. `plot()`: `x`,
#'   invisibly. `update()`: the refitted grid (its call with `evaluate = FALSE`).
#' @name sb_vi_grid-methods
#' @examples
#' \donttest{
#' set.seed(1)
#' x <- matrix(rnorm(200 * 4), 200)
#' y <- factor(x[, 1] + x[, 2] > 0)
#' grid <- sparse_vi(x[1:150, ], y[1:150], model = nn_mlp(8), log_lambda = c(-2, -8, -20), epochs = 20,
#'                   newx = x[151:200, ], newy = y[151:200], quiet = TRUE, seed = 1)
#' summary(grid)
#' dim(coef(grid))
#' plot(grid)
#' }
NULL

#' @rdname sb_vi_grid-methods
#' @export
print.sb_vi_grid <- function(x, ...) {
  cat(sprintf("<sb_vi_grid> %d variational fits over lambda\n", length(x)))
  print(summary(x), row.names = FALSE)
  invisible(x)
}

#' @rdname sb_vi_grid-methods
#' @export
summary.sb_vi_grid <- function(object, ...) {
  data.frame(
    log_lambda = attr(object, "log_lambda"),
    kept = vapply(object, function(f) mean(.subset2(f, "inclusion")$values > 0.5), numeric(1)),
    neg_elbo = vapply(object, function(f) utils::tail(f$trace$neg_elbo, 1) %||% NA_real_, numeric(1)),
    train_nll = vapply(object, function(f) utils::tail(f$trace$nll, 1) %||% NA_real_, numeric(1)),
    test = vapply(object, function(f) f$rmse_mean %||% f$accuracy_mean %||% NA_real_, numeric(1)),
    status = vapply(object, function(f) f$fit_status, character(1))
  )
}

#' @rdname sb_vi_grid-methods
#' @export
coef.sb_vi_grid <- function(object, type = c("mean", "median"), ...) {
  type <- sb_match_arg(type)
  out <- do.call(cbind, lapply(unclass(object), stats::coef, type = type, ...))
  colnames(out) <- vi_grid_labels(object)
  out
}

#' @rdname sb_vi_grid-methods
#' @export
predict.sb_vi_grid <- function(object, newdata = NULL, ...) {
  stats::setNames(lapply(unclass(object), stats::predict, newdata = newdata, ...), vi_grid_labels(object))
}

#' @rdname sb_vi_grid-methods
#' @export
plot.sb_vi_grid <- function(x, ...) {
  s <- summary(x)
  has_test <- any(is.finite(s$test))
  op <- graphics::par(mfrow = c(1L, if (has_test) 2L else 1L))
  on.exit(graphics::par(op))
  o <- order(s$log_lambda)
  graphics::plot(s$log_lambda[o], 100 * s$kept[o], type = "b", pch = 19, xlab = "log(lambda)",
                 ylab = "weights kept by q (%)", main = "Sparsity", ...)
  if (has_test) {
    gaussian <- identical(x[[1L]]$family, "gaussian")
    graphics::plot(s$log_lambda[o], s$test[o], type = "b", pch = 19, xlab = "log(lambda)",
                   ylab = if (gaussian) "test RMSE" else "test accuracy", main = "Held out", ...)
  }
  invisible(x)
}

#' @param formula.,evaluate `update()`: as for one fit ([update.sb_fit()]); the grid's call is re-run (all of its
#'   lambda values).
#' @rdname sb_vi_grid-methods
#' @export
update.sb_vi_grid <- function(object, formula., ..., evaluate = TRUE) {
  sb_update_call(object[[1L]], if (!missing(formula.)) formula., missing(formula.),
                 match.call(expand.dots = FALSE)$..., evaluate, parent.frame())
}

#' @rdname sb_vi_grid-methods
#' @export
nobs.sb_vi_grid <- function(object, use.fallback = FALSE, ...) {
  sb_check_dots(..., fn = "nobs")
  stats::nobs(object[[1L]])
}

# The generics of one posterior: pick a fit.
vi_grid_pick_one <- function(x, what, call) {
  sb_abort(c("{.fn {what}} needs one posterior; this {.fn sparse_vi} grid holds {length(x)} fits, one per lambda.",
             i = "Pick one: {.code grid[[k]]} is the fit at the k-th lambda (log lambda {format(attr(x, 'log_lambda'), digits = 4)}; see {.code summary(grid)})."),
           kind = "not_applicable", also = "state", call = call,
           arg = if (what %in% c("as.matrix", "as_draws_array", "as_draws_matrix", "as_draws_df", "ndraws")) "x" else "object")
}

#' @rdname sb_vi_grid-methods
#' @export
as.matrix.sb_vi_grid <- function(x, ...) vi_grid_pick_one(x, "as.matrix", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method as_draws_array sb_vi_grid
#' @export
as_draws_array.sb_vi_grid <- function(x, ...) vi_grid_pick_one(x, "as_draws_array", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method as_draws_matrix sb_vi_grid
#' @export
as_draws_matrix.sb_vi_grid <- function(x, ...) vi_grid_pick_one(x, "as_draws_matrix", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method as_draws_df sb_vi_grid
#' @export
as_draws_df.sb_vi_grid <- function(x, ...) vi_grid_pick_one(x, "as_draws_df", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method posterior_interval sb_vi_grid
#' @export
posterior_interval.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "posterior_interval", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method log_lik sb_vi_grid
#' @export
log_lik.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "log_lik", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method ndraws sb_vi_grid
#' @export
ndraws.sb_vi_grid <- function(x) vi_grid_pick_one(x, "ndraws", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @export
vcov.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "vcov", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @export
fitted.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "fitted", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @export
residuals.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "residuals", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method posterior_predict sb_vi_grid
#' @export
posterior_predict.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "posterior_predict", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method posterior_epred sb_vi_grid
#' @export
posterior_epred.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "posterior_epred", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method posterior_linpred sb_vi_grid
#' @export
posterior_linpred.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "posterior_linpred", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method predictive_interval sb_vi_grid
#' @export
predictive_interval.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "predictive_interval", rlang::current_env())
#' @rdname sb_vi_grid-methods
#' @method prior_summary sb_vi_grid
#' @export
prior_summary.sb_vi_grid <- function(object, ...) vi_grid_pick_one(object, "prior_summary", rlang::current_env())
