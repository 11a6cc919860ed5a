# CIFAR-10 in its binary format (the data of the pruning study of Deng, Zhang, Liang & Lin 2019, section 5.4).
# The data are not shipped (no offline copy exists on the project's registries); a user who has them points
# read_cifar10() at the directory of the binary version.

cifar10_classes <- c("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")

#' Read CIFAR-10 in its binary format
#'
#' Reads the "binary version" of CIFAR-10 (Krizhevsky 2009): files of records of 3,073 bytes, one label byte
#' (0-9) and 3,072 pixel bytes (the 1,024 red, then green, then blue values of a 32 x 32 image, rows first).
#' `path` is the directory holding `data_batch_1.bin` ... `data_batch_5.bin` and `test_batch.bin` (as unpacked
#' from `cifar-10-binary.tar.gz`), or one `.bin` file.
#'
#' @param path A directory of CIFAR-10 binary files, or the path of one file.
#' @param split `"train"` (the five data batches), `"test"` or `"both"`; ignored when `path` is a file.
#' @param scale Divide the pixels by 255.
#' @return A list with `x` (array examples x 3 x 32 x 32, channels red, green, blue) and `y` (factor with the
#'   ten class names), or for `split = "both"` a list with `train` and `test` such lists. The array layout is
#'   the one [sgld_sa()] and [wbb_nn()] take for convolutional networks.
#' @export
#' @examples
#' # a two-image file in the CIFAR-10 format
#' f <- tempfile(fileext = ".bin")
#' writeBin(as.raw(c(3, rep(0:255, 12), 9, rep(255:0, 12))), f)
#' d <- read_cifar10(f)
#' dim(d$x)
#' d$y
read_cifar10 <- function(path, split = c("both", "train", "test"), scale = TRUE) {
  split <- sb_match_arg(split)
  scale <- check_flag(scale)
  if (!is.character(path) || length(path) != 1L || is.na(path)) {
    sb_abort("{.arg path} must be a single directory or file path.", arg = "path")
  }
  if (!file.exists(path)) {
    sb_abort(c("{.file {path}} does not exist.",
               i = "Point {.arg path} at the directory unpacked from {.file cifar-10-binary.tar.gz}."),
             kind = "data", arg = "path")
  }
  if (!dir.exists(path)) return(cifar10_read_files(path, scale))
  files <- list(train = file.path(path, sprintf("data_batch_%d.bin", 1:5)), test = file.path(path, "test_batch.bin"))
  missing <- unlist(files[if (split == "both") c("train", "test") else split])
  missing <- missing[!file.exists(missing)]
  if (length(missing)) {
    sb_abort(c("CIFAR-10 file{?s} not found: {.file {basename(missing)}}.",
               i = "The binary version has {.file data_batch_1.bin} ... {.file data_batch_5.bin} and {.file test_batch.bin}."),
             kind = "data", arg = "path")
  }
  if (split != "both") return(cifar10_read_files(files[[split]], scale))
  list(train = cifar10_read_files(files$train, scale), test = cifar10_read_files(files$test, scale))
}

cifar10_read_files <- function(files, scale, call = rlang::caller_env()) {
  rec <- 3073
  parts <- lapply(files, function(f) {
    size <- file.size(f)
    if (is.na(size) || size == 0 || size %% rec != 0) {
      sb_abort(c("{.file {f}} is not a CIFAR-10 binary file.",
                 x = "Its size ({format(size, scientific = FALSE)} bytes) is not a multiple of the 3,073-byte record."),
               kind = "data", arg = "path", call = call)
    }
    m <- matrix(readBin(f, "raw", size), nrow = rec)  # one record per column
    labels <- as.integer(m[1, ])
    if (any(labels > 9L)) {
      sb_abort(c("{.file {f}} has label byte{?s} {unique(labels[labels > 9L])}: not a CIFAR-10 file.",
                 i = "CIFAR-10 labels are 0-9 (CIFAR-100 files have two label bytes)."),
               kind = "data", arg = "path", call = call)
    }
    list(y = labels, px = m[-1, , drop = FALSE])
  })
  n <- vapply(parts, function(p) length(p$y), integer(1))
  px <- as.integer(unlist(lapply(parts, `[[`, "px"), use.names = FALSE))
  # per image: channel, row, column (column fastest) -> R array [width, height, channel, image], then permute
  x <- array(if (scale) px / 255 else px, c(32L, 32L, 3L, sum(n)))
  x <- aperm(x, c(4L, 3L, 2L, 1L))  # examples x channels x rows x columns
  y <- factor(cifar10_classes[unlist(lapply(parts, `[[`, "y")) + 1L], levels = cifar10_classes)
  list(x = x, y = y)
}
