# sgld_sa() for neural networks: the same chain driver as the regression (engine: nn/sgmcmc.hpp over
# sgmcmc/chain.hpp), the spike-and-slab (SSGL) prior on chosen weight layers.

# Called by sgld_sa() when `model` is a network. Arguments are sgld_sa()'s, already matched where shared.
sgld_sa_nn <- function(x, y, model, family, method, sampler, iterations, epochs, batch_size, v0, v1,
                       sparse_layers, burnin, thin, newx, newy, chains, threads, seed, quiet, control, device,
                       keep_draws, weights = NULL, call, mcall) {
  t0 <- proc.time()[["elapsed"]]
  device <- check_backend(device, call)
  if (!inherits(model, "sb_nn_spec")) {
    sb_abort(c("{.arg model} must be a network made by {.fn nn_sequential}, {.fn nn_mlp} or {.fn nn_cnn}.",
               x = "You supplied {.obj_type_friendly {model}}."), arg = "model", call = call)
  }
  xd <- nn_prepare_x(x, "x", call)
  yd <- nn_prepare_y(y, xd$n, family, arg = "y", call = call)
  family <- yd$family
  n <- xd$n
  n_out <- if (family == "multinomial") length(yd$levels) else yd$q  # q columns of a gaussian / binomial y
  tab <- nn_resolve(model, xd$shape, n_out, call = call)
  weight_rows <- which(tab$kind %in% c("linear", "conv2d"))
  sparse_layers <- nn_sparse_layers(sparse_layers, length(weight_rows), call)
  tab$penalized <- FALSE
  tab$penalized[weight_rows[sparse_layers]] <- TRUE
  spec <- nn_engine_spec(tab, xd$shape, family)
  spec$init <- 0L
  batch_size <- if (is.null(batch_size)) min(50L, n) else check_count(batch_size, max = 1e9)
  if (batch_size > n) {
    sb_abort(c("{.arg batch_size} must not exceed the number of examples.",
               x = "batch_size = {batch_size} but {.arg x} has {n} example{?s}."), arg = "batch_size", call = call)
  }
  batch_size <- check_nn_batch_size(batch_size, n, tab, call = call)  # batch norm needs 2 (R/validate.R)
  per_epoch <- ceiling(n / batch_size)
  if (!is.null(epochs)) {
    if (!is.null(iterations)) {
      sb_abort("Give {.arg iterations} or {.arg epochs}, not both.", arg = "epochs", call = call)
    }
    epochs <- check_count(epochs, max = 1e7)
    iterations <- epochs * per_epoch
  }
  iterations <- check_count(iterations %||% 10000L, arg = "iterations", call = call,
                            fix = "Use fewer epochs or a larger batch_size.")
  lens <- sgmcmc_lengths(iterations, burnin, thin, call)
  nd <- nn_prepare_newx(newx, xd, call)
  newy_d <- NULL
  if (!is.null(newy)) {
    if (is.null(nd)) sb_abort("{.arg newy} needs {.arg newx}.", arg = "newy", call = call)
    newy_d <- nn_prepare_y(newy, nd$n, family, levels = yd$levels, arg = "newy", call = call, q_expected = yd$q)
  }
  keep_draws <- check_flag(keep_draws)
  chains <- check_count(chains, max = 1e4)
  desc <- cpp_nn_describe(spec)
  n_saved <- (iterations - lens$burnin) %/% lens$thin
  if (keep_draws) {
    check_result_size(as.double(n_saved) * chains, desc$n_parameters, "iterations", call = call)
    if (!is.null(nd)) check_result_size(as.double(n_saved) * chains, nd$n * n_out, "iterations", call = call)
  }
  if (!inherits(control, "sb_sgmcmc_control")) {
    sb_abort(c("{.arg control} must be created by {.fn sgmcmc_control}.",
               x = "You supplied {.obj_type_friendly {control}}."), arg = "control", call = call)
  }
  check_nn_sgmcmc_float32(control, v0, v1, iterations, call)  # single-precision range of the numbers (R/validate.R)
  init <- nn_resolve_init(control$init, desc, chains, call)
  run <- run_settings(seed, threads, quiet)
  trace_every <- control$trace_every %||% max(per_epoch, iterations %/% 1000L)
  check_result_size(as.double(iterations %/% trace_every), 9, "control$trace_every", call = call)
  n_sparse <- sum(desc$size[desc$penalized])
  # a network's "none" keeps the latent variables where they start: kappa implied by rho unless given
  ctl <- sgmcmc_engine_control(control, n_sparse, NaN, trace_every = trace_every,
                               check_every = if (device == "cpu") 1L else 100L,  # a check reads the device
                               report_every = 1L,  # progress and Ctrl-C every iteration (an iteration is expensive)
                               family = family, method = method, sampler = sampler, iterations = iterations,
                               batch_size = batch_size, burnin = lens$burnin, thin = lens$thin, v0 = v0, v1 = v1,
                               keep = integer(), chains = chains, chain_offset = 0)
  float64 <- isTRUE(control$float64)
  nnctl <- list(device = device, float64 = float64, torch_threads = 1L, keep_pred = keep_draws,
                keep_params = keep_draws, init = init,
                weights = if (!is.null(weights)) check_weights(weights, n, arg = "weights", call = call))
  res <- sb_call_engine(cpp_nn_sgmcmc(spec, xd$x, xd$dim, yd$y, if (is.null(nd)) double() else nd$x,
                                      if (is.null(nd)) integer() else nd$dim, ctl, nnctl, run), call = call)
  nn_sgmcmc_fit(res, tab = tab, desc = desc, spec = spec, family = family, levels = yd$levels, model = model,
                method = method, sampler = sampler, n_saved = n_saved, nd = nd, newy = newy_d$y, n_out = n_out,
                settings = list(family = family, method = method, sampler = sampler, iterations = iterations,
                                epochs = iterations / per_epoch, batch_size = batch_size, burnin = lens$burnin,
                                thin = lens$thin, v0 = v0, v1 = v1, sparse_layers = sparse_layers, chains = chains,
                                nobs = n, input = xd$shape, control = control, float64 = float64,
                                threads = run$threads, keep_draws = keep_draws, n_out = n_out),
                seed = run$seed, call = mcall, t0 = t0)
}

# The starting parameters of a network's chains, n_parameters x chains (NULL: the default initialization), from
# sgmcmc_control(init = ): a vector, a matrix, or a network fit of the same architecture (sgld_sa: the final
# state of chain c; wbb_nn with kept weights: draw c; both recycled).
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
    src <- if (inherits(init, "sb_sgld_sa_nn")) init$weights_final else init$weights
    if (is.null(src)) {
      sb_abort(c("{.code sgmcmc_control(init = )} is a {.fn wbb_nn} fit without its weights.",
                 i = "Refit it with {.code keep_weights = TRUE}."), arg = "init", call = call)
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
nn_sgmcmc_fit <- function(res, tab, desc, spec, family, levels, model, method, sampler, n_saved, nd, newy, n_out,
                          settings, seed, call, t0) {
  chains <- res$chains
  sc <- do.call(rbind, lapply(chains, `[[`, "scalars"))
  colnames(sc) <- c("sigma", "saved", "traced", "iterations_done", "diverged", "diverged_at")
  interrupted <- isTRUE(res$interrupted)
  saved <- sc[, "saved"]
  if (all(saved == 0)) {
    if (interrupted) rlang::interrupt()
    sb_abort(c("No draw was kept: every chain {if (any(sc[, 'diverged'] > 0)) 'diverged' else 'stopped'} before the end of burn-in.",
               x = "{res$messages[res$messages != ''][1]}",
               i = "Reduce {.code sgmcmc_control(step_size = )}, or standardize the inputs."),
             kind = "divergence")
  }
  wts <- saved / sum(saved)
  pnames <- nn_param_names(desc)
  wavg <- function(name) Reduce(`+`, Map(function(ch, w) if (w > 0) ch[[name]] * w else 0, chains, wts))
  param_mean <- stats::setNames(wavg("param_mean"), pnames)
  rho <- rowMeans(do.call(cbind, lapply(chains, `[[`, "rho")))
  names(rho) <- pnames
  trace <- do.call(rbind, lapply(seq_along(chains), function(c) {
    k <- sc[c, "traced"]
    tr <- matrix(chains[[c]]$trace, ncol = 9L, byrow = TRUE)[seq_len(k), , drop = FALSE]
    colnames(tr) <- c("iteration", "sigma", "delta", "mean_rho", "loss", "eps", "tau", "sparsity", "accuracy")
    data.frame(chain = rep(c, k), tr)
  }))
  pred_mean <- pred <- NULL
  if (!is.null(nd)) {
    pm <- matrix(wavg("pred_mean"), nd$n, n_out, byrow = TRUE)
    pred_mean <- if (n_out == 1L) drop(pm) else if (family == "multinomial") `dimnames<-`(pm, list(NULL, levels)) else pm
    if (settings$keep_draws) {
      m <- nd$n * n_out
      flat <- unlist(Map(function(ch, k) ch$pred_draws[seq_len(k * m)], chains, saved), use.names = FALSE)
      pred <- aperm(array(flat, c(n_out, nd$n, sum(saved))), c(3L, 2L, 1L))  # draws x examples x outputs
      if (n_out == 1L) pred <- matrix(pred, sum(saved), nd$n)
      else if (family == "multinomial") dimnames(pred) <- list(NULL, NULL, levels)  # else draws x n x q outputs
    }
  }
  weights <- NULL
  if (settings$keep_draws) {
    weights <- do.call(rbind, lapply(seq_along(chains), function(c) {
      matrix(chains[[c]]$param_draws, ncol = length(pnames), byrow = TRUE)[seq_len(saved[c]), , drop = FALSE]
    }))
    colnames(weights) <- pnames
  }
  sparse_w <- rep(desc$penalized, desc$size)
  final <- do.call(rbind, lapply(chains, `[[`, "param_final"))
  delta <- do.call(rbind, lapply(chains, `[[`, "delta"))
  colnames(delta) <- desc$group
  delta <- delta[, desc$penalized, drop = FALSE]
  label <- paste0(toupper(sampler), switch(method, sa = "-SA", em = "-EM", none = ""))
  if (settings$control$anneal != 1) label <- paste0("A-", label)
  fit <- structure(list(
    pred = pred, pred_mean = pred_mean, weights = weights, weights_mean = param_mean,
    weights_final = `colnames<-`(final, pnames),
    inclusion = rho[sparse_w], sparsity = if (any(sparse_w)) rowMeans(final[, sparse_w, drop = FALSE] == 0) else NA_real_,
    trace = trace, latent = data.frame(chain = seq_along(chains), sigma = sc[, "sigma"]), delta = delta,
    status = factor(rep("done", sum(saved)), levels = c("done", "diverged", "interrupted", "not run")),
    chain = rep(seq_along(chains), saved), saved = saved,
    iterations_done = sc[, "iterations_done"], diverged_at = ifelse(sc[, "diverged"] > 0, sc[, "diverged_at"], NA),
    interrupted = interrupted, family = family, levels = levels, model = model, layers = tab,
    n_parameters = desc$n_parameters, spec = spec, method = label, seed = seed, call = call, device = res$device,
    settings = settings, timing = c(elapsed = proc.time()[["elapsed"]] - t0)
  ), class = c("sb_sgld_sa_nn", "sb_nn_fit"))
  if (!is.null(newy)) {
    fit$newy <- newy
    if (family == "gaussian") fit$rmse_mean <- sqrt(mean((pred_mean - newy)^2))
    else fit$accuracy_mean <- mean(nn_class(pred_mean, family) == newy)  # binomial q: over examples and outputs
    if (!is.null(pred)) {
      if (family == "gaussian") fit$rmse <- nn_rmse(pred, newy)
      else fit$accuracy <- nn_accuracy(pred, newy, family)
    }
  }
  if (any(sc[, "diverged"] > 0)) {
    bad <- which(sc[, "diverged"] > 0)
    sb_warn(c("{cli::qty(length(bad))}Chain{?s} {bad} diverged (non-finite state) at iteration{?s} {sc[bad, 'diverged_at']}; the fit uses the iterations before.",
              i = "Reduce {.code sgmcmc_control(step_size = )}."), kind = "convergence")
  }
  if (interrupted) {
    sb_warn(c("Interrupted: the fit holds the state reached (iterations per chain: {sc[, 'iterations_done']}).",
              i = "Averages use the draws kept until then."), kind = "interrupted")
  }
  fit
}

#' @export
print.sb_sgld_sa_nn <- function(x, ...) {
  s <- x$settings
  cat(sprintf("<sb_sgld_sa_nn> %s posterior of a %s network (%s parameters), %s, on %s\n", x$method,
              toupper(x$model$type), format(x$n_parameters, big.mark = ","), x$family, x$device))
  cat(sprintf("  %d chain%s x %s iterations (%.4g epochs of batch %d), burn-in %s, thin %s: %s kept draws\n",
              s$chains, if (s$chains > 1) "s" else "", format(s$iterations, big.mark = ","), s$epochs, s$batch_size,
              format(s$burnin, big.mark = ","), s$thin, sum(x$saved)))
  cat(sprintf("  SSGL prior on weight layer%s %s (v0 %.3g, v1 %.3g); final sparsity %s; mean inclusion %.3f\n",
              if (length(s$sparse_layers) == 1) "" else "s",
              if (length(s$sparse_layers)) paste(s$sparse_layers, collapse = ", ") else "none", s$v0, s$v1,
              paste(sprintf("%.3f", x$sparsity), collapse = "/"), if (length(x$inclusion)) mean(x$inclusion) else NA))
  if (!is.null(x$accuracy_mean)) cat(sprintf("  test accuracy of the posterior mean: %.4f\n", x$accuracy_mean))
  if (!is.null(x$rmse_mean)) cat(sprintf("  test RMSE of the posterior mean: %.4g\n", x$rmse_mean))
  cat(sprintf("  %.1f s%s\n", x$timing[["elapsed"]], if (isTRUE(x$interrupted)) " (interrupted)" else ""))
  invisible(x)
}
