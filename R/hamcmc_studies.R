#' Figure 1 of Wang, Deng and Lin (2021): SGLD, HAMCMC and HAMCMC-SA on the banana target
#'
#' Runs the samplers of the paper's section 5.1 on the banana target of [sgmcmc_target()] with its settings
#' (learning rates 0.04 for SGLD and 0.06 for HAMCMC and HAMCMC-SA, memory M = 3, preconditioner SA step
#' \eqn{\omega_k = 2 (10 + k)^{-0.9}}, \eqn{\tau = 1}) and returns short trajectories from (0, 0) (the paper's
#' figure) and the energy distance of long chains to exact draws ([banana_exact_draws()]).
#'
#' The paper does not say whether its runs normalize the directions (lines 7-8 of Algorithm 2) nor its
#' \eqn{\delta} (`gamma_min`, "usually set to be 1"). `arms` lists the variants run: by default the paper's
#' Algorithm 2 as printed (normalized, \eqn{\delta = 1}), the unnormalized preconditioned Langevin step
#' (the form with a known target, see [hamcmc_sa()]) with \eqn{\delta = 1} and with \eqn{\delta = 16}
#' (the largest curvature of the banana's \eqn{b_2} direction), for HAMCMC-SA and HAMCMC, and SGLD.
#'
#' The energy distance \eqn{2 E|X - Y| - E|X - X'| - E|Y - Y'|} is computed between `n_energy` draws evenly
#' spaced over the kept draws of all chains and `n_energy` exact draws; `floor` is the same statistic between two
#' independent exact samples of that size (its Monte-Carlo noise level).
#'
#' @param iterations,burnin,chains Length of the long chains, burn-in, and chains per arm (each chain thinned to
#'   about `n_energy / chains` draws).
#' @param trajectory Iterations of the trajectory (chain 1, no burn-in, every iteration kept).
#' @param n_energy Draws compared by the energy distance.
#' @param arms A data frame with columns `label`, `sampler`, `step_size`, `normalize`, `gamma_min` (default: see
#'   Details).
#' @param seed,threads As in [sgmcmc_density()].
#' @return A list: `arms` (the arms with `energy`, the energy distance, `diverged_at` (the first divergence of a
#'   long chain, NA if none), `mean_b1`, `mean_b2`, `sd_b1`, `sd_b2`, `seconds`), `floor`, `trajectories` (a
#'   list of `trajectory` x 2 matrices, shorter where the chain diverged), `exact` (exact draws) and
#'   `settings`.
#' @references Wang, Y., Deng, W. and Lin, G. (2021). An adaptive Hessian approximated stochastic gradient MCMC
#'   method. Journal of Computational Physics 432, 110150.
#' @seealso [sgmcmc_density()], `vignette("hamcmc-sa")`.
#' @export
#' @examples
#' \donttest{
#' s <- hamcmc_banana_study(iterations = 4000, trajectory = 200, n_energy = 500, seed = 1)
#' s$arms[, c("label", "energy", "diverged_at")]
#' }
hamcmc_banana_study <- function(iterations = 40000L, burnin = 2000L, chains = 4L, trajectory = 500L,
                                n_energy = 2000L, arms = NULL, seed = 1, threads = NULL) {
  iterations <- check_count(iterations, min = 2L)
  burnin <- check_count(burnin, min = 0L)
  chains <- check_count(chains)
  trajectory <- check_count(trajectory)
  n_energy <- check_count(n_energy, min = 2L)
  if (burnin >= iterations) {
    sb_abort("{.arg burnin} must be smaller than {.arg iterations}.", arg = "burnin")
  }
  arms <- arms %||% data.frame(
    label = c("SGLD", "HAMCMC-SA (as printed: normalized, delta = 1)", "HAMCMC (normalized, delta = 1)",
              "HAMCMC-SA (unnormalized, delta = 1)", "HAMCMC (unnormalized, delta = 1)",
              "HAMCMC-SA (unnormalized, delta = 16)", "HAMCMC (unnormalized, delta = 16)"),
    sampler = c("sgld", "hamcmc_sa", "hamcmc", "hamcmc_sa", "hamcmc", "hamcmc_sa", "hamcmc"),
    step_size = c(0.04, 0.06, 0.06, 0.06, 0.06, 0.06, 0.06),
    normalize = c(FALSE, TRUE, TRUE, FALSE, FALSE, FALSE, FALSE),
    gamma_min = c(1, 1, 1, 1, 1, 16, 16), stringsAsFactors = FALSE)
  need <- c("label", "sampler", "step_size", "normalize", "gamma_min")
  if (!is.data.frame(arms) || !all(need %in% names(arms))) {
    sb_abort("{.arg arms} must be a data frame with columns {.field {need}}.", arg = "arms")
  }
  seed <- resolve_seed(seed)
  tg <- sgmcmc_target("banana")
  thin <- max(1L, (iterations - burnin) %/% max(1L, ceiling(n_energy / chains)))
  exact <- banana_exact_draws(n_energy, seed = seed)
  floor_stat <- energy_distance(exact, banana_exact_draws(n_energy, seed = seed + 1))
  quiet_run <- function(...) {
    withCallingHandlers(sgmcmc_density(...),
                        scalebayes_warning = function(w) invokeRestart("muffleWarning"))
  }
  res <- arms
  res$energy <- res$diverged_at <- res$mean_b1 <- res$mean_b2 <- res$sd_b1 <- res$sd_b2 <- res$seconds <- NA_real_
  traj <- vector("list", nrow(arms))
  names(traj) <- arms$label
  for (a in seq_len(nrow(arms))) {
    ctl <- sgmcmc_control(step_size = arms$step_size[a],
                          step = sgmcmc_step(schedule = "constant", temperature = 1),
                          lbfgs = sgmcmc_lbfgs(memory = 3, precond_A = 2, precond_Z = 10, precond_alpha = 0.9,
                                               normalize = arms$normalize[a], gamma_min = arms$gamma_min[a],
                                               sa_form = "matrix",
                                               precond_init = "identity"))  # G_1 = I, Algorithm 2 as printed
    tr <- tryCatch(quiet_run(tg, init = c(0, 0), sampler = arms$sampler[a], iterations = trajectory, burnin = 0,
                             thin = 1, seed = seed, threads = threads, quiet = TRUE, control = ctl),
                   scalebayes_error_divergence = function(e) NULL)
    traj[[a]] <- rbind(c(b1 = 0, b2 = 0), if (!is.null(tr)) as.matrix(tr))
    t0 <- proc.time()[["elapsed"]]
    fit <- tryCatch(quiet_run(tg, init = c(0, 0), sampler = arms$sampler[a], iterations = iterations,
                              burnin = burnin, thin = thin, chains = chains, seed = seed, threads = threads,
                              quiet = TRUE, control = ctl),
                    scalebayes_error_divergence = function(e) e)
    res$seconds[a] <- proc.time()[["elapsed"]] - t0
    if (inherits(fit, "condition")) {
      res$diverged_at[a] <- fit$diverged_at
      next
    }
    if (any(fit$diverged)) res$diverged_at[a] <- min(fit$diverged_at, na.rm = TRUE)
    m <- as.matrix(fit)
    sel <- m[unique(round(seq(1, nrow(m), length.out = min(n_energy, nrow(m))))), , drop = FALSE]
    res$energy[a] <- energy_distance(sel, exact)
    res$mean_b1[a] <- mean(m[, 1])
    res$mean_b2[a] <- mean(m[, 2])
    res$sd_b1[a] <- stats::sd(m[, 1])
    res$sd_b2[a] <- stats::sd(m[, 2])
  }
  list(arms = res, floor = floor_stat, trajectories = traj, exact = exact,
       settings = list(iterations = iterations, burnin = burnin, chains = chains, thin = thin,
                       trajectory = trajectory, n_energy = n_energy, seed = seed, memory = 3,
                       omega = "2 (10 + k)^-0.9", tau = 1))
}

# Energy distance between the rows of x and y (Euclidean): 2 E|X - Y| - E|X - X'| - E|Y - Y'| (V-statistics).
energy_distance <- function(x, y) {
  x <- as.matrix(x)
  y <- as.matrix(y)
  md <- function(a, b) {
    s <- 0
    for (j in seq_len(ncol(a))) s <- s + outer(a[, j], b[, j], "-")^2
    mean(sqrt(s))
  }
  2 * md(x, y) - md(x, x) - md(y, y)
}
