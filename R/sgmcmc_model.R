#' A minibatched model as a target of sgmcmc_density()
#'
#' `sgmcmc_model()` makes the user's own model, written as a log-likelihood of a minibatch of rows and a log
#' prior, a target of [sgmcmc_density()]: every sampler (SGLD, SGHMC, SGNHT, HAMCMC-SA, HAMCMC), chains, the
#' step-size warm-up, R-hat / ESS, [ksd()], progress and Ctrl-C are those of [sgmcmc_density()], and each
#' iteration reads `batch_size` rows drawn without replacement, the log-likelihood's gradient scaled by
#' \eqn{N / n} inside (the user's function returns the plain sum over the rows it is given).
#'
#' @section Why a target object:
#' R's `sgmcmc` package took `logLik(params, dataset)` and `logPrior(params)` with a `minibatchSize`, one
#' function per sampler; BlackJAX builds a log density and hands it to a sampler. Here the model and its data
#' make one object, `sgmcmc_model(log_lik, data, log_prior, batch_size)` (the `sgmcmc` package's `logLik`,
#' `dataset`, `logPrior`, `minibatchSize`), and the sampler is chosen where every target of the package is
#' sampled, `sgmcmc_density(model, init = , sampler = )`, so that a model, a Stan model ([stan_target()]) and a
#' log density written in R share one sampling call, its defaults (no step to pick by hand: the warm-up chooses
#' it), and its fit methods.
#'
#' @section The R path:
#' `log_lik(theta, data_rows)` is called with the parameter vector and the minibatch's rows of `data`, of the
#' same kind as `data`: a data frame's rows (a data frame), a matrix's rows (a matrix, `drop = FALSE`), or a list
#' whose every column is subset to those rows (a matrix column by rows). It returns
#' `list(log_lik = <number>, gradient = <vector of length(theta)>)`, the SUM of the log-likelihood over those
#' rows and its gradient. `log_prior(theta)` returns `list(log_prior = , gradient = )`; `NULL` (the default) is a
#' flat prior. Either function may return just the number (or `gradient = NULL`): the gradient is then taken by
#' central finite differences, \eqn{2d} more calls per gradient, with a warning (class
#' `scalebayes_warning_finite_difference`, also `scalebayes_warning_cost`) saying what that costs. R code runs on
#' R's main thread only, so the chains run one after the other (`threads` does not apply); each iteration costs
#' one call of `log_lik` (and one of `log_prior`), with the per-call overhead measured in `bench/RESULTS.md`
#' ("Minibatched models"). A Ctrl-C inside them is held until they return, as for any R target of
#' [sgmcmc_density()].
#'
#' @section The compiled path:
#' `log_lik` may instead be an external pointer to a model written in C++ against the package's header
#' `scalebayes/target.hpp` (installed with the package, `system.file("include", "scalebayes", "target.hpp",
#' package = "scalebayes")`; its comment is the documentation): a class derived from `scalebayes::Target` with
#' `dim()`, `n_obs()`, `log_lik(theta, rows, n, grad)` (the sum over 0-based rows, gradient written) and
#' optionally `log_prior(theta, grad)` and `thread_safe()`, compiled with `Rcpp::cppFunction()` /
#' `Rcpp::sourceCpp()` (`// [[Rcpp::depends(scalebayes)]]`) or in a package with `LinkingTo: scalebayes`, and
#' returned as `Rcpp::XPtr<scalebayes::Target>(new Model(...), true, Rcpp::wrap(scalebayes::kTargetTag))`.
#' The model then holds its own data (`data` and `log_prior` must be `NULL`) and the engine calls it with no R
#' code per iteration; a thread-safe model (the default) runs its chains on `threads` threads. The example in
#' the header is a complete model.
#'
#' @section Minibatches and control variates:
#' With plain minibatches of n of N rows the gradient's noise adds to a step's discretization error a factor
#' \eqn{1 + (N - n) / n} (the warm-up caps the step by it, so a smaller minibatch takes a smaller step and
#' more iterations). `sgmcmc_density(control = sgmcmc_control(step = sgmcmc_step(gradient =
#' "control_variate")))` uses control variates (Baker, Fearnhead, Fox & Nemeth 2019): the mode of the full-data
#' log posterior is found first (the package's L-BFGS from the first chain's start) and each gradient is
#' \eqn{\nabla \log p(\theta) + \hat G + (N / n) \sum_B (\nabla l_i(\theta) - \nabla l_i(\hat\theta))}, at
#' the cost of a second `log_lik` call per gradient (at \eqn{\hat\theta} on the same rows); it pays where the
#' posterior is concentrated (large N), where the difference of the two gradients is small.
#'
#' @param log_lik The log-likelihood: an R function `function(theta, data_rows)` (see "The R path") or an
#'   external pointer to a compiled model (see "The compiled path").
#' @param data The data: a data frame, a matrix (rows are observations) or a list of columns of equal length
#'   (vectors, or matrices with one row per observation). `NULL` for a compiled model.
#' @param log_prior `NULL` (a flat prior) or an R function `function(theta)` returning
#'   `list(log_prior = , gradient = )` (or the number alone: finite differences).
#' @param batch_size Rows per minibatch n. `NULL` (the default): every row up to 1,000 rows, else
#'   \eqn{\max(1000, \lceil N / 100 \rceil)} (the `sgmcmc` package's default is 1 % of the rows).
#' @return An object of class `sb_sgmcmc_model` for [sgmcmc_density()] (`init` is then required: one value per
#'   parameter, or a matrix with one column per chain).
#' @seealso [sgmcmc_density()], [stan_target()].
#' @references Baker, J., Fearnhead, P., Fox, E. B. and Nemeth, C. (2019). Control variates for stochastic
#'   gradient MCMC. Statistics and Computing 29, 599-615.
#' @export
#' @examples
#' # y_i ~ N(theta, 1), theta ~ N(0, 10^2), 5,000 rows in minibatches of 500
#' set.seed(1)
#' d <- data.frame(y = rnorm(5000, 2))
#' m <- sgmcmc_model(
#'   log_lik = function(theta, rows) list(log_lik = -0.5 * sum((rows$y - theta)^2),
#'                                        gradient = sum(rows$y - theta)),
#'   data = d,
#'   log_prior = function(theta) list(log_prior = -theta^2 / 200, gradient = -theta / 100),
#'   batch_size = 500)
#' m
#' \donttest{
#' fit <- sgmcmc_density(m, init = 0, seed = 1)
#' summary(fit)   # the exact posterior: mean sum(y) / (5000 + 0.01), sd 1 / sqrt(5000.01)
#' }
sgmcmc_model <- function(log_lik, data = NULL, log_prior = NULL, batch_size = NULL) {
  if (missing(log_lik)) {
    sb_abort(c("{.arg log_lik} is missing.",
               i = "Give {.code function(theta, data_rows) list(log_lik = , gradient = )}, or an external pointer to a compiled model."),
             arg = "log_lik")
  }
  if (inherits(log_lik, "externalptr")) {
    if (!is.null(data)) {
      sb_abort(c("A compiled model holds its own data: {.arg data} must be {.code NULL}.",
                 i = "Pass the data to the C++ function that makes the model."), arg = "data")
    }
    if (!is.null(log_prior)) {
      sb_abort(c("A compiled model has its own prior ({.code log_prior()} of {.code scalebayes::Target}): {.arg log_prior} must be {.code NULL}."),
               arg = "log_prior")
    }
    info <- tryCatch(cpp_sgmcmc_model_info(log_lik), error = function(e) {
      sb_abort(c("{.arg log_lik} is not an external pointer to a {.code scalebayes::Target}.", x = "{conditionMessage(e)}",
                 i = "Return {.code Rcpp::XPtr<scalebayes::Target>(new Model(...), true, Rcpp::wrap(scalebayes::kTargetTag))} from your C++ code (see {.code ?sgmcmc_model})."),
               arg = "log_lik")
    })
    N <- info$nobs
    if (!(info$dim >= 1) || !(N >= 1)) {
      sb_abort(c("The compiled model in {.arg log_lik} must have at least one parameter and one row.",
                 x = "Its dim() is {info$dim} and its n_obs() {format(N)}."), arg = "log_lik")
    }
    return(structure(list(type = "model_xptr", ptr = log_lik, dim = as.integer(info$dim), nobs = N,
                          batch_size = model_batch_size(batch_size, N), thread_safe = isTRUE(info$thread_safe),
                          name = "compiled model"),
                     class = "sb_sgmcmc_model"))
  }
  if (!is.function(log_lik)) {
    sb_abort(c("{.arg log_lik} must be a function {.code function(theta, data_rows)} or an external pointer to a compiled model.",
               x = "You supplied {.obj_type_friendly {log_lik}}."), arg = "log_lik")
  }
  model_check_arity(log_lik, 2L, "log_lik", "function(theta, data_rows)")
  if (!is.null(log_prior)) {
    if (!is.function(log_prior)) {
      sb_abort(c("{.arg log_prior} must be {.code NULL} (a flat prior) or a function {.code function(theta)}.",
                 x = "You supplied {.obj_type_friendly {log_prior}}."), arg = "log_prior")
    }
    model_check_arity(log_prior, 1L, "log_prior", "function(theta)")
  }
  if (is.null(data)) {
    sb_abort(c("{.arg data} is missing: a model written in R reads its rows from {.arg data}.",
               i = "Give a data frame, a matrix, or a list of columns of equal length."), arg = "data")
  }
  kind <- model_data_kind(data)
  N <- model_data_rows(data, kind)
  structure(list(type = "model_r", log_lik = log_lik, log_prior = log_prior, data = data, data_kind = kind,
                 nobs = N, batch_size = model_batch_size(batch_size, N), name = "R log_lik"),
            class = "sb_sgmcmc_model")
}

#' @export
print.sb_sgmcmc_model <- function(x, ...) {
  cat(sprintf("<sb_sgmcmc_model> %s: %s rows, minibatches of %s%s\n", x$name, format(x$nobs, big.mark = ","),
              format(x$batch_size, big.mark = ","),
              if (x$type == "model_xptr") sprintf(", %d parameters", x$dim)
              else if (is.null(x$log_prior)) ", flat prior" else ""))
  invisible(x)
}

model_batch_size <- function(batch_size, N, call = rlang::caller_env()) {
  if (is.null(batch_size)) return(as.integer(if (N <= 1000) N else min(N, max(1000, ceiling(N / 100)))))
  b <- check_count(batch_size, call = call)
  if (b > N) {
    sb_abort(c("{.arg batch_size} must not exceed the number of rows of the data.",
               x = "batch_size = {b} but the data have {format(N)} rows."), arg = "batch_size", call = call)
  }
  b
}

model_check_arity <- function(f, k, arg, form, call = rlang::caller_env()) {
  if (is.primitive(f)) return(invisible())
  fm <- formals(f)
  nm <- names(fm)
  if ("..." %in% nm) return(invisible())
  no_default <- vapply(nm, function(a) identical(fm[[a]], quote(expr = )), logical(1))
  if (length(nm) < k || sum(no_default) > k) {
    sb_abort(c("{.arg {arg}} must be callable as {.code {form}}.",
               x = "It takes {length(nm)} argument{?s}{if (sum(no_default) > k) paste0(', ', sum(no_default), ' without a default') else ''}."),
             arg = arg, call = call)
  }
  invisible()
}

# "data.frame", "matrix" or "list" (of equal-length columns, checked by model_data_rows()).
model_data_kind <- function(data, call = rlang::caller_env()) {
  if (is.data.frame(data)) return("data.frame")
  if (is.matrix(data)) return("matrix")
  if (is.list(data) && length(data)) return("list")
  sb_abort(c("{.arg data} must be a data frame, a matrix, or a list of columns of equal length.",
             x = "You supplied {.obj_type_friendly {data}}."), arg = "data", call = call)
}

model_data_rows <- function(data, kind, call = rlang::caller_env()) {
  N <- if (kind == "list") {
    n <- vapply(data, function(col) if (is.null(dim(col))) length(col) else nrow(col), numeric(1))
    if (any(n != n[1])) {
      nm <- names(data) %||% paste0("[[", seq_along(data), "]]")
      nm[!nzchar(nm)] <- paste0("[[", which(!nzchar(nm)), "]]")
      sb_abort(c("The columns of {.arg data} must have equal lengths (one entry, or matrix row, per observation).",
                 x = "{.field {nm[1]}} has {n[1]}; {.field {nm[which(n != n[1])[1]]}} has {n[which(n != n[1])[1]]}."),
               arg = "data", call = call)
    }
    n[1]
  } else nrow(data)
  if (!(N >= 1)) sb_abort("{.arg data} has no rows.", arg = "data", call = call)
  as.double(N)
}

# The rows of data as log_lik receives them (r: 1-based). A data frame of plain columns is subset column by
# column (a third of the time of `[.data.frame` on a minibatch); otherwise `[`.
model_row_getter <- function(data, kind) {
  switch(kind,
    matrix = function(r) data[r, , drop = FALSE],
    list = function(r) lapply(data, function(col) if (is.null(dim(col))) col[r] else col[r, , drop = FALSE]),
    data.frame = {
      plain <- all(vapply(data, function(col) is.null(dim(col)), logical(1)))
      nm <- names(data)
      if (!plain) function(r) data[r, , drop = FALSE]
      else function(r) {
        out <- lapply(data, `[`, r)
        names(out) <- nm
        attr(out, "row.names") <- r
        class(out) <- "data.frame"
        out
      }
    })
}

# One of the user's functions, its value as c(value, gradient): `fun` called by call_fun(b) (the rows bound),
# an error in it a classed error naming `arg`, an interrupt R signals inside it held (density_r_target()), the
# value checked, and a missing gradient taken by central differences.
model_value <- function(call_fun, b, d, arg, field, when, call) {
  eval_at <- function(x) {
    tryCatch(call_fun(x), error = function(e) {
      at <- paste0(paste(format(signif(utils::head(x, 6), 4)), collapse = ", "), if (length(x) > 6) ", ..." else "")
      sb_abort(c("{.arg {arg}} stopped with an error {when}.",
                 i = "It was called at theta = ({at}); it must return {.code list({field} = , gradient = )} wherever the chain can go."),
               kind = "target", arg = arg, call = call, parent = e)
    })
  }
  r <- eval_at(b)
  parsed <- model_parse(r, d, arg, field, call)
  if (is.null(parsed$gradient)) {
    h <- 6e-6 * pmax(1, abs(b))
    parsed$gradient <- vapply(seq_len(d), function(j) {
      e <- numeric(d)
      e[j] <- h[j]
      (model_parse(eval_at(b + e), d, arg, field, call)$value - model_parse(eval_at(b - e), d, arg, field, call)$value) /
        (2 * h[j])
    }, numeric(1))
    parsed$fd <- TRUE
  }
  parsed
}

# list(value, gradient (NULL: none), fd = FALSE) from what the user's function returned.
model_parse <- function(r, d, arg, field, call) {
  bad <- function(x) {
    sb_abort(c("{.arg {arg}} must return a number or {.code list({field} = <number>, gradient = <numeric vector or NULL>)}.",
               x = x), arg = arg, kind = "target", call = call)
  }
  if (is.list(r)) {
    v <- r[[field]]
    g <- r$gradient
    if (is.null(v)) bad("It returned a list without {.field {field}} (names: {.val {names(r)}}).")
  } else {
    v <- r
    g <- NULL
  }
  if (!is.numeric(v) || length(v) != 1L) bad("Its value is {.obj_type_friendly {v}}, not one number.")
  if (!is.null(g)) {
    if (!is.numeric(g)) bad("Its gradient is {.obj_type_friendly {g}}.")
    if (length(g) != d) {
      sb_abort(c("{.arg {arg}} returned a gradient of length {length(g)}.",
                 x = "The parameter vector ({.arg init}) has length {d}; the gradient must have one entry per parameter."),
               arg = arg, kind = "target", call = call)
    }
  }
  list(value = as.double(v), gradient = if (!is.null(g)) as.double(g), fd = FALSE)
}

# The engine's target list of a model (src/sgmcmc_density.cpp: model_r / model_xptr) for d parameters, with the
# finite-difference note of the start check: an R model's lik(b, rows) and prior(b) return c(value, gradient).
model_engine_target <- function(model, d, call = rlang::caller_env()) {
  if (model$type == "model_xptr") {
    return(list(type = "model_xptr", ptr = model$ptr, dim = d, nobs = model$nobs))
  }
  rows_of <- model_row_getter(model$data, model$data_kind)
  ll <- model$log_lik
  lp <- model$log_prior
  calls <- 0
  wrap <- function(fun_of, arg, field) {
    function(b, rows = NULL) {
      calls <<- calls + 1
      when <- sprintf("during the run (call %s)", format(calls))
      cf <- fun_of(rows)
      held <- FALSE
      p <- tryCatch(model_value(cf, b, d, arg, field, when, call), interrupt = function(e) {
        held <<- TRUE
        NULL
      })
      if (held) p <- model_value(cf, b, d, arg, field, when, call)
      out <- c(p$value, p$gradient)
      if (held) attr(out, "sb_interrupt") <- TRUE
      out
    }
  }
  lik <- wrap(function(rows) { dr <- rows_of(rows); function(x) ll(x, dr) }, "log_lik", "log_lik")
  prior <- if (!is.null(lp)) wrap(function(rows) function(x) lp(x), "log_prior", "log_prior")
  list(type = "model_r", lik = lik, prior = prior, dim = d, nobs = model$nobs)
}

# The start check of a model: the full-data log-likelihood and the log prior at the chains' starts, finite, the
# gradients of the right length; a warning when a gradient is taken by finite differences (its cost).
model_check_start <- function(model, init, call = rlang::caller_env()) {
  d <- nrow(init)
  if (model$type == "model_xptr") {
    if (d != model$dim) {
      sb_abort(c("{.arg init} must have one value per parameter of the compiled model ({model$dim}).", x = "It has {d}."),
               arg = "init", call = call)
    }
    ev <- sb_call_engine(cpp_sgmcmc_target_eval(model_engine_target(model, d), init), call = call)
    for (c in seq_len(ncol(init))) {
      if (!is.finite(ev$log_density[c]) || any(!is.finite(ev$gradient[, c]))) {
        sb_abort(c("The compiled model in {.arg log_lik} returned a non-finite log posterior or gradient at {.arg init} (chain {c}).",
                   i = "Start where the density is positive, or check the model's gradient."), arg = "log_lik",
                 kind = "target", call = call)
      }
    }
    return(invisible(FALSE))
  }
  all_rows <- model_row_getter(model$data, model$data_kind)(seq_len(model$nobs))
  fd <- character(0)
  for (c in seq_len(ncol(init))) {
    b <- init[, c]
    when <- sprintf("at `init` (chain %d), on every row", c)
    parts <- list(log_lik = model_value(function(x) model$log_lik(x, all_rows), b, d, "log_lik", "log_lik", when, call))
    if (!is.null(model$log_prior)) {
      parts$log_prior <- model_value(function(x) model$log_prior(x), b, d, "log_prior", "log_prior",
                                     sprintf("at `init` (chain %d)", c), call)
    }
    for (nm in names(parts)) {
      p <- parts[[nm]]
      if (!is.finite(p$value) || any(!is.finite(p$gradient))) {
        what <- if (!is.finite(p$value)) sprintf("value (%s)", format(p$value)) else "gradient"
        sb_abort(c("{.arg {nm}} returned a non-finite {what} at {.arg init} (chain {c}){if (nm == 'log_lik') ' on the full data' else ''}.",
                   x = "It must be finite where the chains start.",
                   i = "Start where the density is positive, check the data for missing values, or check the formula."),
                 arg = nm, kind = "target", call = call)
      }
      if (isTRUE(p$fd)) fd <- union(fd, nm)
    }
  }
  if (length(fd)) {
    sb_warn(c("{.arg {fd}} returned no gradient: it is taken by central finite differences, {2 * d} more call{?s} per gradient ({d} parameter{?s}).",
              i = "That multiplies the run's cost by about {2 * d + 1} and its differences carry rounding error of about 1e-10 of the value; return {.code gradient = } for speed and accuracy."),
            kind = "finite_difference", also = "cost")
  }
  invisible(length(fd) > 0L)
}

# The mode of a model's full-data log posterior by L-BFGS from `start` (sgmcmc::batch_mode), the full-data
# log-likelihood gradient there and the inverse Hessian (central differences of the full-data gradient, 2 d
# evaluations; d <= 200, else NULL). The step warm-up starts there, with the inverse Hessian as its first metric
# (the Bernstein-von Mises covariance at large N), and the control variates are centred there. `cv`: the mode
# is the control variates' centre, so a search that did not converge warns (the chains still run: the control
# variate is unbiased at any centre, only noisier) and a non-finite one is an error; else such a mode is NULL
# (the warm-up then starts at `start`, as for any target).
model_mode <- function(eng_target, start, cv = FALSE, call = rlang::caller_env()) {
  t0 <- proc.time()
  m <- sb_call_engine(cpp_sgmcmc_model_mode(eng_target, start, 1000L), call = call)
  if (identical(m$status, "stopped")) rlang::interrupt()
  if (!all(is.finite(m$center)) || !all(is.finite(m$grad))) {
    if (!cv) return(NULL)
    sb_abort(c("The mode search of the control variates reached a non-finite point.",
               i = "Check {.arg log_lik} and {.arg log_prior} away from the start, or leave {.code sgmcmc_step(gradient = )} at {.val auto}."),
             arg = "log_lik", kind = "target", call = call)
  }
  if (!identical(m$status, "converged")) {
    if (!cv) return(NULL)
    sb_warn(c("The mode search of the control variates stopped without converging ({m$status}, {m$iterations} L-BFGS iterations, largest gradient entry {signif(m$grad_max, 3)}).",
              i = "The control variates stay unbiased; their noise grows with the distance to the mode."),
            kind = "convergence")
  }
  m$inv_hessian <- if (length(start) <= 200L) model_inv_hessian(eng_target, m$center)
  m$seconds <- (proc.time() - t0)[["elapsed"]]
  m
}

model_inv_hessian <- function(eng_target, center) {
  d <- length(center)
  H <- fd_neg_hessian(function(b) drop(cpp_sgmcmc_target_eval(eng_target, matrix(b, d))$gradient), center)
  ih <- tryCatch(chol2inv(chol((H + t(H)) / 2)), error = function(e) NULL)
  if (is.null(ih) || any(!is.finite(ih))) NULL else ih
}

# The negative Hessian of a log density at `center` by central differences of its gradient `grad(b)` (2 d
# gradients, steps 1e-5 max(1, |b_j|)); used by model_inv_hessian() and density_mode() (R/sgmcmc_density.R).
fd_neg_hessian <- function(grad, center) {
  d <- length(center)
  h <- 1e-5 * pmax(1, abs(center))
  matrix(vapply(seq_len(d), function(j) {
    e <- numeric(d)
    e[j] <- h[j]
    -(grad(center + e) - grad(center - e)) / (2 * h[j])
  }, numeric(d)), d, d)
}

#' @export
nobs.sb_sgmcmc_model <- function(object, ...) object$nobs

# The control variates' noise factor on a step's excess variance (the role of 1 + (N - n) / n for plain
# minibatches, R/sgmcmc_cv.R: cv_noise_factor()): 1 + the largest whitened variance of the control-variate
# estimate of the log-likelihood's gradient over random minibatches of n rows, at `points` points a posterior sd
# from the centre (theta_hat + L u, u standard normal, L L' the inverse of the full-data Hessian there, by central
# differences of the full-data gradient, model_mode()). For plain minibatches the same measurement gives about
# 1 + (N - n) / n (N times a row's gradient covariance is the Hessian). Minibatches from the seed's stream (R's
# RNG is left as it was).
model_cv_noise <- function(eng_target, center, grad, n, seed, inv_hessian, points = 4L, batches = 16L) {
  d <- length(center)
  N <- eng_target$nobs
  if (is.null(inv_hessian)) return(1 + (N - n) / n)
  L <- t(chol(inv_hessian))
  lik <- function(b, rows) cpp_sgmcmc_model_lik(eng_target, b, rows)[-1L]
  v <- sb_with_seed(as.integer(seed %% .Machine$integer.max), vapply(seq_len(points), function(k) {
    b <- center + drop(L %*% stats::rnorm(d))
    est <- vapply(seq_len(batches), function(s) {
      rows <- sample.int(N, n)
      grad + N / n * (lik(b, rows) - lik(center, rows))
    }, numeric(d))
    w <- crossprod(L, matrix(est, d))  # whitened: L' g
    max(apply(w, 1L, stats::var))
  }, numeric(1)))
  1 + mean(v)
}
