# Weighted generalized lasso with a user-supplied sparse penalty matrix D.

#' Weighted generalized lasso
#'
#' Solves \deqn{\min_\beta \frac12 \sum_i w_i (y_i - \beta_i)^2 + \lambda \sum_j p_j |(D\beta)_j|}
#' for a user penalty matrix `D` (fused lasso on a graph, 2-D grids, ...; Tibshirani & Taylor 2011) by the
#' same primal-dual interior-point method as [trend_filter()], with a sparse LDL' factorization of
#' \eqn{D W^{-1} D^\top} + diagonal (Eigen's SimplicialLDLT, AMD ordering). Every solve reports its certified
#' relative duality gap.
#'
#' @param y Numeric response (length `ncol(D)`).
#' @param D Penalty matrix: a base numeric matrix or a sparse `Matrix` object (m x n).
#' @param lambda Penalty value(s); `NULL` gives a path of `nlambda` values from `lambda_max` down.
#' @param weights Positive observation weights.
#' @param penalty_factor One positive number or one per row of `D`, multiplying lambda (the name of
#'   [weighted_lasso()] and glmnet).
#' @param penalty_weights Deprecated name of `penalty_factor` (works for one release, with a warning).
#' @param nlambda,lambda_min_ratio Path settings when `lambda` is `NULL`.
#' @param control [tf_control()] (`tol`, `max_iter`, `warm_start` are used).
#' @param path `TRUE`: the exact solution path (every knot) by the dual path algorithm of Tibshirani &
#'   Taylor (2011), as `genlasso::genlasso()`; returns an [sb_genlasso_path] object. `lambda`, `nlambda`,
#'   `lambda_min_ratio` and `control` are then not used. `FALSE` (default): the certified interior point on a
#'   grid of lambda values.
#' @param maxsteps,minlam,approx Path settings (genlasso's names and meanings): at most `maxsteps` knots;
#'   stop after the first knot below `minlam`; `approx = TRUE` never lets a coordinate leave the boundary
#'   (the approximate path, faster, exact only while no coordinate would leave). A warning of class
#'   `scalebayes_warning_maxsteps` says when `maxsteps` ended the path above `minlam`.
#' @param X Optional design matrix (n x p, base or sparse `Matrix`; then `y` has n entries and `D` p columns):
#'   genlasso's reduction to X = I, in p coordinates (`X = QR`, thin QR: `y -> Q'y`, `D -> D R^-1`, dense; the
#'   same duals, knots and `df` as genlasso's `U U'y`, `D V diag(1/d) U'` from the SVD of X; when p > n
#'   or X is column rank deficient (genlasso's rule: a singular value below 1e-7), a ridge of multiplier `eps` is added, with a warning of class
#'   `scalebayes_warning_ridge`, as genlasso does; the objective then has the added term
#'   \eqn{\frac{\epsilon}{2}\|\beta\|^2}). With `path = FALSE` the grid interior point solves the reduced
#'   problem and the reported `gap` / `rel_gap` certify the original objective: it is evaluated at the returned
#'   `beta`, against the reduced problem's dual value plus the constant \eqn{\frac12\|(I - QQ^\top)\tilde y\|^2}.
#'   The grid fit then also has `df` (genlasso's: \eqn{p} minus the rank of \eqn{\tilde D_I}, I the rows with
#'   \eqn{(D\beta)_j = 0} and \eqn{|u_j| < \lambda p_j}), `fitted()` is \eqn{X\beta} and
#'   `predict(fit, newdata = )` takes new rows of X. `weights` (one per row of X)
#'   and `penalty_factor` enter exactly: the objective is
#'   \eqn{\frac12 \sum_i w_i (y_i - x_i^\top\beta)^2 + \lambda \sum_j p_j |(D\beta)_j|}, i.e. `X` and
#'   `y` are scaled by \eqn{\sqrt{w}} and the rows of `D` by `p` before the reduction.
#' @param eps Ridge multiplier for `X` (genlasso's `eps`).
#' @param quiet `path = TRUE` only: `FALSE` shows a progress bar over the knots (up to `maxsteps`); default
#'   `NULL`: quiet unless interactive (option `scalebayes.quiet`). The path can be interrupted (Ctrl-C /
#'   Esc) between any two knots.
#' @details `lambda_max` is the smallest \eqn{\lambda} at which the weighted projection \eqn{\beta_0} of `y` onto
#'   the null space of `D` is optimal: \eqn{\min_u \max_j |u_j| / p_j} subject to \eqn{D^\top u = W(y - \beta_0)}.
#'   When `D` has full row rank `u` is unique. When it has more rows than rank (graphs with cycles, 2-D grids)
#'   this is a linear program, solved by a primal-dual interior point; its dual,
#'   \eqn{\max_z v^\top z} subject to \eqn{\sum_j p_j |(Dz)_j| \le 1}, gives a lower bound, so the value is
#'   certified: `lambda_max_lower` and `lambda_max_rel_gap` report the bracket (about 1e-10 relative on the
#'   grids in the tests; for a graph it equals the minimum-cut ratio \eqn{\max_S |v(S)| / p(\mathrm{cut}(S))}).
#'   The feasible dual of the ridge-regularized normal equations (the value used before, and genlasso's first
#'   path knot) is only an upper bound there: about twice too large on 100 x 100 and 300 x 300 grids
#'   (`bench/trend_filter.R`, section 4). The feasible dual comes from the normal equations
#'   \eqn{D W^{-1} D^\top u = D y} with iterative refinement; when these are too ill-conditioned for double
#'   precision (high-order differences written as a generic matrix) a warning of class
#'   `scalebayes_warning_lambda_max` says so: use [trend_filter()] for those.
#' @section Cost of the path: between knots the interior dual is `a - lambda b` with `a`, `b` min-norm
#'   least-squares solutions in \eqn{D_I^\top} (I the rows off the boundary), at every knot:
#'   * banded `D` (every row a contiguous support whose first and last columns do not decrease: trend
#'     filtering, 1-D fused lasso): a banded Givens QR, O(n w^2) per knot (w = k + 2 for trend filtering);
#'   * graph `D` (every row an edge \eqn{c(e_q - e_p)} or a lasso row: fused lasso on a graph or a 2-D grid):
#'     a sparse LDL' of the grounded weighted Laplacian of the interior edges per knot;
#'   * any other `D`, and every `X`: a dense QR of \eqn{D_I^\top} kept across knots by Givens up/downdates,
#'     O(n^2 + n m) per knot (with `X`, n is `ncol(X)`); a knot where \eqn{D_I} is rank deficient or has more
#'     rows than columns uses a complete orthogonal decomposition, O(n m min(n, m)). With `X` add the
#'     reduction once, O(nrow(X) p^2 + m p^2).
#'
#'   Plus O(n + m) per knot to store `beta` and `u`. A full path has about 2n knots for trend filtering
#'   (k = 1; 4n for k = 2), so its cost grows like n^2.
#'   Observation weights and `penalty_factor` enter exactly by the change of variables
#'   \eqn{\tilde y = W^{1/2} y}, \eqn{\tilde D = \mathrm{diag}(p) D W^{-1/2}}. `df` at each knot is
#'   genlasso's: the dimension of the null space of \eqn{D_I} on the segment above the knot (with `X`: of
#'   \eqn{\tilde D_I}, \eqn{\tilde D = D R^{-1}}, which is genlasso's df).
#'   On graphs with cycles (2-D grids) the dual solution need not be unique: the knots can then differ from
#'   genlasso's while the primal solutions (the fits) agree; see the design note.
#' @section When is the path faster than the grid?: measured (`bench/genlasso_path.R`, 2-core VM, loaded):
#'   the full path against the default 50-value interior-point grid takes 2.6x (n = 200) to 3.5x (n = 500)
#'   the grid's time for trend filtering with k = 1, 1.1-1.3x for k = 2, and 7-10x at n = 2000 (4,000-8,700
#'   knots); on a 10 x 10 grid the path is 3x faster than the grid, on 30 x 30 1.6x slower. So the path costs
#'   about as much as the grid up to n of a few hundred (and gives every knot and `df` exactly), or when only
#'   the top of the path is wanted (`maxsteps`, `minlam`); the grid stays the default, and for n in the
#'   thousands and more (or 2-D grids beyond about 1,000 pixels) it is the faster one by a factor that grows
#'   with n (O(n) per lambda against O(n) per knot times about 2n knots).
#' @return With `path = TRUE` an [sb_genlasso_path] object. Otherwise an object of class `sb_generalized_lasso` with `beta` (n x L), `lambda`, `lambda_max` (with
#'   `lambda_max_lower` and `lambda_max_rel_gap`, see Details), `rel_gap`, `gap`, `iter`, `u` (dual solutions);
#'   with `X` also `df`, `X`, `fit` (\eqn{X\beta}, observations x L) and `ridge`.
#' @export
#' @examples
#' # fused lasso on a 5 x 5 grid
#' g <- expand.grid(i = 1:5, j = 1:5)
#' e <- rbind(cbind(which(g$i < 5), which(g$i < 5) + 1), cbind(which(g$j < 5), which(g$j < 5) + 5))
#' D <- matrix(0, nrow(e), 25)
#' D[cbind(seq_len(nrow(e)), e[, 1])] <- -1
#' D[cbind(seq_len(nrow(e)), e[, 2])] <- 1
#' set.seed(1)
#' y <- rep(c(0, 2), c(10, 15)) + rnorm(25, sd = 0.3)
#' fit <- generalized_lasso(y, D, lambda = 0.5)
#' round(fit$beta[, 1], 2)
generalized_lasso <- function(y, D, lambda = NULL, weights = NULL, penalty_factor = NULL, nlambda = 50,
                              lambda_min_ratio = 1e-4, control = tf_control(), penalty_weights = NULL,
                              path = FALSE, maxsteps = 2000, minlam = 0, approx = FALSE, X = NULL, eps = 1e-4,
                              quiet = NULL) {
  call <- match.call()
  penalty_factor <- tf_penalty_factor(penalty_weights, penalty_factor, missing(penalty_factor), "generalized_lasso",
                                      missing(penalty_weights))
  sp <- check_penalty_matrix(D)
  n <- sp$n
  m <- sp$m
  path <- check_flag(path)
  if (path) {
    pa <- check_path_args(maxsteps, minlam, approx)
    if (!is.null(X)) {
      X <- check_design_x(X, n)
      eps <- check_number(eps, lower = 0, lower_open = TRUE)
    }
    ny <- if (is.null(X)) n else nrow(X)
    if (!is.numeric(y) || length(y) != ny || any(!is.finite(y))) {
      sb_abort(c("{.arg y} must be a finite numeric vector with one value per {if (is.null(X)) 'column of {.arg D}' else 'row of {.arg X}'}.",
                 x = "{.arg y} has length {length(y)}, {if (is.null(X)) 'D has' else 'X has'} {ny}."), arg = "y")
    }
    y <- as.double(y)
    check_square_sums(y, "y")  # y * 1e300: the dual path's sums of squares overflow (issue 61)
    weights <- if (is.null(weights)) rep(1, ny) else check_weights(weights, ny, positive = TRUE)
    pw <- check_penalty_weights(penalty_factor, m)
    r <- genlasso_dual_path(y, sp, weights, pw, pa, X = X, eps = eps, quiet = resolve_quiet(quiet))
    return(new_genlasso_path(r, y, as_penalty_dgc(sp), X, weights, pw, pa, call))
  }
  if (!is.null(X)) {
    X <- check_design_x(X, n)
    eps <- check_number(eps, lower = 0, lower_open = TRUE)
    return(gl_grid_x(y, X, sp, weights, penalty_factor, lambda, nlambda, lambda_min_ratio, control, eps, call))
  }
  if (!is.numeric(y) || length(y) != n || any(!is.finite(y))) {
    sb_abort(c("{.arg y} must be a finite numeric vector with one value per column of {.arg D}.",
               x = "{.arg y} has length {length(y)}, {.arg D} has {n} column{?s}."), arg = "y")
  }
  y <- as.double(y)
  check_square_sums(y, "y")  # y * 1e300: Inf duality gaps, silently (issue 61); the check trend_filter() has
  weights <- if (is.null(weights)) rep(1, n) else check_weights(weights, n, positive = TRUE)
  if (rescale_weights(weights)$c != 1) {
    sb_abort(c("{.arg weights} of magnitude {format(max(weights), digits = 3)} are beyond what the solver can square in double precision.",
               i = "Divide {.arg weights} and {.arg lambda} by the same constant: the solution is the same."),
             arg = "weights", kind = "scaling")
  }
  pw <- check_penalty_weights(penalty_factor, m)
  lambda <- check_lambda(lambda)
  nlambda <- check_count(nlambda, max = 1e5)
  lambda_min_ratio <- check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE)
  control <- check_tf_control(control)
  lm <- sb_call_engine(cpp_genlasso_lambda_max(y, weights, m, n, sp$i, sp$p, sp$x, pw))
  if (!is.finite(lm$residual) || lm$residual > 1e-6) {
    sb_warn(c("{.val lambda_max} is inaccurate: {.code D W^-1 D'} is too ill-conditioned for double precision.",
              i = "Relative residual of its normal equations: {signif(lm$residual, 3)}.",
              i = "For trend filtering use {.fn trend_filter}, whose banded solvers do not form it."),
            kind = "lambda_max")
  }
  if (is.null(lambda)) {
    lmax <- max(lm$lambda_max, .Machine$double.xmin)
    lambda <- exp(seq(log(lmax), log(lmax * lambda_min_ratio), length.out = nlambda))
  }
  r <- sb_call_engine(cpp_genlasso_path(y, weights, m, n, sp$i, sp$p, sp$x, pw, lambda, control$tol,
                                        control$max_iter, control$warm_start))
  converged <- r$rel_gap <= control$tol
  if (any(!converged)) {
    sb_warn(c("{sum(!converged)} of {length(lambda)} solve{?s} stopped above the target duality gap.",
              i = "Largest relative gap: {signif(max(r$rel_gap), 3)} (target {control$tol})."))
  }
  structure(list(beta = r$beta, u = r$u, lambda = lambda, lambda_max = lm$lambda_max,
                 lambda_max_lower = lm$lower, lambda_max_rel_gap = lm$rel_gap, gap = r$gap,
                 rel_gap = r$rel_gap, primal = r$primal, iter = r$iter, converged = converged, y = y,
                 weights = weights, penalty_weights = pw, call = call),
            class = c("sb_generalized_lasso", "sb_point_fit"))
}

# The grid with a design matrix X: genlasso's reduction (gl_reduce_x()) to X = I, the certified interior point on
# the reduced problem, then the certificate of the original objective
#   P(beta) = 1/2 sum_i w_i (y_i - x_i'beta)^2 (+ eps/2 ||beta||^2 with the ridge) + lambda sum_j p_j |(D beta)_j|:
# P is evaluated at beta = V S^-1 theta directly, and the reduced dual value plus the constant c0 is a lower bound
# of its minimum, so gap = P(beta) - (dual + c0) certifies beta for the original objective.
gl_grid_x <- function(y, X, sp, weights, penalty_factor, lambda, nlambda, lambda_min_ratio, control, eps, call) {
  nX <- nrow(X)
  p <- ncol(X)
  m <- sp$m
  if (!is.numeric(y) || length(y) != nX || any(!is.finite(y))) {
    sb_abort(c("{.arg y} must be a finite numeric vector with one value per row of {.arg X}.",
               x = "{.arg y} has length {length(y)}, {.arg X} has {nX} row{?s}."), arg = "y", call = call)
  }
  y <- as.double(y)
  check_square_sums(y, "y")
  weights <- if (is.null(weights)) rep(1, nX) else check_weights(weights, nX, positive = TRUE)
  pw <- check_penalty_weights(penalty_factor, m)
  lambda <- check_lambda(lambda)
  nlambda <- check_count(nlambda, max = 1e5)
  lambda_min_ratio <- check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE)
  control <- check_tf_control(control)
  red <- gl_reduce_x(X, y, weights, sp, sp$x, eps)
  sp2 <- check_penalty_matrix(red$D2)
  ones <- rep(1, p)
  lm <- sb_call_engine(cpp_genlasso_lambda_max(red$y2, ones, m, p, sp2$i, sp2$p, sp2$x, pw))
  if (is.null(lambda)) {
    lmax <- max(lm$lambda_max, .Machine$double.xmin)
    lambda <- exp(seq(log(lmax), log(lmax * lambda_min_ratio), length.out = nlambda))
  }
  r <- sb_call_engine(cpp_genlasso_path(red$y2, ones, m, p, sp2$i, sp2$p, sp2$x, pw, lambda, control$tol,
                                        control$max_iter, control$warm_start))
  beta <- red$Vs %*% r$beta
  D <- as_penalty_dgc(sp)
  Db <- as.matrix(D %*% beta)
  fit <- X %*% beta
  res <- (y - fit) * sqrt(weights)
  pen <- colSums(abs(Db) * pw)
  primal <- colSums(res^2) / 2 + lambda * pen + if (red$ridge) eps / 2 * colSums(beta^2) else 0
  dual <- r$primal - r$gap + red$c0
  gap <- primal - dual
  floor <- 1e-10 * sum(weights * y^2) / 2
  rel_gap <- gap / pmax(primal, floor)
  # df (genlasso's): p - rank(D2_I), I the interior rows (|u_j| < lambda p_j, (D beta)_j = 0). An interior-point
  # solution is interior in both: row j counts as interior when its relative dual slack exceeds its relative
  # |(D beta)_j| (the complementarity of the two slacks makes one of them tiny at a certified solution)
  df <- vapply(seq_along(lambda), function(l) {
    slack <- 1 - abs(r$u[, l]) / (lambda[l] * pw)
    z <- abs(Db[, l]) / max(abs(Db[, l]), .Machine$double.xmin)
    I <- which(slack > z)
    if (!length(I)) return(as.integer(p))
    d <- svd(red$D2[I, , drop = FALSE], nu = 0, nv = 0)$d
    as.integer(p - sum(d > 1e-10 * d[1]))
  }, 1L)
  converged <- rel_gap <= control$tol
  if (any(!converged)) {
    sb_warn(c("{sum(!converged)} of {length(lambda)} solve{?s} stopped above the target duality gap.",
              i = "Largest relative gap: {signif(max(rel_gap), 3)} (target {control$tol})."))
  }
  structure(list(beta = beta, u = r$u, lambda = lambda, lambda_max = lm$lambda_max,
                 lambda_max_lower = lm$lower, lambda_max_rel_gap = lm$rel_gap, gap = gap,
                 rel_gap = rel_gap, primal = primal, iter = r$iter, converged = converged, df = df, y = y,
                 X = X, fit = fit, ridge = red$ridge, eps = if (red$ridge) eps, weights = weights,
                 penalty_weights = pw, call = call),
            class = c("sb_generalized_lasso", "sb_point_fit"))
}

#' @export
print.sb_generalized_lasso <- function(x, ...) {
  cat(sprintf("<sb_generalized_lasso> n = %d, %d lambda value%s; lambda_max = %.4g; largest relative gap %.2g\n",
              length(x$y), length(x$lambda), if (length(x$lambda) == 1) "" else "s", x$lambda_max, max(x$rel_gap)))
  invisible(x)
}

# Penalty matrix -> compressed-column slots (0-based), validated.
check_penalty_matrix <- function(D, call = rlang::caller_env()) {
  if (is.matrix(D) && is.numeric(D)) {
    if (any(!is.finite(D))) sb_abort("{.arg D} must contain only finite values.", arg = "D", call = call)
    nz <- which(D != 0, arr.ind = TRUE)
    if (length(nz)) nz <- nz[order(nz[, 2], nz[, 1]), , drop = FALSE] else nz <- matrix(integer(0), 0, 2)
    p <- c(0L, cumsum(tabulate(nz[, 2], nbins = ncol(D))))
    out <- list(m = nrow(D), n = ncol(D), i = as.integer(nz[, 1] - 1L), p = as.integer(p), x = D[nz])
  } else if (methods::is(D, "sparseMatrix")) {
    Dc <- methods::as(methods::as(D, "CsparseMatrix"), "generalMatrix")
    Dc <- methods::as(Dc, "dMatrix")
    if (any(!is.finite(Dc@x))) sb_abort("{.arg D} must contain only finite values.", arg = "D", call = call)
    out <- list(m = Dc@Dim[1], n = Dc@Dim[2], i = as.integer(Dc@i), p = as.integer(Dc@p), x = as.double(Dc@x))
  } else {
    sb_abort(c("{.arg D} must be a numeric matrix or a sparse {.pkg Matrix}.",
               x = "You supplied {.obj_type_friendly {D}}."), arg = "D", call = call)
  }
  big <- max(abs(out$x), 0)
  if (big > 1e100 || (length(out$x) && min(abs(out$x[out$x != 0]), Inf) < 1e-100)) {
    sb_abort(c("{.arg D} has entries of magnitude {format(if (big > 1e100) big else min(abs(out$x[out$x != 0])), digits = 3)}, beyond what the solver can square in double precision.",
               i = "Divide {.arg D} by a constant c and multiply {.arg lambda} by c: the solution is the same."),
             arg = "D", call = call)
  }
  if (out$m < 1L || out$n < 2L) {
    sb_abort(c("{.arg D} must have at least one row and two columns.",
               x = "It is {out$m} x {out$n}."), arg = "D", call = call)
  }
  rows_used <- tabulate(out$i + 1L, nbins = out$m)
  if (any(rows_used == 0L)) {
    zero_rows <- as.character(utils::head(which(rows_used == 0L), 5))
    sb_abort(c("{.arg D} must not have rows that are all zero.",
               x = "Row{?s} {zero_rows} {?is/are} zero.", i = "Drop {cli::qty(length(zero_rows))}{?it/them}."),
             arg = "D", call = call)
  }
  out
}
