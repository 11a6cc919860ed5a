#' Choose the trend-filtering penalty by Stein's unbiased risk estimate
#'
#' For Gaussian data with constant noise variance, \eqn{y \sim N(\theta, \sigma^2 I)}, the trend-filtering
#' fit has degrees of freedom \eqn{E[\#\text{knots}] + k + 1} (Tibshirani & Taylor 2012, the generalized
#' lasso result; a knot is a nonzero \eqn{(D^{(x,k+1)}\hat\beta)_j}), so
#' \deqn{\mathrm{SURE}(\lambda) = \|y - \hat\beta_\lambda\|^2 + 2\sigma^2 \mathrm{df}(\lambda) - n\sigma^2}
#' is an unbiased estimate of the risk \eqn{E\|\hat\beta_\lambda - \theta\|^2}. The estimate holds for
#' unweighted fits (observation weights would make it a weighted risk with a different divergence), so
#' `weights` are not accepted here; use [cv_trend_filter()] for weighted problems.
#'
#' @inheritParams trend_filter
#' @param sigma Noise standard deviation. `NULL` estimates it from the data by the median absolute
#'   normalized (k+1)-th difference, \eqn{\hat\sigma = \mathrm{median}_j |(D y)_j| / \|D_j\|_2 / 0.6745}
#'   (consistent when the signal's differences are small next to the noise's, as for a smooth trend).
#' @param family Only `"gaussian"`: for `"poisson"` and `"binomial"` (see [trend_filter_family]) SURE does not
#'   apply, a classed error (`scalebayes_error_not_applicable`) points to [cv_trend_filter()].
#' @return An object of class `sb_tf_sure`: `lambda`, `df`, `rss`, `sure`, `sigma`, `sigma_estimated`,
#'   `lambda_min` (the minimizer of SURE), `index_min` and `fit` (the [trend_filter()] path).
#' @seealso [cv_trend_filter()].
#' @export
#' @examples
#' set.seed(1)
#' y <- sin((1:300) / 30) + rnorm(300, sd = 0.3)
#' s <- sure_trend_filter(y, k = 2, nlambda = 30)
#' s
#' s$lambda_min
sure_trend_filter <- function(y, x = NULL, k = 3, lambda = NULL, sigma = NULL, nlambda = 50,
                              lambda_min_ratio = 1e-5, control = tf_control(), family = "gaussian") {
  call <- match.call()
  family <- sb_match_arg(family, tf_families)
  if (family != "gaussian") {
    sb_abort(c("SURE is an unbiased risk estimate for Gaussian noise: it does not apply to {.code family = \"{family}\"}.",
               i = "Choose lambda by cross-validation: {.code cv_trend_filter(y, x, k, family = \"{family}\")} (deviance)."),
             kind = "not_applicable", arg = "family")
  }
  d <- check_tf_data(y, x, k)
  sigma_estimated <- is.null(sigma)
  sigma <- if (sigma_estimated) tf_sigma_mad(d$y, d$x, d$k) else check_number(sigma, lower = 0, lower_open = TRUE, upper = 1e100)
  if (!(sigma > 0)) {
    sb_abort(c("Cannot estimate {.arg sigma}: the (k+1)-th differences of {.arg y} are all zero.",
               i = "Give {.arg sigma} explicitly."), arg = "sigma")
  }
  fit <- trend_filter(d$y, d$x, d$k, lambda = lambda, nlambda = nlambda, lambda_min_ratio = lambda_min_ratio,
                      control = control)
  rss <- colSums((d$y - fit$beta)^2)
  sure <- rss + 2 * sigma^2 * fit$df - d$n * sigma^2
  imin <- which.min(sure)
  structure(list(lambda = fit$lambda, df = fit$df, rss = rss, sure = sure, sigma = sigma,
                 sigma_estimated = sigma_estimated, lambda_min = fit$lambda[imin], index_min = imin, fit = fit,
                 call = call),
            class = c("sb_tf_sure", "sb_point_fit"))
}

# Difference-based noise scale: median |(D y)_j| / ||D_j||_2 / qnorm(0.75).
tf_sigma_mad <- function(y, x, k) {
  dy <- tf_apply_difference(x, k, y)[, 1]
  dn <- sb_call_engine(cpp_tf_row_norms(x, k))
  stats::median(abs(dy) / dn) / stats::qnorm(0.75)
}

#' @export
print.sb_tf_sure <- function(x, ...) {
  cat(sprintf("<sb_tf_sure> SURE over %d lambda values (k = %d), sigma = %.4g%s\n", length(x$lambda), x$fit$k,
              x$sigma, if (x$sigma_estimated) " (estimated)" else ""))
  cat(sprintf("lambda_min = %.4g (SURE %.4g, df %d)\n", x$lambda_min, x$sure[x$index_min], x$df[x$index_min]))
  invisible(x)
}
