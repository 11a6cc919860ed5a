# The network step-size warm-up of sgld_sa(model = ) (issue 61 item 5: 10-15 s with nothing shown before) shows a
# progress bar on the main thread, from its start, and quiet = TRUE silences it. cli's "logger" handler writes one
# line per bar event to stdout, so the bar is seen without a terminal.
test_that("the network warm-up shows its progress unless quiet", {
  skip_on_cran()
  skip_if_not(sb_torch_available())
  set.seed(1)
  x <- matrix(rnorm(200 * 3), 200, 3)
  y <- x[, 1] + rnorm(200)
  run <- function(quiet) {
    withr::local_options(cli.progress_handlers_only = "logger")
    utils::capture.output(fit <- suppressWarnings(
      sgld_sa(x, y, model = nn_mlp(4), iterations = 2000, chains = 2, seed = 1, quiet = quiet)))
  }
  shown <- run(FALSE)
  # the warm-up's bar: pilots of 200 iterations (max(200, 2000 / 50)), 5 + 3 x 2 + 2 x 4 rounds and a back-off
  # pilot: 20 x 200 = 4,000 pilot iterations; it is created before the first pilot and finishes
  expect_true(any(grepl("0/4000 created", shown, fixed = TRUE)))
  expect_true(any(grepl("/4000 terminated", shown, fixed = TRUE)))
  expect_length(run(TRUE), 0L)
})
