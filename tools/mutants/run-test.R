# Run one test file against the scalebayes installed in the first library of R_LIBS (used by
# tools/mutation-check.sh). Prints "PASS <n expectations>" or "FAIL <first failing test>" as its last line;
# exit status 0 when every expectation passed, 1 otherwise.
args <- commandArgs(trailingOnly = TRUE)
Sys.setenv(NOT_CRAN = "true")
# both test tiers (tests/testthat/helper-tiers.R): a mutant killed only by an extended-tier test is killed
if (!nzchar(Sys.getenv("SCALEBAYES_TESTS"))) Sys.setenv(SCALEBAYES_TESTS = "full")
suppressPackageStartupMessages(library(testthat))
res <- tryCatch(
  as.data.frame(testthat::test_file(args[1], package = "scalebayes", load_package = "installed",
                                    reporter = testthat::SummaryReporter$new(show_praise = FALSE, max_reports = 3), stop_on_failure = FALSE)),
  error = function(e) e
)
if (inherits(res, "error")) {
  cat("\nFAIL (the file stopped: ", gsub("[\t\n]", " ", conditionMessage(res)), ")\n", sep = "")
  quit(status = 1L)
}
bad <- res$failed > 0 | res$error
if (any(bad)) {
  cat("\nFAIL ", gsub("[\t\n]", " ", res$test[which(bad)[1]]), "\n", sep = "")
  quit(status = 1L)
}
cat("\nPASS ", sum(res$nb), " expectations, ", sum(res$skipped), " tests skipped\n", sep = "")
quit(status = 0L)
