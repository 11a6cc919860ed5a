#!/usr/bin/env bash
# The test suite: set up (idempotent; installs the package from this checkout, with its test hooks), then run
# tests/testthat against the installed package. The long reproductions live in vignettes/precompute-*.R and bench/.
#
# Two tiers (tests/README, "Test tiers"), chosen by one environment variable, SCALEBAYES_TESTS:
#   fast  unit tests, statistical checks at small sizes, error classes: the developer's inner loop (769 s
#         on a loaded 2-core VM, about 23 % of the full run: bench/RESULTS.md, "Test tiers"); the default of a plain testthat run (NOT_CRAN=true, SCALEBAYES_TESTS unset)
#   full  the fast tier plus the extended one: the defaults-on-real-data runs, NUTS and exact checks at full
#         length, the interrupt latencies (skip_if_fast_tier() in tests/testthat/helper-tiers.R)
# Usage: bash tools/run-tests.sh          both tiers in one run (SCALEBAYES_TESTS=full): the README's test
#                                         command, and what CI (.ci/run) runs
#        bash tools/run-tests.sh --fast   the fast tier only
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tier=full
case "${1:-}" in
  "" | --full) ;;
  --fast) tier=fast ;;
  *) echo "usage: bash tools/run-tests.sh [--fast | --full]" >&2; exit 2 ;;
esac
# the test hooks (src/test_hooks.h): the C++ entry points only the tests call
export SCALEBAYES_TEST_HOOKS=1
bash tools/setup.sh
export NOT_CRAN=true SCALEBAYES_TESTS="$tier"
Rscript --vanilla -e '
  suppressPackageStartupMessages({ library(testthat); library(scalebayes) })
  t0 <- proc.time()[["elapsed"]]
  res <- as.data.frame(testthat::test_dir("tests/testthat", package = "scalebayes", load_package = "installed",
                                          reporter = testthat::ProgressReporter$new(show_praise = FALSE),
                                          stop_on_failure = FALSE))
  failed <- sum(res$failed) + sum(res$error)
  skipped <- sum(res$skipped)
  passed <- sum(res$passed)
  cat(sprintf("\n%d passed, %d failed, %d skipped (tier %s, %.0f s)\n", passed, failed, skipped,
              Sys.getenv("SCALEBAYES_TESTS"), proc.time()[["elapsed"]] - t0))
  quit(status = if (failed > 0) 1 else 0)
'
