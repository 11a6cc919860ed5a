# Interrupts (Ctrl-C) that keep what is done: the one rule of every long-running front end, its help topic
# (?scalebayes-interrupts) and the two helpers that apply it (the warning, and the marks on a partial fit).

#' Interrupting a long call (Ctrl-C): the partial fit
#'
#' Every long-running front end checks for an interrupt (Ctrl-C, Esc in RStudio, `SIGINT`) while its engine
#' runs, and stops at the next check (well within a second). What happens then is the same everywhere:
#'
#' * **Something finished**: the call returns the *partial fit*, an ordinary fit object holding every draw
#'   (or chain) that finished, with **one** warning of class `scalebayes_warning_interrupted` saying how many
#'   of how many finished and that the result is partial. `fit$interrupted` is `TRUE` (on a fit that was not
#'   interrupted it is `NULL`, or `FALSE` for the network and density fits: test it with `isTRUE()`),
#'   `fit$interruption` is `list(completed = , requested = , unit = )` (the front ends of the first three
#'   points below), and `print(fit)` says so. Every generic answers on the
#'   completed part (`print()`, `summary()`, `coef()`, `predict()`, `as_draws_df()`, ...).
#' * **Nothing finished** (the interrupt came during the cross-validation, the unweighted fit, the EM phase or
#'   the burn-in, or before the first draw): R's interrupt is signalled, exactly as for any R function (the
#'   condition of class `interrupt`: `tryCatch(..., interrupt = )` catches it), and nothing is returned.
#'
#' The draws a partial fit keeps are exactly those an uninterrupted run with the same seed gives for the same
#' indices: every draw and chain has its own random stream. What is kept:
#'
#' * weighted Bayesian bootstrap ([wbb()], [wbb()] with `loss = `, [trend_filter_wbb()], [wbb_nn()]): draws
#'   1, ..., k, the longest run of finished draws from the first one (with several threads a few draws may
#'   have finished after a draw still in hand; they are left out, so the partial fit is the fit
#'   `draws = k` gives);
#' * [blasso()]: the draws every chain had kept (chain k's first draws, as in the uninterrupted run; the
#'   chains may have different lengths, and R-hat / ESS use their common length);
#' * [sgld_sa()] and [hamcmc_sa()] regressions: the kept draws of every chain up to the interrupt (chains
#'   that kept no draw are left out); on a network, and [sgmcmc_density()], the same (see their pages for the
#'   chains' last states); [sparse_vi()], [bbb()] and [vae()]: the state reached.
#'
#' Convergence warnings of a full run are not given for a partial fit (its diagnostics are still computed and
#' printed). [cv_weighted_lasso()] and the cross-validation step of the WBB functions keep today's behaviour:
#' a partial cross-validation (some folds, or some lambda values) does not choose a lambda, so an interrupt
#' there is R's interrupt. The same holds for the paths ([weighted_lasso()], [trend_filter()],
#' [generalized_lasso()]).
#'
#' The warning is an ordinary R warning: a second Ctrl-C while the partial fit is assembled interrupts R as
#' usual. To turn a partial fit into an error, use
#' `withCallingHandlers(..., scalebayes_warning_interrupted = function(w) stop(w))`.
#' @examples
#' \dontrun{
#' fit <- wbb(x, y, draws = 1e5)   # press Ctrl-C after a while
#' fit$interruption                # list(completed = 3127, requested = 1e5, unit = "draws")
#' summary(fit)  # the 3,127 draws: those of wbb(x, y, draws = 3127) with the same seed
#' }
#' @name scalebayes-interrupts
#' @aliases scalebayes_warning_interrupted
NULL

# The one warning of a partial fit: `completed` of `requested` units (draws, chains) finished.
sb_warn_interrupted <- function(completed, requested, unit = "draws", detail = NULL) {
  fmt <- function(v) format(v, big.mark = ",", scientific = FALSE, trim = TRUE)
  sb_warn(c("Interrupted: the result is partial, {fmt(completed)} of {fmt(requested)} {unit} finished.",
            i = "The fit holds them{if (!is.null(detail)) paste0(' (', detail, ')') else ''}; {.code fit$interrupted} is TRUE.",
            i = "See {.topic scalebayes::scalebayes-interrupts}."),
          kind = "interrupted")
}

# Mark a partial fit (interrupted, interruption, a status line in print()) and give the one warning. Returns
# the fit (`warn = FALSE`: the marks only, for fits returned together under one warning).
sb_partial_fit <- function(fit, completed, requested, unit = "draws", detail = NULL, warn = TRUE) {
  fit$interrupted <- TRUE
  fit$interruption <- list(completed = as.double(completed), requested = as.double(requested), unit = unit)
  if (is.list(fit$settings)) {
    fit$settings$print_info <- c(fit$settings$print_info,
                                 status = sprintf("interrupted: %s of %s %s finished (a partial fit)",
                                                  format(completed, big.mark = ",", scientific = FALSE),
                                                  format(requested, big.mark = ",", scientific = FALSE), unit))
  }
  if (warn) sb_warn_interrupted(completed, requested, unit, detail)
  fit
}
