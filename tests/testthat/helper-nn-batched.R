# Two WBB network fits with the same draws (test-nn-batched.R, test-nn-batched-conv.R): parameters,
# predictions, certificates, histories, statuses and steps equal within `tol` (0: identical).
same_draws <- function(a, b, tol = 0) {
  expect_equal(as.matrix(a), as.matrix(b), tolerance = tol)
  expect_equal(a$pred, b$pred, tolerance = tol)
  expect_equal(a$objective, b$objective, tolerance = tol)
  expect_equal(a$grad_norm, b$grad_norm, tolerance = tol)
  expect_equal(a$history, b$history, tolerance = tol)
  expect_identical(a$status, b$status)
  expect_identical(a$steps, b$steps)
}
