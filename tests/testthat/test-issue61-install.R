# Issue 61, item 6: the package is compiled without debug information unless configure ran with
# SCALEBAYES_DEBUG=1, and RcppEigen's headers are system headers (their warnings stay out of the install log).

test_that("configure writes -g0 and RcppEigen as -isystem into src/Makevars; SCALEBAYES_DEBUG=1 keeps -g", {
  root <- normalizePath(file.path(testthat::test_path(), "..", ".."), mustWork = FALSE)
  skip_if_not(file.exists(file.path(root, "configure")) && file.exists(file.path(root, "src", "Makevars.in")),
              "not a source checkout (configure and src/Makevars.in are not in the installed tests)")
  skip_if(Sys.which("sh") == "", "no sh")
  run <- function(debug) {
    tmp <- withr::local_tempdir()
    dir.create(file.path(tmp, "src"))
    file.copy(file.path(root, "configure"), tmp)
    file.copy(file.path(root, "src", "Makevars.in"), file.path(tmp, "src"))
    env <- c(paste0("R_HOME=", R.home()), "SCALEBAYES_TORCH=no", paste0("SCALEBAYES_DEBUG=", debug))
    withr::with_dir(tmp, system2("sh", "configure", env = env, stdout = FALSE, stderr = FALSE))
    readLines(file.path(tmp, "src", "Makevars"))
  }
  mk <- run("0")
  expect_true(any(grepl("^\\$\\(OBJECTS\\): CXX17FLAGS \\+= -g0$", mk)))
  eigen <- system.file("include", package = "RcppEigen")
  expect_true(any(grepl(paste0("-isystem ", eigen), mk, fixed = TRUE)))
  expect_false(any(grepl("@SB_", mk, fixed = TRUE)))  # every placeholder substituted
  mk_debug <- run("1")
  expect_false(any(grepl("^\\$\\(OBJECTS\\): CXX17FLAGS \\+= -g0", mk_debug)))
  expect_true(any(grepl("^\\$\\(OBJECTS\\): CXX17FLAGS \\+= *$", mk_debug)))
})

test_that("the installed library carries no DWARF debug information (issue 61)", {
  skip_on_cran()
  skip_if(nzchar(Sys.getenv("SCALEBAYES_DEBUG")) && Sys.getenv("SCALEBAYES_DEBUG") != "0",
          "SCALEBAYES_DEBUG is set: a debug build")
  so <- list.files(system.file("libs", package = "scalebayes"), pattern = "\\.so$", full.names = TRUE)
  skip_if(!length(so) || Sys.which("readelf") == "", "no shared library or no readelf")
  sections <- system2("readelf", c("-S", "-W", shQuote(so[1])), stdout = TRUE)
  expect_false(any(grepl("\\.debug_info", sections)))
  # the code without its debug information: a few MB (89 MB with R's -g)
  expect_lt(file.size(so[1]), 20e6)
})
