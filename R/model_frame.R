# The formula interface of every front end (issue 39, item 1): one model frame (terms, contrasts, factor levels,
# na.action) built here, and one driver that turns `f(y ~ ., data = d, ...)` into `f(x, y, ...)` on that design.
#
#   sb_model_frame(formula, data, ...)   the design: x (no column of ones), y, terms, xlevels, contrasts,
#                                        na.action, intercept (the formula's), response (its name)
#   sb_model_matrix_new(object, newdata) the design of new rows from a fit's stored terms (predict(newdata = ))
#   sb_formula_fit(...)                  the driver a front end calls when its first argument is a formula
#
# A formula's intercept maps to the front end's own intercept setting (`intercept = ` or `control$intercept`); it
# is never a column of x. Front ends with no such setting (networks, trend filtering) refuse `- 1`.

#' The formula interface of the fitting functions
#'
#' Every fitting function takes its data either as a numeric matrix `x` and a response `y`, or as a model formula
#' and a data frame: [wbb()], [blasso()], [sgld_sa()], [hamcmc_sa()], [weighted_lasso()], [cv_weighted_lasso()],
#' the networks of [wbb_nn()], [bbb()] and [sparse_vi()] (and `sgld_sa(model = )`), and [trend_filter_wbb()]
#' (`y ~ x`, one input). `f(y ~ ., data = d, ...)` fits exactly `f(x, y, ...)` with `x` the design of the
#' formula (`model.matrix()` without its column of ones: factors expanded into indicator columns by their
#' contrasts, interactions and transformations such as `log(x1)` or `poly(x1, 2)` included) and `y` its response:
#' with the same seed, the same draws.
#'
#' * **Intercept.** The formula's intercept is the function's own intercept setting, never a column of ones in
#'   `x`: `intercept` of [sgld_sa()], [hamcmc_sa()], [weighted_lasso()] and [cv_weighted_lasso()],
#'   `control$intercept` of [wbb()] and [blasso()]. `y ~ . - 1` (or `+ 0`) fits without it; an intercept setting
#'   that contradicts the formula is an error. Networks (their biases) and trend filtering (its constants) always
#'   have one: there `- 1` is an error.
#' * **Data.** `data` (a data frame; `NULL`: the variables are looked up in the formula's environment), `subset`
#'   (evaluated in `data`, as in [stats::lm()]), `na.action` (default: an error on `NA`; `na.omit` drops the rows)
#'   and `contrasts` (as in [stats::model.matrix()]). With a matrix `x` these arguments are an error.
#' * **The fit** keeps the user's call (so [update()] reruns it, and `update(fit, . ~ . - x1)` changes the
#'   formula), the `terms`, the factor levels (`xlevels`), the `contrasts` used and `na.action`.
#' * **New data.** `predict(fit, newdata = <data frame>)` (and `fitted()`-style generics with `newdata`,
#'   [sb_fit-generics]; `newx` given to the fitting function) rebuilds the design from the stored terms, one row
#'   or many; a factor level not seen when fitting is an error naming the column (class
#'   `scalebayes_error_new_levels`). A matrix `newdata` is taken as the design itself.
#' * **Errors** (class `scalebayes_error_input`, naming the argument): a formula without a response, `data` that
#'   is not a data frame, variables not found, a response of the wrong type (a factor for a gaussian model: give
#'   `family = "binomial"`; characters), a formula without predictors.
#'
#' Image arrays (convolutional networks) keep the `x`, `y` form.
#' @name sb_formula
#' @examples
#' data(diabetes)
#' d <- data.frame(y = diabetes$y, unclass(diabetes$x))
#' d$bmi_high <- factor(ifelse(d$bmi > 0, "high", "low"))
#' fit <- wbb(y ~ age + sex + bmi_high + map, data = d, lambda = 200, draws = 100, seed = 1,
#'            quiet = TRUE)
#' colnames(as.matrix(fit))
#' predict(fit, newdata = d[1, ])
#' fit2 <- update(fit, . ~ . - sex)
NULL

sb_is_formula <- function(x) inherits(x, "formula")

# stats::model.frame() with its errors (unknown variables, NA, new factor levels) turned into classed errors
# naming the data argument `arg`. `subset`: evaluated already (a logical or index vector, or NULL).
sb_frame <- function(formula, data, subset = NULL, na.action = NULL, xlev = NULL, drop.unused.levels = FALSE,
                     arg = "data", call = rlang::caller_env()) {
  if (!is.null(data) && !is.data.frame(data) && !(is.list(data) && !is.object(data)) && !is.environment(data)) {
    sb_abort(c("{.arg {arg}} must be a data frame.", x = "You supplied {.obj_type_friendly {data}}."),
             arg = arg, call = call)
  }
  env <- environment(formula) %||% parent.frame()
  vars <- setdiff(all.vars(formula), ".")
  known <- if (is.environment(data)) character() else names(data)
  absent <- vars[!vars %in% known & !vapply(vars, exists, logical(1), envir = if (is.environment(data)) data else env)]
  if (length(absent)) {
    what <- paste0(if (length(absent) > 1L) "Variables " else "Variable ", paste0("`", absent, "`", collapse = ", "))
    sb_abort(c("{what} not found in {.arg {arg}}.",
               i = if (is.null(data)) "Give the data frame that holds the variables as {.arg {arg}}."
                   else "Check the spelling against {.code names({arg})}."),
             arg = arg, kind = "input", call = call)
  }
  if (is.null(na.action)) na.action <- stats::na.fail
  # the value of `subset` goes into the call (model.frame() evaluates its argument in `data`); the data do not
  mf_call <- as.call(list(quote(stats::model.frame), formula = formula, data = quote(data), subset = subset,
                          na.action = na.action, xlev = quote(xlev), drop.unused.levels = drop.unused.levels))
  tryCatch(eval(mf_call),
           error = function(e) {
             msg <- conditionMessage(e)
             # (new data of predict() and friends: they take no na.action, so the fix names none; issue 61)
             fix <- if (grepl("missing values", msg) && arg %in% c("newdata", "newx")) "Remove or impute the rows with NA first, e.g. {.code predict(fit, newdata = na.omit({arg}))}."
                    else if (grepl("missing values", msg)) "Remove or impute the rows with NA (e.g. {.code na.omit({arg})}), or pass {.code na.action = na.omit}."
                    else if (grepl("new level", msg)) "Use only the factor levels seen when fitting."
                    else "Check the formula and the variables in {.arg {arg}}."
             sb_abort(c("Cannot build the model frame from {.arg {arg}}.", x = "{msg}", i = fix), arg = arg, call = call)
           })
}

# The design of a formula fit. `formula_arg`: the front end's name of the argument holding the formula (for
# error messages); `subset` evaluated, `contrasts` as in model.matrix()'s contrasts.arg.
sb_model_frame <- function(formula, data = NULL, subset = NULL, na.action = NULL, contrasts = NULL,
                           formula_arg = "formula", call = rlang::caller_env(), allow_offset = FALSE) {
  if (!inherits(formula, "formula")) {
    sb_abort(c("{.arg {formula_arg}} must be a model formula.", x = "You supplied {.obj_type_friendly {formula}}."),
             arg = formula_arg, call = call)
  }
  if (length(formula) != 3L) {
    sb_abort(c("The formula has no response: it must be two-sided, {.code response ~ predictors}.",
               x = "You supplied {.code {format(formula)}}."), arg = formula_arg, call = call)
  }
  mf <- sb_frame(formula, data, subset = subset, na.action = na.action, drop.unused.levels = TRUE, call = call)
  tt <- stats::terms(mf)
  if (!is.null(attr(tt, "offset")) && !allow_offset) {
    sb_abort(c("Offsets ({.code offset()}) are not supported in the formula.",
               i = "Remove the offset term (the linear models of {.fn wbb}, {.fn weighted_lasso} and {.fn cv_weighted_lasso} take one)."),
             arg = formula_arg, call = call)
  }
  x <- tryCatch(stats::model.matrix(tt, mf, contrasts.arg = contrasts),
                error = function(e) {
                  sb_abort(c("Cannot build the design matrix.", x = "{conditionMessage(e)}",
                             i = "Check {.arg contrasts} and the factor columns of {.arg data}."),
                           arg = if (is.null(contrasts)) "data" else "contrasts", call = call)
                })
  used_contrasts <- attr(x, "contrasts")
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (!ncol(x)) {
    sb_abort(c("The formula has no predictors.", x = "You supplied {.code {format(formula)}}.",
               i = "Name the predictors, e.g. {.code y ~ x1 + x2} or {.code y ~ .} for every other column."),
             arg = formula_arg, call = call)
  }
  y <- stats::model.response(mf)
  list(x = x, y = y, terms = tt, xlevels = stats::.getXlevels(tt, mf), contrasts = used_contrasts,
       na.action = attr(mf, "na.action"), intercept = attr(tt, "intercept") == 1L,
       response = deparse1(formula[[2L]]), offset = if (allow_offset) sb_frame_offset(mf, formula_arg, call))
}

# The formula's offset() terms (summed), checked finite; NULL without any.
sb_frame_offset <- function(mf, arg, call) {
  off <- stats::model.offset(mf)
  if (is.null(off)) return(NULL)
  if (!is.numeric(off) || any(!is.finite(off))) {
    sb_abort(c("The formula's {.code offset()} must be finite numbers.", i = "Check the exposure (log(0) is -Inf)."),
             arg = arg, call = call)
  }
  as.double(off)
}

# The design of new rows from a fit's stored terms, xlevels and contrasts; a factor level not seen when fitting is
# an error naming the column.
sb_model_matrix_new <- function(object, newdata, arg = "newdata", call = rlang::caller_env()) {
  tt <- stats::delete.response(.subset2(object, "terms"))
  xlev <- .subset2(object, "xlevels")
  if (is.data.frame(newdata)) {
    for (v in intersect(names(xlev), names(newdata))) {
      val <- newdata[[v]]
      if (!is.factor(val) && !is.character(val)) next
      new <- setdiff(unique(as.character(val[!is.na(val)])), xlev[[v]])
      if (length(new)) {
        sb_abort(c("Column {.var {v}} of {.arg {arg}} has level{?s} {.val {new}} not seen when fitting.",
                   i = "The fit knows {.val {xlev[[v]]}}."), arg = arg, kind = "new_levels", also = "input", call = call)
      }
    }
  }
  # a column that was numeric when fitting and is not now (a character column would become dummy columns and
  # report a wrong count of columns; issue 61)
  cls <- attr(tt, "dataClasses")
  if (is.data.frame(newdata) && length(cls)) {
    for (v in intersect(names(cls)[cls == "numeric"], names(newdata))) {
      val <- newdata[[v]]
      if (is.numeric(val) || is.logical(val) && all(is.na(val))) next
      sb_abort(c("Column {.var {v}} of {.arg {arg}} is {.obj_type_friendly {val}}, but was numeric when fitting.",
                 i = "Convert it: {.code {arg}${v} <- as.numeric({arg}${v})}."), arg = arg, call = call)
    }
  }
  mf <- sb_frame(tt, newdata, xlev = xlev, arg = arg, call = call)
  x <- stats::model.matrix(tt, mf, contrasts.arg = .subset2(object, "contrasts"))
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (!is.null(attr(tt, "offset"))) attr(x, "sb_offset") <- sb_frame_offset(mf, arg, call)  # the formula's offset()
  x
}

# The response of new rows of a formula fit, when the data frame holds it (NULL otherwise): log_lik() and
# residuals() with `newdata` need no `newy` then.
sb_response_new <- function(object, newdata) {
  tt <- .subset2(object, "terms")
  if (is.null(tt) || !is.data.frame(newdata) || attr(tt, "response") == 0L) return(NULL)
  v <- attr(tt, "variables")[[attr(tt, "response") + 1L]]
  if (!all(all.vars(v) %in% names(newdata))) return(NULL)
  tryCatch(eval(v, newdata, environment(tt)), error = function(e) NULL)
}

# The arguments the user gave a front end (its frame `frame`, its function `fn`), evaluated, without `exclude`;
# `...` included.
sb_supplied_args <- function(fn, frame, exclude) {
  nms <- setdiff(names(formals(fn)), c(exclude, "..."))
  out <- list()
  for (nm in nms) {
    if (!eval(call("missing", as.name(nm)), frame)) out[nm] <- list(get(nm, envir = frame))
  }
  if ("..." %in% names(formals(fn))) out <- c(out, eval(quote(list(...)), frame))
  out
}

# The driver of the formula interface. A front end whose first argument `x_arg` holds a formula calls
#   sb_formula_fit(environment(), "<name>", <front end>, match.call(), ...)
# which builds the design with sb_model_frame(), maps the formula's intercept, and calls `target` (default: the
# front end itself) as `target(x = <design>, y = <response>, <every other argument the user gave>)`; `y_arg`
# names the front end's own response argument (NULL: none), which must then be missing; `design` (a function)
# reshapes the design matrix for the target (trend filtering: one column, a vector). Then stores the
# terms, factor levels and contrasts in the fit and keeps `user_call` (the user's formula call, which update()
# reruns) as `fit$call`.
#   intercept: "arg" (the front end's `intercept = `), "control" (`control$intercept`) or "none" (no intercept
#              setting: `- 1` is an error)
#   response:  "numeric" (a numeric vector), "glm" (numeric, logical or a factor for family = "binomial") or
#              "network" (numeric or logical vector or matrix, or a factor)
sb_formula_fit <- function(frame, name, fn, user_call, intercept = c("arg", "control", "none"),
                           response = c("numeric", "glm", "network"), x_arg = "x", y_arg = "y", target = fn,
                           design = NULL, formula_args = c("data", "subset", "na.action", "contrasts"),
                           sort_rows = NULL) {
  intercept <- match.arg(intercept)
  response <- match.arg(response)
  takes_offset <- "offset" %in% names(formals(target))
  d <- sb_formula_frame(frame, name, user_call, x_arg, y_arg, formula_args, allow_offset = takes_offset)
  args <- sb_supplied_args(fn, frame, c(x_arg, y_arg, formula_args))
  # the formula's offset() adds to an `offset =` argument (as in glm())
  if (!is.null(d$offset)) args$offset <- if (is.null(args$offset)) d$offset else d$offset + args$offset
  sb_check_formula_response(d, response, args$family, name, arg = x_arg, call = frame)
  args <- sb_formula_intercept(args, d$intercept, intercept, target, name, arg = x_arg, call = frame)
  # inputs for fit-time predictions given as a data frame: the same design
  if (is.data.frame(args$newx)) args$newx <- sb_model_matrix_new(d, args$newx, arg = "newx", call = frame)
  # held-out rows of a network given as a data frame (nn_control(validation = )): the same design and response
  if (inherits(args$control, "sb_nn_control")) args$control <- nn_validation_frame(args$control, d, frame)
  x <- if (is.null(design)) d$x else design(d$x)
  # sort_rows (trend filtering: one input, which the fit needs sorted): the rows sorted by x, and with them the
  # per-observation arguments named in sort_rows; the fit keeps the data rows in the order fitted (`row_order`)
  o <- NULL
  if (!is.null(sort_rows) && is.unsorted(x)) {
    o <- order(x)
    x <- x[o]
    d$y <- if (is.matrix(d$y)) d$y[o, , drop = FALSE] else d$y[o]
    for (a in intersect(sort_rows, names(args))) if (NROW(args[[a]]) == length(o)) args[[a]] <- args[[a]][o]
  }
  fit <- sb_call_front_end(name, target, c(list(x = x, y = d$y), args), call = frame)
  if (!is.null(sort_rows)) fit$row_order <- o %||% seq_along(x)
  sb_formula_attach(fit, d, user_call)
}

# The model frame of a front end called with a formula (its frame `frame`): `data` (or the data given second,
# in place of `y_arg`, as in lm()), `subset` evaluated in the data, `na.action`, `contrasts`; sb_model_frame()'s
# design.
sb_formula_frame <- function(frame, name, user_call, x_arg, y_arg = NULL,
                             formula_args = c("data", "subset", "na.action", "contrasts"), allow_offset = FALSE) {
  formula <- get(x_arg, envir = frame)
  data <- get("data", envir = frame)
  if (!is.null(y_arg) && !eval(call("missing", as.name(y_arg)), frame)) {
    y_val <- get(y_arg, envir = frame)
    if (is.null(data) && (is.data.frame(y_val) || (is.list(y_val) && !is.object(y_val)))) {
      data <- y_val  # f(y ~ ., d): the data given second, as in lm()
    } else {
      sb_abort(c("With a formula, the response comes from the formula's left side: do not give {.arg {y_arg}}.",
                 i = "Give the variables as {.arg data}: {.code {name}({format(formula)}, data = <data frame>)}."),
               arg = y_arg, call = frame)
    }
  }
  # `subset` is evaluated in `data` (as in lm()): its expression, not its value
  sub_expr <- user_call$subset
  subset <- if (!is.null(sub_expr)) {
    env <- environment(formula) %||% frame
    tryCatch(eval(sub_expr, if (is.null(data)) env else data, env),
             error = function(e) sb_abort(c("Cannot evaluate {.arg subset}.", x = "{conditionMessage(e)}"),
                                          arg = "subset", call = frame))
  }
  na_action <- if ("na.action" %in% formula_args) get("na.action", envir = frame)
  if (is.character(na_action)) na_action <- get(na_action, mode = "function")
  contrasts <- if ("contrasts" %in% formula_args) get("contrasts", envir = frame)
  sb_model_frame(formula, data, subset = subset, na.action = na_action, contrasts = contrasts,
                 formula_arg = x_arg, call = frame, allow_offset = allow_offset)
}

# Call a front end on values without writing them into the call (an error's call then reads `name(x = .x, ...)`,
# never a deparsed data set).
sb_call_front_end <- function(name, fn, args, call = NULL) {
  env <- new.env(parent = baseenv())
  env[[name]] <- fn
  syms <- paste0(".sb_arg", seq_along(args))
  for (i in seq_along(args)) assign(syms[i], args[[i]], envir = env)
  cl <- as.call(c(as.name(name), stats::setNames(lapply(syms, as.name), names(args))))
  if (is.null(call)) return(eval(cl, env))
  # the inner call's classed errors name the user's formula call (frame `call`), not `name(x = .sb_arg1, ...)`
  user_call <- sb_frame_call(call)
  tryCatch(eval(cl, env), scalebayes_error = function(e) {
    if (is.call(e$call) && any(grepl(".sb_arg", deparse(e$call), fixed = TRUE))) e$call <- user_call
    stop(e)
  })
}

# The call an error raised with `call = frame` names: the frame's call, or the one rlang::local_error_call() set
# there (hamcmc_sa()'s, for the sgld_sa() it calls).
sb_frame_call <- function(frame) {
  while (is.environment(frame)) {
    set <- get0(".__error_call__.", envir = frame, inherits = FALSE)
    if (is.null(set)) return(rlang::frame_call(frame))
    frame <- set
  }
  frame
}

sb_check_formula_response <- function(d, response, family, name, arg, call) {
  y <- d$y
  what <- function(fix) {
    sb_abort(c("The response {.var {d$response}} of the formula is {.obj_type_friendly {y}}.", i = fix),
             arg = arg, kind = "input", call = call)
  }
  if (is.character(y)) what("Convert it to a factor (classification) or to numbers.")
  if (is.null(y) || is.data.frame(y) || is.list(y)) what("Use a numeric (or factor) column of the data as the response.")
  if (response == "numeric") {
    if (!(is.numeric(y) || is.logical(y)) || is.factor(y) || (is.matrix(y) && ncol(y) != 1L)) {
      what(paste0("{.fn ", name, "} fits a numeric response (one column)."))
    }
  } else if (response == "glm") {
    if (is.matrix(y) && ncol(y) != 1L) what(paste0("{.fn ", name, "} fits one response: give one column."))
    if (inherits(family, "family")) family <- family$family  # binomial(): as "binomial"
    if (is.factor(y) && !identical(family, "binomial") && !identical(family, "multinomial")) {
      what(if (nlevels(y) > 2L) "A factor of several classes is a multinomial response: add {.code family = \"multinomial\"}."
           else "A two-level factor is a binomial response: add {.code family = \"binomial\"}.")
    }
    if (!is.factor(y) && !is.numeric(y) && !is.logical(y)) what("Use a numeric, logical or factor response.")
  } else if (!is.factor(y) && !is.numeric(y) && !is.logical(y)) {
    what("Use a numeric, logical or factor response (a matrix, {.code cbind(y1, y2) ~ .}, for several outputs).")
  }
  invisible(y)
}

# The formula's intercept, as the front end's intercept setting. An explicit setting that contradicts the formula
# is an error (the formula says it: `- 1` for none).
sb_formula_intercept <- function(args, has_intercept, how, target, name, arg, call) {
  if (how == "none") {
    if (!has_intercept) {
      sb_abort(c("{.fn {name}} has no intercept to remove: drop {.code - 1} (or {.code + 0}) from the formula.",
                 i = "A network's biases, and trend filtering's constants, are always in the model."),
               arg = arg, kind = "input", call = call)
    }
    return(args)
  }
  if (how == "arg") {
    given <- args$intercept
    if (!is.null(given) && !identical(given, has_intercept)) {
      sb_abort(c("{.arg intercept} contradicts the formula, which {if (has_intercept) 'has' else 'removes'} the intercept.",
                 i = "With a formula, say it there: {.code y ~ . - 1} for no intercept, and drop {.arg intercept}."),
               arg = "intercept", call = call)
    }
    if (!has_intercept) args$intercept <- FALSE
    return(args)
  }
  ctrl <- args$control %||% eval(formals(target)$control, asNamespace("scalebayes"))
  given <- if (is.list(ctrl)) ctrl$intercept
  if (isFALSE(given) && has_intercept) {
    sb_abort(c("{.code control$intercept = FALSE} contradicts the formula, which has an intercept.",
               i = "With a formula, remove the intercept there: {.code y ~ . - 1}."),
             arg = "control", call = call)
  }
  if (!has_intercept && is.list(ctrl)) {
    ctrl$intercept <- FALSE
    args$control <- ctrl
  }
  args
}

sb_formula_attach <- function(fit, d, user_call) {
  add <- function(f) {
    f$call <- user_call
    f$terms <- d$terms
    f$xlevels <- d$xlevels
    f$contrasts <- d$contrasts
    f$na.action <- d$na.action
    # a two-level factor response: its levels name the classes of predict(type = "class") (R/generics.R)
    if (is.factor(d$y) && nlevels(d$y) == 2L) f$response_levels <- levels(d$y)
    f
  }
  fit <- add(fit)
  if (inherits(fit, "sb_wbb_path")) fit$fits <- lapply(fit$fits, add)
  fit
}

# update(fit, . ~ . - x1): the formula sits in the call's `formula` argument (wbb()) or in its first argument (the
# front ends that dispatch on their first argument); update.default() would add a `formula` argument they lack.
# `extras`: the unevaluated `name = value` changes; `env`: where the call is rerun (update()'s caller).
sb_update_call <- function(object, formula., no_formula, extras, evaluate, env) {
  call <- stats::getCall(object)
  if (is.null(call)) sb_abort("This fit keeps no call to update.", kind = "state")
  if (!no_formula) {
    if (is.null(.subset2(object, "terms"))) {
      sb_abort(c("This fit was not made by a formula: there is no formula to update.",
                 i = "Change its arguments instead, e.g. {.code update(fit, x = x[, -1])}."),
               arg = "formula.", kind = "input")
    }
    slot <- if ("formula" %in% names(call)) "formula" else 2L
    call[[slot]] <- stats::update(stats::formula(.subset2(object, "terms")), formula.)
  }
  if (length(extras)) {
    existing <- !is.na(match(names(extras), names(call)))
    for (a in names(extras)[existing]) call[[a]] <- extras[[a]]
    if (any(!existing)) call <- as.call(c(as.list(call), extras[!existing]))
  }
  if (evaluate) eval(call, env) else call
}

# `data`, `subset`, `na.action` and `contrasts` belong to the formula interface: with a matrix `x` they are an error
# (never silently ignored). `frame`: the front end's environment.
sb_formula_only <- function(frame, what = "x", args = c("data", "subset", "na.action", "contrasts")) {
  given <- args[!vapply(args, function(a) eval(call("missing", as.name(a)), frame), logical(1))]
  if (length(given)) {
    sb_abort(c("{.arg {given[1]}} applies to the formula interface, and {.arg {what}} is not a formula.",
               i = "Give a formula, e.g. {.code y ~ .} with {.code data = <data frame>}, or drop {.arg {given[1]}}."),
             arg = given[1], call = frame)
  }
  invisible()
}

#' Update and refit a model
#'
#' `update()` reruns the call of a fit with some arguments changed, as [stats::update()] does; for a fit of the
#' formula interface `formula.` changes the formula (`update(fit, . ~ . - x1)`), whichever argument holds it
#' (`x` for the front ends that take a formula as their first argument, `formula` for [wbb()], `y` for
#' [trend_filter_wbb()]).
#' @param object A fit.
#' @param formula. Changes to the formula (see [stats::update.formula()]); only for fits of a formula.
#' @param ... Arguments of the call to change (`name = value`; `name = NULL` removes one).
#' @param evaluate Refit (`TRUE`, default) or return the updated call.
#' @return The refitted object, or with `evaluate = FALSE` the call.
#' @examples
#' data(diabetes)
#' df <- data.frame(y = diabetes$y, unclass(diabetes$x))
#' fit <- blasso(y ~ age + sex + bmi, data = df, chains = 2, iterations = 100, burnin = 50, seed = 1,
#'               quiet = TRUE)
#' fit2 <- update(fit, . ~ . - sex)
#' colnames(as.matrix(fit2))
#' @export
update.sb_fit <- function(object, formula., ..., evaluate = TRUE) {
  sb_update_call(object, if (!missing(formula.)) formula., missing(formula.), match.call(expand.dots = FALSE)$...,
                 evaluate, parent.frame())
}

#' @rdname update.sb_fit
#' @export
update.sb_weighted_lasso <- update.sb_fit

#' @rdname update.sb_fit
#' @export
update.sb_wbb_path <- update.sb_fit

#' @rdname update.sb_fit
#' @export
update.sb_cv <- update.sb_fit
