# Weighted Bayesian bootstrap for trend filtering (Newton, Polson & Xu 2021, section 3.3, Figure 4).

#' Weighted Bayesian bootstrap for trend filtering
#'
#' Draws from the WBB posterior of a trend-filtering fit (Newton, Polson & Xu 2021, section 3.3). Draw t
#' solves
#' \deqn{\min_\beta \frac12 \sum_i w_i (y_i - \beta_i)^2 + \lambda w_0 \|D^{(x,k+1)}\beta\|_1
#'   \quad (\text{common}), \qquad \ldots + \lambda \sum_j w_{0j} |(D^{(x,k+1)}\beta)_j| \quad (\text{separate}),}
#' with \eqn{w_i, w_0 \sim \mathrm{Exp}(1)} drawn from the random stream `(seed, t)` (first the n data
#' weights, then the prior weights, as in every WBB function); the draws of the fitted curve are identical for
#' any number of threads, chunks and future workers.
#'
#' @details
#' * `lambda = NULL` chooses lambda on the unweighted problem by [cv_trend_filter()] (rule `lambda_rule`; its
#'   fold paths run on the `threads` workers, with a progress bar unless `quiet`);
#'   the paper fixes lambda = 1000 for its Figure 4 (the authors' script used 5000).
#' * The point estimate (`$estimate`) is the unweighted fit at lambda; `$se` are the pointwise posterior
#'   standard deviations (the paper's "standard errors", Figure 4 draws `estimate +/- 2 se`).
#' * The paper writes the penalty with \eqn{D^{(k)}}; we use the standard order-k trend filter
#'   \eqn{D^{(x,k+1)}} (k = 3: fourth differences, cubic pieces), which is what "cubic trend filtering" means
#'   in Tibshirani (2014) and in `genlasso::trendfilter(ord = 3)`.
#' * `k = 0` draws are exact (dynamic programming); `k >= 1` draws are interior-point solves to a relative
#'   duality gap of `control$tol`; the gaps are kept in `$diagnostics`.
#'
#' @param y Numeric response, or a formula `y ~ x` (one numeric input) with the variables in `data` (see
#'   [sb_formula]); with a formula the rows are sorted by the input before fitting (with `exposure` and `trials`
#'   when they have one value per row), `fitted()` and `residuals()` follow the sorted order (that of `fit$x`),
#'   and `fit$row_order` gives the data rows in that order. The constants are always in the model: `- 1` is an error.
#' @param x Sorted distinct inputs (default `seq_along(y)`); not given with a formula.
#' @inheritParams wbb
#' @param k Trend-filtering order (3 = cubic, as in the paper's Figure 4).
#' @param lambda Penalty; `"min"` or `"1se"` to choose it by cross-validation on the unweighted problem with that
#'   rule (as [wbb()]); or `NULL`, cross-validation with the rule `lambda_rule`.
#' @param draws Number of WBB draws T.
#' @param prior_weights `"common"` (default: one Exp(1) prior weight per draw, the penalty
#'   \eqn{\lambda w_0 \|D\beta\|_1} of the paper's section 3.3) or `"separate"` (one per difference). [wbb()]
#'   defaults to `"separate"`, the paper's choice for the lasso.
#' @param threads Worker threads (default [sb_default_threads()]); results do not depend on it.
#' @param seed Seed (whole number) or `NULL` to draw one from R's RNG (so [set.seed()] works).
#' @param quiet Hide the progress bar (default: not interactive).
#' @param control [tf_control()].
#' @param nfolds,lambda_rule Cross-validation folds and rule (`"min"`, default, or `"1se"`, as in
#'   [wbb_control()]; the old spellings `"lambda_min"` and `"lambda_1se"` still work with a deprecation
#'   warning) when `lambda` is `NULL`.
#' @param future Spread the draws over `future` workers (see [future::plan()]); identical results.
#' @param chunks Split the draws into this many chunks; `NULL` (default): one per future worker when
#'   `future = TRUE`, else one (the rule of every WBB function).
#' @param family,exposure,trials `"gaussian"` (default), `"poisson"` (with `exposure`) or `"binomial"` (with
#'   `trials`): the WBB of the Poisson / logistic trend filter (see [trend_filter_family]); the draws are then on the
#'   link scale, `predict(fit, type = "response")` gives bands of the rate / probability, the fit has the further
#'   class `sb_trend_filter_glm_wbb`, and lambda is chosen by cross-validated deviance.
#' @section Interrupts:
#' Ctrl-C stops the engine at its next check and returns the partial fit of what finished (draws 1..k of the same-seed run (either family)),
#' with one warning of class `scalebayes_warning_interrupted` and `fit$interrupted` `TRUE`; when nothing
#' finished it is R's interrupt. See [scalebayes-interrupts].
#' @return An object of class `c("sb_trend_filter_wbb", "sb_fit")`: `draws` (T x n matrix of fitted curves,
#'   columns `f[1]`, ...), `estimate`, `se`, `x`, `y`, `lambda`, `w0` (the common prior weights), settings,
#'   seed, `timing` (seconds: `elapsed` for the whole call, `cv` for the cross-validation, as in [wbb()]) and
#'   `diagnostics` (`rel_gap`, `iter` per draw).
#' @seealso [trend_filter()], [predict.sb_fit()] (interpolated draws and bands at new inputs),
#'   [plot.sb_trend_filter_wbb()].
#' @export
#' @examples
#' set.seed(1)
#' n <- 200
#' i <- 1:n
#' y <- sin(4 * pi * i / n) * exp(3 * i / n) + rnorm(n, sd = 2)
#' fit <- trend_filter_wbb(y, k = 3, lambda = 200, draws = 100, seed = 1)
#' plot(fit)
trend_filter_wbb <- function(y, x = seq_along(y), k = 3, lambda = NULL, draws = 1000,
                             prior_weights = c("common", "separate"), threads = NULL, seed = NULL,
                             quiet = NULL, control = tf_control(), nfolds = 5,
                             lambda_rule = c("min", "1se"), future = FALSE, chunks = NULL, data = NULL, subset = NULL, na.action = NULL, contrasts = NULL,
                             family = c("gaussian", "poisson", "binomial"), exposure = NULL, trials = NULL) {
  if (!missing(y) && sb_is_formula(y)) {
    frame <- environment()
    one_input <- function(x) {
      if (ncol(x) != 1L) {
        sb_abort(c("Trend filtering has one input: the formula must be {.code y ~ x}.",
                   x = "Its design has {ncol(x)} columns ({.var {colnames(x)}})."), arg = "y", call = frame)
      }
      x[, 1L]
    }
    return(sb_formula_fit(frame, "trend_filter_wbb", trend_filter_wbb, match.call(), intercept = "none",
                          response = "numeric", x_arg = "y", y_arg = "x", design = one_input,
                          sort_rows = c("exposure", "trials")))
  }
  sb_formula_only(environment(), what = "y")
  call <- match.call()
  family <- sb_match_arg(family)
  d <- check_tf_data(y, x, k, has_weights = FALSE)
  fd <- check_tf_family_data(family, d$y, exposure, trials, d$n)
  prior_weights <- sb_match_arg(prior_weights)
  lambda_rule <- wbb_lambda_rule(lambda_rule)
  draws <- check_count(draws)
  check_result_memory(8 * as.double(draws) * d$n, "draws", peak = 8 * as.double(draws) * d$n * 2,
                      fix = "Use fewer {.arg draws}, or run them in chunks and combine the fits.")
  control <- check_tf_control(control)
  if (is.character(lambda)) {  # lambda = "min" / "1se": cross-validation with that rule, as wbb()
    lambda_rule <- wbb_lambda_choice(lambda, rlang::current_env())
    lambda <- NULL
  }
  if (!is.null(lambda)) {
    lambda <- check_number(lambda, lower = 0, what = "a single non-negative number or NULL")
  }
  rs <- wbb_run_settings(draws, threads, seed, quiet, chunks, future)
  seed <- rs$seed
  if (family != "gaussian") {  # Poisson / binomial: R/trend_filter_glm.R
    return(tf_glm_wbb(d, fd, family, lambda, lambda_rule, nfolds, draws, prior_weights, rs, control, call))
  }
  cv <- NULL
  if (is.null(lambda)) {
    cv <- cv_trend_filter(d$y, d$x, d$k, nfolds = nfolds, control = control, threads = rs$threads, quiet = rs$quiet)
    lambda <- cv[[paste0("lambda_", lambda_rule)]]
  }
  t_cv <- wbb_elapsed(rs)
  fit0 <- trend_filter(d$y, d$x, d$k, lambda = lambda, control = control)
  u_hat <- if (control$warm_start) fit0$u[, 1] else numeric(0)
  engine <- tf_engine_control(control)
  names_f <- paste0("f[", seq_len(d$n), "]")
  run_chunk <- function(first, count) {
    cpp_tf_wbb(d$y, d$x, d$k, lambda, engine, u_hat, names_f, wbb_engine_settings(rs, first, count, prior_weights))
  }
  # Ctrl-C: the partial fit of the draws finished (?scalebayes-interrupts)
  res <- wbb_run(rs, run_chunk, cut = function(r, k) wbb_cut_rows(r, k, c("draws", "rel_gap", "iter", "w0")))
  stopped <- attr(res, "interrupted")
  if (!is.null(stopped)) draws <- stopped$completed
  out <- list(rel_gap = wbb_combine(res, "rel_gap"), iter = wbb_combine(res, "iter"), w0 = wbb_combine(res, "w0"))
  dr <- wbb_combine(res, "draws")
  rm(res)
  timing <- c(elapsed = wbb_elapsed(rs), cv = t_cv)
  bad <- sum(out$rel_gap > control$tol)
  if (bad > 0) {
    sb_warn(c("{bad} of {draws} weighted solve{?s} stopped above the target duality gap.",
              i = "Largest relative gap: {signif(max(out$rel_gap), 3)} (target {control$tol})."))
  }
  # column by column, so that dr is never copied
  se <- stats::setNames(vapply(seq_len(ncol(dr)), function(j) stats::sd(dr[, j]), numeric(1)), colnames(dr))
  fit <- new_sb_fit(
    draws = dr, estimate = fit0$beta[, 1], method = "trend_filter_wbb", subclass = "sb_trend_filter_wbb",
    call = call, seed = seed, timing = timing,
    settings = list(k = d$k, lambda = lambda, prior_weights = prior_weights, draws = draws, threads = rs$threads,
                    nobs = d$n, control = control, lambda_rule = if (is.null(cv)) NA else lambda_rule,
                    print_info = c(order = d$k, lambda = signif(lambda, 5), prior_weights = prior_weights)),
    diagnostics = list(rel_gap = out$rel_gap, iter = out$iter, max_rel_gap = max(out$rel_gap),
                       n_above_tol = bad, estimate_rel_gap = fit0$rel_gap),
    x = d$x, y = d$y, lambda = lambda, se = se, w0 = out$w0, cv = cv
  )
  if (!is.null(stopped)) fit <- sb_partial_fit(fit, draws, stopped$requested)
  fit
}

#' Plot a trend-filtering WBB fit (Figure 4 of Newton, Polson & Xu 2021)
#'
#' Data (grey points), the unweighted fit (red), the band `estimate +/- 2 se` (blue, as in the paper) and/or
#' the central quantile band of the draws (dashed), and optionally the true curve.
#' @param x An `sb_trend_filter_wbb` fit.
#' @param band `"se"` (paper's +/- 2 se), `"quantile"`, or `"both"`.
#' @param prob Mass of the quantile band.
#' @param truth Optional true curve at the data `x` (drawn in black).
#' @param main,xlab,ylab Titles.
#' @param ... Passed to [graphics::plot()].
#' @param level Deprecated name of `prob` (works for one release, with a warning).
#' @return `x`, invisibly.
#' @export
plot.sb_trend_filter_wbb <- function(x, band = c("se", "quantile", "both"), prob = 0.95, truth = NULL,
                                     main = NULL, xlab = "x", ylab = "y", ..., level = NULL) {
  prob <- sb_interval_prob(prob, missing(prob), level, NULL, "plot.sb_trend_filter_wbb")
  band <- sb_match_arg(band)
  p <- predict.sb_fit(x, prob = prob)
  if (is.null(main)) {
    main <- sprintf("Trend filtering (k = %d), lambda = %s, T = %d WBB draws", x$settings$k,
                    format(signif(x$lambda, 4)), nrow(x$draws))
  }
  yl <- range(c(x$y, p$estimate - 2 * p$se, p$estimate + 2 * p$se, p$lower, p$upper, truth))
  graphics::plot(x$x, x$y, pch = 20, col = "grey70", ylim = yl, main = main, xlab = xlab, ylab = ylab, ...)
  if (!is.null(truth)) graphics::lines(x$x, truth, col = "black", lwd = 1.5)
  if (band %in% c("se", "both")) {
    graphics::lines(x$x, p$estimate + 2 * p$se, col = "blue", lwd = 1.5)
    graphics::lines(x$x, p$estimate - 2 * p$se, col = "blue", lwd = 1.5)
  }
  if (band %in% c("quantile", "both")) {
    graphics::lines(x$x, p$lower, col = "darkgreen", lty = 2, lwd = 1.5)
    graphics::lines(x$x, p$upper, col = "darkgreen", lty = 2, lwd = 1.5)
  }
  graphics::lines(x$x, p$estimate, col = "red", lwd = 2)
  leg <- c("data", "estimate", if (band %in% c("se", "both")) "estimate +/- 2 se",
           if (band %in% c("quantile", "both")) sprintf("%g%% quantile band", 100 * prob),
           if (!is.null(truth)) "truth")
  col <- c("grey70", "red", if (band %in% c("se", "both")) "blue", if (band %in% c("quantile", "both")) "darkgreen",
           if (!is.null(truth)) "black")
  graphics::legend("topleft", legend = leg, col = col, lty = c(NA, 1, if (band %in% c("se", "both")) 1,
                                                             if (band %in% c("quantile", "both")) 2,
                                                             if (!is.null(truth)) 1),
                   pch = c(20, NA, NA, NA, NA)[seq_along(leg)], bty = "n", cex = 0.8)
  invisible(x)
}
