#' Build and runtime information
#'
#' Reports the package version, the BLAS and LAPACK libraries R is using, the default number of threads,
#' the compiler standard, which optional back ends were compiled in, and for LibTorch its version, the
#' devices it can use and the threads per worker.
#' @return A list of class `scalebayes_info`, printed as a short report.
#' @export
#' @examples
#' scalebayes_info()
scalebayes_info <- function() {
  si <- utils::sessionInfo()
  blas <- si$BLAS
  if (is.null(blas)) blas <- NA_character_
  lapack <- si$LAPACK
  if (is.null(lapack)) lapack <- NA_character_
  b <- cpp_build_info()
  ti <- cpp_torch_info()
  structure(list(
    version = as.character(utils::packageVersion("scalebayes")),
    r_version = R.version.string,
    blas = blas, lapack = lapack,
    openblas = grepl("openblas", blas, ignore.case = TRUE),
    threads_default = sb_default_threads(),
    cores = parallel::detectCores(),
    eigen = b$eigen, cxx = b$cxx,
    backends = c(cpu = TRUE, libtorch = isTRUE(ti$available), cuda = b$cuda),
    torch = list(available = isTRUE(ti$available), version = ti$version, cuda_available = isTRUE(ti$cuda),
                 cuda_devices = ti$cuda_devices, threads_per_worker = 1L)
  ), class = "scalebayes_info")
}

#' @export
print.scalebayes_info <- function(x, ...) {
  cat("scalebayes ", x$version, " (", x$r_version, ")\n", sep = "")
  cat("BLAS:    ", x$blas, if (!x$openblas) "  [reference BLAS is ~5x slower: install libopenblas0-pthread]", "\n", sep = "")
  cat("LAPACK:  ", x$lapack, "\n", sep = "")
  cat("Threads: default ", x$threads_default, " of ", x$cores, " cores (option scalebayes.threads)\n", sep = "")
  cat("Engine:  C++", x$cxx, ", Eigen ", x$eigen, "\n", sep = "")
  cat("Backends:", paste0(names(x$backends), "=", ifelse(x$backends, "yes", "no"), collapse = " "), "\n")
  if (isTRUE(x$torch$available)) {
    cat("LibTorch: ", x$torch$version, "; devices: cpu", if (x$torch$cuda_available)
      paste0(", cuda (", x$torch$cuda_devices, " GPU", if (x$torch$cuda_devices > 1) "s", ")") else " (no CUDA device)",
      "; ", x$torch$threads_per_worker, " intra-op thread per worker\n", sep = "")
  } else {
    cat("LibTorch: not built (neural-network functions unavailable; see ?sb_torch_available)\n")
  }
  invisible(x)
}
