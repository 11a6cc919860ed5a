#!/usr/bin/env bash
# The test suite: set up (idempotent; installs the package from this checkout), then run tests/testthat
# against the installed package. The long reproductions live in vignettes/precompute-*.R and bench/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
export NOT_CRAN=true
Rscript --vanilla -e '
  suppressPackageStartupMessages({ library(testthat); library(scalebayes) })
  res <- as.data.frame(testthat::test_dir("tests/testthat", package = "scalebayes", load_package = "installed",
                                          reporter = testthat::ProgressReporter$new(show_praise = FALSE),
                                          stop_on_failure = FALSE))
  failed <- sum(res$failed) + sum(res$error)
  skipped <- sum(res$skipped)
  passed <- sum(res$passed)
  cat(sprintf("\n%d passed, %d failed, %d skipped\n", passed, failed, skipped))
  quit(status = if (failed > 0) 1 else 0)
'
