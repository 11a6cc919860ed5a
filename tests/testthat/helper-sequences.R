# Sequence data for the 1d-convolution tests (test-nn-conv1d.R) and bench/conv1d_motif.R, which sources this file.

# Sequences of length L with a bump c(1, 2, 3, 2, 1) added at a random place in the positive class: a pattern
# a convolution finds wherever it is.
motif_data <- function(n, seed, L = 40) {
  set.seed(seed)
  x <- matrix(rnorm(n * L), n, L)
  y <- rbinom(n, 1, 0.5)
  for (i in which(y == 1)) {
    s <- sample(L - 4, 1)
    x[i, s + 0:4] <- x[i, s + 0:4] + c(1, 2, 3, 2, 1)
  }
  list(x = x, y = factor(y))
}
