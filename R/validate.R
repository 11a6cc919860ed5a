# Argument validation shared by all fitting functions. Each check names the argument and the fix.

# The validators that reassign their input (check_x_matrix(), check_y_vector()) force `arg` first: its default,
# rlang::caller_arg(), reads the caller's expression lazily, and after the reassignment it would name the value
# (`<dbl[,5]>`) instead of the argument.
# sparse = TRUE: a Matrix sparse matrix is kept sparse (coerced to a dgCMatrix, the compressed columns the
# coordinate-descent engine reads; check_sparse_x()); otherwise it is made dense.
check_x_matrix <- function(x, arg = rlang::caller_arg(x), call = rlang::caller_env(), min_cols = 1L, min_rows = 2L,
                           sparse = FALSE) {
  force(arg)
  if (sparse && inherits(x, "sparseMatrix")) return(check_sparse_x(x, arg, call, min_cols, min_rows))
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
  if (!is.double(x)) storage.mode(x) <- "double"
  if (nrow(x) < min_rows) {
    sb_abort(c("{.arg {arg}} must have at least {min_rows} row{?s} (observation{?s}).",
               x = "It has {nrow(x)}."), arg = arg, call = call)
  }
  if (ncol(x) < min_cols) {
    sb_abort(c("{.arg {arg}} must have at least {min_cols} column{?s}.",
               x = "It has {ncol(x)} (p = 0)."), arg = arg, call = call)
  }
  # one pass in C++, no n x p logical temporary (is.finite(x) took 1.4 s at n = 1e6, p = 100)
  if (!cpp_all_finite(x)) {
    bad <- !is.finite(x)
    w <- which(bad, arr.ind = TRUE)[1, ]
    sb_abort(c("{.arg {arg}} must contain only finite values.",
               x = "Found {sum(bad)} NA/NaN/Inf value{?s}, the first at row {w[1]}, column {w[2]}.",
               i = "Remove or impute them before fitting."), arg = arg, call = call)
  }
  colnames(x) <- clean_colnames(colnames(x), ncol(x))
  x
}

# A sparse design (Matrix package) as a dgCMatrix (other classes coerced: triangular / symmetric to general,
# logical / pattern to double, row- or triplet-compressed to columns), with the checks of check_x_matrix():
# dimensions and finite non-zeros. No dense copy is made.
check_sparse_x <- function(x, arg, call, min_cols = 1L, min_rows = 2L) {
  if (!inherits(x, "dgCMatrix")) {
    x <- tryCatch(methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix"),
                  error = function(e) {
                    sb_abort(c("{.arg {arg}} could not be converted to a sparse numeric matrix (dgCMatrix).",
                               x = conditionMessage(e)), arg = arg, call = call)
                  })
  }
  if (!inherits(x, "dgCMatrix")) {
    sb_abort(c("{.arg {arg}} must be a numeric sparse matrix ({.cls dgCMatrix}).",
               x = "It converts to {.cls {class(x)[1]}}."), arg = arg, call = call)
  }
  n <- nrow(x); p <- ncol(x)
  if (n < min_rows) {
    sb_abort(c("{.arg {arg}} must have at least {min_rows} row{?s} (observation{?s}).", x = "It has {n}."),
             arg = arg, call = call)
  }
  if (p < min_cols) {
    sb_abort(c("{.arg {arg}} must have at least {min_cols} column{?s}.", x = "It has {p} (p = 0)."),
             arg = arg, call = call)
  }
  bad <- !is.finite(x@x)
  if (any(bad)) {
    k <- which(bad)[1]
    col <- findInterval(k - 1L, x@p, rightmost.closed = FALSE)
    sb_abort(c("{.arg {arg}} must contain only finite values.",
               x = "Found {sum(bad)} NA/NaN/Inf value{?s} among its non-zeros, the first at row {x@i[k] + 1L}, column {col}.",
               i = "Remove or impute them before fitting."), arg = arg, call = call)
  }
  dn <- dimnames(x)
  x@Dimnames <- list(dn[[1]], clean_colnames(dn[[2]], p))
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
  force(arg)  # before y is reassigned (see check_x_matrix())
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
  if (!is.numeric(x) || length(x) != 1L || is.na(x)) {
    sb_abort(c("{.arg {arg}} must be {what}.", x = "You supplied {.obj_type_friendly {x}}."),
             arg = arg, call = call)
  }
  if (is.infinite(x)) {
    # a number the engine uses: never Inf (the range says which finite values are allowed)
    sb_abort(c("{.arg {arg}} must be finite{number_range(lower, upper, lower_open, upper_open)}.",
               x = "You supplied {format(x)}.",
               i = if (what != "a number") "Allowed: {what}."),
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

# The finite range of check_number() in words: "" (any finite number), ": a number > 0", ": a number in [0, 1]".
number_range <- function(lower, upper, lower_open, upper_open) {
  lo <- is.finite(lower)
  hi <- is.finite(upper)
  if (lo && hi) {
    return(sprintf(": a number in %s%s, %s%s", if (lower_open) "(" else "[", format(lower), format(upper),
                   if (upper_open) ")" else "]"))
  }
  if (lo) return(sprintf(": a number %s %s", if (lower_open) ">" else ">=", format(lower)))
  if (hi) return(sprintf(": a number %s %s", if (upper_open) "<" else "<=", format(upper)))
  ""
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
# Also refused: a result larger than the memory available now (check_result_memory(), below).
check_result_size <- function(rows, cols, arg, call = rlang::caller_env()) {
  size <- as.double(rows) * as.double(cols)
  limit <- .Machine$integer.max
  if (size > limit) {
    sb_abort(c("The result would hold {format(size, digits = 3)} numbers ({format(size * 8 / 2^30, digits = 3)} GiB).",
               i = "Use a smaller {.arg {arg}} (at most {limit} draws x parameters in one call)."),
             arg = arg, call = call)
  }
  check_result_memory(8 * size, arg, call = call)
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
    got <- if (is.character(arg) && length(arg) == 1L) "You supplied {.val {arg}}." else
      "You supplied {.obj_type_friendly {arg}}."
    sb_abort(c("{.arg {name}} must be one of {.or {.val {choices}}}.", x = got), arg = name, call = call)
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

# ---- Memory of a result ---------------------------------------------------------------------------------------

# The memory available for a new result, in bytes: `options(scalebayes.available_memory = bytes)` when set,
# else MemAvailable of /proc/meminfo (Linux), else NA (unknown: only the count limit applies).
sb_available_memory <- function() {
  opt <- getOption("scalebayes.available_memory")
  if (!is.null(opt)) {
    if (!is.numeric(opt) || length(opt) != 1L || is.na(opt) || opt <= 0) {
      sb_abort(c("{.code options(scalebayes.available_memory = )} must be a positive number of bytes or NULL.",
                 x = "It is {.obj_type_friendly {opt}}."), arg = "scalebayes.available_memory")
    }
    return(as.double(opt))
  }
  if (!file.exists("/proc/meminfo")) return(NA_real_)
  lines <- tryCatch(readLines("/proc/meminfo", n = 20L, warn = FALSE), error = function(e) character())
  hit <- grep("^MemAvailable:", lines, value = TRUE)
  if (!length(hit)) return(NA_real_)
  kb <- suppressWarnings(as.double(strsplit(trimws(sub("^MemAvailable:", "", hit[1])), "[[:space:]]+")[[1]][1]))
  if (is.na(kb) || kb <= 0) NA_real_ else kb * 1024
}

# A size in bytes for a message: "812 kB", "3.2 MB", "17 GB" (powers of 1000).
format_bytes <- function(bytes) {
  units <- c("bytes", "kB", "MB", "GB", "TB", "PB")
  k <- max(1L, min(length(units), floor(log(max(bytes, 1), 1000)) + 1L))
  v <- bytes / 1000^(k - 1L)
  paste(format(signif(v, 3), big.mark = ",", scientific = FALSE, trim = TRUE), units[k])
}

# Refuse a result the machine cannot hold. bytes: the result's size (draws and everything returned with them);
# peak: the estimated peak memory of the call (the engine's buffers and R's copies while assembling the
# result; at least bytes). Two limits: a result of more than 2^31 - 1 doubles (R's matrix and the engine's
# buffers index them with int: a count limit, everywhere), and a peak above the memory available now
# (sb_available_memory(): Linux's MemAvailable, or options(scalebayes.available_memory); unknown elsewhere,
# where only the count limit applies). arg: the argument to reduce ("draws", "keep_draws", "iterations", ...);
# fix: what to do (a sentence; default "Use a smaller `arg`."). A default call on a normal machine never comes
# near either limit.
check_result_memory <- function(bytes, arg, fix = NULL, call = rlang::caller_env(), peak = bytes) {
  bytes <- as.double(bytes)
  peak <- max(as.double(peak), bytes)
  if (is.null(fix)) fix <- "Use a smaller {.arg {arg}}."
  if (bytes / 8 > .Machine$integer.max) {
    sb_abort(c("The result would hold {format(bytes / 8, digits = 3)} numbers ({format_bytes(bytes)}): more than one call can return (2^31 - 1).",
               i = fix), kind = "memory", arg = arg, call = call)
  }
  avail <- sb_available_memory()
  if (!is.na(avail) && peak > avail) {
    sb_abort(c("The result would need {format_bytes(bytes)} (about {format_bytes(peak)} at peak), but only {format_bytes(avail)} of memory is available.",
               i = fix), kind = "memory", arg = arg, call = call)
  }
  invisible(peak)
}

# ---- Single precision ------------------------------------------------------------------------------------------

# The largest float32 (networks train in single precision unless float64 = TRUE).
float32_max <- 3.4028234663852886e38

# A number the engine uses in single precision: |x| (and x^2 when squared, e.g. a standard deviation whose
# variance is formed) must be a float32. NULL / NA pass (checked elsewhere).
check_float32 <- function(x, arg, call = rlang::caller_env(), squared = FALSE, where = "sgmcmc_control") {
  if (is.null(x) || !is.numeric(x) || !length(x) || all(is.na(x))) return(invisible(x))
  lim <- if (squared) sqrt(float32_max) else float32_max
  big <- max(abs(x), na.rm = TRUE)
  if (is.finite(big) && big > lim) {
    sb_abort(c("{.arg {arg}} is {format(big, digits = 3)}: beyond single precision, which a network's engine uses (largest {format(lim, digits = 3)}{if (squared) ', as its square is formed' else ''}).",
               i = "Use a value below {format(lim, digits = 3)}, or train in double precision ({.code {where}(float64 = TRUE)})."),
             arg = arg, call = call)
  }
  invisible(x)
}

# The network path of sgld_sa(): every number of sgmcmc_control() and v0 / v1 the engine turns into a
# float32 scalar (unless control$float64).
check_nn_sgmcmc_float32 <- function(control, v0, v1, iterations, call = rlang::caller_env()) {
  check_anneal(control, iterations, float32 = !isTRUE(control$float64), call = call)
  if (isTRUE(control$float64)) return(invisible(control))
  counts <- c("anneal_every", "sa_start", "trace_every", "step_milestones", "init", "float64", "fixed_sigma", "prune",
              "diverge_loss")  # (diverge_loss is compared in double precision)
  for (nm in setdiff(names(control), counts)) {
    if (is.numeric(control[[nm]])) {
      check_float32(control[[nm]], nm, call, squared = nm %in% c("sigma_init", "likelihood_sd"))
    }
  }
  check_float32(v0, "v0", call, where = "sgmcmc_control")
  check_float32(v1, "v1", call, where = "sgmcmc_control")
  invisible(control)
}

# ---- Network minibatches ---------------------------------------------------------------------------------------

# A batch-norm layer that sees one value per channel from each example: training needs at least two examples per
# minibatch. tab: the layer table of nn_resolve(), whose needs_two column is the engine's rule
# (LayerPlan::needs_two_examples(), nn/layers_spec.hpp).
nn_needs_two_examples <- function(tab) any(tab$needs_two)

# The minibatch size of a network fit: NULL (the default) is min(50, n); a given size must not exceed n
# (wbb_nn() and sgld_sa() alike), and a network with batch norm needs at least two examples per minibatch
# (sgld_sa's minibatches all have batch_size examples; wbb_nn()'s engine merges a last minibatch of one
# example into the one before it, so only batch_size = 1 is refused). arg: how the user names it.
check_nn_batch_size <- function(batch_size, n, tab, arg = "batch_size", call = rlang::caller_env(),
                                in_control = FALSE) {
  if (is.null(batch_size)) batch_size <- min(50L, as.integer(n))
  where <- if (in_control) " in {.fn nn_control}" else ""
  if (batch_size > n) {
    sb_abort(c(paste0("{.arg {arg}}", where, " must not exceed the number of examples."),
               x = "batch_size = {batch_size} but {.arg x} has {n} example{?s}.",
               i = "Leave it out (the default is min(50, n)) or use at most {n}."), arg = arg, call = call)
  }
  if (batch_size < 2L && nn_needs_two_examples(tab)) {
    sb_abort(c(paste0("{.arg {arg}}", where, " must be at least 2 for a network with batch norm."),
               x = "A batch-norm layer needs more than one example per minibatch in training.",
               i = "Use a larger {.arg {arg}}, or a network without batch norm."), arg = arg, call = call)
  }
  as.integer(batch_size)
}

# Simulated annealing (sgmcmc_step(anneal, anneal_every, temperature)) over a run of `iterations`: the
# inverse temperature tau_k = temperature * anneal^floor(k / anneal_every) must stay a positive finite number
# up to the last iteration (double precision for regression, single for a network unless float64): a ratio
# that would drive it to Inf (or to 0) is an error naming `anneal`, with the largest (smallest) ratio the run
# length allows. Validated, never capped: a capped schedule would not be the one asked for.
check_anneal <- function(control, iterations, float32 = FALSE, call = rlang::caller_env()) {
  check_cycles(control, iterations, call = call)
  r <- control$anneal %||% 1
  if (r == 1) return(invisible(control))
  every <- control$anneal_every %||% 1L
  tau0 <- control$temperature %||% 1
  steps <- floor(as.double(iterations) / every)  # iterations k = 1..iterations (sgmcmc/chain.hpp)
  lim <- if (float32) float32_max else 1e300
  log_tau <- log(tau0) + steps * log(r)
  if (log_tau > log(lim) || log_tau < -log(lim)) {
    bound <- exp((sign(log(r)) * log(lim) - log(tau0)) / max(steps, 1))
    sb_abort(c("{.arg anneal} = {format(r)} drives the inverse temperature to {if (r > 1) 'infinity' else 'zero'} within the run: {format(tau0)} x {format(r)}^{format(steps)} after {format(iterations)} iterations.",
               i = "Use {.arg anneal} {if (r > 1) 'at most' else 'at least'} {format(bound, digits = 6)} for this run length (or a larger {.arg anneal_every}, or fewer iterations)."),
             arg = "anneal", call = call)
  }
  invisible(control)
}

# The cyclical schedule's cycles against the run length (checked with the annealing, the other setting of the
# step that depends on it): at most one cycle per iteration.
check_cycles <- function(control, iterations, call = rlang::caller_env()) {
  if (!identical(control$step_schedule, "cyclical")) return(invisible(control))
  if ((control$cycles %||% 1) > iterations) {
    sb_abort(c("{.arg cycles} = {control$cycles} exceeds the run's {format(iterations)} iterations.",
               i = "Use at most {format(iterations)} cycles (a few: each cycle's large steps explore, its small steps sample), or more iterations."),
             arg = "cycles", call = call)
  }
  invisible(control)
}

# A network fit must have at least one completed draw for its summaries and predictions (the fitting
# functions refuse to return one without, but a fit can be edited, combined or read back from disk).
check_nn_fit_done <- function(object, arg = "object", call = rlang::caller_env()) {
  st <- object$status
  if (is.null(st) || !any(st == "done")) {
    counts <- if (is.null(st)) "no status" else paste(format(table(droplevels(as.factor(st)))), names(table(droplevels(as.factor(st)))), collapse = ", ")
    sb_abort(c("{.arg {arg}} has no completed draw: nothing to summarise.",
               x = "Draw status: {counts}.",
               i = "Refit the network (e.g. with a lower {.arg lr} in {.fn nn_control}, or standardized inputs)."),
             kind = "convergence", arg = arg, call = call)
  }
  invisible(object)
}

# ---- Unknown arguments ---------------------------------------------------------------------------------------

# A settings function with `...` last (vi_control(), the parts of sgmcmc_control(); sgmcmc_control() itself takes
# the deprecated flat names there, R/sgmcmc_control.R) refuses whatever reached its dots: a
# misspelt name is an error naming it and the closest valid name (base R's "unused argument" names neither the
# function's arguments nor a fix). dots_names: ...names() of the caller (NULL when none is named); n: ...length().
check_unknown_args <- function(dots_names, n, fun, call = rlang::caller_env()) {
  if (n == 0L) return(invisible())
  valid <- setdiff(names(formals(fun, envir = asNamespace("scalebayes"))), "...")
  nm <- if (is.null(dots_names)) rep("", n) else dots_names
  named <- nm[!is.na(nm) & nzchar(nm)]
  if (!length(named)) {
    sb_abort(c("{.fn {fun}} takes named arguments only after its {length(valid)} settings.",
               x = "It got {n} more unnamed argument{?s}.",
               i = "Name every setting, e.g. {.code {fun}({valid[1]} = )}; see {.code ?{fun}}."),
             arg = "...", call = call)
  }
  bad <- named[1]
  d <- utils::adist(bad, valid, ignore.case = TRUE)[1, ]
  best <- valid[which.min(d)]
  sb_abort(c("{.fn {fun}} has no argument {.arg {bad}}.",
             i = "Did you mean {.arg {best}}? The settings are listed in {.code ?{fun}}."),
           arg = bad, call = call)
}

# ---- Scale --------------------------------------------------------------------------------------------------

# The sums of squares of the (centred) columns of x (a vector: one column) must be finite: a sampler or solver
# that forms x'x or a residual sum of squares would otherwise return Inf / NaN or blame the wrong setting. An
# error of kind "scaling" naming `arg`, with a power of two to divide by (which changes no digit of the data).
check_square_sums <- function(x, arg, call = rlang::caller_env()) {
  m <- if (is.matrix(x)) x else matrix(x, ncol = 1L)
  ss <- colSums(sweep(m, 2L, colMeans(m))^2) + colMeans(m)^2 * nrow(m)
  bad <- which(!is.finite(ss))
  if (!length(bad)) return(invisible(x))
  big <- max(abs(m[, bad]))
  where <- if (is.matrix(x)) " of column {bad[1]}" else ""
  sb_abort(c(paste0("{.arg {arg}} is too large: the sum of squares", where, " overflows double precision (values as large as {format(big, digits = 3)})."),
             i = "Rescale {.arg {arg}} (e.g. divide by {format(2^round(log2(big)), digits = 3)}); the results scale back by the same factor."),
           arg = arg, kind = "scaling", call = call)
}

# `family` given as a family object (`binomial()`, as glm() takes it): its name, for the canonical links the GLM
# engines fit (identity, logit, log); another link is an error saying what to give (issue 61).
sb_family_arg <- function(family, call = rlang::caller_env()) {
  if (!inherits(family, "family")) return(family)
  canon <- c(gaussian = "identity", binomial = "logit", poisson = "log")
  fam <- family$family
  link <- family$link
  if (!is.character(fam) || length(fam) != 1L || !fam %in% names(canon) || !identical(link, canon[[fam]])) {
    sb_abort(c("{.arg family} {.code {fam}(link = \"{link}\")} is not available: the engines fit the canonical links.",
               i = "Give {.code family = \"gaussian\"}, {.code \"binomial\"} (logit link) or {.code \"poisson\"} (log link), as a string or as {.code binomial()}."),
             arg = "family", call = call)
  }
  fam
}
