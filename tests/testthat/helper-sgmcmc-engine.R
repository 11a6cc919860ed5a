# The SG-MCMC front ends with the settings that were their defaults before the scale-free defaults (issue 37):
# the data as given (standardize = FALSE), one chain, and, when no step is given, the fixed step 1e-3 on the
# polynomial schedule (sgmcmc_density(): also 10,000 iterations). Tests of the engine's recursions, schedules
# and closed forms state their references on those settings and call these; the defaults themselves are tested
# in test-sgmcmc-trust.R. A network call (`model =`) passes through unchanged.
engine_control <- function(control) {
  if (inherits(control, "sb_sgmcmc_control") && is.null(control$step_size)) control$step_size <- 1e-3
  control
}
sgld_sa_engine <- function(..., control = sgmcmc_control()) {
  args <- list(...)
  if (!is.null(args$model)) return(sgld_sa(..., control = control))
  if (is.null(args$standardize)) args$standardize <- FALSE
  if (is.null(args$chains)) args$chains <- 1L
  do.call(sgld_sa, c(args, list(control = engine_control(control))))
}
hamcmc_sa_engine <- function(..., control = sgmcmc_control()) {
  args <- list(...)
  if (!is.null(args$model)) return(hamcmc_sa(..., control = control))
  if (is.null(args$standardize)) args$standardize <- FALSE
  if (is.null(args$chains)) args$chains <- 1L
  do.call(hamcmc_sa, c(args, list(control = engine_control(control))))
}
sgmcmc_density_engine <- function(..., iterations = 10000L, chains = 1L, control = sgmcmc_control()) {
  sgmcmc_density(..., iterations = iterations, chains = chains, control = engine_control(control))
}
