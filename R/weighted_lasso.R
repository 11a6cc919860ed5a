# The single weighted elastic-net fit (and path), its standardization, and the mapping to glmnet.

# A class response for family = "multinomial": a factor, character or integer classes (glmnet's y), at least two
# classes, each with at least two examples (as glmnet requires), no NA. Returns the 0-based class index (as
# doubles, what the engine reads) with the class labels in attribute "levels".
multinomial_response <- function(y, n, call = rlang::caller_env(), arg = "y") {
  if (is.matrix(y) && ncol(y) == 1L) y <- drop(y)
  if (!(is.factor(y) || is.character(y) || is.numeric(y) || is.logical(y)) || !is.null(dim(y))) {
    sb_abort(c("{.arg {arg}} must be a factor (or character or integer classes) for {.code family = \"multinomial\"}.",
               x = "You supplied {.obj_type_friendly {y}}."), arg = arg, call = call)
  }
  if (length(y) != n) {
    sb_abort(c("{.arg {arg}} must have one class per row of {.arg x} ({n}).", x = "It has length {length(y)}."),
             arg = arg, call = call)
  }
  if (anyNA(y)) {
    sb_abort(c("{.arg {arg}} has {sum(is.na(y))} missing class{?es}.",
               i = "Drop those rows (or use a formula with {.code na.action = na.omit})."), arg = arg, call = call)
  }
  if (is.numeric(y) && any(y != round(y))) {
    sb_abort(c("Numeric {.arg {arg}} must be whole numbers (class labels) for {.code family = \"multinomial\"}.",
               x = "Found {.val {utils::head(y[y != round(y)], 3)}}."), arg = arg, call = call)
  }
  f <- if (is.factor(y)) y else factor(y)
  lev <- levels(f)
  counts <- tabulate(as.integer(f), nbins = length(lev))
  if (sum(counts > 0) < 2L) {
    sb_abort(c("{.arg {arg}} has a single class ({.val {lev[counts > 0]}}): a multinomial model needs at least two.",
               i = "For two classes {.code family = \"binomial\"} is the same model."), arg = arg, call = call)
  }
  if (any(counts < 2L)) {
    sb_abort(c("Every class of {.arg {arg}} needs at least two examples (as glmnet requires).",
               x = "Class{?es} {.val {lev[counts < 2L]}} {?has/have} fewer than two.",
               i = "Drop empty levels with {.fn droplevels}, or merge rare classes."), arg = arg, call = call)
  }
  structure(as.double(as.integer(f) - 1L), levels = lev)
}

# type_multinomial (glmnet's type.multinomial, either name): "ungrouped" (a lasso per class) or "grouped".
check_type_multinomial <- function(type_multinomial, type.multinomial, missing_type, family, call) {
  type_multinomial <- sb_glmnet_name(type_multinomial, type.multinomial, "type_multinomial", "type.multinomial",
                                     missing_type, call = call)
  sb_match_arg(type_multinomial, c("ungrouped", "grouped"), call = call)
}

# The multinomial family takes no offset, box limits or exclusions (yet): a classed error naming the argument.
check_multinomial_constraints <- function(family, offset, lower, upper, exclude, call) {
  if (family != "multinomial") return(invisible())
  bad <- c(offset = !is.null(offset), lower_limits = any(is.finite(lower %||% -Inf)),
           upper_limits = any(is.finite(upper %||% Inf)), exclude = length(exclude) > 0)
  if (any(bad)) {
    a <- names(bad)[bad][1]
    sb_abort(c("{.arg {a}} is not supported for {.code family = \"multinomial\"}.",
               i = "Fit without it (gaussian, binomial and poisson fits take {.arg offset}, limits and {.arg exclude})."),
             arg = a, call = call)
  }
  invisible()
}

# The engine's control entries of a multinomial fit.
multinomial_ctrl <- function(family, levels, type_multinomial) {
  if (family != "multinomial") return(list())
  list(n_class = length(levels), grouped = identical(type_multinomial, "grouped"))
}

# Coefficients of a multinomial path from the engine (a0: K x L, beta: (p K) x L) on the original scale:
# a (p + 1) x K x L array (intercept first, classes named).
multinomial_coef <- function(r, center, scale, levels, names) {
  K <- length(levels); p <- length(center); L <- ncol(r$a0)
  out <- array(0, c(p + 1L, K, L), dimnames = list(names, levels, paste0("s", seq_len(L) - 1L)))
  for (l in seq_len(L)) {
    B <- matrix(r$beta[, l], p, K)
    out[, , l] <- unstandardize_coef(rbind(r$a0[, l], B), center, scale)
  }
  out
}

# A count response: non-negative whole numbers (logical counts as 0/1), not all zero.
poisson_response <- function(y, n, call = rlang::caller_env(), arg = "y", not_all_zero = TRUE) {
  if (is.logical(y)) y <- as.integer(y)
  y <- check_y_vector(y, n, arg = arg, call = call)
  if (any(y < 0)) {
    sb_abort(c("{.arg {arg}} must be counts (non-negative whole numbers) for {.code family = \"poisson\"}.",
               x = "Found {sum(y < 0)} negative value{?s}, e.g. {.val {utils::head(y[y < 0], 3)}}."),
             arg = arg, call = call)
  }
  if (any(y != round(y))) {
    sb_abort(c("{.arg {arg}} must be counts (whole numbers) for {.code family = \"poisson\"}.",
               x = "Found non-integer values, e.g. {.val {utils::head(y[y != round(y)], 3)}}.",
               i = "For rates, model the counts with the exposure as {.arg offset} (log exposure)."),
             arg = arg, call = call)
  }
  if (not_all_zero && all(y == 0)) {
    sb_abort(c("{.arg {arg}} is all zero: the intercept of a Poisson model is then minus infinity.",
               i = "A Poisson fit needs at least one positive count."), arg = arg, call = call)
  }
  y
}

# glmnet's spelling of an argument (penalty.factor, lower.limits, upper.limits, type.measure) for the package's
# (penalty_factor, lower_limits, upper_limits, type_measure): either may be given, not both.
sb_glmnet_name <- function(value, glmnet_value, name, glmnet_name, missing_value, call = rlang::caller_env()) {
  if (is.null(glmnet_value)) return(value)
  if (!missing_value) {
    sb_abort(c("Give {.arg {name}} or its glmnet name {.arg {glmnet_name}}, not both.",
               i = "They are the same setting."), arg = glmnet_name, call = call)
  }
  glmnet_value
}

# The offset, box limits and exclusions of a linear model (glmnet's offset, lower.limits, upper.limits, exclude),
# checked: offset NULL or n finite numbers; limits one number or p, lower <= 0 <= upper; exclude column indices or
# names. Returns offset (NULL or n doubles), lower / upper (NULL = unbounded, else p doubles on the scale of x,
# excluded columns at 0) and the excluded indices.
glm_constraints <- function(offset, lower, upper, exclude, x, call = rlang::caller_env()) {
  n <- nrow(x); p <- ncol(x)
  if (!is.null(offset)) {
    if (is.matrix(offset) && ncol(offset) == 1L) offset <- drop(offset)
    if (!is.numeric(offset) || length(offset) != n || any(!is.finite(offset))) {
      sb_abort(c("{.arg offset} must be {n} finite number{?s}, one per row of {.arg x} (on the scale of the linear predictor).",
                 x = "It has length {length(offset)}{if (length(offset) == n) ' and non-finite entries' else ''}.",
                 i = "A Poisson exposure enters as {.code offset = log(exposure)}."), arg = "offset", call = call)
    }
    offset <- as.double(offset)
  }
  lim <- function(v, arg, default) {
    if (is.null(v)) v <- default
    if (!is.numeric(v) || anyNA(v) || !(length(v) %in% c(1L, p))) {
      sb_abort(c("{.arg {arg}} must be one number or {p}, one per column of {.arg x}.",
                 x = "It has length {length(v)}{if (anyNA(v)) ' and NA entries' else ''}."), arg = arg, call = call)
    }
    rep_len(as.double(v), p)
  }
  lower <- lim(lower, "lower_limits", -Inf)
  upper <- lim(upper, "upper_limits", Inf)
  if (any(lower > upper)) {
    j <- which(lower > upper)
    sb_abort(c("{.arg lower_limits} must not exceed {.arg upper_limits}.",
               x = "Column{?s} {.val {utils::head((colnames(x) %||% seq_len(p))[j], 5)}} {?has/have} lower > upper."),
             arg = "lower_limits", call = call)
  }
  if (any(lower > 0)) {
    sb_abort(c("{.arg lower_limits} must be <= 0 (as glmnet's {.arg lower.limits}): zero must be feasible.",
               x = "Found {.val {utils::head(lower[lower > 0], 3)}}."), arg = "lower_limits", call = call)
  }
  if (any(upper < 0)) {
    sb_abort(c("{.arg upper_limits} must be >= 0 (as glmnet's {.arg upper.limits}): zero must be feasible.",
               x = "Found {.val {utils::head(upper[upper < 0], 3)}}."), arg = "upper_limits", call = call)
  }
  ex <- integer()
  if (!is.null(exclude) && length(exclude)) {
    if (is.character(exclude)) {
      ex <- match(exclude, colnames(x))
      if (anyNA(ex)) {
        sb_abort(c("{.arg exclude} names columns that {.arg x} does not have.",
                   x = "Unknown: {.val {utils::head(exclude[is.na(ex)], 5)}}."), arg = "exclude", call = call)
      }
    } else if (is.numeric(exclude) && all(is.finite(exclude)) && all(exclude == round(exclude)) &&
               all(exclude >= 1 & exclude <= p)) {
      ex <- as.integer(exclude)
    } else {
      sb_abort(c("{.arg exclude} must be column indices (1..{p}) or column names of {.arg x}.",
                 x = "You supplied {.val {format(utils::head(exclude, 5))}}."), arg = "exclude", call = call)
    }
    ex <- sort(unique(ex))
    if (length(ex) == p) {
      sb_abort(c("{.arg exclude} removes every column of {.arg x}: nothing is left to fit.",
                 i = "Exclude fewer columns (an intercept-only model needs no lasso)."), arg = "exclude", call = call)
    }
    lower[ex] <- 0
    upper[ex] <- 0
  }
  bounded <- any(is.finite(lower)) || any(is.finite(upper))
  # lower_limits / upper_limits: the user's scale, kept by the fit (NULL: unbounded, so a fit without limits
  # holds no infinite values)
  list(offset = offset, lower = if (bounded) lower, upper = if (bounded) upper, exclude = ex,
       lower_limits = if (bounded) lower, upper_limits = if (bounded) upper)
}

# The engine's part of the constraints (entries of the control list, read by src/wbb_glm.cpp): limits on the
# standardized scale (b_j = beta_j * scale_j).
# naive_from: the solver's update mode (cd/solver.hpp, Control::naive_from): NULL = automatic; the internal option
# scalebayes.cd_naive_from (a working-set size) forces naive updates from that size on, for tests of both modes.
glm_engine_extras <- function(cons, scale) {
  list(offset = cons$offset, lower = if (!is.null(cons$lower)) cons$lower * scale,
       upper = if (!is.null(cons$upper)) cons$upper * scale,
       naive_from = getOption("scalebayes.cd_naive_from"))
}

#' Control settings for the coordinate-descent solver
#'
#' @param tol Convergence tolerance of the coordinate descent: sweeps stop when the largest weighted change
#'   \eqn{G_{jj} \Delta\beta_j^2} falls below `tol` times the weighted null deviance. The default 1e-14 makes
#'   every draw a true optimum (KKT violations around 1e-7 relative to \eqn{\lambda} or smaller).
#' @param max_iter Maximum coordinate sweeps per solve.
#' @param max_outer Maximum proximal-Newton (IRLS) iterations per solve (binomial).
#' @return A list of class `sb_cd_control`.
#' @export
#' @examples
#' cd_control(tol = 1e-12)
cd_control <- function(tol = 1e-14, max_iter = 100000L, max_outer = 100L) {
  structure(list(
    tol = check_number(tol, lower = 0, lower_open = TRUE, upper = 1e-2),
    max_iter = check_count(max_iter),
    max_outer = check_count(max_outer)
  ), class = "sb_cd_control")
}

# Standardization from the UNWEIGHTED data (inst/design.md, principle 4): column means and population SDs
# (divisor n, as glmnet). Constant columns get scale 1 (their centred column is zero, so their coefficient is
# always 0 when an intercept is fitted).
#
# A sparse x (dgCMatrix) is returned as it is: the engine applies the centring and scaling implicitly
# (inst/include/scalebayes/cd/design.hpp), so `engine` carries them in the control list (x_center, x_scale) and no
# dense or standardized copy is made. The moments are computed from the non-zeros without cancellation.
standardize_x <- function(x, standardize, intercept) {
  p <- ncol(x)
  if (inherits(x, "sparseMatrix")) {
    m <- sparse_col_moments(x)
    center <- if (intercept) m$mean else rep(0, p)
    scale <- rep(1, p)
    if (standardize) {  # as the dense branch: the SD around `center` (the root mean square without intercept)
      s <- if (intercept) m$sd else sqrt(Matrix::colSums(x^2) / nrow(x))
      scale <- ifelse(s > 0, s, 1)
    }
    return(list(x = x, center = center, scale = scale, sparse = TRUE,
                engine = list(x_center = center, x_scale = scale)))
  }
  # one pass per moment and one copy (src/wbb_glm.cpp, scalebayes/math/columns.hpp), the same numbers as
  # colMeans(x) and sqrt(colMeans(sweep(x, 2, center)^2)); sweep()'s temporaries took most of a wbb() call at
  # n = 1e6 (bench/RESULTS.md, "WBB lasso as n grows")
  center <- if (intercept) cpp_col_moments(x, NULL)$mean else rep(0, p)
  scale <- rep(1, p)
  if (standardize) {
    s <- cpp_col_moments(x, center)$sd
    scale <- ifelse(s > 0, s, 1)
  }
  xs <- if (standardize || intercept) cpp_standardize_columns(x, center, scale) else x
  list(x = xs, center = center, scale = scale)
}

# Column means and population SDs (divisor n) of a dgCMatrix from its non-zeros:
# sd_j^2 = [sum_nz (x_ij - m_j)^2 + (n - nnz_j) m_j^2] / n. O(nnz + p) memory.
sparse_col_moments <- function(x) {
  n <- nrow(x)
  nnz <- diff(x@p)
  mean <- Matrix::colSums(x) / n
  x@x <- (x@x - rep(mean, nnz))^2  # a copy of the non-zeros only
  ss <- Matrix::colSums(x)
  list(mean = mean, sd = sqrt((ss + (n - nnz) * mean^2) / n), nnz = nnz)
}

# Map coefficients from the standardized scale back to the original one. coef: matrix with rows
# (a0, beta_1..beta_p) (columns = fits) or a vector.
unstandardize_coef <- function(coef, center, scale) {
  m <- as.matrix(coef)
  beta <- m[-1L, , drop = FALSE] / scale
  a0 <- m[1L, ] - colSums(beta * center)
  rbind(a0, beta, deparse.level = 0)
}

# Shared checks of the design, response, family and penalty for wbb() and weighted_lasso().
prepare_glm_data <- function(x, y, family, alpha, penalty_factor, call) {
  x <- check_x_matrix(x, arg = "x", call = call, sparse = TRUE)
  sparse <- inherits(x, "sparseMatrix")
  if (sparse && family == "multinomial") {
    sb_abort(c("A sparse {.arg x} is supported for the gaussian, binomial and poisson families; this is multinomial.",
               i = "Pass {.code as.matrix(x)} if it fits in memory."), arg = "x", call = call)
  }
  n <- nrow(x); p <- ncol(x)
  if (family == "binomial") {
    y <- binomial_response(y, n, call)
  } else if (family == "poisson") {
    y <- poisson_response(y, n, call)
  } else if (family == "multinomial") {
    y <- multinomial_response(y, n, call)
  } else {
    y <- check_y_vector(y, n, arg = "y", call = call)
  }
  alpha <- check_number(alpha, lower = 0, upper = 1, call = call, arg = "alpha")
  if (is.null(penalty_factor)) penalty_factor <- rep(1, p)
  if (!is.numeric(penalty_factor) || length(penalty_factor) != p || any(!is.finite(penalty_factor)) ||
      any(penalty_factor < 0)) {
    sb_abort(c("{.arg penalty_factor} must be {p} finite non-negative numbers, one per column of {.arg x}.",
               x = "It has length {length(penalty_factor)}."), arg = "penalty_factor", call = call)
  }
  mom <- if (sparse) sparse_col_moments(x) else cpp_col_moments(x, NULL)
  sdx <- mom$sd
  if (any(!is.finite(sdx))) {
    j <- which(!is.finite(sdx))
    sb_abort(c("{.arg x} is too large to standardize: the squares of column{?s} {.val {colnames(x)[utils::head(j, 5)]}} overflow double precision.",
               i = "Rescale {.arg x} (e.g. divide by {format(2^round(log2(max(abs(x)))), digits = 3)}); coefficients scale back by the same factor."),
             arg = "x", kind = "scaling", call = call)
  }
  tiny <- if (sparse) {
    z <- which(sdx == 0)
    z[vapply(z, function(j) {
      v <- x@x[seq.int(x@p[j] + 1L, length.out = x@p[j + 1L] - x@p[j])]
      length(v) > 0 && (length(v) < n || any(v != v[1]))
    }, logical(1))]
  } else {
    z <- which(sdx == 0)
    z[vapply(z, function(j) any(x[, j] != x[1L, j]), logical(1))]
  }
  if (length(tiny)) {
    sb_abort(c("{.arg x} is too small to standardize: the squares of column{?s} {.val {colnames(x)[utils::head(tiny, 5)]}} underflow to zero.",
               i = "Rescale {.arg x} (e.g. multiply by {format(2^-round(log2(max(abs(x[, tiny])))), digits = 3)}); coefficients scale back by the same factor."),
             arg = "x", kind = "scaling", call = call)
  }
  if (family == "gaussian" && max(abs(y)) * 4 * n > .Machine$double.xmax) {
    # a constant huge y passes the test below (its centred values are 0) but the weighted sums of the
    # intercept (about n times max |y|, weights summing to about n) overflow: the draws would be Inf
    sb_abort(c("{.arg y} is too large: weighted sums of its {n} values (as large as {format(max(abs(y)), digits = 3)}) overflow double precision.",
               i = "Rescale {.arg y} (e.g. divide by {format(2^round(log2(max(abs(y)))), digits = 3)}); coefficients scale by the same factor."),
             arg = "y", kind = "scaling", call = call)
  }
  ydev <- if (family == "gaussian") max(abs(y - mean(y))) else 1
  if (ydev > 0 && ydev < 1e-150) {
    # squares of the centred response underflow: the samplers' noise scale and the step warm-up would fail
    # ("reduce step_size") instead of naming the data (issue 61)
    sb_abort(c("{.arg y} is too small: its values differ by at most {format(ydev, digits = 3)}, and their squares underflow double precision.",
               i = "Rescale {.arg y} (e.g. multiply by {format(2^-round(log2(ydev)), digits = 3)}); coefficients scale by the same factor."),
             arg = "y", kind = "scaling", call = call)
  }
  if (family == "gaussian" && !is.finite(sum((y - mean(y))^2))) {
    sb_abort(c("{.arg y} is too large: its sum of squares overflows double precision.",
               i = "Rescale {.arg y} (e.g. divide by {format(2^round(log2(max(abs(y)))), digits = 3)}); coefficients scale by the same factor."),
             arg = "y", kind = "scaling", call = call)
  }
  const <- which(sdx == 0)
  if (length(const)) {
    sb_warn(c("{length(const)} constant column{?s} in {.arg x}: {.val {utils::head(colnames(x)[const], 5)}}.",
              i = "Their coefficients are fixed at 0 (the intercept absorbs them)."), kind = "constant_column")
  }
  if (p > 1L && p <= 5000L && !sparse) {
    # equal columns have equal (mean, sd), computed by the same arithmetic: only columns whose pair recurs are
    # compared whole (duplicated(t(x)) of every column took 9 s at n = 1e6, p = 100)
    key <- paste(format(mom$mean, digits = 17), format(sdx, digits = 17))
    cand <- which(key %in% key[duplicated(key)])
    dup <- if (length(cand)) cand[duplicated(t(x[, cand, drop = FALSE]))] else integer()
    if (length(dup)) {
      sb_warn(c("{length(dup)} duplicated column{?s} in {.arg x}: {.val {utils::head(colnames(x)[dup], 5)}}.",
                i = "The lasso solution is then not unique; coordinate descent gives the whole effect to the first copy."),
              kind = "duplicated_column")
    }
  }
  levels <- attr(y, "levels")
  attr(y, "levels") <- NULL
  list(x = x, y = y, alpha = alpha, penalty_factor = as.double(penalty_factor), n = n, p = p, levels = levels)
}

#' Weighted lasso / elastic-net fit
#'
#' Solves, for observation weights \eqn{w_i} and penalty weights \eqn{v_j},
#' \deqn{\min_{\beta_0, \beta} \sum_i w_i l_i(\beta_0, \beta) + \lambda \sum_j v_j [\alpha |\beta_j| + (1-\alpha)\beta_j^2/2]}{
#' min sum_i w_i l_i + lambda sum_j v_j [alpha |b_j| + (1 - alpha) b_j^2 / 2]}
#' with \eqn{l_i = (y_i - \eta_i)^2/2} (gaussian), the negative Bernoulli log-likelihood (binomial) or the negative
#' Poisson log-likelihood \eqn{e^{\eta_i} - y_i\eta_i} (poisson, log link), \eqn{\eta_i = o_i + \beta_0 +
#' x_i'\beta} with an optional `offset` \eqn{o_i}, unpenalized intercept, optionally within box limits
#' `lower_limits <= beta_j <= upper_limits`, by exact coordinate descent (see Details). `lambda` is on this SUM
#' scale.
#'
#' **Mapping to glmnet.** glmnet divides the loss by \eqn{\sum_i w_i} and rescales the penalty factors to sum
#' to \eqn{p}. The problem above is therefore the same as
#' `glmnet(x, y, weights = w, penalty.factor = v, lambda = lambda * sum(v) / (p * sum(w)), standardize = FALSE)`
#' (with `standardize = FALSE`, since glmnet standardizes with weighted SDs); [glmnet_lambda()] returns that
#' value. With unit weights, `lambda` here is `n` times glmnet's. For the gaussian elastic net glmnet's
#' internal standardization of `y` rescales its ridge term; [glmnet_equivalent()] gives the matching
#' `lambda` and `alpha`.
#'
#' **Standardization.** With `standardize = TRUE` the columns are centred and scaled by their *unweighted*
#' means and SDs (divisor n) before fitting, the penalty applies to the standardized coefficients, and the
#' coefficients are returned on the original scale. (This differs from glmnet, which uses weighted SDs; the
#' WBB needs a standardization that does not move with the bootstrap weights.)
#'
#' **Algorithm.** Covariance updates over a working set (the weighted centred Gram matrix of the working set,
#' built once per solve by blocked rank-k updates), active-set cycling, the sequential strong rule for
#' screening and a full KKT check after convergence, warm starts along the path; binomial and poisson by
#' proximal Newton with step halving (a Poisson step that overflows the log link is halved). Every fit returns
#' its largest KKT violation (of the constrained problem when there are limits).
#'
#' **Multinomial.** `family = "multinomial"` fits a class response (a factor, or character / integer classes;
#' K >= 2 classes, each with at least two examples) in glmnet's symmetric parametrisation: one intercept and one
#' coefficient vector per class, \eqn{l_i = \log\sum_k e^{\eta_{ik}} - \eta_{i y_i}}{l_i = log sum_k exp(eta_ik) - eta_i,y_i},
#' \eqn{\eta_{ik} = \beta_{0k} + x_i'\beta_k}. `type_multinomial = "ungrouped"` (default) penalizes every
#' coefficient, \eqn{\sum_j v_j \sum_k [\alpha|\beta_{jk}| + (1-\alpha)\beta_{jk}^2/2]}; `"grouped"` penalizes each
#' feature's K coefficients as a group, \eqn{\sum_j v_j [\alpha\|\beta_{j\cdot}\|_2 + (1-\alpha)\|\beta_{j\cdot}\|_2^2/2]}
#' (a feature is in all classes or none), as glmnet's `type.multinomial` (either name is accepted). The same
#' lambda mapping to glmnet holds ([glmnet_lambda()]). The loss is unchanged by adding one constant to every
#' class: the intercepts are centred on the standardized scale, grouped coefficients sum to zero over the
#' classes, and an ungrouped lasso may have several optimal shifts (the same objective; glmnet may report
#' another). Solved by proximal Newton with the exact K x K Hessian blocks per feature. `coefficients` is then a
#' (p + 1) x K x L array and `coef()` a (p + 1) x K matrix (one column per class) for one lambda; `predict()`
#' gives observations x classes matrices (`"link"`, `"response"`: the class probabilities) or the most probable
#' class (`"class"`, a factor). `offset`, limits and `exclude` are not supported for this family (an error).
#'
#' **glmnet's arguments.** `offset`, `exclude`, `intercept`, `standardize` and `foldid` ([cv_weighted_lasso()])
#' have glmnet's names and meaning; `penalty_factor`, `lower_limits`, `upper_limits` and `type_measure` follow
#' the package's spelling, and glmnet's `penalty.factor`, `lower.limits`, `upper.limits` and `type.measure` are
#' accepted for them (one or the other). Limits are on the scale of `x` (as glmnet's), also with
#' `standardize = TRUE`; they must allow zero (`lower_limits <= 0 <= upper_limits`), and an excluded column is a
#' coefficient held at 0. With an `offset`, predictions at new data need `newoffset` (or, for a formula with
#' `offset()`, a data frame holding its variables). The same arguments work in [cv_weighted_lasso()] and [wbb()].
#'
#' @param x Numeric matrix (n x p), or a sparse matrix of the Matrix package (kept sparse as a `dgCMatrix`, standardized implicitly; gaussian, binomial and poisson; the formula interface builds a dense design). Or a model formula, `y ~ x1 + x2` or `y ~ .`, with the variables in `data`: see [sb_formula]. The formula's intercept is
#'   `intercept` (`y ~ . - 1`: none).
#' @param y Response: numeric (gaussian), 0/1, logical or a two-level factor (binomial), counts (poisson:
#'   non-negative whole numbers) or classes (multinomial: a factor, or character / integer labels); not given with
#'   a formula.
#' @inheritParams wbb
#' @param family `"gaussian"`, `"binomial"`, `"poisson"` (log link) or `"multinomial"` (softmax; see
#'   "Multinomial").
#' @param type_multinomial `"ungrouped"` (a lasso per class, default) or `"grouped"` (a group lasso across the
#'   classes per feature), as glmnet's `type.multinomial`.
#' @param type.multinomial glmnet's name of `type_multinomial`.
#' @param weights Observation weights (non-negative, default 1). Zero weights drop rows.
#' @param penalty_factor Penalty weights \eqn{v_j} (non-negative, default 1; 0 leaves a coefficient
#'   unpenalized).
#' @param lambda Decreasing penalty values (SUM scale). `NULL` gives a path of `nlambda` values from
#'   \eqn{\lambda_{max}} down to `lambda_min_ratio` times it.
#' @param alpha Elastic-net mixing, 1 = lasso, 0 = ridge.
#' @param standardize,intercept See Details.
#' @param nlambda,lambda_min_ratio Path settings when `lambda = NULL`.
#' @param control [cd_control()].
#' @param offset Known part of the linear predictor, one value per row (glmnet's `offset`; a Poisson exposure as
#'   `log(exposure)`); in a formula, `offset(log(exposure))` gives it. `NULL`: none.
#' @param lower_limits,upper_limits Box limits on the coefficients (one number or one per column of `x`, on
#'   the scale of `x`): `lower_limits <= 0 <= upper_limits` (glmnet's `lower.limits`, `upper.limits`);
#'   `lower_limits = 0` gives non-negative coefficients.
#' @param exclude Columns (indices or names) whose coefficients are held at 0 (glmnet's `exclude`).
#' @param penalty.factor,lower.limits,upper.limits glmnet's names of `penalty_factor`, `lower_limits` and
#'   `upper_limits` (give one or the other).
#' @return An object of class `sb_weighted_lasso`: `coefficients` ((p + 1) x L matrix, original scale; multinomial:
#'   a (p + 1) x K x L array, classes named by the levels, also kept as `levels`),
#'   `lambda`, `kkt` (largest KKT violation per lambda, relative to lambda, on the standardized problem),
#'   `iterations`, `converged`, the settings, `call` and `data` (the training `x` and `y`); methods in
#'   [predict.sb_weighted_lasso()].
#' @export
#' @examples
#' data(diabetes)
#' fit <- weighted_lasso(diabetes$x, diabetes$y, lambda = 500)
#' coef(fit)
weighted_lasso <- function(x, y, family = c("gaussian", "binomial", "poisson", "multinomial"), weights = NULL,
                           penalty_factor = NULL, lambda = NULL, alpha = 1, standardize = TRUE, intercept = TRUE,
                           nlambda = 100L, lambda_min_ratio = NULL, control = cd_control(), offset = NULL,
                           lower_limits = -Inf, upper_limits = Inf, exclude = NULL, data = NULL, subset = NULL,
                           na.action = NULL, contrasts = NULL, penalty.factor = NULL, lower.limits = NULL,
                           upper.limits = NULL, type_multinomial = c("ungrouped", "grouped"),
                           type.multinomial = NULL) {
  if (!missing(x) && sb_is_formula(x)) {
    return(sb_formula_fit(environment(), "weighted_lasso", weighted_lasso, match.call(), intercept = "arg",
                          response = "glm"))
  }
  sb_formula_only(environment())
  call <- rlang::current_env()
  mcall <- match.call()
  family <- sb_match_arg(family)
  penalty_factor <- sb_glmnet_name(penalty_factor, penalty.factor, "penalty_factor", "penalty.factor", missing(penalty_factor))
  lower_limits <- sb_glmnet_name(lower_limits, lower.limits, "lower_limits", "lower.limits", missing(lower_limits))
  upper_limits <- sb_glmnet_name(upper_limits, upper.limits, "upper_limits", "upper.limits", missing(upper_limits))
  type_multinomial <- check_type_multinomial(type_multinomial, type.multinomial, missing(type_multinomial), family, call)
  check_multinomial_constraints(family, offset, lower_limits, upper_limits, exclude, call)
  d <- prepare_glm_data(x, y, family, alpha, penalty_factor, call)
  cons <- glm_constraints(offset, lower_limits, upper_limits, exclude, d$x, call)
  standardize <- check_flag(standardize)
  intercept <- check_flag(intercept)
  w <- if (is.null(weights)) rep(1, d$n) else check_weights(weights, d$n, arg = "weights")
  control <- check_cd_control(control, call)
  lambda <- check_lambda(lambda, call)
  lambda_user <- lambda
  ws <- rescale_weights(w)
  w_user <- w
  w <- ws$w
  if (!is.null(lambda)) lambda <- lambda / ws$c
  st <- standardize_x(d$x, standardize, intercept)
  ctrl <- c(unclass(control), intercept = intercept, glm_engine_extras(cons, st$scale), st$engine,
            multinomial_ctrl(family, d$levels, type_multinomial))
  if (is.null(lambda)) {
    nlambda <- check_count(nlambda, max = 1e5)
    if (is.null(lambda_min_ratio)) lambda_min_ratio <- if (d$n > d$p) 1e-4 else 1e-2
    lambda_min_ratio <- check_number(lambda_min_ratio, lower = 0, upper = 1, lower_open = TRUE, upper_open = TRUE)
    lmax <- sb_call_engine(cpp_lambda_max(st$x, d$y, family, d$alpha, w, d$penalty_factor, ctrl))
    lambda <- lmax * exp(seq(0, log(lambda_min_ratio), length.out = nlambda))
  }
  r <- sb_call_engine(cpp_enet_path(st$x, d$y, family, d$alpha, w, d$penalty_factor, lambda, ctrl))
  if (isTRUE(r$interrupted)) rlang::interrupt()
  if (family == "multinomial") {
    coefs <- multinomial_coef(r, st$center, st$scale, d$levels, c("(Intercept)", colnames(d$x)))
  } else {
    coefs <- unstandardize_coef(rbind(r$a0, r$beta), st$center, st$scale)
    dimnames(coefs) <- list(c("(Intercept)", colnames(d$x)), paste0("s", seq_along(lambda) - 1L))
  }
  if (!isTRUE(r$converged)) {
    sb_warn(c("The solver reached {.arg max_iter} before converging; increase it in {.fn cd_control}.",
              i = if (family == "binomial") "If the classes are (nearly) separable, the optimum is at infinity for small lambda: use a larger lambda.",
              i = if (family == "poisson") "Counts that are zero wherever the weights are positive put the intercept at minus infinity."),
            kind = "convergence")
  }
  lambda <- if (is.null(lambda_user)) lambda * ws$c else lambda_user
  check_lambda_scale(lambda, call)
  wl_check_kkt(r$kkt, w_user, call)
  structure(list(
    coefficients = coefs, lambda = lambda, kkt = r$kkt, iterations = r$iterations, converged = r$converged,
    family = family, alpha = d$alpha, weights = w_user, penalty_factor = d$penalty_factor,
    standardize = standardize, intercept = intercept, nobs = d$n, call = mcall,
    offset = cons$offset, lower_limits = cons$lower_limits, upper_limits = cons$upper_limits, exclude = cons$exclude,
    levels = d$levels, type_multinomial = if (family == "multinomial") type_multinomial,
    data = list(x = d$x, y = d$y, offset = cons$offset)
  ), class = c("sb_weighted_lasso", "sb_point_fit"))
}

# KKT values that are not finite or larger than 1 (relative to lambda; weights spanning more than double precision resolves, e.g. c(1e300, 1, ...): the
# small-weight observations vanish next to the largest and lambda with them) are a classed warning naming
# `weights`, not a silent Inf (issue 61).
wl_check_kkt <- function(kkt, w, call) {
  bad <- !is.finite(kkt) | kkt > 1  # a violation larger than lambda itself: not a solution
  if (!any(bad)) return(invisible(kkt))
  pos <- w[w > 0]
  ratio <- max(pos) / min(pos)
  sb_warn(c("The KKT check fails at {sum(bad)} of {length(kkt)} lambda value{?s} (largest relative violation {format(max(kkt), digits = 3)}): the solution cannot be certified.",
            i = if (ratio > 1 / .Machine$double.eps) "The {.arg weights} span a ratio of {format(ratio, digits = 3)} (largest / smallest), beyond double precision (about 4.5e15): the observations with small weights do not change the weighted loss. Drop them (weight 0) or bring the weights closer together.",
            i = "Check {.arg weights} and {.arg lambda} for extreme values."),
          kind = "kkt")
  invisible(kkt)
}

# Observation weights whose sum (or the weighted loss) would overflow or underflow double precision are
# divided by a power of two c, and lambda with them: the objective is then exactly c^-1 times the original
# one (same minimizer, no rounding), and lambda is reported on the caller's scale. Weights of ordinary size
# are left as they are (c = 1), so results do not change.
rescale_weights <- function(w) {
  big <- max(w)
  s <- if (big > 1e100 || big < 1e-100) 2^round(log2(big)) else 1
  list(w = w / s, c = s)
}

# The lambda path on the caller's scale of weights that were rescaled (see rescale_weights()) must be
# representable.
check_lambda_scale <- function(lambda, call) {
  if (any(!is.finite(lambda))) {
    sb_abort(c("The lambda path for these {.arg weights} is beyond double precision.",
               i = "Divide {.arg weights} by a constant (the fit is the same with lambda divided by it too), or give {.arg lambda}."),
             arg = "weights", kind = "scaling", call = call)
  }
}

check_cd_control <- function(control, call) {
  if (!inherits(control, "sb_cd_control") && !inherits(control, "sb_wbb_control")) {
    sb_abort(c("{.arg control} must be made by {.fn cd_control} (or {.fn wbb_control}).",
               x = "You supplied {.obj_type_friendly {control}}."), arg = "control", call = call)
  }
  control[c("tol", "max_iter", "max_outer")]
}

#' @export
coef.sb_weighted_lasso <- function(object, ...) {
  co <- object$coefficients
  if (length(dim(co)) == 3L) return(if (dim(co)[3] == 1L) co[, , 1L] else co)  # multinomial: (p + 1) x K (x L)
  if (ncol(co) == 1L) drop(co) else co
}

# The number of non-zero coefficients per lambda (multinomial: of features with a non-zero coefficient in any
# class, glmnet's df).
sb_wl_df <- function(co) {
  if (length(dim(co)) == 3L) return(apply(co[-1L, , , drop = FALSE] != 0, 3, function(m) sum(rowSums(m) > 0)))
  colSums(co[-1L, , drop = FALSE] != 0)
}

#' @export
print.sb_weighted_lasso <- function(x, ...) {
  cat(sprintf("<sb_weighted_lasso> %s, alpha = %g, %d lambda value%s, max KKT violation %.1e\n",
              x$family, x$alpha, length(x$lambda), if (length(x$lambda) > 1) "s" else "", max(x$kkt)))
  nz <- sb_wl_df(x$coefficients)
  if (x$family == "multinomial") {
    cat(sprintf("  %d classes (%s), %s; nonzero: features with a non-zero coefficient in some class\n",
                length(x$levels), paste(utils::head(x$levels, 6), collapse = ", "), x$type_multinomial))
  }
  print(data.frame(lambda = signif(x$lambda, 4), nonzero = nz, row.names = NULL)[seq_len(min(10L, length(nz))), ])
  invisible(x)
}

#' glmnet's arguments for the same weighted problem
#'
#' `glmnet_lambda()` converts a SUM-scale `lambda` of [weighted_lasso()] / [wbb()] into the `lambda` that
#' makes `glmnet(x, y, weights = weights, penalty.factor = penalty_factor, standardize = FALSE, ...)` solve the
#' same lasso problem: \eqn{\lambda \sum_j v_j / (p \sum_i w_i)}.
#'
#' `glmnet_equivalent()` also handles the elastic net (`alpha < 1`). For the gaussian family glmnet
#' standardizes `y` internally, which scales its ridge term by \eqn{1/s_y} (\eqn{s_y} the weighted
#' population SD of `y`); the equivalent glmnet call then needs a different `alpha` as well:
#' with \eqn{c_1 = \lambda\alpha\bar v/\sum w}, \eqn{c_2 = \lambda(1-\alpha)\bar v/\sum w}
#' (\eqn{\bar v} the mean penalty weight), glmnet's
#' \eqn{\lambda_g = c_1 + c_2 s_y} and \eqn{\alpha_g = c_1/\lambda_g}. For the binomial, poisson and multinomial families
#' \eqn{\lambda_g = \lambda \bar v / \sum w} and \eqn{\alpha_g = \alpha}. The offset, limits and exclusions
#' need no mapping (glmnet's `offset`, `lower.limits`, `upper.limits` and `exclude` mean the same; limits on the
#' scale of `x`).
#' @param lambda SUM-scale penalty.
#' @param weights Observation weights.
#' @param penalty_factor Penalty weights.
#' @param alpha Elastic-net mixing parameter.
#' @param family `"gaussian"`, `"binomial"`, `"poisson"` or `"multinomial"`.
#' @param y The response (gaussian family with `alpha < 1` only).
#' @return `glmnet_lambda()`: the glmnet lambda; `glmnet_equivalent()`: a list with `lambda` and `alpha`.
#' @export
#' @examples
#' glmnet_lambda(100, weights = rep(1, 50), penalty_factor = rep(1, 10))  # 100 / 50
glmnet_lambda <- function(lambda, weights, penalty_factor) {
  check_glmnet_args(lambda, weights, penalty_factor)
  out <- lambda * sum(penalty_factor) / (length(penalty_factor) * sum(weights))
  if (any(!is.finite(out))) {
    sb_abort(c("glmnet's lambda overflows double precision for this {.arg lambda}.",
               i = "Use a smaller {.arg lambda}, or larger {.arg weights}."), arg = "lambda", kind = "scaling")
  }
  out
}

check_glmnet_args <- function(lambda, weights, penalty_factor, call = rlang::caller_env()) {
  check_lambda(lambda, call)
  if (is.null(lambda)) sb_abort("{.arg lambda} must be finite non-negative numbers.", arg = "lambda", call = call)
  if (!is.numeric(weights) || !length(weights)) {
    sb_abort(c("{.arg weights} must be a non-empty vector of non-negative numbers.",
               x = "You supplied {.obj_type_friendly {weights}}."), arg = "weights", call = call)
  }
  check_weights(weights, length(weights), arg = "weights", call = call)
  if (!is.finite(sum(weights))) {
    sb_abort(c("The sum of {.arg weights} overflows double precision.",
               i = "Divide {.arg weights} and {.arg lambda} by the same power of two (the problem is unchanged)."),
             arg = "weights", call = call)
  }
  if (!is.numeric(penalty_factor) || !length(penalty_factor) || any(!is.finite(penalty_factor)) ||
      any(penalty_factor < 0) || !is.finite(sum(penalty_factor))) {
    sb_abort(c("{.arg penalty_factor} must be a non-empty vector of finite non-negative numbers.",
               x = "You supplied {.val {format(utils::head(penalty_factor, 5))}}."), arg = "penalty_factor", call = call)
  }
  invisible(TRUE)
}

#' @rdname glmnet_lambda
#' @export
glmnet_equivalent <- function(lambda, alpha, weights, penalty_factor,
                              family = c("gaussian", "binomial", "poisson", "multinomial"),
                              y = NULL) {
  family <- sb_match_arg(family)
  alpha <- check_number(alpha, lower = 0, upper = 1)
  base <- glmnet_lambda(lambda, weights, penalty_factor)
  if (family != "gaussian" || alpha == 1) return(list(lambda = base, alpha = alpha))
  if (is.null(y)) sb_abort("{.arg y} is needed for the gaussian elastic net.", arg = "y")
  y <- check_y_vector(y, length(weights))
  sy <- sqrt(sum(weights * (y - sum(weights * y) / sum(weights))^2) / sum(weights))
  c1 <- base * alpha
  c2 <- base * (1 - alpha)
  lg <- c1 + c2 * sy
  list(lambda = lg, alpha = if (lg > 0) c1 / lg else alpha)
}

# ---- summary, plot and the draw methods of a weighted-lasso fit ---------------------------------------------------

#' Summary and path plot of a weighted-lasso fit
#'
#' `summary()` gives, for every lambda of the fit, the number of non-zero coefficients (`df`), the share of the
#' weighted null deviance explained (`dev_ratio`, glmnet's `%Dev`: \eqn{1 - D(\lambda)/D_0} with the training
#' data's weighted deviance \eqn{D}, the residual sum of squares for gaussian, and \eqn{D_0} that of the
#' intercept-only fit, or of the zero fit without an intercept), glmnet's lambda ([glmnet_lambda()]) and the KKT
#' violation; for a single lambda also the table of coefficients. `plot()` draws the coefficient paths against
#' \eqn{\log \lambda}, as glmnet's `plot(fit, xvar = "lambda")` (the numbers of non-zero coefficients along the
#' top).
#'
#' A weighted lasso is a penalized point estimate: it has no posterior draws, so `as.matrix()`,
#' `as_draws_df()`, `as_draws_matrix()`, `as_draws_array()` and `posterior_interval()` are classed errors
#' (`scalebayes_error_not_applicable`) that point to [wbb()], which draws from the posterior of the same model.
#'
#' @param object,x A [weighted_lasso()] fit (`x` also a `summary()` of one for `print()`).
#' @param digits Significant digits printed.
#' @param label Write the column names at the right end of the paths.
#' @param ... `summary()`, `as.matrix()` and the draws methods: not used (an error); `plot()`: passed to
#'   [graphics::matplot()].
#' @return `summary()`: an object of class `summary_sb_weighted_lasso`, a list with `path` (a data frame with
#'   one row per lambda: `lambda`, `lambda_glmnet`, `df`, `dev_ratio`, `kkt`), `coefficients` (a data frame of
#'   the coefficients for a single lambda, `NULL` for a path) and the fit's settings. `plot()`: `x`, invisibly.
#' @name sb_weighted_lasso-methods
#' @examples
#' data(diabetes)
#' fit <- weighted_lasso(diabetes$x, diabetes$y, nlambda = 30)
#' summary(fit)
#' plot(fit, label = TRUE)
#' summary(weighted_lasso(diabetes$x, diabetes$y, lambda = 500))
NULL

#' @rdname sb_weighted_lasso-methods
#' @export
summary.sb_weighted_lasso <- function(object, ...) {
  sb_check_dots(..., fn = "summary")
  co <- object$coefficients
  td <- sb_wl_data(object)
  w <- object$weights
  if (object$family == "multinomial") {
    dev <- apply(co, 3, function(b) sb_multinomial_deviance(td$y, cbind(1, td$x) %*% b, w))
    share <- vapply(seq_along(object$levels) - 1L, function(k) sum(w[td$y == k]), 0)
    e0 <- if (object$intercept) log(share / sum(share)) else rep(0, length(share))
    dev0 <- sb_multinomial_deviance(td$y, matrix(e0, length(td$y), length(e0), byrow = TRUE), w)
  } else {
    eta <- cbind(1, td$x) %*% co
    if (!is.null(td$offset)) eta <- eta + td$offset
    dev <- sb_wl_deviance(td$y, eta, w, object$family)
    null_eta <- sb_wl_null_eta(td$y, w, td$offset, object$family, object$intercept)
    dev0 <- sb_wl_deviance(td$y, matrix(null_eta, length(td$y), 1L), w, object$family)
  }
  nz <- sb_wl_df(co)
  path <- data.frame(lambda = object$lambda,
                     lambda_glmnet = glmnet_lambda(object$lambda, w, object$penalty_factor),
                     df = unname(nz), dev_ratio = if (dev0 > 0) unname(1 - dev / dev0) else NA_real_,
                     kkt = object$kkt, row.names = NULL)
  coefs <- if (length(dim(co)) == 3L) {
    if (dim(co)[3] == 1L) {
      data.frame(coefficient = rep(rownames(co), ncol(co)), class = rep(colnames(co), each = nrow(co)),
                 estimate = as.vector(co[, , 1L]), row.names = NULL)
    }
  } else if (ncol(co) == 1L) {
    data.frame(coefficient = rownames(co), estimate = unname(co[, 1L]), row.names = NULL)
  }
  structure(list(path = path, coefficients = coefs, family = object$family, alpha = object$alpha,
                 standardize = object$standardize, intercept = object$intercept, nobs = object$nobs,
                 converged = object$converged, weighted = any(w != 1)),
            class = "summary_sb_weighted_lasso")
}

# The linear predictor of the intercept-only fit (or of the zero fit without intercept), with the offset.
sb_wl_null_eta <- function(y, w, offset, family, intercept) {
  o <- offset %||% 0
  if (!intercept) return(rep_len(o, length(y)))
  if (is.null(offset)) {
    m <- sum(w * y) / sum(w)
    return(rep(switch(family, binomial = stats::qlogis(m), poisson = log(m), m), length(y)))
  }
  if (family == "gaussian") return(o + sum(w * (y - o)) / sum(w))
  if (family == "poisson") return(o + log(sum(w * y) / sum(w * exp(o))))
  fam <- stats::binomial()
  g <- suppressWarnings(stats::glm.fit(matrix(1, length(y), 1L), y, weights = w, offset = o, family = fam))
  o + g$coefficients[[1L]]
}

# Weighted multinomial deviance -2 sum_i w_i log p_{i y_i} of one n x K linear predictor (y: 0-based classes).
sb_multinomial_deviance <- function(y, eta, w) {
  m <- apply(eta, 1, max)
  lse <- m + log(rowSums(exp(eta - m)))
  -2 * sum(w * (eta[cbind(seq_along(y), y + 1L)] - lse))
}

# Weighted deviance of every column of eta: sum_i w_i (y_i - eta_i)^2 (gaussian), -2 sum_i w_i log p(y_i) (binomial),
# 2 sum_i w_i [y_i log(y_i / mu_i) - (y_i - mu_i)] (poisson).
sb_wl_deviance <- function(y, eta, w, family) {
  if (family == "poisson") {
    ly <- ifelse(y > 0, y * log(y), 0)
    return(2 * colSums(w * (ly - y - (y * eta - exp(eta)))))
  }
  if (family == "binomial") {
    ll <- matrix(ifelse(rep(y, ncol(eta)) == 1, stats::plogis(eta, log.p = TRUE),
                        stats::plogis(eta, lower.tail = FALSE, log.p = TRUE)), nrow(eta))
    return(-2 * colSums(w * ll))
  }
  colSums(w * (y - eta)^2)
}

#' @rdname sb_weighted_lasso-methods
#' @export
print.summary_sb_weighted_lasso <- function(x, digits = 4, ...) {
  p <- x$path
  cat(sprintf("Weighted %s: %s, %d observation%s%s, %s, %s\n",
              if (x$alpha == 1) "lasso" else sprintf("elastic net (alpha = %g)", x$alpha), x$family, x$nobs,
              if (x$nobs == 1L) "" else "s", if (x$weighted) " (weighted)" else "",
              if (x$standardize) "penalty on standardized columns" else "penalty on the columns as given",
              if (x$intercept) "unpenalized intercept" else "no intercept"))
  cat(sprintf("%d lambda value%s (sum scale; lambda_glmnet: glmnet's scale); largest KKT violation %.1e%s\n",
              nrow(p), if (nrow(p) == 1L) "" else "s", max(p$kkt), if (isTRUE(x$converged)) "" else " (NOT converged)"))
  show <- p
  show$dev_ratio <- round(100 * show$dev_ratio, 2)
  names(show)[names(show) == "dev_ratio"] <- "%dev"
  show$kkt <- signif(show$kkt, 2)
  show$lambda <- signif(show$lambda, digits)
  show$lambda_glmnet <- signif(show$lambda_glmnet, digits)
  rows <- if (nrow(show) > 20L) unique(round(seq(1, nrow(show), length.out = 20L))) else seq_len(nrow(show))
  print(show[rows, , drop = FALSE], row.names = FALSE)
  if (length(rows) < nrow(show)) cat(sprintf("(%d of %d lambda values shown; all in summary(fit)$path)\n", length(rows), nrow(show)))
  if (!is.null(x$coefficients)) {
    co <- x$coefficients
    est <- ifelse(co$estimate == 0, ".", format(signif(co$estimate, digits), drop0trailing = TRUE))
    if (!is.null(co$class)) {  # multinomial: one column per class
      icpt <- co$coefficient == "(Intercept)"
      cat(sprintf("Coefficients (%d of %d non-zero; one column per class):\n", sum(co$estimate[!icpt] != 0), sum(!icpt)))
      tab <- matrix(est, ncol = length(unique(co$class)), dimnames = list(unique(co$coefficient), unique(co$class)))
      print(noquote(tab), right = TRUE)
    } else {
      cat(sprintf("Coefficients (%d of %d non-zero):\n", sum(co$estimate[-1L] != 0), nrow(co) - 1L))
      print(data.frame(estimate = est, row.names = co$coefficient), right = TRUE)
    }
  }
  invisible(x)
}

#' @rdname sb_weighted_lasso-methods
#' @export
plot.sb_weighted_lasso <- function(x, label = FALSE, ...) {
  label <- check_flag(label)
  co <- x$coefficients
  if (length(dim(co)) == 3L) {  # multinomial: one path per class and feature, named "class:feature"
    nm <- as.vector(outer(rownames(co)[-1L], colnames(co), function(a, b) paste0(b, ":", a)))
    co <- rbind(0, matrix(co[-1L, , , drop = FALSE], ncol = dim(co)[3], dimnames = list(nm, NULL)))
  }
  beta <- co[-1L, , drop = FALSE]
  ll <- log(x$lambda)
  if (any(!is.finite(ll))) {
    sb_abort(c("The path plot draws against log(lambda), and this fit has lambda = 0.",
               i = "Use {.fn coef} for the coefficients at lambda = 0."), arg = "x", kind = "not_applicable",
             also = "state")
  }
  cols <- grDevices::hcl.colors(max(1L, nrow(beta)), "Dark 3")
  graphics::matplot(ll, t(beta), type = if (length(ll) == 1L) "p" else "l", lty = 1, pch = 20, col = cols,
                    xlab = expression(log(lambda)), ylab = "Coefficients", ...)
  graphics::abline(h = 0, col = "grey70", lty = 3)
  at <- pretty(ll)
  at <- at[at >= min(ll) & at <= max(ll)]
  if (length(ll) > 1L && length(at)) {
    df <- colSums(beta != 0)
    graphics::axis(3, at = at, labels = df[vapply(at, function(a) which.min(abs(ll - a)), integer(1))], tick = FALSE,
                   line = -0.5, cex.axis = 0.8)
  }
  if (label && nrow(beta)) {
    end <- which.min(ll)
    graphics::text(ll[end], beta[, end], rownames(beta), pos = 4, cex = 0.6, xpd = TRUE)
  }
  invisible(x)
}

#' @rdname sb_weighted_lasso-methods
#' @export
as.matrix.sb_point_fit <- function(x, ...) sb_no_draws(x, call = rlang::current_env())
#' @rdname sb_weighted_lasso-methods
#' @method as_draws_df sb_point_fit
#' @export
as_draws_df.sb_point_fit <- function(x, ...) sb_no_draws(x, call = rlang::current_env())
#' @rdname sb_weighted_lasso-methods
#' @method as_draws_matrix sb_point_fit
#' @export
as_draws_matrix.sb_point_fit <- function(x, ...) sb_no_draws(x, call = rlang::current_env())
#' @rdname sb_weighted_lasso-methods
#' @method as_draws_array sb_point_fit
#' @export
as_draws_array.sb_point_fit <- function(x, ...) sb_no_draws(x, call = rlang::current_env())
