# The generics of fits without posterior draws (issue 39, "Done when": every fit x every generic gives a value or
# a classed error, never base R's). Two kinds:
#
# * penalized point estimates, class "sb_point_fit" next to their own: weighted_lasso() (sb_weighted_lasso),
#   cv_weighted_lasso() (sb_cv), trend_filter() (sb_trend_filter), cv_trend_filter() (sb_cv_trend_filter),
#   sure_trend_filter() (sb_tf_sure), generalized_lasso() (sb_generalized_lasso). The posterior generics are
#   scalebayes_error_not_applicable errors naming the Bayesian counterpart (sb_no_draws(), R/generics.R); the
#   model generics give the fit at the data where the fit has one, else a classed error naming what to use.
# * a wbb() fit over several lambda values (sb_wbb_path): a list of fits, one per lambda. coef() is the
#   coefficients x lambda matrix of posterior means (as coef() of a glmnet path), nobs() the observations; every
#   other generic asks for one fit of the path (a classed error).

# The fitting function of a point fit and its Bayesian counterpart (NA: none).
sb_point_fit_info <- function(object) {
  switch(class(object)[1],
         sb_weighted_lasso = list("weighted_lasso", "wbb"),
         sb_cv = list("cv_weighted_lasso", "wbb"),
         sb_trend_filter = list("trend_filter", "trend_filter_wbb"),
         sb_trend_filter_glm = list("trend_filter", "trend_filter_wbb"),
         sb_cv_trend_filter = list("cv_trend_filter", "trend_filter_wbb"),
         sb_tf_sure = list("sure_trend_filter", "trend_filter_wbb"),
         sb_generalized_lasso = list("generalized_lasso", NA),
         sb_genlasso_path = if (is.null(.subset2(object, "tf_x"))) list("generalized_lasso", NA)
                            else list("trend_filter", "trend_filter_wbb"),
         list(class(object)[1], NA))
}

#' Methods of penalized point estimates and of WBB lambda paths
#'
#' Fits without posterior draws answer every generic with a value or a classed error that says why and what to
#' use, never an error of base R or a silent `NULL`.
#'
#' **Penalized point estimates** ([weighted_lasso()], [cv_weighted_lasso()], [trend_filter()],
#' [cv_trend_filter()], [sure_trend_filter()], [generalized_lasso()]; class `sb_point_fit`): `log_lik()`,
#' `posterior_predict()`, `posterior_epred()`, `posterior_linpred()`, `predictive_interval()`, `vcov()`,
#' `ndraws()`, `prior_summary()`, `posterior_interval()`, `as.matrix()` and the draws formats are errors of class
#' `scalebayes_error_not_applicable` (a point estimate has no posterior) naming the Bayesian counterpart
#' ([wbb()], [trend_filter_wbb()]). `fitted()` and `residuals()` of [trend_filter()] and [generalized_lasso()]
#' fits are the estimated signal at the observations and `y` minus it (an observations x lambda matrix, a vector
#' for one lambda); `coef()` of a [generalized_lasso()] fit is that signal too (its coefficients are the signal);
#' [cv_weighted_lasso()] fits give `fitted()` / `residuals()` at `s` (as [predict.sb_cv()]). The cross-validation
#' and SURE tables of [cv_trend_filter()] and [sure_trend_filter()] keep the full-data path in `fit$fit`: their
#' `coef()`, `predict()`, `fitted()` and `residuals()` are classed errors pointing to it. `nobs()` is the number of
#' observations of every such fit.
#'
#' **WBB lambda paths** (`wbb(x, y, lambda = <several values>)`, class `sb_wbb_path`: one fit per lambda in
#' `fit$fits`): `coef()` is the coefficients x lambda matrix of posterior means, `nobs()` the number of
#' observations; the other generics need one fit of the path, `fit$fits[[i]]`, and say so with a classed error
#' (`scalebayes_error_not_applicable`).
#'
#' @param object,x A fit.
#' @param use.fallback Not used: accepted because stats' [stats::sigma()] passes it to `nobs()`.
#' @param newdata [generalized_lasso()] fits with a design matrix `X`: a numeric matrix of new rows (the columns
#'   of `X`); `NULL` (default): the fitted values.
#' @param s [cv_weighted_lasso()] fits: `"lambda.1se"`, `"lambda.min"` or lambda values, as [predict.sb_cv()].
#' @param ... Not used: any argument given here is an error (class `scalebayes_error_dots`).
#' @return See above.
#' @name sb_point_fit-methods
#' @examples
#' data(diabetes)
#' tf <- trend_filter(diabetes$y[1:100], k = 1, lambda = 10)
#' head(residuals(tf))
#' try(log_lik(tf))  # no posterior: use trend_filter_wbb()
#' path <- wbb(diabetes$x, diabetes$y, lambda = c(10, 100), draws = 50, seed = 1)
#' coef(path)
NULL

#' @method log_lik sb_point_fit
#' @export
log_lik.sb_point_fit <- sb_no_draws
#' @method posterior_predict sb_point_fit
#' @export
posterior_predict.sb_point_fit <- sb_no_draws
#' @method posterior_epred sb_point_fit
#' @export
posterior_epred.sb_point_fit <- sb_no_draws
#' @method posterior_linpred sb_point_fit
#' @export
posterior_linpred.sb_point_fit <- sb_no_draws
#' @method predictive_interval sb_point_fit
#' @export
predictive_interval.sb_point_fit <- sb_no_draws
#' @export
vcov.sb_point_fit <- sb_no_draws
#' @method ndraws sb_point_fit
#' @export
ndraws.sb_point_fit <- function(x) sb_no_draws(x, call = rlang::current_env())
#' @method posterior_interval sb_point_fit
#' @export
posterior_interval.sb_point_fit <- sb_no_draws
#' @method prior_summary sb_point_fit
#' @export
prior_summary.sb_point_fit <- sb_no_draws

# The model generics of a point fit that has no fit at the data here (a CV or SURE table; the default).
sb_point_use_fit <- function(object, call) {
  info <- sb_point_fit_info(object)
  if (!is.null(.subset2(object, "fit"))) {
    sb_not_applicable(c(paste0("A {.fn ", info[[1]], "} result is a table over lambda; the fit to all the data is {.code $fit}."),
                        i = "Use {.code fit$fit} with the lambda chosen here, e.g. {.code lambda = fit$lambda_min}."),
                      call = call)
  }
  sb_not_applicable(paste0("This does not apply to a {.fn ", info[[1]], "} fit."), call = call)
}

#' @rdname sb_point_fit-methods
#' @export
fitted.sb_point_fit <- function(object, ...) {
  sb_check_dots(..., fn = "fitted")
  sb_point_use_fit(object, rlang::current_env())
}
#' @rdname sb_point_fit-methods
#' @export
residuals.sb_point_fit <- function(object, ...) {
  sb_check_dots(..., fn = "residuals")
  sb_point_use_fit(object, rlang::current_env())
}
#' @rdname sb_point_fit-methods
#' @export
coef.sb_point_fit <- function(object, ...) {
  sb_check_dots(..., fn = "coef")
  sb_point_use_fit(object, rlang::current_env())
}
#' @rdname sb_point_fit-methods
#' @export
predict.sb_point_fit <- function(object, ...) sb_point_use_fit(object, rlang::current_env())
#' @rdname sb_point_fit-methods
#' @export
nobs.sb_point_fit <- function(object, use.fallback = FALSE, ...) {
  sb_check_dots(..., fn = "nobs")
  y <- .subset2(object, "y") %||% .subset2(.subset2(object, "fit"), "y")
  if (!is.null(y)) return(length(y))
  .subset2(object, "nobs") %||% sb_point_use_fit(object, rlang::current_env())
}

# the estimated signal at the observations: trend filtering and the generalized lasso (observations x lambda)
sb_point_signal <- function(object) {
  b <- object$beta
  b <- if (is.null(dim(b))) b else if (ncol(b) == 1L) drop(b) else b
  if (is.matrix(b)) dimnames(b) <- NULL else names(b) <- NULL
  b
}
#' @rdname sb_point_fit-methods
#' @export
fitted.sb_trend_filter <- function(object, ...) {
  sb_check_dots(..., fn = "fitted")
  sb_point_signal(object)
}
#' @rdname sb_point_fit-methods
#' @export
residuals.sb_trend_filter <- function(object, ...) {
  sb_check_dots(..., fn = "residuals")
  object$y - sb_point_signal(object)
}
#' @rdname sb_point_fit-methods
#' @export
fitted.sb_generalized_lasso <- function(object, ...) {
  sb_check_dots(..., fn = "fitted")
  if (is.null(object$X)) return(sb_point_signal(object))
  sb_point_signal(list(beta = object$fit))  # with a design matrix X: X beta
}
#' @rdname sb_point_fit-methods
#' @export
residuals.sb_generalized_lasso <- function(object, ...) {
  sb_check_dots(..., fn = "residuals")
  object$y - stats::fitted(object)
}
#' @rdname sb_point_fit-methods
#' @export
coef.sb_generalized_lasso <- function(object, ...) {
  sb_check_dots(..., fn = "coef")
  sb_point_signal(object)
}
#' @rdname sb_point_fit-methods
#' @export
predict.sb_generalized_lasso <- function(object, newdata = NULL, ...) {
  if (!is.null(object$X)) {  # a design matrix X: X beta at the data, newdata beta at new rows
    sb_check_dots(..., fn = "predict")
    if (is.null(newdata)) return(stats::fitted(object))
    if (inherits(newdata, "Matrix")) newdata <- as.matrix(newdata)
    if (!is.matrix(newdata) || !is.numeric(newdata) || ncol(newdata) != ncol(object$X) || anyNA(newdata)) {
      sb_abort("{.arg newdata} must be a numeric matrix without NA with {ncol(object$X)} column{?s}, as {.arg X}.",
               arg = "newdata")
    }
    return(sb_point_signal(list(beta = newdata %*% object$beta)))
  }
  sb_not_applicable(c("A generalized lasso estimates the signal at its observations: there are no inputs to predict at.",
                      i = "Use {.fn fitted} (or {.fn coef}) for the estimate."), call = rlang::current_env())
}

#' @rdname sb_point_fit-methods
#' @export
fitted.sb_cv <- function(object, s = "lambda.1se", ...) {
  sb_check_dots(..., fn = "fitted")
  td <- sb_wl_data(object$fit)
  predict.sb_cv(object, newdata = td$x, s = s, type = "response")
}
#' @rdname sb_point_fit-methods
#' @export
residuals.sb_cv <- function(object, s = "lambda.1se", ...) {
  sb_check_dots(..., fn = "residuals")
  sb_wl_data(object$fit)$y - fitted.sb_cv(object, s = s)
}

# ---- WBB lambda paths ------------------------------------------------------------------------------------------

sb_path_pick <- function(object, ..., call = rlang::current_env()) {
  sb_not_applicable(c(sprintf("This {.fn wbb} fit is a path of %d fits, one per lambda ({.code fit$fits}).", length(object$fits)),
                      i = sprintf("Use one of them, e.g. {.code fit$fits[[1]]} (lambda = %s), or refit with one {.arg lambda}.",
                                  format(object$lambda[1]))),
                    call = call)
}

#' @rdname sb_point_fit-methods
#' @export
coef.sb_wbb_path <- function(object, ...) {
  sb_check_dots(..., fn = "coef")
  out <- vapply(object$fits, stats::coef, numeric(length(stats::coef(object$fits[[1]]))))
  colnames(out) <- paste0("lambda=", format(object$lambda))
  out
}
#' @rdname sb_point_fit-methods
#' @export
nobs.sb_wbb_path <- function(object, use.fallback = FALSE, ...) {
  sb_check_dots(..., fn = "nobs")
  stats::nobs(object$fits[[1]])
}
#' @export
predict.sb_wbb_path <- sb_path_pick
#' @export
fitted.sb_wbb_path <- sb_path_pick
#' @export
residuals.sb_wbb_path <- sb_path_pick
#' @export
vcov.sb_wbb_path <- sb_path_pick
#' @export
as.matrix.sb_wbb_path <- function(x, ...) sb_path_pick(x, call = rlang::current_env())
#' @method log_lik sb_wbb_path
#' @export
log_lik.sb_wbb_path <- sb_path_pick
#' @method posterior_predict sb_wbb_path
#' @export
posterior_predict.sb_wbb_path <- sb_path_pick
#' @method posterior_epred sb_wbb_path
#' @export
posterior_epred.sb_wbb_path <- sb_path_pick
#' @method posterior_linpred sb_wbb_path
#' @export
posterior_linpred.sb_wbb_path <- sb_path_pick
#' @method predictive_interval sb_wbb_path
#' @export
predictive_interval.sb_wbb_path <- sb_path_pick
#' @method ndraws sb_wbb_path
#' @export
ndraws.sb_wbb_path <- function(x) sb_path_pick(x, call = rlang::current_env())
#' @method prior_summary sb_wbb_path
#' @export
prior_summary.sb_wbb_path <- sb_path_pick
#' @method posterior_interval sb_wbb_path
#' @export
posterior_interval.sb_wbb_path <- sb_path_pick
#' @method as_draws_df sb_wbb_path
#' @export
as_draws_df.sb_wbb_path <- function(x, ...) sb_path_pick(x, call = rlang::current_env())
#' @method as_draws_matrix sb_wbb_path
#' @export
as_draws_matrix.sb_wbb_path <- function(x, ...) sb_path_pick(x, call = rlang::current_env())
#' @method as_draws_array sb_wbb_path
#' @export
as_draws_array.sb_wbb_path <- function(x, ...) sb_path_pick(x, call = rlang::current_env())

# ---- plots of the tables without one -------------------------------------------------------------------------

#' @rdname sb_point_fit-methods
#' @export
plot.sb_generalized_lasso <- function(x, ...) {
  b <- x$beta
  graphics::matplot(log(x$lambda), t(b), type = "l", lty = 1, col = grDevices::adjustcolor("grey20", 0.5),
                    xlab = "log(lambda)", ylab = "estimate", main = "generalized lasso: the estimate along lambda", ...)
  invisible(x)
}
#' @rdname sb_point_fit-methods
#' @export
plot.sb_tf_sure <- function(x, ...) {
  graphics::plot(log(x$lambda), x$sure, type = "b", pch = 20, xlab = "log(lambda)", ylab = "SURE",
                 main = "Stein's unbiased risk estimate", ...)
  graphics::abline(v = log(x$lambda_min), lty = 2)
  invisible(x)
}

# ---- summary() of the point fits and of WBB lambda paths ----------------------------------------------------
# One shape: a header line, one table row per lambda (or per fold setting), and optional named extras (the
# coefficients at the chosen lambda values, the posterior means of a path). print() shows the header, the
# table (the first and last rows of a long path) and the extras.

sb_table_summary <- function(header, table, extra = list(), note = NULL) {
  structure(list(header = header, table = table, extra = extra, note = note), class = "summary_sb_table")
}

#' @export
print.summary_sb_table <- function(x, digits = 4, max_rows = 20, ...) {
  cat(x$header, "\n", sep = "")
  tab <- x$table
  num <- vapply(tab, is.numeric, logical(1))
  tab[num] <- lapply(tab[num], signif, digits = digits)
  if (nrow(tab) > max_rows) {
    h <- max_rows %/% 2
    print(utils::head(tab, h), row.names = FALSE)
    cat(sprintf("  ... %d more rows ...\n", nrow(tab) - 2L * h))
    print(utils::tail(tab, h), row.names = FALSE)
  } else {
    print(tab, row.names = FALSE)
  }
  for (nm in names(x$extra)) {
    cat("\n", nm, ":\n", sep = "")
    print(signif(x$extra[[nm]], digits))
  }
  if (!is.null(x$note)) cat("\n", x$note, "\n", sep = "")
  invisible(x)
}

#' @rdname sb_point_fit-methods
#' @details `summary()` of every such fit is a table with one row per lambda (class `summary_sb_table`: `header`,
#'   `table`, `extra`): [cv_weighted_lasso()] the cross-validation error, its standard error and the nonzero
#'   coefficients per lambda, with the coefficients at `lambda_min` and `lambda_1se`; [trend_filter()] and
#'   [generalized_lasso()] the degrees of freedom (trend filtering), the weighted residual sum of squares, the
#'   relative duality gap and the iterations; [cv_trend_filter()] and [sure_trend_filter()] their criterion per
#'   lambda and the chosen lambda; a WBB lambda path the share of nonzero draws per lambda, with the posterior
#'   means and sds of the coefficients at every lambda.
#' @export
summary.sb_cv <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  co <- stats::coef(object$fit)
  nz <- colSums(co[-1L, , drop = FALSE] != 0)
  tab <- data.frame(lambda = object$lambda, cv_error = object$cvm, cv_se = object$cvsd,
                    nonzero = unname(nz[seq_along(object$lambda)]), chosen = "", stringsAsFactors = FALSE)
  tab$chosen[object$index_min] <- "min"
  tab$chosen[object$index_1se] <- paste0(tab$chosen[object$index_1se], if (object$index_1se == object$index_min) "+1se" else "1se")
  at <- cbind(lambda_min = drop(stats::coef(object, s = "lambda.min")), lambda_1se = drop(stats::coef(object, s = "lambda.1se")))
  sb_table_summary(sprintf("%d-fold cross-validation of the weighted lasso (%s, %d observations, sum-scale lambda): lambda_min = %s, lambda_1se = %s",
                           length(unique(object$foldid)), object$family, object$nobs, format(signif(object$lambda_min, 5)),
                           format(signif(object$lambda_1se, 5))),
                   tab, list(`coefficients at lambda_min and lambda_1se` = at))
}

# Weighted residual sum of squares of every column of beta (n x L) against y.
sb_point_rss <- function(y, beta, w) {
  if (is.null(w)) w <- rep(1, length(y))
  colSums(w * (y - as.matrix(beta))^2)
}

#' @rdname sb_point_fit-methods
#' @export
summary.sb_trend_filter <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  tab <- data.frame(lambda = object$lambda, df = object$df, rss = sb_point_rss(object$y, object$beta, object$weights),
                    rel_gap = object$rel_gap, iterations = object$iter, converged = object$converged)
  sb_table_summary(sprintf("Trend filtering of order k = %d, %d observations, %d lambda value%s (lambda_max = %s)",
                           object$k, length(object$y), length(object$lambda), if (length(object$lambda) == 1L) "" else "s",
                           format(signif(object$lambda_max, 5))), tab)
}

#' @rdname sb_point_fit-methods
#' @export
summary.sb_generalized_lasso <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  tab <- data.frame(lambda = object$lambda, rss = sb_point_rss(object$y, object$fit %||% object$beta, object$weights),
                    objective = object$primal, rel_gap = object$rel_gap, iterations = object$iter,
                    converged = object$converged)
  sb_table_summary(sprintf("Generalized lasso, %d observations, %d lambda value%s (lambda_max = %s)",
                           length(object$y), length(object$lambda), if (length(object$lambda) == 1L) "" else "s",
                           format(signif(object$lambda_max, 5))), tab)
}

#' @rdname sb_point_fit-methods
#' @export
summary.sb_cv_trend_filter <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  tab <- data.frame(lambda = object$lambda, df = object$fit$df, cv_error = object$cv, cv_se = object$cv_se,
                    chosen = "", stringsAsFactors = FALSE)
  tab$chosen[object$index_min] <- "min"
  tab$chosen[object$index_1se] <- paste0(tab$chosen[object$index_1se], if (object$index_1se == object$index_min) "+1se" else "1se")
  sb_table_summary(sprintf("%d-fold cross-validation of trend filtering (k = %d): lambda_min = %s, lambda_1se = %s",
                           object$nfolds, object$fit$k, format(signif(object$lambda_min, 5)),
                           format(signif(object$lambda_1se, 5))), tab,
                   note = "The full-data path is fit$fit (its coef(), predict(), fitted(), residuals()).")
}

#' @rdname sb_point_fit-methods
#' @export
summary.sb_tf_sure <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  tab <- data.frame(lambda = object$lambda, df = object$df, rss = object$rss, sure = object$sure, chosen = "",
                    stringsAsFactors = FALSE)
  tab$chosen[object$index_min] <- "min"
  sb_table_summary(sprintf("SURE of trend filtering (k = %d), sigma = %s (%s): lambda_min = %s",
                           object$fit$k, format(signif(object$sigma, 4)),
                           if (isTRUE(object$sigma_estimated)) "estimated" else "given",
                           format(signif(object$lambda_min, 5))), tab,
                   note = "The full-data path is fit$fit (its coef(), predict(), fitted(), residuals()).")
}

#' @rdname sb_point_fit-methods
#' @export
summary.sb_wbb_path <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  nz <- vapply(object$fits, function(f) mean(f$draws[, colnames(f$draws) != "(Intercept)"] != 0), numeric(1))
  sds <- vapply(object$fits, function(f) apply(f$draws, 2, stats::sd), numeric(ncol(object$fits[[1]]$draws)))
  colnames(sds) <- paste0("lambda=", format(object$lambda))
  tab <- data.frame(lambda = object$lambda, draws = vapply(object$fits, function(f) nrow(f$draws), numeric(1)),
                    share_nonzero = nz)
  sb_table_summary(sprintf("WBB draws at %d lambda values (the same weights for every lambda), %d observations",
                           length(object$lambda), stats::nobs(object)), tab,
                   list(`posterior means` = stats::coef(object), `posterior sds` = sds),
                   note = "One fit of the path, fit$fits[[i]], has every method of a WBB fit (summary(), predict(), ...).")
}
