# K-fold cross-validation for the weighted lasso / elastic net (used by wbb() to fix lambda).

make_foldid <- function(n, nfolds, seed, call) {
  if (nfolds > n) {
    sb_abort(c("{.arg nfolds} ({nfolds}) cannot exceed the number of observations ({n}).",
               i = "Use fewer folds in {.fn wbb_control}."), arg = "nfolds", call = call)
  }
  # folds come from the fit's seed (R's RNG under a local seed), so a given seed reproduces the whole fit
  withr::with_seed(as.integer(seed %% .Machine$integer.max), sample(rep_len(seq_len(nfolds), n)))
}

#' Cross-validation for the weighted lasso / elastic net
#'
#' K-fold cross-validation along a lambda path (SUM scale, see [weighted_lasso()]): by default the deviance of
#' the held-out folds (gaussian: mean squared error; binomial, poisson: the deviance), with the minimum and
#' one-standard-error rules. Folds are held out by zero weights, fitted in parallel threads, and assigned from
#' `seed`.
#'
#' **`type_measure`** (glmnet's `type.measure`, either name): `"deviance"` (default), `"mse"`, `"mae"`,
#' `"class"` (binomial and multinomial: misclassification rate) or `"auc"` (binomial: the area under the ROC curve of each
#' fold, weighted by the folds' weights; the largest AUC is the best). The per-observation losses are glmnet's
#' (`cv.glmnet()`), including its two-column binomial forms (`"mse"`: \eqn{2(y - p)^2}, `"mae"`:
#' \eqn{2|y - p|}) and its multinomial ones (`"deviance"`: \eqn{-2\log p_y} with p clipped to \eqn{[10^{-5}, 1 - 10^{-5}]},
#' `"mse"`: \eqn{\sum_k (y_k - p_k)^2}, `"mae"`: \eqn{\sum_k |y_k - p_k|}, `"class"`: the most probable class is
#' wrong); the AUC counts ties as one half (glmnet breaks them at random).
#'
#' @inheritParams weighted_lasso
#' @param nfolds Number of folds (at least 3 recommended).
#' @param foldid Optional fold assignment (integers 1..K, one per row); overrides `nfolds` and `seed`.
#' @param threads Number of threads (default [sb_default_threads()]).
#' @param seed Seed for the fold assignment (default drawn from R's RNG).
#' @param quiet Hide the progress bar.
#' @param type_measure The loss of the held-out folds (see above).
#' @param type.measure glmnet's name of `type_measure`.
#' @section Interrupts:
#' Ctrl-C stops at the next check (between lambda values of a fold) and is R's interrupt: a partial
#' cross-validation (some folds) chooses no lambda, so nothing is returned. See [scalebayes-interrupts].
#' @return An object of class `sb_cv`: `lambda`, `cvm`, `cvsd`, `lambda_min`, `lambda_1se`, `foldid`, and `fit`,
#'   the [weighted_lasso()] fit to all the data along `lambda` (glmnet's `glmnet.fit`); [coef.sb_cv()] and
#'   [predict.sb_cv()] read it at `lambda_min`, `lambda_1se` or any lambda, as glmnet's `coef.cv.glmnet()`.
#' @export
#' @examples
#' data(diabetes)
#' cv <- cv_weighted_lasso(diabetes$x, diabetes$y, seed = 1)
#' cv$lambda_min
cv_weighted_lasso <- function(x, y, family = c("gaussian", "binomial", "poisson", "multinomial"), weights = NULL,
                              penalty_factor = NULL,
                              alpha = 1, nfolds = 10L, foldid = NULL, nlambda = 100L, lambda_min_ratio = NULL,
                              standardize = TRUE, intercept = TRUE, threads = NULL, seed = NULL, quiet = NULL,
                              control = cd_control(), offset = NULL, lower_limits = -Inf, upper_limits = Inf,
                              exclude = NULL, type_measure = c("deviance", "mse", "mae", "class", "auc"),
                              data = NULL, subset = NULL, na.action = NULL, contrasts = NULL,
                              penalty.factor = NULL, lower.limits = NULL, upper.limits = NULL, type.measure = NULL,
                              type_multinomial = c("ungrouped", "grouped"), type.multinomial = NULL) {
  if (!missing(x) && sb_is_formula(x)) {
    return(sb_formula_fit(environment(), "cv_weighted_lasso", cv_weighted_lasso, match.call(), intercept = "arg",
                          response = "glm"))
  }
  sb_formula_only(environment())
  call <- rlang::current_env()
  family <- sb_match_arg(family)
  penalty_factor <- sb_glmnet_name(penalty_factor, penalty.factor, "penalty_factor", "penalty.factor", missing(penalty_factor))
  lower_limits <- sb_glmnet_name(lower_limits, lower.limits, "lower_limits", "lower.limits", missing(lower_limits))
  upper_limits <- sb_glmnet_name(upper_limits, upper.limits, "upper_limits", "upper.limits", missing(upper_limits))
  type_measure <- sb_glmnet_name(type_measure, type.measure, "type_measure", "type.measure", missing(type_measure))
  type_measure <- cv_type_measure(type_measure, family, call)
  type_multinomial <- check_type_multinomial(type_multinomial, type.multinomial, missing(type_multinomial), family, call)
  check_multinomial_constraints(family, offset, lower_limits, upper_limits, exclude, call)
  d <- prepare_glm_data(x, y, family, alpha, penalty_factor, call)
  cons <- glm_constraints(offset, lower_limits, upper_limits, exclude, d$x, call)
  w <- if (is.null(weights)) rep(1, d$n) else check_weights(weights, d$n, arg = "weights")
  ws <- rescale_weights(w)  # see weighted_lasso(): exact, lambda reported on the caller's scale
  st <- standardize_x(d$x, check_flag(standardize), check_flag(intercept))
  ctrl <- c(check_cd_control(control, call), intercept = intercept, glm_engine_extras(cons, st$scale), st$engine,
            multinomial_ctrl(family, d$levels, type_multinomial))
  out <- run_cv(st$x, d$y, family, d$alpha, ws$w, d$penalty_factor, nfolds, foldid, nlambda, lambda_min_ratio,
                run_settings(seed, threads, quiet, call), ctrl, call, measure = type_measure)
  if (ws$c != 1) {
    out[c("lambda", "lambda_min", "lambda_1se")] <- lapply(out[c("lambda", "lambda_min", "lambda_1se")], `*`, ws$c)
    check_lambda_scale(out$lambda, call)
  }
  # the fit to all the data along the CV path (glmnet's `glmnet.fit`): coef() and predict() at lambda_min / lambda_1se
  y_fit <- if (family == "multinomial") factor(d$levels[d$y + 1], levels = d$levels) else d$y
  out$fit <- cv_full_fit(d$x, y_fit, family, w, d$penalty_factor, out$lambda, d$alpha, standardize, intercept, control,
                         cons, type_multinomial = type_multinomial)
  out$call <- sb_user_call(match.call(), quote(cv_weighted_lasso))  # update() reruns it (the formula method: its own)
  out
}

# type_measure: one of the measures, valid for the family (binomial only: auc; binomial and multinomial: class).
cv_type_measure <- function(type_measure, family, call) {
  m <- sb_match_arg(type_measure, c("deviance", "mse", "mae", "class", "auc"), call = call)
  if (m == "auc" && family == "multinomial") {
    sb_abort(c("{.code type_measure = \"auc\"} is for binomial fits; this is multinomial.",
               i = "Use {.val deviance}, {.val class}, {.val mse} or {.val mae} (as glmnet)."), arg = "type_measure",
             call = call)
  }
  if (m %in% c("class", "auc") && !family %in% c("binomial", "multinomial")) {
    sb_abort(c("{.code type_measure = \"{m}\"} is for binomial fits; this is {family}.",
               i = "Use {.val deviance}, {.val mse} or {.val mae}."), arg = "type_measure", call = call)
  }
  m
}

# run: the run list (run_settings(), R/seed.R); its seed also draws the folds. measure: cv_type_measure().
run_cv <- function(xs, y, family, alpha, w, pf, nfolds, foldid, nlambda, lambda_min_ratio, run, ctrl, call,
                   measure = "deviance") {
  n <- nrow(xs); p <- ncol(xs)
  if (is.null(foldid)) {
    nfolds <- check_count(nfolds, min = 2L, arg = "nfolds", call = call)
    foldid <- make_foldid(n, nfolds, run$seed, call)
  } else if (!is.numeric(foldid) || length(foldid) != n || any(!is.finite(foldid)) ||
             !setequal(unique(foldid), seq_len(max(foldid))) || max(foldid) < 2) {
    sb_abort("{.arg foldid} must hold fold numbers 1..K (K >= 2), one per row of {.arg x}.", arg = "foldid",
             call = call)
  }
  nlambda <- check_count(nlambda, arg = "nlambda", call = call, max = 1e5)
  if (is.null(lambda_min_ratio)) lambda_min_ratio <- if (n > p) 1e-4 else 1e-2
  lambda_min_ratio <- check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE,
                                   arg = "lambda_min_ratio", call = call)
  lmax <- sb_call_engine(cpp_lambda_max(xs, y, family, alpha, w, pf, ctrl))
  if (!(lmax > 0) && family == "gaussian" && all(y == y[1L])) {
    sb_abort(c("{.arg y} is constant: there is nothing to regress on {.arg x}.",
               i = "Check the response column; a constant response has no coefficients to estimate."),
             arg = "y", kind = "degenerate", call = call)
  }
  if (!(lmax > 0)) {
    sb_abort(c("Every coefficient is zero at any lambda (lambda_max = 0).",
               i = "Check that {.arg x} has non-constant columns related to {.arg y}."), kind = "degenerate", call = call)
  }
  lambda <- lmax * exp(seq(0, log(lambda_min_ratio), length.out = nlambda))
  r <- sb_call_engine(cpp_enet_cv(xs, y, family, alpha, w, pf, as.integer(foldid) - 1L, lambda,
                                  c(ctrl, cv_measure = measure), engine_run(run)), call = call)
  if (isTRUE(r$interrupted)) rlang::interrupt()
  if (measure == "auc") r <- cv_auc(r$predmat, y, w, as.integer(foldid), lambda)
  structure(list(lambda = r$lambda, cvm = r$cvm, cvsd = r$cvsd, lambda_min = r$lambda_min,
                 lambda_1se = r$lambda_1se, index_min = r$index_min, index_1se = r$index_1se,
                 foldid = as.integer(foldid), family = family, nobs = n, type_measure = measure),
            class = c("sb_cv", "sb_point_fit"))
}

# Weighted AUC of scores s for 0/1 labels y (weights w), ties counted one half.
sb_auc <- function(y, s, w) {
  w1 <- sum(w[y == 1]); w0 <- sum(w[y == 0])
  if (!(w1 > 0 && w0 > 0)) return(NA_real_)
  o <- order(s)
  s <- s[o]; y <- y[o]; w <- w[o]
  grp <- cumsum(c(TRUE, diff(s) != 0))  # tie groups
  g0 <- tapply(w * (y == 0), grp, sum)
  g1 <- tapply(w * (y == 1), grp, sum)
  below0 <- cumsum(g0) - g0  # weight of negatives strictly below each group
  sum(g1 * (below0 + g0 / 2)) / (w1 * w0)
}

# AUC per fold from the held-out linear predictors, as cv.glmnet(type.measure = "auc"): the folds' AUCs averaged
# with the folds' weights, their weighted sd / sqrt(K - 1), the largest AUC best (and the 1se rule on -AUC).
cv_auc <- function(predmat, y, w, foldid, lambda) {
  K <- max(foldid)
  raw <- vapply(seq_len(K), function(k) {
    i <- foldid == k
    vapply(seq_along(lambda), function(l) sb_auc(y[i], predmat[i, l], w[i]), numeric(1))
  }, numeric(length(lambda)))
  raw <- matrix(raw, length(lambda))  # L x K
  wf <- vapply(seq_len(K), function(k) sum(w[foldid == k]), numeric(1))
  cvm <- apply(raw, 1, stats::weighted.mean, w = wf, na.rm = TRUE)
  cvsd <- sqrt(apply((raw - cvm)^2, 1, stats::weighted.mean, w = wf, na.rm = TRUE) / (K - 1))
  neg <- -cvm
  imin <- which(neg <= min(neg, na.rm = TRUE))[1L]
  bound <- neg[imin] + cvsd[imin]
  i1 <- which(neg <= bound)[1L]
  list(lambda = lambda, cvm = cvm, cvsd = cvsd, lambda_min = lambda[imin], lambda_1se = lambda[i1],
       index_min = imin, index_1se = i1)
}

#' @export
print.sb_cv <- function(x, ...) {
  cat(sprintf("<sb_cv> %d-fold cross-validation, %s, %d lambda values (SUM scale)\n",
              max(x$foldid), x$family, length(x$lambda)))
  cat(sprintf("  lambda_min = %.5g (CV error %.5g)\n  lambda_1se = %.5g (CV error %.5g)\n",
              x$lambda_min, x$cvm[x$index_min], x$lambda_1se, x$cvm[x$index_1se]))
  invisible(x)
}

#' @export
plot.sb_cv <- function(x, ...) {
  m <- x$type_measure %||% "deviance"
  ylab <- switch(m, mse = "Mean squared error", mae = "Mean absolute error", class = "Misclassification error",
                 auc = "AUC", if (x$family == "gaussian") "Mean squared error" else
                   paste(switch(x$family, poisson = "Poisson", multinomial = "Multinomial", "Binomial"), "deviance"))
  graphics::plot(log(x$lambda), x$cvm, ylim = range(c(x$cvm - x$cvsd, x$cvm + x$cvsd)), pch = 20, col = "red",
                 xlab = expression(log(lambda)), ylab = ylab, ...)
  graphics::arrows(log(x$lambda), x$cvm - x$cvsd, log(x$lambda), x$cvm + x$cvsd, angle = 90, code = 3,
                   length = 0.02, col = "grey60")
  graphics::abline(v = log(c(x$lambda_min, x$lambda_1se)), lty = 3)
  invisible(x)
}

# weighted_lasso() on all the data along the CV path; its data warnings (constant or duplicated columns) were given
# by cv_weighted_lasso() already.
cv_full_fit <- function(x, y, family, weights, penalty_factor, lambda, alpha, standardize, intercept, control,
                        cons = NULL, type_multinomial = "ungrouped") {
  fit <- withCallingHandlers(
    weighted_lasso(x, y, family = family, weights = weights, penalty_factor = penalty_factor, lambda = lambda,
                   alpha = alpha, standardize = standardize, intercept = intercept, control = control,
                   type_multinomial = type_multinomial %||% "ungrouped",
                   offset = cons$offset, lower_limits = cons$lower_limits %||% -Inf,
                   upper_limits = cons$upper_limits %||% Inf, exclude = if (length(cons$exclude)) cons$exclude),
    scalebayes_warning_constant_column = function(w) invokeRestart("muffleWarning"),
    scalebayes_warning_duplicated_column = function(w) invokeRestart("muffleWarning"))
  fit$control <- control  # for the exact refits of coef.sb_cv() at other lambda values
  fit
}

#' Coefficients and predictions of a cross-validated weighted lasso
#'
#' As glmnet's `coef.cv.glmnet()` and `predict.cv.glmnet()`: the coefficients (or predictions) of the fit to all
#' the data ([weighted_lasso()], kept in `object$fit`) at the lambda chosen by cross-validation, `"lambda.1se"`
#' (default, as glmnet) or `"lambda.min"`, or at given lambda values. A lambda of the CV path reads the path's
#' solution; any other value is solved exactly by [weighted_lasso()] with the fit's data and settings (glmnet
#' interpolates linearly between path values instead; the two agree on the path).
#'
#' @param object A [cv_weighted_lasso()] result.
#' @param s `"lambda.1se"`, `"lambda.min"` (glmnet's names; `"1se"` and `"min"`, the rule names of [wbb()], also
#'   work), or lambda values on the SUM scale of [weighted_lasso()] (n times glmnet's lambda for unit weights).
#' @param newdata New inputs (a matrix with the columns of `x`, or a vector for one observation; for a
#'   cross-validation of a formula, a data frame).
#' @param newx Synonym of `newdata`.
#' @param type `"response"` (default: probabilities for binomial fits, means for poisson, class probabilities
#'   for multinomial), `"link"` or `"class"` (binomial, multinomial: a factor): the rule of every fit,
#'   [predict-types].
#' @param newoffset The offset of the new inputs (fits with an `offset`).
#' @param ... Not used: any argument given here is an error.
#' @return `coef()`: a named vector (intercept first) for one lambda, a (p + 1) x length(s) matrix for several
#'   (multinomial: a (p + 1) x K matrix, or a (p + 1) x K x length(s) array).
#'   `predict()`: a vector for one lambda, an observations x length(s) matrix for several.
#' @export
#' @examples
#' data(diabetes)
#' cv <- cv_weighted_lasso(diabetes$x, diabetes$y, seed = 1)
#' coef(cv, s = "lambda.min")
#' coef(cv)                    # lambda.1se
#' coef(cv, s = c(200, 20))
#' predict(cv, diabetes$x[1:3, ], s = "lambda.min")
coef.sb_cv <- function(object, s = "lambda.1se", ...) {
  sb_check_dots(..., fn = "coef")
  stats::coef(cv_fit_at(object, s))
}

#' @rdname coef.sb_cv
#' @export
predict.sb_cv <- function(object, newdata = NULL, s = "lambda.1se", ..., type = c("response", "link", "class"),
                          newx = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "predict")
  type <- sb_match_arg(type, partial = TRUE)
  fit <- cv_fit_at(object, s)
  # a cross-validation of a formula keeps the terms: a data frame `newdata` becomes its design, as for every fit
  for (nm in c("terms", "xlevels", "contrasts", "response_levels")) {
    if (is.null(.subset2(fit, nm)) && !is.null(.subset2(object, nm))) fit[[nm]] <- object[[nm]]
  }
  predict.sb_weighted_lasso(fit, newdata = newdata, type = type, newx = newx, newoffset = newoffset)
}

# The weighted_lasso() fit at s: the columns of the full-data path, or an exact refit at other lambda values.
cv_fit_at <- function(object, s, call = rlang::caller_env()) {
  fit <- object$fit
  if (is.null(fit)) {
    sb_abort(c("This cross-validation result holds no fit to all the data.",
               i = "Rerun {.fn cv_weighted_lasso} (results of earlier versions do not keep it)."), kind = "state",
             arg = "object", call = call)
  }
  rules <- c(lambda.min = "lambda_min", lambda.1se = "lambda_1se", min = "lambda_min", `1se` = "lambda_1se",
             lambda_min = "lambda_min", lambda_1se = "lambda_1se")
  if (is.character(s)) {
    if (length(s) != 1L || is.na(s) || !s %in% names(rules)) {
      sb_abort(c("{.arg s} must be {.val lambda.1se}, {.val lambda.min} or lambda values.",
                 x = "You supplied {.val {format(utils::head(s, 5))}}."), arg = "s", call = call)
    }
    s <- object[[rules[[s]]]]
  }
  if (!is.numeric(s) || !length(s) || any(!is.finite(s)) || any(s < 0)) {
    sb_abort(c("{.arg s} must be {.val lambda.1se}, {.val lambda.min} or finite non-negative lambda values.",
               x = "You supplied {.obj_type_friendly {s}}."), arg = "s", call = call)
  }
  idx <- match(s, fit$lambda)
  if (anyNA(idx)) {
    y <- fit$data$y
    if (identical(fit$family, "multinomial")) y <- factor(fit$levels[y + 1], levels = fit$levels)
    fit <- cv_full_fit(fit$data$x, y, fit$family, fit$weights, fit$penalty_factor, sort(unique(s), decreasing = TRUE),
                       fit$alpha, fit$standardize, fit$intercept, fit$control,
                       list(offset = fit$offset, lower_limits = fit$lower_limits, upper_limits = fit$upper_limits,
                            exclude = fit$exclude), type_multinomial = fit$type_multinomial)
    idx <- match(s, fit$lambda)
  }
  if (length(dim(fit$coefficients)) == 3L) {
    co <- fit$coefficients[, , idx, drop = FALSE]
    dn <- dimnames(co)
    dn[3] <- list(if (length(s) > 1L) format(s, digits = 6))
    dimnames(co) <- dn
    fit$coefficients <- co
  } else {
    fit$coefficients <- fit$coefficients[, idx, drop = FALSE]
    colnames(fit$coefficients) <- if (length(s) > 1L) format(s, digits = 6) else NULL
  }
  fit$lambda <- fit$lambda[idx]
  fit$kkt <- fit$kkt[idx]
  fit
}
