# The common posterior-draws object and its methods (inst/design.md, principle 8).
#
# Every fitting function returns list(draws = T x p matrix, estimate = named p-vector (the point estimate,
# e.g. the unweighted optimum for WBB), chain = integer T-vector or NULL, method, call, settings, seed,
# timing, diagnostics, ...) with class c("sb_<method>", "sb_fit"). Methods here work for every subclass;
# subclasses add predict() and plot() where their parameters need it.

new_sb_fit <- function(draws, estimate, method, subclass, call = NULL, chain = NULL, settings = list(),
                       seed = NA_real_, timing = NULL, diagnostics = list(), ...) {
  stopifnot(is.matrix(draws), is.character(colnames(draws)))
  if (!is.null(estimate)) names(estimate) <- colnames(draws)
  structure(
    list(draws = draws, estimate = estimate, chain = chain, method = method, call = call,
         settings = settings, seed = seed, timing = timing, diagnostics = diagnostics, ...),
    class = c(subclass, "sb_fit")
  )
}

#' Methods for scalebayes posterior draws
#'
#' Every scalebayes fitting function returns an object of class `sb_fit` (with a method-specific subclass)
#' that holds posterior draws (one row per draw, one column per parameter), a point estimate, the settings,
#' the seed and the timing. These methods summarise and convert it.
#'
#' @param x,object An `sb_fit` object.
#' @param use.fallback Not used: accepted because stats' [stats::sigma()] passes it to `nobs()`.
#' @param probs Quantiles reported by `summary()`.
#' @param prob The mass of the central interval `summary()` reports, as in [posterior_interval()] and
#'   [predict()] (`prob = 0.5`: the quartiles and the median); give `probs` or `prob`, not both. `prob` is the
#'   interval mass in every method of the package, `probs` a vector of quantiles.
#' @param pars Parameter names or indices to keep (default all).
#' @param digits Digits to print.
#' @param type For `coef()`: `"mean"` (posterior mean, default), `"median"`, or `"estimate"` (the point
#'   estimate, e.g. the unweighted optimum for WBB).
#' @param ... Not used: any argument given here is an error (class `scalebayes_error_dots`); the draws of a [vae()]
#'   fit take `draws` and `seed` here (see [sb_vae-methods]).
#' @return `summary()` a data frame of class `summary_sb_fit` with posterior mean, sd, quantiles and
#'   `p_zero`, the share of draws that are exactly zero (1 minus the inclusion frequency); `coef()` a named
#'   vector; `as.matrix()` the T x p draws; `as_draws_matrix()` / `as_draws_df()` / `as_draws_array()` the
#'   posterior-package formats (chains kept; `as_draws_array()` needs chains of equal length, the other two
#'   do not); `nobs()` the number of observations fitted; `posterior_interval()` a p x 2 matrix of central intervals.
#' @name sb_fit-methods
NULL

#' @rdname sb_fit-methods
#' @export
print.sb_fit <- function(x, digits = 3, ...) {
  cat(sprintf("<%s> %s: %d draws of %d parameters\n", class(x)[1], x$method, nrow(x$draws), ncol(x$draws)))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call, width.cutoff = 100), collapse = "\n"), "\n", sep = "")
  info <- x$settings$print_info
  if (length(info)) cat(paste0(names(info), ": ", info, collapse = "\n"), "\n", sep = "")
  if (!is.null(x$timing)) cat(sprintf("Time: %.3f s\n", x$timing[["elapsed"]]))
  s <- summary(x)
  show <- min(nrow(s), 20L)
  print(format_summary(s[seq_len(show), , drop = FALSE], digits), right = TRUE)
  if (nrow(s) > show) cat(sprintf("... %d more parameters (see summary())\n", nrow(s) - show))
  invisible(x)
}

#' @rdname sb_fit-methods
#' @export
summary.sb_fit <- function(object, ..., probs = c(0.025, 0.5, 0.975), pars = NULL, prob = NULL) {
  sb_check_dots(..., fn = "summary")
  probs <- sb_summary_probs(probs, prob, missing(probs))
  if (!is.numeric(probs) || !length(probs) || anyNA(probs) || any(probs < 0 | probs > 1)) {
    sb_abort(c("{.arg probs} must be probabilities in [0, 1].",
               x = "You supplied {.val {format(probs)}}."), arg = "probs")
  }
  d <- select_pars(object$draws, pars)
  q <- t(apply(d, 2, stats::quantile, probs = probs, names = FALSE))
  if (length(probs) == 1L) q <- t(q)
  colnames(q) <- paste0("q", 100 * probs)
  est <- object$estimate
  out <- data.frame(
    parameter = colnames(d),
    estimate = if (is.null(est)) NA_real_ else unname(est[colnames(d)]),
    mean = colMeans(d),
    sd = apply(d, 2, stats::sd),
    q, p_zero = colMeans(d == 0),
    row.names = NULL, check.names = FALSE
  )
  class(out) <- c("summary_sb_fit", "data.frame")
  out
}

#' @export
print.summary_sb_fit <- function(x, digits = 3, ...) {
  print(format_summary(x, digits), right = TRUE)
  invisible(x)
}

format_summary <- function(s, digits) {
  s <- as.data.frame(unclass(s), check.names = FALSE)
  num <- vapply(s, is.numeric, logical(1))
  s[num] <- lapply(s[num], function(v) signif(v, digits))
  s
}

select_pars <- function(d, pars) {
  if (is.null(pars)) return(d)
  if (is.character(pars)) {
    bad <- setdiff(pars, colnames(d))
    if (!length(pars)) bad <- "(none)"
    if (length(bad)) sb_abort(c("Unknown parameter{?s} in {.arg pars}: {.val {bad}}.",
                                i = "Available: {.val {utils::head(colnames(d), 10)}}{if (ncol(d) > 10) ' ...'}."),
                              arg = "pars")
  } else if (!is.numeric(pars) || !length(pars) || anyNA(pars) || any(pars < 1 | pars > ncol(d)) ||
             any(pars != round(pars))) {
    sb_abort("{.arg pars} must be parameter names or indices between 1 and {ncol(d)}.", arg = "pars")
  }
  d[, pars, drop = FALSE]
}

#' @rdname sb_fit-methods
#' @export
coef.sb_fit <- function(object, type = c("mean", "median", "estimate"), ...) {
  sb_check_dots(..., fn = "coef")
  type <- sb_match_arg(type, partial = TRUE)
  co <- switch(type,
    mean = colMeans(object$draws),
    median = apply(object$draws, 2, stats::median),
    estimate = object$estimate
  )
  st <- object$settings
  # a multinomial linear fit with every coefficient kept: a (p + 1) x K matrix, one column per class
  if (identical(st$family, "multinomial") && !is.null(st$levels) && length(co) == length(st$coef_names)) {
    co <- matrix(co, ncol = length(st$levels),
                 dimnames = list(c("(Intercept)", st$feature_names), st$levels))
  }
  co
}

#' @rdname sb_fit-methods
#' @export
as.matrix.sb_fit <- function(x, pars = NULL, ...) {
  sb_draw_matrix(x, pars, rlang::current_env(), "as.matrix", ...)
}

# The draws every fit's draw generics read (draws x parameters, `pars` selected) and the chain of each draw as
# 1..K: internal generics, so that as.matrix(), as_draws_*() and posterior_interval() are defined once, here, for
# every sb_fit. A network fit (sb_nn_fit, R/nn_fit.R) reads its finished kept draws, or its per-draw metrics when
# it kept no weights; a VAE (R/vae.R) draws latent codes, with arguments of its own (`...`: draws, seed). `call`
# and `fn`: the user's generic, for errors (an argument no method takes is an error naming `fn`).
sb_draw_matrix <- function(x, pars, call, fn, ...) UseMethod("sb_draw_matrix")
sb_draw_matrix.sb_fit <- function(x, pars, call, fn, ...) {
  sb_check_dots(..., fn = fn, call = call)
  select_pars(x$draws, pars)
}
sb_draw_chain <- function(x, n) UseMethod("sb_draw_chain")
sb_draw_chain.sb_fit <- function(x, n) sb_fit_chain(x, n)

#' @rdname sb_fit-methods
#' @export
nobs.sb_fit <- function(object, use.fallback = FALSE, ...) {  # use.fallback: stats' generic passes it (sigma())
  sb_check_dots(..., fn = "nobs")
  object$settings$nobs
}

#' @rdname sb_fit-methods
#' @return `sigma()` the posterior mean of the noise sd where the fit has one (`blasso()`: of its
#'   \eqn{\sigma^2} draws; `sgld_sa()` gaussian regression: of the chains' sigma; a gaussian `wbb_nn()`: of
#'   the draws' residual sds); elsewhere an error of class `scalebayes_error_not_applicable`.
#' @importFrom stats sigma
#' @export
sigma.sb_fit <- function(object, use.fallback = TRUE, ...) {
  sb_check_dots(..., fn = "sigma")
  s2 <- .subset2(object, "sigma2")
  if (is.numeric(s2) && length(s2)) return(mean(sqrt(s2)))
  lat <- .subset2(object, "latent")
  if (is.data.frame(lat) && "sigma" %in% names(lat) && identical(object$settings$family, "gaussian")) {
    ok <- if (is.null(object$diverged)) rep(TRUE, nrow(lat)) else !object$diverged
    return(mean(lat$sigma[ok]))
  }
  s <- .subset2(object, "sigma")
  if (is.numeric(s) && length(s) && all(is.finite(s))) return(mean(s))
  sb_not_applicable(c("This fit has no noise standard deviation.",
                      i = "{.fn sigma} answers for gaussian fits with a noise parameter ({.fn blasso}, {.fn sgld_sa}, {.fn wbb_nn})."),
                    call = rlang::current_env())
}

#' @importFrom posterior as_draws_matrix as_draws_df as_draws_array
#' @rdname sb_fit-methods
#' @method as_draws_matrix sb_fit
#' @export
as_draws_matrix.sb_fit <- function(x, pars = NULL, ...) {
  posterior::as_draws_matrix(sb_draws_df(x, pars, rlang::current_env(), "as_draws_matrix", ...))
}

#' @rdname sb_fit-methods
#' @method as_draws_df sb_fit
#' @export
as_draws_df.sb_fit <- function(x, pars = NULL, ...) sb_draws_df(x, pars, rlang::current_env(), "as_draws_df", ...)

sb_draws_df <- function(x, pars, call, fn, ...) {
  d <- sb_draw_matrix(x, pars, call, fn, ...)
  chain <- sb_draw_chain(x, nrow(d))
  o <- order(chain, seq_along(chain))  # chain-major (the order of every fit already)
  df <- as.data.frame(d[o, , drop = FALSE])
  names(df) <- colnames(d)
  ch <- chain[o]
  df$.chain <- ch
  df$.iteration <- stats::ave(seq_along(ch), ch, FUN = seq_along)
  df$.draw <- seq_along(ch)
  posterior::as_draws_df(df)
}

#' @rdname sb_fit-methods
#' @method as_draws_array sb_fit
#' @export
as_draws_array.sb_fit <- function(x, pars = NULL, ...) {
  d <- sb_draw_matrix(x, pars, rlang::current_env(), "as_draws_array", ...)
  chain <- sb_draw_chain(x, nrow(d))
  per <- tabulate(chain)
  if (length(unique(per)) != 1L) {
    sb_abort(c("Chains have unequal numbers of draws ({.val {per}}), which an iterations x chains x variables array cannot hold.",
               i = "Use {.fn as_draws_df} or {.fn as_draws_matrix}, which keep the chains."), kind = "state")
  }
  arr <- array(NA_real_, dim = c(per[1], length(per), ncol(d)),
               dimnames = list(NULL, NULL, colnames(d)))
  for (k in seq_along(per)) arr[, k, ] <- d[chain == k, , drop = FALSE]
  posterior::as_draws_array(arr)
}

# The chain of every draw as 1..K (fits without chains: one chain).
sb_fit_chain <- function(x, n) {
  chain <- x$chain
  if (is.null(chain)) return(rep(1L, n))
  match(chain, sort(unique(chain)))
}

#' @importFrom posterior as_draws_df
#' @export
posterior::as_draws_df

#' @importFrom posterior as_draws_matrix
#' @export
posterior::as_draws_matrix

#' @importFrom posterior as_draws_array
#' @export
posterior::as_draws_array

#' @importFrom rstantools posterior_interval
#' @export
rstantools::posterior_interval

#' Central posterior intervals
#'
#' The method of the `posterior_interval()` generic of the rstantools package (re-exported here, so it is
#' the same generic that rstanarm and brms use) for scalebayes fits.
#' @param object An `sb_fit`.
#' @param prob Mass of the central interval (the name in every method).
#' @param pars Parameters to keep.
#' @param level,probs Deprecated names of `prob` (work for one release, with a warning; before, they were
#'   silently ignored here).
#' @param ... Not used: any argument given here is an error (class `scalebayes_error_dots`); a [vae()] fit takes
#'   `draws` and `seed` here (see [sb_vae-methods]).
#' @return A matrix with one row per parameter and columns for the lower and upper limits.
#' @method posterior_interval sb_fit
#' @export
posterior_interval.sb_fit <- function(object, ..., prob = 0.95, pars = NULL, level = NULL, probs = NULL) {
  prob <- sb_interval_prob(prob, missing(prob), level, probs, "posterior_interval")
  d <- sb_draw_matrix(object, pars, rlang::current_env(), "posterior_interval", ...)
  a <- (1 - prob) / 2
  out <- t(apply(d, 2, stats::quantile, probs = c(a, 1 - a), names = FALSE))
  colnames(out) <- paste0(format(100 * c(a, 1 - a), trim = TRUE), "%")
  out
}

#' Plot marginal posteriors
#'
#' Histograms of the marginal posterior draws of each parameter, one panel each; the share of draws that
#' are exactly zero is drawn as a bar at zero (a point mass) with its height printed. For bayesplot use
#' `bayesplot::mcmc_hist(as_draws_matrix(fit))`.
#' @param x An `sb_fit`.
#' @param pars Parameters to plot (default: all, at most 16).
#' @param breaks Histogram breaks.
#' @param col,border Colours.
#' @param overlay Optional list of further `sb_fit` objects (or draws matrices) to overlay as density lines.
#' @param ... Passed to [graphics::hist()].
#' @return `x`, invisibly.
#' @export
plot.sb_fit <- function(x, pars = NULL, breaks = 40, col = "grey80", border = "grey50", overlay = NULL, ...) {
  d <- select_pars(x$draws, pars)
  if (is.null(pars) && ncol(d) > 16L) d <- d[, seq_len(16L), drop = FALSE]
  k <- ncol(d)
  nc <- ceiling(sqrt(k)); nr <- ceiling(k / nc)
  op <- graphics::par(mfrow = c(nr, nc), mar = c(3, 3, 2, 0.5), mgp = c(1.8, 0.6, 0))
  on.exit(graphics::par(op), add = TRUE)
  ov <- lapply(overlay, function(o) if (inherits(o, "sb_fit")) o$draws else o)
  pal <- c("#1b9e77", "#d95f02", "#7570b3", "#e7298a")
  for (j in seq_len(k)) {
    v <- d[, j]; nm <- colnames(d)[j]
    nz <- v[v != 0]
    if (length(nz) >= 2L) {
      h <- graphics::hist(nz, breaks = breaks, plot = FALSE)
      dens_scale <- length(nz) / length(v)
      h$density <- h$density * dens_scale
      graphics::plot(h, freq = FALSE, col = col, border = border, main = nm, xlab = "", ...)
    } else {
      graphics::plot(0, 0, type = "n", xlim = range(c(v, 0)) + c(-1, 1), ylim = c(0, 1), main = nm,
                     xlab = "", ylab = "Density")
    }
    pz <- mean(v == 0)
    if (pz > 0) {
      graphics::abline(v = 0, col = "red", lwd = 2)
      graphics::mtext(sprintf("P(=0) = %.2f", pz), side = 3, line = -1.2, cex = 0.7, col = "red")
    }
    for (m in seq_along(ov)) {
      if (nm %in% colnames(ov[[m]])) {
        dd <- stats::density(ov[[m]][, nm])
        graphics::lines(dd, col = pal[(m - 1L) %% 4L + 1L], lwd = 1.5)
      }
    }
  }
  invisible(x)
}

# summary()'s quantiles: `probs` as given, or the central interval of mass `prob` and the median (`prob` is the
# interval mass in every method; before it was a formal argument, `prob = 0.5` partially matched `probs` and
# returned the median only).
sb_summary_probs <- function(probs, prob, probs_missing, call = rlang::caller_env()) {
  if (is.null(prob)) return(probs)
  if (!probs_missing) {
    sb_abort(c("Give {.arg probs} (quantiles) or {.arg prob} (an interval mass), not both.",
               i = "{.code prob = 0.9} is {.code probs = c(0.05, 0.5, 0.95)}."), arg = "prob", call = call)
  }
  prob <- check_number(prob, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE, arg = "prob", call = call)
  c((1 - prob) / 2, 0.5, (1 + prob) / 2)
}

# ---- posterior's as_draws() / summarise_draws(), as.data.frame(), logLik() (issue 61) -----------------------------

#' posterior's `as_draws()` and `summarise_draws()`, `as.data.frame()` and `logLik()` for scalebayes fits
#'
#' `posterior::as_draws(fit)` is `as_draws_df(fit)` (the chains kept), and `posterior::summarise_draws(fit, ...)`
#' summarises it (`...`: posterior's summary functions, e.g. `"mean", "rhat"`); both work for every fit with
#' draws (a point fit, a path of fits or a grid of VI fits gives the classed error its `as_draws_df()` gives).
#' `as.data.frame(fit)` is the draws as a data frame, one row per draw and one column per parameter, as
#' rstanarm's `as.data.frame()`.
#'
#' `logLik()` is the log-likelihood of the training data at the fit's point estimate, with attributes `df` and
#' `nobs`, so that [stats::AIC()] and [stats::BIC()] apply. It is defined for the linear models: [wbb()]
#' (gaussian, binomial, poisson; the point estimate is the unweighted penalized optimum, and `df` its number
#' of non-zero coefficients, the lasso's degrees of freedom of Zou, Hastie and Tibshirani 2007) and
#' [blasso()] (at the posterior mean; `df` the number of coefficients). A gaussian fit's noise sd is the
#' maximum-likelihood one given the mean (as [stats::logLik.lm()] with `REML = FALSE`) and adds 1 to `df`.
#' Other fits (networks, SG-MCMC, trend filtering) give an error of class `scalebayes_error_not_applicable`
#' pointing to [log_lik()], the pointwise log-likelihood of every draw.
#' @param x,.x,object A scalebayes fit.
#' @param row.names,optional As in [base::as.data.frame()]: `row.names` replaces the default (none).
#' @param pars Parameters to keep (default all).
#' @param ... `as_draws()`: passed to [as_draws_df()]; `summarise_draws()`: posterior's summary functions;
#'   `as.data.frame()`: as for [as.matrix()] (a VAE takes `draws`, `seed`); `logLik()`: not used.
#' @return `as_draws()` a `draws_df`; `summarise_draws()` a `draws_summary` data frame; `as.data.frame()` a
#'   data frame; `logLik()` an object of class `logLik`.
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(200), 50, 4)
#' y <- drop(x %*% c(1, 0, -1, 0)) + rnorm(50)
#' f <- wbb(x, y, lambda = 2, draws = 100, seed = 1, quiet = TRUE)
#' posterior::summarise_draws(f, "mean", "sd")
#' head(as.data.frame(f))
#' logLik(f)
#' AIC(f)
#' @name sb_fit-posterior
NULL

#' @importFrom posterior as_draws
#' @rdname sb_fit-posterior
#' @method as_draws sb_fit
#' @export
as_draws.sb_fit <- function(x, ...) as_draws_df(x, ...)
#' @rdname sb_fit-posterior
#' @method as_draws sb_point_fit
#' @export
as_draws.sb_point_fit <- as_draws.sb_fit
#' @rdname sb_fit-posterior
#' @method as_draws sb_wbb_path
#' @export
as_draws.sb_wbb_path <- as_draws.sb_fit
#' @rdname sb_fit-posterior
#' @method as_draws sb_vi_grid
#' @export
as_draws.sb_vi_grid <- as_draws.sb_fit

#' @importFrom posterior summarise_draws
#' @rdname sb_fit-posterior
#' @method summarise_draws sb_fit
#' @export
summarise_draws.sb_fit <- function(.x, ...) posterior::summarise_draws(as_draws_df(.x), ...)
#' @rdname sb_fit-posterior
#' @method summarise_draws sb_point_fit
#' @export
summarise_draws.sb_point_fit <- summarise_draws.sb_fit
#' @rdname sb_fit-posterior
#' @method summarise_draws sb_wbb_path
#' @export
summarise_draws.sb_wbb_path <- summarise_draws.sb_fit
#' @rdname sb_fit-posterior
#' @method summarise_draws sb_vi_grid
#' @export
summarise_draws.sb_vi_grid <- summarise_draws.sb_fit

#' @rdname sb_fit-posterior
#' @export
as.data.frame.sb_fit <- function(x, row.names = NULL, optional = FALSE, pars = NULL, ...) {
  d <- sb_draw_matrix(x, pars, rlang::current_env(), "as.data.frame", ...)
  out <- as.data.frame(d, row.names = row.names, optional = optional)
  names(out) <- colnames(d)  # the parameter names as they are ("(Intercept)", "z[1,2]"), as rstanarm
  out
}

#' @rdname sb_fit-posterior
#' @importFrom stats logLik
#' @export
logLik.sb_fit <- function(object, ...) {
  sb_check_dots(..., fn = "logLik")
  call <- rlang::current_env()
  if (!inherits(object, c("sb_wbb", "sb_blasso")) || inherits(object, "sb_nn_fit")) {
    cls <- class(object)[1]  # (the message is interpolated in sb_not_applicable(): values pasted in)
    sb_not_applicable(c(paste0("{.fn logLik} is defined for the linear models of {.fn wbb} and {.fn blasso}, not for a {.cls ", cls, "} fit."),
                        i = "Use {.code log_lik(fit)}: the pointwise log-likelihood of every draw (and {.code loo::loo(log_lik(fit))})."),
                      call = call)
  }
  fam <- sb_fit_family(object)
  if (!fam %in% c("gaussian", "binomial", "poisson")) {
    sb_not_applicable(paste0("{.fn logLik} of a ", fam, " fit is not defined; use {.fn log_lik}."), call = call)
  }
  cn <- object$settings$coef_names %||% colnames(object$draws)
  if (!identical(colnames(object$draws), cn)) {
    sb_abort(c("{.fn logLik} needs every coefficient, and the fit kept only {ncol(object$draws)} of {length(cn)}.",
               i = "Refit with {.code keep_draws = TRUE} (the default)."), kind = "state", call = call)
  }
  est <- if (inherits(object, "sb_blasso") || is.null(object$estimate)) colMeans(object$draws) else object$estimate
  one <- object
  one$draws <- matrix(est, 1L, dimnames = list(NULL, colnames(object$draws)))
  one$chain <- NULL
  td <- sb_training_data(object)
  if (is.null(td)) sb_no_training_data(object, call)
  eta <- drop(sb_linpred_draws(one, NULL, call = call))
  y <- td$y
  w <- object$settings$weights %||% rep(1, length(y))
  ll <- switch(fam,
    gaussian = {
      s2 <- sum(w * (y - eta)^2) / sum(w)
      sum(w * stats::dnorm(y, eta, sqrt(s2), log = TRUE))
    },
    binomial = sum(w * ifelse(y == 1, stats::plogis(eta, log.p = TRUE), stats::plogis(eta, lower.tail = FALSE, log.p = TRUE))),
    poisson = sum(w * (y * eta - exp(eta) - lgamma(y + 1)))
  )
  df <- if (inherits(object, "sb_blasso")) length(est) else sum(est != 0)
  if (fam == "gaussian") df <- df + 1L
  structure(ll, df = as.integer(df), nobs = length(y), class = "logLik")
}
