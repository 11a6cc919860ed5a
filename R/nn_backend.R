# The LibTorch backend: availability, devices, and the data conversions shared by every neural function.

#' Is the LibTorch neural-network backend available?
#'
#' The neural-network functions ([wbb_nn()]) need scalebayes to have been built against LibTorch (see
#' [scalebayes_info()]). Use this to skip network code where the backend is absent.
#' @param device `"cpu"` or `"cuda"`: also require that device.
#' @return `TRUE` or `FALSE`.
#' @export
#' @examples
#' sb_torch_available()
sb_torch_available <- function(device = c("cpu", "cuda")) {
  device <- sb_match_arg(device)
  info <- cpp_torch_info()
  isTRUE(info$available) && (device == "cpu" || isTRUE(info$cuda))
}

# Stops with a classed error unless the backend (and the requested device) is there; returns the device.
check_backend <- function(device, call = rlang::caller_env()) {
  info <- cpp_torch_info()
  if (!isTRUE(info$available)) {
    sb_abort(c("This installation of scalebayes was built without the LibTorch backend that neural networks need.",
               i = "Install LibTorch (Debian: {.code apt-get install libtorch-dev}, or set {.envvar LIBTORCH_HOME} to a LibTorch distribution) and reinstall scalebayes.",
               i = "{.code scalebayes_info()} shows what was built."),
             kind = "backend", call = call)
  }
  if (!is.character(device) || length(device) != 1L || !device %in% c("cpu", "cuda", "auto")) {
    sb_abort(c("{.arg device} must be {.val cpu}, {.val cuda} or {.val auto}.",
               x = "You supplied {.obj_type_friendly {device}}."), arg = "device", call = call)
  }
  if (device == "cuda" && !isTRUE(info$cuda)) {
    sb_abort(c("{.code device = \"cuda\"} was requested, but no CUDA device is available to this LibTorch build ({info$version}).",
               i = "Use {.code device = \"cpu\"} (or {.code \"auto\"}), or reinstall scalebayes against a CUDA LibTorch ({.envvar LIBTORCH_HOME}) on a machine with a GPU."),
             kind = "backend", arg = "device", call = call)
  }
  sb_call_engine(cpp_nn_resolve_device(device), call = call)  # "auto": the engine's one rule (nn::resolve_device, nn/data.hpp)
}

# Network inputs: a numeric matrix (n x features), or an array n x height x width (one channel) or
# n x channels x height x width. Returns the data as a double array (R's column-major layout, n first)
# and the shape of one example. warn_scale = FALSE: no warning for values that overflow single precision (the
# front end standardizes them in double precision first).
nn_prepare_x <- function(x, arg = "x", call = rlang::caller_env(), warn_scale = TRUE) {
  if (is.data.frame(x)) x <- check_x_matrix(x, arg = arg, call = call)
  d <- dim(x)
  if (!is.numeric(x) && !is.logical(x) || is.null(d) || length(d) < 2L || length(d) > 4L) {
    sb_abort(c("{.arg {arg}} must be a numeric matrix (examples x features) or an array (examples x [channels x] height x width).",
               x = "You supplied {.obj_type_friendly {x}}{if (!is.null(d)) paste0(' with dim ', paste(d, collapse = ' x ')) else ''}."),
             arg = arg, call = call)
  }
  if (d[1] < 1L || any(d[-1] < 1L)) {
    sb_abort("{.arg {arg}} has an empty dimension ({paste(d, collapse = ' x ')}).", arg = arg, call = call)
  }
  r <- suppressWarnings(range(x))  # NA if any NA/NaN; +-Inf if any infinite: no copy of x
  if (anyNA(r) || any(is.infinite(r))) {
    sb_abort(c("{.arg {arg}} must contain only finite values.",
               x = "Found {sum(!is.finite(x))} NA/NaN/Inf value{?s} (e.g. missing pixels).",
               i = "Remove or impute them before fitting."), arg = arg, call = call)
  }
  big <- max(abs(r))
  if (big > 1e30) {
    sb_abort(c("{.arg {arg}} has values as large as {format(big, digits = 3)}: beyond what a network can train on (single precision ends at 3.4e38).",
               i = "Standardize the inputs (e.g. {.code scale()}), or divide images by 255."), arg = arg, call = call)
  }
  if (warn_scale) nn_warn_scale(big, arg, "inputs")
  if (length(d) == 3L) d <- c(d[1], 1L, d[2], d[3])
  storage.mode(x) <- "double"
  dim(x) <- d
  list(x = x, dim = as.integer(d), shape = as.integer(d[-1]), n = as.integer(d[1]))
}

# Responses: family chosen from y when NULL (factor with more than two levels: multinomial; two-level
# factor or logical: binomial; numeric: gaussian). Returns codes 0..K-1 (multinomial), 0/1 (binomial) or
# values, with the class levels and q, the number of responses per example: gaussian and binomial y may be
# an n x q matrix (q outputs, one loss each; y comes back as that matrix), multinomial y is one class per
# example. q_expected (newy): the q of the training responses.
# The family a numeric or logical response implies when none is given: logical or 0/1 -> binomial; other
# numbers -> gaussian, with a classed warning when they look like class labels (a few distinct non-negative
# integers), which a factor would fit as classes.
nn_default_family <- function(y, arg, call) {
  if (is.logical(y)) return("binomial")
  if (!is.numeric(y)) return("gaussian")
  if (is.double(y) && length(y) > 1000L && any(y[seq_len(1000L)] != round(y[seq_len(1000L)]), na.rm = TRUE)) {
    return("gaussian")  # a non-integer among the first values: no need for unique() over millions
  }
  v <- unique(as.vector(y))
  v <- v[is.finite(v)]
  if (length(v) && all(v %in% c(0, 1))) return("binomial")
  if (length(v) >= 3L && length(v) <= 100L && all(v >= 0) && all(v == round(v))) {
    sb_warn(c("{.arg {arg}} holds {length(v)} distinct non-negative integers, which look like class labels; fitting a gaussian network.",
              i = "For classes use {.code factor({arg})}; to fit numbers and silence this, give {.code family = \"gaussian\"}."),
            kind = "family")
  }
  "gaussian"
}

nn_prepare_y <- function(y, n, family, levels = NULL, arg = "y", call = rlang::caller_env(), q_expected = NULL,
                         warn_scale = TRUE) {
  if (is.data.frame(y)) y <- as.matrix(y)
  if (is.matrix(y) && ncol(y) == 1L) y <- drop(y)
  q <- if (is.matrix(y)) ncol(y) else 1L
  if (!is.null(q_expected) && q != q_expected) {
    sb_abort(c("{.arg {arg}} must have {q_expected} column{?s}, one per output of the network.",
               x = "It has {q}."), kind = "input", arg = arg, call = call)
  }
  if (q != 1L) {
    if (q < 1L || nrow(y) != n) {
      sb_abort(c("{.arg {arg}} must be a vector with one value per example or a matrix with one row per example.",
                 x = "It is {nrow(y)} x {q}; the inputs have {n} example{?s}."), arg = arg, call = call)
    }
    if (anyNA(y)) sb_abort("{.arg {arg}} must not contain NA ({sum(is.na(y))} found).", arg = arg, call = call)
    if (is.null(family)) family <- nn_default_family(y, arg, call)
    if (family == "multinomial") {
      sb_abort(c("A {.code \"multinomial\"} response is one class per example: {.arg {arg}} must be a vector or factor.",
                 x = "It is a matrix with {q} columns.",
                 i = "For several 0/1 outputs use {.code family = \"binomial\"}; for several numeric outputs {.code \"gaussian\"}."),
               arg = arg, call = call)
    }
    if (!is.numeric(y) && !is.logical(y)) {
      sb_abort("{.arg {arg}} must be a numeric or logical matrix.", arg = arg, call = call)
    }
    storage.mode(y) <- "double"
    if (family == "gaussian" && any(!is.finite(y))) {
      sb_abort("For {.code family = \"gaussian\"}, {.arg {arg}} must be finite numbers.", arg = arg, call = call)
    }
    if (family == "binomial" && any(y != 0 & y != 1)) {
      sb_abort(c("{.arg {arg}} must be 0/1 (or logical) for {.code family = \"binomial\"}.",
                 x = "Found other values, e.g. {.val {utils::head(unique(y[y != 0 & y != 1]), 3)}}."),
               arg = arg, call = call)
    }
    dimnames(y) <- NULL
    if (family == "gaussian" && warn_scale) nn_warn_scale(max(abs(y)), arg, "responses")
    return(list(y = y, family = family, levels = if (family == "binomial") c("0", "1"), q = q))
  }
  if (length(y) != n) {
    sb_abort(c("{.arg {arg}} must have one value per example.",
               x = "It has length {length(y)}, the inputs have {n} example{?s}."), arg = arg, call = call)
  }
  if (anyNA(y)) sb_abort("{.arg {arg}} must not contain NA ({sum(is.na(y))} found).", arg = arg, call = call)
  if (is.null(family)) {
    family <- if (is.factor(y) || is.character(y)) {
      if (length(unique(y)) > 2L || (is.factor(y) && nlevels(y) > 2L)) "multinomial" else "binomial"
    } else nn_default_family(y, arg, call)
  }
  if (family == "gaussian") {
    if (!is.numeric(y) || any(!is.finite(y))) {
      sb_abort(c("For {.code family = \"gaussian\"}, {.arg {arg}} must be finite numbers.",
                 i = "For class labels use {.code family = \"multinomial\"} or {.code \"binomial\"}."), arg = arg, call = call)
    }
    if (warn_scale) nn_warn_scale(max(abs(y)), arg, "responses")
    return(list(y = as.double(y), family = family, levels = NULL, q = 1L))
  }
  if (family == "multinomial" && is.numeric(y) && any(y != round(y))) {
    sb_abort(c("{.arg {arg}} must be class labels for {.code family = \"multinomial\"}: a factor, or whole numbers.",
               x = "Found values that are not whole numbers, e.g. {.val {signif(utils::head(unique(y[y != round(y)]), 3), 3)}}.",
               i = "For a numeric response use {.code family = \"gaussian\"}."), arg = arg, call = call)
  }
  if (family == "binomial" && (is.numeric(y) || is.logical(y))) {
    # the package's one binomial rule (0/1 or logical), as for the GLMs; class labels "0"/"1"
    y <- binomial_response(y, n, call = call, both_classes = is.null(levels), arg = arg)
    y <- factor(y, levels = 0:1)
    if (is.null(levels)) levels <- c("0", "1")
  }
  if (is.null(levels)) {
    f <- if (is.factor(y)) droplevels(y) else factor(y)
    levels <- levels(f)
  } else {
    unseen <- setdiff(unique(as.character(y)), levels)
    if (length(unseen)) {
      sb_abort(c("{.arg {arg}} has label{?s} the model was not trained on: {.val {unseen}}.",
                 i = "Training labels: {.val {levels}}."), arg = arg, call = call)
    }
    f <- factor(as.character(y), levels = levels)
  }
  k <- length(levels)
  if (family == "binomial" && k > 2L) {
    sb_abort(c("{.code family = \"binomial\"} needs two classes; {.arg {arg}} has {k}.",
               i = "Use {.code family = \"multinomial\"}."), arg = arg, call = call)
  }
  if (k < 2L) {
    sb_abort("{.arg {arg}} must contain at least two classes (it has {k}).", arg = arg, call = call)
  }
  list(y = as.double(as.integer(f) - 1L), family = family, levels = levels, q = 1L)
}

# Test inputs of a network: prepared like x and required to have its example shape (NULL stays NULL).
nn_prepare_newx <- function(newx, xd, call = rlang::caller_env(), warn_scale = TRUE) {
  if (is.null(newx)) return(NULL)
  nd <- nn_prepare_x(newx, "newx", call, warn_scale = warn_scale)
  if (!identical(nd$shape, xd$shape)) {
    sb_abort(c("{.arg newx} must have the example shape of {.arg x}.",
               x = "{.arg x}: {paste(xd$shape, collapse = ' x ')}; {.arg newx}: {paste(nd$shape, collapse = ' x ')}."),
             arg = "newx", call = call)
  }
  nd
}

# Values this large train in single precision only by luck: squares and products overflow float32 (3.4e38)
# and the loss or its gradient becomes Inf / NaN (such draws end with status "diverged"). A classed warning
# (class scalebayes_warning_scaling) at input preparation says so and how to avoid it.
nn_scale_warn_above <- 1e15
nn_warn_scale <- function(big, arg, what) {
  if (is.finite(big) && big > nn_scale_warn_above) {
    sb_warn(c("{.arg {arg}} has {what} as large as {format(big, digits = 3)}: single-precision training is likely to overflow (non-finite loss or gradient).",
              i = "Standardize them ({.code standardize = TRUE}, the default of the network front ends, or {.code scale()}), or train in double precision ({.code float64 = TRUE})."),
            kind = "scaling")
  }
  invisible(NULL)
}
