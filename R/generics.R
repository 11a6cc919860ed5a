# The model generics of every fit (issue 39): predict(), fitted(), residuals(), vcov(), ndraws() and the rstantools
# generics log_lik(), posterior_linpred(), posterior_epred(), posterior_predict(), predictive_interval() and
# prior_summary(). Each is written once over a small internal interface that a fit class answers:
#
#   sb_linpred_draws(object, x)   draws x n linear predictor at x (NULL: the training inputs)
#   sb_epred_draws(object, x)     draws x n expected response (default: the inverse link of the linear predictor)
#   sb_fit_family(object)         "gaussian", "binomial" or "multinomial"
#   sb_training_data(object)      list(x, y) kept by the fit, or NULL
#   sb_sigma_draws(object, ...)   the noise sd per draw (gaussian), see ?sb_fit-generics
#
# Fits that cannot answer (a density target has no data; a VAE has no response; a penalized fit has no draws) say
# why with a classed error (scalebayes_error_not_applicable, also scalebayes_error_state).

# ---- arguments shared by every method ------------------------------------------------------------------------

# Unknown arguments in `...` are an error that names them (never silently ignored).
sb_check_dots <- function(..., fn = NULL, call = rlang::caller_env()) {
  n <- ...length()
  if (!n) return(invisible(NULL))
  nm <- ...names()
  if (is.null(nm)) nm <- rep("", n)
  nm[is.na(nm)] <- ""
  bad <- ifelse(nzchar(nm), nm, paste0("..", seq_len(n), " (unnamed)"))
  head <- paste0("Unknown argument", if (n > 1L) "s" else "", if (is.null(fn)) "" else paste0(" to ", fn, "()"))
  sb_abort(c("{head}: {.arg {bad}}.",
             i = "Arguments are never ignored: check the spelling against the help page."),
           arg = bad[1], call = call, also = "dots", class = c("rlib_error_dots_nonempty", "rlib_error_dots"))
}

# The interval mass is `prob` in every method (rstantools's name); `level` and `probs` (a single number) are its
# deprecated names for one release.
sb_interval_prob <- function(prob, missing_prob, level = NULL, probs = NULL, fn, call = rlang::caller_env()) {
  if (!is.null(level)) {
    prob <- sb_renamed_arg(level, prob, "level", "prob", missing_prob, fn, call = call)
    missing_prob <- FALSE
  }
  if (!is.null(probs)) prob <- sb_renamed_arg(probs, prob, "probs", "prob", missing_prob, fn, call = call)
  check_number(prob, arg = "prob", lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE, call = call)
}

sb_not_applicable <- function(message, call = rlang::caller_env(), arg = NULL) {
  sb_abort(message, kind = "not_applicable", also = "state", call = call, arg = arg)
}

# `newdata` (the rstantools name: a matrix, or a data frame for fits of a formula) or `newx` (its synonym).
sb_newdata <- function(object, newdata, newx, call = rlang::caller_env()) {
  if (!is.null(newdata) && !is.null(newx)) sb_abort("Give {.arg newdata} or {.arg newx}, not both.", arg = "newdata", call = call)
  nd <- newdata %||% newx
  if (is.null(nd)) return(NULL)
  # a fit of the formula interface: the design of a data frame from the stored terms (R/model_frame.R)
  if (is.data.frame(nd) && !is.null(.subset2(object, "terms"))) {
    nd <- sb_model_matrix_new(object, nd, arg = if (is.null(newdata)) "newx" else "newdata", call = call)
  }
  attr(nd, "sb_arg") <- if (is.null(newdata)) "newx" else "newdata"  # the name the checks report
  nd
}

# New inputs of a linear model with p columns: one row (a vector of length p) or many.
sb_check_newx <- function(x, p, call = rlang::caller_env()) {
  arg <- attr(x, "sb_arg") %||% "newdata"
  attr(x, "sb_arg") <- NULL
  if (is.null(dim(x)) && !is.data.frame(x) && length(x) == p) x <- matrix(x, nrow = 1L, dimnames = list(NULL, names(x)))
  x <- check_x_matrix(x, arg = arg, call = call, min_cols = 0L, min_rows = 1L, sparse = TRUE)
  if (ncol(x) != p) {
    sb_abort(c("{.arg {arg}} must have {p} column{?s}, as the data the model was fitted to.",
               x = "It has {ncol(x)}."), arg = arg, call = call)
  }
  x
}

# Observed responses for `newdata` (log_lik(), residuals()): numeric, 0/1 for binomial, class index for multinomial.
sb_check_newy <- function(object, newy, n, call = rlang::caller_env()) {
  fam <- sb_fit_family(object)
  if (is.null(newy)) {
    sb_abort(c("{.arg newy} is needed with {.arg newdata}: the observed responses of the new rows.",
               i = "Leave both out to use the training data kept by the fit."), arg = "newy", call = call)
  }
  if (fam == "multinomial") {
    lev <- .subset2(object, "levels")
    y <- if (is.factor(newy) || is.character(newy)) match(as.character(newy), lev) else as.integer(newy) + 1L
    if (length(y) != n || anyNA(y)) {
      sb_abort(c("{.arg newy} must give one class of {.val {lev}} per row of {.arg newdata}."), arg = "newy", call = call)
    }
    return(y - 1L)
  }
  if (fam == "binomial") {
    if (is.factor(newy) && !is.null(.subset2(object, "levels"))) newy <- match(as.character(newy), .subset2(object, "levels")) - 1L
    return(binomial_response(newy, n, call = call, both_classes = FALSE, arg = "newy"))
  }
  if (fam == "poisson") return(poisson_response(newy, n, call = call, arg = "newy", not_all_zero = FALSE))
  check_y_vector(newy, n, arg = "newy", call = call)
}

# ---- the interface a fit class answers -------------------------------------------------------------------------

# "gaussian", "binomial", "poisson" (linear fits of the coordinate-descent engine) or "multinomial".
sb_fit_family <- function(object) {
  .subset2(object, "family") %||% .subset2(object, "settings")$family %||% "gaussian"
}

sb_training_data <- function(object) UseMethod("sb_training_data")
sb_training_data.default <- function(object) .subset2(object, "data")
sb_training_data.sb_trend_filter_wbb <- function(object) list(x = object$x, y = object$y)
# A network fit keeps its training inputs and responses as the front end got them (`fit$data`, NULL when dropped);
# the response in the generics' coding (numbers, 0/1, 0-based class), or NULL for several outputs per example.
sb_training_data.sb_nn_fit <- function(object) {
  d <- .subset2(object, "data")
  if (is.null(d)) return(NULL)
  y <- d$y
  y <- if (NCOL(y) == 1L) sb_check_newy(object, if (is.matrix(y)) drop(y) else y, NROW(y), call = rlang::caller_env())
  list(x = d$x, y = y)
}

# The inputs at which to evaluate: validated new data, or the training inputs (NULL stands for them).
sb_eval_data <- function(object, newdata, newx, newy = NULL, need_y = FALSE, call = rlang::caller_env(),
                         newoffset = NULL) {
  if (need_y && is.null(newy)) newy <- sb_response_new(object, newdata %||% newx)
  nd <- sb_newdata(object, newdata, newx, call = call)
  if (is.null(nd)) {
    if (!is.null(newy)) sb_abort("{.arg newy} needs {.arg newdata}.", arg = "newy", call = call)
    if (!is.null(newoffset)) sb_abort("{.arg newoffset} needs {.arg newdata}.", arg = "newoffset", call = call)
    td <- sb_training_data(object)
    if (is.null(td)) sb_no_training_data(object, call)
    return(list(x = NULL, y = td$y, n = length(td$y)))
  }
  x <- sb_with_offset(object, sb_prepare_x(object, nd, call = call), newoffset %||% attr(nd, "sb_offset"), call)
  n <- NROW(x)
  list(x = x, y = if (need_y) sb_check_newy(object, newy, n, call = call), n = n)
}

sb_no_training_data <- function(object, call) UseMethod("sb_no_training_data")
sb_no_training_data.default <- function(object, call) {
  sb_not_applicable(c("This fit keeps no training data.",
                      i = "Pass the data as {.arg newdata} (and {.arg newy} for {.fn log_lik} or {.fn residuals})."),
                    call = call, arg = "newdata")
}
sb_no_training_data.sb_nn_fit <- function(object, call) {
  sb_not_applicable(c("This network fit holds no training data ({.code fit$data} was removed).",
                      i = "Pass the data as {.arg newdata}: a data frame with the response for a fit of a formula, or the inputs and {.arg newy}."),
                    call = call, arg = "newdata")
}
sb_no_training_data.sb_sgmcmc_density <- function(object, call) {
  sb_not_applicable(c("A density target has no data: there are no observations to fit, predict or score.",
                      i = "{.fn sgmcmc_density} samples a log-density; use {.fn as.matrix} or {.fn summary} for its draws."),
                    call = call)
}

# New inputs carrying their offset (attribute "sb_offset", read by sb_linpred_draws()) when the fit has one.
sb_with_offset <- function(object, x, newoffset, call) {
  if (is.null(newoffset) && is.null(sb_training_data(object)$offset)) return(x)
  attr(x, "sb_offset") <- sb_new_offset(object, newoffset, NROW(x), call = call)
  x
}

# New inputs in the form the class evaluates.
sb_prepare_x <- function(object, x, call = rlang::caller_env()) UseMethod("sb_prepare_x")
sb_prepare_x.sb_fit <- function(object, x, call = rlang::caller_env()) {
  d <- object$draws
  st <- .subset2(object, "settings")
  if (identical(sb_fit_family(object), "multinomial") && !is.null(st$levels)) {
    return(sb_check_newx(x, length(st$feature_names), call = call))  # K (p + 1) coefficients, p inputs
  }
  cn <- st$coef_names %||% colnames(d)
  sb_check_newx(x, length(cn) - ("(Intercept)" %in% cn), call = call)
}
sb_prepare_x.sb_trend_filter_wbb <- function(object, x, call = rlang::caller_env()) check_newx(x, call = call)
sb_prepare_x.sb_nn_fit <- function(object, x, call = rlang::caller_env()) x  # checked by predict.sb_nn_fit()
sb_prepare_x.sb_sgmcmc_density <- function(object, x, call = rlang::caller_env()) sb_no_training_data(object, call)

sb_linpred_draws <- function(object, x, call = rlang::caller_env()) UseMethod("sb_linpred_draws")
sb_linpred_draws.sb_fit <- function(object, x, call = rlang::caller_env()) {
  d <- object$draws
  cn <- .subset2(object, "settings")$coef_names
  if (!is.null(cn) && !identical(colnames(d), cn)) {
    sb_abort(c("This needs the draws of every coefficient, and the fit kept only {ncol(d)} of {length(cn)}.",
               i = "Refit with {.code keep_draws = TRUE} (the default)."), kind = "state", call = call)
  }
  off <- attr(x, "sb_offset")
  if (is.null(x)) {
    td <- sb_training_data(object)
    x <- td$x
    off <- td$offset
  }
  if (identical(sb_fit_family(object), "multinomial")) return(sb_multinomial_linpred(object, x))
  icpt <- colnames(d)[1] == "(Intercept)"
  b <- if (icpt) d[, -1L, drop = FALSE] else d
  eta <- sb_tcross(b, x)
  if (icpt) eta <- eta + d[, 1L]
  if (!is.null(off)) eta <- eta + rep(off, each = nrow(eta))
  dimnames(eta) <- NULL
  eta
}
# A multinomial WBB fit (draws x K (p + 1), class by class, intercept first): the draws x n x K array of linear
# predictors.
sb_multinomial_linpred <- function(object, x) {
  d <- object$draws
  K <- length(object$settings$levels)
  p <- ncol(x)
  out <- array(0, c(nrow(d), nrow(x), K))
  for (k in seq_len(K)) {
    cols <- (k - 1L) * (p + 1L) + seq_len(p + 1L)
    out[, , k] <- sb_tcross(d[, cols[-1L], drop = FALSE], x) + d[, cols[1L]]
  }
  dimnames(out) <- list(NULL, NULL, object$settings$levels)
  out
}
sb_linpred_draws.sb_trend_filter_wbb <- function(object, x, call = rlang::caller_env()) {
  if (is.null(x)) return(unname(object$draws))
  # columns by position (the inputs asked for), as every fit's draws x observations matrix: the interpolation's
  # row names are those of the neighbouring fitted values, not of x
  unname(t(tf_interpolate(object$x, t(object$draws), object$settings$k, x)))
}
sb_linpred_draws.sb_nn_fit <- function(object, x, call = rlang::caller_env()) {
  fam <- sb_fit_family(object)
  mu <- sb_epred_draws(object, x, call = call)
  switch(fam, gaussian = mu, binomial = stats::qlogis(mu),
         sb_not_applicable(c("A multinomial network has no single linear predictor per example.",
                             i = "Use {.fn posterior_epred} for the class probabilities."), call = call))
}
sb_linpred_draws.sb_sgmcmc_density <- function(object, x, call = rlang::caller_env()) sb_no_training_data(object, call)

sb_epred_draws <- function(object, x, call = rlang::caller_env()) UseMethod("sb_epred_draws")
sb_epred_draws.default <- function(object, x, call = rlang::caller_env()) {
  eta <- sb_linpred_draws(object, x, call = call)
  switch(sb_fit_family(object), binomial = stats::plogis(eta), poisson = exp(eta),
         multinomial = sb_softmax(eta, along = 3L), eta)
}
sb_epred_draws.sb_nn_fit <- function(object, x, call = rlang::caller_env()) {
  if ((object$settings$n_out %||% 1L) > 1L && object$family != "multinomial") {
    sb_not_applicable(c(paste0("This network has ", object$settings$n_out, " outputs per example; the model generics score one response per example."),
                        i = "Use {.code predict(fit, newdata, draws = TRUE)} (draws x examples x outputs)."), call = call)
  }
  if (is.null(x)) {  # the training inputs kept by the fit
    td <- .subset2(object, "data")
    if (is.null(td)) sb_no_training_data(object, call)
    x <- td$x
    attr(x, "sb_arg") <- "fit$data"
  }
  nn_predict_draws(object, x, call = call)
}

# The noise sd of every draw of a gaussian fit (a vector, one per draw). `eta` and `y`: the linear predictor
# draws and responses of the data scored (the plug-in of fits without a noise parameter).
sb_sigma_draws <- function(object, eta, y, call = rlang::caller_env()) UseMethod("sb_sigma_draws")
sb_sigma_draws.default <- function(object, eta, y, call = rlang::caller_env()) {
  # no noise parameter in the model (WBB, trend-filtering WBB): per draw, the maximum-likelihood sd given that
  # draw's mean function, on the training data (on the data scored when the fit keeps none)
  td <- sb_training_data(object)
  if (!is.null(td)) {
    eta <- sb_linpred_draws(object, NULL)
    y <- td$y
  }
  sqrt(rowMeans(sweep(eta, 2, y)^2))
}
sb_sigma_draws.sb_blasso <- function(object, eta, y, call = rlang::caller_env()) sqrt(object$sigma2)
sb_sigma_draws.sb_sgld_sa <- function(object, eta, y, call = rlang::caller_env()) {
  lat <- object$latent  # the SA estimate of sigma at the end of each chain
  lat$sigma[match(object$chain, lat$chain)]
}
sb_sigma_draws.sb_sgld_sa_nn <- function(object, eta, y, call = rlang::caller_env()) {
  lat <- object$latent
  ch <- object$chain
  if (is.null(ch)) return(rep(lat$sigma[1], nrow(eta)))
  lat$sigma[match(ch[object$status == "done"], lat$chain)]
}
sb_sigma_draws.sb_vi_nn <- function(object, eta, y, call = rlang::caller_env()) rep(object$noise_sd[1], nrow(eta))
sb_sigma_draws.sb_wbb_nn <- function(object, eta, y, call = rlang::caller_env()) {
  # the per-draw root mean squared residual of the draw's network on its training data, computed by wbb_nn()
  # (`fit$sigma`, one per draw; fits that kept no weights have none)
  s <- .subset2(object, "sigma")
  if (!is.null(s)) return(s[object$status == "done"])
  if (!is.null(y) || !is.null(sb_training_data(object))) return(sb_sigma_draws.default(object, eta, y))
  # no responses to score (posterior_predict(), predict(interval = "prediction")): the per-draw RMSE on the test
  # data given when fitting, the same plug-in on held-out data
  rmse <- object$rmse
  if (is.null(rmse)) {
    sb_not_applicable(c("The bootstrap of a network has no noise parameter: the noise sd of each draw is its root mean squared error on data with responses, and this fit has none.",
                        i = "Fit with {.arg newx} and {.arg newy} (test data), or score data with responses by {.fn log_lik}."),
                      call = call)
  }
  rmse[object$status == "done"]
}

#' One meaning per argument: `type`, `prob` / `probs` and `draws` in every method
#'
#' The arguments that the methods of every fit share mean the same everywhere: linear fits ([wbb()],
#' [weighted_lasso()], [cv_weighted_lasso()], [blasso()], [sgld_sa()], [hamcmc_sa()], [trend_filter()] /
#' [trend_filter_wbb()] of a family), multinomial fits and networks ([wbb_nn()], [sgld_sa()] / [hamcmc_sa()] with a
#' `model`, [bbb()], [sparse_vi()]).
#'
#' @section `type` of `predict()`:
#' * `"response"` (the **default of every fit**): the expected response, on the scale of `y`: the mean of a
#'   gaussian fit, the probability of the second class of a binomial fit (the second level of a factor response,
#'   1 of a 0/1 response), the rate \eqn{e^\eta} of a poisson fit, the class probabilities of a multinomial fit
#'   (an observations x classes matrix). This is what [fitted()] gives at the training data and what a network
#'   outputs.
#' * `"link"`: the linear predictor \eqn{\eta} (log-odds, log rate; the same as `"response"` for gaussian fits).
#'   A multinomial network has no single linear predictor: a classed error.
#' * `"class"` (binomial and multinomial fits, linear or network): the most probable class under the posterior
#'   mean probability (binomial: probability above 1/2), a **factor** with the levels of the response (`"0"`,
#'   `"1"` for a 0/1 response); a path of several lambda gives a character matrix, one column per lambda. It has
#'   no draws (`draws = TRUE` is an error; [posterior_predict()] draws classes). A gaussian or poisson fit: a
#'   classed error (`scalebayes_error_not_applicable`).
#'
#' Before version 0.9.0 linear fits defaulted to `"link"` and `type = "class"` gave a 0/1 integer vector.
#'
#' @section `prob` and `probs`:
#' `prob` is always the **mass of a central interval** (`0.9`: the 5 % and 95 % quantiles), in `summary()`,
#' `predict()`, [posterior_interval()], [predictive_interval()]; the default is 0.95 where an interval is
#' returned. `probs` is always a **vector of quantile levels**, and only `summary()` of fits with draws takes it
#' (`summary(fit, probs = c(0.1, 0.5, 0.9))` gives the columns `q10`, `q50`, `q90`; `summary(fit, prob = 0.5)`
#' gives the columns `q25`, `q75`). `probs` given to the interval methods, and `level`, are deprecated names of
#' `prob` (a warning, for one release). These arguments come after `...` and must be named in full: a misspelt
#' or abbreviated name (`pro = 0.5`) is an error naming it (class `scalebayes_error_dots`), never a partial match.
#'
#' @section `draws`:
#' In a fitting function `draws` is how many draws to make (`wbb(draws = 1000)`); the MCMC samplers set it with
#' `iterations` and their warm-up. In `predict()` it is `TRUE` / `FALSE`: return the draws x observations matrix
#' (x classes for multinomial) instead of its summary. Every method uses every finished draw of the fit, in the
#' fit's order (for network fits the draws with `status == "done"`); a number given to `predict(draws = )` is an
#' error that says so (take rows of the draws matrix for fewer). The one exception is a [vae()] fit, which has no
#' stored draws: its methods take `draws`, the number of draws to generate from the fitted encoder.
#' @name predict-types
#' @seealso [predict.sb_fit()], [predict.sb_weighted_lasso()], [sb_nn_fit-methods], [sb_fit-methods].
#' @examples
#' fit <- wbb(type ~ glu + bmi, data = MASS::Pima.tr, family = "binomial", draws = 50, seed = 1)
#' head(predict(fit, newdata = MASS::Pima.te))                 # probabilities (type = "response")
#' head(predict(fit, newdata = MASS::Pima.te, type = "class")) # a factor of "No" / "Yes"
#' summary(fit, prob = 0.5)                                     # the central 50 % interval
NULL

# ---- predict() ---------------------------------------------------------------------------------------------------

#' Predictions from a fit: one shape for every model with draws
#'
#' `predict()` evaluates the posterior at new inputs, one row or many, and returns, for every fit class with
#' posterior draws ([wbb()], [blasso()], [sgld_sa()] / [hamcmc_sa()], [trend_filter_wbb()]), the same shape: a
#' data frame with one row per new observation and columns `fit` (the posterior mean), `se` (the posterior sd),
#' `lower` and `upper` (the central interval of mass `prob`); with `draws = TRUE` the draws x observations
#' matrix behind it. [trend_filter_wbb()] fits add the columns `x` (the inputs) and `estimate` (the unweighted
#' fit) in front.
#'
#' Class details: for [sgld_sa()] fits `fit` is the average over every kept iteration (`newdata %*% coef(fit)`;
#' for binomial responses the average probability over the stored draws), and without `newdata` the averages
#' accumulated during the run for the `newx` given to [sgld_sa()] are returned; `se`, `lower` and `upper` come
#' from the stored draws and are `NA` when only some coefficients' draws were kept (`keep_draws`). Without new
#' data, a [trend_filter_wbb()] fit predicts at its inputs; [wbb()], [blasso()] and [sgld_sa()] fits (without a
#' fit-time `newx`) need new data (use [fitted()] for the training data).
#'
#' **Network fits** ([wbb_nn()], [sgld_sa()] / [hamcmc_sa()] with a `model`, [bbb()], [sparse_vi()]) return the
#' same shape, on the response scale by default (`type = "response"`: the network's output; `type = "link"`
#' gives the log-odds of a binomial network): `fit`, `se`, `lower`, `upper` summarize the draws x examples matrix
#' that `draws = TRUE` returns, the mean for gaussian and the probability of the second level of the response
#' for binomial (as `type = "response"` of a binomial linear fit). Classification fits add a column `class`, the
#' most probable class under the posterior predictive mean (`type = "class"` returns it alone, a factor). A
#' multinomial network (or one with several gaussian outputs) has one probability per class: `draws = TRUE`
#' returns a draws x examples x classes array, and in the data frame `fit`, `se`, `lower` and `upper` are
#' examples x classes matrices (`predict(fit, x)$fit[, "b"]`: the probability of class `"b"`), one row per
#' example as for every fit. Without new data a network predicts at the `newx` given when fitting; a fit that
#' kept no weights (`keep_draws = FALSE`) has there only the mean (`se`, `lower`, `upper` are `NA`) and cannot
#' predict new inputs. `type = "draws"` is `draws = TRUE`; `type = "interval"` and `"prob"` (the old default's
#' names) work for one release with a warning. More methods of network fits: [sb_nn_fit-methods].
#' [weighted_lasso()] fits (no draws) are described in [predict.sb_weighted_lasso()], [vae()] fits (no response:
#' reconstructions) in [vae()].
#'
#' @param object A fit.
#' @param newdata New inputs: a matrix (or a vector for one observation) with the columns of the training `x`,
#'   or, for a fit of the formula method, a data frame. [trend_filter_wbb()] fits: a vector of inputs.
#' @param type `"response"` (default: probabilities for binomial fits, means \eqn{e^\eta} for poisson fits,
#'   class probabilities for multinomial fits), `"link"` (linear predictor) or `"class"` (binomial and
#'   multinomial fits: the factor of the most probable class under the posterior mean probabilities); the one
#'   rule of every fit is [predict-types]. A multinomial [wbb()] fit returns, as a multinomial
#'   network, observations x classes matrices in `fit`, `se`, `lower`, `upper` (a draws x observations x classes
#'   array with `draws = TRUE`). `"summary"` and `"draws"` (the old values of [blasso()] fits) still work for one
#'   release, with a warning.
#' @param newoffset The offset of the new inputs, for fits with an `offset` ([wbb()]; a fit of a formula with
#'   `offset()` takes it from a data frame `newdata`).
#' @param draws `TRUE` / `FALSE`: return the draws x observations matrix instead of the summary (every finished
#'   draw; see [predict-types]).
#' @param interval `"credible"` (the posterior of the mean) or `"prediction"` (of a new observation: gaussian
#'   noise with the noise sd of each draw, see [sb_fit-generics], or Bernoulli draws on the response scale).
#' @param ... Not used: any argument given here is an error (class `scalebayes_error_dots`).
#' @param newx Synonym of `newdata` (the name of earlier versions).
#' @param prob Mass of the central interval ([predict-types]).
#' @param level,probs Deprecated names of `prob` (work for one release, with a warning).
#' @return A data frame (`fit`, `se`, `lower`, `upper`; networks: plus `class` for classification), or with
#'   `draws = TRUE` a draws x observations matrix (a draws x observations x classes array for a multinomial
#'   network).
#' @name predict.sb_fit
#' @examples
#' data(diabetes)
#' fit <- wbb(diabetes$x, diabetes$y, draws = 100, seed = 1)
#' predict(fit, diabetes$x[1:3, ])
#' predict(fit, diabetes$x[1, ], prob = 0.5)  # one row
NULL

#' @rdname predict.sb_fit
#' @export
predict.sb_fit <- function(object, newdata = NULL, ..., type = c("response", "link", "class"), draws = FALSE,
                           interval = c("credible", "prediction"), newx = NULL, prob = 0.95, level = NULL,
                           probs = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "predict")
  call <- rlang::current_env()
  prob <- sb_interval_prob(prob, missing(prob), level, probs, "predict")
  if (is.character(type) && length(type) == 1L && type %in% c("summary", "draws")) {
    sb_deprecated(paste0("type = \"", type, "\""), if (type == "draws") "draws = TRUE" else "type = \"link\"",
                  "predict", what = "value")
    if (type == "draws") draws <- TRUE
    type <- "link"
  }
  type <- sb_match_arg(type, partial = TRUE)
  interval <- sb_match_arg(interval, partial = TRUE)
  draws <- sb_check_draws_flag(draws)
  if (type == "class" && draws) sb_class_no_draws(call)
  if (type == "class" && !sb_fit_family(object) %in% c("binomial", "multinomial")) sb_predict_class(object, NULL, call)
  nd <- sb_newdata(object, newdata, newx)
  x <- if (is.null(nd)) sb_predict_default_x(object, call) else sb_prepare_x(object, nd, call = call)
  if (!is.null(nd)) x <- sb_with_offset(object, x, newoffset %||% attr(nd, "sb_offset"), call)
  if (type == "class") return(sb_predict_class(object, x, call))
  sb_predict_summary(object, x, type, draws, interval, prob, call = call)
}

# `draws` of predict() (?predict-types): TRUE / FALSE, return the draws or their summary; the number of draws is the
# fit's (a count here is an error that says where the number is set).
sb_check_draws_flag <- function(draws, call = rlang::caller_env()) {
  if (is.numeric(draws) && length(draws) == 1L && !is.na(draws) && !draws %in% 0:1) {
    sb_abort(c("{.arg draws} of {.fn predict} is {.code TRUE} or {.code FALSE}: return the draws, or their summary.",
               x = "You supplied the number {draws}.",
               i = "Every finished draw of the fit is used; how many there are is set when fitting ({.help [predict-types](scalebayes::predict-types)}). For fewer, take rows of {.code predict(fit, newdata, draws = TRUE)}."),
             arg = "draws", call = call)
  }
  check_flag(draws, arg = "draws", call = call)
}

sb_class_no_draws <- function(call) {
  sb_abort(c("{.code type = \"class\"} has no draws.",
             i = "{.fn posterior_predict} draws classes; {.code draws = TRUE} gives the probabilities per draw."),
           arg = "draws", call = call)
}

# predict(type = "class") of a binomial linear fit: 1 where the posterior mean probability exceeds 1/2.
sb_predict_class <- function(object, x, call) {
  fam <- sb_fit_family(object)
  if (fam == "multinomial") {  # the most probable class under the posterior mean probabilities (ties: the first)
    lev <- object$settings$levels %||% .subset2(object, "levels")
    pm <- colMeans(sb_epred_draws(object, x, call = call))
    return(factor(lev[apply(pm, 1, which.max)], levels = lev))
  }
  if (fam != "binomial") {
    sb_not_applicable(c(paste0("{.code type = \"class\"} is for classification; this is a ", fam, " fit."),
                        i = "Use {.code type = \"response\"} or {.code \"link\"}."), call = call, arg = "type")
  }
  sb_binomial_class(colMeans(sb_epred_draws(object, x, call = call)) > 0.5, object)
}

# The classes of a binomial fit (?predict-types): a factor of the response's levels (a factor response's two
# levels, or "0" / "1"), the second where `second` is TRUE; a matrix (one column per lambda) stays a matrix.
sb_binomial_class <- function(second, object) {
  lev <- .subset2(object, "response_levels") %||% .subset2(object, "levels") %||% c("0", "1")
  if (is.matrix(second) && ncol(second) > 1L) return(matrix(lev[second + 1L], nrow(second), dimnames = dimnames(second)))
  factor(lev[as.vector(second) + 1L], levels = lev)
}

# The inputs predict() uses without new data: the fit's inputs for trend filtering, else an error.
sb_predict_default_x <- function(object, call) UseMethod("sb_predict_default_x")
sb_predict_default_x.default <- function(object, call) {
  sb_abort(c("Supply {.arg newdata}: {.fn predict} evaluates the posterior at new inputs.",
             i = "For the fit at the training data use {.fn fitted} (or {.fn posterior_epred})."),
           arg = "newdata", call = call)
}
sb_predict_default_x.sb_trend_filter_wbb <- function(object, call) NULL
sb_predict_default_x.sb_sgld_sa <- function(object, call) {
  if (is.null(object$pred)) {
    sb_abort(c("Supply {.arg newdata}: the fit was run without {.arg newx}.",
               i = "For the fit at the training data use {.fn fitted}."), arg = "newdata", call = call)
  }
  structure(object$pred$newx, sb_fit_newx = TRUE)  # the running averages of the run answer there
}
sb_predict_default_x.sb_sgmcmc_density <- function(object, call) sb_no_training_data(object, call)

sb_predict_summary <- function(object, x, type, draws, interval, prob, call) {
  pd <- sb_predict_draws(object, x, type, interval, call)
  if (draws) {
    if (is.null(pd)) sb_predict_draws(object, x, type, interval, call, need = TRUE)
    return(pd)
  }
  a <- (1 - prob) / 2
  m <- sb_predict_mean(object, x, type, interval, pd)
  if (length(dim(pd)) == 3L) {  # multinomial linear fit: each column an observations x classes matrix
    q <- function(pr) apply(pd, c(2L, 3L), stats::quantile, pr, names = FALSE)
    cols <- list(fit = m, se = apply(pd, c(2L, 3L), stats::sd), lower = q(a), upper = q(1 - a))
    cols <- lapply(cols, function(v) {
      dimnames(v) <- list(NULL, dimnames(pd)[[3]])
      v
    })
    return(structure(cols, class = "data.frame", row.names = .set_row_names(nrow(m))))
  }
  out <- if (is.null(pd)) {
    data.frame(fit = unname(m), se = NA_real_, lower = NA_real_, upper = NA_real_)
  } else {
    q <- apply(pd, 2, stats::quantile, probs = c(a, 1 - a), names = FALSE)
    data.frame(fit = unname(m), se = apply(pd, 2, stats::sd), lower = q[1, ], upper = q[2, ])
  }
  sb_predict_decorate(object, x, out)
}

# Draws of the prediction (NULL where the fit cannot give them: sgld_sa with some coefficients' draws kept).
sb_predict_draws <- function(object, x, type, interval, call, need = FALSE) {
  if (!need && inherits(object, "sb_sgld_sa") && !identical(colnames(object$draws), object$settings$coef_names)) {
    return(NULL)
  }
  if (interval == "prediction") return(sb_posterior_predict(object, x, call = call))
  if (type == "response") sb_epred_draws(object, x, call = call) else sb_linpred_draws(object, x, call = call)
}

sb_predict_mean <- function(object, x, type, interval, pd) UseMethod("sb_predict_mean")
sb_predict_mean.default <- function(object, x, type, interval, pd) colMeans(pd)
sb_predict_mean.sb_sgld_sa <- function(object, x, type, interval, pd) {
  if (interval == "prediction") return(colMeans(pd))
  s <- object$settings
  if (isTRUE(attr(x, "sb_fit_newx"))) return(object$pred[[type]])
  if (s$family == "gaussian" || type == "link") {
    X <- if (s$intercept) cbind(1, x) else x
    return(drop(X %*% object$coefficients))  # the average over every kept iteration
  }
  if (is.null(pd)) {
    sb_abort(c("Response predictions need the draws of all coefficients.",
               i = "Refit with {.code keep_draws = TRUE}, or pass {.arg newx} to {.fn sgld_sa}."), arg = "newdata",
             kind = "state")
  }
  colMeans(pd)
}

sb_predict_decorate <- function(object, x, out) UseMethod("sb_predict_decorate")
sb_predict_decorate.default <- function(object, x, out) out
sb_predict_decorate.sb_trend_filter_wbb <- function(object, x, out) {
  est <- if (is.null(x)) object$estimate else drop(tf_interpolate(object$x, object$estimate, object$settings$k, x))
  cbind(data.frame(x = if (is.null(x)) object$x else as.vector(x), estimate = unname(est), row.names = NULL), out)
}

# ---- the generics --------------------------------------------------------------------------------------------------

#' @importFrom rstantools log_lik
#' @export
rstantools::log_lik
#' @importFrom rstantools posterior_predict
#' @export
rstantools::posterior_predict
#' @importFrom rstantools posterior_epred
#' @export
rstantools::posterior_epred
#' @importFrom rstantools posterior_linpred
#' @export
rstantools::posterior_linpred
#' @importFrom rstantools predictive_interval
#' @export
rstantools::predictive_interval
#' @importFrom rstantools prior_summary
#' @export
rstantools::prior_summary
#' @importFrom posterior ndraws
#' @export
posterior::ndraws

#' Model generics of scalebayes fits: fitted values, log-likelihood, posterior predictions
#'
#' Every fit with posterior draws answers the model generics of R (`fitted()`, `residuals()`, `update()`,
#' `nobs()`, `vcov()`) and those of the rstantools package that rstanarm and brms use (re-exported here):
#' `log_lik()`, `posterior_linpred()`, `posterior_epred()`, `posterior_predict()`, `predictive_interval()`,
#' `prior_summary()`, and posterior's `ndraws()`. So `loo::loo(log_lik(fit))` and bayesplot's
#' `ppc_dens_overlay(y, posterior_predict(fit))` work on a fit as they do on an rstanarm fit.
#'
#' **Data.** Linear fits ([wbb()], [blasso()], [sgld_sa()] / [hamcmc_sa()], [weighted_lasso()]) keep their training
#' data (`fit$data`: the checked `x` and `y`) and [trend_filter_wbb()] fits their inputs and responses, so that
#' without `newdata` every generic is evaluated at the training data. Network fits ([wbb_nn()], [sgld_sa()] /
#' [hamcmc_sa()] with a `model`, [bbb()], [sparse_vi()]) keep their training inputs and responses as given
#' (`fit$data`; see [sb_nn_fit-methods] for the memory it takes) and answer the same way; `fit$data <- NULL` drops
#' them, and the generics then need `newdata`. With `newdata`, every generic (`fitted()` too) is evaluated there:
#' for a fit of a formula a data frame holding the response gives `newy` as well. A [sgmcmc_density()] fit has no data
#' and a [vae()] no response: the data generics are classed errors (`scalebayes_error_not_applicable`) that say so,
#' as are the posterior generics of a [weighted_lasso()] fit (a penalized estimate, no draws).
#'
#' **Gaussian noise sd.** `log_lik()` and `posterior_predict()` of a gaussian model need the noise sd of every
#' draw. [blasso()] fits use their draws of \eqn{\sigma^2}; [sgld_sa()] / [hamcmc_sa()] fits (linear or network)
#' the stochastic-approximation estimate of \eqn{\sigma} of the draw's chain (`fit$latent$sigma`; it is a latent
#' variable adapted during the run, not sampled); [bbb()] / [sparse_vi()] fits their noise sd (`fit$noise_sd`). The
#' weighted Bayesian bootstrap ([wbb()], [trend_filter_wbb()], [wbb_nn()]) has no noise parameter (its loss is the
#' squared error): each draw uses the maximum-likelihood sd given its mean function, the root mean squared residual
#' of that draw on the training data (unweighted; for [wbb_nn()] computed when fitting, `fit$sigma`, one per draw,
#' so that `posterior_predict(fit, newdata = )` needs no responses).
#'
#' @param object,x A fit (`x` for `ndraws()`, posterior's generic).
#' @param newdata New inputs (see [predict.sb_fit()]); `NULL`: the training data kept by the fit.
#' @param newy The observed responses of `newdata` (`log_lik()`, `residuals()`); for a fit of a formula and a
#'   data frame `newdata` that holds the response, taken from it when not given.
#' @param newx Synonym of `newdata`.
#' @param newoffset The offset of `newdata` for fits with an `offset` (see [predict.sb_fit()]).
#' @param transform `posterior_linpred()`: `TRUE` gives the expected response (as `posterior_epred()`).
#' @param seed `posterior_predict()`, `predictive_interval()`: a seed for the noise draws (`NULL`: R's RNG).
#' @param type `residuals()`: `"response"` (observed minus fitted; the only type).
#' @param prob Mass of the central interval.
#' @param level,probs Deprecated names of `prob` (work for one release, with a warning).
#' @param ... Not used: any argument given here is an error (class `scalebayes_error_dots`).
#' @return `fitted()`: the posterior mean of the expected response at every training observation, or at `newdata`
#'   (the `fit` column of `predict(type = "response")`; an examples x classes matrix for a multinomial network); `residuals()`: `y` minus it; `vcov()`: the posterior covariance of the
#'   parameters (the draws' covariance); `ndraws()`: the number of draws; `log_lik()`: a draws x observations matrix
#'   of pointwise log-likelihoods; `posterior_linpred()` / `posterior_epred()` / `posterior_predict()`: draws x
#'   observations matrices of the linear predictor, the expected response and simulated responses;
#'   `predictive_interval()`: an observations x 2 matrix of central intervals of `posterior_predict()`;
#'   `prior_summary()`: a list of class `sb_prior_summary` describing the prior (or, for the bootstrap, the
#'   weights and penalty that stand in for it).
#' @name sb_fit-generics
#' @examples
#' data(diabetes)
#' fit <- blasso(diabetes$x, diabetes$y, chains = 2, iterations = 200, burnin = 100, seed = 1,
#'               quiet = TRUE)
#' head(fitted(fit))
#' ll <- log_lik(fit)
#' dim(ll)
#' # the draws of the two chains come in chain order: their relative efficiency for PSIS-LOO
#' if (requireNamespace("loo", quietly = TRUE)) {
#'   loo::loo(ll, r_eff = loo::relative_eff(exp(ll), chain_id = rep(1:2, each = nrow(ll) / 2)))
#' }
#' predictive_interval(fit, newdata = diabetes$x[1:3, ], prob = 0.8)
NULL

#' @rdname sb_fit-generics
#' @export
fitted.sb_fit <- function(object, newdata = NULL, ..., newx = NULL) {
  sb_check_dots(..., fn = "fitted")
  call <- rlang::current_env()
  ev <- sb_eval_data(object, newdata, newx, call = call)
  pd <- sb_predict_draws(object, ev$x, "response", "credible", call)
  sb_predict_mean(object, if (is.null(ev$x)) sb_training_data(object)$x else ev$x, "response", "credible", pd)
}

#' @rdname sb_fit-generics
#' @export
residuals.sb_fit <- function(object, type = "response", newdata = NULL, newy = NULL, ..., newx = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "residuals")
  call <- rlang::current_env()
  sb_match_arg(type, "response")
  if (sb_fit_family(object) == "multinomial") {
    sb_not_applicable(c("Residuals of a multinomial fit are not defined.", i = "Use {.fn log_lik} to score it."))
  }
  ev <- sb_eval_data(object, newdata, newx, newy, need_y = TRUE, call = call, newoffset = newoffset)
  m <- if (is.null(ev$x)) fitted.sb_fit(object) else colMeans(sb_epred_draws(object, ev$x, call = call))
  unname(ev$y - m)
}

#' @rdname sb_fit-generics
#' @export
vcov.sb_fit <- function(object, ...) {
  sb_check_dots(..., fn = "vcov")
  d <- as.matrix(object)
  if (nrow(d) < 2L) sb_abort("{.fn vcov} needs at least 2 draws.", kind = "state")
  stats::cov(d)
}

#' @rdname sb_fit-generics
#' @method ndraws sb_fit
#' @export
ndraws.sb_fit <- function(x) nrow(x$draws)

#' @rdname sb_fit-generics
#' @method ndraws sb_nn_fit
#' @export
ndraws.sb_nn_fit <- function(x) sum(x$status == "done")

#' @rdname sb_fit-generics
#' @method posterior_linpred sb_fit
#' @export
posterior_linpred.sb_fit <- function(object, transform = FALSE, newdata = NULL, ..., newx = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "posterior_linpred")
  call <- rlang::current_env()
  transform <- check_flag(transform)
  ev <- sb_eval_data(object, newdata, newx, call = call, newoffset = newoffset)
  if (transform) sb_epred_draws(object, ev$x, call = call) else sb_linpred_draws(object, ev$x, call = call)
}

#' @rdname sb_fit-generics
#' @method posterior_epred sb_fit
#' @export
posterior_epred.sb_fit <- function(object, newdata = NULL, ..., newx = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "posterior_epred")
  call <- rlang::current_env()
  ev <- sb_eval_data(object, newdata, newx, call = call, newoffset = newoffset)
  sb_epred_draws(object, ev$x, call = call)
}

#' @rdname sb_fit-generics
#' @method posterior_predict sb_fit
#' @export
posterior_predict.sb_fit <- function(object, newdata = NULL, seed = NULL, ..., newx = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "posterior_predict")
  call <- rlang::current_env()
  ev <- sb_eval_data(object, newdata, newx, call = call, newoffset = newoffset)
  if (is.null(seed)) return(sb_posterior_predict(object, ev$x, call = call))
  withr::with_seed(check_seed_value(seed, call), sb_posterior_predict(object, ev$x, call = call))
}

check_seed_value <- function(seed, call) {
  check_number(seed, arg = "seed", call = call)
}

sb_posterior_predict <- function(object, x, call = rlang::caller_env()) {
  mu <- sb_epred_draws(object, x, call = call)
  sb_draw_response(object, mu, if (is.null(x)) sb_training_data(object)$y, call = call)
}

# Responses drawn from every draw's expected response mu (draws x n; draws x n x K class probabilities): gaussian
# noise with the draw's noise sd (y: the responses of the data, for the bootstrap's plug-in sd), Bernoulli draws,
# or the class index (1..K).
sb_draw_response <- function(object, mu, y = NULL, call = rlang::caller_env()) {
  fam <- sb_fit_family(object)
  if (fam == "gaussian") {
    sigma <- sb_sigma_draws(object, mu, y, call = call)
    return(mu + array(stats::rnorm(length(mu)), dim(mu)) * sigma)
  }
  if (fam == "binomial") return(matrix(stats::rbinom(length(mu), 1L, mu), nrow(mu)))
  if (fam == "poisson") return(matrix(stats::rpois(length(mu), mu), nrow(mu)))
  # multinomial: the class index (1..K) drawn from each draw's probabilities
  d <- dim(mu)
  u <- array(stats::runif(d[1] * d[2]), d[1:2])
  cum <- mu
  for (k in seq_len(d[3])[-1L]) cum[, , k] <- cum[, , k - 1L] + mu[, , k]
  out <- matrix(1L, d[1], d[2])
  for (k in seq_len(d[3] - 1L)) out <- out + (u > cum[, , k])
  out
}

#' @rdname sb_fit-generics
#' @method predictive_interval sb_fit
#' @export
predictive_interval.sb_fit <- function(object, newdata = NULL, seed = NULL, ..., newx = NULL, prob = 0.95,
                                       level = NULL, probs = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "predictive_interval")
  prob <- sb_interval_prob(prob, missing(prob), level, probs, "predictive_interval")
  pp <- posterior_predict.sb_fit(object, newdata = newdata, seed = seed, newx = newx, newoffset = newoffset)
  a <- (1 - prob) / 2
  out <- t(apply(pp, 2, stats::quantile, probs = c(a, 1 - a), names = FALSE))
  colnames(out) <- paste0(format(100 * c(a, 1 - a), trim = TRUE), "%")
  out
}

#' @rdname sb_fit-generics
#' @method log_lik sb_fit
#' @export
log_lik.sb_fit <- function(object, newdata = NULL, newy = NULL, ..., newx = NULL, newoffset = NULL) {
  sb_check_dots(..., fn = "log_lik")
  call <- rlang::current_env()
  ev <- sb_eval_data(object, newdata, newx, newy, need_y = TRUE, call = call, newoffset = newoffset)
  y <- ev$y
  fam <- sb_fit_family(object)
  if (fam == "multinomial") {
    p <- sb_epred_draws(object, ev$x, call = call)
    idx <- cbind(rep(seq_len(dim(p)[1]), length(y)), rep(seq_along(y), each = dim(p)[1]), rep(y + 1L, each = dim(p)[1]))
    return(matrix(log(p[idx]), dim(p)[1], length(y)))
  }
  eta <- sb_linpred_draws(object, ev$x, call = call)
  if (fam == "binomial") {
    yy <- rep(y, each = nrow(eta))
    return(matrix(ifelse(yy == 1, stats::plogis(eta, log.p = TRUE),
                         stats::plogis(eta, lower.tail = FALSE, log.p = TRUE)), nrow(eta)))
  }
  if (fam == "poisson") {
    yy <- rep(y, each = nrow(eta))
    return(matrix(yy * eta - exp(eta) - lgamma(yy + 1), nrow(eta)))
  }
  sigma <- sb_sigma_draws(object, eta, y, call = call)
  out <- matrix(stats::dnorm(rep(y, each = nrow(eta)), eta, sigma, log = TRUE), nrow(eta))
  sb_check_log_lik(out, sigma)
}

# A gaussian log_lik() that is not finite says why (issue 61): +Inf where a draw's noise sd is 0 (a draw that fits
# its training data exactly: the plug-in sd of WBB), -Inf where the responses are too far from the draws'
# predictions for double precision (newy on another scale).
sb_check_log_lik <- function(out, sigma) {
  if (all(is.finite(out))) return(out)
  n_pos <- sum(out == Inf, na.rm = TRUE)
  n_neg <- sum(out == -Inf, na.rm = TRUE)
  n_nan <- sum(is.nan(out))
  zero_sd <- sum(!(sigma > 0))
  sb_warn(c("{.fn log_lik} has {sum(!is.finite(out))} non-finite value{?s} ({n_pos} +Inf, {n_neg} -Inf, {n_nan} NaN) of {length(out)}.",
            i = if (zero_sd > 0) "{zero_sd} draw{?s} {?has/have} noise sd 0 (the draw fits its training data exactly, e.g. a constant response): the density of its fitted values is infinite.",
            i = if (n_neg > 0) "-Inf: responses so far from the draws' predictions that their density underflows; check that {.arg newy} / {.arg newdata} is on the scale of the training response.",
            i = "{.code loo::loo()} and {.code loo::waic()} need finite values."),
          kind = "non_finite")
  out
}

#' @rdname sb_fit-generics
#' @method prior_summary sb_fit
#' @export
prior_summary.sb_fit <- function(object, ...) {
  sb_check_dots(..., fn = "prior_summary")
  structure(c(list(class = class(object)[1], method = object$method), sb_prior(object)), class = "sb_prior_summary")
}

sb_prior <- function(object) UseMethod("sb_prior")
sb_prior.default <- function(object) list(prior = "not recorded for this fit class")
sb_prior.sb_wbb <- function(object) {
  s <- object$settings
  list(prior = sprintf("weighted Bayesian bootstrap: %s penalty lambda = %g (alpha = %g) times %s prior weights",
                       if (s$alpha == 1) "lasso" else "elastic-net", object$lambda, s$alpha, s$prior_weights),
       lambda = object$lambda, alpha = s$alpha, prior_weights = s$prior_weights, weight_dist = s$weight_dist,
       penalty_factor = s$penalty_factor)
}
sb_prior.sb_trend_filter_wbb <- function(object) {
  s <- object$settings
  list(prior = sprintf("weighted Bayesian bootstrap of trend filtering (order %d): penalty lambda = %g times %s prior weights",
                       s$k, s$lambda, s$prior_weights), lambda = s$lambda, k = s$k, prior_weights = s$prior_weights)
}
sb_prior.sb_blasso <- function(object) {
  s <- object$settings
  list(prior = sprintf("Laplace(0, sigma / lambda) on each coefficient (Park & Casella), lambda %s; sigma^2 ~ %s",
                       s$lambda_mode, if (all(s$sigma2_prior == 0)) "1/sigma^2 (improper)" else
                         sprintf("InvGamma(%g, %g)", s$sigma2_prior[1], s$sigma2_prior[2])),
       lambda = s$lambda, lambda_mode = s$lambda_mode, sigma2_prior = s$sigma2_prior,
       gamma_prior = if (s$lambda_mode == "gamma") s$control$gamma_prior)
}
sb_prior.sb_sgld_sa <- function(object) {
  s <- object$settings
  list(prior = sprintf("spike-and-slab: Laplace(0, sigma v0) spike, Laplace(0, sigma v1) slab, v0 = %g, v1 = %g; inclusion and sigma by %s",
                       s$v0, s$v1, switch(s$method, sa = "stochastic approximation", em = "EM", none = "fixed")),
       v0 = s$v0, v1 = s$v1, method = s$method, sparse = s$sparse)
}
sb_prior.sb_sgmcmc_density <- function(object) list(prior = "none: the draws target the given log-density",
                                                    target = object$settings$target)
sb_prior.sb_nn_fit <- function(object) {
  s <- object$settings
  list(prior = sprintf("%s network posterior; see the help page of the fitting function", object$method),
       lambda = .subset2(object, "lambda") %||% s$lambda, v0 = s$v0, v1 = s$v1, prior_weights = s$prior_weights)
}

#' @export
print.sb_prior_summary <- function(x, ...) {
  cat(sprintf("Prior of a %s fit (%s):\n  %s\n", x$class, x$method, x$prior))
  invisible(x)
}

# ---- fits without draws, without data or without a response ---------------------------------------------------

# A method of its own (the generic's call is the method's frame) or called by one that passes its frame as `call`.
sb_no_draws <- function(object, ..., call = rlang::current_env()) {
  info <- sb_point_fit_info(object)  # (the message is interpolated in sb_not_applicable(): values pasted in)
  sb_not_applicable(c(paste0("A {.fn ", info[[1]], "} fit is a penalized point estimate: it has no posterior draws."),
                      i = if (!is.na(info[[2]])) paste0("Use {.fn ", info[[2]], "} for posterior draws of the same model.")),
                    call = call)
}
sb_vae_no_response <- function(object, ...) {
  sb_not_applicable(c("A VAE has no response: fitted values, residuals and predictive draws of a response do not apply.",
                      i = "Use {.fn predict} (reconstructions), {.fn vae_encode}, {.fn vae_generate} or {.fn summary} (the ELBO)."),
                    call = rlang::caller_env())
}

#' Methods of weighted-lasso fits
#'
#' `predict()` gives the expected response (`type = "response"`, the default: probabilities for binomial, means
#' \eqn{e^\eta} for poisson), the linear predictor (`"link"`) or the class (`"class"`, binomial: the factor of
#' the response's levels, the second where the probability exceeds 1/2; see [predict-types]) at new inputs, one row or many: a vector for one lambda, an observations x lambda matrix
#' for a path. A fit with an `offset` needs `newoffset` at new inputs (a fit of a formula with `offset()` takes it
#' from a data frame `newdata`). `fitted()` and `residuals()` are those at the
#' training data (kept by the fit in `fit$data`); `nobs()` the number of observations. A weighted lasso is a
#' penalized point estimate with no posterior: `log_lik()`, `posterior_predict()`, `vcov()` and the other
#' posterior generics are classed errors (`scalebayes_error_not_applicable`); use [wbb()] for draws.
#' @param object A [weighted_lasso()] fit.
#' @param newdata New inputs: a matrix with the columns of `x`, or a vector for one observation.
#' @param type `"response"` (default), `"link"` or `"class"` (binomial, multinomial): [predict-types]. Multinomial fits: `"link"` and
#'   `"response"` (the class probabilities) give an observations x classes matrix for one lambda (an observations
#'   x classes x lambda array for a path), `"class"` the most probable class (a factor; a character matrix for a
#'   path).
#' @param newx Synonym of `newdata`.
#' @param newoffset The offset of the new inputs (fits with an `offset`).
#' @param ... Not used: any argument given here is an error.
#' @return See above.
#' @export
predict.sb_weighted_lasso <- function(object, newdata = NULL, ..., type = c("response", "link", "class"), newx = NULL,
                                      newoffset = NULL) {
  sb_check_dots(..., fn = "predict")
  type <- sb_match_arg(type, partial = TRUE)
  nd <- sb_newdata(object, newdata, newx)
  if (is.null(nd)) sb_abort(c("Supply {.arg newdata}.", i = "For the training data use {.fn fitted}."), arg = "newdata")
  off <- newoffset %||% attr(nd, "sb_offset")
  x <- sb_check_newx(nd, NROW(object$coefficients) - 1L)
  sb_wl_eval(object, x, type, sb_new_offset(object, off, nrow(x)))
}

# The offset of new inputs: required (n finite numbers) when the fit has one, refused when it has none.
sb_new_offset <- function(object, newoffset, n, call = rlang::caller_env()) {
  has <- !is.null(.subset2(object, "offset") %||% sb_training_data(object)$offset)
  if (!has) {
    if (!is.null(newoffset)) {
      sb_abort(c("{.arg newoffset} is given, but the model was fitted without an offset.",
                 i = "Drop {.arg newoffset}, or refit with {.arg offset}."), arg = "newoffset", call = call)
    }
    return(NULL)
  }
  if (is.null(newoffset)) {
    sb_abort(c("The model was fitted with an {.arg offset}: new inputs need theirs, {.arg newoffset}.",
               i = "Give {.code newoffset = } one value per row of {.arg newdata} (e.g. log exposure)."),
             arg = "newoffset", call = call)
  }
  if (!is.numeric(newoffset) || length(newoffset) != n || any(!is.finite(newoffset))) {
    sb_abort(c("{.arg newoffset} must be {n} finite number{?s}, one per new row.",
               x = "It has length {length(newoffset)}."), arg = "newoffset", call = call)
  }
  as.double(newoffset)
}

# b %*% t(x) and x %*% B as base matrices, for a dense or a sparse (Matrix) x, without densifying x.
sb_tcross <- function(b, x) {
  if (inherits(x, "sparseMatrix")) return(as.matrix(Matrix::tcrossprod(b, x)))
  b %*% t(x)
}
sb_xb <- function(x, B) {
  if (inherits(x, "sparseMatrix")) return(as.matrix(x %*% B))
  x %*% B
}

sb_wl_eval <- function(object, x, type, offset = NULL) {
  if (identical(object$family, "multinomial")) return(sb_wl_eval_multinomial(object, x, type))
  co <- object$coefficients
  eta <- if (inherits(x, "sparseMatrix")) {
    sb_xb(x, co[-1L, , drop = FALSE]) + rep(co[1L, ], each = nrow(x))
  } else {
    cbind(1, x) %*% co
  }
  if (!is.null(offset)) eta <- eta + offset
  if (type == "class") {
    fam <- object$family
    if (fam != "binomial") {
      sb_not_applicable(c(paste0("{.code type = \"class\"} is for classification; this is a ", fam, " fit."),
                          i = "Use {.code type = \"response\"} or {.code \"link\"}."), arg = "type")
    }
    return(sb_binomial_class(eta > 0, object))
  } else if (type == "response") {
    if (object$family == "binomial") eta <- stats::plogis(eta)
    if (object$family == "poisson") eta <- exp(eta)
  }
  if (ncol(eta) == 1L) drop(eta) else eta
}

# Multinomial weighted lasso (coefficients (p + 1) x K x L): link n x K (x L), response the class probabilities
# n x K (x L), class a factor (one lambda) or an n x L character matrix of the most probable classes.
sb_wl_eval_multinomial <- function(object, x, type) {
  co <- object$coefficients
  L <- dim(co)[3]
  lev <- object$levels
  X <- if (inherits(x, "sparseMatrix")) NULL else cbind(1, x)
  eta <- array(0, c(nrow(x), length(lev), L), dimnames = list(rownames(x), lev, dimnames(co)[[3]]))
  for (l in seq_len(L)) {
    eta[, , l] <- if (is.null(X)) sb_xb(x, co[-1L, , l]) + rep(co[1L, , l], each = nrow(x)) else X %*% co[, , l]
  }
  if (type == "class") {
    cl <- apply(eta, c(1, 3), which.max)
    cl <- matrix(lev[cl], nrow(x), L)
    return(if (L == 1L) factor(cl[, 1L], levels = lev) else cl)
  }
  if (type == "response") eta <- sb_softmax(eta)
  if (L == 1L) matrix(eta[, , 1L], nrow(x), length(lev), dimnames = list(rownames(x), lev)) else eta
}

# Softmax over the class dimension (the second, or of a draws x n x K array the third).
sb_softmax <- function(eta, along = 2L) {
  m <- apply(eta, -along, max)
  e <- exp(sweep(eta, seq_along(dim(eta))[-along], m))
  sweep(e, seq_along(dim(eta))[-along], apply(e, -along, sum), "/")
}

#' @rdname predict.sb_weighted_lasso
#' @export
fitted.sb_weighted_lasso <- function(object, ...) {
  sb_check_dots(..., fn = "fitted")
  td <- sb_wl_data(object)
  sb_wl_eval(object, td$x, "response", td$offset)
}

#' @rdname predict.sb_weighted_lasso
#' @export
residuals.sb_weighted_lasso <- function(object, ...) {
  sb_check_dots(..., fn = "residuals")
  if (identical(object$family, "multinomial")) {
    sb_not_applicable(c("Residuals of a multinomial fit are not defined.",
                        i = "Use {.code predict(type = \"response\")} for the class probabilities."))
  }
  sb_wl_data(object)$y - fitted.sb_weighted_lasso(object)
}

sb_wl_data <- function(object, call = rlang::caller_env()) {
  td <- sb_training_data(object)
  if (is.null(td)) sb_no_training_data(object, call)
  td
}

#' @rdname predict.sb_weighted_lasso
#' @export
nobs.sb_weighted_lasso <- function(object, ...) object$nobs

# the posterior generics of every penalized point estimate (class sb_point_fit): R/methods-point.R

#' @export
fitted.sb_vae <- sb_vae_no_response
#' @export
residuals.sb_vae <- sb_vae_no_response
#' @method log_lik sb_vae
#' @export
log_lik.sb_vae <- sb_vae_no_response
#' @method posterior_predict sb_vae
#' @export
posterior_predict.sb_vae <- sb_vae_no_response
#' @method posterior_epred sb_vae
#' @export
posterior_epred.sb_vae <- sb_vae_no_response
#' @method posterior_linpred sb_vae
#' @export
posterior_linpred.sb_vae <- sb_vae_no_response
#' @method predictive_interval sb_vae
#' @export
predictive_interval.sb_vae <- sb_vae_no_response
#' @export
vcov.sb_vae <- function(object, ...) {
  sb_not_applicable(c("A VAE is fitted by variational inference of its latent codes; its network weights are point estimates with no posterior covariance."))
}
# the number of draws of latent codes that the draw generics give by default (sb_draw_matrix.sb_vae(draws = ))
#' @method ndraws sb_vae
#' @export
ndraws.sb_vae <- function(x) as.integer(formals(sb_draw_matrix.sb_vae)$draws)
#' @method prior_summary sb_vae
#' @export
prior_summary.sb_vae <- function(object, ...) {
  sb_check_dots(..., fn = "prior_summary")
  structure(list(class = "sb_vae", method = "variational autoencoder",
                 prior = sprintf("N(0, I) on the %d-dimensional latent code of each example", object$latent)),
            class = "sb_prior_summary")
}

# ---- loo(), waic(), pp_check() -----------------------------------------------------------------------------------

#' Leave-one-out, WAIC and posterior predictive checks of a fit, as in rstanarm
#'
#' `loo(fit)` and `waic(fit)` are `loo::loo(log_lik(fit))` and `loo::waic(log_lik(fit))` at the training data
#' (`newdata` / `newy` as in [log_lik()]); `loo()` takes the relative efficiency of MCMC draws from their chains
#' (`loo::relative_eff()`), and 1 for independent draws (WBB, networks' independent draws). `pp_check(fit)` is
#' `bayesplot::ppc_<type>(y, yrep)` with `yrep` the first `ndraws` rows of [posterior_predict()] at the training
#' data. The packages loo and bayesplot are needed (Suggests).
#' @param x,object A fit with draws ([wbb()], [blasso()], [sgld_sa()], [hamcmc_sa()], a network fit, ...).
#' @param newdata,newy New data and responses (see [log_lik()]).
#' @param type The bayesplot PPC: `"dens_overlay"` (default), `"hist"`, `"ecdf_overlay"`, `"stat"`, ... (the
#'   name after `ppc_`).
#' @param ndraws How many predictive draws to plot (default 50).
#' @param seed Seed of the predictive draws.
#' @param ... Passed to `loo::loo()`, `loo::waic()` or the bayesplot function.
#' @return A `loo` / `waic` object, or a ggplot.
#' @name sb_fit-loo
NULL

sb_loo_ll <- function(x, newdata, newy, call) {
  ll <- if (is.null(newdata)) log_lik(x) else log_lik(x, newdata = newdata, newy = newy)
  if (!requireNamespace("loo", quietly = TRUE)) {
    sb_abort("{.fn loo} and {.fn waic} of a fit need the package {.pkg loo}.", kind = "dependency", call = call)
  }
  ll
}

#' @rdname sb_fit-loo
#' @exportS3Method loo::loo
loo.sb_fit <- function(x, ..., newdata = NULL, newy = NULL) {
  ll <- sb_loo_ll(x, newdata, newy, rlang::current_env())
  ch <- .subset2(x, "chain")
  r_eff <- if (inherits(x, c("sb_blasso", "sb_sgld_sa", "sb_sgmcmc_density")) && length(ch) == nrow(ll) &&
               length(unique(ch)) >= 1L) {
    loo::relative_eff(exp(ll), chain_id = match(ch, unique(ch)))
  } else {
    rep(1, ncol(ll))
  }
  loo::loo(ll, r_eff = r_eff, ...)
}

#' @rdname sb_fit-loo
#' @exportS3Method loo::loo
loo.sb_nn_fit <- function(x, ..., newdata = NULL, newy = NULL) {
  ll <- sb_loo_ll(x, newdata, newy, rlang::current_env())
  loo::loo(ll, r_eff = rep(1, ncol(ll)), ...)
}

#' @rdname sb_fit-loo
#' @exportS3Method loo::waic
waic.sb_fit <- function(x, ..., newdata = NULL, newy = NULL) {
  loo::waic(sb_loo_ll(x, newdata, newy, rlang::current_env()), ...)
}

#' @rdname sb_fit-loo
#' @exportS3Method loo::waic
waic.sb_nn_fit <- waic.sb_fit

#' @rdname sb_fit-loo
#' @exportS3Method bayesplot::pp_check
pp_check.sb_fit <- function(object, type = "dens_overlay", ndraws = 50, seed = NULL, ...) {
  call <- rlang::current_env()
  if (!requireNamespace("bayesplot", quietly = TRUE)) {
    sb_abort("{.fn pp_check} of a fit needs the package {.pkg bayesplot}.", kind = "dependency", call = call)
  }
  fun <- paste0("ppc_", type)
  if (!is.character(type) || length(type) != 1L || !exists(fun, envir = asNamespace("bayesplot"), inherits = FALSE)) {
    sb_abort(c("{.arg type} must name a bayesplot PPC (the part after {.code ppc_}), e.g. {.val dens_overlay}.",
               x = "You supplied {.val {format(type)}}."), arg = "type", call = call)
  }
  ndraws <- check_count(ndraws, arg = "ndraws", call = call)
  td <- sb_training_data(object)
  if (is.null(td)) sb_no_training_data(object, call)
  yrep <- posterior_predict(object, seed = seed)
  yrep <- yrep[seq_len(min(ndraws, nrow(yrep))), , drop = FALSE]
  get(fun, envir = asNamespace("bayesplot"))(as.numeric(td$y), yrep, ...)
}

#' @rdname sb_fit-loo
#' @exportS3Method bayesplot::pp_check
pp_check.sb_nn_fit <- pp_check.sb_fit
