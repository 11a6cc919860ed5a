# What an SG-MCMC fit says about itself: split R-hat and bulk / tail ESS per kept coefficient (posterior
# package, rank-normalized, Vehtari et al. 2021), the classed convergence warning at Stan's thresholds, and the
# report of diverged chains. Shared by sgld_sa() / hamcmc_sa() regression and sgmcmc_density().

# Stan's thresholds: max R-hat above 1.01 or min bulk ESS below 100 (Vehtari et al. 2021, section 4).
sgmcmc_rhat_max <- 1.01
sgmcmc_ess_min <- 100

# draws: kept draws (rows) of the chains in `chain`; chains are cut to a common length (an interrupted chain
# may be shorter). NULL when no chain has 4 draws.
sgmcmc_convergence <- function(draws, chain) {
  ids <- unique(chain)
  len <- min(vapply(ids, function(k) sum(chain == k), numeric(1)))
  if (!length(ids) || len < 4L) return(NULL)
  arr <- array(NA_real_, dim = c(len, length(ids), ncol(draws)))
  for (i in seq_along(ids)) arr[, i, ] <- draws[which(chain == ids[i])[seq_len(len)], , drop = FALSE]
  # posterior warns "The ESS has been capped" for (near-)antithetic chains; the value is still right
  each <- function(f) {
    withCallingHandlers(
      vapply(seq_len(ncol(draws)), function(j) {
        v <- arr[, , j, drop = TRUE]
        if (!is.matrix(v)) v <- matrix(v, ncol = 1L)
        if (stats::var(as.vector(v)) == 0) return(NA_real_)  # a constant coefficient (e.g. pruned): undefined
        as.double(f(v))
      }, numeric(1)),
      warning = function(w) if (grepl("ESS has been capped", conditionMessage(w))) invokeRestart("muffleWarning")
    )
  }
  data.frame(parameter = colnames(draws), rhat = each(posterior::rhat), ess_bulk = each(posterior::ess_bulk),
             ess_tail = each(posterior::ess_tail), row.names = NULL)
}

# The print() lines: max R-hat and min bulk ESS (over the coefficients where they are defined).
sgmcmc_convergence_info <- function(conv) {
  if (is.null(conv) || all(is.na(conv$rhat)) || all(is.na(conv$ess_bulk))) return(NULL)
  c(`max R-hat` = sprintf("%.3f", max(conv$rhat, na.rm = TRUE)),
    `min bulk ESS` = sprintf("%.0f", min(conv$ess_bulk, na.rm = TRUE)))
}

sgmcmc_warn_convergence <- function(conv, iterations, arg = "iterations") {
  if (is.null(conv) || all(is.na(conv$rhat)) || all(is.na(conv$ess_bulk))) return(invisible(FALSE))
  rh <- max(conv$rhat, na.rm = TRUE)
  es <- min(conv$ess_bulk, na.rm = TRUE)
  if (rh <= sgmcmc_rhat_max && es >= sgmcmc_ess_min) return(invisible(FALSE))
  worst <- conv$parameter[which.max(conv$rhat)]
  sb_warn(c("The chains have not converged: max R-hat {sprintf('%.3f', rh)} ({worst}), min bulk ESS {sprintf('%.0f', es)} (thresholds: R-hat <= {sgmcmc_rhat_max}, ESS >= {sgmcmc_ess_min}).",
            i = "Run longer chains ({.arg {arg}} = {format(iterations, big.mark = ',', scientific = FALSE)} now; e.g. 4 times as many), or keep more chains; {.code fit$diagnostics$convergence} has R-hat and ESS per coefficient."),
          kind = "convergence")
  invisible(TRUE)
}

# A classed warning naming the diverged chains, their iteration and the knob (all chains diverged is an error
# raised by the front end before this).
sgmcmc_report_divergence <- function(fit, step_size, auto_step) {
  bad <- which(fit$diverged)
  if (!length(bad)) return(invisible())
  why <- fit$diverged_why[bad] %||% rep(NA, length(bad))
  how <- if (all(is.na(why))) " (non-finite state)" else ""
  where <- paste0("chain ", bad, " at iteration ", fit$diverged_at[bad],
                  ifelse(is.na(why), "", paste0(" (", sub(" at iteration [0-9]+", "", why), ")")), collapse = ", ")
  sb_warn(c("{length(bad)} of {length(fit$diverged)} chain{?s} diverged{how}: {where}; {?it is/they are} left out of the draws and every average.",
            i = "Reduce {.code sgmcmc_control(step_size = )} (now {signif(step_size, 3)}{if (auto_step) ', chosen by the warm-up' else ''})."),
          kind = "diverged", also = "divergence")
  invisible()
}

# How print() shows the step: per example (eps N) for SGLD / SGHMC, with "(warm-up)" when chosen by it.
sgmcmc_step_label <- function(eps, n, auto, sampler) {
  per <- if (!is.null(n) && sgmcmc_sampler_info(sampler)$per_example) sprintf(" (%s per example)", format(signif(eps * n, 3))) else ""
  paste0(format(signif(eps, 3)), per, if (auto) ", chosen by the warm-up" else "")
}

# summary() of an SG-MCMC fit: the draws' summary with R-hat and bulk / tail ESS per coefficient.
sgmcmc_summary <- function(object, probs, pars) {
  out <- summary.sb_fit(object, probs = probs, pars = pars)
  conv <- object$diagnostics$convergence
  if (!is.null(conv)) {
    m <- match(out$parameter, conv$parameter)
    out$rhat <- conv$rhat[m]
    out$ess_bulk <- round(conv$ess_bulk[m])
    out$ess_tail <- round(conv$ess_tail[m])
  }
  class(out) <- c("summary_sb_fit", "data.frame")
  out
}

sgmcmc_print <- function(x, digits) {
  sgmcmc_print_diverged(x)
  print.sb_fit(x, digits = digits)
}

# The first line of print() when chains diverged (regression, density and network fits).
sgmcmc_print_diverged <- function(x) {
  d <- .subset2(x, "diverged")  # exact name: `$` would match diverged_at of a fit without it
  if (any(d)) {
    cat(sprintf("DIVERGED: %d of %d chains (%s), left out of the draws and every average\n", sum(d), length(d),
                paste0("chain ", which(d), " at iteration ", x$diverged_at[d], collapse = ", ")))
  }
}

#' @rdname sb_fit-methods
#' @export
summary.sb_sgld_sa <- function(object, ..., probs = c(0.025, 0.5, 0.975), pars = NULL, prob = NULL) {
  sb_check_dots(..., fn = "summary")
  sgmcmc_summary(object, sb_summary_probs(probs, prob, missing(probs)), pars)
}

#' @rdname sb_fit-methods
#' @export
summary.sb_sgmcmc_density <- function(object, probs = c(0.025, 0.5, 0.975), pars = NULL, ..., prob = NULL) {
  sb_check_dots(..., fn = "summary")
  sgmcmc_summary(object, sb_summary_probs(probs, prob, missing(probs)), pars)
}

#' @export
print.sb_sgld_sa <- function(x, digits = 3, ...) {
  sgmcmc_print(x, digits)
  invisible(x)
}

#' @export
print.sb_sgmcmc_density <- function(x, digits = 3, ...) {
  sgmcmc_print(x, digits)
  invisible(x)
}

# step_size = 0 freezes the parameters: allowed where something else still moves (the SSGL latent variables of
# method = "sa" / "em", which the tests check alone that way); where nothing would (method = "none") every draw is
# the starting value, which is still what was asked (the starting network or state, e.g. to inspect an `init`):
# a classed warning; a density target, where such a run can only be a mistake, an error.
check_frozen_step <- function(control, moves, what, error = FALSE, call = rlang::caller_env()) {
  if (moves || !is.numeric(control$step_size) || control$step_size != 0) return(invisible(control))
  msg <- c("{.code sgmcmc_control(step_size = 0)} freezes the chain: with {what} nothing else moves, so every draw is the starting value.",
           i = "Use a positive {.arg step_size}, or {.code \"auto\"} (the default) to let the warm-up choose it.")
  if (error) sb_abort(msg, arg = "step_size", call = call)
  sb_warn(msg, kind = "frozen")
  invisible(control)
}

# The SSGL prior of a regression: spike Laplace(0, sigma v0) (sd sqrt(2) sigma v0) and slab N(0, sigma^2 v1) (sd
# sigma sqrt(v1)). A spike as wide as the slab swaps their roles (rho would estimate the probability of the
# narrower, "slab" part): an error when the latent variables use them (method "sa" / "em").
check_spike_slab <- function(v0, v1, method, call = rlang::caller_env()) {
  if (method == "none" || sqrt(2) * v0 < sqrt(v1)) return(invisible())
  sb_abort(c("The spike must be narrower than the slab: {.arg v0} = {format(v0)} gives a spike sd of {format(signif(sqrt(2) * v0, 3))} sigma, {.arg v1} = {format(v1)} a slab sd of {format(signif(sqrt(v1), 3))} sigma.",
             i = "Use {.arg v0} below {format(signif(sqrt(v1 / 2), 3))} (sqrt(v1 / 2)) or a larger {.arg v1}; the defaults are v0 = 0.1, v1 = 10."),
           arg = "v0", call = call)
}

# One kept draw in all: no posterior sd, R-hat or ESS (sd() of one value is NA). A classed warning; the sds are NA.
warn_one_draw <- function(total, call = rlang::caller_env()) {
  if (total >= 2) return(invisible(FALSE))
  sb_warn(c("Only {total} draw{?s} kept: the posterior sd ({.field coef_sd}, {.code summary()}'s sd), R-hat and ESS need at least 2 and are NA.",
            i = "Keep more draws: more {.arg iterations} or {.arg chains}, or a smaller {.arg burnin} or {.arg thin}."),
          kind = "draws")
  invisible(TRUE)
}
