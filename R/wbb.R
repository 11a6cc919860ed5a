# The weighted Bayesian bootstrap for lasso / elastic-net GLMs (Newton, Polson & Xu 2021, Algorithm 1).

#' Control settings for [wbb()]
#'
#' @param nfolds Folds of the cross-validation that fixes lambda when `lambda = NULL`.
#' @param lambda_rule `"min"` (the CV minimum, default, as in the paper) or `"1se"` (the largest lambda
#'   within one standard error of it); the same spelling in every WBB function (`"lambda_min"` and
#'   `"lambda_1se"` still work, with a deprecation warning).
#' @param nlambda,lambda_min_ratio The CV path.
#' @param type_measure The loss of the cross-validation that fixes lambda, as in [cv_weighted_lasso()]:
#'   `"deviance"` (default), `"mse"`, `"mae"`, `"class"` (binomial, multinomial) or `"auc"` (binomial).
#' @param weight_dist Distribution of the data weights: `"exponential"` (i.i.d. Exp(1), the paper's
#'   Algorithm 1; equivalent to Dirichlet(1, ..., 1) weights up to the scale absorbed by the prior weight) or
#'   `"multinomial"` (counts of an n-out-of-n resample: the classical bootstrap of the penalized estimator).
#' @param standardize Deprecated here: give it to [wbb()] (`wbb(standardize = )`). It still works in
#'   `wbb_control()` for one release, with a deprecation warning.
#' @param intercept Fit an unpenalized intercept.
#' @param chunks,future Deprecated here: give them to [wbb()] (`wbb(chunks = , future = )`). They still work
#'   in `wbb_control()` for one release, with a deprecation warning.
#' @param tol,max_iter,max_outer Solver settings, see [cd_control()].
#' @return A list of class `sb_wbb_control`.
#' @export
#' @examples
#' wbb_control(nfolds = 5, lambda_rule = "1se")
wbb_control <- function(nfolds = 10L, lambda_rule = c("min", "1se"), nlambda = 100L, lambda_min_ratio = NULL,
                        weight_dist = c("exponential", "multinomial"), standardize = NULL, intercept = TRUE,
                        chunks = NULL, future = NULL, tol = 1e-14, max_iter = 100000L, max_outer = 100L,
                        type_measure = c("deviance", "mse", "mae", "class", "auc")) {
  cd <- cd_control(tol = tol, max_iter = max_iter, max_outer = max_outer)
  # the old placement of wbb(chunks = , future = ): kept (NULL when not given) and read by wbb()
  if (!missing(chunks)) sb_deprecated("chunks", "wbb(chunks = )", "wbb_control")
  if (!missing(future)) sb_deprecated("future", "wbb(future = )", "wbb_control")
  if (!missing(standardize)) sb_deprecated("standardize", "wbb(standardize = )", "wbb_control")
  structure(c(list(
    nfolds = check_count(nfolds, min = 2L),
    lambda_rule = wbb_lambda_rule(lambda_rule),
    nlambda = check_count(nlambda, max = 1e5),
    lambda_min_ratio = check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE,
                                    allow_null = TRUE),
    weight_dist = sb_match_arg(weight_dist),
    standardize = if (!is.null(standardize)) check_flag(standardize),
    intercept = check_flag(intercept),
    chunks = check_count(chunks, allow_null = TRUE),
    future = if (!is.null(future)) check_flag(future),
    type_measure = sb_match_arg(type_measure)
  ), unclass(cd)), class = "sb_wbb_control")
}

#' Weighted Bayesian bootstrap for lasso and elastic-net regression
#'
#' Draws from the weighted Bayesian bootstrap (WBB) posterior of Newton, Polson & Xu (2021): each draw
#' \eqn{t} solves
#' \deqn{\beta^{(t)} = \arg\min_{\beta_0, \beta} \sum_i w_i l_i(\beta_0, \beta) + \lambda \sum_j w_{0j}
#' [\alpha|\beta_j| + (1-\alpha)\beta_j^2/2]}{beta(t) = argmin sum_i w_i l_i + lambda sum_j w0_j pen(b_j)}
#' with fresh i.i.d. Exp(1) data weights \eqn{w_i} and prior weights \eqn{w_{0j}}: one per coefficient
#' (`prior_weights = "separate"`), one shared (`"common"`), or none (`"none"`, \eqn{w_0 = 1}). Gaussian
#' \eqn{l_i = (y_i - \eta_i)^2/2}; binomial: the negative Bernoulli log-likelihood; poisson: the negative Poisson
#' log-likelihood \eqn{e^{\eta_i} - y_i\eta_i} (log link), with \eqn{\eta_i = o_i + \beta_0 + x_i'\beta} and an
#' optional `offset` \eqn{o_i} (an exposure as `log(exposure)`, or `offset(log(exposure))` in a formula).
#' `lower_limits`, `upper_limits` and `exclude` constrain every draw as in [weighted_lasso()], whose help page
#' lists glmnet's names of these arguments (also accepted here).
#'
#' **Multinomial** (`family = "multinomial"`, a factor `y`): the loss is the softmax negative log-likelihood with
#' one intercept and one coefficient vector per class, penalized per coefficient (`type_multinomial =
#' "ungrouped"`) or per feature across the classes (`"grouped"`), as in [weighted_lasso()] ("Multinomial").
#' `draws` has K (p + 1) columns, class by class, named `"class:coefficient"` (`"setosa:(Intercept)"`,
#' `"setosa:Sepal.Length"`, ...); `coef(fit)` is a (p + 1) x K matrix (posterior means, one column per class);
#' `predict(fit, newdata, type = "response")` averages every draw's class probabilities (`fit`, `se`, `lower`,
#' `upper` are observations x classes matrices; `draws = TRUE` a draws x observations x classes array),
#' `type = "link"` the same for the linear predictors, and `type = "class"` the most probable class under the
#' posterior mean probabilities (a factor). `log_lik()` gives the log probability of the observed class per draw,
#' and `posterior_predict()` draws class indices 1..K. The cross-validation that fixes lambda can use
#' `wbb_control(type_measure = "class")`.
#'
#' **lambda** is on the SUM scale of [weighted_lasso()] (n times glmnet's lambda for unit weights). With
#' `lambda = "min"` or `"1se"` it is chosen once by K-fold cross-validation ([cv_weighted_lasso()]'s
#' `lambda_min` or `lambda_1se`, on the unweighted problem, on the scale of `standardize`, folds from `seed`) and
#' fixed for all draws, as in the paper; `lambda = NULL` is the rule of `wbb_control(lambda_rule = )` (default
#' `"min"`). A vector of lambda values gives draws along the path (prior sensitivity), all from the same
#' weights, returned as an `sb_wbb_path` (a list of `sb_wbb` fits, one per lambda).
#'
#' **Standardization.** With `standardize = TRUE` (the default) the penalty acts on standardized columns, as
#' glmnet's `standardize = TRUE`: the columns are centred and scaled by their means and population SDs
#' (divisor n) and every draw is mapped back exactly to the scale of `x` (\eqn{\beta_j = b_j / s_j},
#' \eqn{\beta_0 = b_0 - \sum_j \beta_j m_j}). The means and SDs are those of the UNWEIGHTED data, fixed for
#' all draws (glmnet would use the weighted ones, which move with the bootstrap weights); for the point
#' estimate (unit weights) the two agree: `fit$estimate` is `coef(glmnet(x, y, lambda = fit$lambda_glmnet,
#' standardize = TRUE))` (lasso, gaussian or binomial). `FALSE`: the penalty acts on the columns as given.
#'
#' **Exactness.** Every draw is solved to a certified optimum (coordinate descent to `tol = 1e-14`, then a
#' full KKT check); the largest KKT violation over draws is stored in `fit$diagnostics$kkt_max`. The paper's
#' R code called glmnet with its default tolerance; glmnet also rescales penalty factors to sum to p, which
#' silently cancels a *common* prior weight. We solve the objective as written (see [glmnet_lambda()]).
#'
#' **Separate prior weights when p >> n.** The smallest of p i.i.d. Exp(1) prior weights is about 1/p, so in
#' every draw a few coefficients are almost unpenalized. With p much larger than n those noise columns enter
#' and the draw saturates (about n non-zero coefficients), crowding out real signals: with n = 100 and
#' p = 10000 we observed ~95 non-zeros per draw. Use `prior_weights = "common"` (or `"none"`) there.
#'
#' **Any loss or statistic.** `wbb(loss = , init = , data = , ...)` (a weighted loss written in R, minimized per
#' draw by L-BFGS) and `wbb(statistic = , data = , ...)` (a weighted statistic, as in \pkg{bayesboot}) are passed
#' to [wbb_loss()], which documents them; they use the same weights as every WBB for the same seed. With a formula,
#' `wbb(y ~ ., data = d, loss = )` hands the loss the formula's design and response (`data$x`, `data$y`; see
#' [wbb_loss()], "Formula").
#'
#' **Reproducibility.** `seed` (default drawn from R's RNG, so [set.seed()] works) keys one random stream per
#' draw: the draws are identical for any `threads` and any split into `chunks` / future workers.
#'
#' @param x Numeric matrix (n x p), a sparse matrix of the Matrix package (lasso families gaussian, binomial, poisson: kept sparse, see [weighted_lasso()]), or a formula for the formula method (see [sb_formula]).
#' @param y Response (numeric; 0/1, logical or two-level factor for binomial; counts for poisson; a factor, or
#'   character / integer classes, for multinomial).
#' @param family `"gaussian"`, `"binomial"`, `"poisson"` or `"multinomial"`, or a family object with its
#'   canonical link (`binomial()`, as [stats::glm()] takes it).
#' @param type_multinomial,type.multinomial `"ungrouped"` or `"grouped"` (multinomial), as in [weighted_lasso()]
#'   (glmnet's name also accepted).
#' @param alpha Elastic-net mixing parameter in \[0, 1\] (1 = lasso).
#' @param lambda `"min"` or `"1se"` (cross-validation with that rule), `NULL` (cross-validation with
#'   `wbb_control()`'s `lambda_rule`), one value, or a vector (a path).
#' @param prior_weights `"separate"` (default: one per coefficient, the paper's Algorithm 1 and simulation
#'   study), `"common"` or `"none"`. [trend_filter_wbb()] defaults to `"common"`, the paper's choice there.
#' @param draws Number of WBB draws T.
#' @param threads Threads (default [sb_default_threads()]); results do not depend on it.
#' @param seed Seed (a whole number) or `NULL`.
#' @param quiet Hide progress bars (default: quiet when not interactive).
#' @param penalty_factor Base penalty weights multiplied into the prior weights (0 = unpenalized).
#' @param control [wbb_control()].
#' @param chunks Split the draws into this many chunks; `NULL` (default): one chunk per future worker
#'   ([future::nbrOfWorkers()]) when `future = TRUE`, else one chunk (the rule of every function with `chunks`).
#' @param future Run the chunks through [future.apply::future_lapply()] under the user's [future::plan()].
#'   The result is identical to a single-process run with the same seed.
#' @param keep_draws Which coefficients' draws are stored, as in [sgld_sa()]: `TRUE` (default, all) or names or
#'   indices in the order of [coef()] (intercept first). With a subset the draws methods (`summary()`,
#'   `posterior_interval()`, `as_draws_df()`, ...) cover those coefficients; `predict()`, `fitted()`, `log_lik()`
#'   and the other generics that need every coefficient are classed errors (`scalebayes_error_state`). Every
#'   chunk's draws are reduced as it finishes, so with `chunks` only one chunk's draws of every coefficient are
#'   held at a time.
#' @param standardize Penalize on standardized columns and map the draws back (see "Standardization"; before,
#'   `wbb_control(standardize = )`, which still works for one release with a deprecation warning).
#' @param model A network ([nn_sequential()], [nn_mlp()], [nn_cnn()]): `wbb(x, y, model = nn_mlp(c(128, 64)),
#'   ...)` draws network posteriors; the call is passed to [wbb_nn()], which documents its further arguments
#'   (`newx`, `newy`, `keep_draws`, `epochs`, `batch_size`, `device`, `control = nn_control()`, `standardize`,
#'   `batch`: several draws trained as one batched network, chosen automatically when faster).
#'   Its defaults differ from the linear model's: `family` is chosen from `y` (a factor: multinomial; 0/1:
#'   binomial), `lambda = 1e-4` on the sum scale (no cross-validation), `prior_weights = "common"` (the paper's
#'   network setting) and `draws = 100`; `alpha` and `penalty_factor` do not apply. As for the linear model the
#'   data are standardized by default (`standardize = TRUE`, an argument of [wbb_nn()]: inputs per column, or
#'   one scale for images, and a gaussian response), the penalty acts on that scale and every prediction comes
#'   back on the user's scale (see [wbb_nn()], "Standardization").
#' @param formula For the formula method: a model formula, `y ~ x1 + x2` or `y ~ .`; its intercept is
#'   `control$intercept` (`y ~ . - 1`: none). With `model` (a network) its numeric design is `x` and `- 1` is an
#'   error.
#' @param data A data frame (or a list) holding the variables of the formula (`NULL`: they are looked up in the
#'   formula's environment). `f(y ~ ., d)` is `f(y ~ ., data = d)`. Only with a formula, as are `subset`,
#'   `na.action` and `contrasts`; see [sb_formula].
#' @param subset Rows of `data` to fit: an expression evaluated in `data` (`subset = age > 30`, as in
#'   [stats::lm()]), or a logical or index vector.
#' @param na.action Rows with `NA`: `NULL` (default) is [stats::na.fail()], a classed error that says how to fix
#'   it; `na.omit` drops them (the dropped rows are kept in `fit$na.action`).
#' @param contrasts Contrasts of the factors: a named list, as `contrasts.arg` of [stats::model.matrix()] (default:
#'   `options("contrasts")`, treatment contrasts). The contrasts used are kept in `fit$contrasts`.
#' @param offset,lower_limits,upper_limits,exclude,penalty.factor,lower.limits,upper.limits As in
#'   [weighted_lasso()]: the offset of the linear predictor (kept by the fit; predictions at new inputs need
#'   `newoffset`), box limits on the coefficients of every draw (scale of `x`), columns held at 0, and glmnet's
#'   names of `penalty_factor` and the limits.
#' @param weights Observation ("prior") weights, non-negative, one per row (`NULL`: 1): the cross-validation
#'   and `fit$estimate` use them, and each draw's data weights are the bootstrap weights times them (a row of
#'   weight 2 counts as two rows with the same bootstrap weight). `lambda_glmnet` is then `lambda / sum(weights)`.
#' @param ... Arguments passed to the default method.
#' @section Interrupts:
#' Ctrl-C stops the engine at its next check and returns the partial fit of what finished (draws 1..k of the same-seed run, for every lambda; the cross-validation and the unweighted fit come first, so an interrupt there keeps nothing),
#' with one warning of class `scalebayes_warning_interrupted` and `fit$interrupted` `TRUE`; when nothing
#' finished it is R's interrupt. See [scalebayes-interrupts].
#' @return An object of class `c("sb_wbb", "sb_fit")`: `draws` (T x (p + 1), original scale, intercept
#'   first), `estimate` (the unweighted optimum at lambda), `lambda`, `lambda_glmnet` (glmnet's scale for unit
#'   weights), `cv` (an [cv_weighted_lasso()] result when lambda was chosen by CV), `seed`, `timing` (seconds:
#'   `elapsed` for the whole call, `cv` for the cross-validation),
#'   `diagnostics` (KKT violations), with the methods of [sb_fit-methods], [predict.sb_fit()] and
#'   [sb_fit-generics]; `data`, the training `x` and `y` (for [fitted()], [log_lik()], ...).
#' @references Newton, M. A., Polson, N. G. and Xu, J. (2021). Weighted Bayesian bootstrap for scalable
#'   posterior distributions. *Canadian Journal of Statistics* 49, 421-437.
#' @export
#' @examples
#' data(diabetes)
#' fit <- wbb(diabetes$x, diabetes$y, draws = 200, seed = 1)
#' summary(fit)
#' posterior_interval(fit)
wbb <- function(x, ...) UseMethod("wbb")

#' @rdname wbb
#' @export
wbb.formula <- function(formula, data = NULL, ..., subset = NULL, na.action = NULL, contrasts = NULL) {
  call <- sb_user_call(match.call(), quote(wbb))
  frame <- environment()
  if (any(c("loss", "statistic") %in% ...names())) return(wbb_loss_formula(frame, call))
  net <- !is.null(list(...)$model)
  sb_formula_fit(frame, "wbb", wbb.formula, call, intercept = if (net) "none" else "control", y_arg = NULL,
                 response = if (net) "network" else "glm", x_arg = "formula", target = wbb.default)
}

# wbb(x, y, model = <network>, ...) is wbb_nn(x, y, model = <network>, ...).
wbb_network_call <- function(mcall, env, call) {
  bad <- intersect(names(mcall), c("alpha", "penalty_factor"))
  if (length(bad)) {
    sb_abort(c("{.arg {bad[1]}} applies to linear models, not to networks.",
               i = "Networks take a ridge penalty {.code lambda * w0 * sum ||W||^2}; see {.fn wbb_nn}."),
             arg = bad[1], call = call)
  }
  user_call <- mcall
  mcall[[1L]] <- quote(scalebayes::wbb_nn)
  fit <- eval(mcall, env)
  fit$call <- user_call
  fit
}

#' @rdname wbb
#' @export
wbb.default <- function(x, y, family = c("gaussian", "binomial", "poisson", "multinomial"), alpha = 1, lambda = NULL,
                        prior_weights = c("separate", "common", "none"), draws = 1000L, threads = NULL,
                        seed = NULL, quiet = NULL, penalty_factor = NULL, control = wbb_control(), chunks = NULL,
                        future = FALSE, keep_draws = TRUE, standardize = TRUE, ..., model = NULL, offset = NULL,
                        lower_limits = -Inf, upper_limits = Inf, exclude = NULL, weights = NULL,
                        penalty.factor = NULL, lower.limits = NULL, upper.limits = NULL,
                        type_multinomial = c("ungrouped", "grouped"), type.multinomial = NULL) {
  call <- rlang::current_env()
  mcall <- sb_user_call(match.call(), quote(wbb))
  if (!is.null(model)) return(wbb_network_call(mcall, parent.frame(), call))
  if (any(c("loss", "statistic") %in% names(mcall))) return(wbb_loss_call(mcall, parent.frame()))
  sb_check_dots(...)
  family <- sb_family_arg(family, call)  # binomial(), as glm() takes it
  family <- sb_match_arg(family)
  prior_weights <- sb_match_arg(prior_weights)
  penalty_factor <- sb_glmnet_name(penalty_factor, penalty.factor, "penalty_factor", "penalty.factor", missing(penalty_factor))
  lower_limits <- sb_glmnet_name(lower_limits, lower.limits, "lower_limits", "lower.limits", missing(lower_limits))
  upper_limits <- sb_glmnet_name(upper_limits, upper.limits, "upper_limits", "upper.limits", missing(upper_limits))
  type_multinomial <- check_type_multinomial(type_multinomial, type.multinomial, missing(type_multinomial), family, call)
  check_multinomial_constraints(family, offset, lower_limits, upper_limits, exclude, call)
  d <- prepare_glm_data(x, y, family, alpha, penalty_factor, call)
  cons <- glm_constraints(offset, lower_limits, upper_limits, exclude, d$x, call)
  multi <- family == "multinomial"
  obs_w <- if (!is.null(weights)) check_weights(weights, d$n, arg = "weights", call = call)
  draws <- check_count(draws, arg = "draws", call = call)
  if (!inherits(control, "sb_wbb_control")) {
    sb_abort(c("{.arg control} must be made by {.fn wbb_control}.", x = "You supplied {.obj_type_friendly {control}}."),
             arg = "control", call = call)
  }
  lambda_rule <- control$lambda_rule
  if (is.character(lambda)) {
    lambda_rule <- wbb_lambda_choice(lambda, call)
    lambda <- NULL
  }
  lambda <- check_lambda(lambda, call)
  names_coef <- c("(Intercept)", colnames(d$x))
  # multinomial: K (p + 1) coefficients, class by class, named "class:coefficient"
  if (multi) names_coef <- as.vector(outer(names_coef, d$levels, function(a, b) paste0(b, ":", a)))
  keep <- resolve_keep(keep_draws, names_coef, call = call)
  if (!isTRUE(control$intercept)) {  # no intercept (`y ~ x - 1`): no "(Intercept)" column of zeros (issue 61)
    keep <- setdiff(keep, if (multi) grep(":(Intercept)", names_coef, fixed = TRUE) else 1L)
    if (!length(keep)) sb_abort("{.arg keep_draws} names only the intercept, and the model has none.", arg = "keep_draws", call = call)
  }
  # the draws (one row per draw and lambda) and R's copy of them while the fit is assembled
  check_result_memory(8 * as.double(draws) * max(1, length(lambda)) * length(keep), "draws", call = call,
                      peak = 8 * as.double(draws) * max(1, length(lambda)) * (length(keep) + length(names_coef)),
                      fix = "Use fewer {.arg draws} or fewer {.arg lambda} values, or keep fewer coefficients ({.arg keep_draws}).")
  # wbb_control(chunks = , future = , standardize = ): the deprecated placement (warned by wbb_control())
  chunks <- wbb_moved_arg(control$chunks, chunks, "chunks", missing(chunks), call)
  future <- wbb_moved_arg(control$future, future, "future", missing(future), call)
  standardize <- check_flag(wbb_moved_arg(control$standardize, standardize, "standardize", missing(standardize), call),
                            arg = "standardize", call = call)
  rs <- wbb_run_settings(draws, threads, seed, quiet, chunks, future, call = call)
  threads <- rs$threads
  seed <- rs$seed
  quiet <- rs$quiet
  st <- standardize_x(d$x, standardize, control$intercept)
  ctrl <- c(list(tol = control$tol, max_iter = control$max_iter, max_outer = control$max_outer,
                 intercept = control$intercept), glm_engine_extras(cons, st$scale), st$engine,
            multinomial_ctrl(family, d$levels, type_multinomial))
  # the user's observation weights: the CV and the point estimate use them, and every draw's data weights are
  # the bootstrap weights times them
  unit <- obs_w %||% rep(1, d$n)

  cv <- NULL
  if (is.null(lambda)) {
    measure <- cv_type_measure(control$type_measure %||% "deviance", family, call)
    cv <- run_cv(st$x, d$y, family, d$alpha, unit, d$penalty_factor, control$nfolds, NULL, control$nlambda,
                 control$lambda_min_ratio, rs, ctrl, call, measure = measure)
    lambda <- if (lambda_rule == "min") cv$lambda_min else cv$lambda_1se
  }
  t_cv <- wbb_elapsed(rs)

  # the unweighted solution at each lambda: the point estimate; the first one warm-starts every draw
  est <- sb_call_engine(cpp_enet_path(st$x, d$y, family, d$alpha, unit, d$penalty_factor,
                                      lambda, ctrl), call = call)
  if (isTRUE(est$interrupted)) rlang::interrupt()
  all_kept <- length(keep) == length(names_coef)
  # multinomial: the warm start (K intercepts, p K coefficients) travels in the control list
  warm <- if (multi) list(warm_a0 = est$a0[, 1L], warm_beta = est$beta[, 1L])
  engine <- function(first, count) {
    r <- cpp_wbb_glm(st$x, d$y, family, d$alpha, d$penalty_factor, lambda,
                     if (multi) 0 else est$a0[1L], if (multi) numeric(d$p) else est$beta[, 1L],
                     st$center, st$scale, names_coef,
                     wbb_engine_settings(rs, first, count, prior_weights, control$weight_dist),
                     c(ctrl, list(obs_weights = obs_w), warm))
    if (!all_kept) r$coef <- lapply(r$coef, function(m) m[, keep, drop = FALSE])  # keep_draws: as each chunk ends
    r
  }
  # Ctrl-C: the partial fit of the draws finished (?scalebayes-interrupts)
  parts <- wbb_run(rs, engine, call = call, cut = function(r, k) wbb_cut_rows(r, k, c("coef", "kkt", "iterations")))
  stopped <- attr(parts, "interrupted")
  if (!is.null(stopped)) draws <- stopped$completed
  kkt <- wbb_combine(parts, "kkt")
  not_conv <- sum(vapply(parts, `[[`, integer(1), "not_converged"))
  if (not_conv > 0) {
    sb_warn(c("{not_conv} solve{?s} reached {.arg max_iter} before converging; increase it in {.fn wbb_control}.",
              i = if (family == "binomial") "If the classes are (nearly) separable, the optimum is at infinity for small lambda: use a larger lambda.",
              i = if (family == "poisson") "A draw whose weights leave no positive count (e.g. the multinomial bootstrap of few positive counts) has its intercept at minus infinity.",
              i = if (multi) "A draw whose weights leave a class without weight (the multinomial bootstrap of a rare class) has that class's intercept at minus infinity; separable classes put the optimum at infinity for small lambda."),
            kind = "convergence")
  }
  elapsed <- wbb_elapsed(rs)
  coef <- lapply(seq_along(lambda), function(l) wbb_bind(lapply(parts, function(r) r$coef[[l]])))
  rm(parts)
  fits <- lapply(seq_along(lambda), function(l) {
    dr <- coef[[l]]
    estimate <- if (multi) {
      as.vector(multinomial_coef(list(a0 = est$a0[, l, drop = FALSE], beta = est$beta[, l, drop = FALSE]),
                                 st$center, st$scale, d$levels, NULL))[keep]
    } else {
      drop(unstandardize_coef(c(est$a0[l], est$beta[, l]), st$center, st$scale))[keep]
    }
    new_sb_fit(
      draws = dr, estimate = estimate, method = "weighted Bayesian bootstrap", subclass = "sb_wbb",
      call = mcall, seed = seed,
      settings = list(family = family, alpha = d$alpha, prior_weights = prior_weights, draws = draws,
                      threads = threads, weight_dist = control$weight_dist, nobs = d$n,
                      penalty_factor = d$penalty_factor, standardize = standardize,
                      intercept = control$intercept,
                      coef_names = if (isTRUE(control$intercept)) names_coef else names_coef[-1L], keep_draws = keep,
                      offset = !is.null(cons$offset), weights = obs_w, lower_limits = cons$lower_limits,
                      upper_limits = cons$upper_limits, exclude = cons$exclude,
                      feature_names = colnames(d$x), levels = d$levels,
                      type_multinomial = if (multi) type_multinomial,
                      print_info = c(Family = if (multi) sprintf("multinomial (%d classes, %s)", length(d$levels), type_multinomial) else family,
                                     Prior_weights = prior_weights,
                                     lambda = sprintf("%.5g (glmnet scale %.5g)%s", lambda[l], lambda[l] / sum(unit),
                                                      if (is.null(cv)) "" else paste0(", by ", control$nfolds,
                                                                                       "-fold CV (", lambda_rule, ")")))),
      timing = c(elapsed = elapsed, cv = t_cv),
      diagnostics = list(kkt = kkt, kkt_max = max(kkt), kkt_estimate = est$kkt[l], not_converged = not_conv),
      lambda = lambda[l], lambda_glmnet = lambda[l] / sum(unit), lambda_rule = if (!is.null(cv)) lambda_rule, cv = cv,
      family = family, levels = d$levels,
      scaling = list(center = st$center, scale = st$scale), data = list(x = d$x, y = d$y, offset = cons$offset)
    )
  })
  if (!is.null(stopped)) {  # every lambda's fit is partial; one warning
    fits <- lapply(fits, sb_partial_fit, draws, stopped$requested, warn = FALSE)
  }
  out <- if (length(fits) == 1L) fits[[1L]] else {
    structure(list(fits = fits, lambda = lambda, cv = cv, seed = seed, call = mcall,
                   timing = c(elapsed = elapsed, cv = t_cv)),
              class = "sb_wbb_path")
  }
  if (!is.null(stopped)) {
    if (length(fits) > 1L) out[c("interrupted", "interruption")] <- fits[[1L]][c("interrupted", "interruption")]
    sb_warn_interrupted(draws, stopped$requested)
  }
  out
}

# lambda = "min" / "1se": the cross-validation rule (the old spellings "lambda_min" / "lambda_1se" with a warning).
wbb_lambda_choice <- function(lambda, call) {
  if (length(lambda) != 1L || is.na(lambda) || !lambda %in% c("min", "1se", "lambda_min", "lambda_1se")) {
    sb_abort(c("{.arg lambda} must be {.val min} or {.val 1se} (cross-validation), NULL, or finite non-negative numbers.",
               x = "You supplied {.val {format(utils::head(lambda, 5))}}."), arg = "lambda", call = call)
  }
  wbb_lambda_rule(lambda, arg = "lambda", call = call)
}

# A run setting given in wbb_control() (old place, `old`: NULL when not given there) or to wbb() (`new`).
wbb_moved_arg <- function(old, new, name, missing_new, call) {
  if (is.null(old)) return(new)
  if (!missing_new) {
    sb_abort(c("Give {.arg {name}} only to {.fn wbb}: {.code wbb_control({name} = )} is its deprecated place.",
               i = "Remove {.arg {name}} from {.fn wbb_control}."), arg = name, call = call)
  }
  old
}

# The user's call of a fit made by an S3 method: match.call() in a method names the method (`wbb.default`, not
# exported); update() needs the generic.
sb_user_call <- function(mcall, generic) {
  mcall[[1L]] <- generic
  mcall
}

#' @export
print.sb_wbb_path <- function(x, ...) {
  cat(sprintf("<sb_wbb_path> WBB draws at %d lambda values (the same weights for every lambda)\n",
              length(x$lambda)))
  nz <- vapply(x$fits, function(f) mean(f$draws[, colnames(f$draws) != "(Intercept)"] != 0), numeric(1))
  print(data.frame(lambda = signif(x$lambda, 5), share_nonzero = round(nz, 3)))
  invisible(x)
}

#' Plot WBB draws along a lambda path
#'
#' Posterior mean (line) and central credible band (shaded) of each coefficient against \eqn{\log\lambda}.
#' @param x An `sb_wbb_path` ([wbb()] with several lambda values).
#' @param pars Coefficients to draw (default: the first 10).
#' @param prob Mass of the central band.
#' @param level Deprecated name of `prob` (works for one release, with a warning).
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @export
plot.sb_wbb_path <- function(x, pars = NULL, prob = 0.9, ..., level = NULL) {
  prob <- sb_interval_prob(prob, missing(prob), level, NULL, "plot.sb_wbb_path")
  d1 <- x$fits[[1L]]$draws
  d1 <- d1[, colnames(d1) != "(Intercept)", drop = FALSE]
  pn <- colnames(d1)
  if (is.null(pars)) pars <- pn[seq_len(min(10L, length(pn)))]
  pars <- colnames(select_pars(d1, pars))
  a <- (1 - prob) / 2
  stats_for <- function(f) {
    d <- f$draws[, pars, drop = FALSE]
    rbind(colMeans(d), apply(d, 2, stats::quantile, a), apply(d, 2, stats::quantile, 1 - a))
  }
  s <- lapply(x$fits, stats_for)
  ll <- log(x$lambda)
  yr <- range(unlist(s))
  graphics::plot(range(ll), yr, type = "n", xlab = expression(log(lambda)), ylab = "coefficient", ...)
  cols <- grDevices::hcl.colors(length(pars), "Dark 3")
  for (j in seq_along(pars)) {
    m <- vapply(s, function(z) z[1, j], numeric(1))
    lo <- vapply(s, function(z) z[2, j], numeric(1))
    hi <- vapply(s, function(z) z[3, j], numeric(1))
    graphics::polygon(c(ll, rev(ll)), c(lo, rev(hi)), col = grDevices::adjustcolor(cols[j], 0.15), border = NA)
    graphics::lines(ll, m, col = cols[j], lwd = 2)
  }
  graphics::legend("topright", legend = pars, col = cols, lwd = 2, bty = "n", cex = 0.7)
  invisible(x)
}
