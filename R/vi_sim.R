# The sparse nonlinear regression problem of Bai, Song and Cheng (2020), Figure 1, generated as in the authors'
# simulation script (inst/design-vi-reference.md, section 1.1): x ~ U(-1, 1)^p, y = f0(x) + N(0, noise_sd^2) with
# f0(x) = 7 x2 / (1 + x1^2) + 5 sin(x3 x4) + 2 x5. Drawn with R's own generators under a local seed.

#' Simulated data of the sparse variational BNN paper (Bai, Song and Cheng 2020)
#'
#' Generates the nonlinear regression problem of Figure 1 of Bai, Song and Cheng (2020) as the authors'
#' simulation script does: `x` has independent `U(-1, 1)` entries, only the first five inputs matter,
#' \deqn{y = \frac{7 x_2}{1 + x_1^2} + 5 \sin(x_3 x_4) + 2 x_5 + \epsilon, \quad \epsilon \sim N(0, 1).}
#' The test responses carry the same noise, so a perfect fit has a test RMSE of about `noise_sd`. The
#' authors use `n = 3000`, `n_test = 10000`, `p = 200` and 30 training sets with one common test set; call
#' this function with 30 seeds for the replicates.
#'
#' The numbers come from R's own generators (Mersenne-Twister, inversion) under a local seed: the random
#' state of the session is neither used (unless `seed = NULL`) nor changed. Matrices are filled row by row in
#' the order training inputs, training noise, test inputs, test noise.
#' @param n Number of training points.
#' @param n_test Number of test points.
#' @param p Number of inputs (at least 5; inputs 6 to `p` are noise).
#' @param seed Seed (`NULL`: drawn from R's RNG, so [set.seed()] works).
#' @param noise_sd Standard deviation of the Gaussian noise (the authors: 1).
#' @return A list with `x` (`n` x `p`), `y` (length `n`), `x_test`, `y_test`, `truth` (the function
#'   \eqn{f_0}: takes a matrix with at least five columns, or one input vector, and returns the noise-free
#'   mean), `active` (`1:5`, the inputs `truth` depends on) and `noise_sd`.
#' @references Bai, J., Song, Q. and Cheng, G. (2020). Efficient variational inference for sparse deep
#'   learning with theoretical guarantee. NeurIPS 2020.
#' @export
#' @examples
#' d <- sparse_vi_sim(n = 200, n_test = 100, p = 20, seed = 1)
#' dim(d$x)
#' d$truth(c(0, 1, 0, 0, 1))  # 7 + 2
#' sd(d$y - d$truth(d$x))     # about 1
sparse_vi_sim <- function(n = 3000, n_test = 10000, p = 200, seed = NULL, noise_sd = 1) {
  n <- check_count(n, arg = "n")
  n_test <- check_count(n_test, arg = "n_test")
  p <- check_count(p, arg = "p", min = 5L)
  noise_sd <- check_number(noise_sd, arg = "noise_sd", lower = 0, what = "a non-negative number")
  check_result_size(n + n_test, p, arg = "n")
  seed <- resolve_seed(seed)
  truth <- sparse_vi_truth
  withr::with_seed(as.integer(seed %% .Machine$integer.max), {
    draw <- function(m) {
      x <- matrix(stats::runif(m * p, -1, 1), m, p, byrow = TRUE)
      colnames(x) <- paste0("V", seq_len(p))
      y <- truth(x) + stats::rnorm(m, 0, noise_sd)
      list(x = x, y = y)
    }
    train <- draw(n)
    test <- draw(n_test)
    list(x = train$x, y = train$y, x_test = test$x, y_test = test$y, truth = truth, active = 1:5,
         noise_sd = noise_sd)
  }, .rng_kind = "Mersenne-Twister", .rng_normal_kind = "Inversion", .rng_sample_kind = "Rejection")
}

# f0 of Bai et al. (2020): a matrix with >= 5 columns (one value per row) or one input vector.
sparse_vi_truth <- function(x) {
  if (is.null(dim(x))) x <- matrix(x, nrow = 1L)
  if (!is.numeric(x) || ncol(x) < 5L) {
    sb_abort(c("{.arg x} must be a numeric matrix with at least 5 columns, or a vector of length >= 5.",
               x = "You supplied {.obj_type_friendly {x}} with {NCOL(x)} column{?s}."), arg = "x")
  }
  7 * x[, 2] / (1 + x[, 1]^2) + 5 * sin(x[, 3] * x[, 4]) + 2 * x[, 5]
}
