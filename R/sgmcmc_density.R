#' SG-MCMC of a target given by its log density and gradient
#'
#' `sgmcmc_density()` runs the SG-MCMC samplers of [sgld_sa()] (SGLD, SGHMC, SGNHT, HAMCMC-SA, HAMCMC, pSGLD; see
#' [hamcmc_sa()]) on any target written as a log density and its gradient: no data, no minibatches, the full
#' gradient at every step. The chain driver, step policies, schedules, temperature and divergence handling are
#' those of [sgld_sa()]; there is no prior (the settings of [sgmcmc_ssgl()] do not apply) and no
#' stochastic approximation of latent variables (the preconditioner's SA of HAMCMC-SA does apply).
#'
#' The target is either
#' * an R function `target(beta)` returning `list(log_density = , gradient = )` (the log density up to a
#'   constant, a number, and its gradient, a vector of `length(init)` numbers). R code may run on R's main
#'   thread only, so the chains then run one after the other in this process (`threads` does not apply).
#'   Ctrl-C stops the run after the iteration in hand and returns the draws reached, with a warning (class
#'   `scalebayes_warning_interrupted`): an interrupt inside the target is held until the target returns (a
#'   target interrupted where R cannot hold it, such as a wait in [Sys.sleep()], is called again at the same
#'   point, so the draws are those of the uninterrupted chain); a second Ctrl-C during that call is R's
#'   interrupt itself, without draws. Interrupted before the first kept draw (or during the warm-up), the call
#'   signals R's interrupt.
#' * a Stan model made a target by [stan_target()]: an R target as above (rstan's log density and gradient on
#'   the unconstrained scale, with the Jacobian), whose default `init` is Stan's (uniform(-2, 2) on the
#'   unconstrained scale, per chain); the fit's draws are on the constrained scale with Stan's names, and
#'   `fit$unconstrained_draws` holds the chains' own draws (`final_state` is unconstrained too).
#' * a minibatched model made by [sgmcmc_model()]: a log-likelihood of a minibatch of rows of the data (an R
#'   function, or a model compiled in C++ against `scalebayes/target.hpp`) and a log prior; each iteration
#'   reads `batch_size` rows, the gradient scaled by \eqn{N / n}. `init` is required. With the default step the
#'   warm-up starts at the full-data mode (found by L-BFGS) with the inverse Hessian there as its first metric,
#'   and caps the step by the minibatch noise; `sgmcmc_step(gradient = "control_variate")` gives control-variate
#'   gradients centred at that mode (see [sgmcmc_model()]). A compiled, thread-safe model runs its chains on
#'   `threads` threads; `fit$control_variate` holds the centre and the measured noise factor.
#' * a built-in target made by [sgmcmc_target()] (`"banana"`, `"gaussian"`), evaluated in C++: the chains run
#'   on `threads` threads. The same seed gives the same draws for any number of threads.
#'
#' Chain c uses random stream c of `seed`, and a built-in target and an R function computing the same numbers
#' give the same draws (the banana of [sgmcmc_target()] is, operation for operation, the function in the
#' examples).
#'
#' A target must return a finite log density and gradient at `init` (checked first: a classed error naming
#' `target`); a gradient of the wrong length at any point is a classed error. A chain whose state becomes
#' non-finite later (step too large, or a non-finite gradient) stops at that iteration, is marked diverged
#' (`fit$diverged`, `fit$diverged_at`; its last state stays in `final_state`) and is left out of the draws and
#' every summary, with a warning of class `scalebayes_warning_diverged`; when every chain diverged the call is the
#' classed error `scalebayes_error_diverged` with the last good state.
#'
#' By default the step is chosen by a warm-up (`sgmcmc_control(step_size = "auto")`, as in [sgld_sa()],
#' "Step-size warm-up"). For SGLD, SGHMC, SGNHT, BAOAB and pSGLD it adapts a fixed preconditioner (`sgmcmc_step(metric =
#' "auto")`: dense up to 200 parameters). It starts at the target's mode, found by BFGS from the first chain's
#' `init` and refined by Newton steps, with the inverse of the negative log density's Hessian there (the Laplace
#' covariance, by central differences of the gradient) as the first metric; `fit$warmup$mode` has the mode, the
#' target evaluations and seconds the search took. Without a mode (more than 200 parameters, a Hessian that is
#' not positive definite, a non-finite value) a coarse search over the steps
#' \eqn{4^2, 4^1, \dots, 4^{-10}} with pilots of 100 iterations sizes the starting metric (a multiple of I) at
#' `init`. Two to four pilots of 1,000 iterations adapt the metric from their draws (their covariance shrunk
#' towards its diagonal; more rounds while the last round's whitened variances were off by more than a factor 2,
#' or while a round's draws failed Stein's identity by more than a factor 2, which also quarters the next round's
#' step: an unadjusted sampler at a step beyond a direction's stability limit need not diverge, a free scale
#' parameter grows to absorb it, and a metric adapted there keeps the pilots at that wider posterior; posteriordb's
#' `sblri-blr` from Stan's random starts: sigma 15 against 0.96, where the mode start gives means within 0.05
#' sd and sds 1.04-1.07 times NUTS's), the step is chosen in
#' the whitened coordinates and capped where its excess variance is 10 % (full gradients: about 0.2 for SGLD),
#' and the chains start at draws of the last pilot (an `init` matrix keeps its starts). Measured on a 10-d
#' logistic-regression R target: 4.6-8.0 s for the whole call (4 chains) against 450-510 s with the grid
#' warm-up of before. When the metric's adaptation runs away (every pilot diverges: a funnel such as the
#' 8-schools non-centred posterior started at init = 0 without the mode start, whose first pilot reached log tau =
#' -20 and the next ones overflow), the
#' warm-up falls back to the grid without a metric below and `fit$warmup$grid_fallback` says why (SGLD on 8
#' schools: max mean error 0.09 NUTS sd, sd ratios 0.97-1.04). HAMCMC-SA and HAMCMC keep their own L-BFGS
#' preconditioner; when the mode search succeeds they run on the Laplace whitening
#' \eqn{\theta = \hat\theta + L\phi} (\eqn{L L'} the inverse Hessian at the mode; draws, starts and summaries stay
#' on \eqn{\theta}), so that their memory learns only what the Laplace approximation misses (a 2-d Gaussian
#' with correlation 0.99 and sds 1 and 10: HAMCMC-SA 0.9 s against 12.9 s and 2,000,000 iterations with a
#' convergence warning on the raw scale; `fit$warmup$reparam` has \eqn{\hat\theta} and \eqn{L}). For them (and
#' `metric = "none"`) the grid spans
#' \eqn{4^2, 4^1, \dots, 4^{-10}} (on the whitening, a posterior of unit scale, from \eqn{4^0}, each pilot's KSD
#' taken on \eqn{\phi}: on \eqn{\theta}'s scale the narrowest coordinate's terms decide, and on posteriordb's
#' kilpisjarvi_mod, sds 29 and 3.5e-5, the warm-up chose the grid's bottom step 4.8e-7 and the run did not
#' converge in 2,000,000 iterations), the KSD's winner is refined against its neighbours at factors of 2 in one
#' more round, and the accuracy cap is the discretization's (full gradients: an excess variance of
#' \eqn{\epsilon / 2} for SGLD, \eqn{\eta / (2\alpha)} for SGHMC). Four chains by default; `print()` and `summary()` show split R-hat and bulk / tail ESS, and
#' the call warns (class `scalebayes_warning_convergence`) when the largest R-hat exceeds 1.01 or the smallest
#' bulk ESS is below 100. [ksd()] of the fit measures the draws against the target.
#'
#' R-hat cannot see draws that are consistently wrong in every chain, which is how a curvature-preconditioned
#' sampler fails (HAMCMC's L-BFGS pairs on a funnel such as the non-centred 8-schools posterior inflate its
#' sds with R-hat 1.002). For HAMCMC-SA and HAMCMC the fit therefore also tests its draws against the target:
#' a kernel Stein discrepancy test (the IMQ kernel's U-statistic in units of the draws' sd, its null by the
#' wild bootstrap; Liu, Lee & Jordan 2016) of at most 400 draws, no more than the smallest bulk ESS, against
#' the target's gradient at them. p < 0.01 warns (class `scalebayes_warning_untrusted`, also a convergence
#' warning), as does Stein's test below with its band, and `diagnostics$ksd_test` holds the statistic,
#' p-value and number of draws. On draws of the
#' target the p-value is uniform (a false alarm in 1 % of fits); its power is that of 400 draws (a 1.5 times
#' wider marginal in 1 of 10 coordinates: p about 0.02).
#'
#' SGLD, SGHMC and SGNHT have no Metropolis correction, and a step too large for the posterior's curvature need
#' not diverge: in a regression with a free noise scale, sigma grows until the step is stable, and every chain
#' agrees on a wrong, wider posterior (posteriordb's `sblri-blr`: sigma 200 reference sds too high, R-hat
#' 1.006). Their draws (and HAMCMC's) are therefore tested too, by Stein's identity \eqn{E[s_j(\theta) (\theta_j - m_j)] = -1}
#' (for an unadjusted Langevin chain, \eqn{\theta + \epsilon s + \sqrt{2\epsilon} z}, it is \eqn{-1 - \epsilon E[s_j^2] / 2}: the statistic measures the
#' discretization's excess): the call warns (the same classes) when a coordinate's value is significantly
#' (Bonferroni at 0.01) outside \eqn{-[0.8^2, 1.25^2]}, the band of a marginal sd within 0.8-1.25 times the
#' target's, and `diagnostics$ksd_test` holds `stein`, `stein_se`, `stein_p_value` (the KSD fields are `NA`).
#' The test scores at most 4,000 draws and at most 5 % of the run's gradient work (for a minibatched model, a
#' score is a full-data pass).
#'
#' @param target An R function of one argument (the parameter vector) returning
#'   `list(log_density, gradient)`, a Stan model from [stan_target()], a minibatched model from
#'   [sgmcmc_model()], or a target from [sgmcmc_target()].
#' @param init Starting values: a vector (every chain starts there) or a matrix with one column per chain. Its
#'   length (rows) is the number of parameters d. `NULL`: the target's default (banana: (0, 0); gaussian: its
#'   mean; a Stan target: its `init`, by default Stan's random starts); required for an R function.
#' @param sampler `"sgld"` (the default), `"sghmc"`, `"sgnht"`, `"hamcmc_sa"`, `"hamcmc"`, `"psgld"` (its own
#'   RMSprop preconditioner, adapted during the burn-in, in the warm-up metric's whitened coordinates) or
#'   `"sghmc_baoab"` (SGHMC by the BAOAB splitting); see [sgld_sa()].
#' @param iterations Iterations per chain (default 100,000; when the warm-up caps its step and `iterations` is
#'   not given, that factor longer, at most 50 times).
#' @param control [sgmcmc_control()] settings: `step_size` (the learning rate; default `"auto"`: the warm-up's
#'   step on a constant schedule; a given step runs on the polynomial schedule \eqn{\epsilon_0 k^{-1/3}} unless
#'   `step = sgmcmc_step(schedule = "constant")`), the rest of the step ([sgmcmc_step()]: `temperature`,
#'   `anneal`, `friction`, `noise_estimate`), the L-BFGS part for the preconditioned samplers ([sgmcmc_lbfgs()];
#'   `sa_form` defaults to `"matrix"` for at most 20 parameters), and `trace_every`. A target has no prior:
#'   settings given in [sgmcmc_ssgl()] are ignored with a warning (class `scalebayes_warning_unused`), as are
#'   L-BFGS settings for a sampler without a preconditioner, `friction` for one without a momentum and
#'   `noise_estimate` for any sampler but SGHMC.
#' @param chains Number of chains (default 4).
#' @param burnin,thin Iterations discarded first (default half) and thinning of the kept ones (default: about
#'   1000 kept draws per chain).
#' @param seed,threads,quiet As in [sgld_sa()] (`threads` applies to built-in targets).
#' @return An object of class `c("sb_sgmcmc_density", "sb_fit")` (see [sb_fit-methods]: `print()`,
#'   `summary()`, `plot()`, `coef()`, `as.matrix()`, `as_draws_*()`, `posterior_interval()`) with, in
#'   addition, `trace` (data frame: chain, iteration, log_density at the start of the iteration, eps, tau;
#'   for HAMCMC-SA and HAMCMC also `drift_ratio`, `noise_ratio` and `gamma`, as in [sgld_sa()]),
#'   `final_state` (d x chains), `iterations_done`, `diverged` and `diverged_at` (per chain), `interrupted`,
#'   `target`, `unconstrained_draws` (a Stan target: the draws on the unconstrained scale, one column per
#'   unconstrained parameter; `NULL` otherwise), `warmup` (the step warm-up; `NULL` when a step was given), `diagnostics$convergence` and
#'   `diagnostics$ksd_test` (the trust check; `NULL` for an interrupted run or under 100 draws). `predict()` is an error: a density target has no data to predict.
#' @seealso [sgmcmc_model()], [sgmcmc_target()], [stan_target()], [hamcmc_sa()], [hamcmc_banana_study()].
#' @export
#' @examples
#' # the banana target as an R function (the same numbers as sgmcmc_target("banana"))
#' banana <- function(b) {
#'   u <- 4 * (b[2] + 1.2) - b[1] * b[1]
#'   list(log_density = -(b[1] * b[1] * b[1] * b[1]) / 10 - 0.5 * u * u,
#'        gradient = c(-0.4 * b[1] * b[1] * b[1] + 2 * b[1] * u, -4 * u))
#' }
#' # defaults: four chains, step and run length chosen by the warm-up, R-hat and ESS in print()
#' fit <- sgmcmc_density(sgmcmc_target("banana"), seed = 1)
#' fit
#' ksd(fit)
#' # the R function gives the same draws as the built-in target (a short fixed-step run, to show it)
#' ctl <- sgmcmc_control(step_size = 0.01, step = sgmcmc_step(schedule = "constant"))
#' short <- function(tg) {
#'   suppressWarnings(sgmcmc_density(tg, init = c(0, 0), iterations = 2000, chains = 1, control = ctl,
#'                                   seed = 1))
#' }
#' identical(as.matrix(short(banana)), as.matrix(short(sgmcmc_target("banana"))))
#' # HAMCMC-SA on a correlated Gaussian, four chains on two threads
#' S <- matrix(c(1, 0.9, 0.9, 1), 2)
#' g <- sgmcmc_density(sgmcmc_target("gaussian", mean = c(1, -1), cov = S), sampler = "hamcmc_sa",
#'                     threads = 2, seed = 1)
#' round(coef(g), 2)
#' round(cov(as.matrix(g)), 2)
sgmcmc_density <- function(target, init = NULL, sampler = "sgld",
                           iterations = NULL, control = sgmcmc_control(), chains = 4L, burnin = NULL, thin = NULL,
                           seed = NULL, threads = NULL, quiet = NULL) {
  call <- match.call()
  iterations_given <- !is.null(iterations)
  sampler <- sgmcmc_match_sampler(sampler)
  if (missing(target)) {
    sb_abort(c("{.arg target} is missing.",
               i = "Give an R function returning {.code list(log_density, gradient)}, or {.code sgmcmc_target(\"banana\")}."),
             arg = "target")
  }
  is_r <- is.function(target)
  is_model <- inherits(target, "sb_sgmcmc_model")  # a minibatched model (R/sgmcmc_model.R)
  r_code <- is_r || (is_model && identical(target$type, "model_r"))  # R code per iteration: the main thread
  targ <- if (is_model) "log_lik" else "target"  # the argument the target's messages name
  if (!is_r && !is_model && !inherits(target, "sb_sgmcmc_target")) {
    sb_abort(c("{.arg target} must be a function, a model made by {.fn sgmcmc_model} or a target made by {.fn sgmcmc_target}.",
               x = "You supplied {.obj_type_friendly {target}}.",
               i = "An R target is {.code function(beta) list(log_density = , gradient = )}."), arg = "target")
  }
  if (is_r) density_check_arity(target)
  is_stan <- inherits(target, "sb_stan_target")  # an R target (R/stan_target.R) with its starts and scale
  chains <- check_count(chains)
  iterations <- if (iterations_given) check_count(iterations) else 100000L  # a given step; else the warm-up's
  check_sgmcmc_control(control, sampler, prior = FALSE)
  use_cv <- identical(control$gradient, "control_variate")
  if (!is_model) check_cv_regression(control, "a density target")
  check_frozen_step(control, moves = FALSE, what = "a density target (no latent variables)", error = TRUE)
  init_stan_default <- FALSE
  if (is.null(init) && is_stan) {
    seed <- resolve_seed(seed)
    st <- stan_target_init(target, chains, seed)
    init <- st$init
    init_stan_default <- !st$given  # Stan's random starts: the warm-up may still move the chains' starts
  }
  if (is.null(init)) {
    if (is_r || is_model) {
      sb_abort(c("{.arg init} is required for {if (is_model) 'a model of {.fn sgmcmc_model}' else 'a target written in R'}.",
                 i = "Give a vector with one starting value per parameter."), arg = "init")
    }
    init <- target$init
  }
  if (!is.numeric(init) || !length(init) || any(!is.finite(init))) {
    sb_abort(c("{.arg init} must be a vector (or a matrix with one column per chain) of finite numbers.",
               x = "You supplied {.obj_type_friendly {init}}."), arg = "init")
  }
  d <- if (is.matrix(init)) nrow(init) else length(init)
  par_names <- (if (is.matrix(init)) rownames(init) else names(init)) %||%
    (if (is_stan) target$unconstrained_names[seq_len(d)] else if (!is_r && !is.null(target$names)) target$names
     else paste0("b", seq_len(d)))
  if (!is_r && !is_model && d != target$dim) {
    sb_abort(c("{.arg init} must have one value per parameter of the target ({target$dim}).",
               x = "It has {d}."), arg = "init")
  }
  if (is.matrix(init) && ncol(init) != chains) {
    sb_abort(c("A matrix {.arg init} must have one column per chain ({chains}).", x = "It has {ncol(init)}."),
             arg = "init")
  }
  init_matrix_given <- is.matrix(init) && !init_stan_default
  init <- matrix(as.double(init), d, chains)
  burnin_arg <- burnin
  thin_arg <- thin
  lens <- sgmcmc_lengths(iterations, burnin, thin)
  check_result_memory(8 * as.double(chains) * ((iterations - lens$burnin) %/% lens$thin) * d, "iterations",
                      peak = 16 * as.double(chains) * ((iterations - lens$burnin) %/% lens$thin) * d,
                      fix = "Use fewer {.arg iterations} or {.arg chains}, or a larger {.arg burnin} or {.arg thin}.")
  check_anneal(control, iterations)
  check_hamcmc_control(control, sampler, d)
  control$sa_form <- control$sa_form %||% sgmcmc_default_sa_form(d)
  warn_hamcmc_experimental(control, sampler, FALSE)
  run <- run_settings(seed, threads, quiet)
  seed <- run$seed
  auto_step <- is.null(control$step_size) || identical(control$step_size, "auto")
  control$step_schedule <- control$step_schedule %||% (if (auto_step) "constant" else "polynomial")
  if (is_model) {
    model_check_start(target, init)
    eng_target <- model_engine_target(target, d)
  } else if (is_r) {
    fun <- density_r_target(target, d)
    if (is_stan) stan_target_check_start(target, init)
    for (c in seq_len(chains)) density_check_start(target, init[, c], d, chain = c)
    eng_target <- list(type = "r", fun = fun, dim = d)
  } else {
    eng_target <- unclass(target)[c("type", "mean", "cov")]
    eng_target <- eng_target[!vapply(eng_target, is.null, logical(1))]
    # a gaussian's precision cov^-1 once per call (d^3 flops, seconds at d = 3,000; it stops on Ctrl-C between
    # column blocks): the start check, the warm-up's scores and every chain evaluate with it
    if (identical(eng_target$type, "gaussian")) eng_target <- gaussian_engine_target(eng_target)
    ev <- cpp_sgmcmc_target_eval(eng_target, init)
    for (c in seq_len(chains)) {
      if (!is.finite(ev$log_density[c]) || any(!is.finite(ev$gradient[, c]))) {
        sb_abort(c("The target's log density or gradient is not finite at {.arg init} (chain {c}).",
                   i = "Start where the density is positive."), arg = "init")
      }
    }
  }
  # a model: minibatches of its batch_size rows, whose noise factor 1 + (N - n) / n caps the warm-up's step
  batch <- if (is_model) target$batch_size else 1L
  noise <- if (is_model) 1 + (target$nobs - batch) / batch else 1
  cv <- NULL
  mode <- NULL  # a model: the full-data mode, where the warm-up starts (and the control variates' centre)
  use_cv <- use_cv && is_model && batch < target$nobs
  reparam_kind <- if (!is_model && auto_step) sgmcmc_reparam_kind(control, sampler, d)
  if (!is_model && auto_step && (!is.null(sgmcmc_metric_kind(control, sampler, d)) || !is.null(reparam_kind))) {
    # a full-data target with a metric: the warm-up starts at the mode with the Laplace covariance as its first
    # metric when the mode search succeeds (density_mode()); else at init with a multiple of I. HAMCMC-SA and
    # HAMCMC: the chains run on theta = mode + L phi with L L' the Laplace covariance (reparam below)
    mode <- density_mode(eng_target, target, is_r, init[, 1L])
  }
  reparam <- if (!is.null(reparam_kind) && !is.null(mode)) laplace_reparam(mode, reparam_kind)
  if (is_model && (auto_step || use_cv)) {
    mode <- model_mode(eng_target, init[, 1L], cv = use_cv)
    if (use_cv) {
      cv <- mode[c("center", "grad", "status", "iterations", "seconds")]
      eng_target$cv_center <- cv$center
      eng_target$cv_grad <- cv$grad
      # the control variate's own noise factor, measured a posterior sd from the centre (R/sgmcmc_model.R)
      noise <- cv$noise <- model_cv_noise(eng_target, cv$center, cv$grad, batch, seed, mode$inv_hessian)
    }
  }
  engine_ctl <- function(control, ...) {
    ctl <- sgmcmc_engine_control(control, 0, 1, family = "gaussian", method = "none", sampler = sampler,
                                 batch_size = batch,
                                 report_every = if (r_code) 1L else sgmcmc_report_every(sampler, control$sa_form, d),
                                 prune = FALSE, ...)
    ctl$reparam_center <- reparam$center
    ctl$reparam_factor <- reparam$factor
    ctl
  }
  score <- function(draws, latent) density_score(eng_target, target, is_r, draws, call = rlang::current_env())
  warmup <- NULL
  if (auto_step) {
    t_w <- proc.time()
    warmup <- density_warmup(eng_target, if (!is.null(mode)) matrix(mode$center, ncol = 1L) else init[, 1L, drop = FALSE],
                             control, engine_ctl, run, score, sampler, chains = chains, noise = noise,
                             nobs = if (is_model) target$nobs else 1, targ = targ, metric0 = mode$inv_hessian,
                             top = if (is.null(reparam)) 2 else 0, stan = is_stan, reparam = reparam)
    warmup$seconds <- (proc.time() - t_w)[["elapsed"]]
    # a full-data target's mode search (density_mode()): where the warm-up started
    if (!is_model) warmup$mode <- if (!is.null(mode)) mode[c("center", "evaluations", "seconds")]
    warmup$reparam <- reparam
    control$step_size <- warmup$step_size
    # with a metric and no init given by a matrix, the chains start at the warm-up's draws
    if (!is.null(warmup$starts) && !init_matrix_given) init <- warmup$starts
    # HAMCMC on the Laplace whitening: the chains start at draws of the Laplace approximation (mode + L z, z
    # standard normal from the seed), not at init: from Stan's random starts (sblri-blr: 2,000 posterior sds
    # out) the L-BFGS memory's first pairs came from the flat far region and the chains never returned (mean
    # error 1,494 sd, R-hat 3.9, warned)
    if (!is.null(reparam) && is.null(warmup$starts) && !init_matrix_given) {
      z <- sb_with_seed(seed, matrix(stats::rnorm(d * chains), d, chains))
      init <- reparam$center + reparam$factor %*% z
    }
    if (!iterations_given) {
      iterations <- sgmcmc_auto_length(warmup, fallback = iterations,
                                       lower = if (is.null(warmup[["metric"]])) 20000 else 2000)
      lens <- sgmcmc_lengths(iterations, burnin_arg, thin_arg)
      check_anneal(control, iterations)
    }
  }
  sgmcmc_note_long_warmup(warmup, iterations, chains, run$quiet)
  trace_every <- control$trace_every %||% max(1L, iterations %/% 1000L)
  check_result_size(as.double(chains) * (iterations %/% trace_every), 7, "control$trace_every")
  ctl <- engine_ctl(control, trace_every = trace_every, iterations = iterations, burnin = lens$burnin,
                    thin = lens$thin, keep = seq_len(d), chains = chains, chain_offset = 0)
  ctl$metric_factor <- warmup[["metric"]]  # [[: no partial match of another field
  t0 <- proc.time()
  res <- sb_call_engine(cpp_sgmcmc_density(eng_target, init, ctl, run))
  timing <- proc.time() - t0
  ch <- res$chains
  interrupted <- isTRUE(res$interrupted)
  saved <- vapply(ch, `[[`, numeric(1), "saved")
  diverged <- vapply(ch, function(x) isTRUE(x$diverged), logical(1))
  done <- vapply(ch, `[[`, numeric(1), "iterations_done")
  state <- matrix(unlist(lapply(ch, `[[`, "state")), d, length(ch), dimnames = list(par_names, NULL))
  bad_grad <- vapply(ch, function(x) as.double(x$bad_gradient_at %||% 0), numeric(1))
  bad_logd <- vapply(ch, function(x) as.double(x$bad_log_density_at %||% 0), numeric(1))
  # an R target that returned a non-finite gradient at a finite state (before the chain's state turned
  # non-finite): the target's fault, not the step's (a built-in target's gradient overflows only far out)
  target_grad <- r_code & diverged & bad_grad > 0 & bad_grad <= vapply(ch, function(x) as.double(x$diverged_at), numeric(1))
  if (all(diverged) && target_grad[which(diverged)[1]]) {
    b <- which(diverged)[1]
    sb_abort(c("{.arg {targ}} returned a non-finite gradient at iteration {bad_grad[b]} (chain {b}), at a finite parameter value; the chain stopped there.",
               i = "Check the gradient of {.arg {targ}} near the last good state (the {.field last_state} field of this error, rlang::catch_cnd()): it must be finite wherever the density is positive.",
               i = "If that state lies far out in the tails, a smaller {.code sgmcmc_control(step_size = )} (now {signif(control$step_size, 3)}) keeps the chain nearer the mass."),
             kind = "target", also = c("diverged", "divergence"), arg = targ, last_state = state[, b],
             diverged_at = ch[[b]]$diverged_at)
  }
  if (all(diverged)) {
    b <- which(diverged)[1]
    sb_abort(c("SG-MCMC diverged in every chain (chain {b} at iteration {ch[[b]]$diverged_at}).",
               x = "{ch[[b]]$message}",
               i = "Reduce {.code sgmcmc_control(step_size = )} (now {signif(control$step_size, 3)}{if (auto_step) ', chosen by the warm-up' else ''}).",
               i = "The last good state is in the {.field last_state} field of this error (rlang::catch_cnd())."),
             kind = "divergence", also = "diverged", last_state = state[, b], diverged_at = ch[[b]]$diverged_at)
  }
  if (sum(saved[!diverged]) == 0 && interrupted) rlang::interrupt()
  # a diverged chain is left out of the draws and every summary (its state stays in final_state)
  draws <- do.call(rbind, lapply(ch[!diverged], `[[`, "draws"))
  colnames(draws) <- par_names
  chain_id <- rep(which(!diverged), saved[!diverged])
  # a Stan target: the draws on Stan's constrained scale with its names; the chains' draws kept as they ran
  udraws <- NULL
  if (is_stan) {
    udraws <- draws
    draws <- stan_target_constrain(target, udraws)
  }
  trace <- sgmcmc_trace_frame(lapply(ch, `[[`, "trace"), c("iteration", "log_density", "eps", "tau"))
  label <- sgmcmc_sampler_info(sampler)$label
  tname <- if (is_stan) paste("Stan model", target$model_name) else if (is_r) "R function"
           else if (is_model) sprintf("%s, %s rows in minibatches of %s%s", target$name, format(target$nobs, big.mark = ","),
                                      format(batch, big.mark = ","), if (!is.null(cv)) " (control variates)" else "")
           else target$name
  convergence <- if (nrow(draws)) sgmcmc_convergence(draws, chain_id) else NULL
  # the draws tested against the target's score (R/ksd.R: sgmcmc_trust_check), at a cost of at most 5 % of the
  # run's gradient work (a minibatched model's score at a draw is a full-data pass: nobs / batch minibatch steps)
  # The chains sample p^tau at the step's temperature tau (variance cov / tau for a gaussian): its score is tau
  # times the target's. Not with annealing (tau changes over the run).
  trust <- if (!interrupted && nrow(draws) && (control$anneal %||% 1) == 1) {
    work <- sum(done) * (if (is_model) batch / target$nobs else 1)
    tau <- control$temperature %||% 1
    sgmcmc_trust_check(udraws %||% draws, chain_id, function(b) tau * density_score(eng_target, target, is_r, b),
                       convergence, sampler, max_draws = as.integer(min(4000, floor(0.05 * work))))
  }
  settings <- list(sampler = sampler, iterations = iterations, burnin = lens$burnin, thin = lens$thin,
                   chains = chains, control = control, target = tname, dim = d,
                   nobs = if (is_model) target$nobs, batch_size = if (is_model) batch,
                   step_size = control$step_size, auto_step = auto_step,
                   print_info = c(target = tname, iterations = iterations, chains = chains,
                                  step = sgmcmc_step_label(control$step_size, NULL, auto_step, sampler),
                                  status = if (interrupted) "interrupted: the draws reached" else NULL,
                                  sgmcmc_convergence_info(convergence)))
  fit <- new_sb_fit(draws = draws, estimate = colMeans(draws), method = paste(label, "(density target)"),
                    subclass = "sb_sgmcmc_density", call = call, chain = chain_id, settings = settings, seed = seed,
                    timing = timing, diagnostics = list(saved = saved, convergence = convergence, ksd_test = trust), trace = trace,
                    final_state = state, iterations_done = done, diverged = diverged,
                    diverged_at = ifelse(diverged, vapply(ch, `[[`, numeric(1), "diverged_at"), NA),
                    interrupted = interrupted, target = target, warmup = warmup, unconstrained_draws = udraws,
                    diverged_why = ifelse(target_grad, "the target returned a non-finite gradient at a finite state", NA),
                    engine_target = if (is_model) eng_target[setdiff(names(eng_target), c("cv_center", "cv_grad"))],
                    control_variate = cv)
  sgmcmc_report_divergence(fit, control$step_size, auto_step)
  if (any(bad_logd > 0)) {
    b <- which(bad_logd > 0)[1]
    sb_warn(c("{.arg {targ}} returned a non-finite log density at iteration {bad_logd[b]} (chain {b}) at a finite parameter value, with a finite gradient.",
              i = "The draws follow the gradient, but {.code fit$trace$log_density} is not finite there; check the log density of {.arg {targ}}."),
            kind = "target")
  }
  warn_one_draw(nrow(draws))
  if (!interrupted) sgmcmc_warn_convergence(convergence, iterations, arg = "iterations")
  if (interrupted) {
    per_chain <- paste(done, collapse = ", ")
    kept <- paste(saved, collapse = ", ")
    sb_warn(c("Interrupted: the fit holds the draws reached (iterations per chain: {per_chain}; kept draws: {kept}).",
              i = "{.code fit$final_state} is the last state of every chain."), kind = "interrupted")
  }
  fit
}

# A gaussian engine target with its precision: list(type, mean, prec) (the covariance is not needed again).
gaussian_engine_target <- function(eng_target) {
  prec <- cpp_sgmcmc_gaussian_precision(eng_target$cov)
  if (is.null(prec)) rlang::interrupt()
  list(type = "gaussian", mean = eng_target$mean, prec = prec)
}

# The score (gradient of the log density) of the target at the rows of `draws`.
density_score <- function(eng_target, target, is_r, draws, call = rlang::caller_env()) {
  if (is_r) {
    sc <- t(apply(draws, 1L, function(b) {
      as.double(density_call_target(target, b, "while the warm-up scored its pilot draws", call)$gradient)
    }))
    if (ncol(draws) == 1L) sc <- t(sc)
    return(sc)
  }
  t(cpp_sgmcmc_target_eval(eng_target, t(draws))$gradient)
}

# The step-size warm-up of a density target (R/sgmcmc_warmup.R): no data scale to go by, so the grid spans
# 2^4 .. 2^-20 in factors of 4 (13 steps), the winner refined against its neighbours at factors of 2 in one
# more round. Full gradients: the excess variance of a step is the discretization's eps / 2 (SGLD) or
# eta / (2 alpha) (SGHMC). Pilots run on stream 2^20 of the seed.
density_warmup <- function(eng_target, init1, control, engine_ctl, run, score, sampler, chains = 4L, noise = 1,
                           nobs = 1, targ = "target", metric0 = NULL, top = 2, stan = FALSE, reparam = NULL) {
  call <- rlang::caller_env()
  run_pilot <- utils::modifyList(run, list(quiet = TRUE, threads = 1L))
  d <- nrow(init1)
  # steps of pilots in which an R target returned a non-finite gradient at a finite state (that stops the pilot
  # as a divergence): the warm-up then says so, instead of blaming the step
  bad_steps <- numeric(0)
  pilot <- function(eps, len, factor = NULL, adapt = FALSE, stream = 2^20, start = NULL, latent = NULL, ...) {
    cc <- control
    cc$step_size <- eps
    ctl <- engine_ctl(cc, trace_every = len, iterations = len, burnin = len %/% 2L, thin = warmup_thin(len),
                      keep = seq_len(d), chains = 1L, chain_offset = stream)
    ctl$metric_factor <- factor
    r <- cpp_sgmcmc_density(eng_target, if (is.null(start)) init1 else matrix(start, ncol = 1L), ctl, run_pilot)
    if (isTRUE(r$interrupted)) rlang::interrupt()
    ch <- r$chains[[1]]
    bad <- as.double(ch$bad_gradient_at %||% 0)
    if (eng_target$type %in% c("r", "model_r") && isTRUE(ch$diverged) && bad > 0 && bad <= as.double(ch$diverged_at)) {
      bad_steps <<- c(bad_steps, eps)
    }
    list(draws = ch$draws, diverged = isTRUE(ch$diverged), latent = NULL, final = ch$state)
  }
  pilot_s <- pilot
  score_s <- score
  if (!is.null(reparam)) {
    # HAMCMC on the Laplace whitening theta = mode + L phi: the pilots' draws scored in phi (KSD, ESS), where the
    # posterior is about of unit scale, as the metric samplers' step search is (R/sgmcmc_metric.R). On theta's
    # scale the KSD is the sum of the coordinates' terms, each of the order of 1 / its variance: the narrowest
    # coordinate's noise decides, and a pilot that barely left its start scores best (posteriordb's
    # kilpisjarvi_mod, beta's sd 3.5e-5 beside alpha's 29: every pilot's KSD 180-4,700, the warm-up chose the
    # grid's bottom step 4.8e-7, R-hat 2.4 after 2,000,000 iterations)
    whiten <- metric_whitener(reparam$factor)
    pilot_s <- function(eps, len, ...) {
      pr <- pilot(eps, len, ...)
      if (!is.null(pr$draws) && nrow(pr$draws)) pr$draws <- whiten$x(pr$draws)
      pr
    }
    score_s <- function(draws, latent) whiten$score(score(whiten$x_inv(draws), latent))
  }
  w <- withCallingHandlers(density_warmup_run(pilot_s, control, score_s, sampler, d, chains, noise, nobs, metric0, top),
    scalebayes_error_divergence = function(e) {
      if (length(bad_steps)) {
        sb_abort(c("The step-size warm-up stopped: {.arg {targ}} returned a non-finite gradient at a finite parameter value in {length(bad_steps)} pilot chain{?s} (steps {signif(min(bad_steps), 3)} to {signif(max(bad_steps), 3)}), which ended {?it/them} as divergences.",
                   x = "{conditionMessage(e)}",
                   i = "Check the gradient of {.arg {targ}}: it must be finite wherever the density is positive (a pilot far out in the tails finds it first); or give {.code sgmcmc_control(step_size = )} yourself."),
                 kind = "target", also = c("diverged", "divergence"), arg = targ, call = call)
      }
    })
  w$bad_gradient_steps <- bad_steps
  # a Stan model's gradient (Stan's math library) overflows far out in the tails, where a pilot at a step beyond
  # the stability limit goes (posteriordb: HAMCMC-SA's refinement pilot at the whitened step 2 on sblri-blr,
  # sblrc-blr, nes2000-nes): that is the step's divergence, not a bug of the user's code to be warned of
  if (length(bad_steps) && !stan) {
    sb_warn(c("{.arg {targ}} returned a non-finite gradient at a finite parameter value in {length(bad_steps)} pilot chain{?s} of the step-size warm-up (steps {signif(min(bad_steps), 3)} to {signif(max(bad_steps), 3)}); those steps were counted as divergences, and the warm-up chose {signif(w$step_size, 3)}.",
              i = "Check the gradient of {.arg {targ}}: it must be finite wherever the density is positive."),
            kind = "target")
  }
  w
}

# noise: the minibatch noise's factor on a step's excess variance (1 + (N - n) / n; 1 for full gradients);
# nobs: a model's rows N, whose posterior is about N times as concentrated as one row's: the grid reaches
# log4(N) - 3 factors of 4 further down (a step of the order of a posterior variance must lie on it).
# metric0: a covariance to start the metric from (a model: the inverse Hessian at its mode, where the pilots
# start): no coarse search then. top: the grid's largest step is 4^top; 0 on the Laplace whitening of HAMCMC
# (a posterior of unit scale, where Langevin's Euler step is stable below 2: the steps 4 and 16 of the raw
# grid only diverge, and on Stan targets they reach regions of non-finite gradients, which warn).
density_warmup_run <- function(pilot, control, score, sampler, d, chains, noise = 1, nobs = 1, metric0 = NULL,
                               top = 2) {
  excess <- sgmcmc_step_excess(sampler, control$friction, noise)
  grid <- 4^(top:(-10 - max(0, ceiling(log(nobs, 4)) - 3)))
  kind <- sgmcmc_metric_kind(control, sampler, d)
  fallback <- NULL
  if (!is.null(kind)) {
    # a metric (R/sgmcmc_metric.R): a coarse search with short pilots sizes M0 = (eps0 / 0.1) I, so that the
    # adaptation's first whitened step 0.1 is the coarse winner eps0 (SGHMC / SGNHT: eps0 / friction)
    w <- tryCatch(if (!is.null(metric0)) {
      info <- sgmcmc_sampler_info(sampler)
      m0 <- if (kind == "diagonal") list(var = diag(metric0)) else list(cov = metric0)
      # pilots as long as the minibatch noise makes the step shorter (a whitened step 0.1 / noise), so that they
      # travel as far as full-data pilots of 1,000 iterations (shorter ones, N = 5,000, 250 rows: a metric from
      # pilots that barely moved, 3 to 10 times too narrow, R-hat 1.16)
      sgmcmc_metric_warmup(pilot, score, m0, kind, noise = noise, friction = if (info$momentum) control$friction,
                           chains = chains, adapt_iterations = as.integer(1000 * min(noise, 50)),
                           stein_check = nobs == 1)
    } else {
      coarse <- sgmcmc_step_warmup(grid, function(eps, len) pilot(eps, len), score, excess = NULL,
                                   pilot_iterations = 100L)
      info <- sgmcmc_sampler_info(sampler)
      v0 <- coarse$ksd_step / 0.1 / (if (info$momentum) control$friction else 1)
      # full-data targets (not a minibatched model, whose score is a full pass): the adaptation rounds' Stein
      # check (R/sgmcmc_metric.R)
      w <- sgmcmc_metric_warmup(pilot, score, list(var = rep(v0, d)), kind, noise = noise,
                                friction = if (info$momentum) control$friction, chains = chains,
                                stein_check = nobs == 1)
      w$table <- rbind(coarse$table, transform(w$table, round = w$table$round + max(coarse$table$round)))
      w$iterations <- w$iterations + coarse$iterations
      w
    }, scalebayes_error_divergence = function(e) {
      # the metric's adaptation ran away (a funnel: on the 8-schools non-centred posterior the first pilot took
      # log tau to -20, the metric from its draws to -809 and then overflow, at every seed): the grid warm-up
      # below, without a metric, samples it (max mean error 0.09 NUTS sd, sd ratios 0.97-1.04)
      fallback <<- conditionMessage(e)
      NULL
    })
    if (!is.null(w)) return(w)
  }
  coarse <- sgmcmc_step_warmup(grid, pilot, score, excess = NULL)
  fine <- sgmcmc_step_warmup(coarse$ksd_step * c(2, 1, 0.5), pilot, score, excess = excess,
                             pilot_iterations = max(coarse$table$pilot_iterations))
  fine$table <- rbind(coarse$table, transform(fine$table, round = fine$table$round + max(coarse$table$round)))
  fine$iterations <- coarse$iterations + fine$iterations
  fine$grid_fallback <- fallback
  fine
}

# HAMCMC-SA and HAMCMC keep their own (L-BFGS) preconditioner and read no metric; on a full-data target with the
# step warm-up they run instead on the Laplace whitening theta = mode + L phi (density.hpp: Affine), L L' the
# inverse Hessian at the mode ("dense"; "diagonal": its diagonal), where the L-BFGS memory learns what the Laplace
# approximation leaves. sgmcmc_step(metric = ) chooses it as it chooses the others' metric ("none": off). Why
# (bench/posteriordb.R): on the raw scale the step is capped by the narrowest direction and the chains crawl
# along the widest (nes2000-nes: 895,000 iterations and 1,882 s for HAMCMC-SA, against 16 s for SGHMC).
sgmcmc_reparam_kind <- function(control, sampler, d) {
  info <- sgmcmc_sampler_info(sampler)
  if (info$metric || !info$preconditioned) return(NULL)
  m <- control$metric %||% "auto"
  if (m == "none") return(NULL)
  if (m == "auto") m <- if (d <= 200) "dense" else "diagonal"
  m
}

laplace_reparam <- function(mode, kind) {
  S <- mode$inv_hessian
  L <- if (kind == "diagonal") diag(sqrt(diag(S)), nrow(S)) else t(chol((S + t(S)) / 2))
  list(center = as.double(mode$center), factor = L, kind = kind)
}

# The mode of a full-data target (an R function, a Stan model, a target of sgmcmc_target()) and the inverse of
# the negative log density's Hessian there, the warm-up's start and first metric (as a model's, model_mode()):
# BFGS (stats::optim, at most 500 iterations) from `start`, then up to 5 Newton steps with the Hessian by central
# differences of the gradient (2 d gradients each), until the Newton decrement g' H^-1 g is below 1e-4 (the
# mode within 0.01 posterior sd in the Laplace metric). NULL (the warm-up then starts at `start` with a multiple
# of I) when d > 200, a value or gradient is not finite, or the Hessian is not positive definite (no mode, a
# ridge, a saddle). Why (posteriordb, bench/posteriordb.R): from Stan's random starts the first pilots of a
# regression with a free sigma (blr on sblri: coefficient sds 0.001) ran at a step beyond the coefficients'
# stability limit, sigma grew to absorb it, and the metric adapted from those draws kept every later pilot at
# that wrong, wider posterior (sigma 15 against 0.96).
density_mode <- function(eng_target, target, is_r, start, max_newton = 5L, call = rlang::caller_env()) {
  d <- length(start)
  if (d > 200L) return(NULL)
  t0 <- proc.time()
  evals <- 0L
  ev <- function(b) {
    evals <<- evals + 1L
    if (is_r) {
      r <- density_call_target(target, b, "while the warm-up searched for the mode", call)
      return(list(value = as.double(r$log_density), gradient = as.double(r$gradient)))
    }
    e <- cpp_sgmcmc_target_eval(eng_target, matrix(b, d))
    list(value = as.double(e$log_density), gradient = as.double(e$gradient))
  }
  last <- list(b = NULL)
  memo <- function(b) {
    if (!identical(b, last$b)) last <<- list(b = b, e = ev(b))
    last$e
  }
  ok <- function(e) length(e$value) == 1L && is.finite(e$value) && length(e$gradient) == d && all(is.finite(e$gradient))
  fn <- function(b) { e <- memo(b); if (ok(e)) -e$value else Inf }
  gr <- function(b) { e <- memo(b); if (ok(e)) -e$gradient else rep(0, d) }
  o <- tryCatch(stats::optim(start, fn, gr, method = "BFGS", control = list(maxit = 500L, reltol = 1e-12)),
                error = function(e) if (inherits(e, "scalebayes_error")) stop(e) else NULL)
  if (is.null(o) || !all(is.finite(o$par)) || !is.finite(o$value)) return(NULL)
  b <- o$par
  grad_at <- function(b) { e <- ev(b); if (ok(e)) e$gradient else rep(NaN, d) }
  for (k in 0:max_newton) {
    g <- grad_at(b)
    if (!all(is.finite(g))) return(NULL)
    H <- fd_neg_hessian(grad_at, b)
    if (!all(is.finite(H))) return(NULL)
    R <- tryCatch(chol((H + t(H)) / 2), error = function(e) NULL)
    if (is.null(R)) return(NULL)
    step <- backsolve(R, forwardsolve(t(R), g))
    if (sum(g * step) < 1e-4) break
    if (k == max_newton) return(NULL)
    b <- b + step
  }
  ih <- chol2inv(R)
  if (!all(is.finite(ih))) return(NULL)
  list(center = b, inv_hessian = ih, status = "converged", iterations = o$counts[["function"]], evaluations = evals,
       seconds = (proc.time() - t0)[["elapsed"]])
}

# The user's R target as the engine calls it: c(log density, gradient), checked (a wrong length is a classed
# error at any point; non-finite numbers pass: at a finite point the driver reports the divergence they cause).
# An error in the target is a classed error naming it, with its message and the call's count (the engine's
# unwinding carries the classed condition through, as sb_call_engine() rethrows it).
#
# Ctrl-C: the engine suspends interrupts while the target runs, so an interrupt stays pending until the driver's
# next report point. Some R code signals it all the same (Sys.sleep() waiting in select()): that interrupt is
# caught here, the target is called again at the same point (as if the interrupt had been held), and the value
# is marked (attribute sb_interrupt), which the engine turns into its stop request (src/sgmcmc_density.cpp): the
# run ends at the next report point with the draws reached and the warning, as for a target busy in R code. A
# second interrupt during that repeated call is the R interrupt itself (the way out of a target that never
# returns).
density_r_target <- function(target, d, call = rlang::caller_env()) {
  force(target)
  force(call)
  calls <- 0
  function(b) {
    calls <<- calls + 1
    when <- sprintf("during the run (call %s of the target)", format(calls))
    held <- FALSE
    r <- tryCatch(density_call_target(target, b, when, call), interrupt = function(e) {
      held <<- TRUE
      NULL
    })
    if (held) r <- density_call_target(target, b, when, call)
    density_check_value(r, d)
    out <- c(as.double(r$log_density), as.double(r$gradient))
    if (held) attr(out, "sb_interrupt") <- TRUE
    out
  }
}

# target(b), an error in it turned into a classed error (kind "target") naming `target`, with the user's message
# and the point. when: where the call happened ("at `init` (chain 1)", ...).
density_call_target <- function(target, b, when, call) {
  tryCatch(target(b), error = function(e) {
    at <- paste0(paste(format(signif(utils::head(b, 6), 4)), collapse = ", "), if (length(b) > 6) ", ..." else "")
    sb_abort(c("{.arg target} stopped with an error {when}.",
               i = "It was called at b = ({at}); it must return {.code list(log_density = , gradient = )} wherever the chain can go."),
             kind = "target", arg = "target", call = call, parent = e)  # the parent: the user's error and message
  })
}

# An R target is called with one argument, the parameter vector: a function without one (base R's "unused
# argument" from the engine) or with further arguments that have no default is an error up front.
density_check_arity <- function(target, call = rlang::caller_env()) {
  if (is.primitive(target)) return(invisible())
  f <- formals(target)
  nm <- names(f)
  if (!length(nm)) {
    sb_abort(c("{.arg target} must take one argument, the parameter vector.", x = "It takes none.",
               i = "Write it as {.code function(b) list(log_density = , gradient = )}."), arg = "target", call = call)
  }
  rest <- setdiff(nm[-1L], "...")
  no_default <- vapply(rest, function(a) identical(f[[a]], quote(expr = )), logical(1))
  if (nm[1L] != "..." && any(no_default)) {
    req <- rest[no_default]
    sb_abort(c("{.arg target} must be callable with one argument, the parameter vector: {.code function(b)}.",
               x = "{cli::qty(length(req))}Argument{?s} {.arg {req}} {?has/have} no default.",
               i = "{cli::qty(length(req))}Give {?it/them} a default, or wrap the function: {.code function(b) target(b, <value>)}."),
             arg = "target", call = call)
  }
  invisible()
}

density_check_value <- function(r, d, call = rlang::caller_env(2)) {
  if (!is.list(r) || !is.numeric(r$log_density) || length(r$log_density) != 1L || !is.numeric(r$gradient)) {
    sb_abort(c("{.arg target} must return {.code list(log_density = <number>, gradient = <numeric vector>)}.",
               x = "It returned {.obj_type_friendly {r}}."), arg = "target", call = call)
  }
  if (length(r$gradient) != d) {
    sb_abort(c("{.arg target} returned a gradient of length {length(r$gradient)}.",
               x = "The parameter vector ({.arg init}) has length {d}; the gradient must have one entry per parameter."),
             arg = "target", call = call)
  }
  invisible(r)
}

density_check_start <- function(target, b, d, call = rlang::caller_env(), chain = 1L) {
  r <- density_call_target(target, b, sprintf("at `init` (chain %d)", chain), call)
  density_check_value(r, d, call = call)
  if (!is.finite(r$log_density) || any(!is.finite(r$gradient))) {
    bad <- if (!is.finite(r$log_density)) "log density" else "gradient"
    sb_abort(c("{.arg target} returned a non-finite {bad} at {.arg init}.",
               x = "{.arg target} must give a finite log density and gradient where the chain starts.",
               i = "Start where the density is positive, or check the gradient's formula."), arg = "target",
             call = call)
  }
  invisible(r)
}

#' Built-in targets of sgmcmc_density()
#'
#' Targets evaluated in C++, so that [sgmcmc_density()] runs their chains on worker threads.
#' * `"banana"`: \eqn{p(b) \propto \exp(-b_1^4/10 - (4(b_2 + 1.2) - b_1^2)^2/2)}, the "2D correlated
#'   distribution" of Wang, Deng and Lin (2021, section 5.1; after Simsekli et al. 2016). The paper prints the
#'   density without the exponential, i.e. it prints the log density. Exact draws: [banana_exact_draws()].
#' * `"gaussian"`: \eqn{N(\mu, \Sigma)} with `mean` \eqn{\mu} and `cov` \eqn{\Sigma} (symmetric positive
#'   definite). [sgmcmc_density()] computes the precision \eqn{\Sigma^{-1}} once per call (\eqn{d^3}
#'   flops: about 4 s at d = 3,000, 20 s at d = 5,000 on one core; Ctrl-C stops it), and every chain, the
#'   warm-up and the checks evaluate with it.
#'
#' @param name `"banana"` or `"gaussian"`.
#' @param mean,cov Mean vector and covariance matrix of `"gaussian"`.
#' @param ... Not used: any argument given here is an error naming it (`variance = ` says to give `cov`).
#' @return An object of class `sb_sgmcmc_target`.
#' @references Wang, Y., Deng, W. and Lin, G. (2021). An adaptive Hessian approximated stochastic gradient MCMC
#'   method. Journal of Computational Physics 432, 110150.
#' @export
#' @examples
#' sgmcmc_target("banana")
#' sgmcmc_target("gaussian", mean = c(0, 0), cov = diag(2))
sgmcmc_target <- function(name = c("banana", "gaussian"), mean = NULL, cov = NULL, ...) {
  if (...length()) {
    nm <- ...names()
    if (!is.null(nm) && any(nm %in% c("variance", "var", "sd", "sigma"))) {
      sb_abort(c("{.fn sgmcmc_target} has no {.arg {nm[nm %in% c('variance', 'var', 'sd', 'sigma')][1]}}: a gaussian target takes its covariance matrix as {.arg cov}.",
                 i = "For variance v in each of d dimensions give {.code cov = diag(v, d)}."),
               arg = nm[nm %in% c("variance", "var", "sd", "sigma")][1], also = "dots")
    }
    sb_check_dots(..., fn = "sgmcmc_target")
  }
  name <- sb_match_arg(name)
  if (name == "banana") {
    if (!is.null(mean) || !is.null(cov)) {
      sb_abort("The banana target has no {.arg mean} or {.arg cov}.", arg = if (!is.null(mean)) "mean" else "cov")
    }
    return(structure(list(type = "banana", name = "banana", dim = 2L, init = c(0, 0), names = c("b1", "b2")),
                     class = "sb_sgmcmc_target"))
  }
  if (!is.numeric(mean) || !length(mean) || any(!is.finite(mean))) {
    sb_abort(c("{.arg mean} must be a vector of finite numbers.", x = "You supplied {.obj_type_friendly {mean}}."),
             arg = "mean")
  }
  d <- length(mean)
  if (!is.numeric(cov) || !is.matrix(cov) || any(dim(cov) != d) || any(!is.finite(cov))) {
    sb_abort(c("{.arg cov} must be a {d} x {d} matrix of finite numbers (one row and column per entry of {.arg mean}).",
               x = "You supplied {.obj_type_friendly {cov}}{if (is.matrix(cov)) paste0(' of dimension ', nrow(cov), ' x ', ncol(cov)) else ''}."),
             arg = "cov")
  }
  if (max(abs(cov - t(cov))) > 1e-10 * (1 + max(abs(cov)))) {
    sb_abort("{.arg cov} must be symmetric.", arg = "cov")
  }
  check_cov_pd(cov)
  structure(list(type = "gaussian", name = "gaussian", dim = d, init = as.double(mean), mean = as.double(mean),
                 cov = matrix(as.double(cov), d, d), names = names(mean)), class = "sb_sgmcmc_target")
}

# Positive definiteness of a covariance by a Cholesky factorization (d^3 / 3 flops; an eigendecomposition costs
# several times that and cannot be interrupted for minutes at d = 5,000) of its correlation form
# D^-1/2 cov D^-1/2, so that the scale of a variable does not decide: diag(c(1e300, 1)) is fine. A pivot of the
# correlation form below 1e-12 (the conditional variance of a variable given the earlier ones, relative to its
# own) is refused as numerically singular, as the engine's solve would be meaningless there.
check_cov_pd <- function(cov, arg = "cov", call = rlang::caller_env()) {
  v <- diag(cov)
  if (any(v <= 0)) {
    j <- which(v <= 0)[1]
    sb_abort(c("{.arg {arg}} must be positive definite.", x = "Its diagonal entry {j} is {format(v[j])}: a variance must be positive."),
             arg = arg, call = call)
  }
  s <- 1 / sqrt(v)
  r <- cov * outer(s, s)
  R <- tryCatch(chol(r), error = function(e) NULL)
  piv <- if (is.null(R)) NA_real_ else diag(R)^2
  if (is.null(R) || min(piv) < 1e-12) {
    k <- if (is.null(R)) NA else which.min(piv)
    sb_abort(c("{.arg {arg}} must be positive definite.",
               x = if (is.null(R)) "Its Cholesky factorization fails: a variable is (or is beyond) a linear combination of the others."
                   else "Variable {k} is a linear combination of the earlier ones to within 1e-12 of its variance (numerically singular).",
               i = "Use a full-rank covariance (e.g. add a small multiple of the identity)."),
             arg = arg, call = call)
  }
  invisible(cov)
}

#' @export
print.sb_sgmcmc_target <- function(x, ...) {
  if (x$type == "banana") cat("<sb_sgmcmc_target> banana: log p(b) = -b1^4/10 - (4 (b2 + 1.2) - b1^2)^2/2\n")
  else cat(sprintf("<sb_sgmcmc_target> gaussian in %d dimension%s\n", x$dim, if (x$dim > 1) "s" else ""))
  invisible(x)
}

#' Exact draws of the banana target
#'
#' Independent draws of the banana target of [sgmcmc_target()]: \eqn{b_1} from its marginal
#' \eqn{\propto \exp(-b_1^4/10)} by inverse CDF (trapezoid rule on 20,001 points over \[-6, 6\], outside which the
#' mass is below \eqn{e^{-129}}), then \eqn{b_2 \mid b_1 \sim N(b_1^2/4 - 1.2, 1/16)}.
#' @param n Number of draws.
#' @param seed Seed (`NULL`: drawn from R's RNG).
#' @return An n x 2 matrix with columns `b1`, `b2`.
#' @export
#' @examples
#' x <- banana_exact_draws(1000, seed = 1)
#' colMeans(x)
banana_exact_draws <- function(n, seed = NULL) {
  n <- check_count(n, min = 0L)
  seed <- resolve_seed(seed)
  out <- cpp_banana_exact(n, seed)
  colnames(out) <- c("b1", "b2")
  out
}

#' @export
nobs.sb_sgmcmc_density <- function(object, ...) {
  if (!is.null(object$settings$nobs)) return(object$settings$nobs)  # a model of sgmcmc_model(): its rows
  sb_not_applicable(c("A density target has no data: there are no observations to count.",
                      i = "{.fn ndraws} counts the draws."), call = rlang::current_env())
}

#' @export
predict.sb_sgmcmc_density <- function(object, ...) {
  sb_not_applicable(c("A density target has no data, so there is nothing to predict.",
                      i = "Use {.fn as.matrix} for the draws, {.fn coef} / {.fn summary} for posterior summaries, or apply your function to the draws."),
                    call = rlang::current_env())
}
