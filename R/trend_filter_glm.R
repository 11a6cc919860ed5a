# Poisson and logistic (binomial) trend filtering: trend_filter(family = ), cv_trend_filter(family = ),
# trend_filter_wbb(family = ), and the methods of their fits. Engine: inst/include/scalebayes/genlasso/glm_trend.hpp
# (proximal Newton over the weighted Gaussian trend filter, certified duality gap).

#' Poisson and logistic trend filtering
#'
#' [trend_filter()], [cv_trend_filter()] and [trend_filter_wbb()] with `family = "poisson"` or
#' `family = "binomial"` fit a trend filter of order `k` to the log rate or the log odds:
#' \deqn{\min_\beta \sum_i w_i \{a_i b(\beta_i) - y_i \beta_i\} + \lambda \sum_j p_j |(D^{(x,k+1)}\beta)_j|,}
#' with \eqn{b = \exp} and \eqn{a_i} the `exposure` (Poisson: \eqn{y_i \sim \mathrm{Poisson}(a_i e^{\beta_i})}), or
#' \eqn{b(t) = \log(1 + e^t)} and \eqn{a_i} the `trials` (binomial: \eqn{y_i \sim \mathrm{Bin}(a_i,
#' \mathrm{plogis}(\beta_i))}; `trials = 1`, the default, is a binary series). This is glmgen's
#' `trendfilter(family = "poisson" / "logistic")` with weights \eqn{w_i a_i} and responses \eqn{y_i / a_i}.
#'
#' @section Algorithm and certificate: a proximal Newton method (Lee, Sun & Saunders 2014): at the current
#'   \eqn{\beta} the loss is replaced by its second-order model, which is a weighted Gaussian trend filter (working
#'   response \eqn{z = \beta - g/h}, working weights \eqn{h}, the GLM's IRLS quantities) solved by the package's
#'   Gaussian solvers (exact dynamic programming for `k = 0`, the certified interior points for `k >= 1`); the step
#'   to its solution is taken with a backtracking line search on the true objective, so every step decreases it.
#'   After every step the current \eqn{\beta} and the inner dual \eqn{u} (clipped to \eqn{|u_j| \le \lambda p_j})
#'   form a primal and a feasible dual point of the GLM problem; their duality gap (the Fenchel-Young gaps of the
#'   Poisson / binomial losses, Kullback-Leibler divergences, plus those of the penalty) bounds the objective
#'   error, and the iteration stops when it is at most `control$tol` times the objective (the loss written as half
#'   the deviance, so the objective is non-negative). `rel_gap` reports it per lambda; `iter` counts the Newton
#'   steps (at most 100), `inner_iter` the inner interior-point steps. Above `lambda_max` (computed exactly from the
#'   polynomial GLM fit of degree k) the fit is that polynomial.
#'
#' @section Choosing lambda: cross-validation ([cv_trend_filter()] with `family`) scores held-out points by their
#'   deviance. SURE ([sure_trend_filter()]) is an unbiased risk estimate for Gaussian noise only: it is not offered
#'   for these families (a classed error says so).
#'
#' @section Bootstrap: [trend_filter_wbb()] with `family` solves, per draw, the problem with the loss weights
#'   \eqn{w_i \sim \mathrm{Exp}(1)} and the penalty times \eqn{w_0 \sim \mathrm{Exp}(1)} (the Gaussian function's
#'   scheme), each solve certified as above and started from the unweighted fit (the same start for every draw:
#'   results do not depend on the number of threads). Its draws are on the link scale (log rate / log odds);
#'   `predict(fit, type = "response")` gives the draws and bands of the rate (per unit exposure) or the
#'   probability, and `plot()` draws them.
#'
#' @section Methods: `predict(type = "link" / "response")`, `coef()` (link scale), `fitted()` (the rate or
#'   probability), `residuals()` (count residuals \eqn{y_i - a_i \hat\mu_i}), `summary()` (deviance per lambda),
#'   `print()`, `plot()`. WBB fits answer every generic of [sb_fit-generics] and [sb_fit-methods] (`as_draws_*`,
#'   `posterior_interval()` on the link scale); `log_lik()` and `posterior_predict()` use the exposure / trials at
#'   the training data, and exposure / trials 1 at `newdata` (`newy`: counts, or 0/1 for binomial).
#'
#' @section Bad input: a negative or non-integer count (Poisson), successes that are not whole numbers between 0
#'   and `trials`, non-positive or wrong-length `exposure` / `trials`, `exposure` with `family = "binomial"` or
#'   `trials` with `"poisson"`, and data without a finite fit (all counts zero; all trials failures or all
#'   successes) are classed errors (`scalebayes_error_input`) naming the argument.
#' @name trend_filter_family
#' @references Lee, J. D., Sun, Y. and Saunders, M. A. (2014). Proximal Newton-type methods for minimizing
#'   composite functions. SIAM Journal on Optimization 24, 1420-1443.
#'
#'   Ramdas, A. and Tibshirani, R. J. (2016). Fast and flexible ADMM algorithms for trend filtering. Journal of
#'   Computational and Graphical Statistics 25, 839-858 (glmgen).
#' @examples
#' set.seed(1)
#' x <- 1:200
#' rate <- exp(1 + sin(x / 25))
#' y <- rpois(200, rate)
#' fit <- trend_filter(y, x, k = 1, lambda = 20, family = "poisson")
#' fit$rel_gap
#' head(predict(fit, type = "response"))
#' yb <- rbinom(200, 1, plogis(sin(x / 30)))
#' fb <- trend_filter(yb, x, k = 1, lambda = 5, family = "binomial")
#' plot(fb)
NULL

tf_families <- c("gaussian", "poisson", "binomial")

# Validates the response of a GLM family with its exposure / trials: list(y, a) (a: exposure or trials).
check_tf_family_data <- function(family, y, exposure, trials, n, call = rlang::caller_env()) {
  if (family == "gaussian") {
    if (!is.null(exposure) || !is.null(trials)) {
      arg <- if (!is.null(exposure)) "exposure" else "trials"
      sb_abort(c("{.arg {arg}} is for {.code family = \"poisson\"} ({.arg exposure}) or {.code \"binomial\"} ({.arg trials}).",
                 i = "Gaussian trend filtering takes observation {.arg weights}."), arg = arg, call = call)
    }
    return(NULL)
  }
  other <- if (family == "poisson") "trials" else "exposure"
  if (!is.null(if (family == "poisson") trials else exposure)) {
    sb_abort(c("{.arg {other}} does not apply to {.code family = \"{family}\"}.",
               i = if (family == "poisson") "Poisson trend filtering takes {.arg exposure}." else
                 "Binomial trend filtering takes {.arg trials}."), arg = other, call = call)
  }
  size_arg <- if (family == "poisson") "exposure" else "trials"
  a <- if (family == "poisson") exposure else trials
  if (is.null(a)) {
    a <- rep(1, n)
  } else if (!is.numeric(a) || length(a) != n || any(!is.finite(a)) || any(a <= 0)) {
    sb_abort(c("{.arg {size_arg}} must be {n} positive finite number{?s}, one per element of {.arg y}.",
               x = if (!is.numeric(a)) "You supplied {.obj_type_friendly {a}}." else if (length(a) != n)
                 "It has length {length(a)}." else "It has non-positive or non-finite entries."),
             arg = size_arg, call = call)
  }
  a <- as.double(a)
  if (family == "binomial" && any(a != round(a))) {
    sb_abort(c("{.arg trials} must be whole numbers.", x = "Entry {which(a != round(a))[1]} is {a[which(a != round(a))[1]]}."),
             arg = "trials", call = call)
  }
  if (any(y < 0) || any(y != round(y))) {
    bad <- which(y < 0 | y != round(y))[1]
    sb_abort(c(if (family == "poisson") "{.arg y} must be non-negative whole numbers (counts) for {.code family = \"poisson\"}." else
                 "{.arg y} must be non-negative whole numbers (successes) for {.code family = \"binomial\"}.",
               x = "Entry {bad} is {y[bad]}."), arg = "y", call = call)
  }
  if (family == "binomial" && any(y > a)) {
    bad <- which(y > a)[1]
    sb_abort(c("{.arg trials} must be at least the successes {.arg y}.",
               x = "Entry {bad}: {y[bad]} successes out of {a[bad]} trials."), arg = "trials", call = call)
  }
  if (all(y == 0) || (family == "binomial" && all(y == a))) {
    sb_abort(c("The {family} trend filter has no finite fit: {if (all(y == 0)) 'every response is 0' else 'every trial is a success'}.",
               i = "The log rate / log odds would go to infinity."), arg = "y", call = call)
  }
  list(y = y, a = a)
}

tf_glm_engine <- function(control) c(tf_engine_control(control), list(max_outer = 100L))

tf_linkinv <- function(family, eta) if (family == "poisson") exp(eta) else if (family == "binomial") stats::plogis(eta) else eta

# Unit deviances (matrix eta: one column per fit) of counts / successes y with exposure / trials a.
tf_glm_deviance <- function(family, y, a, eta) {
  eta <- as.matrix(eta)  # (y, a: one per row; the saturated terms, 0 log 0 = 0, as vectors)
  if (family == "poisson") {
    mu <- a * exp(eta)
    return(2 * ((ifelse(y > 0, y * log(y), 0) - y * log(mu)) - (y - mu)))
  }
  lp <- stats::plogis(eta, log.p = TRUE)
  l1p <- stats::plogis(eta, lower.tail = FALSE, log.p = TRUE)
  sat <- ifelse(y > 0, y * log(y / a), 0) + ifelse(a - y > 0, (a - y) * log((a - y) / a), 0)
  2 * (sat - y * lp - (a - y) * l1p)
}

# trend_filter(family = "poisson" / "binomial"): d from check_tf_data(), fd from check_tf_family_data().
tf_glm_fit <- function(d, fd, family, lambda, pw, nlambda, lambda_min_ratio, control, call) {
  eng <- tf_glm_engine(control)
  if (control$method == "dp" && d$k != 0L) {
    sb_abort(c("{.code method = \"dp\"} is only available for {.code k = 0}.",
               i = "Use {.code tf_control(method = \"auto\")}."), arg = "control", call = call)
  }
  if (is.null(lambda)) {
    r0 <- sb_call_engine(cpp_tf_glm_path(family, fd$y, fd$a, d$x, d$weights, d$k, pw, numeric(0), eng))
    lmax <- max(r0$lambda_max, .Machine$double.xmin)
    lambda <- exp(seq(log(lmax), log(lmax * lambda_min_ratio), length.out = nlambda))
  }
  t0 <- proc.time()
  r <- sb_call_engine(cpp_tf_glm_path(family, fd$y, fd$a, d$x, d$weights, d$k, pw, lambda, eng))
  timing <- proc.time() - t0
  if (any(r$diverged)) {
    sb_abort(c("The {family} trend filter has no finite fit at {sum(r$diverged)} of {length(lambda)} lambda value{?s}: the {if (family == 'poisson') 'log rate' else 'log odds'} diverges.",
               x = "The responses are separated by a polynomial of degree {d$k} (e.g. only zeros on one side).",
               i = "Use a smaller {.arg k} (a larger {.arg lambda} does not help: the polynomial part is not penalized)."),
             arg = "y", kind = "input")
  }
  converged <- r$rel_gap <= control$tol
  if (any(!converged)) {
    sb_warn(c("{sum(!converged)} of {length(lambda)} {family} trend-filter solve{?s} stopped above the target duality gap.",
              i = "Largest relative gap: {signif(max(r$rel_gap), 3)} (target {control$tol})."))
  }
  structure(list(beta = r$beta, u = r$u, lambda = lambda, lambda_max = r$lambda_max, gap = r$gap, rel_gap = r$rel_gap,
                 primal = r$primal, iter = r$iter, inner_iter = r$inner_iter, converged = converged,
                 rounding_rel = rep(0, length(lambda)), df = r$df, x = d$x, y = d$y, k = d$k, weights = d$weights,
                 penalty_weights = pw, control = control, call = call, timing = timing, family = family,
                 exposure = if (family == "poisson") fd$a, trials = if (family == "binomial") fd$a),
            class = c("sb_trend_filter_glm", "sb_trend_filter", "sb_point_fit"))
}

tf_glm_size <- function(object) object$exposure %||% object$trials %||% rep(1, length(object$y))

#' @export
print.sb_trend_filter_glm <- function(x, ...) {
  tf_print_fit(x, sprintf("%s trend filtering (%s link), ", x$family, if (x$family == "poisson") "log" else "logit"),
               "newton")
}

#' Predict from a Poisson or logistic trend-filtering fit
#'
#' The fit at new inputs by the discrete-spline interpolation of [predict.sb_trend_filter()]: by default on the
#' response scale (the rate per unit exposure, the probability), with `type = "link"` the log rate or log odds
#' (the rule of every fit: [predict-types]).
#' @inheritParams predict.sb_trend_filter
#' @param object A [trend_filter()] fit with `family = "poisson"` or `"binomial"`.
#' @param type `"response"` (default) or `"link"`.
#' @return A matrix with one row per new input and one column per lambda (a vector for one lambda).
#' @seealso [trend_filter_family].
#' @export
predict.sb_trend_filter_glm <- function(object, newdata = NULL, lambda = NULL, type = c("response", "link"), ...,
                                        newx = NULL) {
  sb_check_dots(..., fn = "predict")
  type <- sb_match_arg(type, partial = TRUE)
  newx <- sb_newdata(object, newdata, newx)
  beta <- object$beta
  if (!is.null(lambda)) {
    lambda <- check_lambda(lambda)
    idx <- match(lambda, object$lambda)
    if (anyNA(idx)) {
      beta <- trend_filter(object$y, object$x, object$k, lambda = lambda, weights = object$weights,
                           penalty_factor = object$penalty_weights, control = object$control, family = object$family,
                           exposure = object$exposure, trials = object$trials)$beta
    } else {
      beta <- beta[, idx, drop = FALSE]
    }
  }
  out <- if (is.null(newx)) beta else tf_interpolate(object$x, beta, object$k, check_newx(newx))
  if (type == "response") out <- tf_linkinv(object$family, out)
  if (ncol(out) == 1L) drop(out) else out
}

#' @export
coef.sb_trend_filter_glm <- function(object, lambda = NULL, ...) {
  if (is.null(lambda)) return(object$beta)
  predict.sb_trend_filter_glm(object, lambda = lambda)
}

#' @export
fitted.sb_trend_filter_glm <- function(object, ...) {
  sb_check_dots(..., fn = "fitted")
  tf_linkinv(object$family, sb_point_signal(object))
}

#' @export
residuals.sb_trend_filter_glm <- function(object, ...) {
  sb_check_dots(..., fn = "residuals")
  object$y - tf_glm_size(object) * fitted.sb_trend_filter_glm(object)
}

#' @export
summary.sb_trend_filter_glm <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  dev <- colSums(object$weights * tf_glm_deviance(object$family, object$y, tf_glm_size(object), object$beta))
  tab <- data.frame(lambda = object$lambda, df = object$df, deviance = dev, rel_gap = object$rel_gap,
                    newton_steps = object$iter, converged = object$converged)
  sb_table_summary(sprintf("%s trend filtering of order k = %d, %d observations, %d lambda value%s (lambda_max = %s)",
                           object$family, object$k, length(object$y), length(object$lambda),
                           if (length(object$lambda) == 1L) "" else "s", format(signif(object$lambda_max, 5))), tab)
}

#' @export
plot.sb_trend_filter_glm <- function(x, lambda_index = 1L, ...) {
  a <- tf_glm_size(x)
  graphics::plot(x$x, x$y / a, pch = 20, col = "grey60", xlab = "x",
                 ylab = if (x$family == "poisson") "rate (y / exposure)" else "proportion (y / trials)", ...)
  graphics::lines(x$x, tf_linkinv(x$family, x$beta[, lambda_index]), col = "red", lwd = 2)
  invisible(x)
}

# cv_trend_filter(family = "poisson" / "binomial"): held-out points scored by their mean (weighted) deviance.
tf_glm_cv <- function(d, fd, family, lambda, nfolds, nlambda, lambda_min_ratio, control, call) {
  fit <- suppressWarnings(tf_glm_fit(d, fd, family, lambda, 1, nlambda, lambda_min_ratio, control, call))
  lambda <- fit$lambda
  inner <- seq(2L, d$n - 1L)
  fold <- integer(d$n)
  fold[inner] <- rep_len(seq_len(nfolds), length(inner))
  err <- matrix(NA_real_, nfolds, length(lambda))
  for (f in seq_len(nfolds)) {
    test <- which(fold == f)
    train <- which(fold != f)
    dtr <- list(y = d$y[train], x = d$x[train], k = d$k, n = length(train), weights = d$weights[train])
    fdtr <- list(y = fd$y[train], a = fd$a[train])
    if (all(fdtr$y == 0) || (family == "binomial" && all(fdtr$y == fdtr$a))) next
    ff <- tryCatch(suppressWarnings(tf_glm_fit(dtr, fdtr, family, lambda, 1, nlambda, lambda_min_ratio, control, call)),
                   scalebayes_error_input = function(e) NULL)
    if (is.null(ff)) next
    eta <- tf_interpolate(d$x[train], ff$beta, d$k, d$x[test])
    wt <- d$weights[test]
    err[f, ] <- colSums(wt * tf_glm_deviance(family, fd$y[test], fd$a[test], eta)) / sum(wt)
  }
  ok <- stats::complete.cases(err)
  if (sum(ok) < 2L) {
    sb_abort(c("Cross-validation of the {family} trend filter failed: fewer than two folds have a finite fit.",
               i = "Use fewer folds or give {.arg lambda}."), arg = "nfolds", call = call)
  }
  err <- err[ok, , drop = FALSE]
  cv <- colMeans(err)
  cv_se <- apply(err, 2, stats::sd) / sqrt(nrow(err))
  imin <- which.min(cv)
  i1se <- min(which(cv <= cv[imin] + cv_se[imin]))
  structure(list(lambda = lambda, cv = cv, cv_se = cv_se, lambda_min = lambda[imin], lambda_1se = lambda[i1se],
                 index_min = imin, index_1se = i1se, fit = fit, nfolds = nfolds, call = call, family = family,
                 measure = "deviance"),
            class = c("sb_cv_trend_filter", "sb_point_fit"))
}

# trend_filter_wbb(family = "poisson" / "binomial"): the draws on the link scale.
tf_glm_wbb <- function(d, fd, family, lambda, lambda_rule, nfolds, draws, prior_weights, rs, control, call) {
  cv <- NULL
  if (is.null(lambda)) {
    cv <- tf_glm_cv(d, fd, family, NULL, nfolds, 50, 1e-5, control, call)
    lambda <- cv[[paste0("lambda_", lambda_rule)]]
  }
  t_cv <- wbb_elapsed(rs)
  fit0 <- tf_glm_fit(d, fd, family, lambda, 1, 1, 1, control, call)
  engine <- tf_glm_engine(control)
  u_hat <- if (control$warm_start) fit0$u[, 1] else numeric(0)
  beta_hat <- fit0$beta[, 1]
  names_f <- paste0("f[", seq_len(d$n), "]")
  run_chunk <- function(first, count) {
    cpp_tf_glm_wbb(family, fd$y, fd$a, d$x, d$k, lambda, engine, beta_hat, u_hat, names_f,
                   wbb_engine_settings(rs, first, count, prior_weights))
  }
  # Ctrl-C: the partial fit of the draws finished (?scalebayes-interrupts)
  res <- wbb_run(rs, run_chunk, cut = function(r, k) wbb_cut_rows(r, k, c("draws", "rel_gap", "iter", "w0", "diverged")))
  stopped <- attr(res, "interrupted")
  if (!is.null(stopped)) draws <- stopped$completed
  out <- list(rel_gap = wbb_combine(res, "rel_gap"), iter = wbb_combine(res, "iter"), w0 = wbb_combine(res, "w0"),
              diverged = wbb_combine(res, "diverged"))
  dr <- wbb_combine(res, "draws")
  rm(res)
  timing <- c(elapsed = wbb_elapsed(rs), cv = t_cv)
  if (any(out$diverged == 1L)) {
    sb_abort(c("{sum(out$diverged == 1L)} of {draws} weighted {family} solve{?s} had no finite fit (the {if (family == 'poisson') 'log rate' else 'log odds'} diverged).",
               i = "The reweighted data are separated by a polynomial of degree {d$k}: use a smaller {.arg k}."),
             arg = "y", kind = "input", call = call)
  }
  bad <- sum(!(out$rel_gap <= control$tol))
  if (bad > 0) {
    small <- if (all(is.na(out$w0))) character(0) else
      c(i = "Their common prior weights w0: median {signif(stats::median(out$w0[!(out$rel_gap <= control$tol)]), 2)} (a tiny w0 leaves the draw almost unpenalized: its fit runs to large |log odds| / |log rate| slowly).")
    sb_warn(c("{bad} of {draws} weighted solve{?s} stopped above the target duality gap (100 Newton steps).",
              i = "Largest relative gap: {signif(max(out$rel_gap), 3)} (target {control$tol}).", small))
  }
  se <- stats::setNames(vapply(seq_len(ncol(dr)), function(j) stats::sd(dr[, j]), numeric(1)), colnames(dr))
  fit <- new_sb_fit(
    draws = dr, estimate = beta_hat, method = "trend_filter_wbb",
    subclass = c("sb_trend_filter_glm_wbb", "sb_trend_filter_wbb"), call = call, seed = rs$seed, timing = timing,
    settings = list(k = d$k, lambda = lambda, prior_weights = prior_weights, draws = draws, threads = rs$threads,
                    nobs = d$n, control = control, lambda_rule = if (is.null(cv)) NA else lambda_rule, family = family,
                    print_info = c(family = family, order = d$k, lambda = signif(lambda, 5), prior_weights = prior_weights)),
    diagnostics = list(rel_gap = out$rel_gap, iter = out$iter, max_rel_gap = max(out$rel_gap),
                       n_above_tol = bad, estimate_rel_gap = fit0$rel_gap),
    x = d$x, y = d$y, lambda = lambda, se = se, w0 = out$w0, cv = cv, family = family,
    exposure = if (family == "poisson") fd$a, trials = if (family == "binomial") fd$a
  )
  if (!is.null(stopped)) fit <- sb_partial_fit(fit, draws, stopped$requested)
  fit
}

# ---- generics of GLM trend-filter WBB fits (the draws are on the link scale) ---------------------------------------

sb_epred_draws.sb_trend_filter_glm_wbb <- function(object, x, call = rlang::caller_env()) {
  tf_linkinv(object$family, sb_linpred_draws(object, x, call = call))
}

# exposure / trials of the observations scored: those of the fit at the training data, 1 at new inputs
tf_glm_eval_size <- function(object, x) if (is.null(x)) tf_glm_size(object) else rep(1, NROW(x))

tf_glm_draw_response <- function(object, x, call) {
  mu <- sb_epred_draws(object, x, call = call)
  a <- rep(tf_glm_eval_size(object, x), each = nrow(mu))
  out <- if (object$family == "poisson") stats::rpois(length(mu), a * mu) else stats::rbinom(length(mu), a, mu)
  matrix(as.double(out), nrow(mu))
}

#' @method posterior_predict sb_trend_filter_glm_wbb
#' @export
posterior_predict.sb_trend_filter_glm_wbb <- function(object, newdata = NULL, seed = NULL, ..., newx = NULL) {
  sb_check_dots(..., fn = "posterior_predict")
  call <- rlang::current_env()
  ev <- sb_eval_data(object, newdata, newx, call = call)
  if (is.null(seed)) return(tf_glm_draw_response(object, ev$x, call))
  withr::with_seed(check_seed_value(seed, call), tf_glm_draw_response(object, ev$x, call))
}

#' @method predictive_interval sb_trend_filter_glm_wbb
#' @export
predictive_interval.sb_trend_filter_glm_wbb <- function(object, newdata = NULL, seed = NULL, ..., newx = NULL,
                                                        prob = 0.95, level = NULL, probs = NULL) {
  sb_check_dots(..., fn = "predictive_interval")
  prob <- sb_interval_prob(prob, missing(prob), level, probs, "predictive_interval")
  pp <- posterior_predict.sb_trend_filter_glm_wbb(object, newdata = newdata, seed = seed, newx = newx)
  a <- (1 - prob) / 2
  out <- t(apply(pp, 2, stats::quantile, probs = c(a, 1 - a), names = FALSE))
  colnames(out) <- paste0(format(100 * c(a, 1 - a), trim = TRUE), "%")
  out
}

#' @method log_lik sb_trend_filter_glm_wbb
#' @export
log_lik.sb_trend_filter_glm_wbb <- function(object, newdata = NULL, newy = NULL, ..., newx = NULL) {
  sb_check_dots(..., fn = "log_lik")
  call <- rlang::current_env()
  ev <- sb_eval_data(object, newdata, newx, newy, need_y = TRUE, call = call)
  mu <- sb_epred_draws(object, ev$x, call = call)
  a <- rep(tf_glm_eval_size(object, ev$x), each = nrow(mu))
  y <- rep(ev$y, each = nrow(mu))
  ll <- if (object$family == "poisson") stats::dpois(y, a * mu, log = TRUE) else stats::dbinom(y, a, mu, log = TRUE)
  matrix(ll, nrow(mu))
}

#' @export
residuals.sb_trend_filter_glm_wbb <- function(object, type = "response", newdata = NULL, newy = NULL, ..., newx = NULL) {
  sb_check_dots(..., fn = "residuals")
  call <- rlang::current_env()
  sb_match_arg(type, "response")
  ev <- sb_eval_data(object, newdata, newx, newy, need_y = TRUE, call = call)
  m <- colMeans(sb_epred_draws(object, ev$x, call = call))
  unname(ev$y - tf_glm_eval_size(object, ev$x) * m)
}

#' @export
predict.sb_trend_filter_glm_wbb <- function(object, newdata = NULL, type = c("response", "link"), draws = FALSE,
                                            interval = c("credible", "prediction"), ..., newx = NULL, prob = 0.95,
                                            level = NULL, probs = NULL) {
  sb_check_dots(..., fn = "predict")
  type <- sb_match_arg(type, partial = TRUE)
  interval <- sb_match_arg(interval, partial = TRUE)
  prob <- sb_interval_prob(prob, missing(prob), level, probs, "predict")
  call <- rlang::current_env()
  if (interval == "prediction") {
    nd <- sb_newdata(object, newdata, newx)
    x <- if (is.null(nd)) NULL else sb_prepare_x(object, nd, call = call)
    pd <- tf_glm_draw_response(object, x, call)
    if (check_flag(draws)) return(pd)
    a <- (1 - prob) / 2
    q <- apply(pd, 2, stats::quantile, probs = c(a, 1 - a), names = FALSE)
    out <- data.frame(fit = colMeans(pd), se = apply(pd, 2, stats::sd), lower = q[1, ], upper = q[2, ])
    out <- sb_predict_decorate(object, x, out)
    out$estimate <- tf_glm_eval_size(object, x) * tf_linkinv(object$family, out$estimate)
    return(out)
  }
  out <- predict.sb_fit(object, newdata = newdata, type = type, draws = draws, interval = "credible", newx = newx,
                        prob = prob)
  if (is.data.frame(out) && type == "response") out$estimate <- tf_linkinv(object$family, out$estimate)
  out
}

#' @export
plot.sb_trend_filter_glm_wbb <- function(x, band = c("quantile", "se"), prob = 0.95, truth = NULL, main = NULL,
                                         xlab = "x", ylab = NULL, ...) {
  band <- sb_match_arg(band)
  a <- tf_glm_size(x)
  p <- stats::predict(x, type = "response", prob = prob)
  if (band == "se") {  # +/- 2 se on the link scale, mapped to the response scale
    pl <- stats::predict(x, type = "link", prob = prob)
    p$lower <- tf_linkinv(x$family, pl$estimate - 2 * pl$se)
    p$upper <- tf_linkinv(x$family, pl$estimate + 2 * pl$se)
  }
  if (is.null(main)) {
    main <- sprintf("%s trend filtering (k = %d), lambda = %s, T = %d WBB draws", x$family, x$settings$k,
                    format(signif(x$lambda, 4)), nrow(x$draws))
  }
  if (is.null(ylab)) ylab <- if (x$family == "poisson") "rate (y / exposure)" else "probability (y / trials)"
  obs <- x$y / a
  yl <- range(c(obs, p$lower, p$upper, truth))
  graphics::plot(x$x, obs, pch = 20, col = "grey70", ylim = yl, main = main, xlab = xlab, ylab = ylab, ...)
  graphics::polygon(c(x$x, rev(x$x)), c(p$lower, rev(p$upper)), col = grDevices::adjustcolor("steelblue", 0.3),
                    border = NA)
  if (!is.null(truth)) graphics::lines(x$x, truth, col = "black", lwd = 1.5)
  graphics::lines(x$x, p$estimate, col = "red", lwd = 2)
  leg <- c("data", "estimate", if (band == "se") "estimate +/- 2 se (link scale)" else sprintf("%g%% quantile band", 100 * prob),
           if (!is.null(truth)) "truth")
  graphics::legend("topleft", legend = leg, col = c("grey70", "red", "steelblue", if (!is.null(truth)) "black"),
                   lty = c(NA, 1, 1, if (!is.null(truth)) 1), lwd = c(NA, 2, 8, if (!is.null(truth)) 1.5),
                   pch = c(20, NA, NA, NA)[seq_along(leg)], bty = "n", cex = 0.8)
  invisible(x)
}

sb_prior.sb_trend_filter_glm_wbb <- function(object) {
  s <- object$settings
  list(prior = sprintf("weighted Bayesian bootstrap of %s trend filtering (order %d): penalty lambda = %g times %s prior weights",
                       s$family, s$k, s$lambda, s$prior_weights), lambda = s$lambda, k = s$k,
       prior_weights = s$prior_weights, family = s$family)
}
