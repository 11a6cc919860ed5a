# Fused-lasso penalty on an r x c grid graph: `edges` (m x 2 node indices) and the incidence matrix `D`
# (row j: -1 at edges[j, 1], +1 at edges[j, 2]), dense or as a sparse Matrix.
grid_incidence <- function(r, c, sparse = FALSE) {
  g <- expand.grid(i = 1:r, j = 1:c)
  e <- rbind(cbind(which(g$i < r), which(g$i < r) + 1), cbind(which(g$j < c), which(g$j < c) + r))
  m <- nrow(e)
  if (sparse) {
    D <- Matrix::sparseMatrix(i = rep(seq_len(m), 2), j = c(e[, 1], e[, 2]), x = rep(c(-1, 1), each = m),
                              dims = c(m, r * c))
  } else {
    D <- matrix(0, m, r * c)
    D[cbind(seq_len(m), e[, 1])] <- -1
    D[cbind(seq_len(m), e[, 2])] <- 1
  }
  list(D = D, edges = e, grid = g)
}
