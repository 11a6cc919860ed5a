# The two test tiers (tests/README, "Test tiers"), chosen by one environment variable:
#   SCALEBAYES_TESTS=fast  (the default) unit tests, statistical checks at small sizes, error classes: the
#                          developer's inner loop (bash tools/run-tests.sh --fast; measured: bench/RESULTS.md, "Test tiers")
#   SCALEBAYES_TESTS=full  the fast tier plus the extended one: the defaults-on-real-data runs, NUTS and exact
#                          checks at full length, the interrupt latencies (bash tools/run-tests.sh, CI)
# A test of the extended tier calls skip_if_fast_tier() first. The extended tier runs only where it is asked
# for (NOT_CRAN=true and SCALEBAYES_TESTS=full): on CRAN and in R CMD check (NOT_CRAN unset, tools/check.sh) it
# skips, as skip_on_cran() would, so a check runs at most the fast tier (and each fast test's own
# skip_on_cran() still applies). tools/run-tests.sh, the README's command, runs both tiers before the check.
# Moving a test to the extended tier moves it whole: it keeps every assertion.

sb_test_tier <- function() {
  tier <- tolower(Sys.getenv("SCALEBAYES_TESTS", "fast"))
  if (!nzchar(tier)) tier <- "fast"
  if (!tier %in% c("fast", "full"))
    stop(sprintf("SCALEBAYES_TESTS must be \"fast\" or \"full\", not \"%s\"", tier), call. = FALSE)
  tier
}

skip_if_fast_tier <- function() {
  if (!isTRUE(as.logical(Sys.getenv("NOT_CRAN", "false"))))  # as skip_on_cran() reads it
    testthat::skip("extended tier: not on CRAN (NOT_CRAN=true SCALEBAYES_TESTS=full runs it)")
  if (sb_test_tier() == "fast")
    testthat::skip("extended tier (SCALEBAYES_TESTS=full or bash tools/run-tests.sh runs it)")
  invisible(TRUE)
}
