# sgld_sa() for neural networks: the same chain driver as the regression (engine: nn/sgmcmc.hpp over
# sgmcmc/chain.hpp), the spike-and-slab (SSGL) prior on chosen weight layers.

# Called by sgld_sa() when `model` is a network. Arguments are sgld_sa()'s, already matched where shared.
sgld_sa_nn <- function(x, y, model, family, method, sampler, iterations, epochs, batch_size, v0, v1,
                       sparse_layers, burnin, thin, newx, newy, chains, threads, seed, quiet, control, device,
                       keep_draws, weights = NULL, future = FALSE, chunks = NULL, standardize = FALSE, batch = "auto",
                       call, mcall) {
  ctx <- nn_start(model, family, device, call, mcall)
  p <- nn_prepare(ctx, x, y, newx, newy, standardize, batch_size, ssgl = TRUE, sparse_layers = sparse_layers,
                  weights = weights)
  float64 <- isTRUE(control$float64)
  len <- nn_sgmcmc_lengths(iterations, epochs, burnin, thin, chains, keep_draws, p, float64, call)
  iterations <- len$iterations
  future <- check_flag(future, arg = "future", call = call)
  check_sgmcmc_control(control, sampler, call = call)
  check_cv_regression(control, "a network", call = call)
  check_frozen_step(control, moves = method != "none", what = 'method = "none"', call = call)
  check_nn_sgmcmc_float32(control, v0, v1, iterations, call)  # single-precision range of the numbers (R/validate.R)
  check_hamcmc_control(control, sampler, NA_real_, call = call)
  batch_arg <- nn_batch_arg(batch, "chains", call)  # the engine decides (nn::decide_sgmcmc_batch(), R/nn_batch.R)
  control$sa_form <- control$sa_form %||% "diagonal"
  warn_hamcmc_experimental(control, sampler, TRUE)
  init <- nn_resolve_init(control$init, p$desc, len$chains, call)
  if (inherits(control$init, "sb_nn_fit")) {  # the starting network as the same function of the raw inputs
    init <- nn_convert_params(init, p$tab, p$desc$group, p$desc$size, p$xd$shape, control$init$scaling, p$scaling, call)
  }
  control_user <- control
  control$likelihood_sd <- nn_scale_sigma_arg(control$likelihood_sd, p$scaling, "sgmcmc_ssgl(likelihood_sd = )", call)
  run <- run_settings(seed, threads, quiet)
  trace_every <- control$trace_every %||% max(len$per_epoch, iterations %/% 1000L)
  check_result_size(as.double(iterations %/% trace_every), 12, "control$trace_every", call = call)
  # the loss rule of divergence (sgmcmc/chain.hpp): a mean training loss above diverge_loss times the larger of
  # the chain's lowest and a constant prediction's loss stops the chain
  loss <- list(factor = if (is.finite(control$diverge_loss)) control$diverge_loss else 0,
               floor = nn_constant_loss(p$yd$y, p$family), start = nn_zero_output_loss(p$yd$y, p$family, p$n_out))
  n_sparse <- sum(p$desc$size[p$desc$penalized])
  auto_step <- is.null(control$step_size) || identical(control$step_size, "auto")
  # The schedule of a warm-up step (sgmcmc_step(schedule = NULL)): constant for HAMCMC-SA, the paper's polynomial
  # eps_0 k^(-1/3) for the other samplers (sgmcmc_engine_control()), as for a given step. HAMCMC-SA's
  # preconditioner already shrinks its steps as its curvature estimate grows; the decay on top stalled it:
  # hamcmc_sa(model = nn_mlp()) on 2,000 MNIST digits reached 0.887 held-out accuracy with the decaying step (a
  # sixth of the chosen one by iteration 10,000), 0.905 with the constant one (same step 0.3, no chain diverged;
  # bench/hamcmc_mnist_defaults.R). SGLD-SA keeps the decay: with a constant step one of its 4 chains on raw
  # Boston (nn_mlp(), test-nn-standardize.R) diverged at iteration 930 at the warm-up's smallest grid step.
  if (auto_step && sampler == "hamcmc_sa") control$step_schedule <- control$step_schedule %||% "constant"
  warmup <- NULL
  step_size <- control$step_size
  if (auto_step) {
    t_w <- proc.time()[["elapsed"]]
    warmup <- sb_call_engine(sgmcmc_nn_warmup(
      p$spec, p$xd, p$yd, control, sampler = sampler, n = p$xd$n, n_sparse = n_sparse, iterations = iterations,
      batch_size = p$batch_size, loss_factor = loss$factor, loss_floor = loss$floor, loss_start = loss$start,
      init1 = if (!is.null(init)) init[, 1L, drop = FALSE], device = ctx$device, float64 = float64, weights = p$weights,
      run = run, v0 = v0, v1 = v1, batch = batch_arg, chains = len$chains), call = call)
    warmup$seconds <- proc.time()[["elapsed"]] - t_w
    step_size <- warmup$step_size
  }
  ctl <- sgmcmc_engine_control(control, n_sparse, NaN, trace_every = trace_every, step_size = step_size,
                               loss_factor = loss$factor, loss_floor = loss$floor, loss_start = loss$start,
                               check_every = if (ctx$device == "cpu") 1L else 100L,  # a check reads the device
                               report_every = 1L,  # progress and Ctrl-C every iteration (an iteration is expensive)
                               family = p$family, method = method, sampler = sampler, iterations = iterations,
                               batch_size = p$batch_size, burnin = len$burnin, thin = len$thin, v0 = v0, v1 = v1,
                               keep = integer(), chains = len$chains, chain_offset = 0)
  # batched chains (nn/batched_sgmcmc.hpp) or one network per chain: the engine decides from the user's `batch`
  # and the chains of the whole call (chains_total: a chunk through future decides as the call does)
  nnctl <- list(device = ctx$device, float64 = float64, torch_threads = 1L, keep_pred = len$n_kept > 0,
                keep_params = len$n_kept > 0, keep_stride = len$stride, init = init, weights = p$weights,
                batch = batch_arg, chains_total = len$chains)
  # the probe inputs of the function-space convergence checks ride along with newx (their predictions are kept
  # with the test predictions and split off in nn_sgmcmc_fit())
  probe <- if (len$n_kept > 0) nn_probe_index(p$xd$n) else integer()
  res <- nn_sgmcmc_run(p, ctl, nnctl, init, nn_append_rows(p$nd, p$xd, probe), len$chains, run, future, chunks, call)
  decided <- nn_batch_settings(res$batch)
  s <- list(family = p$family, method = method, sampler = sampler, iterations = iterations,
            epochs = iterations / len$per_epoch, batch_size = p$batch_size, burnin = len$burnin, thin = len$thin,
            v0 = v0, v1 = v1, sparse_layers = p$sparse_layers, chains = len$chains, control = control_user,
            step_size = step_size, keep_draws = len$n_kept, keep_stride = len$stride, n_saved = len$n_saved,
            future = future, auto_step = auto_step, batch = batch, batched = decided$batched,
            batch_group = decided$batch_group, unbatched = decided$unbatched)
  nn_sgmcmc_fit(res, ctx, p, s, run, float64 = float64, probe = probe, warmup = warmup)
}

# The lengths of a network's chains: iterations (or epochs of the minibatch size), burn-in and thinning, the
# number of chains, and the draws stored per chain (every `stride`-th saved iteration: `n_kept` of `n_saved`),
# checked against the size of what the run returns.
nn_sgmcmc_lengths <- function(iterations, epochs, burnin, thin, chains, keep_draws, p, float64, call) {
  per_epoch <- ceiling(p$xd$n / p$batch_size)
  if (!is.null(epochs)) {
    if (!is.null(iterations)) sb_abort("Give {.arg iterations} or {.arg epochs}, not both.", arg = "epochs", call = call)
    iterations <- check_count(epochs, max = 1e7, arg = "epochs", call = call) * per_epoch
  }
  iterations <- check_count(iterations %||% 10000L, arg = "iterations", call = call,
                            fix = "Use fewer epochs or a larger batch_size.")
  lens <- sgmcmc_lengths(iterations, burnin, thin, call)
  chains <- check_count(chains, max = 1e4, arg = "chains", call = call)
  n_saved <- (iterations - lens$burnin) %/% lens$thin
  P <- p$desc$n_parameters
  n_keep <- nn_keep_per_chain(keep_draws, n_saved, chains, P, float64, call)
  stride <- if (n_keep > 0) ceiling(n_saved / n_keep) else 1
  n_kept <- if (n_keep > 0) ceiling(n_saved / stride) else 0
  if (n_kept > 0) {
    check_result_size(as.double(n_kept) * chains, P, "keep_draws", call = call)
    if (!is.null(p$nd)) check_result_size(as.double(n_kept) * chains, p$nd$n * p$n_out, "keep_draws", call = call)
  }
  list(iterations = iterations, per_epoch = per_epoch, burnin = lens$burnin, thin = lens$thin, chains = chains,
       n_saved = n_saved, stride = stride, n_kept = n_kept)
}

# Run a network's chains: in this process, or in chunks of chains through future (chain c uses stream c wherever
# it runs; no progress bars from future workers). `both`: the test inputs with the probe rows appended.
nn_sgmcmc_run <- function(p, ctl, nnctl, init, both, chains, run, future, chunks, call) {
  engine <- function(first, count, run_chunk, in_process) {
    cc <- ctl
    cc$chains <- count
    cc$chain_offset <- first
    nc <- nnctl
    if (!is.null(init)) nc$init <- init[, first + seq_len(count), drop = FALSE]
    cpp_nn_sgmcmc(p$spec, p$xd$x, p$xd$dim, p$yd$y, if (is.null(both)) double() else both$x,
                  if (is.null(both)) integer() else both$dim, cc, nc, run_chunk)
  }
  sb_run_chain_chunks(chains, future, chunks, run, engine, call = call,
                      combine = function(parts) list(messages = unlist(lapply(parts, `[[`, "messages")),
                                                     device = parts[[1L]]$device, batch = parts[[1L]]$batch))
}

# ---- function-space convergence and the loss rule of divergence ----------------------------------------

# The training examples whose predictions are the function-space summaries of a network's chains (a network's
# weights are not identifiable: chains that agree on the function may hold permuted weights): up to 8, evenly
# spread over the training set.
nn_probe_index <- function(n, size = 8L) unique(round(seq(1, n, length.out = min(n, size))))

# Prepared test inputs `nd` (an nn_prepare_x() list, or NULL) with rows `idx` of the training inputs `xd`
# appended (the probe examples); NULL when there is neither.
nn_append_rows <- function(nd, xd, idx) {
  if (!length(idx)) return(nd)
  m <- rbind(if (!is.null(nd)) matrix(nd$x, nd$n), matrix(xd$x, xd$n)[idx, , drop = FALSE])
  d <- c(nrow(m), xd$shape)
  dim(m) <- d
  list(x = m, dim = as.integer(d), shape = xd$shape, n = nrow(m))
}

# The training loss per example of the best constant prediction (on the training scale): half the summed
# variances of a gaussian response, the entropy of the class (or 0/1) frequencies otherwise; at least 1e-3. The
# floor of the loss rule of divergence: loss_factor times it is a loss no chain in the posterior comes near.
nn_constant_loss <- function(y, family) {
  ent <- function(p) -sum(ifelse(p > 0, p * log(p), 0))
  v <- switch(family,
    gaussian = if (is.matrix(y)) 0.5 * sum(colMeans(sweep(y, 2L, colMeans(y))^2)) else 0.5 * mean((y - mean(y))^2),
    binomial = if (is.matrix(y)) sum(vapply(colMeans(y), function(p) ent(c(p, 1 - p)), 0)) else ent(c(mean(y), 1 - mean(y))),
    multinomial = ent(tabulate(as.integer(y) + 1L) / length(y)),
    # the mean Poisson negative log-likelihood (with log y!) at the mean count (a regression's, sgmcmc/glm.hpp)
    poisson = { m <- max(mean(y), 1e-12); mean(m - y * log(m) + lgamma(y + 1)) })
  max(v, 1e-3)
}

# The training loss per example of a zero output (where an untrained network starts, about; on the training
# scale): half the summed mean squares of a gaussian response, log 2 per binomial output, log K for K classes.
# The loss rule's level before a chain's first trace point (sgmcmc/chain.hpp: loss_start), so that a chain
# that explodes before it is caught there (SGLD at step 0.01 on raw Boston responses: loss 7.6e27 at the first
# trace point, and never 10 times above that).
nn_zero_output_loss <- function(y, family, n_out) {
  switch(family, gaussian = 0.5 * sum(y^2) / NROW(y), binomial = n_out * log(2), multinomial = log(n_out))
}

#' @name sgld_sa
#' @section Convergence of network chains:
#' The chains of a network settle in different modes: different functions that fit the data about equally well
#' (a network's posterior is multimodal well beyond the permutations of its hidden units). So the split R-hat
#' and ESS across chains of the function-space summaries (the training loss per example after burn-in, and the
#' predictions at 8 training examples, `fit$diagnostics$probe`) are far from Stan's thresholds however long the
#' run: with every default, `sgld_sa(medv ~ ., Boston[1:400, ], model = nn_mlp(16))` gave max R-hat 1.29-1.38 at
#' 10,000 iterations (seeds 1-3) and 1.19-1.45 at 40,000 (seeds 1-2); `hamcmc_sa()` 2.2-2.7 (seeds 1-2), 1.68 at 40,000 (seed 1). They are the
#' spread of the posterior over modes, which more chains explore and a longer run does not remove, so `print()`
#' reports them (the "convergence" line: "between chains") and no warning fires on them (the regression's R-hat
#' rule is unchanged). The classed warning `scalebayes_warning_convergence` fires on what a longer run (or
#' more stored draws) fixes, computed within each chain:
#' * **A chain still descending**: its mean training loss over the second half of its kept iterations is below
#'   that over the first half by more than 4 standard errors (Geweke's test; each half's standard error from its
#'   detrended values and their ESS) and by more than 25 % of the first half's. A network's training loss keeps
#'   creeping down long after its predictions have settled -- SGLD's default step decays as
#'   \eqn{k^{-1/3}}, which lowers the loss between the halves by the same share at any run length, and
#'   HAMCMC-SA's preconditioner keeps adapting: 1-13 % in the Boston runs above (SGLD 1.0-10.8 %, HAMCMC-SA
#'   6.5-13.2 %, 13.2 % at 40,000 iterations), significant but not warned about; a 400-iteration run of a small step (`test-nn-generics.R`)
#'   falls by 46 % and warns.
#' * **Too few effective draws for the intervals**: for a probe prediction, the tail ESS of each chain (alone,
#'   so that the modes do not count) summed over the chains is below 100. [predict()]'s 95 % intervals are
#'   quantiles of the stored draws; 100 effective draws put the Monte-Carlo error of a 2.5 % tail at about 1.6
#'   percentage points. The Boston runs above hold 136-145 (SGLD, seeds 1-3) and 84 and 102 (HAMCMC-SA, seeds 1
#'   and 2): seed 1 warns, and its run of 40,000 iterations, as the warning suggests, holds 112 and does not.
#' * **A network that did not move** (class `scalebayes_warning_not_learning`, also a convergence warning): the
#'   lowest mean training loss of a kept chain after burn-in is at least 0.9 of the best constant prediction's.
#'   Plain HAMCMC with every default on a 5-20-20-1 MLP (600 rows, 30 epochs) ends at 0.998 of it (held-out
#'   RMSE 1.633 against the mean predictor's 1.637) with nothing else to say so; SGLD on the same data ends at
#'   0.30 (RMSE 0.78). The warning names the step.
#' Divergence has its own warning (above). `fit$diagnostics$convergence` has, per summary, the across-chain
#' `rhat`, `ess_bulk`, `ess_tail`, and the within-chain `rhat_within` (largest split R-hat of a chain alone),
#' `ess_tail_within`, `trend_z`, `trend_drop` and `descending` (the number of chains still descending).
NULL

# What a network's chains say about themselves, on function-space summaries (a network's weights are not
# identifiable): the training loss per example at the trace points after burn-in, and the predictions (every
# output) at the probe examples from the stored draws. `ok`: the chains that enter (not diverged).
#
# Per summary, across chains: split R-hat and bulk / tail ESS (posterior package) as for a regression. The chains
# of a network settle in different modes (different functions), so these stay far from Stan's thresholds however
# long the run (?sgld_sa, "Convergence of network chains"): print() reports them, nothing warns on them. Within
# chains, what a longer run fixes:
#   rhat_within      the largest split R-hat of one chain alone (its two halves), over the chains (reported)
#   ess_tail_within  the tail ESS of each chain alone, summed over the chains: the effective draws behind the
#                    95 % intervals of predict(), as far as a longer run or more stored draws can add them
#   trend_z          training loss only: the largest over the chains of (first-half mean - second-half mean) /
#                    its standard error (each half's detrended sd / sqrt(ESS)): Geweke's test of a descent
#   trend_drop       training loss only: the largest over the chains of that fall as a share of the first half's
#   descending       training loss only: the number of chains that fell by more than nn_trend_z_max standard
#                    errors and by more than nn_trend_drop_max of their level (what the warning counts)
nn_convergence <- function(trace, burnin, ok, probe_draws, probe_chain) {
  tl <- trace[trace$iteration > burnin & trace$chain %in% which(ok), , drop = FALSE]
  one <- function(draws, chain, loss) {
    conv <- sgmcmc_convergence(draws, chain)
    if (is.null(conv)) return(NULL)
    per <- nn_within_chains(draws, chain, loss)
    cbind(conv, per)
  }
  parts <- list(
    if (nrow(tl)) one(matrix(tl$loss, dimnames = list(NULL, "training loss")), tl$chain, TRUE),
    if (!is.null(probe_draws) && nrow(probe_draws)) one(probe_draws, probe_chain, FALSE))
  parts <- parts[!vapply(parts, is.null, logical(1))]
  if (!length(parts)) NULL else do.call(rbind, parts)
}

# The within-chain columns of nn_convergence(), per column of `draws` (rows: draws of the chains in `chain`).
nn_within_chains <- function(draws, chain, loss) {
  ids <- unique(chain)
  quiet <- function(expr) withCallingHandlers(expr, warning = function(w) {
    if (grepl("ESS has been capped", conditionMessage(w))) invokeRestart("muffleWarning")
  })
  per_chain <- function(v, f) {
    vapply(ids, function(k) {
      u <- v[chain == k]
      if (length(u) < 4L || stats::var(u) == 0) return(NA_real_)
      as.double(quiet(f(u)))
    }, numeric(1))
  }
  halves <- function(u) {
    h <- length(u) %/% 2L
    list(a = u[seq_len(h)], b = u[(h + 1L):length(u)])
  }
  trend <- function(u) {
    hv <- halves(u)
    # the standard error of a half's mean from its detrended values (a trend within the half is not noise: left
    # in, it would shrink the ESS and hide the very descent the test looks for)
    se2 <- function(w) {
      if (length(w) < 4L) return(0)
      r <- stats::residuals(stats::lm.fit(cbind(1, seq_along(w)), w))
      if (stats::var(r) == 0) 0 else stats::var(r) / quiet(posterior::ess_mean(matrix(r)))
    }
    s <- sqrt(se2(hv$a) + se2(hv$b))
    if (!is.finite(s) || s == 0) return(NA_real_)
    (mean(hv$a) - mean(hv$b)) / s
  }
  drop <- function(u) {
    hv <- halves(u)
    (mean(hv$a) - mean(hv$b)) / abs(mean(hv$a))
  }
  top <- function(v) if (all(is.na(v))) NA_real_ else max(v, na.rm = TRUE)
  cols <- lapply(seq_len(ncol(draws)), function(j) {
    v <- draws[, j]
    r <- per_chain(v, function(u) posterior::rhat(matrix(u)))
    e <- per_chain(v, function(u) posterior::ess_tail(matrix(u)))
    z <- if (loss) per_chain(v, trend) else NA_real_
    dr <- if (loss) per_chain(v, drop) else NA_real_
    c(rhat_within = top(r), ess_tail_within = if (all(is.na(e))) NA_real_ else sum(e, na.rm = TRUE),
      trend_z = top(z), trend_drop = top(dr),
      descending = if (loss) sum(z > nn_trend_z_max & dr > nn_trend_drop_max, na.rm = TRUE) else NA_real_)
  })
  as.data.frame(do.call(rbind, cols))
}

# The thresholds of the convergence warning of a network's chains (nn_warn_convergence()).
nn_trend_z_max <- 4      # a chain whose training loss fell by more than 4 standard errors between its halves
nn_trend_drop_max <- 0.25 # ... and by more than 25 % of its level (1-13 % in default runs)
nn_ess_tail_min <- 100   # the summed within-chain tail ESS of a probe prediction (Stan's 100)

# print()'s line of a network's convergence summaries.
nn_convergence_info <- function(conv) {
  if (is.null(conv)) return(NULL)
  f <- function(v, fun, fmt) if (all(is.na(v))) "NA" else sprintf(fmt, fun(v, na.rm = TRUE))
  loss <- conv$parameter == "training loss"
  paste0("between chains max R-hat ", f(conv$rhat, max, "%.3f"), ", min bulk ESS ", f(conv$ess_bulk, min, "%.0f"),
         " (chains in different modes; not a warning); within chains max split R-hat ",
         f(conv$rhat_within, max, "%.3f"), ", loss trend z ", f(conv$trend_z[loss], max, "%.2f"), " and fall ",
         f(100 * conv$trend_drop[loss], max, "%.1f%%"), " (warns above ", nn_trend_z_max, " and ",
         100 * nn_trend_drop_max, "%), min tail ESS ", f(conv$ess_tail_within[!loss], min, "%.0f"),
         " (warns below ", nn_ess_tail_min, ")")
}

# The classed convergence warning of a network's chains: only what a longer run (or more stored draws) fixes -- a
# chain whose training loss is still descending (trend_z above nn_trend_z_max), or too few effective draws within
# the chains for the reported intervals (a probe prediction's summed tail ESS below nn_ess_tail_min). Diverged
# chains have their own warning (sgmcmc_report_divergence()). Returns whether it warned.
nn_warn_convergence <- function(conv, iterations, keep_draws) {
  if (is.null(conv)) return(invisible(FALSE))
  loss <- conv$parameter == "training loss"
  n_desc <- sum(conv$descending[loss], na.rm = TRUE)
  e <- conv$ess_tail_within[!loss]
  worst <- if (length(e) && !all(is.na(e))) which.min(replace(e, is.na(e), Inf)) else NA_integer_
  e_min <- if (is.na(worst)) NA_real_ else e[worst]
  why <- c(
    if (n_desc > 0)
      sprintf("%d chain%s still descending: the mean training loss fell between the first and the second half of the kept iterations by more than %g standard errors and %g%% (up to %.1f standard errors, %.1f%%)",
              n_desc, if (n_desc > 1) "s are" else " is", nn_trend_z_max, 100 * nn_trend_drop_max,
              max(conv$trend_z[loss], na.rm = TRUE), 100 * max(conv$trend_drop[loss], na.rm = TRUE)),
    if (isTRUE(e_min < nn_ess_tail_min))
      sprintf("the chains hold %.0f effective draws (tail ESS within chains, summed) of %s, too few for the 95%% intervals of predict() (warning below %g)",
              e_min, conv$parameter[!loss][worst], nn_ess_tail_min))
  if (!length(why)) return(invisible(FALSE))
  sb_warn(c("The network's chains need a longer run: {why[1]}{if (length(why) > 1) paste0('; and ', why[2]) else ''}.",
            i = "Run longer chains ({.arg iterations} = {format(iterations, big.mark = ',', scientific = FALSE)} now; e.g. 4 times as many){if (isTRUE(e_min < nn_ess_tail_min)) paste0(', or store more draws per chain (keep_draws = ', format(keep_draws), ' now)') else ''}; {.code fit$diagnostics$convergence} has the numbers per summary."),
          kind = "convergence")
  invisible(TRUE)
}

# A network's chains that did not move: every kept chain's mean training loss per example after burn-in at
# least nn_not_learning_ratio of the best constant prediction's (on the training scale) is a fit that learned
# nothing a mean would not give, whatever R-hat says. Measured (issue 56, item 6): plain HAMCMC with every
# default on a 5-20-20-1 MLP (600 rows, 30 epochs; y = sin(2 x1) + x2^2 / 2 - x3 x4 + noise sd 0.5) ends at
# 0.998 of the constant's loss (held-out RMSE 1.633 against the mean's 1.637), SGLD at 0.30 (RMSE 0.78). A
# classed warning naming the step; returns whether it warned.
nn_not_learning_ratio <- 0.9
nn_warn_not_learning <- function(trace, burnin, ok, floor, step_size, label) {
  tl <- trace[trace$iteration > burnin & trace$chain %in% which(ok), , drop = FALSE]
  if (!nrow(tl) || !is.finite(floor) || floor <= 0) return(invisible(FALSE))
  ratio <- min(tapply(tl$loss, tl$chain, mean)) / floor
  if (!is.finite(ratio) || ratio < nn_not_learning_ratio) return(invisible(FALSE))
  sb_warn(c("The network did not learn beyond a constant prediction: the lowest mean training loss of a chain after burn-in is {sprintf('%.3f', ratio)} of the best constant prediction's (warning above {nn_not_learning_ratio}).",
            i = "{label} at step {signif(step_size, 3)} did not move the network from where it started; give a larger {.code sgmcmc_control(step_size = )}, more {.arg epochs}, or another {.arg sampler} (SGLD and SGHMC learn this network), and check that the inputs carry signal."),
          kind = "not_learning", also = "convergence")
  invisible(TRUE)
}

# The step-size warm-up of a network (R/sgmcmc_warmup.R with a criterion in place of the KSD: a network's
# weights are not identifiable and number in the thousands, so no Stein discrepancy of a few hundred pilot draws
# means anything). The grid is per example, 9, 3, 1, 1/3 and 1/9 times the sampler's measured rate
# (the net_lr column of the sampler table / N); each pilot is 4 chains run as one batched network on streams
# 2^20 + 0..3 of the seed (their own default initializations, or chain 1's init), or one chain (stream 2^20) for
# a network without a batched form, with the latent variables held where they start (method "none", as for
# regression), scored by the chains' mean training loss per example over their second half: a step too small has
# not come down yet, a step too large stays high (its noise) or is stopped by the divergence rules in ANY of the
# pilot chains and ruled out. Why 4: with one pilot chain, HAMCMC-SA's default network run (13-50-50-1 MLP,
# standardized Boston, 8 chains) took 0.9, whose pilot had not diverged, and 2 of the 8 chains diverged at
# iteration 9; a step that some chains cannot take (their starting points, or with `init` given their minibatches
# and noise) is ruled out by a pilot that has several. Batched (one group of 4), the 4 chains cost about what one
# unbatched pilot chain did on that network (warm-up 12.2 s against 11.0 s). The pilots are batched whatever the
# run's `batch`, so the step chosen does not depend on it. Successive halving (pilots of
# max(200, iterations / 50) iterations, doubled each round: 27 times that in all) keeps
# the lower half; when the grid step above the winner was ruled out, the step below the winner is taken
# (back_off): on standardized Boston 0.3 / N diverged in 1 of 4 SGLD chains of batch 32 while 0.1 / N did not.
# When the top of the grid wins, a pilot at 3 times the top stands for the step above: on raw Boston (128-64
# MLP) HAMCMC-SA's top step 0.9 diverged in 3 of 8 chains (0 of 8 at 0.3), so 4 pilots all survived it in about
# 15 % of seeds and the top was taken; backing off from the top always would cost networks whose step above the
# top is stable (the conv1d motif network of test-nn-conv1d.R: 0.918 held-out accuracy at the step below its top
# against 0.952 at the top; its pilot at 3 times the top is borderline -- it survived one-network pilots and
# diverges in 2-3 of 4 chains batched, seeds 1-3 -- so the step below is what that test now gets).
sgmcmc_nn_warmup <- function(spec, xd, yd, control, sampler, n, n_sparse, iterations, batch_size, loss_factor,
                             loss_floor, loss_start, init1, device, float64, weights, run, v0, v1, batch = "auto",
                             chains = 4L) {
  info <- sgmcmc_sampler_info(sampler)
  grid <- if (!is.na(info$net_lr_summed) && !(info$preconditioned && identical(control$precond_init, "identity"))) {
    info$net_lr_summed * 3^(2:-2)
  } else {
    info$net_lr * 3^(2:-2) / n
  }
  len <- max(200L, iterations %/% 50L)
  run_pilot <- utils::modifyList(run, list(quiet = TRUE, threads = 1L))
  pilot_control <- function(eps, len, chains) {
    ctl <- sgmcmc_engine_control(control, n_sparse, NaN, trace_every = max(1L, len %/% 20L), step_size = eps,
                                 loss_factor = loss_factor, loss_floor = loss_floor, loss_start = loss_start,
                                 check_every = 1L,
                                 report_every = 1L, family = yd$family, method = "none", sampler = sampler,
                                 iterations = len, batch_size = batch_size, burnin = len %/% 2L, thin = 1L,
                                 v0 = v0, v1 = v1, keep = integer(), chains = chains,
                                 chain_offset = 2^20)
  }
  # 4 batched pilot chains when the network has a batched form, else 1 (its cost would be 4 times). The engine's
  # decision for the user's `batch` and chains, asked first: a batch forced on chains without a batched form is
  # refused here, before any pilot runs
  batched <- isTRUE(cpp_nn_sgmcmc_batch_decide(spec, pilot_control(grid[1], len, 4L),
                                               list(batch = batch, chains_total = chains))$supported)
  k <- if (batched) 4L else 1L
  # one group of the 4 pilot chains (batch = 4, not the engine's cache-capped groups: for a network of more than
  # 32,768 parameters those would be groups of one chain, each run with a placeholder member, 8 networks' work)
  nc <- list(device = device, float64 = float64, torch_threads = 1L, keep_pred = FALSE, keep_params = FALSE,
             keep_stride = 1, init = if (!is.null(init1)) init1[, rep(1L, k), drop = FALSE], weights = weights,
             batch = if (batched) k else FALSE)
  # progress (main thread, unless quiet): the pilots' iterations, shown at once; the rounds of successive
  # halving (sgmcmc_step_warmup(): 5, 3, 2 pilots of doubling length, at most one more for the back-off)
  bar <- NULL
  if (!isTRUE(run$quiet)) {
    n_cand <- length(unique(grid))
    total <- 0
    l <- len
    repeat {
      total <- total + n_cand * l
      if (n_cand == 1L) break
      n_cand <- ceiling(n_cand / 2)
      if (n_cand == 1L) break  # with a criterion the last single candidate is not run again
      l <- 2L * l
    }
    total <- total + len  # the back-off pilot, when there is one
    op <- options(cli.progress_show_after = 0)
    bar <- cli::cli_progress_bar("Step-size warm-up", total = total, .envir = environment(),
                                 format = "Step-size warm-up {cli::pb_bar} {cli::pb_percent} | pilot step {cli::pb_status}")
    options(op)
    on.exit(cli::cli_progress_done(id = bar, .envir = environment()), add = TRUE)
  }
  pilot <- function(eps, len) {
    if (!is.null(bar)) cli::cli_progress_update(id = bar, inc = 0, status = format(signif(eps, 3)), force = TRUE)
    r <- cpp_nn_sgmcmc(spec, xd$x, xd$dim, yd$y, double(), integer(), pilot_control(eps, len, k), nc, run_pilot)
    if (!is.null(bar)) cli::cli_progress_update(id = bar, inc = len, force = TRUE)
    if (isTRUE(r$interrupted)) rlang::interrupt()
    losses <- lapply(r$chains, function(ch) {
      tr <- matrix(ch$trace, ncol = 12L, byrow = TRUE)[seq_len(ch$scalars[3]), , drop = FALSE]
      tr[tr[, 1] > len %/% 2L, 5L]
    })
    list(diverged = any(vapply(r$chains, function(ch) ch$scalars[5] > 0, logical(1))), loss = unlist(losses))
  }
  criterion <- function(pr) if (length(pr$loss)) mean(pr$loss) else Inf
  sgmcmc_step_warmup(grid, pilot, criterion = criterion, criterion_name = "loss", back_off = TRUE,
                     pilot_iterations = len)
}

# The learning rate per example of a network's default step size: step_size = net_lr / N (N the number of
# training examples; HAMCMC-SA on the summed scale: net_lr_summed), the sampler table's columns: the engine's
# sgmcmc/steps.hpp, sampler_table(), records how each rate was measured.

# Draws stored per chain (every stride-th saved iteration): TRUE = at most 100, and at most 512 MB of stored
# parameters over all chains (a big network keeps fewer); a number = at most that many (Inf: every kept
# iteration); FALSE = 0.
nn_keep_per_chain <- function(keep_draws, n_saved, chains, P, float64, call) {
  if (isTRUE(keep_draws)) {
    budget <- floor(512 * 1024^2 / (chains * P * if (float64) 8 else 4))
    return(max(1, min(100, n_saved, budget)))
  }
  if (isFALSE(keep_draws)) return(0)
  if (!is.numeric(keep_draws) || length(keep_draws) != 1L || is.na(keep_draws) || keep_draws < 0 ||
      (is.finite(keep_draws) && keep_draws != round(keep_draws))) {
    sb_abort(c("{.arg keep_draws} must be TRUE, FALSE or a number of draws per chain to store (Inf: all).",
               x = "You supplied {.obj_type_friendly {keep_draws}}."), arg = "keep_draws", call = call)
  }
  min(keep_draws, n_saved)
}

# The starting parameters of a network's chains, n_parameters x chains (NULL: the default initialization), from
# sgmcmc_control(init = ): a vector, a matrix, or a network fit of the same architecture (sgld_sa: the final
# state of chain c; wbb_nn with kept weights: draw c; both recycled; a variational fit: the mean of q).
nn_resolve_init <- function(init, desc, chains, call) {
  if (is.null(init)) return(NULL)
  P <- desc$n_parameters
  if (inherits(init, "sb_nn_fit")) {
    other <- tryCatch(cpp_nn_describe(init$spec), error = function(e) NULL)
    if (is.null(other) || !identical(other$size, desc$size) || !identical(other$group, desc$group)) {
      sb_abort(c("{.code sgmcmc_control(init = )} is a network fit of a different architecture.",
                 x = "It has {format(init$n_parameters, big.mark = ',')} parameters in {length(other$size)} tensor{?s}; this network has {format(P, big.mark = ',')} in {length(desc$size)}.",
                 i = "Start from a fit of the same {.arg model} on inputs of the same shape."),
               arg = "init", call = call)
    }
    if (inherits(init, "sb_vi_nn")) {  # the mean of q (phi mu), every chain
      return(matrix(init$weights_mean, P, chains))
    }
    src <- if (inherits(init, "sb_sgld_sa_nn")) init$weights_final else init$weights
    if (is.null(src)) {
      sb_abort(c("{.code sgmcmc_control(init = )} is a {.fn wbb_nn} fit without its weights.",
                 i = "Refit it with {.code keep_draws = TRUE}."), arg = "init", call = call)
    }
    if (!inherits(init, "sb_sgld_sa_nn")) src <- src[init$status == "done", , drop = FALSE]
    return(t(src[(seq_len(chains) - 1L) %% nrow(src) + 1L, , drop = FALSE]))
  }
  init_matrix(init, P, chains, "network parameter", "the order of a fit's weights columns", call)
}

# Which weight layers (1 = the first linear / convolution layer) get the SSGL prior.
nn_sparse_layers <- function(sparse_layers, n_layers, call) {
  if (is.null(sparse_layers)) return(seq_len(n_layers))
  if (is.logical(sparse_layers) && length(sparse_layers) == 1L && !is.na(sparse_layers)) {
    return(if (sparse_layers) seq_len(n_layers) else integer())
  }
  if (!is.numeric(sparse_layers) || anyNA(sparse_layers) || any(sparse_layers != round(sparse_layers)) ||
      any(sparse_layers < 1 | sparse_layers > n_layers) || anyDuplicated(sparse_layers)) {
    sb_abort(c("{.arg sparse_layers} must be distinct indices of the network's weight layers (1 to {n_layers}), TRUE or FALSE.",
               x = "You supplied {.val {format(sparse_layers)}}.",
               i = "Layer 1 is the first linear or convolution layer; see {.code print(model, input = , output = )}."),
             arg = "sparse_layers", call = call)
  }
  sort(as.integer(sparse_layers))
}

# Assemble the fit from the engine's per-chain lists.
nn_sgmcmc_fit <- function(res, ctx, p, settings, run, float64, probe = integer(), warmup = NULL) {
  desc <- p$desc; family <- p$family; levels <- p$yd$levels; nd <- p$nd; n_out <- p$n_out; scaling <- p$scaling
  n_kept <- settings$keep_draws
  chains <- res$chains
  sc <- do.call(rbind, lapply(chains, `[[`, "scalars"))
  colnames(sc) <- c("sigma", "saved", "traced", "iterations_done", "diverged", "diverged_at")
  interrupted <- isTRUE(res$interrupted)
  diverged <- sc[, "diverged"] > 0
  diverged_at <- ifelse(diverged, sc[, "diverged_at"], NA)  # per chain: the iteration it diverged at
  if ((all(diverged) || all(sc[, "saved"] == 0)) && !interrupted) {
    fix <- paste0("Give a smaller {.code sgmcmc_control(step_size = )} (now {format(signif(settings$step_size, 3))}",
                  if (isTRUE(settings$auto_step)) ", chosen by the warm-up, whose pilots did not diverge" else "", ")",
                  if (!p$standardize) ", or standardize the data ({.code standardize = TRUE})" else "",
                  if (sgmcmc_sampler_info(settings$sampler)$preconditioned) {
                    plain <- sgmcmc_samplers()$name[!sgmcmc_samplers()$preconditioned]
                    paste0("; or use a sampler without a preconditioner (", paste0('"', plain, '"', collapse = ", "), ")")
                  } else "",
                  ".")
    sb_abort(c(if (all(diverged)) "Every chain diverged." else "No draw was kept: every chain stopped before the end of burn-in.",
               x = "{res$messages[res$messages != ''][1]}.",
               i = fix),
             kind = "diverged", also = "divergence", diverged_at = diverged_at)
  }
  # a diverged chain is left out of every average and of the stored draws (its trace stays, to show it)
  saved <- ifelse(diverged, 0, sc[, "saved"])
  stride <- settings$keep_stride
  stored <- if (n_kept > 0) ceiling(saved / stride) else 0 * saved  # draws stored per chain
  wts <- if (sum(saved) > 0) saved / sum(saved) else saved
  P <- desc$n_parameters
  wavg <- function(name) Reduce(`+`, Map(function(ch, w) if (w > 0) ch[[name]] * w else 0, chains, wts))
  param_mean <- if (sum(saved) > 0) wavg("param_mean") else NULL
  rho <- rowMeans(do.call(cbind, lapply(chains[!diverged], `[[`, "rho")))
  trace <- sgmcmc_trace_frame(lapply(seq_along(chains), function(c) {
    matrix(chains[[c]]$trace, ncol = 12L, byrow = TRUE)[seq_len(sc[c, "traced"]), , drop = FALSE]
  }), c("iteration", "sigma", "delta", "mean_rho", "loss", "eps", "tau", "sparsity", "accuracy"))
  trace$sigma <- nn_unscale_sigma(trace$sigma, scaling)  # a gaussian network's noise sd on the user's scale
  pred_mean <- pred <- probe_draws <- NULL
  n_test <- if (is.null(nd)) 0L else nd$n
  n_pred <- n_test + length(probe)  # the engine's prediction rows: the test inputs, then the probe examples
  if (n_test > 0 && sum(saved) > 0) {
    pm <- matrix(wavg("pred_mean"), n_pred, n_out, byrow = TRUE)[seq_len(n_test), , drop = FALSE]
    pred_mean <- if (n_out == 1L) drop(pm) else if (family == "multinomial") `dimnames<-`(pm, list(NULL, levels)) else pm
    pred_mean <- nn_unscale_pred(pred_mean, scaling)
  }
  if (n_pred > 0 && n_kept > 0 && sum(stored) > 0) {
    m <- n_pred * n_out
    flat <- unlist(Map(function(ch, k) ch$pred_draws[seq_len(k * m)], chains, stored), use.names = FALSE)
    all_pred <- aperm(array(flat, c(n_out, n_pred, sum(stored))), c(3L, 2L, 1L))  # draws x examples x outputs
    if (length(probe)) {
      probe_draws <- matrix(all_pred[, n_test + seq_along(probe), , drop = FALSE], sum(stored))
      colnames(probe_draws) <- if (n_out == 1L) sprintf("prediction[%d]", probe)
                               else sprintf("prediction[%d,%d]", rep(probe, n_out), rep(seq_len(n_out), each = length(probe)))
    }
    if (n_test > 0) pred <- nn_shape_pred(all_pred[, seq_len(n_test), , drop = FALSE], family, levels, scaling)
  }
  convergence <- nn_convergence(trace, settings$burnin, !diverged, probe_draws, rep(seq_along(chains), stored))
  store <- NULL
  B <- sum(desc$buffer_size %||% 0)
  if (n_kept > 0) {
    # each chain's stored draws are contiguous blocks of P values (float32 bytes for a float32 network)
    per <- if (float64) 1 else 4
    take <- function(name, m) {
      unlist(Map(function(ch, k) {
        v <- ch[[name]]
        if (length(v) == k * m * per) v else v[seq_len(k * m * per)]  # (an index vector of 1e8 costs seconds)
      }, chains, stored), use.names = FALSE)
    }
    store <- nn_decode_store(take("param_draws", P), if (B > 0) take("buffer_draws", B), desc, sum(stored))
  }
  sparse_w <- rep(desc$penalized, desc$size)
  final <- do.call(rbind, lapply(chains, `[[`, "param_final"))
  delta <- do.call(rbind, lapply(chains, `[[`, "delta"))
  colnames(delta) <- desc$group
  delta <- delta[, desc$penalized, drop = FALSE]
  # share of exact zeros of each chain's final sparse weights (row by row: rowMeans() of a 1 x 8.7e6 logical
  # matrix takes seconds)
  sparsity <- if (any(sparse_w)) vapply(seq_len(nrow(final)), function(i) mean(final[i, sparse_w] == 0), 0) else NA_real_
  label <- sgmcmc_label(settings$sampler, settings$method)
  if (settings$control$anneal != 1) label <- paste0("A-", label)
  s <- settings
  details <- c(
    sprintf("%d chain%s x %s iterations (%.4g epochs of batch %d), burn-in %s, thin %s: %s kept iterations; step size %.3g (sum scale; %.3g per example%s)",
            s$chains, if (s$chains > 1) "s" else "", format(s$iterations, big.mark = ","), s$epochs, s$batch_size,
            format(s$burnin, big.mark = ","), s$thin, sum(saved), s$step_size, s$step_size * p$xd$n,
            if (isTRUE(s$auto_step)) ", chosen by the warm-up" else ""),
    if (any(sparse_w))
      sprintf("SSGL prior on weight layer%s %s (v0 %.3g, v1 %.3g); %s; final sparsity %s; mean inclusion %.3f",
              if (length(s$sparse_layers) == 1) "" else "s", paste(s$sparse_layers, collapse = ", "), s$v0, s$v1,
              if (isTRUE(s$control$prune))
                sprintf("magnitude pruning to the sparse rate %.3g (1 - %.3g^(k/%.3g)) at iteration k", s$control$prune_S,
                        s$control$prune_D, s$control$prune_U)
              else "no pruning",
              paste(sprintf("%.3f", sparsity), collapse = "/"), mean(rho[sparse_w]))
    else
      sprintf("no sparse layer: Gaussian prior (variance %.3g) on every parameter", s$control$prior_var))
  if (any(sparse_w) && mean(rho[sparse_w]) < 0.01) {
    details <- c(details, sprintf(paste0(
      "inclusion: the SA drove delta to %.2g (its Beta(a, b = %d weights) prior), so every weight's posterior favours ",
      "the spike and rho selects no weight in a network; %s"), mean(delta),
      as.integer(s$control$b %||% sum(sparse_w)),
      if (isTRUE(s$control$prune)) "the magnitude pruning selects them (the sparsity above)"
      else paste0("to select weights prune by magnitude: sgmcmc_control(ssgl = sgmcmc_ssgl(prune = TRUE)) (not the ",
                  "default: at prune_S = 0.5 it cost 0.04-0.05 held-out accuracy on MNIST, see ?sgmcmc_ssgl)")))
  }
  conv_info <- nn_convergence_info(convergence)
  if (!is.null(conv_info)) {
    details <- c(details, sprintf("convergence (training loss, predictions at %d training examples): %s", length(probe),
                                  conv_info))
  }
  n_draws <- sum(stored)
  fit <- nn_build(
    ctx, p, "sb_sgld_sa_nn", label, run, device = res$device, settings = settings, weights = store$weights,
    buffers = store$buffers, status = factor(rep("done", n_draws), levels = nn_status_levels),
    chain = rep(seq_along(chains), stored), pred = pred, pred_mean = pred_mean, details = details,
    training = trace[trace$chain %in% which(!diverged), c("chain", "iteration", "loss", "accuracy")],
    weights_mean = param_mean, float64 = float64,
    weights_final = nn_pack(t(final), TRUE),  # the chains' last states in full precision (to continue them)
    buffers_final = if (B > 0) nn_pack(do.call(cbind, lapply(chains, `[[`, "buffer_final")), TRUE),
    inclusion = nn_lazy_names(rho[sparse_w], desc$penalized),  # named on access
    sparsity = sparsity,
    trace = trace, latent = data.frame(chain = seq_along(chains), sigma = nn_unscale_sigma(sc[, "sigma"], scaling)),
    delta = delta, saved = saved, iterations_done = sc[, "iterations_done"], diverged = diverged,
    diverged_at = diverged_at, diverged_why = ifelse(diverged, res$messages, NA),
    interrupted = interrupted, diagnostics = list(convergence = convergence, probe = probe), warmup = warmup
  )
  sgmcmc_report_divergence(fit, settings$step_size, isTRUE(settings$auto_step))
  if (!interrupted) {
    nn_warn_not_learning(trace, settings$burnin, !diverged, nn_constant_loss(p$yd$y, p$family), settings$step_size,
                         label)
    nn_warn_convergence(convergence, settings$iterations, n_kept)
  }
  if (interrupted) {
    sb_warn(c("Interrupted: the fit holds the state reached (iterations per chain: {sc[, 'iterations_done']}; kept iterations: {saved}).",
              i = "Averages use the draws kept until then; {.code fit$weights_final} is the last state of every chain."),
            kind = "interrupted")
  }
  fit
}
