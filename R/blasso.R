#' Bayesian lasso by blocked Gibbs sampling
#'
#' Draws from the Bayesian lasso posterior of Park and Casella (2008),
#' \deqn{y \mid \beta, \sigma^2 \sim N(\mu 1 + X\beta, \sigma^2 I), \quad
#' \beta_j \mid \tau_j^2, \sigma^2 \sim N(0, \sigma^2 \tau_j^2), \quad \tau_j^2 \sim \mathrm{Exp}(\lambda^2/2),}
#' with a flat prior on the intercept \eqn{\mu} and \eqn{\pi(\sigma^2) \propto 1/\sigma^2} (or an
#' inverse-gamma prior), by a blocked Gibbs sampler in C++ with chains run in parallel threads.
#'
#' @details
#' **Sampler.** Each sweep draws \eqn{\sigma^2} given \eqn{\tau} with \eqn{\beta} integrated out, then
#' \eqn{\beta \mid \sigma^2, \tau} (jointly), then \eqn{1/\tau_j^2} from its inverse-Gaussian conditional
#' (a numerically stable form of the Michael-Schucany-Haas draw that stays valid as \eqn{\beta_j \to 0}),
#' then \eqn{\lambda^2} under the gamma hyperprior. This two-block sampler mixes better per sweep than
#' Park and Casella's original three-block one. When \eqn{p \le n} one Cholesky factorization of
#' \eqn{X'X + D_\tau^{-1}} per sweep serves both draws; when \eqn{p > n} one Cholesky of the
#' \eqn{n \times n} matrix \eqn{I + X D_\tau X'} does, and \eqn{\beta} is drawn by the \eqn{O(n^2 p)}
#' algorithm of Bhattacharya, Chakraborty and Mallick (2016).
#'
#' **lambda.** `lambda = "eb"` estimates \eqn{\lambda} by Monte-Carlo EM (Park and Casella 2008, section
#' 3.1): blocks of `em_sweeps` sweeps per chain, the E-step averaging the Rao-Blackwellised
#' \eqn{E[\tau_j^2 \mid \beta, \sigma^2, \lambda] = |\beta_j|/(\lambda\sigma) + 1/\lambda^2} over sweeps and
#' chains (lower Monte-Carlo noise than averaging \eqn{\tau_j^2} draws), the M-step
#' \eqn{\lambda = \sqrt{2p / \sum_j E[\tau_j^2]}}; then `burnin` and `iterations` sweeps at the estimate. Chains
#' share one \eqn{\lambda}. When \eqn{p \ge n} the marginal likelihood can increase without bound as
#' \eqn{\lambda \to 0} (\eqn{\sigma^2 \to 0}, the fit interpolates y), so by default (`sigma2_prior = "auto"`)
#' a proper inverse-gamma prior with shape 1 and scale `0.1 * var(y)` is then used, and `lambda` is kept
#' in `[lambda_min, lambda_max]` (a warning is given if a bound is hit). `lambda = "gamma"` puts a
#' Gamma(r, delta) prior (shape, rate) on \eqn{\lambda^2} (`control$gamma_prior`). A number fixes lambda.
#'
#' **Reversible jump.** `blasso_control(rj = TRUE)` adds a model indicator (active set) with, by default, every
#' active set equally likely, as `monomvn::blasso(RJ = TRUE)` has by default (its documentation says "uniform
#' on the size" but its add/delete proposal ratio with a constant model prior gives uniform over subsets);
#' inactive coefficients are exactly 0.
#' Add/delete moves are accepted using the likelihood with both \eqn{\beta} and \eqn{\sigma^2} integrated
#' out, keeping the latent \eqn{\tau_j^2} of inactive coefficients at draws from their prior (pseudo-prior
#' equal to prior), which makes it a valid Metropolis-within-Gibbs step targeting the same posterior as
#' monomvn's reversible-jump sampler (not the same proposal, so not the same draws). Active sets are limited
#' to at most n - 2 coefficients (n - 1 without intercept). `blasso_control(preset = "monomvn")` sets
#' monomvn's defaults: RJ, \eqn{\lambda^2 \sim} Gamma(2, 0.1), an intercept (`icept = TRUE`), columns
#' centred and scaled to unit L2 norm (`normalize = TRUE`; the Gamma prior on \eqn{\lambda^2} refers to that
#' scale), the improper \eqn{1/\sigma^2} prior (`ab = c(0, 0)`, monomvn's default with RJ), active sets of
#' up to n - 1 coefficients (monomvn's `M = min(p, n - 1)`) and `thin = min(p, n - 1)`. With the preset,
#' `intercept = FALSE` is monomvn's `icept = FALSE`, which is not a model without intercept: monomvn still
#' centres the columns of `x` but not `y` (the mean of `y` stays in the residuals) and keeps n - 1 degrees of
#' freedom for \eqn{\sigma^2}; the preset does the same and draws no intercept. (monomvn's add/delete
#' proposal at the largest size `M` uses half the Hastings ratio of the move into it; the preset samples the
#' posterior itself, which differs from monomvn's chain only where the posterior reaches size `M`.)
#'
#' Draws of different chains come from independent random streams keyed by `(seed, chain)`, so the result
#' does not depend on `threads`, nor on `chunks` and `future`: the chains can be split into chunks run through
#' [future.apply::future_lapply()] under the user's [future::plan()] with exactly the draws of one process. Under
#' `lambda = "eb"` every chunk runs the Monte-Carlo EM phase of all chains (its E-step averages over chains), so
#' only the burn-in and the kept sweeps are shared out.
#'
#' @param x Numeric matrix of predictors (n x p); p > n is allowed. Or a model formula, `y ~ x1 + x2` or `y ~ .`, with the variables in `data`: see [sb_formula]. The formula's intercept is
#'   `control$intercept` (`y ~ . - 1`: none).
#' @param y Numeric response of length n (not given with a formula).
#' @inheritParams wbb
#' @param family `"gaussian"` (or `gaussian()`), the only family of the Bayesian lasso: another is an error of
#'   class `scalebayes_error_input` that names [wbb()] and [sgld_sa()], which fit binomial and poisson responses.
#' @param lambda `"eb"` (empirical Bayes by Monte-Carlo EM, default), `"gamma"` (Gamma hyperprior on
#'   \eqn{\lambda^2}) or a positive number (fixed).
#' @param chains Number of chains.
#' @param iterations Draws kept per chain (after thinning).
#' @param burnin Sweeps discarded per chain before the kept ones (after the EM phase).
#' @param thin Keep every `thin`-th sweep. `NULL`: 1, or `min(p, n - 1)` under `preset = "monomvn"`.
#' @param threads Number of threads (chains run in parallel); results do not depend on it.
#' @param seed Seed (whole number) or `NULL` to draw one from R's RNG.
#' @param quiet Hide the progress bar.
#' @param control A [blasso_control()] list.
#' @param chunks Split the chains into this many chunks; `NULL` (default): one chunk per future worker
#'   ([future::nbrOfWorkers()]) when `future = TRUE`, else one chunk (the rule of every function with `chunks`).
#' @param future Run the chunks through [future.apply::future_lapply()] under the user's [future::plan()];
#'   the draws are identical to a single-process run with the same seed.
#' @param iter Deprecated name of `iterations` (works for one release, with a warning).
#' @section Interrupts:
#' Ctrl-C stops the engine at its next check and returns the partial fit of what finished (the draws every chain had kept, each chain's the same-seed run's first draws; an interrupt in the EM phase or the burn-in keeps nothing),
#' with one warning of class `scalebayes_warning_interrupted` and `fit$interrupted` `TRUE`; when nothing
#' finished it is R's interrupt. See [scalebayes-interrupts].
#' @return An object of class `c("sb_blasso", "sb_fit")`: `draws` (intercept and coefficients, one row per
#'   kept draw), `chain` (chain ids), `sigma2` and `lambda` (draws), `lambda_hat` (the EB estimate, or NA),
#'   `em_trace`, `model_size` (number of non-zero coefficients per draw), `diagnostics` (a data frame of
#'   R-hat, bulk and tail ESS from the posterior package for every coefficient, sigma2 and, under the
#'   gamma prior, lambda; computed each time `fit$diagnostics` is read, not stored), `estimate` (posterior
#'   mean), `timing` (of the whole call). Methods: those of [sb_fit-methods] plus
#'   [predict.sb_fit()] and [sb_fit-generics] (`data` keeps the training `x` and `y` for them).
#' @references Park, T. and Casella, G. (2008). The Bayesian lasso. JASA 103, 681-686.
#'   Bhattacharya, A., Chakraborty, A. and Mallick, B. K. (2016). Fast sampling with Gaussian scale mixture
#'   priors in high-dimensional regression. Biometrika 103, 985-991.
#' @export
#' @examples
#' set.seed(1)
#' x <- matrix(rnorm(100 * 5), 100, 5)
#' y <- drop(x %*% c(2, 0, 0, -1, 0)) + rnorm(100)
#' fit <- blasso(x, y, lambda = 1, chains = 2, iterations = 500, burnin = 200, quiet = TRUE)
#' fit$diagnostics
#' coef(fit)
blasso <- function(x, y, lambda = "eb", chains = 4L, iterations = 1000L, burnin = 500L, thin = NULL,
                   threads = NULL, seed = NULL, quiet = NULL, control = blasso_control(), chunks = NULL,
                   future = FALSE, iter, data = NULL, subset = NULL, na.action = NULL, contrasts = NULL,
                   family = "gaussian") {
  blasso_check_family(family)
  if (!missing(x) && sb_is_formula(x)) {
    return(sb_formula_fit(environment(), "blasso", blasso, match.call(), intercept = "control", response = "numeric"))
  }
  sb_formula_only(environment())
  t0 <- proc.time()  # `timing` covers the whole call
  call <- match.call()
  iterations <- sb_renamed_arg(if (!missing(iter)) iter, iterations, "iter", "iterations", missing(iterations),
                               "blasso", old_missing = missing(iter))
  x <- check_x_matrix(x)
  y <- check_y_vector(y, nrow(x))
  check_square_sums(x, "x")  # else the Gibbs sampler's sigma2 draw fails and blames the prior
  check_square_sums(y, "y")
  n <- nrow(x); p <- ncol(x)
  if (!inherits(control, "blasso_control")) {
    sb_abort(c("{.arg control} must be made by {.fn blasso_control}.",
               x = "You supplied {.obj_type_friendly {control}}."), arg = "control")
  }
  mode <- resolve_blasso_lambda(lambda)
  if (!is.null(control$fixed_tau2) && length(control$fixed_tau2) != p) {
    sb_abort("{.arg fixed_tau2} must have length {p} (one per column of {.arg x}).", arg = "control")
  }
  if (control$rj && mode$mode == "eb") {
    sb_abort(c("Reversible jump ({.code rj = TRUE}) cannot be combined with {.code lambda = \"eb\"}.",
               i = "Use {.code lambda = \"gamma\"} or a fixed number."), arg = "lambda")
  }
  chains <- check_count(chains)
  iterations <- check_count(iterations, arg = "iterations")
  burnin <- check_count(burnin, min = 0L)
  if (is.null(thin)) thin <- if (identical(control$preset, "monomvn")) max(1L, min(p, n - 1L)) else 1L
  thin <- check_count(thin)
  # draws of the coefficients, tau^2, sigma^2 and lambda (about 2p + 3 numbers per iteration), and R's copies
  check_result_memory(8 * as.double(chains) * iterations * (p + 1), "iterations",
                      peak = 8 * as.double(chains) * iterations * (2 * p + 3) * 2,
                      fix = "Use fewer {.arg iterations} or {.arg chains}, or a larger {.arg thin}.")
  rs <- wbb_run_settings(chains, threads, seed, quiet, chunks, future)
  threads <- rs$threads
  seed <- rs$seed
  if (stats::var(y) == 0) sb_abort("{.arg y} is constant; there is nothing to fit.", arg = "y")
  df <- n - as.integer(control$intercept)
  if (df < 2L) sb_abort("Too few observations: need n >= {2 + control$intercept}.", arg = "x")

  # scaling
  xs <- x
  scale <- rep(1, p)
  if (control$standardize) {
    scale <- if (identical(control$scale, "l2")) sqrt(colSums(sweep(x, 2, colMeans(x))^2)) else apply(x, 2, stats::sd)
    if (any(scale == 0)) {
      const <- colnames(x)[scale == 0]
      sb_abort(c("{.arg x} has constant column{?s} {.val {const}}; cannot standardize.",
                 i = "Drop {cli::qty(length(const))}{?it/them}, or use {.code blasso_control(standardize = FALSE)}."),
               arg = "x")
    }
    xs <- sweep(x, 2, scale, "/")
  }
  vy <- stats::var(y)
  s2p <- control$sigma2_prior
  if (identical(s2p, "auto")) s2p <- if (p >= n) c(1, 0.1 * vy) else c(0, 0)
  lambda0 <- if (mode$mode == "fixed") mode$value else 0  # 0: the engine's ridge marginal-likelihood start
  if (!is.null(control$lambda_start)) lambda0 <- control$lambda_start
  if (mode$mode == "gamma" && is.null(control$lambda_start)) {
    g <- control$gamma_prior
    lambda0 <- sqrt(g[1] / g[2])  # prior mean of lambda^2
  }
  ctrl <- blasso_engine_ctrl(mode$mode, lambda0, control, s2p, chains, iterations, burnin, thin,
                             sigma2_floor = if (p >= n) 1e-10 * vy else 0)
  r <- blasso_run_chains(xs, y, ctrl, rs)
  if (mode$mode == "eb" && isTRUE(r$em_hit_bound)) {
    sb_warn(c("The empirical-Bayes estimate of {.arg lambda} hit the bound {.code lambda_range}.",
              i = "The marginal likelihood may be unbounded (p >= n); use a proper {.arg sigma2_prior} or {.code lambda = \"gamma\"}."))
  }
  if (mode$mode == "eb" && !isTRUE(r$em_converged)) {
    sb_warn("Monte-Carlo EM for {.arg lambda} did not converge in {control$em_max} iterations; increase {.arg em_max} or {.arg em_sweeps}.")
  }
  beta <- r$beta
  beta <- sweep(beta, 2, scale, "/")
  draws <- cbind(r$intercept, beta)
  if (!control$intercept) draws <- beta
  colnames(draws) <- c(if (control$intercept) "(Intercept)", colnames(x))
  fit <- new_sb_fit(
    draws = draws, estimate = colMeans(draws), method = "Bayesian lasso (blocked Gibbs)",
    subclass = "sb_blasso", call = call, chain = r$chain,
    settings = list(
      nobs = n, p = p, lambda = lambda, lambda_mode = mode$mode,
      chains = chains, iterations = iterations, burnin = burnin, thin = thin, threads = threads,
      sigma2_prior = s2p, control = control, sampler = if (control$rj) "rj" else if (p > n) "bcm" else "cholesky",
      print_info = c(
        lambda = if (mode$mode == "gamma") sprintf("Gamma(%g, %g) prior on lambda^2, mean draw %.4g", control$gamma_prior[1],
                                               control$gamma_prior[2], mean(r$lambda))
                 else sprintf("%.4g (%s)", r$lambda[1], if (mode$mode == "eb") "empirical Bayes" else "fixed"),
        chains = sprintf("%d x %d draws (burn-in %d, thin %d)", chains, iterations, burnin, thin),
        sigma2 = sprintf("posterior mean %.4g, 95%% interval [%.4g, %.4g]", mean(r$sigma2),
                         stats::quantile(r$sigma2, 0.025), stats::quantile(r$sigma2, 0.975))
      )
    ),
    seed = seed, timing = NULL,
    sigma2 = r$sigma2, lambda = r$lambda, model_size = r$model_size, data = list(x = x, y = y),
    lambda_hat = if (mode$mode == "eb") r$lambda[1] else NA_real_, lambda_start = r$lambda_start,
    em_trace = r$em_lambda, rj_accept = if (control$rj) r$accept_rate else NA_real_,
    # what ksd() needs: cross products of the sampler's design (standardized, centred with an intercept) and y
    ksd_data = if (!control$rj && !identical(control$preset, "monomvn")) {
      xc <- if (control$intercept) sweep(xs, 2, colMeans(xs)) else xs
      yc <- if (control$intercept) y - mean(y) else y
      list(xtx = crossprod(xc), xty = drop(crossprod(xc, yc)), yty = sum(yc^2), scale = scale,
           slopes = colnames(draws)[seq_len(p) + control$intercept], n_eff = df)
    }
  )
  fit$timing <- proc.time() - t0
  if (isTRUE(r$interrupted)) {  # the draws each chain had kept: those of the uninterrupted run
    fit <- sb_partial_fit(fit, nrow(draws), as.double(chains) * iterations,
                          detail = sprintf("kept draws per chain: %s", paste(r$kept, collapse = ", ")))
  }
  fit
}

# R-hat and ESS are computed when asked for (`fit$diagnostics`, print()), not by blasso(): for many
# coefficients they cost several times the sampler (posterior's rank-normalized R-hat and bulk/tail ESS), and
# nothing is cached, so the fit stays a plain list of draws.
#' @export
`$.sb_blasso` <- function(x, name) {
  if (identical(name, "diagnostics") && isTRUE(.subset2(x, "settings")$control$diagnostics)) {
    return(blasso_diagnostics(x, include_lambda = identical(.subset2(x, "settings")$lambda_mode, "gamma")))
  }
  .subset2(x, name, exact = FALSE)
}

#' @export
print.sb_blasso <- function(x, digits = 3, ...) {
  shown <- x  # print() returns its argument unchanged; the R-hat line goes on a copy
  if (isTRUE(x$settings$control$diagnostics)) {
    shown$settings$print_info[["max R-hat"]] <- sprintf("%.3f", max(x$diagnostics$rhat, na.rm = TRUE))
  }
  print.sb_fit(shown, digits = digits, ...)
  invisible(x)
}

# Run the chains of one blasso() call: in one engine call, or split into rs$chunks chunks of chains (through
# future when rs$future). Chain k draws from the stream (seed, k) whatever the split (gibbs/blasso.hpp,
# first_chain / chain_count), so the combined result is the one-process result. Ctrl-C (?scalebayes-interrupts):
# the draws every chain had kept (the engine's `kept`, per chain), with `interrupted` TRUE; an interrupt before
# the first kept draw (EM, burn-in) is R's interrupt.
blasso_run_chains <- function(xs, y, ctrl, rs, call = rlang::caller_env()) {
  if (rs$chunks == 1L) {
    r <- sb_call_engine(cpp_blasso(xs, y, ctrl, engine_run(rs)), call = call)
    if (isTRUE(r$interrupted) && !sum(r$kept)) rlang::interrupt()
    return(r)
  }
  run <- engine_run(rs)
  parts <- wbb_run(rs, function(first, count) {
    r <- cpp_blasso(xs, y, utils::modifyList(ctrl, list(first_chain = as.integer(first), chain_count = as.integer(count))),
                    run)
    r$prefix <- sum(r$kept > 0)  # chains of the chunk that kept draws (each holds its kept draws only)
    r
  }, call = call, cut = function(r, k) r)
  r <- parts[[1L]]
  r$kept <- unlist(lapply(parts, `[[`, "kept"))
  r$interrupted <- !is.null(attr(parts, "interrupted")) || any(vapply(parts, function(q) isTRUE(q$interrupted), TRUE))
  for (nm in c("beta", "intercept", "sigma2", "lambda", "chain", "model_size")) r[[nm]] <- wbb_combine(parts, nm)
  r$rj_proposed <- sum(vapply(parts, `[[`, numeric(1), "rj_proposed"))
  r$rj_accepted <- sum(vapply(parts, `[[`, numeric(1), "rj_accepted"))
  r$accept_rate <- if (r$rj_proposed > 0) r$rj_accepted / r$rj_proposed else 0
  r
}

# The list the C++ glue reads (see blasso_control_from() in src/blasso.cpp); mode by name ("fixed", "eb",
# "gamma": gibbs/blasso.hpp's lambda_mode_names).
blasso_engine_ctrl <- function(mode, lambda0, control, s2p, chains, iter, burnin, thin, sigma2_floor = 0) {
  list(
    mode = mode, lambda = lambda0, gamma_shape = control$gamma_prior[1],
    gamma_rate = control$gamma_prior[2], sigma2_shape = s2p[1], sigma2_scale = s2p[2],
    intercept = control$intercept, chains = chains, iter = iter, burnin = burnin, thin = thin,
    em_max = control$em_max, em_sweeps = control$em_sweeps, em_burn = control$em_burn,
    em_tol = control$em_tol, lambda_min = control$lambda_range[1], lambda_max = control$lambda_range[2],
    sigma2_floor = sigma2_floor, rj = control$rj, rj_moves = control$rj_moves,
    rj_prior = control$rj_prior,  # by name: gibbs/blasso.hpp's rj_prior_names
    fixed_tau2 = control$fixed_tau2,
    # preset "monomvn": active sets up to n - 1 (monomvn's M = min(p, n - 1)), and intercept = FALSE as
    # monomvn's icept = FALSE (x centred, y not, n - 1 degrees of freedom for sigma2)
    center_x = identical(control$preset, "monomvn") && !control$intercept,
    rj_cap = if (identical(control$preset, "monomvn")) "n" else "n_eff"  # gibbs/blasso.hpp's rj_cap_names
  )
}

resolve_blasso_lambda <- function(lambda, call = rlang::caller_env()) {
  if (is.character(lambda) && length(lambda) == 1L && lambda %in% c("eb", "gamma")) {
    return(list(mode = lambda, value = NA_real_))
  }
  if (is.numeric(lambda) && length(lambda) == 1L && is.finite(lambda) && lambda > 0 && lambda <= 1e100) {
    return(list(mode = "fixed", value = as.double(lambda)))
  }
  sb_abort(c("{.arg lambda} must be {.val eb}, {.val gamma}, or a positive number (at most 1e100).",
             x = "You supplied {.val {format(lambda)}}."), arg = "lambda", call = call)
}

blasso_diagnostics <- function(fit, include_lambda = FALSE) {
  d <- cbind(fit$draws, sigma2 = fit$sigma2)
  if (include_lambda) d <- cbind(d, lambda = fit$lambda)
  ch <- fit$chain
  ids <- sort(unique(ch))
  k <- length(ids)
  per <- min(tabulate(match(ch, ids), k))  # the chains' common length (an interrupted fit's chains may differ)
  arr <- array(NA_real_, dim = c(per, k, ncol(d)))
  for (kk in seq_len(k)) arr[, kk, ] <- d[ch == ids[kk], , drop = FALSE][seq_len(per), , drop = FALSE]
  # posterior's functions on each iterations x chains matrix: the numbers of posterior::summarise_draws(), in
  # about 60% of its time. posterior warns "The ESS has been capped" for (near-)antithetic thinned chains; the
  # value is still right.
  each <- function(f) {
    withCallingHandlers(
      as.double(apply(arr, 3, f)),
      warning = function(w) if (grepl("ESS has been capped", conditionMessage(w))) invokeRestart("muffleWarning")
    )
  }
  data.frame(parameter = colnames(d), rhat = each(posterior::rhat), ess_bulk = each(posterior::ess_bulk),
             ess_tail = each(posterior::ess_tail))
}

#' Control settings for blasso()
#'
#' @param sigma2_prior `"auto"` (the improper \eqn{1/\sigma^2} when p < n, an inverse gamma with shape 1 and
#'   scale `0.1 * var(y)` when p >= n), or `c(shape, scale)` of an inverse-gamma prior (`c(0, 0)` is
#'   \eqn{1/\sigma^2}).
#' @param gamma_prior `c(r, delta)`: shape and rate of the Gamma prior on \eqn{\lambda^2} for
#'   `lambda = "gamma"` (default monomvn's `c(2, 0.1)`; Park and Casella used `c(1, 1.78)` for the
#'   diabetes data).
#' @param em_max,em_sweeps,em_burn,em_tol Monte-Carlo EM: at most `em_max` iterations of `em_sweeps`
#'   sweeps per chain after `em_burn` initial sweeps; stop when the relative change of lambda is below
#'   `em_tol` twice in a row.
#' @param lambda_range Bounds kept on the EM estimate of lambda.
#' @param lambda_start Starting lambda for EM / the gamma prior (`NULL`: for EM, \eqn{\sqrt{2/v}} where
#'   \eqn{v} maximizes the marginal likelihood of the Gaussian prior \eqn{\beta \sim N(0, \sigma^2 v I)}
#'   with the Bayesian lasso's prior variance, which is much closer to the EB value than Park and
#'   Casella's least-squares start when p >= n; for the gamma prior, the prior mean).
#' @param intercept Fit an intercept (flat prior, integrated out by centring).
#' @param standardize Scale the columns of `x` before sampling (coefficients are reported on the original
#'   scale); how: `scale`. Default `FALSE`, or `TRUE` under `preset = "monomvn"`.
#' @param scale How `standardize = TRUE` scales a column: `"sd"` (unit standard deviation) or `"l2"` (unit
#'   L2 norm after centring, as `monomvn::blasso(normalize = TRUE)`; default under `preset = "monomvn"`).
#' @param rj Reversible-jump / model-indicator sampler over the active set (see [blasso()]).
#' @param rj_moves Add/delete proposals per sweep.
#' @param rj_prior Prior over active sets: `"models"` (every subset equally likely, which is what
#'   `monomvn::blasso`'s default `mprior = 0` amounts to) or `"size"` (uniform on the number of active
#'   coefficients, then uniform over subsets of that size).
#' @param fixed_tau2 For testing: hold the latent \eqn{\tau_j^2} at these values (length p), which turns the
#'   model into the conjugate normal-inverse-gamma regression with an exactly known posterior.
#' @param diagnostics Make R-hat and bulk/tail ESS (posterior package) available as `fit$diagnostics` and in
#'   `print(fit)`, computed when read (they are never computed inside [blasso()]); `FALSE`: `fit$diagnostics`
#'   is an empty list.
#' @param preset `"none"` or `"monomvn"` (monomvn::blasso defaults: `rj = TRUE`, `gamma_prior = c(2, 0.1)`,
#'   `intercept = TRUE`, `standardize = TRUE` with `scale = "l2"`, `sigma2_prior = c(0, 0)`, active sets of up
#'   to n - 1 coefficients, and `thin = min(p, n - 1)` in [blasso()]); arguments given explicitly override the
#'   preset. With the preset, `intercept = FALSE` means monomvn's `icept = FALSE` (see [blasso()]).
#' @return A list of class `blasso_control`.
#' @export
#' @examples
#' blasso_control(sigma2_prior = c(1, 1))
blasso_control <- function(sigma2_prior = "auto", gamma_prior = c(2, 0.1), em_max = 100L, em_sweeps = 100L,
                           em_burn = 100L, em_tol = 1e-3, lambda_range = c(1e-6, 1e6), lambda_start = NULL,
                           intercept = TRUE, standardize = FALSE, rj = FALSE, rj_moves = 1L,
                           rj_prior = c("models", "size"), fixed_tau2 = NULL, diagnostics = TRUE, preset = c("none", "monomvn"),
                           scale = c("sd", "l2")) {
  preset <- sb_match_arg(preset, partial = TRUE)
  rj_prior <- sb_match_arg(rj_prior, partial = TRUE)
  if (preset == "monomvn") {
    if (missing(rj)) rj <- TRUE
    if (missing(gamma_prior)) gamma_prior <- c(2, 0.1)
    if (missing(standardize)) standardize <- TRUE
    if (missing(scale)) scale <- "l2"
    if (missing(sigma2_prior)) sigma2_prior <- c(0, 0)
  }
  scale <- sb_match_arg(scale)
  if (!identical(sigma2_prior, "auto")) {
    if (!is.numeric(sigma2_prior) || length(sigma2_prior) != 2L || any(!is.finite(sigma2_prior)) ||
        any(sigma2_prior < 0)) {
      sb_abort(c("{.arg sigma2_prior} must be {.val auto} or {.code c(shape, scale)} with non-negative entries.",
                 x = "You supplied {.val {format(sigma2_prior)}}."), arg = "sigma2_prior")
    }
    sigma2_prior <- as.double(sigma2_prior)
  }
  if (!is.numeric(gamma_prior) || length(gamma_prior) != 2L || any(!is.finite(gamma_prior)) || any(gamma_prior <= 0)) {
    sb_abort(c("{.arg gamma_prior} must be {.code c(shape, rate)} with positive entries.",
               x = "You supplied {.val {format(gamma_prior)}}."), arg = "gamma_prior")
  }
  if (!is.numeric(lambda_range) || length(lambda_range) != 2L || any(!is.finite(lambda_range)) ||
      lambda_range[1] <= 0 || lambda_range[1] >= lambda_range[2]) {
    sb_abort("{.arg lambda_range} must be two increasing positive numbers.", arg = "lambda_range")
  }
  structure(list(
    sigma2_prior = sigma2_prior, gamma_prior = as.double(gamma_prior),
    em_max = check_count(em_max), em_sweeps = check_count(em_sweeps), em_burn = check_count(em_burn, min = 0L),
    em_tol = check_number(em_tol, lower = 0, lower_open = TRUE),
    lambda_range = as.double(lambda_range),
    lambda_start = check_number(lambda_start, lower = 0, lower_open = TRUE, allow_null = TRUE),
    intercept = check_flag(intercept), standardize = check_flag(standardize), scale = scale,
    rj = check_flag(rj), rj_moves = check_count(rj_moves, max = 1e6), rj_prior = rj_prior, preset = preset,
    diagnostics = check_flag(diagnostics),
    fixed_tau2 = if (is.null(fixed_tau2)) NULL else {
      if (!is.numeric(fixed_tau2) || any(!is.finite(fixed_tau2)) || any(fixed_tau2 <= 0)) {
        sb_abort("{.arg fixed_tau2} must be a vector of positive numbers.", arg = "fixed_tau2")
      }
      as.double(fixed_tau2)
    }
  ), class = "blasso_control")
}

# blasso(family = ): the Bayesian lasso is a gaussian linear model; another family is a classed error that says
# which function fits it (before, "unused argument"; issue 61).
blasso_check_family <- function(family, call = rlang::caller_env()) {
  fam <- if (inherits(family, "family")) family$family else family
  if (identical(fam, "gaussian") && (!inherits(family, "family") || identical(family$link, "identity"))) return(invisible("gaussian"))
  shown <- if (is.character(fam) && length(fam) == 1L) fam else "(not a family)"
  sb_abort(c("{.fn blasso} fits a gaussian linear model only: {.arg family} must be {.val gaussian}.",
             x = "You supplied {.val {shown}}.",
             i = "For a binomial or poisson response use {.code wbb(..., family = \"{if (shown %in% c('binomial', 'poisson')) shown else 'binomial'}\")} (weighted Bayesian bootstrap) or {.fn sgld_sa}."),
           arg = "family", kind = "input", call = call)
}
