#' Tuning knobs for the SG-MCMC samplers
#'
#' `sgmcmc_control()` collects the settings of [sgld_sa()], [hamcmc_sa()] and [sgmcmc_density()] in three parts,
#' so that each sampler and prior shows only its own knobs:
#'
#' * the step ([sgmcmc_step()]: learning-rate schedule, temperature and annealing, SGHMC / SGNHT friction), for
#'   every sampler;
#' * the spike-and-slab group lasso prior ([sgmcmc_ssgl()]: its hyperparameters, the stochastic approximation (SA)
#'   of its latent variables, magnitude pruning), for [sgld_sa()] and [hamcmc_sa()] (the targets of
#'   [sgmcmc_density()] have no prior);
#' * the L-BFGS preconditioner ([sgmcmc_lbfgs()]), for the preconditioned samplers (`"hamcmc_sa"`, `"hamcmc"`).
#'
#' The step size itself, the most used knob, and the settings of the run (trace cadence, starting values,
#' precision, divergence rule) stay here. Every value is validated once, by the constructor of its part.
#'
#' @section Deprecated flat names: Up to version 0.1.0 every setting was an argument of `sgmcmc_control()`
#'   (`sgmcmc_control(sa_A = 10, memory = 3)`). Those names still work for one release: each is moved into its
#'   part, with a warning of class `scalebayes_warning_deprecated` that gives the new spelling
#'   (`sgmcmc_control(ssgl = sgmcmc_ssgl(sa_A = 10), lbfgs = sgmcmc_lbfgs(memory = 3))`). Giving a setting both
#'   ways is an error. The step's settings lost their prefix in [sgmcmc_step()]: `step_schedule` is
#'   `schedule`, `step_power` `power`, `step_decay` `decay`, `step_milestones` `milestones`.
#'
#' @param step_size \eqn{\epsilon_0 > 0}, on the scale of the summed log-posterior (the papers' scale: the
#'   minibatch gradient is multiplied by N / n), or `"auto"`: a warm-up chooses it for the model at hand (see
#'   "Step-size warm-up" in [sgld_sa()]). For SGHMC this is the learning rate \eqn{\eta}. `NULL` (default):
#'   `"auto"` for every front end: regression ([sgld_sa()], [hamcmc_sa()]), networks (a warm-up scored by
#'   the pilots' training loss, see [sgld_sa()], "Networks") and [sgmcmc_density()]. A given step switches
#'   the warm-up off (`0` freezes the parameters, which the tests use to check the latent-variable updates
#'   alone).
#' @param step The step's schedule, temperature and friction: [sgmcmc_step()], a named list of its arguments, or
#'   `NULL` (its defaults).
#' @param ssgl The SSGL prior, its SA and pruning: [sgmcmc_ssgl()], a named list of its arguments, or `NULL`.
#' @param lbfgs The L-BFGS preconditioner of HAMCMC-SA / HAMCMC: [sgmcmc_lbfgs()], a named list of its
#'   arguments, or `NULL`.
#' @param trace_every Record the traces (sigma, delta, mean rho, full-data log-likelihood) every this many
#'   iterations (`NULL`: about 1000 points).
#' @param init Initial coefficients: `NULL` (slopes zero; the intercept, if any, at its maximum-likelihood value
#'   given zero slopes: `mean(y)` for `"gaussian"`, the logit of the share of ones for `"binomial"`, the log of the mean count for `"poisson"`), a vector in the order of [coef()] (intercept first), or a
#'   matrix with one column per chain. For a network ([sgld_sa()] with a `model`): `NULL` (PyTorch's default
#'   initialization from the chain's random stream), a vector of all its parameters (the order of the columns
#'   of a fit's `weights`), a matrix with one column per chain, or a network fit of the same architecture to
#'   continue from (fine-tuning a pre-trained network, as the pruning runs of Deng et al. do): an [sgld_sa()]
#'   fit starts chain `c` from the final state of its chain `c` (recycled), a [wbb_nn()] fit with its kept
#'   draws (the default) from its draw `c` (recycled). Batch-normalization running statistics are not
#'   parameters and start afresh.
#' @param float64 Networks ([sgld_sa()] with a `model`): run the network in double precision (default single,
#'   as deep-learning libraries do).
#' @param diverge_loss The loss rule of divergence, for networks and regressions. A chain whose training loss
#'   per example (a network: the mean over the minibatches since the last trace point; a regression: on the
#'   full data at the trace point, half the mean squared residual for gaussian, and after the burn-in only,
#'   since a preconditioned chain may make a transient excursion while its curvature memory is young and come
#'   back) is not finite, or exceeds `diverge_loss` times the larger of the lowest such
#'   loss it reached before (counting the loss where the chain starts: a zero output for a network, the
#'   initial coefficients for a regression, so that a chain that explodes before its first trace point is
#'   caught there) and the loss of the best constant
#'   prediction (half the response variance for a
#'   gaussian network, the entropy of the class frequencies for a classifier), stops and is reported as
#'   diverged, as a chain with a non-finite state is (see "Divergence" in [sgld_sa()]). `Inf` keeps only the
#'   non-finite rule.
#' @param ... The deprecated flat names of the parts' settings (see "Deprecated flat names"). Any other name is an
#'   error that names it and the closest setting, with the part it belongs to.
#' @return A list of class `sb_sgmcmc_control`: every setting by its flat name (the names of "Deprecated flat
#'   names"), which is what the samplers read. Attribute `given` names the settings set to other than their
#'   default: [print()] marks them, and a sampler that does not read one of them (the L-BFGS part without a
#'   preconditioner, `friction` without a momentum, `noise_estimate` other than for SGHMC, the SSGL part for
#'   [sgmcmc_density()], the cyclical schedule's `cycles`, `explore` and `explore_noise` with another schedule)
#'   warns with class `scalebayes_warning_unused`.
#' @seealso [sgmcmc_step()], [sgmcmc_ssgl()], [sgmcmc_lbfgs()].
#' @export
#' @examples
#' sgmcmc_control(step_size = 1e-3, ssgl = sgmcmc_ssgl(sa_A = 10))
#' # HAMCMC-SA with a longer L-BFGS memory and a constant step
#' sgmcmc_control(step_size = 1e-4, step = sgmcmc_step(schedule = "constant"),
#'                lbfgs = sgmcmc_lbfgs(memory = 5))
sgmcmc_control <- function(step_size = NULL, step = sgmcmc_step(), ssgl = sgmcmc_ssgl(), lbfgs = sgmcmc_lbfgs(),
                           trace_every = NULL, init = NULL, float64 = FALSE, diverge_loss = 10, ...) {
  parts <- list(step = step, ssgl = ssgl, lbfgs = lbfgs)
  for (p in names(parts)) parts[[p]] <- sgmcmc_as_part(parts[[p]], p)
  moved <- sgmcmc_dots_settings(list(...), ...names())
  if (length(moved)) parts <- sgmcmc_move_flat(parts, moved)
  out <- c(
    list(step_size = if (identical(step_size, "auto")) "auto" else
      check_number(step_size, lower = 0, upper = Inf, upper_open = TRUE, allow_null = TRUE,
                   what = "a number >= 0 or \"auto\"")),
    unclass(parts$step), unclass(parts$ssgl), unclass(parts$lbfgs),
    list(
      trace_every = check_count(trace_every, allow_null = TRUE),
      init = init,
      float64 = check_flag(float64),
      diverge_loss = if (identical(diverge_loss, Inf)) Inf else
        check_number(diverge_loss, lower = 1, lower_open = TRUE, what = "a number > 1, or Inf (the non-finite rule only)")
    )
  )
  if (!is.null(init) && !inherits(init, "sb_nn_fit") && (!is.numeric(init) || any(!is.finite(init)))) {
    sb_abort(c("{.arg init} must be NULL, a numeric vector / matrix of finite values, or a network fit.",
               x = "You supplied {.obj_type_friendly {init}}."), arg = "init")
  }
  given <- c(if (!is.null(step_size)) "step_size", unlist(lapply(parts, attr, "given"), use.names = FALSE),
             c("trace_every", "init", "float64", "diverge_loss")[c(!is.null(trace_every), !is.null(init),
                                                                  out$float64, out$diverge_loss != 10)])
  structure(out, given = given, class = "sb_sgmcmc_control")
}

# The choices of the options whose default is not a vector of them (the engine's tables, sgmcmc/schedules.hpp,
# steps.hpp, lbfgs.hpp: test-enum-names.R checks they agree).
sgmcmc_step_schedules <- c("polynomial", "constant", "stepwise", "cyclical")
sgmcmc_rmsprop_adapts <- c("burnin", "always")
sgmcmc_sa_forms <- c("matrix", "diagonal", "lowrank")

#' The step of an SG-MCMC sampler: schedule, temperature, annealing, friction
#'
#' The `step` part of [sgmcmc_control()], for every sampler. The step size itself is
#' `sgmcmc_control(step_size = )`.
#'
#' @param schedule Learning-rate schedule \eqn{\epsilon_k}: `"polynomial"` (\eqn{\epsilon_0 k^{-\gamma}},
#'   the paper's \eqn{0.001 k^{-1/3}}), `"constant"` (\eqn{\epsilon_0}) or `"stepwise"`
#'   (\eqn{\epsilon_0} times `decay` to the number of `milestones` passed). `NULL` (default):
#'   `"constant"` when the step is chosen by the warm-up (`step_size = "auto"`) -- for regression, densities and
#'   HAMCMC-SA networks; a network's warm-up step decays polynomially for the other samplers (with a constant
#'   step one of 4 SGLD-SA chains on raw Boston diverged at the warm-up's smallest step) -- and
#'   `"polynomial"` when a step is given.
#'   `"cyclical"`: cyclical SG-MCMC (Zhang, Li, Zhang, Chen & Wilson 2020) for any sampler (cSGLD with
#'   `sampler = "sgld"`, cSGHMC with `"sghmc"`): `cycles` cosine cycles over the run, \eqn{\epsilon_k =
#'   \epsilon_0 / 2 (\cos(\pi t_k) + 1)} with \eqn{t_k \in [0, 1)} the position of iteration k in its cycle; the
#'   first `explore` of each cycle is an exploration stage run at zero temperature (the step without its noise:
#'   SGD, or SGD with momentum) whose iterations are not kept, the rest a sampling stage whose draws are kept
#'   (after `burnin`, every `thin`-th). The large steps at the start of each cycle carry the chain between the
#'   modes of a multimodal posterior that a small constant step stays in (measured in `inst/design-sgmcmc.md`,
#'   "Cyclical SG-MCMC"). With `step_size = "auto"` the warm-up's pilots run the cyclical schedule and its
#'   accuracy cap bounds the peak \eqn{\epsilon_0}; give `step_size` (the peak) for steps large enough to leave
#'   a mode. `burnin = 0` keeps every cycle's sampling stage.
#' @param cycles,explore The cyclical schedule's number of cycles \eqn{M \ge 1} (at most the run's iterations;
#'   default 4) and the exploration stage's share \eqn{\beta \in [0, 1)} of each cycle (default 0.25; 0: every
#'   iteration samples).
#' @param explore_noise Cyclical schedule: `FALSE` (default) runs the exploration stage at zero temperature (no
#'   injected noise, as Zhang et al. 2020 do: an optimizer's steps toward a mode); `TRUE` keeps the step's noise
#'   there. Either way the exploration stage keeps no draws.
#' @param power \eqn{\gamma \ge 0} of the polynomial schedule.
#' @param decay,milestones Factor and iterations of the stepwise schedule.
#' @param temperature Inverse temperature \eqn{\tau_0} (target \eqn{e^{\tau L(\beta)}}), at least 1e-8 (the
#'   spread of the draws grows as \eqn{1/\sqrt{\tau}}: 1e-300 would give draws of about 1e150).
#' @param anneal Ratio \eqn{r} of simulated annealing \eqn{\tau_k = \tau_0 r^k} (1 = none; the paper's "A-"
#'   variants use e.g. 1.003). [sgld_sa()] checks it against the run length: a ratio that would drive
#'   \eqn{\tau} past 1e300 (or below 1e-300) by the last iteration (past the float32 range, 3.4e38, for a
#'   network trained in single precision) is an error that names the largest (smallest) ratio the run allows;
#'   the schedule is never capped silently.
#' @param anneal_every Iterations between multiplications of \eqn{\tau} by `anneal`: \eqn{\tau_k = \tau_0
#'   r^{\lfloor k / m \rfloor}}. 1 (default) anneals every iteration; one epoch (`ceiling(n / batch_size)`) gives
#'   the paper's per-epoch rule for networks ("multiply tau by 1.005 every epoch").
#' @param friction,noise_estimate SGHMC friction (momentum decay) \eqn{\alpha \in (0, 1]} and gradient-noise
#'   estimate \eqn{\hat\beta \in [0, \alpha)}. For SGNHT (`sampler = "sgnht"`) `friction` is the diffusion
#'   \eqn{a} of the injected noise and the thermostat's start \eqn{\xi_0}; `noise_estimate` does not apply
#'   (the thermostat absorbs the minibatch noise). SGLD and the preconditioned samplers have no friction.
#' @param metric The fixed preconditioner ("metric", Stan's inverse mass matrix) \eqn{M} of SGLD, SGHMC and
#'   SGNHT for a regression ([sgld_sa()]) whose step the warm-up chooses (`step_size = "auto"`): `"none"`
#'   (default: the samplers of the papers, each coordinate moved by the same step), `"auto"` (`"dense"` up to
#'   200 coefficients, else `"diagonal"`), `"dense"` or `"diagonal"`. With a metric the step is
#'   \eqn{\theta \leftarrow \theta + \epsilon M g + N(0, 2 \epsilon M / \tau)} (SGLD; SGHMC and SGNHT move
#'   their momentum in the coordinates \eqn{L^{-1}\theta}, \eqn{M = L L'}): a constant \eqn{M} leaves the
#'   target unchanged and makes one step suit every coordinate, however the posterior is scaled and correlated.
#'   The warm-up then adapts \eqn{M} from two pilots, chooses the step in the whitened coordinates, starts the
#'   chains at the cross-validated lasso (for `method = "sa"` / `"em"`) and at draws of its last pilot, with
#'   the latent variables where that pilot's SA left them (see "Step-size warm-up" in [sgld_sa()]). Measured
#'   on diabetes (`batch_size = 442`, `v0 = 0.0095`): 0.5 s for the whole call against 46-50 s with the
#'   default. pSGLD reads it too: its RMSprop diagonal then adapts in the whitened coordinates (the kept draws
#'   are SGLD with the constant metric \eqn{L P L'}). HAMCMC-SA and HAMCMC keep their own L-BFGS preconditioner
#'   and read no metric; on a full-data target of [sgmcmc_density()] this setting chooses instead the Laplace
#'   whitening they run on (\eqn{\theta = \hat\theta + L\phi}, \eqn{L L'} the inverse Hessian at the
#'   mode; `"none"`: the raw parameters).
#' @param rmsprop_alpha,rmsprop_lambda,rmsprop_adapt pSGLD (`sampler = "psgld"`, Li, Chen, Carlson & Carin
#'   2016): the RMSprop diagonal preconditioner \eqn{G = 1 / (\lambda + \sqrt{V})}, \eqn{V} the moving average
#'   of the squared mean gradient per example with weight `rmsprop_alpha` \eqn{\alpha \in (0, 1)} on the past
#'   (default 0.99) and `rmsprop_lambda` \eqn{\lambda > 0} (default 1e-5, Li et al.'s). The step is
#'   \eqn{\theta \leftarrow \theta + \epsilon G \bar g + N(0, 2 \epsilon G / (N \tau))}, \eqn{\bar g} the
#'   mean posterior gradient per example, so `step_size` is RMSprop's learning rate (early steps move each
#'   coordinate by about \eqn{\epsilon}). `rmsprop_adapt`: `"burnin"` (default) adapts \eqn{V} during the
#'   burn-in only and holds \eqn{G} fixed for the kept draws, which are then SGLD with a constant diagonal
#'   preconditioner: its correction term \eqn{\Gamma} is exactly 0 and the target is exact (up to the step's
#'   discretization); `"always"` keeps adapting, Li et al.'s algorithm with their approximation
#'   \eqn{\Gamma \approx 0}, which biases the draws (measured in `inst/design-sgmcmc.md`, "pSGLD"). With the
#'   warm-up's `metric` (regressions and full-data densities) the recursion runs on the whitened gradient
#'   \eqn{L'g}; without one (networks, a given `step_size`) it is Li et al.'s, its preconditioner adapted by the
#'   chain alone.
#' @param gradient The minibatch gradient of a regression ([sgld_sa()], [hamcmc_sa()]): `"auto"` (default:
#'   control variates for SGLD, SGHMC and SGNHT when the warm-up chooses the step and the minibatch is smaller
#'   than the data, which the default `batch_size` is above 2,000 rows of a logistic regression (a gaussian
#'   regression with at most N / 2 coefficients gets every row, its exact gradient from the Gram matrix
#'   \eqn{X'X} in O(P^2), cheaper than a minibatch; see `batch_size` in [sgld_sa()]); HAMCMC-SA and HAMCMC keep full-data
#'   gradients up to 10,000 rows, their curvature pairs being noisier on small minibatches: ames, 2,344 rows,
#'   28 s and a bulk ESS of 71 with 389-row control-variate minibatches, 9.5 s with every row),
#'   `"control_variate"` (any sampler, also with a given step) or
#'   `"minibatch"` (the plain estimate \eqn{(N/n)\sum_B g_i}, the papers'). Both need fewer coefficients
#'   than rows. With control variates and no `batch_size` given the minibatch is chosen from their measured
#'   noise (32 to 1,000 rows). Control variates (Baker, Fearnhead, Fox & Nemeth 2019, "SGLD-CV") find a centre
#'   \eqn{\hat\beta} first (the mode of the likelihood with a N(0, 1) ridge on the standardized slopes, by
#'   Newton's method), compute the full-data gradient there once, and estimate each minibatch's gradient as
#'   \eqn{\nabla\log p(\hat\beta \mid y) + (N/n)\sum_B (g_i(\beta) - g_i(\hat\beta))}: unbiased like the
#'   plain one, with a variance that shrinks with \eqn{\|\beta - \hat\beta\|^2}, about the posterior's
#'   variance, instead of \eqn{N^2/n}. They help where the posterior is concentrated (many rows, a unimodal
#'   posterior near its mode's Gaussian); they cost one Newton fit (a few full-data passes) and one more pass
#'   for the centre's gradient. Networks and [sgmcmc_density()] targets use plain minibatches. Measured in
#'   `bench/sgmcmc_scale.R` (see the "Scale" section of [sgld_sa()]).
#' @param ... Nothing: a name that is not one of the settings above is an error that names it and the closest
#'   setting.
#' @return A list of class `sb_sgmcmc_step`, to give as `sgmcmc_control(step = )`.
#' @export
#' @examples
#' sgmcmc_control(step_size = 1e-3, step = sgmcmc_step(schedule = "constant", temperature = 2))
sgmcmc_step <- function(schedule = NULL, power = 1 / 3, decay = 0.1, milestones = numeric(), temperature = 1,
                        anneal = 1, anneal_every = 1, friction = 0.1, noise_estimate = 0, metric = "auto",
                        gradient = "auto", rmsprop_alpha = 0.99, rmsprop_lambda = 1e-5, rmsprop_adapt = "burnin",
                        cycles = 4, explore = 0.25, explore_noise = FALSE, ...) {
  check_unknown_args(...names(), ...length(), "sgmcmc_step")
  metric <- sb_match_arg(metric, c("auto", "dense", "diagonal", "none"))
  rmsprop_adapt <- sb_match_arg(rmsprop_adapt, sgmcmc_rmsprop_adapts)
  gradient <- sb_match_arg(gradient, c("auto", "control_variate", "minibatch"))
  if (!is.null(schedule)) schedule <- sb_match_arg(schedule, sgmcmc_step_schedules)
  out <- list(
    step_schedule = schedule,
    cycles = check_count(cycles),
    explore = check_number(explore, lower = 0, upper = 1, upper_open = TRUE),
    explore_noise = check_flag(explore_noise),
    step_power = check_number(power, lower = 0, upper = 10),
    step_decay = check_number(decay, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    step_milestones = check_milestones(milestones),
    temperature = check_temperature(temperature),
    anneal = check_number(anneal, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    anneal_every = check_count(anneal_every),
    friction = check_number(friction, lower = 0, lower_open = TRUE, upper = 1),
    noise_estimate = check_number(noise_estimate, lower = 0, upper = 1),
    metric = metric,
    gradient = gradient,
    rmsprop_alpha = check_number(rmsprop_alpha, lower = 0, lower_open = TRUE, upper = 1, upper_open = TRUE),
    rmsprop_lambda = check_number(rmsprop_lambda, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    rmsprop_adapt = rmsprop_adapt
  )
  if (out$noise_estimate >= out$friction) {
    sb_abort(c("{.arg noise_estimate} must be smaller than {.arg friction}.",
               x = "You supplied noise_estimate = {out$noise_estimate} and friction = {out$friction}."),
             arg = "noise_estimate")
  }
  new_sgmcmc_part(out, "step", sgmcmc_given_args(match.call()))
}

#' The spike-and-slab group lasso prior of SGLD-SA: hyperparameters, SA of its latent variables, pruning
#'
#' The `ssgl` part of [sgmcmc_control()], for [sgld_sa()] and [hamcmc_sa()] (regressions and networks). The
#' spike and slab scales themselves (`v0`, `v1`) and the choice of SA, EM or a frozen prior (`method`) are
#' arguments of [sgld_sa()].
#'
#' @param sa_A,sa_Z,sa_alpha,sa_cap SA step \eqn{\omega_k = \min(c, A (k + Z)^{-\alpha})} with cap
#'   \eqn{c} = `sa_cap` in (0, 1]; paper: 10, 1000, 0.7, 1. The authors' simulation code used
#'   \eqn{\min(0.1, 1000 (k + 100)^{-0.7})} (`sa_A = 1000, sa_Z = 100, sa_cap = 0.1`), a constant 0.1 for
#'   the first 518 000 iterations (see `vignette("sgld-sa")`).
#' @param a,b Beta prior of \eqn{\delta}; `b = NULL` means the number of sparse coefficients p (paper).
#' @param nu,lambda Inverse-gamma prior \eqn{IG(\nu/2, \nu\lambda/2)} of \eqn{\sigma^2}.
#' @param prior_var Variance \eqn{\sigma_0^2} of the Gaussian prior of the non-sparse coefficients (intercept
#'   included).
#' @param sigma_init,delta_init,rho_init Initial \eqn{\sigma}, \eqn{\delta} and \eqn{\rho_j}
#'   (`rho_init = NULL` means `delta_init`). With `method = "none"` they stay fixed.
#' @param kappa0_init,kappa1_init Initial \eqn{\kappa_{0j}} and \eqn{\kappa_{1j}} (numbers \eqn{\ge 0}),
#'   the weights of the L1 and L2 parts of the prior, \eqn{-\kappa_{0j}|\beta_j|/\sigma -
#'   \kappa_{1j}\beta_j^2/(2\sigma^2)}. `NULL` (default): for `method = "sa"` and `"em"` the values implied by
#'   \eqn{\rho} (\eqn{(1-\rho_j)/v_0} and \eqn{\rho_j/v_1}); for `method = "none"` 1 and 1, the frozen prior of
#'   the authors' plain-SGLD baseline (Laplace\eqn{(0, \sigma)} times \eqn{N(0, \sigma^2)}, independent of
#'   \eqn{v_0} and \eqn{v_1}). With `method = "none"` they stay fixed.
#' @param sa_start Warm-up: the latent variables stay at their initial values for the first `sa_start`
#'   iterations and the SA steps \eqn{\omega_1, \omega_2, \dots} start after it (default 1: SA from the
#'   second iteration, as in Algorithm 1). A warm-up of a few hundred iterations lets \eqn{\beta} move away from
#'   its zero start before \eqn{\rho} and \eqn{\delta} adapt, which avoids the absorbing "everything in
#'   the spike" state on small problems.
#' @param fixed_sigma Keep \eqn{\sigma} at `sigma_init` while the other latent variables adapt. Not given,
#'   [sgld_sa()] holds it for a gaussian regression with at least as many coefficients as rows, at the
#'   cross-validated lasso's residual sd (see `v0` in [sgld_sa()]).
#' @param likelihood_sd Gaussian family: fix the likelihood's noise standard deviation at this value while
#'   \eqn{\sigma} of the SSGL prior is still adapted. `NULL` (default, the method): the likelihood's variance is
#'   \eqn{\sigma^2}. The authors' UCI code (Table 5) uses the squared-error sum, i.e. `likelihood_sd = sqrt(1/2)`.
#' @param prune,prune_S,prune_D,prune_U Magnitude pruning of the sparse coefficients to the sparse rate
#'   \eqn{s_k = S(1 - D^{k/U})} (Algorithm 1); pruned weights may regrow. Off by default. In a network the
#'   SA's Beta(a, b = p) prior of \eqn{\delta} puts every weight in the spike (mean inclusion about 0), so
#'   \eqn{\rho} does not select weights there; the magnitude pruning does, as in the paper's pruning study. It
#'   is not the default because it costs accuracy on MNIST: measured with every other default
#'   (`bench/sgmcmc_nn_prune.R`, 2,000 digits, `nn_mlp()`, SGLD-SA), held-out accuracy 0.912 unpruned, 0.862 at
#'   `prune_S = 0.5` (43 % of the weights zero after 10,000 iterations; 0.870 continuing from the unpruned fit
#'   with `sgmcmc_control(init = fit)`), 0.556 at `prune_S = 0.9` (78 %; 0.855 with the output layer left
#'   dense), binomial se 0.009-0.016. On raw Boston it helps: held-out RMSE 3.71-4.01 unpruned, 3.58-3.72 at
#'   `prune_S = 0.9` (3 seeds). Check the held-out accuracy of a pruned fit.
#' @inheritParams sgmcmc_step
#' @return A list of class `sb_sgmcmc_ssgl`, to give as `sgmcmc_control(ssgl = )`.
#' @export
#' @examples
#' # the SA step of the authors' simulation code
#' sgmcmc_control(ssgl = sgmcmc_ssgl(sa_A = 1000, sa_Z = 100, sa_cap = 0.1))
sgmcmc_ssgl <- function(sa_A = 10, sa_Z = 1000, sa_alpha = 0.7, sa_cap = 1, a = 1, b = NULL, nu = 1, lambda = 1,
                        prior_var = 1e4, sigma_init = 1, delta_init = 0.5, rho_init = NULL, kappa0_init = NULL,
                        kappa1_init = NULL, sa_start = 1, fixed_sigma = FALSE, likelihood_sd = NULL, prune = FALSE,
                        prune_S = 0.9, prune_D = 0.99, prune_U = 50, ...) {
  check_unknown_args(...names(), ...length(), "sgmcmc_ssgl")
  out <- list(
    sa_A = check_number(sa_A, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    sa_Z = check_number(sa_Z, lower = 0, upper = Inf, upper_open = TRUE),
    sa_alpha = check_number(sa_alpha, lower = 0, lower_open = TRUE, upper = 1),
    sa_cap = check_number(sa_cap, lower = 0, lower_open = TRUE, upper = 1),
    a = check_number(a, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    b = check_number(b, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE, allow_null = TRUE),
    nu = check_number(nu, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    lambda = check_number(lambda, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    prior_var = check_number(prior_var, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    sigma_init = check_number(sigma_init, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    delta_init = check_number(delta_init, lower = 0, lower_open = TRUE, upper = 1, upper_open = TRUE),
    rho_init = check_number(rho_init, lower = 0, upper = 1, allow_null = TRUE),
    kappa0_init = check_number(kappa0_init, lower = 0, upper = Inf, upper_open = TRUE, allow_null = TRUE),
    kappa1_init = check_number(kappa1_init, lower = 0, upper = Inf, upper_open = TRUE, allow_null = TRUE),
    sa_start = check_count(sa_start),
    fixed_sigma = check_flag(fixed_sigma),
    likelihood_sd = check_number(likelihood_sd, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE,
                                 allow_null = TRUE),
    prune = check_flag(prune),
    prune_S = check_number(prune_S, lower = 0, upper = 1, upper_open = TRUE),
    prune_D = check_number(prune_D, lower = 0, lower_open = TRUE, upper = 1, upper_open = TRUE),
    prune_U = check_number(prune_U, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE)
  )
  new_sgmcmc_part(out, "ssgl", sgmcmc_given_args(match.call()))
}

#' The L-BFGS preconditioner of HAMCMC-SA and HAMCMC
#'
#' The `lbfgs` part of [sgmcmc_control()], for the preconditioned samplers ([hamcmc_sa()], or [sgld_sa()] with
#' `sampler = "hamcmc_sa"` or `"hamcmc"`).
#'
#' @param memory The L-BFGS memory M, a whole number \eqn{\ge 1} (HAMCMC: \eqn{\ge 2}; it keeps 2M - 1 samples
#'   and 2M - 3 curvature pairs). Default 2.
#' @param precond_A,precond_Z,precond_alpha SA step of the preconditioner (HAMCMC-SA, eq. 15 of Wang, Deng & Lin
#'   2021): \eqn{\omega_k = \min(1, A (k + Z)^{-\alpha})}; default 2, 50, 0.75, the paper's regression setting
#'   \eqn{2 (50 + k)^{-0.75}}.
#' @param damping_r Damping constant \eqn{r \in (0, 1)}: a curvature pair with \eqn{s'y < r s'B_0 s} is
#'   damped so that \eqn{s'\bar y = r s'B_0 s} (Powell's, the paper's), and one with
#'   \eqn{\bar y'\bar y > (\gamma / r) s'\bar y} further, so that equality holds (a safeguard, not in the
#'   paper: a long \eqn{y} nearly orthogonal to \eqn{s} otherwise gives the inverse Hessian an unbounded
#'   eigenvalue; measured on a network, see [hamcmc_sa()]). Default 0.2.
#' @param gamma_min Lower bound \eqn{\delta > 0} of the initial Hessian scale \eqn{\gamma = \max(y'y/s'y, \delta)}
#'   (\eqn{B_0 = \gamma I}); also the scale of the empty memory (\eqn{\tilde G = I/\delta}). Default 1 (the paper's).
#' @param sa_form How HAMCMC-SA forms \eqn{G_k g_k} and \eqn{S_k z_k}: `NULL` (default): `"matrix"` for at
#'   most 20 parameters (its cost per iteration grows with the cube of their number), else `"diagonal"`; `"matrix"` (the dense \eqn{G_k} of the
#'   paper's section 4 and \eqn{S_k} its Cholesky factor; regression with at most 2,000 coefficients),
#'   `"diagonal"` (linear in the number of parameters: the exact diagonal of \eqn{G_k}, with
#'   \eqn{\mathrm{diag}(\tilde G_k)} from the memory; the off-diagonal part is dropped), `"lowrank"` (linear:
#'   the `sa_memories` newest memories kept whole, older ones by their exact diagonal, noise with exactly the
#'   preconditioner's covariance). See [hamcmc_sa()] for what each samples. `"transport"` (line 4 of Algorithm 2
#'   as printed) was removed: its noise error accumulated over about \eqn{1/\omega_k} iterations and made chains
#'   drift; asking for it is an error (class `scalebayes_error_removed`) that points to `"lowrank"`.
#' @param sa_memories `sa_form = "lowrank"`: K, the number of the newest L-BFGS memories (one per iteration) kept
#'   whole in \eqn{G_k}; older memories and \eqn{G_1} (see `precond_init`) enter by their exact diagonal. Each costs two
#'   applications of a memory and one normal vector per parameter per iteration. Default 4.
#' @param normalize Use the unit-length directions \eqn{G_k g_k / \|G_k g_k\|} and \eqn{S_k z_k / \|S_k z_k\|}
#'   (lines 7-8 of Algorithm 2 as printed). Default `FALSE`.
#' @param curvature Gradient difference of a curvature pair: `"same_batch"` (default; the second gradient on the
#'   same minibatch, online L-BFGS: two gradients per iteration) or `"consecutive"` (gradients of consecutive
#'   iterations on their own minibatches: one gradient per iteration). HAMCMC: `"same_batch"` evaluates every
#'   sample of its memory on the current minibatch (2M - 1 gradients per iteration), `"consecutive"` uses the
#'   gradient each sample got on the next iteration's minibatch (experimental: the pairs are dominated by
#'   minibatch noise).
#' @param precond_init HAMCMC-SA's starting preconditioner \eqn{G_1}: `"curvature"` (default; a deviation
#'   from Algorithm 2) \eqn{G_1 = I/\gamma_1}, the L-BFGS scale \eqn{\gamma_1 = y'y/s'y} of one probe pair at
#'   the starting point on the first minibatch (a small random perturbation, one extra gradient), which is the
#'   memory's own starting matrix and its first pair, so \eqn{G_k} has one scale from the first iteration; or
#'   `"identity"` (\eqn{G_1 = I}, Algorithm 2 as printed; the paper reproductions use it). With \eqn{G_1 = I}
#'   the preconditioner's scale changes by the curvature of the summed posterior (about N times a per-example
#'   curvature) within the first hundred iterations, so no one step suits the whole chain: measured in
#'   "Starting preconditioner" of [hamcmc_sa()].
#' @inheritParams sgmcmc_step
#' @return A list of class `sb_sgmcmc_lbfgs`, to give as `sgmcmc_control(lbfgs = )`.
#' @export
#' @examples
#' sgmcmc_control(lbfgs = sgmcmc_lbfgs(memory = 5, sa_form = "lowrank"))
sgmcmc_lbfgs <- function(memory = 2, precond_A = 2, precond_Z = 50, precond_alpha = 0.75, damping_r = 0.2,
                         gamma_min = 1, sa_form = NULL, sa_memories = 4, normalize = FALSE,
                         curvature = c("same_batch", "consecutive"), precond_init = c("curvature", "identity"), ...) {
  check_unknown_args(...names(), ...length(), "sgmcmc_lbfgs")
  if (identical(sa_form, "transport")) {
    sb_abort(c("{.code sa_form = \"transport\"} was removed: its injected noise does not have the covariance of the preconditioner it applies, and its chains drifted (measured in {.help scalebayes::hamcmc_sa}).",
               i = "Use {.code sa_form = \"lowrank\"}: linear cost, the paper's SA average of the L-BFGS memories with noise of exactly its covariance; or {.code \"diagonal\"}, or {.code \"matrix\"} for at most 2,000 regression coefficients."),
             kind = "removed", also = "input", arg = "sa_form")
  }
  if (!is.null(sa_form)) sa_form <- sb_match_arg(sa_form, sgmcmc_sa_forms)
  out <- list(
    memory = check_count(memory, max = 1000L),
    precond_A = check_number(precond_A, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    precond_Z = check_number(precond_Z, lower = 0, upper = Inf, upper_open = TRUE),
    precond_alpha = check_number(precond_alpha, lower = 0, lower_open = TRUE, upper = 1),
    damping_r = check_number(damping_r, lower = 0, lower_open = TRUE, upper = 1, upper_open = TRUE),
    gamma_min = check_number(gamma_min, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE),
    sa_form = sa_form,
    sa_memories = check_count(sa_memories, max = 1000L),
    normalize = check_flag(normalize),
    curvature = sb_match_arg(curvature),
    precond_init = sb_match_arg(precond_init)
  )
  new_sgmcmc_part(out, "lbfgs", sgmcmc_given_args(match.call()))
}

# ---- The parts: names, construction, the deprecated flat names ----------------------------------------------

# Each part's arguments and the flat names they are stored under (the names the samplers and the engine glue,
# src/sgmcmc_glue.h, read; before the split they were the arguments of sgmcmc_control()). Only the step's
# arguments lost a prefix. Read from the constructors' formals, so that a new setting is added in one place.
sgmcmc_part_names <- function(part) {
  args <- setdiff(names(formals(sgmcmc_part_constructor(part))), "...")
  flat <- if (part == "step") ifelse(args %in% c("schedule", "power", "decay", "milestones"),
                                     paste0("step_", args), args) else args
  stats::setNames(flat, args)
}
sgmcmc_part_constructor <- function(part) {
  switch(part, step = sgmcmc_step, ssgl = sgmcmc_ssgl, lbfgs = sgmcmc_lbfgs)
}
sgmcmc_part_labels <- c(step = "the step", ssgl = "the SSGL prior", lbfgs = "the L-BFGS preconditioner")

# `given`: the arguments the call supplied; those whose value is not the default's are recorded (attribute
# "given", by flat name): print() marks them and check_sgmcmc_control() warns when the sampler does not read
# them (an explicit NULL or default value is not a choice worth a warning).
new_sgmcmc_part <- function(values, part, given) {
  flat <- supplied <- unname(sgmcmc_part_names(part)[given])
  if (length(flat)) {
    defaults <- unclass(sgmcmc_part_constructor(part)())
    flat <- flat[!vapply(flat, function(f) identical(values[[f]], defaults[[f]]), logical(1))]
  }
  # (supplied: every argument the call gave, defaults included, for the deprecated flat names' "given twice")
  structure(values, given = flat, supplied = supplied, class = c(paste0("sb_sgmcmc_", part), "sb_sgmcmc_part"))
}

# The names of the arguments a call supplied (a part constructor's match.call()).
sgmcmc_given_args <- function(mc) setdiff(names(as.list(mc))[-1L], c("", "..."))

# A part as given to sgmcmc_control(): its constructor's object, or a named list of the constructor's arguments.
sgmcmc_as_part <- function(x, part, call = rlang::caller_env()) {
  cls <- paste0("sb_sgmcmc_", part)
  if (inherits(x, cls)) return(x)
  if (is.null(x)) return(sgmcmc_part_constructor(part)())
  fn <- paste0("sgmcmc_", part)
  if (is.list(x) && !inherits(x, "sb_sgmcmc_part") && (length(x) == 0L || rlang::is_named(x))) {
    return(do.call(fn, x, envir = asNamespace("scalebayes")))  # by name: its errors name the constructor
  }
  sb_abort(c("{.arg {part}} must be created by {.fn {fn}} (or be a named list of its arguments, or NULL).",
             x = "You supplied {.obj_type_friendly {x}}{if (inherits(x, 'sb_sgmcmc_part')) paste0(' (', class(x)[1], ')') else ''}."),
           arg = part, call = call)
}

# The settings that reached sgmcmc_control()'s dots: deprecated flat names, each with its part. An unnamed value
# or an unknown name is an error naming the closest setting and where it belongs.
sgmcmc_dots_settings <- function(dots, dots_names, call = rlang::caller_env()) {
  if (!length(dots)) return(list())
  nm <- if (is.null(dots_names)) rep("", length(dots)) else dots_names
  if (any(is.na(nm) | !nzchar(nm))) check_unknown_args(NULL, length(dots), "sgmcmc_control", call = call)
  flat <- unlist(lapply(names(sgmcmc_part_labels), function(p) {
    f <- sgmcmc_part_names(p)
    stats::setNames(rep(p, length(f)), f)
  }))
  bad <- setdiff(nm, names(flat))
  if (length(bad)) {
    # the closest of sgmcmc_control()'s own arguments and the parts' (by their names there), spelled as written
    own <- setdiff(names(formals(sgmcmc_control)), "...")
    short <- c(own, unlist(lapply(names(sgmcmc_part_labels), function(p) names(sgmcmc_part_names(p)))))
    spell <- c(own, unlist(lapply(names(sgmcmc_part_labels), function(p) {
      sprintf("%s = sgmcmc_%s(%s = )", p, p, names(sgmcmc_part_names(p)))
    })))
    best <- spell[which.min(utils::adist(bad[1], short, ignore.case = TRUE)[1, ])]
    sb_abort(c("{.fn sgmcmc_control} has no argument {.arg {bad[1]}}.",
               i = "Did you mean {.code {best}}? The settings are listed in {.code ?sgmcmc_control}."),
             arg = bad[1], call = call)
  }
  stats::setNames(lapply(nm, function(n) list(part = flat[[n]], value = dots[[n]])), nm)
}

# Moves deprecated flat settings into their parts (one warning that gives the new spelling). A setting given both
# flat and in its part is an error.
sgmcmc_move_flat <- function(parts, moved, call = rlang::caller_env()) {
  spell <- character()
  for (p in names(parts)) {
    mine <- Filter(function(m) m$part == p, moved)
    if (!length(mine)) next
    map <- sgmcmc_part_names(p)
    both <- intersect(names(mine), attr(parts[[p]], "supplied"))
    if (length(both)) {
      own <- names(map)[match(both[1], map)]
      sb_abort(c("{.arg {both[1]}} was given twice: as {.code sgmcmc_control({both[1]} = )} and as {.code {p} = sgmcmc_{p}({own} = )}.",
                 i = "Give it in {.fn sgmcmc_{p}} only: the flat name is deprecated."), arg = both[1], call = call)
    }
    old <- parts[[p]]
    had <- attr(old, "supplied")
    args <- stats::setNames(lapply(had, function(f) old[[f]]), names(map)[match(had, map)])
    new <- stats::setNames(lapply(mine, `[[`, "value"), names(map)[match(names(mine), map)])
    parts[[p]] <- do.call(paste0("sgmcmc_", p), c(args, new), envir = asNamespace("scalebayes"))
    spell <- c(spell, sprintf("%s = sgmcmc_%s(%s)", p, p,
                              paste(sprintf("%s = ...", c(names(args), names(new))), collapse = ", ")))
  }
  sb_warn(c("{.fn sgmcmc_control}: the flat setting{?s} {.arg {names(moved)}} {?is/are} deprecated.",
            i = "The new spelling: {.code sgmcmc_control({paste(spell, collapse = ', ')})}.",
            i = "The flat names will be removed in the next release."), kind = "deprecated", call = call)
  parts
}

# The smallest inverse temperature: the chain samples exp(tau L), whose spread grows as 1 / sqrt(tau), so a tau
# of 1e-300 gives draws of about 1e150 (and a tau below 1e-8 widens the posterior more than 10^4-fold).
min_temperature <- 1e-8

check_temperature <- function(temperature, call = rlang::caller_env()) {
  temperature <- check_number(temperature, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE, call = call)
  if (temperature < min_temperature) {
    sb_abort(c("{.arg temperature} must be at least {format(min_temperature)}.",
               x = "You supplied {format(temperature)}: the chain samples exp(temperature x log posterior), whose spread grows as 1 / sqrt(temperature) (draws of about {format(signif(1 / sqrt(temperature), 2))} times the posterior's).",
               i = "Use 1 for the posterior, or a tempered value of at least {format(min_temperature)}."),
             arg = "temperature", call = call)
  }
  temperature
}

check_milestones <- function(x, call = rlang::caller_env()) {
  if (!is.numeric(x) || any(!is.finite(x)) || any(x < 1) || any(x != round(x))) {
    sb_abort("{.arg milestones} must be a vector of whole numbers >= 1.", arg = "milestones", call = call)
  }
  as.double(sort(x))
}

# One line per setting: its argument name and value, "*" marking the ones the caller set to other than the default.
format_sgmcmc_settings <- function(values, names_shown, given) {
  v <- vapply(values, function(e) {
    if (inherits(e, "sb_nn_fit")) return(sprintf("<%s>", class(e)[1]))
    if (is.numeric(e) && length(e) > 5) return(sprintf("<%d values>", length(e)))
    if (is.null(e)) "NULL" else if (!length(e)) "(none)" else paste(format(e), collapse = ", ")
  }, character(1))
  paste0("    ", names_shown, ": ", v, ifelse(names(values) %in% given, " *", ""))
}

#' @export
print.sb_sgmcmc_control <- function(x, ...) {
  cat("<sb_sgmcmc_control>  (* not the default)\n")
  given <- attr(x, "given")
  run <- c("step_size", "trace_every", "init", "float64", "diverge_loss")
  cat("  run:\n", paste0(format_sgmcmc_settings(unclass(x)[run], run, given), "\n"), sep = "")
  for (p in names(sgmcmc_part_labels)) {
    map <- sgmcmc_part_names(p)
    cat(sprintf("  %s = sgmcmc_%s(): %s\n", p, p, sgmcmc_part_labels[[p]]),
        paste0(format_sgmcmc_settings(unclass(x)[map], names(map), given), "\n"), sep = "")
  }
  invisible(x)
}

#' @export
print.sb_sgmcmc_part <- function(x, ...) {
  p <- sub("^sb_sgmcmc_", "", class(x)[1])
  map <- sgmcmc_part_names(p)
  cat(sprintf("<sgmcmc_%s()>: %s  (* not the default)\n", p, sgmcmc_part_labels[[p]]),
      paste0(format_sgmcmc_settings(unclass(x)[map], names(map), attr(x, "given")), "\n"), sep = "")
  invisible(x)
}

# A front end's `control`: made by sgmcmc_control(); settings the caller set that the chosen sampler or target
# does not read (the L-BFGS part without a preconditioned sampler, the friction without a momentum sampler, the
# SSGL part without a prior: sgmcmc_density()) get a classed warning (kind "unused") that names them; the run
# goes on.
check_sgmcmc_control <- function(control, sampler, prior = TRUE, call = rlang::caller_env()) {
  if (!inherits(control, "sb_sgmcmc_control")) {
    sb_abort(c("{.arg control} must be created by {.fn sgmcmc_control}.",
               x = "You supplied {.obj_type_friendly {control}}."), arg = "control", call = call)
  }
  given <- attr(control, "given")
  if (!length(given)) return(invisible())
  info <- sgmcmc_sampler_info(sampler)
  groups <- list(
    list(names = sgmcmc_part_names("ssgl"), off = !prior, why = "a density target has no prior"),
    list(names = sgmcmc_part_names("lbfgs"), off = !info$preconditioned, why = "it keeps no L-BFGS preconditioner"),
    list(names = "friction", off = !info$momentum, why = "it has no momentum"),
    # a density target: the metric setting of HAMCMC-SA / HAMCMC chooses their Laplace whitening (R/sgmcmc_density.R)
    list(names = "metric", off = !info$metric && (prior || !info$preconditioned), why = "it keeps its own preconditioner"),
    list(names = c("rmsprop_alpha", "rmsprop_lambda", "rmsprop_adapt"), off = !info$rmsprop,
         why = "it adapts no RMSprop preconditioner"),
    list(names = "noise_estimate", off = !info$noise_estimate, why = "it uses no estimate of the gradient noise"))
  unused <- character(); why <- character()
  for (g in groups) {
    u <- intersect(given, g$names)
    if (g$off && length(u)) {
      unused <- c(unused, u)
      why <- c(why, g$why)
    }
  }
  if (length(unused)) {
    why <- paste(unique(why), collapse = "; ")
    many <- length(unused) > 1
    sb_warn(c("The sampler {.val {sampler}} does not use the {if (many) 'settings' else 'setting'} {.arg {unused}} of {.fn sgmcmc_control}: {if (many) 'they are' else 'it is'} ignored.",
              i = "{toupper(substr(why, 1, 1))}{substring(why, 2)}. Leave {if (many) 'them' else 'it'} out, or choose another {.arg sampler}."),
            kind = "unused")
  }
  # the cyclical schedule's settings belong to the schedule, not to a sampler
  cyc <- intersect(given, c("cycles", "explore", "explore_noise"))
  if (length(cyc) && !identical(control$step_schedule, "cyclical")) {
    many <- length(cyc) > 1
    sb_warn(c("The {if (many) 'settings' else 'setting'} {.arg {cyc}} of {.fn sgmcmc_step} {if (many) 'are' else 'is'} ignored: the step schedule is {.val {control$step_schedule %||% 'the default'}}, not {.val cyclical}.",
              i = "Use {.code sgmcmc_step(schedule = \"cyclical\")} for cyclical SG-MCMC, or leave {if (many) 'them' else 'it'} out."),
            kind = "unused")
  }
  invisible()
}

# The list the engine reads (src/sgmcmc_glue.h): the control object with its defaults resolved (b from the
# number of sparse coefficients or weights, rho from delta, kappa from `kappa_default` when not given: NaN means
# implied by rho) and the run's own settings in `...`.
sgmcmc_engine_control <- function(control, n_sparse, kappa_default, ...) {
  ctl <- unclass(control)
  attr(ctl, "given") <- NULL
  ctl$init <- NULL
  ctl$float64 <- NULL
  # a number here: the front end resolved "auto" / NULL (the warm-up's step, or a network's default in `...`)
  ctl$step_size <- if (is.numeric(control$step_size)) control$step_size else 1e-3
  ctl$step_schedule <- control$step_schedule %||% "polynomial"
  ctl$b <- control$b %||% max(1, n_sparse)
  ctl$rho_init <- control$rho_init %||% control$delta_init
  ctl$kappa0_init <- control$kappa0_init %||% kappa_default
  ctl$kappa1_init <- control$kappa1_init %||% kappa_default
  utils::modifyList(ctl, list(...))
}

# The samplers, defined once in the engine (sgmcmc/steps.hpp: sampler_table(), read through
# cpp_sgmcmc_samplers()): the engine's name, the label of a fit, whether the step is per example (the drift is
# the summed minibatch gradient with no preconditioner: the warm-up's grid and print() divide by N), whether it
# carries a momentum, whether it keeps an L-BFGS preconditioner, whether it reads the fixed metric, whether it
# adapts pSGLD's RMSprop preconditioner, whether it has a batched form, whether it reads noise_estimate, the measured per-example network rate (the default step
# is net_lr / N; the measurements are in steps.hpp) and, for HAMCMC-SA started at G_1 = I / gamma_1
# (precond_init = "curvature"), the rate on the summed scale (net_lr_summed). The `sampler =` choices of
# sgld_sa(), hamcmc_sa() and sgmcmc_density() are its names.
sgmcmc_samplers <- function() {
  if (is.null(sb_tables$samplers)) sb_tables$samplers <- cpp_sgmcmc_samplers()
  sb_tables$samplers
}
sgmcmc_sampler_info <- function(sampler) {
  tab <- sgmcmc_samplers()
  as.list(tab[match(sampler, tab$name), ])
}
# The variance a step eps adds per coordinate (R/sgmcmc_warmup.R), times `noise` (the minibatch's 1 + (N - n) / n;
# 1 for an exact gradient), from the sampler's row: eps / 2 for SGLD; a momentum sampler moves 1 / friction times
# further per step; the preconditioned samplers' as a fraction of each coordinate's variance (attribute
# relative: their noise has the preconditioner's covariance, G about the inverse Hessian).
sgmcmc_step_excess <- function(sampler, friction, noise = 1) {
  info <- sgmcmc_sampler_info(sampler)
  if (info$preconditioned) return(structure(function(eps) eps / 2 * noise, relative = TRUE))
  # pSGLD: its frozen preconditioner P = 1 / sqrt(E g^2) (summed scale) adds eps P noise / 2 to a coordinate;
  # with E g_j^2 about noise / v_j (the posterior gradient's variance at stationarity, times the minibatch's
  # factor) P_j is about sqrt(v_j / noise), so the excess is eps sqrt(v_j noise) / 2 (attribute per_coordinate:
  # a function of the coordinates' variances v too)
  if (info$rmsprop) return(structure(function(eps, v) eps * sqrt(v * noise) / 2, per_coordinate = TRUE))
  if (info$momentum) return(function(eps) eps / friction / 2 * noise)
  function(eps) eps / 2 * noise
}

# A `sampler =` argument matched against the table (choices: all samplers, or the preconditioned ones).
sgmcmc_match_sampler <- function(sampler, preconditioned = FALSE, call = rlang::caller_env()) {
  tab <- sgmcmc_samplers()
  choices <- if (preconditioned) tab$name[tab$preconditioned] else tab$name
  sb_match_arg(sampler, choices, call = call)
}

# How often a chain publishes progress and polls Ctrl-C (iterations): 256, fewer for the dense ("matrix") form of
# HAMCMC-SA, whose iteration costs O(P^3) (a Cholesky factor and P applications of the memory: 0.17 s at 1,500
# coefficients, so 256 iterations were 44 s deaf to Ctrl-C): about 256 (100 / P)^3, at least 1, which keeps the
# interval near 256 iterations of a 100-coefficient matrix form (about 15 ms).
sgmcmc_report_every <- function(sampler, sa_form, P) {
  if (identical(sampler, "hamcmc_sa") && identical(sa_form, "matrix")) {
    return(as.integer(max(1, min(256, floor(256 * (100 / P)^3)))))
  }
  256L
}
