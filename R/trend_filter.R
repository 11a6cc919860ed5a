# Trend filtering of any order on sorted, possibly unevenly spaced inputs: single fits, lambda paths,
# prediction by discrete-spline interpolation, and cross-validation. Engine: inst/include/scalebayes/genlasso.

#' Control settings for the trend-filtering and generalized-lasso solvers
#'
#' @param tol Target relative duality gap of every interior-point solve (the solver stops when
#'   `(P(beta) - g(u)) / P(beta) <= tol`, with `P` the primal and `g` the dual objective).
#' @param max_iter Maximum number of Newton steps per solve.
#' @param method `"auto"` (exact dynamic programming for `k = 0`, interior point for `k >= 1`), `"dp"`
#'   (only for `k = 0`) or `"ip"` (interior point for every `k`; mainly for testing).
#' @param warm_start Warm-start each solve of a path (and of every WBB draw) from the previous / the
#'   unweighted dual solution.
#' @param newton How the interior point solves its Newton systems (mainly for testing). `"auto"`: for
#'   `k <= 1` the banded dual normal equations \eqn{\Theta + D W^{-1} D^\top} (about 10x cheaper per step),
#'   factored in double when \eqn{s = n (\max w / \min w)^{1/4} \le 3 \cdot 10^5} and in long double when
#'   \eqn{s \le 10^7}, where they were measured to hold; otherwise, and as a restart whenever a step is
#'   blocked, the Givens QR. `"qr"`: always the Givens QR. `"dual"`: the dual normal equations for every
#'   `k <= 1` problem (with the same restart).
#' @return A list of class `sb_tf_control`.
#' @export
#' @examples
#' tf_control(tol = 1e-10)
tf_control <- function(tol = 1e-8, max_iter = 200, method = c("auto", "dp", "ip"), warm_start = TRUE,
                       newton = c("auto", "qr", "dual")) {
  tol <- check_number(tol, lower = 0, upper = 1, lower_open = TRUE)
  max_iter <- check_count(max_iter)
  method <- sb_match_arg(method)
  warm_start <- check_flag(warm_start)
  newton <- sb_match_arg(newton)
  structure(list(tol = tol, max_iter = max_iter, method = method, warm_start = warm_start, newton = newton),
            class = "sb_tf_control")
}

# The solver settings as the engine reads them (src/trend_filter.cpp, tf_engine_from()): solver and Newton
# systems by name (genlasso/trend_filter.hpp's tf_method_names, genlasso/ip_types.hpp's newton_directions_names),
# target relative gap, step limit.
tf_engine_control <- function(control) {
  newton <- if (is.null(control$newton)) "auto" else control$newton
  list(solver = control$method, newton = newton,
       tol = control$tol, max_iter = control$max_iter)
}

check_tf_control <- function(control, call = rlang::caller_env()) {
  if (!inherits(control, "sb_tf_control")) {
    sb_abort(c("{.arg control} must be made by {.fn tf_control}.",
               x = "You supplied {.obj_type_friendly {control}}."), arg = "control", call = call)
  }
  control
}

# Validates y, x, k (and weights) for trend filtering; returns the cleaned list.
# `has_weights`: whether the caller takes `weights` (the fix for ties names it only then).
check_tf_data <- function(y, x, k, weights = NULL, call = rlang::caller_env(), has_weights = TRUE) {
  if (!is.numeric(y) || !is.null(dim(y)) && !(is.matrix(y) && ncol(y) == 1L)) {
    sb_abort(c("{.arg y} must be a numeric vector.", x = "You supplied {.obj_type_friendly {y}}."),
             arg = "y", call = call)
  }
  y <- as.double(y)
  n <- length(y)
  if (any(!is.finite(y))) {
    sb_abort(c("{.arg y} must contain only finite values.",
               x = "Found {sum(!is.finite(y))} NA/NaN/Inf value{?s}."), arg = "y", call = call)
  }
  check_square_sums(y, "y", call = call)  # cross-validation and the solver form sums of squares of y
  if (is.null(x)) x <- seq_len(n)
  if (!is.numeric(x) || length(x) != n) {
    sb_abort(c("{.arg x} must be a numeric vector with one value per element of {.arg y}.",
               x = "{.arg x} has length {length(x)}, {.arg y} has length {n}."), arg = "x", call = call)
  }
  x <- as.double(x)
  if (any(!is.finite(x))) {
    sb_abort(c("{.arg x} must contain only finite values.",
               x = "Found {sum(!is.finite(x))} NA/NaN/Inf value{?s}."), arg = "x", call = call)
  }
  d <- diff(x)
  if (any(d < 0)) {
    sb_abort(c("{.arg x} must be sorted in increasing order.",
               x = "{.arg x} decreases at position {which(d < 0)[1] + 1}.",
               i = "Sort the data first: {.code o <- order(x); y <- y[o]; x <- x[o]}."),
             arg = "x", call = call)
  }
  if (any(d == 0)) {
    sb_abort(c("{.arg x} must not contain ties.",
               x = "{sum(d == 0)} tied value{?s}, the first at position {which(d == 0)[1] + 1}.",
               i = if (has_weights) "Average the responses of tied inputs and pass their counts as {.arg weights}."
                   else "Average the responses of tied inputs (e.g. {.code stats::aggregate(y ~ x, FUN = mean)}), or fit {.fn trend_filter} with their counts as {.arg weights}."),
             arg = "x", call = call)
  }
  k <- check_count(k, arg = "k", call = call, min = 0L)
  if (k >= n - 1L) {
    sb_abort(c("{.arg k} must be smaller than n - 1 = {n - 1}.",
               x = "You supplied k = {k} with n = {n} observations."), arg = "k", call = call)
  }
  check_tf_x_scale(x, k, call)
  if (is.null(weights)) {
    weights <- rep(1, n)
  } else {
    weights <- check_weights(weights, n, arg = "weights", call = call, positive = TRUE)
  }
  list(y = y, x = x, k = k, n = n, weights = weights)
}

# The scale of `x` (as check_square_sums() for `y`): the penalty's divided differences of order k + 1 divide by
# powers of the spacings, which overflow (x * 1e300: the penalty vanishes and the fit is y) or underflow (x * 1e-300)
# in double precision. The span to the power k + 1 and the smallest gap to the power k + 1 must be finite and
# non-zero (issue 61).
check_tf_x_scale <- function(x, k, call = rlang::caller_env()) {
  n <- length(x)
  span <- x[n] - x[1L]
  gap <- min(diff(x))
  ok <- is.finite(span) && is.finite(span^(k + 1)) && gap^(k + 1) > 0 && is.finite(sum(x^2))
  if (ok) return(invisible(x))
  sb_abort(c("{.arg x} is on a scale that double precision cannot hold: the penalty's divided differences of order {k + 1} overflow or underflow (range {format(span, digits = 3)}, smallest gap {format(gap, digits = 3)}).",
             i = "Rescale {.arg x}, e.g. {.code x <- (x - min(x)) / diff(range(x))}; the fitted values do not depend on the scale of {.arg x} (the penalty's lambda does)."),
           arg = "x", kind = "scaling", call = call)
}

# penalty_factor, the one name of a penalty weight per penalty term; penalty_weights its deprecated name.
tf_penalty_factor <- function(old, new, missing_new, fn, old_missing, call = rlang::caller_env()) {
  sb_renamed_arg(old, new, "penalty_weights", "penalty_factor", missing_new, fn, call = call, old_missing = old_missing)
}

check_penalty_weights <- function(pw, m, arg = "penalty_factor", call = rlang::caller_env()) {
  if (is.null(pw)) return(1)
  if (!is.numeric(pw) || !(length(pw) %in% c(1L, m)) || any(!is.finite(pw)) || any(pw <= 0)) {
    sb_abort(c("{.arg {arg}} must be one positive number or {m} positive numbers (one per difference).",
               x = "It has length {length(pw)}{if (length(pw) %in% c(1, m)) ' and non-positive or non-finite entries' else ''}."),
             arg = arg, call = call)
  }
  as.double(pw)
}

#' Trend filtering of order k
#'
#' Fits the (weighted) trend-filtering estimate of order `k` (Tibshirani 2014) on sorted, possibly unevenly
#' spaced inputs `x`:
#' \deqn{\min_\beta \frac12 \sum_i w_i (y_i - \beta_i)^2 + \lambda \sum_j p_j |(D^{(x,k+1)}\beta)_j|,}
#' where \eqn{D^{(x,k+1)}} is the falling-factorial difference operator
#' (\eqn{D^{(x,1)}} the first differences, \eqn{D^{(x,k+1)} = D^{(1)} \mathrm{diag}(k/(x_{i+k}-x_i)) D^{(x,k)}},
#' as in `genlasso::trendfilter(pos = x)`; for `x = 1:n` the integer differences of Newton, Polson & Xu 2021, eq. in section 3.3),
#' `w` are observation weights and `p` penalty (prior) weights.
#'
#' @details `k = 0` (the fused lasso) is solved exactly in O(n) by weighted dynamic programming
#' (Johnson 2013). `k >= 1` is solved by a primal-dual interior-point method on the primal problem
#' (Mehrotra's predictor-corrector; Newton steps by a banded Givens QR of the stiff least-squares form of
#' \eqn{W + D^\top \Theta^{-1} D}, O(n k^2) per step, or for `k <= 1` by the cheaper banded dual normal
#' equations with one Gondzio centrality corrector, see `newton` in [tf_control()]). If it stops short of both the
#' target and the rounding floor (`rounding_rel` below), it is run again with a precision escalation: where
#' the double-precision Newton directions are lost (the dual residual grows a hundredfold), it goes back one
#' step and continues with a long-double iterate and refined directions, then with a long-double
#' factorization. If that too stops short, an interior point on the dual (Kim, Koh, Boyd & Gorinevsky 2009;
#' extended-precision iterates, primal polish on the active set) is run; the best certificate of a returned
#' (double-precision) pair is kept. Every solve reports its certified relative duality gap
#' (`rel_gap`) and stops at `control$tol` (default 1e-8). Deviation from the issue's plan (banded Cholesky):
#' the dual matrix \eqn{D W^{-1} D^\top} has condition number of order \eqn{n^{2k+2}}, and the Cholesky of the
#' primal matrix loses the polynomial null space of D once \eqn{\Theta^{-1}} is large; both were measured to fail.
#' `rounding_rel` bounds how much rounding the fit to double precision alone can change the objective
#' (relative): for k >= 2 with large n and large lambda it exceeds 1e-8 and no solver returning doubles can
#' certify the target; such solves stop with `converged = FALSE` and a warning that says so.
#' See `vignette("trend-filtering")` and `system.file("design-genlasso.md", package = "scalebayes")`.
#'
#' @param y Numeric response vector.
#' @param x Sorted, distinct input locations (default `seq_along(y)`).
#' @param k Order (0 = piecewise constant, 1 = piecewise linear, 3 = cubic, ...).
#' @param lambda Penalty value(s). `NULL` gives a path of `nlambda` values from `lambda_max` (the smallest
#'   lambda at which the fit is a polynomial of degree k, computed exactly) down to
#'   `lambda_min_ratio * lambda_max`.
#' @param weights Positive observation weights (default 1).
#' @param penalty_factor One positive number or one per difference (`n - k - 1`), multiplying lambda (the name of
#'   [weighted_lasso()] and glmnet).
#' @param penalty_weights Deprecated name of `penalty_factor` (works for one release, with a warning).
#' @param nlambda,lambda_min_ratio Path length and end when `lambda` is `NULL`.
#' @param control [tf_control()].
#' @param path `TRUE`: the exact solution path (every knot), as `genlasso::trendfilter(pos = x, ord = k)`,
#'   by the dual path algorithm with a banded Givens QR per knot (O(n (k + 2)^2) per knot); returns an
#'   [sb_genlasso_path] object (`predict(fit, newdata, lambda = )` interpolates in lambda exactly and in x by
#'   discrete splines). See [generalized_lasso()] for the algorithm and `maxsteps`, `minlam`, `approx`.
#' @param maxsteps,minlam,approx Path settings of `path = TRUE` (genlasso's names and meanings).
#' @param family `"gaussian"` (default, the problem above), `"poisson"` (log rate) or `"binomial"` (log odds):
#'   see [trend_filter_family] (proximal Newton with a certified duality gap; the fit is of class
#'   `sb_trend_filter_glm` and `predict()` takes `type = "link"` / `"response"`).
#' @param exposure Poisson: positive exposures (default 1), \eqn{y_i \sim \mathrm{Poisson}(a_i e^{\beta_i})}.
#' @param trials Binomial: whole numbers of trials, at least `y` (default 1: a binary series).
#' @param quiet `path = TRUE` only: progress bar over the knots unless quiet (default: quiet unless
#'   interactive); see [generalized_lasso()].
#' @return With `path = TRUE` an [sb_genlasso_path] object. Otherwise an object of class `sb_trend_filter`: `beta` (n x L matrix of fits), `lambda`, `lambda_max`,
#'   `rel_gap`, `gap`, `iter`, `converged`, `rounding_rel`, `df` (number of nonzero differences plus k + 1),
#'   and the data.
#' @seealso [cv_trend_filter()], [trend_filter_wbb()], [generalized_lasso()].
#' @export
#' @examples
#' set.seed(1)
#' x <- 1:100
#' y <- sin(x / 10) + rnorm(100, sd = 0.3)
#' fit <- trend_filter(y, x, k = 2, lambda = 100)
#' fit$rel_gap
#' plot(x, y); lines(x, fit$beta[, 1], col = "red")
#' predict(fit, newx = c(10.5, 50.25))
trend_filter <- function(y, x = NULL, k = 3, lambda = NULL, weights = NULL, penalty_factor = NULL,
                         nlambda = 50, lambda_min_ratio = 1e-5, control = tf_control(), penalty_weights = NULL,
                         path = FALSE, maxsteps = 2000, minlam = 0, approx = FALSE, quiet = NULL,
                         family = c("gaussian", "poisson", "binomial"), exposure = NULL, trials = NULL) {
  call <- match.call()
  penalty_factor <- tf_penalty_factor(penalty_weights, penalty_factor, missing(penalty_factor), "trend_filter",
                                      missing(penalty_weights))
  family <- sb_match_arg(family)  # Poisson / binomial: R/trend_filter_glm.R
  d <- check_tf_data(y, x, k, weights)
  fd <- check_tf_family_data(family, d$y, exposure, trials, d$n)
  if (family != "gaussian") {
    if (isTRUE(path)) {
      sb_abort(c("{.code path = TRUE} (the exact dual path) is for Gaussian trend filtering.",
                 i = "For {.code family = \"{family}\"} give a {.arg lambda} grid (or none: a grid from lambda_max)."),
               arg = "path")
    }
    control <- check_tf_control(control)
    return(tf_glm_fit(d, fd, family, check_lambda(lambda), check_penalty_weights(penalty_factor, d$n - d$k - 1L),
                      check_count(nlambda, max = 1e5),
                      check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE), control, call))
  }
  if (check_flag(path)) {
    pa <- check_path_args(maxsteps, minlam, approx)
    pw <- check_penalty_weights(penalty_factor, d$n - d$k - 1L)
    D <- trend_filter_matrix(d$n, d$k, d$x)
    sp <- list(m = nrow(D), n = ncol(D), i = D@i, p = D@p, x = D@x)
    r <- genlasso_dual_path(d$y, sp, d$weights, pw, pa, quiet = resolve_quiet(quiet))
    return(new_genlasso_path(r, d$y, D, NULL, d$weights, pw, pa, call, extra = list(tf_x = d$x, tf_k = d$k)))
  }
  control <- tf_check_gaussian_control(control, d$k)
  pw <- check_penalty_weights(penalty_factor, d$n - d$k - 1L)
  lambda <- tf_lambda_grid(d, pw, check_lambda(lambda), check_count(nlambda, max = 1e5),
                           check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE))
  t0 <- proc.time()
  r <- sb_call_engine(cpp_tf_path(d$y, d$x, d$weights, d$k, pw, lambda, tf_engine_control(control),
                                  control$warm_start))
  tf_fit_object(r, lambda, d, pw, control, call, proc.time() - t0)
}

# The solver settings of a Gaussian trend filter, checked (method = "dp" is for k = 0 only).
tf_check_gaussian_control <- function(control, k, call = rlang::caller_env()) {
  control <- check_tf_control(control)
  if (control$method == "dp" && k != 0L) {
    sb_abort(c("{.code method = \"dp\"} is only available for {.code k = 0}.",
               i = "Use {.code tf_control(method = \"auto\")}."), arg = "control", call = call)
  }
  control
}

# The lambda values of a path: those given, or nlambda values from the exact lambda_max down to
# lambda_min_ratio * lambda_max (log-spaced).
tf_lambda_grid <- function(d, pw, lambda, nlambda, lambda_min_ratio) {
  if (!is.null(lambda)) return(lambda)
  lm <- sb_call_engine(cpp_tf_lambda_max(d$y, d$x, d$weights, d$k, pw))
  lmax <- max(lm$lambda_max, .Machine$double.xmin)
  exp(seq(log(lmax), log(lmax * lambda_min_ratio), length.out = nlambda))
}

# The sb_trend_filter object of an engine path r (cpp_tf_path(), or one element of cpp_tf_cv_paths()), with the
# warning for solves above the target gap (warn = TRUE).
tf_fit_object <- function(r, lambda, d, pw, control, call, timing, warn = TRUE) {
  converged <- r$rel_gap <= control$tol
  if (warn && any(!converged)) {
    floor_hit <- !converged & r$rounding_rel > 0.1 * control$tol
    msg <- c("{sum(!converged)} of {length(lambda)} solve{?s} stopped above the target duality gap.",
             i = "Largest relative gap: {signif(max(r$rel_gap), 3)} (target {control$tol}).")
    msg <- if (any(floor_hit)) {
      c(msg, i = paste("At {sum(floor_hit)} of these lambda{?s}, rounding {.arg beta} to double precision alone can",
                       "change the objective by up to {signif(max(r$rounding_rel[floor_hit]), 2)} (relative; see",
                       "{.code rounding_rel}): the (k+1)-th differences of the fit are at rounding level, so no",
                       "solver returning doubles can certify the target there."))
    } else {
      c(msg, i = "The problem is badly conditioned (large k with large n, or very uneven x).")
    }
    sb_warn(msg)
  }
  # r$df: degrees of freedom (Tibshirani & Taylor 2011), knots + k + 1; a knot is a difference whose dual
  # variable sits on the box (|u_j| = lambda_j) and whose jump is not rounding noise (trend_filter_df())
  structure(list(beta = r$beta, u = r$u, lambda = lambda, lambda_max = r$lambda_max, gap = r$gap, rel_gap = r$rel_gap,
                 primal = r$primal, iter = r$iter, converged = converged, rounding_rel = r$rounding_rel, df = r$df,
                 x = d$x, y = d$y, k = d$k,
                 weights = d$weights, penalty_weights = pw, control = control, call = call, timing = timing),
            class = c("sb_trend_filter", "sb_point_fit"))
}

# D^{(x,k+1)} %*% B for a matrix B (dense D; used for degrees of freedom only).
tf_apply_difference <- function(x, k, B) {
  B <- as.matrix(B)
  out <- B
  xx <- x
  out <- out[-1L, , drop = FALSE] - out[-nrow(out), , drop = FALSE]
  for (kk in seq_len(k)) {
    n <- length(x)
    s <- kk / (x[(kk + 1L):n] - x[1L:(n - kk)])
    out <- out * s
    out <- out[-1L, , drop = FALSE] - out[-nrow(out), , drop = FALSE]
  }
  out
}

#' @export
print.sb_trend_filter <- function(x, ...) tf_print_fit(x, "", "iter")

# The print of a trend-filtering fit (gaussian or GLM): the header, lambda_max and the largest gap, the first ten
# solutions; `what` names the fit's kind, `iter_name` its iteration count's column.
tf_print_fit <- function(x, what, iter_name) {
  cat(sprintf("<sb_trend_filter> %sorder k = %d, n = %d, %d lambda value%s\n", what, x$k, length(x$y),
              length(x$lambda), if (length(x$lambda) == 1) "" else "s"))
  cat(sprintf("lambda_max = %.4g; largest relative duality gap %.2g (target %.0e)\n", x$lambda_max,
              max(x$rel_gap), x$control$tol))
  show <- data.frame(lambda = signif(x$lambda, 4), df = x$df, rel_gap = signif(x$rel_gap, 2), x$iter)
  names(show)[4] <- iter_name
  print(utils::head(show, 10), row.names = FALSE)
  if (length(x$lambda) > 10) cat(sprintf("... %d more\n", length(x$lambda) - 10))
  invisible(x)
}

#' @export
coef.sb_trend_filter <- function(object, lambda = NULL, ...) {
  if (is.null(lambda)) return(object$beta)
  predict.sb_trend_filter(object, newx = NULL, lambda = lambda)
}

#' Predict from a trend-filtering fit
#'
#' Values at new inputs by discrete-spline interpolation consistent with the falling-factorial basis
#' (Tibshirani 2014; Wang, Smola & Tibshirani 2014): for `newx` in \eqn{(x_i, x_{i+1}]} the fit is the degree-k
#' polynomial through the fitted values at \eqn{x_{i-k+1}, \dots, x_{i+1}} (at the left end the first
#' k + 1 points; beyond the data the end polynomials are extended).
#' @param object An `sb_trend_filter` fit.
#' @param newdata New inputs (default: the fitted `x`).
#' @param lambda Penalty values (default: those of the fit). Values not on the fitted path are solved for.
#' @param ... Not used: any argument given here is an error.
#' @param newx Synonym of `newdata` (the package's one name for new inputs is `newdata`).
#' @return A matrix with one row per new input and one column per lambda (a vector when there is one lambda).
#' @export
predict.sb_trend_filter <- function(object, newdata = NULL, lambda = NULL, ..., newx = NULL) {
  sb_check_dots(..., fn = "predict")
  newx <- sb_newdata(object, newdata, newx)
  beta <- object$beta
  if (!is.null(lambda)) {
    lambda <- check_lambda(lambda)
    idx <- match(lambda, object$lambda)
    if (anyNA(idx)) {
      refit <- trend_filter(object$y, object$x, object$k, lambda = lambda, weights = object$weights,
                            penalty_factor = object$penalty_weights, control = object$control)
      beta <- refit$beta
    } else {
      beta <- beta[, idx, drop = FALSE]
    }
  }
  out <- if (is.null(newx)) beta else tf_interpolate(object$x, beta, object$k, check_newx(newx))
  if (ncol(out) == 1L) drop(out) else out
}

check_newx <- function(newx, call = rlang::caller_env()) {
  if (!is.numeric(newx) || any(!is.finite(newx))) {
    sb_abort("{.arg newx} must be a vector of finite numbers.", arg = "newx", call = call)
  }
  as.double(newx)
}

#' Discrete-spline interpolation of fitted values (n x L matrix) at new inputs.
#' @noRd
tf_interpolate <- function(x, beta, k, newx) {
  beta <- as.matrix(beta)
  n <- length(x)
  i <- findInterval(newx, x, left.open = TRUE)  # newx in (x_i, x_{i+1}]  ->  i
  start <- pmin(pmax(i + 1L - k, 1L), n - k)    # points start .. start + k
  out <- matrix(0, length(newx), ncol(beta))
  for (a in 0:k) {
    wa <- rep(1, length(newx))
    xa <- x[start + a]
    for (b in 0:k) {
      if (b == a) next
      xb <- x[start + b]
      wa <- wa * (newx - xb) / (xa - xb)
    }
    out <- out + wa * beta[start + a, , drop = FALSE]
  }
  exact <- match(newx, x)
  hit <- !is.na(exact)
  if (any(hit)) out[hit, ] <- beta[exact[hit], , drop = FALSE]
  dimnames(out) <- list(NULL, colnames(beta))  # rows: the new inputs by position (not a neighbour's name)
  out
}

#' Cross-validation for trend filtering
#'
#' K-fold cross-validation over a lambda path, holding out every K-th point (the first and last points are
#' always kept so that held-out points are interpolated, as in `genlasso::cv.trendfilter`) and predicting
#' them by discrete-spline interpolation ([predict.sb_trend_filter()]).
#'
#' @inheritParams trend_filter
#' @param nfolds Number of folds.
#' @param family,exposure,trials As in [trend_filter()]; for `"poisson"` and `"binomial"` the held-out points are
#'   scored by their weighted mean deviance (and `measure = "deviance"`), see [trend_filter_family].
#' @param threads Worker threads (default [sb_default_threads()]): the paths of the folds and of all data run in
#'   parallel (Gaussian family); the result does not depend on it.
#' @param quiet Hide the progress bar over folds x lambda values (default: not interactive).
#' @details The interior-point solver of \eqn{k \ge 1} does not profit from warm starts along a path (it takes the
#'   same Newton steps from a cold start; `bench/trend_filter_cv.R`), so the speed of the cross-validation comes
#'   from solving the `nfolds + 1` paths (each fold's and the full data's, every one over the whole lambda grid)
#'   on parallel threads, with a progress bar over folds x lambda values on the main thread (measured with 2
#'   threads, k = 3, 50 lambda values: 0.61 s against 1.08 s one path after another at n = 1,000, 18.9 s against
#'   31.7 s at n = 10,000; the chosen lambda the same on every seed tried).
#' @return An object of class `sb_cv_trend_filter`: `lambda`, `cv` (weighted mean squared prediction error, or
#'   mean deviance for the GLM families),
#'   `cv_se`, `lambda_min`, `lambda_1se`, and `fit` (the [trend_filter()] path on all data).
#' @export
#' @examples
#' set.seed(1)
#' y <- sin((1:200) / 20) + rnorm(200, sd = 0.3)
#' cv <- cv_trend_filter(y, k = 1, nlambda = 20)
#' cv$lambda_min
cv_trend_filter <- function(y, x = NULL, k = 3, lambda = NULL, weights = NULL, nfolds = 5, nlambda = 50,
                            lambda_min_ratio = 1e-5, control = tf_control(),
                            family = c("gaussian", "poisson", "binomial"), exposure = NULL, trials = NULL,
                            threads = NULL, quiet = NULL) {
  call <- match.call()
  family <- sb_match_arg(family)
  d <- check_tf_data(y, x, k, weights)
  fd <- check_tf_family_data(family, d$y, exposure, trials, d$n)
  nfolds <- check_count(nfolds, min = 2L)
  inner <- seq(2L, d$n - 1L)
  if (length(inner) < nfolds || d$n - ceiling((d$n - 2) / nfolds) - 1L < d$k + 2L) {
    sb_abort(c("Too few observations for {nfolds}-fold cross-validation with k = {d$k}.",
               i = "Use fewer folds or give {.arg lambda}."), arg = "nfolds")
  }
  if (family != "gaussian") {  # deviance of the held-out points (R/trend_filter_glm.R)
    return(tf_glm_cv(d, fd, family, check_lambda(lambda), nfolds, check_count(nlambda, max = 1e5),
                     check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE),
                     check_tf_control(control), call))
  }
  control <- tf_check_gaussian_control(control, d$k)
  lambda <- tf_lambda_grid(d, 1, check_lambda(lambda), check_count(nlambda, max = 1e5),
                           check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE))
  threads <- resolve_threads(threads)
  quiet <- resolve_quiet(quiet)
  fold <- integer(d$n)
  fold[inner] <- rep_len(seq_len(nfolds), length(inner))
  # every fold's path and the full-data path at once, spread over the threads (R/trend_filter.R's engine:
  # genlasso::trend_filter_cv_paths()); the same solves, in the same order within each path, as one
  # trend_filter() call per fold
  t0 <- proc.time()
  paths <- sb_call_engine(cpp_tf_cv_paths(d$y, d$x, d$weights, d$k, 1, lambda, tf_engine_control(control),
                                          control$warm_start, fold, nfolds, TRUE, threads, quiet))
  fit <- tf_fit_object(paths[[nfolds + 1L]], lambda, d, 1, control, call, proc.time() - t0, warn = FALSE)
  err <- matrix(NA_real_, nfolds, length(lambda))
  for (f in seq_len(nfolds)) {
    test <- which(fold == f)
    train <- which(fold != f)
    pred <- tf_interpolate(d$x[train], paths[[f]]$beta, d$k, d$x[test])
    wt <- d$weights[test]
    err[f, ] <- colSums(wt * (d$y[test] - pred)^2) / sum(wt)
  }
  cv <- colMeans(err)
  cv_se <- apply(err, 2, stats::sd) / sqrt(nfolds)
  imin <- which.min(cv)
  i1se <- min(which(cv <= cv[imin] + cv_se[imin]))
  structure(list(lambda = lambda, cv = cv, cv_se = cv_se, lambda_min = lambda[imin], lambda_1se = lambda[i1se],
                 index_min = imin, index_1se = i1se, fit = fit, nfolds = nfolds, call = call),
            class = c("sb_cv_trend_filter", "sb_point_fit"))
}

#' @export
print.sb_cv_trend_filter <- function(x, ...) {
  cat(sprintf("<sb_cv_trend_filter> %d-fold CV over %d lambda values (k = %d)\n", x$nfolds, length(x$lambda),
              x$fit$k))
  cat(sprintf("lambda_min = %.4g (CV error %.4g), lambda_1se = %.4g\n", x$lambda_min, x$cv[x$index_min],
              x$lambda_1se))
  invisible(x)
}

#' @export
plot.sb_cv_trend_filter <- function(x, ...) {
  graphics::plot(log(x$lambda), x$cv, type = "b", pch = 20, xlab = "log(lambda)", ylab = "CV error",
                 ylim = range(c(x$cv - x$cv_se, x$cv + x$cv_se)), ...)
  graphics::segments(log(x$lambda), x$cv - x$cv_se, log(x$lambda), x$cv + x$cv_se, col = "grey50")
  graphics::abline(v = log(c(x$lambda_min, x$lambda_1se)), lty = 2)
  invisible(x)
}

#' @export
plot.sb_trend_filter <- function(x, lambda_index = 1L, ...) {
  graphics::plot(x$x, x$y, pch = 20, col = "grey60", xlab = "x", ylab = "y", ...)
  graphics::lines(x$x, x$beta[, lambda_index], col = "red", lwd = 2)
  invisible(x)
}

#' Smallest lambda at which the trend-filtering fit is a polynomial
#'
#' Above `lambda_max` the solution of [trend_filter()] is the weighted polynomial regression of degree `k`;
#' computed exactly from the dual solution of that regression (no optimisation).
#' @inheritParams trend_filter
#' @return A number.
#' @export
#' @examples
#' tf_lambda_max(sin(1:50 / 5), k = 1)
tf_lambda_max <- function(y, x = NULL, k = 3, weights = NULL, penalty_factor = NULL, penalty_weights = NULL) {
  penalty_factor <- tf_penalty_factor(penalty_weights, penalty_factor, missing(penalty_factor), "tf_lambda_max",
                                      missing(penalty_weights))
  d <- check_tf_data(y, x, k, weights)
  pw <- check_penalty_weights(penalty_factor, d$n - d$k - 1L)
  sb_call_engine(cpp_tf_lambda_max(d$y, d$x, d$weights, d$k, pw))$lambda_max
}
