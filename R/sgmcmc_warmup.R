# The step-size warm-up of the SG-MCMC front ends (sgmcmc_control(step_size = "auto"), the default for
# regression and density targets): successive halving over a geometric grid of steps, each candidate scored
# by the kernel Stein discrepancy (ksd()) of the draws of a short pilot chain, after Coullon, South & Nemeth
# (2021). Every candidate's pilot starts where the chains start and runs on its own random stream (seeded from
# the run's seed, apart from every chain's stream), so the choice depends on the seed only, not on threads.
#
#   round 1: every grid step, pilot of `len` iterations (the first half discarded, at most 500 draws kept);
#            a pilot that diverged, or whose draws have a non-finite score, is ruled out (KSD = Inf)
#   round r: the better half (smaller KSD) of round r - 1, pilots twice as long
#   until one step is left. Then the accuracy cap: the KSD of a few hundred pilot draws rewards mixing more than
#   it punishes the variance a step adds, so the chosen step is capped where that excess is at most
#   `delta` (10 %) of the smallest marginal posterior variance. For SGLD at step eps with minibatches of n of N
#   rows the excess is about eps / 2 (1 + (N - n) / n) in every coordinate (the discretization's eps / 2 plus
#   the minibatch noise's eps N (1 - n / N) / (2 n) when the per-example gradients' covariance times N is the
#   Hessian, as for a well-specified GLM); SGHMC with learning rate eta and friction alpha behaves as SGLD at
#   eps = eta / alpha. The smallest variance v is read off the winner's pilot draws (their variance less the
#   predicted excess), so the cap is eps <= 2 delta v / (1 + (N - n) / n).
# The winner's last pilot also measures how fast the chain mixes (smallest bulk ESS per iteration, scaled to the
# capped step): sgmcmc_auto_length() turns it into the default run length.
# With G grid steps and a first pilot of L iterations the warm-up runs L (G + 2 ceiling(G / 2) + 4 ceiling(G / 4)
# + ...) pilot iterations of one chain, about L G log2(G): 15 steps and L = 1,000 give 63,000 (measured times
# in bench/RESULTS.md), plus one KSD of at most 500 draws per pilot (29 of them).
#
# run_pilot(eps, iterations, stream) -> list(draws = m x d matrix on the scale the score uses, diverged = TRUE /
#   FALSE, latent = whatever score needs); score(draws, latent) -> m x d matrix.
# excess(eps): the variance a step adds per coordinate, on the scale of the draws (NULL: no cap); with the
# attribute relative = TRUE, that variance as a fraction of the coordinate's (the preconditioned samplers: with
# G about the inverse Hessian, the minibatch noise adds eps / 2 (1 + (N - n) / n) G, i.e. that fraction of the
# posterior variance), and the cap is eps <= delta / that fraction; with the attribute per_coordinate = TRUE,
# excess(eps, v) of the coordinates' variances v (pSGLD, whose preconditioner scales with the posterior sd).
# criterion(pilot) -> a number, smaller better: replaces the KSD where no score is at hand (a network, whose
#   weights are not identifiable and number in the thousands: sgmcmc_nn_warmup()); the table's column is then
#   `criterion_name`. back_off: when the grid step just above the winner was ruled out (diverged), take the
#   next smaller grid step: a step next to one that diverges within a pilot may diverge in a longer chain. When
#   the winner is the top of the grid, nothing above it was tried: one more pilot (first-round length) one grid
#   ratio above the top plays the step above (a row of its own in the table, the round after the last).
sgmcmc_step_warmup <- function(grid, run_pilot, score = NULL, excess = NULL, delta = 0.1, pilot_iterations = 1000L,
                               criterion = NULL, criterion_name = "ksd", back_off = FALSE, rate_pilot = 0L,
                               call = rlang::caller_env()) {
  # a pilot's criterion (smaller better; Inf: ruled out, i.e. diverged or a non-finite score)
  pilot_value <- function(pr) {
    if (!is.null(criterion)) {
      v <- if (isTRUE(pr$diverged)) Inf else criterion(pr)
      return(if (is.finite(v)) v else Inf)
    }
    if (isTRUE(pr$diverged) || !nrow(pr$draws) || any(!is.finite(pr$draws))) return(Inf)
    sc <- score(pr$draws, pr$latent)
    if (any(!is.finite(sc))) return(Inf)
    r <- cpp_ksd(pr$draws, sc, numeric(), 1, -0.5)
    if (isTRUE(r$interrupted)) rlang::interrupt()
    r$ksd
  }
  # a pilot ruled out has ksd NA in the table
  pilot_rows <- function(round, steps, len, k) {
    r <- data.frame(round = round, step_size = steps, pilot_iterations = len,
                    ksd = ifelse(is.finite(k), k, NA_real_), ruled_out = !is.finite(k))
    names(r)[4L] <- criterion_name
    r
  }
  grid <- sort(unique(grid), decreasing = TRUE)
  cand <- sort(unique(grid), decreasing = TRUE)
  len <- pilot_iterations
  rows <- list()
  round <- 0L
  last <- NULL
  repeat {
    round <- round + 1L
    if (length(cand) == 1L && !is.null(criterion) && round > 1L) break  # no last pilot: no mixing rate here
    k <- vapply(seq_along(cand), function(i) {
      pr <- run_pilot(cand[i], len)
      pr$iterations <- len
      if (length(cand) == 1L) last <<- pr
      pilot_value(pr)
    }, numeric(1))
    rows[[round]] <- pilot_rows(round, cand, len, k)
    if (all(!is.finite(k))) {
      tab <- do.call(rbind, rows)
      sb_abort(c("The step-size warm-up found no step on its grid that did not diverge.",
                 x = "Every pilot chain from {signif(max(grid), 3)} down to {signif(min(grid), 3)} diverged or left the region where the log posterior is finite.",
                 i = "Check the model and the data for non-finite values, or give {.code sgmcmc_control(step_size = )} yourself."),
               kind = "divergence", warmup = tab, call = call)
    }
    if (length(cand) == 1L) break
    keep <- order(k)[seq_len(ceiling(length(cand) / 2))]
    keep <- keep[is.finite(k[keep])]
    cand <- cand[keep]
    len <- 2L * len
  }
  tab <- do.call(rbind, rows)
  chosen <- cand[1]
  step <- chosen
  if (back_off && length(grid) > 1L) {
    i <- match(chosen, grid)
    if (i == 1L) {
      # the grid's top won: nothing above it was tried, so one pilot (first-round length) one grid ratio above
      # it stands in for the step above
      above <- grid[1L]^2 / grid[2L]
      pr <- run_pilot(above, pilot_iterations)
      tab <- rbind(tab, pilot_rows(max(tab$round) + 1L, above, pilot_iterations, pilot_value(pr)))
      ruled <- tab$ruled_out[nrow(tab)]
    } else {
      ruled <- any(tab$ruled_out[tab$step_size == grid[i - 1L]])
    }
    # the step above the winner was ruled out: the next smaller grid step
    if (ruled) step <- grid[min(length(grid), i + 1L)]
  }
  v_min <- NA_real_
  if (!is.null(excess) && isTRUE(attr(excess, "relative"))) {
    # a preconditioned sampler (G ~ the inverse Hessian): its excess is relative to each coordinate's variance
    ex <- excess(chosen)
    step <- min(step, chosen * delta / ex)
  } else if (!is.null(excess) && isTRUE(attr(excess, "per_coordinate")) && nrow(last$draws) >= 10L) {
    # an excess that depends on the coordinate's variance (pSGLD): the cap at the coordinate it binds
    v <- apply(last$draws, 2L, stats::var)
    v <- v[v > 0]
    if (length(v)) {
      ex <- excess(chosen, v)
      va <- ifelse(v > 2 * ex, v - ex, v / 2)
      v_min <- min(va)
      step <- min(chosen, chosen * delta * min(va / excess(chosen, va)))
    }
  } else if (!is.null(excess) && nrow(last$draws) >= 10L) {
    v <- apply(last$draws, 2L, stats::var)
    v <- v[v > 0]
    if (length(v)) {
      v_min <- min(v)
      ex <- excess(chosen)
      v_min <- if (v_min > 2 * ex) v_min - ex else v_min / 2  # less the excess, never below half the measured
      step <- min(chosen, chosen * delta * v_min / ex)
    }
  }
  # how fast the winner's last pilot mixed: the smallest bulk ESS over the coordinates per kept iteration, at
  # the final step (a capped step moves step / chosen as far per iteration)
  # (rate_pilot > 0 and a capped step: a pilot of rate_pilot iterations at the final step measures it instead;
  # the linear scaling underestimates it: HAMCMC-SA on diabetes, 0.0086 scaled against 0.015 realized)
  ess_rate <- NA_real_
  rate_step <- step / chosen
  if (rate_pilot > 0L && step < chosen) {
    pr <- run_pilot(step, rate_pilot)
    pr$iterations <- rate_pilot
    if (!isTRUE(pr$diverged)) {
      last <- pr
      rate_step <- 1
    }
    tab <- rbind(tab, pilot_rows(max(tab$round) + 1L, step, rate_pilot, NA_real_))
    tab$ruled_out[nrow(tab)] <- isTRUE(pr$diverged)
  }
  if (!is.null(last) && !is.null(last$draws) && nrow(last$draws) >= 20L) {
    kept_iter <- last$iterations - last$iterations %/% 2L
    ess <- suppressWarnings(apply(last$draws, 2L, function(v) if (stats::var(v) > 0) posterior::ess_bulk(v) else NA_real_))
    if (any(is.finite(ess))) ess_rate <- min(ess, na.rm = TRUE) / kept_iter * rate_step
  }
  list(step_size = step, ksd_step = chosen, capped = step < chosen, min_variance = v_min, delta = delta,
       ess_rate = ess_rate, table = tab, iterations = sum(tab$pilot_iterations))
}

# The default run length after a warm-up: enough iterations for an expected bulk ESS of `target` per chain in
# the kept half at the pilot's measured rate, rounded up to a thousand, within [lower, upper]; `fallback` when
# the rate could not be measured. The pilot's rate (at most 500 thinned draws of one short chain) is a rough
# guess: a target of 400 gave 700-900 per chain on the diabetes data (4 chains, 3 seeds, SGLD and SGHMC), and
# a target of 200 gave 200 per chain for SGHMC on the logistic regression of the NUTS check (max R-hat
# 1.0104). 300 aims at the 400 or so per chain at which R-hat is reliable at 1.01 (Vehtari et al. 2021).
sgmcmc_auto_length <- function(warmup, fallback, target = 300, lower = 20000, upper = 2e6) {
  r <- warmup$ess_rate
  if (!is.finite(r) || r <= 0) return(as.integer(fallback))
  as.integer(min(upper, max(lower, 1000 * ceiling(2 * target / r / 1000))))
}

# The thinning that keeps at most `max_draws` of the second half of a pilot of `len` iterations.
warmup_thin <- function(len, max_draws = 500L) max(1L, ceiling((len - len %/% 2L) / max_draws))

# A message when the step-size warm-up was long against the run it sets up (issue 61, item 8): it took more than
# getOption("scalebayes.warmup_note_seconds", 5) s and ran more pilot iterations than the run's iterations of
# all its chains. It comes after the warm-up, before the run; `quiet` silences it.
sgmcmc_note_long_warmup <- function(warmup, iterations, chains, quiet) {
  limit <- getOption("scalebayes.warmup_note_seconds", 5)
  if (isTRUE(quiet) || is.null(warmup) || !isTRUE(warmup$seconds > limit)) return(invisible(FALSE))
  it <- as.double(warmup$iterations %||% 0)
  run_it <- as.double(iterations) * chains
  if (!(it > run_it)) return(invisible(FALSE))
  cli::cli_inform(c(
    i = "The step-size warm-up took {format(round(warmup$seconds, 1))} s: {format(it, big.mark = ',')} pilot iterations, {format(signif(it / run_it, 2))} times the run's {format(iterations, big.mark = ',')} iterations x {chains} chain{?s}.",
    " " = "To skip it when rerunning this model, give a step yourself: {.code control = sgmcmc_control(step_size = )} (this warm-up chose {signif(warmup$step_size, 4)})."),
    class = c("scalebayes_message_warmup", "scalebayes_message"))
  invisible(TRUE)
}
