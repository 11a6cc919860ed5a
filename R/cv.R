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
#' K-fold cross-validation along a lambda path (SUM scale, see [weighted_lasso()]): mean squared error
#' (gaussian) or deviance (binomial) of the held-out folds, with the minimum and one-standard-error rules.
#' Folds are held out by zero weights, fitted in parallel threads, and assigned from `seed`.
#'
#' @inheritParams weighted_lasso
#' @param nfolds Number of folds (at least 3 recommended).
#' @param foldid Optional fold assignment (integers 1..K, one per row); overrides `nfolds` and `seed`.
#' @param threads Number of threads (default [sb_default_threads()]).
#' @param seed Seed for the fold assignment (default drawn from R's RNG).
#' @param quiet Hide the progress bar.
#' @return An object of class `sb_cv`: `lambda`, `cvm`, `cvsd`, `lambda_min`, `lambda_1se`, `foldid`.
#' @export
#' @examples
#' data(diabetes)
#' cv <- cv_weighted_lasso(diabetes$x, diabetes$y, seed = 1)
#' cv$lambda_min
cv_weighted_lasso <- function(x, y, family = c("gaussian", "binomial"), weights = NULL, penalty_factor = NULL,
                              alpha = 1, nfolds = 10L, foldid = NULL, nlambda = 100L, lambda_min_ratio = NULL,
                              standardize = TRUE, intercept = TRUE, threads = NULL, seed = NULL, quiet = NULL,
                              control = cd_control(), data = NULL, subset = NULL, na.action = NULL, contrasts = NULL) {
  if (!missing(x) && sb_is_formula(x)) {
    return(sb_formula_fit(environment(), "cv_weighted_lasso", cv_weighted_lasso, match.call(), intercept = "arg",
                          response = "glm"))
  }
  sb_formula_only(environment())
  call <- rlang::current_env()
  family <- sb_match_arg(family)
  d <- prepare_glm_data(x, y, family, alpha, penalty_factor, call)
  w <- if (is.null(weights)) rep(1, d$n) else check_weights(weights, d$n, arg = "weights")
  ws <- rescale_weights(w)  # see weighted_lasso(): exact, lambda reported on the caller's scale
  st <- standardize_x(d$x, check_flag(standardize), check_flag(intercept))
  ctrl <- c(check_cd_control(control, call), intercept = intercept)
  out <- run_cv(st$x, d$y, family, d$alpha, ws$w, d$penalty_factor, nfolds, foldid, nlambda, lambda_min_ratio,
                run_settings(seed, threads, quiet, call), ctrl, call)
  if (ws$c != 1) {
    out[c("lambda", "lambda_min", "lambda_1se")] <- lapply(out[c("lambda", "lambda_min", "lambda_1se")], `*`, ws$c)
    check_lambda_scale(out$lambda, call)
  }
  out
}

# run: the run list (run_settings(), R/seed.R); its seed also draws the folds.
run_cv <- function(xs, y, family, alpha, w, pf, nfolds, foldid, nlambda, lambda_min_ratio, run, ctrl, call) {
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
  lmax <- sb_call_engine(cpp_lambda_max(xs, y, family_code(family), alpha, w, pf, ctrl$intercept))
  if (!(lmax > 0)) {
    sb_abort(c("Every coefficient is zero at any lambda (lambda_max = 0).",
               i = "Check that {.arg x} has non-constant columns related to {.arg y}."), kind = "degenerate", call = call)
  }
  lambda <- lmax * exp(seq(0, log(lambda_min_ratio), length.out = nlambda))
  r <- sb_call_engine(cpp_enet_cv(xs, y, family_code(family), alpha, w, pf, as.integer(foldid) - 1L, lambda, ctrl,
                                  engine_run(run)), call = call)
  if (isTRUE(r$interrupted)) rlang::interrupt()
  structure(list(lambda = r$lambda, cvm = r$cvm, cvsd = r$cvsd, lambda_min = r$lambda_min,
                 lambda_1se = r$lambda_1se, index_min = r$index_min, index_1se = r$index_1se,
                 foldid = as.integer(foldid), family = family, nobs = n),
            class = "sb_cv")
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
  ylab <- if (x$family == "gaussian") "Mean squared error" else "Binomial deviance"
  graphics::plot(log(x$lambda), x$cvm, ylim = range(c(x$cvm - x$cvsd, x$cvm + x$cvsd)), pch = 20, col = "red",
                 xlab = expression(log(lambda)), ylab = ylab, ...)
  graphics::arrows(log(x$lambda), x$cvm - x$cvsd, log(x$lambda), x$cvm + x$cvsd, angle = 90, code = 3,
                   length = 0.02, col = "grey60")
  graphics::abline(v = log(c(x$lambda_min, x$lambda_1se)), lty = 3)
  invisible(x)
}
