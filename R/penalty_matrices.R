# Sparse penalty matrices D for generalized_lasso(): fused lasso in 1-D, on a 2-D grid, on a graph, the
# trend-filtering (falling-factorial) differences, and the sparse fused lasso (gamma rows).

#' Penalty matrices for the generalized lasso
#'
#' Sparse (`Matrix` dgCMatrix) penalty matrices `D` for [generalized_lasso()], the same matrices as genlasso's
#' `getD1dSparse()`, `getD2dSparse()`, `getDgSparse()` and `getDtfPosSparse()`:
#' * `fused_lasso_1d(n)`: first differences, row i is \eqn{\beta_{i+1} - \beta_i} ((n - 1) x n).
#' * `fused_lasso_2d(dim1, dim2)`: a `dim1 x dim2` grid stored column-major (`beta[i + (j - 1) * dim1]` is
#'   pixel (i, j)); first the differences within each column, then those across columns.
#' * `fused_lasso_graph(edges)`: one row per edge \eqn{(a, b)}, \eqn{\beta_b - \beta_a}; `edges` is a
#'   two-column matrix of vertex numbers or an igraph graph (its edge list).
#' * `trend_filter_matrix(n, k, x)`: the falling-factorial difference operator \eqn{D^{(x,k+1)}} of order
#'   `k` ((n - k - 1) x n) used by [trend_filter()].
#'
#' `gamma > 0` appends `gamma` times the identity (n rows): the sparse fused lasso
#' \eqn{\lambda (\|D\beta\|_1 + \gamma \|\beta\|_1)} of `genlasso::fusedlasso(gamma = )`.
#' @param n Number of coefficients.
#' @param dim1,dim2 Grid dimensions.
#' @param edges Two-column matrix of vertex indices (1-based), or an igraph graph.
#' @param nvertex Number of vertices (default: the largest index in `edges`).
#' @param k Trend-filtering order (0 = piecewise constant).
#' @param x Sorted distinct inputs (default `1:n`).
#' @param gamma Non-negative weight of the appended lasso rows.
#' @return A `dgCMatrix`.
#' @examples
#' fused_lasso_1d(4)
#' dim(fused_lasso_2d(3, 4))
#' fused_lasso_graph(rbind(c(1, 2), c(2, 3), c(1, 3)))
#' trend_filter_matrix(6, k = 1, x = c(0, 1, 3, 4, 7, 8))
#' fused_lasso_1d(3, gamma = 0.5)
#' @name penalty_matrices
NULL

add_gamma_rows <- function(D, gamma, call = rlang::caller_env()) {
  gamma <- check_number(gamma, arg = "gamma", call = call, lower = 0)
  if (gamma > 0) D <- rbind(D, Matrix::Diagonal(ncol(D), gamma))
  methods::as(methods::as(D, "generalMatrix"), "CsparseMatrix")
}

#' @rdname penalty_matrices
#' @export
fused_lasso_1d <- function(n, gamma = 0) {
  n <- check_count(n, arg = "n", min = 2L)
  D <- Matrix::sparseMatrix(i = c(seq_len(n - 1), seq_len(n - 1)), j = c(seq_len(n - 1), 2:n),
                            x = rep(c(-1, 1), each = n - 1), dims = c(n - 1, n))
  add_gamma_rows(D, gamma)
}

#' @rdname penalty_matrices
#' @export
fused_lasso_2d <- function(dim1, dim2, gamma = 0) {
  dim1 <- check_count(dim1, arg = "dim1")
  dim2 <- check_count(dim2, arg = "dim2")
  N <- dim1 * dim2
  if (N < 2) sb_abort("The grid must have at least two cells.", arg = "dim1")
  idx <- matrix(seq_len(N), dim1, dim2)
  e1 <- if (dim1 > 1) cbind(as.vector(idx[-dim1, , drop = FALSE]), as.vector(idx[-1, , drop = FALSE])) else NULL
  e2 <- if (dim2 > 1) cbind(seq_len(N - dim1), seq_len(N - dim1) + dim1) else NULL
  if (!is.null(e1)) e1 <- e1[order(e1[, 1]), , drop = FALSE]
  add_gamma_rows(edges_to_D(rbind(e1, e2), N), gamma)
}

edges_to_D <- function(E, nv) {
  m <- nrow(E)
  Matrix::sparseMatrix(i = c(seq_len(m), seq_len(m)), j = c(E[, 1], E[, 2]), x = rep(c(-1, 1), each = m),
                       dims = c(m, nv))
}

#' @rdname penalty_matrices
#' @export
fused_lasso_graph <- function(edges, nvertex = NULL, gamma = 0) {
  if (inherits(edges, "igraph")) {
    rlang::check_installed("igraph", reason = "to read the edges of an igraph graph")
    if (is.null(nvertex)) nvertex <- igraph::vcount(edges)
    edges <- igraph::as_edgelist(edges, names = FALSE)
  }
  if (!is.matrix(edges) || ncol(edges) != 2L || !is.numeric(edges) || anyNA(edges) || nrow(edges) < 1L ||
      any(edges < 1) || any(edges != round(edges))) {
    sb_abort(c("{.arg edges} must be a two-column matrix of positive vertex numbers or an igraph graph.",
               x = "You supplied {.obj_type_friendly {edges}}."), arg = "edges")
  }
  if (any(edges[, 1] == edges[, 2])) sb_abort("{.arg edges} must not contain self-loops.", arg = "edges")
  nv <- if (is.null(nvertex)) max(edges) else check_count(nvertex, arg = "nvertex")
  if (max(edges) > nv) sb_abort("{.arg edges} refers to vertex {max(edges)} > {.arg nvertex} = {nv}.", arg = "edges")
  add_gamma_rows(edges_to_D(edges, nv), gamma)
}

#' @rdname penalty_matrices
#' @export
trend_filter_matrix <- function(n, k, x = NULL) {
  n <- check_count(n, arg = "n", min = 2L)
  k <- check_count(k, arg = "k", min = 0L)
  if (k >= n - 1L) sb_abort("{.arg k} must be smaller than n - 1 = {n - 1}.", arg = "k")
  if (is.null(x)) x <- seq_len(n)
  if (!is.numeric(x) || length(x) != n || any(!is.finite(x)) || any(diff(x) <= 0)) {
    sb_abort("{.arg x} must be {n} sorted, distinct, finite numbers.", arg = "x")
  }
  # genlasso::getDtfPosSparse's recursion on the square first-difference matrix (same rounding)
  D0 <- Matrix::bandSparse(n, n, c(0, 1), diagonals = list(rep(-1, n), rep(1, n - 1)))
  D <- D0
  for (i in seq_len(k)) {
    wts <- c(i / (x[(i + 1):n] - x[1:(n - i)]), rep(1, i))
    D <- D0 %*% (wts * D)
  }
  methods::as(methods::as(D[seq_len(n - k - 1), , drop = FALSE], "generalMatrix"), "CsparseMatrix")
}
