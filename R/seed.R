# Seeds and threads. A seed is drawn once on the main thread from R's RNG (so set.seed() works) unless the
# user gives one; every draw / chain / dataset then gets its own C++ stream keyed by (seed, index), so the
# result is the same for any number of threads or future workers.

resolve_seed <- function(seed, call = rlang::caller_env()) {
  if (is.null(seed)) {
    return(as.double(sample.int(.Machine$integer.max, 1L)))
  }
  if (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed) || seed < 0 || seed != round(seed) ||
      seed >= 2^53) {
    sb_abort(c("{.arg seed} must be a single whole number in [0, 2^53), or NULL.",
               x = "You supplied {.val {format(seed)}}."), arg = "seed", call = call)
  }
  as.double(seed)
}

#' Number of threads scalebayes uses
#'
#' The default for every `threads` argument: `getOption("scalebayes.threads")` if set, else the
#' smaller of 2 and the number of cores. Results never depend on the number of threads.
#' @return An integer.
#' @export
#' @examples
#' sb_default_threads()
sb_default_threads <- function() {
  opt <- getOption("scalebayes.threads")
  if (!is.null(opt)) return(check_count(opt, arg = "options(scalebayes.threads)", max = max_threads))
  cores <- parallel::detectCores(logical = TRUE)
  if (is.na(cores)) cores <- 1L
  as.integer(min(2L, cores))
}

resolve_threads <- function(threads, call = rlang::caller_env()) {
  if (is.null(threads)) return(sb_default_threads())
  check_count(threads, arg = "threads", call = call, max = max_threads,
              fix = "Use at most the number of cores ({parallel::detectCores()} here); results do not depend on it.")
}

# The run settings of one call, resolved once: the ONE run list every engine reads (src/sb_glue.h:
# sbglue::run_settings() for the seed and threads, sbglue::Progress for quiet). Model settings travel in their own
# control list; engines that need more run settings extend this list (wbb_engine_settings(), R/wbb_run.R).
run_settings <- function(seed = NULL, threads = NULL, quiet = NULL, call = rlang::caller_env()) {
  threads <- resolve_threads(threads, call)
  seed <- resolve_seed(seed, call)
  list(seed = seed, threads = threads, quiet = resolve_quiet(quiet))
}

# The run list of an engine call from a resolved settings list that may hold more (e.g. wbb_run_settings()).
engine_run <- function(rs) rs[c("seed", "threads", "quiet")]

resolve_quiet <- function(quiet) {
  if (is.null(quiet)) return(!interactive() || isTRUE(getOption("scalebayes.quiet", FALSE)))
  check_flag(quiet, arg = "quiet")
}

# Evaluate `expr` with R's random stream seeded by `seed`, leaving the caller's stream as it was (the R-side draws
# of ksd_test()'s bootstrap, sgld_sa_simulate() and the control variates' noise points, R/sgmcmc_cv.R).
sb_with_seed <- function(seed, expr) {
  old <- if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) get(".Random.seed", envir = globalenv())
  on.exit(if (is.null(old)) rm(".Random.seed", envir = globalenv()) else assign(".Random.seed", old, envir = globalenv()))
  set.seed(seed)
  expr
}
