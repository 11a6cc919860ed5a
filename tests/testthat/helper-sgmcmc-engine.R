# The SG-MCMC front ends with the settings that were their defaults before the scale-free defaults (issue 37):
# the data as given (standardize = FALSE), one chain, and, when no step is given, the fixed step 1e-3 on the
# polynomial schedule (sgmcmc_density(): also 10,000 iterations). Tests of the engine's recursions, schedules
# and closed forms state their references on those settings and call these; the defaults themselves are tested
# in test-sgmcmc-trust.R. Their short runs' convergence warnings are muffled (the warning is tested there). A
# network call (`model =`) gets the network defaults of before: one chain, v0 = 0.1 (a regression too) and the fixed per-example
# step net_lr / N of the sampler table (no warm-up); its data scale is left to the call.
engine_control <- function(control) {
  if (inherits(control, "sb_sgmcmc_control") && is.null(control$step_size)) control$step_size <- 1e-3
  control
}
engine_front_end <- function(fun, sampler_default) {
  force(fun)
  function(..., control = sgmcmc_control()) {
    args <- list(...)
    if (!is.null(args$model)) {
      if (is.null(args$chains)) args$chains <- 1L
      if (is.null(args$v0)) args$v0 <- 0.1
      if (inherits(control, "sb_sgmcmc_control") && (is.null(control$step_size) || identical(control$step_size, "auto"))) {
        y <- if (!is.null(args$y)) args$y else args[[2L]]
        n <- if (is.null(dim(y))) length(y) else dim(y)[1L]
        sampler <- if (is.null(args$sampler)) sampler_default else args$sampler
        control$step_size <- scalebayes:::sgmcmc_sampler_info(sampler)$net_lr / n
      }
      # tests of the engine run short chains: their function-space R-hat is not the point
      return(suppress_convergence(do.call(fun, c(args, list(control = control)))))
    }
    if (is.null(args$standardize)) args$standardize <- FALSE
    if (is.null(args$chains)) args$chains <- 1L
    if (is.null(args$v0)) args$v0 <- 0.1  # the regression default before the spike followed N (issue 56)
    suppress_convergence(do.call(fun, c(args, list(control = engine_control(control)))))
  }
}
sgld_sa_engine <- engine_front_end(sgld_sa, "sgld")
hamcmc_sa_engine <- engine_front_end(hamcmc_sa, "hamcmc_sa")
sgmcmc_density_engine <- function(..., iterations = 10000L, chains = 1L, control = sgmcmc_control()) {
  suppress_convergence(sgmcmc_density(..., iterations = iterations, chains = chains, control = engine_control(control)))
}

# Evaluate `expr`, muffling the classed convergence warning (short test chains) and the frozen-step warning (the
# engine tests read a chain's start with step_size = 0; the warning itself is tested in test-input.R) only.
suppress_convergence <- function(expr) {
  withCallingHandlers(expr, scalebayes_warning_convergence = function(w) invokeRestart("muffleWarning"),
                      scalebayes_warning_frozen = function(w) invokeRestart("muffleWarning"))
}
