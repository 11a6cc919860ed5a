# The engine's own C++ unit tests (tests/cpp, see its README): built with the system compiler against the
# headers (the source tree's inst/include when present, else the installed package's) and run; any failing
# C++ test fails here. About a minute, most of it compiling Eigen code (two programs at a time).
test_that("the C++ unit tests of the engine headers pass", {
  skip_if_fast_tier()
  skip_on_cran()
  cpp_dir <- normalizePath(test_path("..", "cpp"), mustWork = FALSE)
  skip_if_not(file.exists(file.path(cpp_dir, "Makefile")), "tests/cpp is not part of this copy of the package")
  make <- Sys.which("make")
  cxx <- Sys.getenv("CXX", "g++")
  skip_if(!nzchar(make) || !nzchar(Sys.which(cxx)),
          sprintf("the C++ engine tests need make and a C++17 compiler (%s) on the PATH", cxx))
  eigen <- system.file("include", package = "RcppEigen")
  skip_if(!nzchar(eigen), "RcppEigen's headers are not installed")
  inc <- normalizePath(file.path(cpp_dir, "..", "..", "inst", "include"), mustWork = FALSE)
  if (!dir.exists(file.path(inc, "scalebayes"))) inc <- system.file("include", package = "scalebayes")
  build <- file.path(tempdir(), "scalebayes-cpp-tests")
  # the five programs compile two at a time, through ccache where it is installed (a rerun compiles nothing)
  if (nzchar(Sys.which("ccache"))) cxx <- paste("ccache", cxx)
  out <- suppressWarnings(system2(make, c("-s", "-j2", "-C", shQuote(cpp_dir), paste0("CXX=", shQuote(cxx)),
                                          paste0("SB_INCLUDE=", shQuote(inc)), paste0("EIGEN=", shQuote(eigen)),
                                          paste0("BUILD=", shQuote(build)), "run"),
                                  stdout = TRUE, stderr = TRUE))
  status <- attr(out, "status")
  if (is.null(status)) status <- 0L
  summaries <- grep("^[0-9]+ passed, [0-9]+ failed", out, value = TRUE)
  # all five programs ran to their summary, and none reported a failure
  expect_equal(length(summaries), 5L, info = paste(utils::tail(out, 60), collapse = "\n"))
  expect_true(all(grepl(" 0 failed", summaries)), info = paste(grep("FAIL", out, value = TRUE), collapse = "\n"))
  expect_equal(status, 0L, info = paste(utils::tail(out, 60), collapse = "\n"))
})
