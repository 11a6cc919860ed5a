# A network's chains that learned nothing a constant would not give warn (issue 56, item 6): plain HAMCMC with
# every default on a 5-20-20-1 MLP stays at the mean predictor; SGLD on the same data learns it and does not.
test_that("a network fit that stays at the constant prediction warns, one that learns does not", {
  skip_on_cran()
  skip_if_no_torch()
  set.seed(1)
  n <- 600
  x <- matrix(stats::rnorm(n * 5), n, 5)
  f0 <- function(x) sin(2 * x[, 1]) + x[, 2]^2 / 2 - x[, 3] * x[, 4]
  y <- f0(x) + stats::rnorm(n, sd = 0.5)
  warned <- function(expr) {
    cls <- character()
    withCallingHandlers(expr, warning = function(w) {
      cls <<- c(cls, class(w))
      invokeRestart("muffleWarning")
    })
    cls
  }
  w_h <- warned(f_h <- sgld_sa(x, y, sampler = "hamcmc", model = nn_mlp(c(20, 20)), epochs = 30, seed = 1, quiet = TRUE))
  expect_true("scalebayes_warning_not_learning" %in% w_h)
  expect_true("scalebayes_warning_convergence" %in% w_h)
  w_s <- warned(f_s <- sgld_sa(x, y, sampler = "sgld", model = nn_mlp(c(20, 20)), epochs = 30, seed = 1, quiet = TRUE))
  expect_false("scalebayes_warning_not_learning" %in% w_s)
  # the rule itself, both ways, on a trace
  tr <- data.frame(chain = rep(1:2, each = 10), iteration = rep(1:10, 2), loss = c(rep(0.49, 10), rep(0.2, 10)))
  expect_false(scalebayes:::nn_warn_not_learning(tr, 5, c(TRUE, TRUE), 0.5, 0.01, "SGLD"))
  expect_warning(expect_true(scalebayes:::nn_warn_not_learning(tr, 5, c(TRUE, FALSE), 0.5, 0.01, "SGLD")),
                 class = "scalebayes_warning_not_learning")
})
