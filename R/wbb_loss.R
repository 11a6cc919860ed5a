# The WBB of any loss (issue 39, item 5): the weighted likelihood bootstrap of a loss written in R (each draw solved
# by L-BFGS inside the one WBB draw loop, src/wbb_loss.cpp) and the weighted (Bayesian) bootstrap of a statistic.
# wbb(loss = ) and wbb(statistic = ) call wbb_loss(), as wbb(model = ) calls wbb_nn().

#' Control settings for [wbb_loss()]
#'
#' Settings of the L-BFGS minimizer that solves each draw of `wbb(loss = )`.
#'
#' @param max_iter Iterations (L-BFGS directions) per draw at most; a draw that reaches it is flagged.
#' @param tol Convergence: the largest absolute gradient entry at most `tol * max(1, |value|)`, on the scale of the
#'   loss at `init`: with `s0 = |f(init)| + max|g(init)| max(1, max|init|)` below 1, the loss is minimized divided
#'   by the power of two nearest `s0` (a loss scaled by 1e-300 is tested on its own scale; the minimizers are the
#'   same), and `|value|` counts at most `1e4 max(1, s0)` (a loss without a minimum does not pass the test by
#'   decreasing without bound).
#' @param memory Number of (s, y) pairs of the L-BFGS memory.
#' @param check_gradient Compare the gradient of `loss` at `init` (unit weights) with central finite differences
#'   along three fixed directions before any draw (6 extra calls); a mismatch is a warning of class
#'   `scalebayes_warning_gradient` (a wrong gradient is the usual reason why draws fail).
#' @param on_failure What to do with draws that did not converge: `"warn"` (keep them, flagged in
#'   `fit$diagnostics`, with a warning of class `scalebayes_warning_convergence`), `"drop"` (leave them out of the
#'   draws, with that warning) or `"error"` (an error of class `scalebayes_error_convergence`).
#' @return A list of class `sb_wbb_loss_control`.
#' @seealso [wbb_loss()]
#' @examples
#' wbb_loss_control(tol = 1e-10)
#' @export
wbb_loss_control <- function(max_iter = 1000L, tol = 1e-8, memory = 10L, check_gradient = TRUE,
                             on_failure = c("warn", "drop", "error")) {
  structure(list(max_iter = check_count(max_iter, max = 1e8),
                 tol = check_number(tol, lower = 0, lower_open = TRUE),
                 memory = check_count(memory, max = 1000L),
                 check_gradient = check_flag(check_gradient),
                 on_failure = sb_match_arg(on_failure)),
            class = "sb_wbb_loss_control")
}

#' The weighted Bayesian bootstrap of any loss or statistic
#'
#' Draws from the weighted likelihood bootstrap (Newton & Raftery 1994; the WBB of Newton, Polson & Xu 2021
#' without a penalty) of a loss written in R, or the Bayesian bootstrap (Rubin 1981) of a weighted statistic, as
#' the packages \pkg{bayesboot} and \pkg{fwb} do. `wbb(loss = , init = , data = )` and `wbb(statistic = , data =
#' )` call this function.
#'
#' **Loss.** Draw \eqn{t} minimizes \eqn{L_w(\theta) = \sum_i w_i l_i(\theta)}{L_w(theta) = sum_i w_i l_i(theta)}
#' with i.i.d. Exp(1) weights \eqn{w_i} (or multinomial counts, `weight_dist`) by L-BFGS (memory 10, a strong
#' Wolfe line search) started at `init`. The user's function computes the weighted loss:
#' `loss(theta, data, weights)` returns `list(value = , gradient = )` (or the value with an attribute
#' `"gradient"`), where `value` is \eqn{L_w(\theta)}{L_w(theta)} and `gradient` its gradient in `theta`. A draw
#' that does not converge (the iteration cap, a failed line search: e.g. a wrong gradient or no minimum) is never
#' returned silently: see `control$on_failure` ([wbb_loss_control()]) and `fit$diagnostics$status`. A loss may
#' return `Inf` where it is not defined (the line search backs off), but must be finite at `init`. There are no
#' prior weights in this version: a penalty written into the loss is not reweighted (it acts like
#' `prior_weights = "none"` of [wbb()]).
#'
#' **Statistic.** `statistic(data, weights)` returns a numeric vector (of the same length in every draw), e.g.
#' `function(d, w) weighted.mean(d$y, w)`; no optimization, one call per draw. The weights are the engine's raw
#' Exp(1) weights: divide by `sum(weights)` for bayesboot's Dirichlet weights (a weighted mean, a weighted
#' quantile or any argmin is unchanged).
#'
#' **The same weights as every WBB.** Draw \eqn{t} uses the data weights of the random stream (seed, t), the same
#' for [wbb()], [trend_filter_wbb()] and the other WBB functions: for the same seed, `wbb(loss = )`,
#' `wbb(statistic = )` and the data weights of `wbb(x, y)` agree draw by draw, and the draws are identical for any
#' split into `chunks` and future workers.
#'
#' **Formula.** `wbb(y ~ x1 + g, data = d, loss = , ...)` (and `statistic = `) builds the model frame of every
#' front end ([sb_formula]: `subset`, `na.action`, `contrasts`, factors by their contrasts) and passes the
#' function, as its `data`, a data frame of two columns, one row per observation: `y`, the response, and `x`,
#' the design matrix of [stats::model.matrix()] (with its column `"(Intercept)"` of ones unless the formula has
#' `- 1`). The loss reads `data$x` and `data$y` as [stats::glm.fit()] does. `init` defaults to zeros, one per
#' column of the design, and an unnamed `init` of that length takes the design's column names (the names of the
#' draws). The fit keeps the formula's terms, so `update(fit, . ~ . - g)` reruns it on the new design.
#'
#' **Threads.** R code runs on R's main thread only, so a loss or statistic written in R runs its draws one after
#' the other in this process; `threads` is accepted for the common interface and has no effect here (use
#' `future = TRUE` with a multi-process [future::plan()] to spread the draws over processes).
#' Ctrl-C stops the run within one L-BFGS iteration and returns the draws finished ([scalebayes-interrupts]).
#'
#' @param loss A function `loss(theta, data, weights)` returning `list(value = , gradient = )`: the weighted loss
#'   and its gradient (see Details). Give `loss` or `statistic`.
#' @param init The starting values of `theta` (a numeric vector; its names name the draws' columns), for every
#'   draw and for the unweighted estimate.
#' @param data The data: a data frame, a matrix or a vector, with one row (element) per observation; passed to
#'   `loss` or `statistic` unchanged. The number of weights per draw is its number of rows (length). With a
#'   formula (`wbb(y ~ x1 + g, data = d, loss = )`, see "Formula"), the data frame the formula is evaluated in.
#' @param statistic A function `statistic(data, weights)` returning a numeric vector (see Details).
#' @param draws Number of draws.
#' @param threads Accepted and ignored (see Details).
#' @param seed,quiet As in [wbb()].
#' @param chunks,future Split the draws into chunks and run them through the future framework, as in [wbb()];
#'   the result is identical to a single-process run with the same seed.
#' @param weight_dist `"exponential"` (the Bayesian bootstrap) or `"multinomial"` (the classical bootstrap).
#' @param control [wbb_loss_control()] (the L-BFGS settings; not used by `statistic`).
#' @param ... Not used: any argument given here is an error.
#' @section Interrupts:
#' Ctrl-C stops the engine at its next check and returns the partial fit of what finished (draws 1..k of the same-seed run; with `statistic`, the same),
#' with one warning of class `scalebayes_warning_interrupted` and `fit$interrupted` `TRUE`; when nothing
#' finished it is R's interrupt. See [scalebayes-interrupts].
#' @return An object of class `c("sb_wbb_loss", "sb_fit")` with the methods of [sb_fit-methods] (print, summary,
#'   coef (posterior mean), as.matrix, as_draws_*, posterior_interval, nobs) and `vcov()` / `ndraws()`: `draws`
#'   (draws x p), `estimate` (the unweighted optimum, or the statistic at unit weights), `seed`, `timing`, and
#'   `diagnostics`: for a loss `status` (a factor: `converged`, `max_iterations`, `line_search_failed`,
#'   `non_finite`), `converged`, `iterations`, `evaluations`, `value`, `grad_max` per draw (the draws of the fit
#'   before any dropped), for a statistic `non_finite` (draws with a non-finite value). `predict()`, `fitted()`,
#'   `log_lik()` and the other model generics do not apply (an error of class
#'   `scalebayes_error_not_applicable`): the model is the user's function.
#' @references Newton, M. A. and Raftery, A. E. (1994). Approximate Bayesian inference with the weighted likelihood
#'   bootstrap. *JRSS B* 56, 3-48. Rubin, D. B. (1981). The Bayesian bootstrap. *Annals of Statistics* 9, 130-134.
#'   Newton, M. A., Polson, N. G. and Xu, J. (2021). Weighted Bayesian bootstrap for scalable posterior
#'   distributions. *Canadian Journal of Statistics* 49, 421-437.
#' @seealso [wbb()], [wbb_loss_control()]
#' @examples
#' set.seed(1)
#' d <- data.frame(x = rnorm(100))
#' d$y <- rbinom(100, 1, plogis(0.5 + d$x))
#' # logistic regression as a weighted loss
#' logistic <- function(theta, data, weights) {
#'   X <- cbind(1, data$x)
#'   eta <- drop(X %*% theta)
#'   list(value = sum(weights * (log1p(exp(eta)) - data$y * eta)),
#'        gradient = drop(crossprod(X, weights * (plogis(eta) - data$y))))
#' }
#' fit <- wbb(loss = logistic, init = c(a = 0, b = 0), data = d, draws = 200, seed = 1)
#' summary(fit)
#' # a weighted statistic: the Bayesian bootstrap of a mean
#' m <- wbb(statistic = function(d, w) weighted.mean(d$y, w), data = d, draws = 200, seed = 1)
#' posterior_interval(m)
#' # a formula: the loss gets data$x (the design, with its intercept column) and data$y
#' logistic_xy <- function(theta, data, weights) {
#'   eta <- drop(data$x %*% theta)
#'   list(value = sum(weights * (log1p(exp(eta)) - data$y * eta)),
#'        gradient = drop(crossprod(data$x, weights * (plogis(eta) - data$y))))
#' }
#' f2 <- wbb(y ~ x, data = d, loss = logistic_xy, draws = 200, seed = 1)
#' coef(f2)  # named "(Intercept)" and "x"
#' @export
wbb_loss <- function(loss = NULL, init = NULL, data = NULL, statistic = NULL, draws = 1000L, threads = NULL,
                     seed = NULL, quiet = NULL, chunks = NULL, future = FALSE,
                     weight_dist = c("exponential", "multinomial"), control = wbb_loss_control(), ...) {
  call <- rlang::current_env()
  mcall <- match.call()
  sb_check_dots(...)
  if (is.null(loss) == is.null(statistic)) {
    sb_abort(c("Give exactly one of {.arg loss} and {.arg statistic}.",
               i = "{.code loss(theta, data, weights)} returns {.code list(value = , gradient = )}; {.code statistic(data, weights)} returns a numeric vector."),
             arg = if (is.null(loss)) "loss" else "statistic", call = call)
  }
  form <- if (is.null(loss)) "statistic" else "loss"
  fun <- if (form == "loss") loss else statistic
  if (!is.function(fun)) {
    sb_abort(c("{.arg {form}} must be a function.", x = "You supplied {.obj_type_friendly {fun}}."),
             arg = form, call = call)
  }
  wbb_loss_check_arity(fun, form, call)
  if (is.null(data)) {
    sb_abort(c("{.arg data} is required: the weights are one per row of {.arg data}.",
               i = "Give a data frame, a matrix or a vector with one row (element) per observation."),
             arg = "data", call = call)
  }
  if (!(is.data.frame(data) || is.matrix(data) || (is.atomic(data) && is.null(dim(data))))) {
    sb_abort(c("{.arg data} must be a data frame, a matrix or a vector.",
               x = "You supplied {.obj_type_friendly {data}}."), arg = "data", call = call)
  }
  n <- NROW(data)
  if (n < 1L) sb_abort("{.arg data} has no rows.", arg = "data", call = call)
  draws <- check_count(draws, arg = "draws", call = call)
  weight_dist <- sb_match_arg(weight_dist)
  if (!inherits(control, "sb_wbb_loss_control")) {
    sb_abort(c("{.arg control} must be made by {.fn wbb_loss_control}.",
               x = "You supplied {.obj_type_friendly {control}}."), arg = "control", call = call)
  }
  rs <- wbb_run_settings(draws, threads, seed, quiet, chunks, future, call = call)
  if (form == "loss") {
    wbb_loss_fit(loss, init, data, n, draws, rs, weight_dist, control, mcall, call)
  } else {
    wbb_statistic_fit(statistic, data, n, draws, rs, weight_dist, mcall, call)
  }
}

wbb_loss_fit <- function(loss, init, data, n, draws, rs, weight_dist, control, mcall, call) {
  if (is.null(init)) {
    sb_abort(c("{.arg init} is required with {.arg loss}.", i = "Give a vector with one starting value per parameter."),
             arg = "init", call = call)
  }
  if (!is.numeric(init) || !length(init) || is.matrix(init) || any(!is.finite(init))) {
    sb_abort(c("{.arg init} must be a vector of finite numbers.", x = "You supplied {.obj_type_friendly {init}}."),
             arg = "init", call = call)
  }
  p <- length(init)
  par_names <- names(init)
  if (is.null(par_names) || any(!nzchar(par_names))) par_names <- paste0("theta", seq_len(p))
  init <- as.double(init)
  check_result_memory(8 * as.double(draws) * (p + 4), "draws", call = call,
                      fix = "Use fewer {.arg draws}.")
  fun <- wbb_loss_wrapper(loss, data, p, call)
  # at `init` with unit weights: the user's function, its return and finiteness, before any draw
  v0 <- fun(init, rep(1, n))
  if (any(!is.finite(v0))) {
    sb_abort(c("{.arg loss} is not finite at {.arg init} (value {format(v0[1])}{if (any(!is.finite(v0[-1]))) ', and a non-finite gradient' else ''}).",
               i = "Start where the loss and its gradient are finite."),
             kind = "loss", arg = "loss", call = call)
  }
  if (control$check_gradient) wbb_loss_check_gradient(fun, init, v0, n)
  sc <- wbb_loss_scales(v0, init)
  if (sc$c != 1) {  # a loss of small scale: minimized as loss / c (c a power of two: exact), values reported unscaled
    fun_user <- fun
    fun <- function(theta, weights) fun_user(theta, weights) / sc$c
  }
  ctrl <- c(unclass(control)[c("memory", "max_iter", "tol")], list(f_cap = sc$f_cap))
  t0 <- proc.time()[["elapsed"]]
  est <- sb_call_engine(cpp_wbb_loss(fun, init, n, wbb_engine_settings(utils::modifyList(rs, list(quiet = TRUE)), 0, 1,
                                                                          "none", "unit"), ctrl), call = call)
  if (isTRUE(est$interrupted)) rlang::interrupt()
  engine <- function(first, count) {
    cpp_wbb_loss(fun, init, n, wbb_engine_settings(rs, first, count, "none", weight_dist), ctrl)
  }
  # Ctrl-C: the partial fit of the draws finished (?scalebayes-interrupts)
  parts <- wbb_run(rs, engine, call = call, cut = function(r, k) {
    wbb_cut_rows(r, k, c("theta", "status", "iterations", "evaluations", "value", "grad_max"))
  })
  stopped <- attr(parts, "interrupted")
  if (!is.null(stopped)) draws <- stopped$completed
  theta <- wbb_combine(parts, "theta")
  colnames(theta) <- par_names
  status_names <- c("converged", "max_iterations", "line_search_failed", "non_finite", "stopped")
  code <- wbb_combine(parts, "status")
  status <- factor(status_names[code + 1L], levels = status_names[1:4])
  converged <- code == 0L
  diag <- list(status = status, converged = converged, iterations = wbb_combine(parts, "iterations"),
               evaluations = wbb_combine(parts, "evaluations"), value = sc$c * wbb_combine(parts, "value"),
               grad_max = sc$c * wbb_combine(parts, "grad_max"), not_converged = sum(!converged),
               estimate_status = status_names[est$status + 1L])
  rm(parts)
  estimate <- drop(est$theta)
  est_msg <- if (est$status != 0L) "The unweighted optimum (the {.field estimate}) did not converge either: {status_names[est$status + 1L]}."
  bad <- sum(!converged)
  if (bad == 0 && est$status != 0L) {
    sb_warn(c("The unweighted optimum (the {.field estimate}) did not converge: {status_names[est$status + 1L]}.",
              i = "Check the gradient of {.arg loss}, or raise {.code wbb_loss_control(max_iter = )}."),
            kind = "convergence")
  }
  if (bad > 0) {
    tab <- table(status[!converged])
    tab <- tab[tab > 0]
    what <- paste0(names(tab), ": ", tab, collapse = ", ")
    msg <- c("{bad} of {draws} draw{?s} did not converge ({what}).",
             i = "{.code fit$diagnostics$status} flags them; check the gradient of {.arg loss} (a wrong gradient fails the line search), whether the weighted loss has a minimum, or raise {.code wbb_loss_control(max_iter = )}.",
             if (!is.null(est_msg)) c(x = est_msg))
    if (control$on_failure == "error") {
      sb_abort(msg, kind = "convergence", arg = "loss", call = call)
    }
    sb_warn(c(msg, i = if (control$on_failure == "drop") "They are left out of the draws ({.code on_failure = \"drop\"})."
                       else "They are kept in the draws ({.code on_failure = \"warn\"})."),
            kind = "convergence")
    if (control$on_failure == "drop") theta <- theta[converged, , drop = FALSE]
  }
  if (!nrow(theta)) {
    sb_abort("No draw converged.", kind = "convergence", arg = "loss", call = call)
  }
  fit <- wbb_loss_new_fit(theta, estimate, "loss", mcall, rs, draws, n, weight_dist, control, diag, t0)
  if (!is.null(stopped)) fit <- sb_partial_fit(fit, draws, stopped$requested)
  fit
}

wbb_statistic_fit <- function(statistic, data, n, draws, rs, weight_dist, mcall, call) {
  t0 <- proc.time()[["elapsed"]]
  stat_call <- function(w, when) {
    r <- tryCatch(statistic(data, w), error = function(e) {
      sb_abort(c("{.arg statistic} stopped with an error {when}.",
                 i = "It is called as {.code statistic(data, weights)} with one weight per row of {.arg data}."),
               kind = "loss", arg = "statistic", call = call, parent = e)
    })
    if (!is.numeric(r) || !length(r) || !is.null(dim(r)) && length(dim(r)) > 1L && min(dim(r)) > 1L) {
      sb_abort(c("{.arg statistic} must return a numeric vector.", x = "It returned {.obj_type_friendly {r}} {when}."),
               kind = "loss", arg = "statistic", call = call)
    }
    r
  }
  estimate <- stat_call(rep(1, n), "with unit weights")
  k <- length(estimate)
  stat_names <- names(estimate)
  if (is.null(stat_names) || any(!nzchar(stat_names))) {
    stat_names <- if (k == 1L) "statistic" else paste0("statistic", seq_len(k))
  }
  estimate <- as.double(estimate)
  check_result_memory(8 * as.double(draws) * k, "draws", call = call, fix = "Use fewer {.arg draws}.")
  engine <- function(first, count) {
    out <- matrix(NA_real_, count, k)
    block <- max(1L, min(count, as.integer(1e6 %/% n)))  # weights of at most ~8 MB at a time
    pb <- if (!rs$quiet) cli::cli_progress_bar("WBB (statistic)", total = count, .envir = environment())
    done <- 0L
    filled <- 0L  # draws 1..filled of this chunk are in `out`
    # Ctrl-C (R's interrupt, in the statistic or between draws): the draws done so far (?scalebayes-interrupts)
    stopped <- tryCatch({
      while (done < count) {
        m <- min(block, count - done)
        W <- cpp_wbb_weights(n, wbb_engine_settings(rs, first + done, m, "none", weight_dist))
        for (i in seq_len(m)) {
          r <- stat_call(W[i, ], sprintf("in draw %s", format(first + done + i)))
          if (length(r) != k) {
            sb_abort(c("{.arg statistic} returned {length(r)} number{?s} in draw {first + done + i}, and {k} with unit weights.",
                       i = "It must return a vector of the same length in every draw."),
                     kind = "loss", arg = "statistic", call = call)
          }
          out[done + i, ] <- r
          filled <- done + i
          if (!is.null(pb)) cli::cli_progress_update(id = pb, set = done + i, .envir = environment())
        }
        done <- done + m
      }
      FALSE
    }, interrupt = function(e) TRUE)
    if (!is.null(pb)) cli::cli_progress_done(id = pb, .envir = environment())
    if (stopped) return(list(theta = out[seq_len(filled), , drop = FALSE], prefix = filled, interrupted = TRUE))
    list(theta = out)
  }
  parts <- wbb_run(rs, engine, call = call, cut = function(r, k) wbb_cut_rows(r, k, "theta"))
  stopped <- attr(parts, "interrupted")
  if (!is.null(stopped)) draws <- stopped$completed
  theta <- wbb_combine(parts, "theta")
  colnames(theta) <- stat_names
  nf <- sum(!is.finite(theta))
  if (nf > 0) {
    sb_warn(c("{.arg statistic} returned {nf} non-finite value{?s} over the draws.",
              i = "Summaries of those columns are NA or infinite; check {.arg statistic} at extreme weights."),
            kind = "loss")
  }
  fit <- wbb_loss_new_fit(theta, estimate, "statistic", mcall, rs, draws, n, weight_dist, NULL,
                          list(non_finite = nf), t0)
  if (!is.null(stopped)) fit <- sb_partial_fit(fit, draws, stopped$requested)
  fit
}

wbb_loss_new_fit <- function(theta, estimate, form, mcall, rs, draws, n, weight_dist, control, diag, t0) {
  new_sb_fit(
    draws = theta, estimate = estimate,
    method = if (form == "loss") "weighted likelihood bootstrap of an R loss" else "weighted Bayesian bootstrap of a statistic",
    subclass = "sb_wbb_loss", call = mcall, seed = rs$seed,
    settings = list(form = form, draws = draws, weight_dist = weight_dist, nobs = n, threads = 1L,
                    control = control,
                    print_info = c(Form = if (form == "loss") "loss minimized by L-BFGS per draw" else "weighted statistic",
                                   Weights = weight_dist,
                                   Converged = if (form == "loss") sprintf("%d of %d draws", sum(diag$converged), draws))),
    timing = c(elapsed = proc.time()[["elapsed"]] - t0), diagnostics = diag
  )
}

# The scale of the loss for the convergence test max|g| <= tol * max(1, min(|f|, f_cap)) (lbfgs_min.hpp), from the
# loss at `init` with unit weights (v0 = c(value, gradient)): s0 = |f0| + max|g0| * max(1, max|init|), the size of
# the loss and of its first-order change there. A loss with s0 < 1 is minimized divided by c = 2^round(log2(s0))
# (exact; the same minimizers): a loss scaled by 1e-300 is tested on its own scale, and its squared gradient does
# not underflow (before, `init` passed as converged). f_cap = 1e4 * max(1, s0 / c): a loss that decreases
# without bound (no minimum, e.g. -sum(theta)) cannot pass the test by |f| growing (before, draws of 4e17 were
# marked converged). Losses of ordinary scale (s0 >= 1, |f| below 1e4 s0) run exactly as before (issue 61).
wbb_loss_scales <- function(v0, init) {
  s0 <- abs(v0[1L]) + max(abs(v0[-1L]), 0) * max(1, abs(init))
  if (!is.finite(s0) || s0 <= 0) return(list(c = 1, f_cap = Inf))
  c <- if (s0 < 1) 2^round(log2(s0)) else 1
  list(c = c, f_cap = 1e4 * max(1, s0 / c))
}

# The engine's view of the user's loss: function(theta, weights) -> c(value, gradient), every error classed
# (kind "loss", naming `loss`), the user's error as the parent.
wbb_loss_wrapper <- function(loss, data, p, call) {
  force(loss)
  force(data)
  calls <- 0
  held <- FALSE
  function(theta, weights) {
    calls <<- calls + 1
    # an interrupt R signals inside the loss although the engine suspends interrupts: the loss is called again at
    # the same point and the value marked, so the engine stops there with the draws finished (src/wbb_loss.cpp);
    # a second Ctrl-C during that call is R's
    r <- tryCatch(tryCatch(loss(theta, data, weights), interrupt = function(e) {
      held <<- TRUE
      loss(theta, data, weights)
    }), error = function(e) {
      at <- paste0(paste(format(signif(utils::head(theta, 6), 4)), collapse = ", "), if (p > 6) ", ..." else "")
      sb_abort(c("{.arg loss} stopped with an error (call {format(calls)}, at theta = ({at})).",
                 i = "It is called as {.code loss(theta, data, weights)} and must return {.code list(value = , gradient = )}."),
               kind = "loss", arg = "loss", call = call, parent = e)
    })
    if (is.list(r)) {
      value <- r$value
      grad <- r$gradient
    } else {
      value <- r
      grad <- attr(r, "gradient")
    }
    if (!is.numeric(value) || length(value) != 1L || !is.numeric(grad)) {
      sb_abort(c("{.arg loss} must return {.code list(value = <number>, gradient = <numeric vector>)} (or a number with attribute {.val gradient}).",
                 x = "It returned {.obj_type_friendly {r}}{if (is.numeric(value) && length(value) == 1L) ' without a numeric gradient' else ''}."),
               kind = "loss", arg = "loss", call = call)
    }
    if (length(grad) != p) {
      sb_abort(c("{.arg loss} returned a gradient of length {length(grad)}.",
                 x = "{.arg init} has length {p}; the gradient must have one entry per parameter."),
               kind = "loss", arg = "loss", call = call)
    }
    out <- c(as.double(value), as.double(grad))
    if (held) {
      held <<- FALSE
      attr(out, "sb_interrupt") <- TRUE
    }
    out
  }
}

# The gradient of the loss at `init` (unit weights; v0 = c(value, gradient) there) against central differences
# along three fixed directions: a warning (class scalebayes_warning_gradient) when they disagree beyond what the
# truncation and rounding of the differences explain. Non-finite differences (init at a domain edge) are skipped.
wbb_loss_check_gradient <- function(fun, init, v0, n) {
  p <- length(init)
  g <- v0[-1L]
  f0 <- abs(v0[1L])
  h <- 1e-5 * max(1, abs(init))
  w <- rep(1, n)
  for (k in 1:3) {
    v <- sin(seq_len(p) * (k + 0.5) + k)
    v <- v / sqrt(sum(v^2))
    fp <- fun(init + h * v, w)[1L]
    fm <- fun(init - h * v, w)[1L]
    if (!is.finite(fp) || !is.finite(fm)) next
    fd <- (fp - fm) / (2 * h)
    gv <- sum(g * v)
    # truncation O(h^2) relative, rounding ~ eps |f| / h
    allowed <- 1e-4 * max(abs(fd), abs(gv), sqrt(sum(g^2))) + 1e-10 * max(1, f0) / h
    if (abs(fd - gv) > allowed) {
      sb_warn(c("The gradient returned by {.arg loss} does not match finite differences of its value at {.arg init}.",
                x = "Along a test direction: gradient {signif(gv, 6)}, differences {signif(fd, 6)}.",
                i = "Check the gradient (its sign, every term, the weights); draws with a wrong gradient fail or stop early.",
                i = "Turn the check off with {.code wbb_loss_control(check_gradient = FALSE)} if the loss is not smooth at {.arg init}."),
              kind = "gradient", also = "loss")
      return(invisible(FALSE))
    }
  }
  invisible(TRUE)
}

# loss(theta, data, weights) / statistic(data, weights): callable with that many arguments.
wbb_loss_check_arity <- function(fun, form, call) {
  if (is.primitive(fun)) return(invisible())
  nm <- names(formals(fun))
  need <- if (form == "loss") 3L else 2L
  sig <- if (form == "loss") "function(theta, data, weights)" else "function(data, weights)"
  if (!"..." %in% nm && length(nm) < need) {
    sb_abort(c("{.arg {form}} must take {need} arguments: {.code {sig}}.", x = "It takes {length(nm)}."),
             arg = form, call = call)
  }
  invisible()
}

# wbb(loss = , ...) / wbb(statistic = , ...) is wbb_loss(...); a first argument given by position is `data`.
wbb_loss_call <- function(mcall, env) {
  user_call <- mcall
  nm <- names(mcall)
  if (!is.null(nm) && "x" %in% nm) {
    if ("data" %in% nm) {
      sb_abort(c("With {.arg loss} or {.arg statistic}, give the data once, as {.arg data}.",
                 x = "Both {.arg x} and {.arg data} were given."), arg = "data", call = env)
    }
    names(mcall)[nm == "x"] <- "data"
  }
  mcall[[1L]] <- quote(scalebayes::wbb_loss)
  fit <- eval(mcall, env)
  fit$call <- user_call
  fit
}

# wbb(y ~ x1 + g, data = d, loss = , statistic = ): the formula's model frame (R/model_frame.R: subset, na.action,
# contrasts) handed to the user's function as a data frame of the response `y` and the design `x` (a matrix
# column: model.matrix(), with its "(Intercept)" column of ones unless the formula removes it), one row per
# observation, so the loss reads data$x and data$y as glm.fit() would. `init` defaults to zeros, one per column of
# the design, and takes the design's column names when unnamed and of that length.
wbb_loss_formula <- function(frame, user_call) {
  d <- sb_formula_frame(frame, "wbb", user_call, x_arg = "formula")
  args <- eval(quote(list(...)), frame)
  x <- d$x
  if (d$intercept) {
    x <- cbind(`(Intercept)` = rep(1, NROW(x)), x)
    attr(x, "assign") <- NULL
  }
  rownames(x) <- NULL
  y <- d$y
  if (is.null(dim(y))) names(y) <- NULL else rownames(y) <- NULL
  data <- structure(list(y = y, x = x), class = "data.frame", row.names = .set_row_names(NROW(x)))
  if ("loss" %in% names(args)) {
    init <- args$init
    if (is.null(init)) {
      init <- stats::setNames(rep(0, ncol(x)), colnames(x))
    } else if (is.numeric(init) && is.null(names(init)) && length(init) == ncol(x)) {
      names(init) <- colnames(x)
    }
    args$init <- init
  }
  fit <- sb_call_front_end("wbb", wbb_loss, c(list(data = data), args))
  sb_formula_attach(fit, d, user_call)
}

# ---- the model generics: the model is the user's function, so only the draws' methods apply ----------------

sb_no_training_data.sb_wbb_loss <- function(object, call) {
  sb_not_applicable(c("A WBB fit of an R loss or statistic has no model to predict, fit or score with: the model is your function.",
                      i = "Use {.fn as.matrix} for the draws and {.fn coef} / {.fn summary} / {.fn posterior_interval} for summaries, or apply your function to the draws."),
                    call = call)
}
sb_prepare_x.sb_wbb_loss <- function(object, x, call = rlang::caller_env()) sb_no_training_data(object, call)
sb_linpred_draws.sb_wbb_loss <- function(object, x, call = rlang::caller_env()) sb_no_training_data(object, call)
sb_epred_draws.sb_wbb_loss <- function(object, x, call = rlang::caller_env()) sb_no_training_data(object, call)
sb_predict_default_x.sb_wbb_loss <- function(object, call) sb_no_training_data(object, call)
sb_prior.sb_wbb_loss <- function(object) {
  list(prior = sprintf("none: the weighted %s bootstrap of a user %s (Exp(1) data weights, no prior weights)",
                       if (object$settings$form == "loss") "likelihood" else "Bayesian", object$settings$form))
}

#' @export
predict.sb_wbb_loss <- function(object, ...) {
  sb_not_applicable(c("A WBB fit of an R loss or statistic has no model to predict with: the model is your function.",
                      i = "Apply your function to the draws ({.code as.matrix(fit)})."),
                    call = rlang::current_env())
}
