# The two test tiers (tests/README, "Test tiers"), chosen by one environment variable:
#   SCALEBAYES_TESTS=fast  (the default) unit tests, statistical checks at small sizes, error classes: the
#                          developer's inner loop (bash tools/run-tests.sh --fast; measured: bench/RESULTS.md, "Test tiers")
#   SCALEBAYES_TESTS=full  the fast tier plus the extended one: the defaults-on-real-data runs, NUTS and exact
#                          checks at full length, the interrupt latencies (bash tools/run-tests.sh, CI)
# A test of the extended tier calls skip_if_fast_tier() first. The tiers apply where the long tests run at all,
# i.e. with NOT_CRAN=true: on CRAN (NOT_CRAN unset) skip_if_fast_tier() does nothing and every test behaves as
# its own skip_on_cran() says, so R CMD check runs what it ran before the tiers existed. Moving a test to the
# extended tier moves it whole: it keeps every assertion.

sb_test_tier <- function() {
  tier <- tolower(Sys.getenv("SCALEBAYES_TESTS", "fast"))
  if (!nzchar(tier)) tier <- "fast"
  if (!tier %in% c("fast", "full"))
    stop(sprintf("SCALEBAYES_TESTS must be \"fast\" or \"full\", not \"%s\"", tier), call. = FALSE)
  tier
}

skip_if_fast_tier <- function() {
  if (!isTRUE(as.logical(Sys.getenv("NOT_CRAN", "false")))) return(invisible(TRUE))  # as skip_on_cran() reads it
  if (sb_test_tier() == "fast")
    testthat::skip("extended tier (SCALEBAYES_TESTS=full or bash tools/run-tests.sh runs it)")
  invisible(TRUE)
}
