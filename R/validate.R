# Argument validation shared by all fitting functions. Each check names the argument and the fix.

check_x_matrix <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(), min_cols = 1L) {
  if (is.data.frame(x)) {
    ok <- vapply(x, function(v) is.numeric(v) || is.logical(v), logical(1))
    if (!all(ok)) {
      sb_abort(c("{.arg {arg}} must be numeric.",
                 x = "Column{?s} {.val {names(x)[!ok]}} {?is/are} not numeric.",
                 i = "Use the formula interface, or {.fn model.matrix}, to expand factors."),
               arg = arg, call = call)
    }
    x <- as.matrix(x)
  }
  if (inherits(x, "sparseMatrix")) x <- as.matrix(x)
  if (inherits(x, "AsIs")) x <- unclass(x)
  if (!is.matrix(x) || !(is.numeric(x) || is.logical(x))) {
    sb_abort(c("{.arg {arg}} must be a numeric matrix.",
               x = "You supplied {.obj_type_friendly {x}}."), arg = arg, call = call)
  }
  storage.mode(x) <- "double"
  if (nrow(x) < 2L) {
    sb_abort(c("{.arg {arg}} must have at least 2 rows (observations).",
               x = "It has {nrow(x)}."), arg = arg, call = call)
  }
  if (ncol(x) < min_cols) {
    sb_abort(c("{.arg {arg}} must have at least {min_cols} column{?s}.",
               x = "It has {ncol(x)} (p = 0)."), arg = arg, call = call)
  }
  bad <- !is.finite(x)
  if (any(bad)) {
    w <- which(bad, arr.ind = TRUE)[1, ]
    sb_abort(c("{.arg {arg}} must contain only finite values.",
               x = "Found {sum(bad)} NA/NaN/Inf value{?s}, the first at row {w[1]}, column {w[2]}.",
               i = "Remove or impute them before fitting."), arg = arg, call = call)
  }
  colnames(x) <- clean_colnames(colnames(x), ncol(x))
  x
}

# Column names for draws and summaries: "V<j>" when absent, and blank / NA / duplicated names among
# named ones made non-empty ("V<j>") and unique (make.unique), so every parameter has its own name.
clean_colnames <- function(cn, p) {
  if (is.null(cn)) return(paste0("V", seq_len(p)))
  blank <- is.na(cn) | !nzchar(cn)
  cn[blank] <- paste0("V", which(blank))
  if (anyDuplicated(cn)) cn <- make.unique(cn)
  cn
}

check_y_vector <- function(y, n, arg = rlang::caller_arg(y), call = rlang::caller_env()) {
  if (is.matrix(y) && ncol(y) == 1L) y <- drop(y)
  if (is.factor(y) || is.character(y)) {
    sb_abort(c("{.arg {arg}} must be numeric.", i = "For a two-class factor use {.code family = \"binomial\"}, which accepts it."),
             arg = arg, call = call)
  }
  if (!is.numeric(y) && !is.logical(y)) {
    sb_abort(c("{.arg {arg}} must be a numeric vector.", x = "You supplied {.obj_type_friendly {y}}."),
             arg = arg, call = call)
  }
  if (length(y) != n) {
    sb_abort(c("{.arg {arg}} must have one value per row of {.arg x}.",
               x = "{.arg {arg}} has length {length(y)} but {.arg x} has {n} row{?s}."),
             arg = arg, call = call)
  }
  if (any(!is.finite(y))) {
    sb_abort(c("{.arg {arg}} must contain only finite values.",
               x = "Found {sum(!is.finite(y))} NA/NaN/Inf value{?s}."), arg = arg, call = call)
  }
  as.double(y)
}

check_number <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(), lower = -Inf, upper = Inf,
                         lower_open = FALSE, upper_open = FALSE, allow_null = FALSE, what = "a number") {
  if (is.null(x) && allow_null) return(NULL)
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || is.infinite(x)) {
    sb_abort(c("{.arg {arg}} must be {what}.", x = "You supplied {.obj_type_friendly {x}}."),
             arg = arg, call = call)
  }
  below <- if (lower_open) x <= lower else x < lower
  above <- if (upper_open) x >= upper else x > upper
  if (below || above) {
    lo <- if (lower_open) "(" else "["
    hi <- if (upper_open) ")" else "]"
    sb_abort(c("{.arg {arg}} must lie in {lo}{lower}, {upper}{hi}.", x = "You supplied {x}."),
             arg = arg, call = call)
  }
  as.double(x)
}

# A whole number in [min, max]. `max` defaults to the largest R integer (larger values would become NA in
# as.integer() and reach C++ as INT_MIN); callers pass tighter, meaningful bounds and a `fix` hint.
check_count <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(), min = 1L, allow_null = FALSE,
                        max = .Machine$integer.max, fix = NULL) {
  if (is.null(x) && allow_null) return(NULL)
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || !is.finite(x) || x != round(x) || x < min) {
    sb_abort(c("{.arg {arg}} must be a whole number of at least {min}.",
               x = "You supplied {.val {format(x)}}."), arg = arg, call = call)
  }
  if (x > max) {
    sb_abort(c("{.arg {arg}} must be a whole number of at most {format(max, scientific = FALSE)}.",
               x = "You supplied {format(x)}.",
               i = if (is.null(fix)) "Use a smaller value." else fix), arg = arg, call = call)
  }
  as.integer(x)
}

# Upper bound on the number of entries of a result matrix (draws x parameters): 2^31 - 1 doubles (16 GiB).
check_result_size <- function(rows, cols, arg, call = rlang::caller_env()) {
  size <- as.double(rows) * as.double(cols)
  limit <- .Machine$integer.max
  if (size > limit) {
    sb_abort(c("The result would hold {format(size, digits = 3)} numbers ({format(size * 8 / 2^30, digits = 3)} GiB).",
               i = "Use a smaller {.arg {arg}} (at most {limit} draws x parameters in one call)."),
             arg = arg, call = call)
  }
  invisible(size)
}

# Threads: at most 1024 (the engines start one worker per thread).
max_threads <- 1024L

# match.arg() / rlang::arg_match() with the package's classed error: `arg` must be one of `choices` (by
# default the choices listed in the calling function's formals); the full default vector or NULL gives the
# first. `partial = TRUE` accepts unique abbreviations, as match.arg() does.
sb_match_arg <- function(arg, choices, partial = FALSE, call = rlang::caller_env()) {
  name <- as.character(substitute(arg))
  if (missing(choices)) {
    sys_p <- sys.parent()
    choices <- eval(formals(sys.function(sys_p))[[name]], envir = sys.frame(sys_p))
  }
  if (is.null(arg) || identical(arg, choices)) return(choices[1L])
  i <- if (!is.character(arg) || length(arg) != 1L || is.na(arg)) NA_integer_
       else if (partial) pmatch(arg, choices) else match(arg, choices)
  if (is.na(i)) {
    sb_abort(c("{.arg {name}} must be one of {.val {choices}}.",
               x = "You supplied {.val {format(arg)}}."), arg = name, call = call)
  }
  choices[i]
}

check_flag <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env()) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    sb_abort("{.arg {arg}} must be {.code TRUE} or {.code FALSE}.", arg = arg, call = call)
  }
  x
}

check_weights <- function(w, n, arg = rlang::caller_arg(w), call = rlang::caller_env(), positive = FALSE) {
  if (!is.numeric(w) || length(w) != n || any(!is.finite(w)) || any(w < 0) || (positive && any(w <= 0))) {
    need <- if (positive) "positive" else "non-negative"
    sb_abort(c("{.arg {arg}} must be a vector of {n} finite {need} numbers.",
               x = "It has length {length(w)}{if (length(w) == n) ' and invalid entries' else ''}."),
             arg = arg, call = call)
  }
  if (sum(w) <= 0) sb_abort("{.arg {arg}} must not be all zero.", arg = arg, call = call)
  as.double(w)
}

# Penalty values: NULL (chosen by the caller, e.g. by cross-validation) or finite non-negative numbers,
# returned in decreasing order (the order of a warm-started path). Shared by wbb(), weighted_lasso(),
# trend_filter() and generalized_lasso().
check_lambda <- function(lambda, call = rlang::caller_env()) {
  if (is.null(lambda)) return(NULL)
  if (!is.numeric(lambda) || !length(lambda) || any(!is.finite(lambda)) || any(lambda < 0)) {
    sb_abort(c("{.arg lambda} must be NULL or finite non-negative numbers.",
               x = "You supplied {.val {format(utils::head(lambda, 5))}}."), arg = "lambda", call = call)
  }
  sort(as.double(lambda), decreasing = TRUE)
}

# The one rule for a binomial response (wbb(), weighted_lasso(), sgld_sa()): a two-level factor (its second
# level is 1), logical, or 0/1 numbers; returned as doubles. both_classes: both classes must occur (the lasso's
# unpenalized intercept is infinite otherwise; a Bayesian fit with a proper prior does not need it).
binomial_response <- function(y, n, call = rlang::caller_env(), both_classes = TRUE, arg = "y") {
  if (is.factor(y)) {
    if (nlevels(y) != 2L) {
      sb_abort(c("{.arg {arg}} must have exactly two classes for {.code family = \"binomial\"}.",
                 x = "It has {nlevels(y)} level{?s}."), arg = arg, call = call)
    }
    y <- as.integer(y) - 1L
  }
  if (is.logical(y)) y <- as.integer(y)
  y <- check_y_vector(y, n, arg = arg, call = call)
  if (any(y != 0 & y != 1)) {
    sb_abort(c("{.arg {arg}} must be 0/1 (or logical, or a two-level factor) for {.code family = \"binomial\"}.",
               x = "Found other values, e.g. {.val {utils::head(unique(y[y != 0 & y != 1]), 3)}}."),
             arg = arg, call = call)
  }
  if (both_classes && length(unique(y)) < 2L) {
    sb_abort("{.arg {arg}} must contain both classes 0 and 1 for {.code family = \"binomial\"}.", arg = arg, call = call)
  }
  y
}
