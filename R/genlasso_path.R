# The exact solution path of the generalized lasso (dual path algorithm, Tibshirani & Taylor 2011), as
# genlasso computes it: generalized_lasso(path = TRUE), trend_filter(path = TRUE), and the methods of class
# sb_genlasso_path. Engine: inst/include/scalebayes/genlasso/dual_path.hpp.

# D (any form check_penalty_matrix accepts) -> dgCMatrix
as_penalty_dgc <- function(sp) {
  Matrix::sparseMatrix(i = sp$i + 1L, p = sp$p, x = sp$x, dims = c(sp$m, sp$n))
}

check_path_args <- function(maxsteps, minlam, approx, call = rlang::caller_env()) {
  list(maxsteps = check_count(maxsteps, arg = "maxsteps", call = call, min = 1L, max = 1e7),
       minlam = check_number(minlam, arg = "minlam", call = call, lower = 0),
       approx = check_flag(approx, arg = "approx", call = call))
}

# The path for y and D (slots as check_penalty_matrix returns them). Without X, weights w (one per column of D)
# and penalty factors pw enter by the exact change of variables  y~ = W^1/2 y, beta~ = W^1/2 beta,
# D~ = diag(pw) D W^-1/2. With X, the weights are one per row of X:  y~ = W^1/2 y, X~ = W^1/2 X, D~ = diag(pw) D.
genlasso_dual_path <- function(y, sp, weights, pw, pa, X = NULL, eps = 1e-4, backend = 0L, quiet = TRUE,
                               call = rlang::caller_env()) {
  n <- sp$n
  Dx <- sp$x
  if (!all(pw == 1)) Dx <- Dx * rep_len(pw, sp$m)[sp$i + 1L]
  sw <- sqrt(weights)
  if (is.null(X)) {
    if (!all(weights == 1)) Dx <- Dx / rep(sw, diff(sp$p))
    r <- sb_call_engine(cpp_genlasso_dualpath(y * sw, sp$m, n, sp$i, sp$p, Dx, pa$maxsteps, pa$minlam,
                                              pa$approx, 1e-7, backend, quiet), call = call)
    beta <- if (all(weights == 1)) r$beta else r$beta / sw
    fit <- beta
    bls <- y
    df <- r$df
  } else {
    # genlasso::genlasso's reduction, in p coordinates (gl_reduce_x(): X~ = Q R, theta = R beta, y~ = Q'y,
    # D~ = D R^-1, m x p). genlasso works with the n-vector U U'y and D V S^-1 U' from the SVD instead (n x the
    # work per knot); the duals u, the knots and the df (genlasso's df - (n - p), or - n with the ridge, equal
    # p - rank(D~_I)) are the same. The dense D~ goes to the engine as it is (dense QR up/downdates per knot).
    red <- gl_reduce_x(X, y, weights, sp, Dx, eps, call = call)
    y2 <- red$y2
    Vs <- red$Vs
    r <- sb_call_engine(cpp_genlasso_dualpath_dense(y2, red$D2, pa$maxsteps, pa$minlam, pa$approx, 1e-7, quiet),
                        call = call)
    beta <- Vs %*% r$beta
    colnames(beta) <- r$colnames
    fit <- X %*% beta
    bls <- as.numeric(Vs %*% y2)
    df <- r$df
  }
  if (!r$complete && length(r$lambda) >= pa$maxsteps && r$lambda[length(r$lambda)] >= pa$minlam) {
    sb_warn(c("The path stopped after {.arg maxsteps} = {pa$maxsteps} knot{?s}, at lambda = {signif(r$lambda[length(r$lambda)], 4)}, before reaching {.arg minlam} = {pa$minlam}.",
              i = "Increase {.arg maxsteps} for the rest of the path."), kind = "maxsteps", arg = "maxsteps")
  }
  list(lambda = r$lambda, beta = beta, fit = fit, u = r$u, df = df, hit = r$hit, boundary = r$boundary,
       sign = r$sign, completepath = r$complete, bls = bls, dense_used = r$dense_used)
}

# genlasso's reduction of a design matrix X to X = I, in p coordinates: X~ = W^1/2 X = Q R (thin QR; the ridge
# rows sqrt(eps) I appended, with a warning, when p > n or X is column rank deficient, as genlasso does),
# theta = R beta turns 1/2 ||W^1/2 (y - X beta)||^2 (+ eps/2 ||beta||^2 with the ridge) + lambda ||D beta||_1
# into 1/2 ||y2 - theta||^2 + lambda ||D2 theta||_1 + c0 with y2 = Q' y~, D2 = D R^-1 (m x p, dense) and the
# constant c0 = 1/2 (||y~||^2 - ||y2||^2). genlasso uses the SVD X~ = U S V' (theta = S V' beta); the two
# reduced problems differ by the orthogonal change of variables O = U'Q (theta_svd = O theta_qr), so the duals u,
# the knots and df (p - rank(D2_I) = p - rank(D_I)) are the same; the QR costs a fraction of the SVD.
# genlasso's rank rule (all singular values of X~ >= 1e-7) is kept exactly: 1 / ||R^-1||_F is a lower bound of
# the smallest singular value, and only when it is below 1e-7 are the singular values computed.
# Dx: the values of D's slots (already multiplied by penalty factors or not, as the caller wants).
# Returns y2, D2, Vs = R^-1 (beta = Vs theta), ridge and c0.
gl_reduce_x <- function(X, y, weights, sp, Dx, eps, call = rlang::caller_env()) {
  sw <- sqrt(weights)
  Xw <- if (all(weights == 1)) X else X * sw
  yw <- y * sw
  p <- ncol(X)
  qr_reduce <- function(A) {
    q <- qr(A)  # LINPACK: columns move only when (numerically) dependent
    ok <- all(q$pivot == seq_len(p))
    if (ok) {
      R <- qr.R(q)
      ok <- all(abs(diag(R)) > 0)
    }
    if (ok) {
      Rinv <- backsolve(R, diag(p))
      ok <- all(is.finite(Rinv))
    }
    if (!ok) return(NULL)
    list(q = q, Rinv = Rinv, smin_lower = 1 / sqrt(sum(Rinv^2)))
  }
  ridge <- p > nrow(X)
  f <- NULL
  if (!ridge) {
    f <- qr_reduce(Xw)
    if (is.null(f) || !(f$smin_lower >= 1e-7)) ridge <- !all(La.svd(Xw, 0, 0)$d >= 1e-7)
    if (!ridge && is.null(f)) {
      # full rank by genlasso's rule, but the pivoted QR reordered the columns: the SVD reduction
      s <- svd(Xw)
      f <- list(Rinv = s$v %*% diag(1 / s$d, p), y2 = as.numeric(crossprod(s$u, yw)))
    }
  }
  if (ridge) {
    sb_warn("Adding a small ridge penalty (multiplier {eps}), because {.arg X} has more columns than rows or is column rank deficient (as genlasso does).",
            kind = "ridge")
    yw <- c(yw, rep(0, p))
    f <- qr_reduce(rbind(Xw, diag(sqrt(eps), p)))
    if (is.null(f)) {
      s <- svd(rbind(Xw, diag(sqrt(eps), p)))
      f <- list(Rinv = s$v %*% diag(1 / s$d, p), y2 = as.numeric(crossprod(s$u, yw)))
    }
  }
  y2 <- if (is.null(f$y2)) qr.qty(f$q, yw)[seq_len(p)] else f$y2
  Dd <- matrix(0, sp$m, sp$n)
  Dd[cbind(sp$i + 1L, rep.int(seq_len(sp$n), diff(sp$p)))] <- Dx
  D2 <- Dd %*% f$Rinv
  list(y2 = y2, D2 = D2, Vs = f$Rinv, ridge = ridge, c0 = max(0, (sum(yw^2) - sum(y2^2)) / 2))
}

# X: a finite numeric matrix (base or Matrix, made dense: the reduction is a dense SVD) with n columns.
check_design_x <- function(X, n, call = rlang::caller_env()) {
  if (inherits(X, "Matrix")) X <- as.matrix(X)
  if (!is.matrix(X) || !is.numeric(X) || any(!is.finite(X)) || ncol(X) != n) {
    sb_abort(c("{.arg X} must be a finite numeric matrix (base or {.pkg Matrix}) with one column per column of {.arg D}.",
               x = if (is.matrix(X) && is.numeric(X) && ncol(X) != n) "{.arg X} has {ncol(X)} column{?s}, {.arg D} has {n}."
                   else if (is.matrix(X) && is.numeric(X)) "{.arg X} has {sum(!is.finite(X))} missing or infinite entr{?y/ies}."
                   else "{.arg X} is not a numeric matrix."), arg = "X", call = call)
  }
  storage.mode(X) <- "double"
  X
}

new_genlasso_path <- function(r, y, D, X, weights, penalty_factor, pa, call, extra = list()) {
  structure(c(r[c("lambda", "beta", "fit", "u", "df", "hit", "boundary", "sign", "completepath", "bls")],
              list(y = y, D = D, X = X, weights = weights, penalty_factor = penalty_factor,
                   maxsteps = pa$maxsteps, minlam = pa$minlam, approx = pa$approx, call = call), extra),
            class = c("sb_genlasso_path", "sb_point_fit"))
}

#' Methods for the exact generalized-lasso path
#'
#' `coef()` and `predict()` evaluate the path of [generalized_lasso()] / [trend_filter()] with `path = TRUE`.
#' Between two knots the primal and dual solutions are linear in lambda, so values at any lambda are the
#' exact linear interpolation between the neighbouring knots (as `genlasso::coef.genlasso`); below the last
#' knot of a complete path the solution runs linearly to the unpenalized fit at lambda = 0.
#' `df = ` picks, for each value, the last knot (smallest lambda) whose degrees of freedom are the largest
#' not above it (genlasso's rule); values below every knot's df are dropped.
#' @param object,x An `sb_genlasso_path` object.
#' @param lambda Penalty values (any order; returned in that order).
#' @param df Degrees of freedom (instead of `lambda`).
#' @param type `"primal"` (beta), `"dual"` (u) or `"both"`.
#' @param newdata For trend-filtering paths: new inputs, interpolated by [predict.sb_trend_filter()]'s
#'   discrete splines. For a path with a design matrix `X`: a new design matrix. Default: the fitted values.
#' @param ... Not used.
#' @return `coef()`: a list with `beta` (and/or `u`), `lambda` and `df`; `predict()`: a matrix with one column
#'   per lambda; `fitted()` / `residuals()`: the fit at the observations (`X beta`, or `beta` without `X`) and `y`
#'   minus it, observations x knots (or x `lambda` / `df`); `summary()`: a data frame of the knots (`knot`,
#'   `lambda`, `df`, `event`, `boundary_size`). `nobs()` is the number of observations; the posterior generics
#'   (`log_lik()`, `posterior_predict()`, `as.matrix()`, ...) are errors of class
#'   `scalebayes_error_not_applicable` (a path of point estimates has no draws; see [sb_point_fit-methods]).
#' @name sb_genlasso_path
#' @examples
#' set.seed(1)
#' y <- c(rep(0, 20), rep(2, 20)) + rnorm(40, sd = 0.5)
#' fit <- generalized_lasso(y, fused_lasso_1d(40), path = TRUE)
#' fit
#' head(summary(fit))
#' coef(fit, lambda = c(5, 1))$beta[1:3, ]
#' coef(fit, df = 3)$lambda
#' plot(fit)
NULL

gl_path_interp <- function(object, lambda, call = rlang::caller_env()) {
  if (!is.numeric(lambda) || any(!is.finite(lambda)) || any(lambda < 0) || !length(lambda)) {
    sb_abort("{.arg lambda} must be finite non-negative numbers.", arg = "lambda", call = call)
  }
  knots <- object$lambda
  if (min(lambda) < min(knots) && !object$completepath) {
    sb_abort(c("The path was stopped at lambda = {signif(min(knots), 4)} and you asked for a smaller lambda.",
               i = "Refit with a larger {.arg maxsteps} or a smaller {.arg minlam}."), arg = "lambda", call = call)
  }
  betas <- object$beta
  us <- object$u
  dfs <- object$df
  if (object$completepath) {
    knots <- c(knots, 0)
    betas <- cbind(betas, object$bls)
    us <- cbind(us, 0)
    dfs <- c(dfs, dfs[length(dfs)] + 1)
  }
  # for each lambda: blo = first knot <= lambda, bhi = the knot before (genlasso's coef.genlasso)
  blo <- vapply(lambda, function(l) {
    w <- which(l >= knots)
    if (length(w)) w[1] else length(knots)
  }, 1L)
  bhi <- pmax(blo - 1L, 1L)
  pp <- ifelse(bhi == blo, 0, (lambda - knots[blo]) / (knots[bhi] - knots[blo]))
  list(blo = blo, bhi = bhi, p = pp, betas = betas, us = us, dfs = dfs)
}

#' @rdname sb_genlasso_path
#' @export
coef.sb_genlasso_path <- function(object, lambda = NULL, df = NULL, type = c("primal", "dual", "both"), ...) {
  sb_check_dots(..., fn = "coef")
  type <- sb_match_arg(type)
  if (!is.null(lambda) && !is.null(df)) sb_abort("Give {.arg lambda} or {.arg df}, not both.", arg = "df")
  if (is.null(lambda) && is.null(df)) {
    beta <- object$beta
    u <- object$u
    lam <- object$lambda
    dfo <- object$df
  } else if (!is.null(lambda)) {
    ip <- gl_path_interp(object, lambda)
    mix <- function(M) {
      t((1 - ip$p) * t(M[, ip$blo, drop = FALSE]) + ip$p * t(M[, ip$bhi, drop = FALSE]))
    }
    beta <- mix(as.matrix(ip$betas))
    u <- mix(ip$us)
    lam <- lambda
    dfo <- ip$dfs[ip$blo]
  } else {
    if (!is.numeric(df) || anyNA(df)) sb_abort("{.arg df} must be numbers.", arg = "df")
    j <- vapply(df, function(d) {
      ok <- which(object$df <= d)
      if (!length(ok)) return(NA_integer_)
      best <- max(object$df[ok])
      max(which(object$df == best))
    }, 1L)
    j <- j[!is.na(j)]
    beta <- object$beta[, j, drop = FALSE]
    u <- object$u[, j, drop = FALSE]
    lam <- object$lambda[j]
    dfo <- object$df[j]
  }
  beta <- as.matrix(beta)
  colnames(beta) <- as.character(round(lam, 3))
  switch(type,
         primal = list(beta = beta, lambda = lam, df = dfo),
         dual = list(u = u, lambda = lam, df = dfo),
         both = list(beta = beta, u = u, lambda = lam, df = dfo))
}

#' @rdname sb_genlasso_path
#' @export
predict.sb_genlasso_path <- function(object, newdata = NULL, lambda = NULL, df = NULL, ...) {
  sb_check_dots(..., fn = "predict")
  cf <- if (is.null(lambda) && is.null(df)) list(beta = object$beta) else stats::coef(object, lambda = lambda, df = df)
  beta <- as.matrix(cf$beta)
  if (!is.null(object$tf_x)) {
    if (is.null(newdata)) return(beta)
    return(tf_interpolate(object$tf_x, beta, object$tf_k, check_newx(newdata)))
  }
  if (!is.null(object$X)) {
    Xn <- if (is.null(newdata)) object$X else newdata
    if (!is.matrix(Xn) || ncol(Xn) != nrow(beta)) {
      sb_abort("{.arg newdata} must be a matrix with {nrow(beta)} column{?s}.", arg = "newdata")
    }
    return(Xn %*% beta)
  }
  if (!is.null(newdata)) sb_abort("{.arg newdata} is only used for trend filtering or a design matrix.", arg = "newdata")
  beta
}

#' @rdname sb_genlasso_path
#' @export
fitted.sb_genlasso_path <- function(object, lambda = NULL, df = NULL, ...) {
  sb_check_dots(..., fn = "fitted")
  if (is.null(lambda) && is.null(df)) return(unname(as.matrix(object$fit)))
  beta <- stats::coef(object, lambda = lambda, df = df)$beta
  unname(if (is.null(object$X)) beta else object$X %*% beta)
}

#' @rdname sb_genlasso_path
#' @export
residuals.sb_genlasso_path <- function(object, lambda = NULL, df = NULL, ...) {
  sb_check_dots(..., fn = "residuals")
  object$y - stats::fitted(object, lambda = lambda, df = df)
}

#' @rdname sb_genlasso_path
#' @export
print.sb_genlasso_path <- function(x, ...) {
  K <- length(x$lambda)
  cat(sprintf("<sb_genlasso_path> exact solution path: n = %d, m = %d, %d knot%s, lambda %.4g .. %.4g, df %d .. %d%s\n",
              nrow(x$beta), nrow(x$u), K, if (K == 1) "" else "s", x$lambda[1], x$lambda[K],
              as.integer(min(x$df)), as.integer(max(x$df)),
              if (x$completepath) " (complete)" else " (stopped by maxsteps / minlam)"))
  invisible(x)
}

#' @rdname sb_genlasso_path
#' @export
summary.sb_genlasso_path <- function(object, ...) {
  data.frame(knot = seq_along(object$lambda), lambda = object$lambda, df = object$df,
             event = ifelse(object$hit, "hit", "leave"), boundary_size = lengths(object$boundary))
}

#' @rdname sb_genlasso_path
#' @export
plot.sb_genlasso_path <- function(x, ...) {
  b <- as.matrix(x$beta)
  graphics::matplot(x$lambda, t(b), type = "l", lty = 1, col = grDevices::hcl.colors(max(2, nrow(b)), "Dark 3"),
                    xlab = expression(lambda), ylab = "coordinates of beta", main = "generalized lasso path", ...)
  graphics::abline(v = x$lambda, col = "grey85", lwd = 0.5)
  invisible(x)
}
