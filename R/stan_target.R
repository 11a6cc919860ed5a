#' A Stan model as a target of sgmcmc_density()
#'
#' `stan_target()` turns a Stan model and its data into a target of [sgmcmc_density()]: the log density and its
#' gradient come from rstan's [rstan::log_prob()] on Stan's unconstrained scale with the log-Jacobian of the
#' constraining transforms (`adjust_transform = TRUE`, as Stan's own samplers use it), so a `real<lower=0> tau`
#' is sampled as log tau and the draws still follow the model's posterior. The fit returns its draws on the
#' constrained scale, by [rstan::constrain_pars()], with Stan's names (`mu`, `tau`, `beta[1]`, `Sigma[2,1]`, the
#' transformed parameters and generated quantities after the parameters), so `print()`, `summary()`,
#' `as_draws_df()` and `posterior_interval()` read like a Stan fit; `fit$unconstrained_draws` keeps the draws the
#' chains made (one column per unconstrained coordinate, named by Stan: `tau` there is log tau).
#'
#' The target is an R function of the unconstrained parameter vector (class `sb_stan_target`), called as any R
#' target of [sgmcmc_density()] is: `tg(theta)` returns `list(log_density = , gradient = )`, one
#' `rstan::log_prob(..., gradient = TRUE)` call. The chains therefore run one after the other on R's main
#' thread. An error Stan raises inside the model (a rejection, a domain error in the tails) counts as a zero
#' density: the value is a log density of `-Inf` with a non-finite gradient, which stops that chain as a
#' divergence (a pilot of the step warm-up that goes there is simply rejected); `attr(tg, "stan")$last_error`
#' holds Stan's message. So is a log density Stan evaluates to `-Inf` without an error (on 8 schools, log tau =
#' 400: Stan returns `-Inf` with a finite gradient of order 1e172): the gradient is then `NaN`.
#'
#' Starting values: by default Stan's, uniform(-2, 2) on the unconstrained scale, drawn per chain from the
#' seed of [sgmcmc_density()] (redrawn, as Stan does, up to 100 times until the log density and gradient are
#' finite). `init = 0` starts every chain at 0 on the unconstrained scale; a named list of constrained values
#' (as for [rstan::sampling()]) starts every chain there, a list of such lists gives one per chain, and a
#' numeric vector or matrix given to [sgmcmc_density()] `init` is taken on the unconstrained scale. As with any
#' target, with the default step warm-up of SGLD, SGHMC and SGNHT the chains then start at draws of the
#' warm-up's last pilot unless one start per chain was given.
#'
#' @section Full data, and when NUTS is the better choice:
#' Stan evaluates the log density of the whole data set: it has no minibatches, so every SG-MCMC step costs
#' one full gradient, as a leapfrog step of NUTS does. SG-MCMC then has no cost advantage per step, and it
#' takes many more steps per effective draw than NUTS, whose trajectories move far in one iteration and whose
#' discretization error is corrected by a Metropolis-type step (SG-MCMC's is not corrected: with the default
#' step it is capped at about 10 % of the variance). Use NUTS ([rstan::sampling()]) when the data are small
#' enough for full gradients, which is every model Stan fits comfortably, and in particular for posteriors
#' with varying curvature: funnels such as hierarchical models with few groups (8 schools) or a scale
#' parameter near zero, strongly correlated or multimodal posteriors, where a fixed SG-MCMC step is either too
#' large in the neck or too small in the body and NUTS adapts its trajectory (and reports divergences). Use
#' `stan_target()` to check an SG-MCMC configuration on a model written in Stan against NUTS on the same model
#' and the same code (the checks of this package do that), to compare samplers, or where a Stan model is
#' cheap per gradient and NUTS's tree building is the cost. SG-MCMC pays off when the data are too large for a
#' full gradient per step, which needs a log-likelihood that can be evaluated on a minibatch: an R function for
#' [sgmcmc_density()] that does so, or the package's regression and network models in [sgld_sa()].
#'
#' The per-call cost of the Stan path is measured in `bench/RESULTS.md` ("Stan models as targets").
#'
#' @param model A compiled model ([rstan::stan_model()], class `stanmodel`), a fit ([rstan::sampling()] or
#'   [rstan::stan()], class `stanfit`: its model and data, unless `data` is given), or Stan code: a string
#'   (or the path of a `.stan` file), compiled by [rstan::stan_model()] (about a minute).
#' @param data The model's data, a named list as for [rstan::sampling()] (`list()` for a model without data).
#'   For a `stanfit`, `NULL` (the default there) uses the fit's own data.
#' @param init Starting values: `"random"` (the default: Stan's uniform(-2, 2) on the unconstrained scale),
#'   `0`, a named list of constrained parameter values, or a list of such lists (one per chain).
#' @param ... Passed to [rstan::stan_model()] when `model` is Stan code (e.g. `model_name`, `includes`).
#' @return A function of class `c("sb_stan_target", "function")`, `function(theta)` returning
#'   `list(log_density, gradient)` on the unconstrained scale, with attribute `"stan"`: a list with `fit` (the
#'   `stanfit` that evaluates it), `model_name`, `dim` (the number of unconstrained parameters),
#'   `unconstrained_names`, `names` (the constrained names of the draws), `parameter_names` (the parameters
#'   block only), `init` and `last_error`.
#' @seealso [sgmcmc_density()], whose fit of a Stan target also holds `unconstrained_draws`.
#' @export
#' @examples
#' \donttest{
#' if (requireNamespace("rstan", quietly = TRUE)) {
#'   code <- "data { int n; vector[n] y; }
#'            parameters { real mu; real<lower=0> sigma; }
#'            model { mu ~ normal(0, 10); sigma ~ normal(0, 5); y ~ normal(mu, sigma); }"
#'   set.seed(1)
#'   tg <- stan_target(code, data = list(n = 50, y = rnorm(50, 1, 2)))  # compiles: about a minute
#'   tg
#'   fit <- sgmcmc_density(tg, seed = 1)
#'   summary(fit)                     # mu and sigma, on the constrained scale
#'   head(fit$unconstrained_draws)    # mu and log sigma, as the chains ran
#' }
#' }
stan_target <- function(model, data = NULL, init = "random", ...) {
  if (missing(model)) {
    sb_abort(c("{.arg model} is missing.",
               i = "Give Stan code (a string), a compiled {.cls stanmodel} or a {.cls stanfit}."), arg = "model")
  }
  is_code <- is.character(model)
  if (!is_code && !inherits(model, c("stanmodel", "stanfit"))) {
    sb_abort(c("{.arg model} must be Stan code (a string), a compiled {.cls stanmodel} ({.fn rstan::stan_model}) or a {.cls stanfit}.",
               x = "You supplied {.obj_type_friendly {model}}."), arg = "model")
  }
  if (is_code && (length(model) != 1L || is.na(model) || !nzchar(trimws(model)))) {
    sb_abort(c("Stan code in {.arg model} must be one non-empty string.",
               x = "You supplied a character vector of length {length(model)}{if (length(model) == 1L) ' that is empty' else ''}."),
             arg = "model")
  }
  if (!is_code) sb_check_dots(..., fn = "stan_target")
  if (!requireNamespace("rstan", quietly = TRUE)) {
    sb_abort(c("{.fn stan_target} needs the {.pkg rstan} package.",
               i = "Install it (Debian: {.code apt-get install r-cran-rstan}; else {.code install.packages(\"rstan\")})."),
             kind = "dependency", arg = "model")
  }
  if (!is.null(data) && !is.list(data) && !is.environment(data)) {
    sb_abort(c("{.arg data} must be a named list of the model's data (as for {.fn rstan::sampling}).",
               x = "You supplied {.obj_type_friendly {data}}."), arg = "data")
  }
  if (is.list(data) && length(data) && (is.null(names(data)) || any(!nzchar(names(data))))) {
    sb_abort(c("{.arg data} must be a named list: every element is named by the data variable it holds.",
               i = "For example {.code list(N = 10, y = y)}."), arg = "data")
  }
  if (is_code) {
    code <- model
    if (length(code) == 1L && grepl("\\.stan$", code) && file.exists(code)) code <- paste(readLines(code), collapse = "\n")
    stan_check_code(code)
    model <- stan_compile(code, ...)
  }
  fit <- stan_instance(model, data)
  d <- tryCatch(as.integer(rstan::get_num_upars(fit)), error = function(e) NA_integer_)
  if (is.na(d)) {
    sb_abort(c("The {.cls stanfit} in {.arg model} cannot evaluate its log density in this R session.",
               i = "A fit read from a file, or made by {.fn rstan::read_stan_csv}, has no model instance: give {.arg data} (the model is rebuilt from the fit), or the compiled model."),
             arg = "model")
  }
  if (d == 0L) {
    sb_abort(c("The Stan model in {.arg model} has no parameters: there is nothing to sample.",
               i = "A model with only data and generated quantities is run by {.code rstan::sampling(algorithm = \"Fixed_param\")}."),
             arg = "model")
  }
  inst <- fit@.MISC$stan_fit_instance
  # Stan's flat names "beta.1", "Sigma.2.1" as rstan prints them: "beta[1]", "Sigma[2,1]"
  stan_name <- function(x) vapply(strsplit(x, ".", fixed = TRUE), function(p) {
    if (length(p) == 1L) p else paste0(p[1], "[", paste(p[-1], collapse = ","), "]")
  }, character(1))
  unames <- tryCatch(stan_name(inst$unconstrained_param_names(FALSE, FALSE)), error = function(e) character())
  if (length(unames) != d) unames <- paste0("theta[", seq_len(d), "]")
  cnames <- stan_name(inst$constrained_param_names(TRUE, TRUE))
  pnames <- stan_name(inst$constrained_param_names(FALSE, FALSE))
  env <- new.env(parent = emptyenv())
  env$last_error <- NULL
  # the model instance's log_prob() is what rstan::log_prob() calls after checking the instance once per call
  # (S4 dispatch and that check: about 17 of its 30 microseconds); it was checked above (get_num_upars)
  lp_fun <- inst$log_prob
  tg <- function(theta) {
    lp <- tryCatch(lp_fun(theta, TRUE, TRUE), error = function(e) {
      env$last_error <- conditionMessage(e)
      NULL
    })
    if (is.null(lp)) return(list(log_density = -Inf, gradient = rep(NaN, length(theta))))
    ld <- as.double(lp)
    # outside the support (a log density of -Inf or NaN, e.g. a scale that overflowed): a rejection, as for
    # Stan's samplers, whatever gradient autodiff returned there (Stan may give a finite one)
    if (!is.finite(ld)) return(list(log_density = ld, gradient = rep(NaN, length(theta))))
    list(log_density = ld, gradient = as.double(attr(lp, "gradient")))
  }
  info <- list(fit = fit, model_name = fit@model_name, dim = d, unconstrained_names = unames, names = cnames,
               parameter_names = pnames, init = NULL, env = env)
  info$init <- stan_check_init(init, info)
  structure(tg, class = c("sb_stan_target", "function"), stan = info)
}

#' @export
print.sb_stan_target <- function(x, ...) {
  s <- attr(x, "stan")
  cat(sprintf("<sb_stan_target> Stan model %s: %d unconstrained parameter%s (%s%s)\n", s$model_name, s$dim,
              if (s$dim > 1) "s" else "", paste(utils::head(s$unconstrained_names, 8), collapse = ", "),
              if (s$dim > 8) ", ..." else ""))
  cat(sprintf("  draws on the constrained scale: %s%s\n", paste(utils::head(s$names, 8), collapse = ", "),
              if (length(s$names) > 8) sprintf(", ... (%d)", length(s$names)) else ""))
  invisible(x)
}

#' @export
`$.sb_stan_target` <- function(x, name) attr(x, "stan")[[name]]

# Checks of Stan code before the compiler's minute: a parameters block that declares nothing (or none at all),
# and integer parameters (Stan samples continuous parameters only), each a classed error naming `model`.
stan_check_code <- function(code, call = rlang::caller_env()) {
  txt <- gsub("/\\*.*?\\*/", " ", code, perl = TRUE)
  txt <- gsub("(//|#)[^\n]*", " ", txt, perl = TRUE)
  m2 <- gregexpr("(^|[};])\\s*parameters\\s*\\{", txt, perl = TRUE)[[1]]
  if (m2[1] < 0) {
    sb_abort(c("The Stan model in {.arg model} has no {.code parameters} block: there is nothing to sample.",
               i = "Declare the parameters in {.code parameters {{ ... }}}; a model without any is run by {.code rstan::sampling(algorithm = \"Fixed_param\")}."),
             arg = "model", call = call)
  }
  start <- m2[1] + attr(m2, "match.length")[1]
  chars <- strsplit(substring(txt, start), "")[[1]]
  depth <- cumsum((chars == "{") - (chars == "}"))
  end <- which(depth < 0)[1]
  body <- if (is.na(end)) paste(chars, collapse = "") else paste(chars[seq_len(end - 1L)], collapse = "")
  if (!nzchar(trimws(body))) {
    sb_abort(c("The Stan model in {.arg model} declares no parameters: there is nothing to sample.",
               i = "A model without parameters is run by {.code rstan::sampling(algorithm = \"Fixed_param\")}."),
             arg = "model", call = call)
  }
  if (grepl("(^|[;{\\s])int(\\s|<|\\[)", body, perl = TRUE)) {
    sb_abort(c("The Stan model in {.arg model} declares an integer parameter: Stan (and SG-MCMC, which follows the gradient) samples continuous parameters only.",
               i = "Marginalize the discrete parameter out of the model (a sum over its values with {.code log_sum_exp}) and draw it in {.code generated quantities}."),
             arg = "model", call = call)
  }
  invisible(code)
}

# Stan code compiled by rstan::stan_model(). Debian's r-cran-bh is an empty package (the Boost headers are
# libboost-dev's, under /usr/include), so where rstan's boost_lib does not hold Boost the call points it at the
# system headers: stan_model(boost_lib = ) sets rstan's option for that call only and restores it.
stan_compile <- function(code, ..., call = rlang::caller_env()) {
  boost <- rstan::rstan_options("boost_lib")
  has_boost <- function(p) is.character(p) && length(p) == 1L && file.exists(file.path(p, "boost", "version.hpp"))
  if (!has_boost(boost) && has_boost("/usr/include")) boost <- "/usr/include" else boost <- NULL
  args <- utils::modifyList(list(model_code = code), list(...))
  if (!is.null(boost)) args$boost_lib <- boost
  out <- NULL
  # the parser's messages (stanc writes them to stderr) go into the error, not the console
  err <- utils::capture.output(invisible(utils::capture.output(
    out <- tryCatch(do.call(rstan::stan_model, args), error = function(e) e), type = "output")), type = "message")
  if (inherits(out, "error")) {
    err <- trimws(err[nzchar(trimws(err)) & !grepl("^\\s*-+\\s*$", err)])
    msg <- paste(c(utils::tail(err, 12), conditionMessage(out)), collapse = "\n")
    sb_abort(c("The Stan code in {.arg model} did not compile.", x = "{msg}",
               i = "Check the code with {.code rstan::stanc(model_code = )}."),
             kind = "stan_compile", also = "input", arg = "model", call = call)
  }
  out
}

# The stanfit that evaluates the log density: a model with data (rstan::sampling(chains = 0) builds the model
# instance and checks the data without sampling); a stanfit given alone keeps its own data.
stan_instance <- function(model, data, call = rlang::caller_env()) {
  if (inherits(model, "stanfit") && is.null(data)) return(model)
  sm <- if (inherits(model, "stanfit")) {
    tryCatch(rstan::get_stanmodel(model), error = function(e) {
      sb_abort(c("The {.cls stanfit} in {.arg model} does not hold its compiled model.",
                 i = "Give the compiled model ({.fn rstan::stan_model}) or the Stan code."), arg = "model", call = call)
    })
  } else model
  if (is.null(data)) data <- list()
  out <- NULL
  # a data error is printed by rstan (not signalled) and gives a stanfit without a model instance
  err <- utils::capture.output(invisible(utils::capture.output(out <- tryCatch(suppressWarnings(
    rstan::sampling(sm, data = data, chains = 0L)), error = function(e) e), type = "output")), type = "message")
  ok <- inherits(out, "stanfit") && !inherits(tryCatch(rstan::get_num_upars(out), error = function(e) e), "error")
  if (!ok) {
    err <- trimws(err[nzchar(trimws(err)) & !grepl("number of chains is less than 1", err)])
    msg <- paste(c(utils::tail(err, 6), if (inherits(out, "error")) conditionMessage(out)), collapse = "\n")
    if (!nzchar(msg)) msg <- "rstan::sampling() did not build the model."
    sb_abort(c("The Stan model could not read {.arg data}.", x = "{msg}",
               i = "{.arg data} must be a named list with every variable of the model's {.code data} block, of the declared type, size and bounds."),
             arg = "data", call = call)
  }
  out
}

# `init` of stan_target(): "random", 0, or constrained values (a named list, or a list of them per chain),
# stored as "random", a vector, or a matrix (one column per chain) on the unconstrained scale.
stan_check_init <- function(init, info, call = rlang::caller_env()) {
  if (is.character(init) && identical(init, "random")) return("random")
  if (is.numeric(init) && length(init) == 1L && identical(as.double(init), 0)) {
    return(stats::setNames(rep(0, info$dim), info$unconstrained_names))
  }
  unc <- function(l, i = NULL) {
    tryCatch(as.double(rstan::unconstrain_pars(info$fit, l)), error = function(e) {
      msg <- conditionMessage(e)
      which <- if (is.null(i)) "" else sprintf(" (chain %d)", i)
      sb_abort(c("{.arg init}{which} is not a valid set of constrained parameter values.", x = "{msg}",
                 i = "Give a named list with every parameter of the model ({.val {info$parameter_names}}) within its bounds."),
               arg = "init", call = call)
    })
  }
  if (is.list(init) && length(init) && !is.null(names(init)) && all(nzchar(names(init)))) {
    return(stats::setNames(unc(init), info$unconstrained_names))
  }
  if (is.list(init) && length(init) && all(vapply(init, is.list, logical(1)))) {
    m <- vapply(seq_along(init), function(i) unc(init[[i]], i), numeric(info$dim))
    m <- matrix(m, info$dim, length(init), dimnames = list(info$unconstrained_names, NULL))
    return(m)
  }
  sb_abort(c("{.arg init} must be {.val random}, 0, a named list of parameter values, or a list of such lists (one per chain).",
             x = "You supplied {.obj_type_friendly {init}}.",
             i = "Starting values on the unconstrained scale go to {.code sgmcmc_density(init = )}."), arg = "init", call = call)
}

# The starting values of sgmcmc_density() for a Stan target given no `init`: Stan's uniform(-2, 2) on the
# unconstrained scale per chain (from the run's seed, stream of R's generator seeded by it), each redrawn up to
# 100 times until the log density and gradient are finite; or the target's own `init`. Returns the matrix (or
# vector) and whether it gives one start per chain (`given`).
stan_target_init <- function(target, chains, seed, call = rlang::caller_env()) {
  s <- attr(target, "stan")
  d <- s$dim
  if (!identical(s$init, "random")) {
    return(list(init = s$init, given = is.matrix(s$init)))
  }
  m <- matrix(0, d, chains, dimnames = list(s$unconstrained_names, NULL))
  withr::with_seed(seed %% .Machine$integer.max, {
    for (c in seq_len(chains)) {
      ok <- FALSE
      for (k in seq_len(100L)) {
        u <- stats::runif(d, -2, 2)
        r <- target(u)
        if (is.finite(r$log_density) && all(is.finite(r$gradient))) {
          ok <- TRUE
          break
        }
      }
      if (!ok) {
        msg <- s$env$last_error %||% "the log density or its gradient was not finite"
        sb_abort(c("The Stan model's log density is not finite at 100 random starting values of chain {c} (uniform(-2, 2) on the unconstrained scale).",
                   x = "{msg}",
                   i = "Check {.arg data} against the model, or give starting values: {.code stan_target(init = list(...))}."),
                 kind = "target", arg = "target", call = call)
      }
      m[, c] <- u
    }
  })
  list(init = m, given = FALSE)
}

# Checks a start of a Stan target with Stan's own message (the target turns Stan's errors into -Inf).
stan_target_check_start <- function(target, init, call = rlang::caller_env()) {
  s <- attr(target, "stan")
  init <- as.matrix(init)
  if (nrow(init) != s$dim) {
    sb_abort(c("{.arg init} must have one value per unconstrained parameter of the Stan model ({s$dim}: {.val {s$unconstrained_names}}).",
               x = "It has {nrow(init)}."), arg = "init", call = call)
  }
  for (c in seq_len(ncol(init))) {
    s$env$last_error <- NULL
    r <- target(init[, c])
    if (!is.finite(r$log_density) || any(!is.finite(r$gradient))) {
      msg <- s$env$last_error %||% "the log density or its gradient is not finite there"
      sb_abort(c("The Stan model's log density is not finite at {.arg init} (chain {c}).", x = "{msg}",
                 i = "Start inside the support (starting values on the unconstrained scale), or check {.arg data} against the model."),
               kind = "target", arg = "init", call = call)
    }
  }
  invisible(init)
}

# Unconstrained draws (one row per draw) to the constrained scale, with Stan's names.
stan_target_constrain <- function(target, udraws) {
  s <- attr(target, "stan")
  k <- length(s$names)
  out <- matrix(NA_real_, nrow(udraws), k, dimnames = list(NULL, s$names))
  for (i in seq_len(nrow(udraws))) {
    v <- tryCatch(unlist(lapply(rstan::constrain_pars(s$fit, udraws[i, ]), as.vector), use.names = FALSE),
                  error = function(e) rep(NA_real_, k))
    if (length(v) == k) out[i, ] <- v
  }
  out
}
