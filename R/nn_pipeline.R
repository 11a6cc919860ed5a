# The one network-fit pipeline (inst/design-nn.md, "How to add a front end"). Every network front end --
# wbb_nn(), sgld_sa() / hamcmc_sa() with a model, bbb() / sparse_vi() (vi_run()) -- is the same six steps, and
# writes only the method's part of each:
#   1. start     nn_start()     the clock, the backend and device, the model and family            (shared)
#   2. validate                 the method's own arguments and run settings                        (the method)
#   3. prepare   nn_prepare()   inputs, responses, the network table and engine spec, standardization,
#                               newx / newy, the minibatch size, the result-size checks            (shared; the
#                               method says what differs: the SSGL layers, example weights, init rule)
#   4. run                      the engine call                                                     (the method)
#   5. decode    R/nn_fit.R     nn_decode_status() / nn_decode_pred() / nn_decode_store()           (shared)
#                               and the method's own fields                                         (the method)
#   6. build     nn_build()     new_sb_nn_fit() with every field steps 1 and 3 determine            (shared)

# Step 1. `family` NULL: chosen from the response in step 3.
nn_start <- function(model, family, device, call, mcall) {
  t0 <- proc.time()[["elapsed"]]
  device <- check_backend(device, call)
  list(t0 = t0, device = device, family = nn_check_model_family(model, family, call), model = model, call = call,
       mcall = mcall)
}

# Step 3. The data and the network of a fit: inputs `xd`, responses `yd` and `family`, `n_out` outputs, the
# resolved layer table `tab`, the engine `spec` and its description `desc`, the minibatch size, test inputs `nd`
# and responses `newy_d`, and the training scale `scaling` (R/nn_standardize.R: x, newx and a gaussian y come back
# on it; NULL without standardization; newy stays on the user's scale).
#   batch_size  the front end's (NULL: min(50, n)); `in_control`: it came from nn_control() (for the messages)
#   init        the engine's initialization rule (0 fan-in, 1 Glorot)
#   ssgl        SG-MCMC: `sparse_layers` picks the weight layers under the SSGL prior (penalized)
#   weights     example weights (their standardization is weighted)
#   units       draws of all fits together, checked against the size of what the run returns (predictions on
#               newx; with `keep_draws`, every parameter); NULL: the front end checks (SG-MCMC keeps a subset)
nn_prepare <- function(ctx, x, y, newx, newy, standardize, batch_size = NULL, in_control = FALSE, init = "fan_in",
                       ssgl = FALSE, sparse_layers = NULL, weights = NULL, units = NULL, keep_draws = FALSE) {
  call <- ctx$call
  standardize <- check_standardize(standardize, call)
  raw <- !standardize  # warn about huge values only when they are not standardized first
  xd <- nn_prepare_x(x, "x", call, warn_scale = raw)
  yd <- nn_prepare_y(y, xd$n, ctx$family, arg = "y", call = call, warn_scale = raw)
  family <- yd$family
  n_out <- if (family == "multinomial") length(yd$levels) else yd$q  # q columns of a gaussian / binomial y
  tab <- nn_resolve(ctx$model, xd$shape, n_out, call = call)
  if (ssgl) {
    weight_rows <- which(nn_kind_is(tab$kind, "sparse"))
    sparse_layers <- nn_sparse_layers(sparse_layers, length(weight_rows), call)
    tab$penalized <- FALSE
    tab$penalized[weight_rows[sparse_layers]] <- TRUE
  }
  spec <- nn_engine_spec(tab, xd$shape, family)
  spec$init <- init  # by name (nn/spec.hpp's init_names)
  if (!is.null(weights)) weights <- check_weights(weights, xd$n, arg = "weights", call = call)
  if (!is.null(batch_size) && !in_control) batch_size <- check_count(batch_size, max = 1e9, arg = "batch_size", call = call)
  batch_size <- check_nn_batch_size(batch_size, xd$n, tab, call = call, in_control = in_control)  # R/validate.R
  nd <- nn_prepare_newx(newx, xd, call, warn_scale = raw)
  newy_d <- NULL
  if (!is.null(newy)) {
    if (is.null(nd)) sb_abort("{.arg newy} needs {.arg newx}.", arg = "newy", call = call)
    newy_d <- nn_prepare_y(newy, nd$n, family, levels = yd$levels, arg = "newy", call = call, q_expected = yd$q,
                           warn_scale = raw)
  }
  sc <- nn_scaling(xd, yd, family, tab, standardize, weights)
  p <- list(xd = nn_scale_x(xd, sc), yd = nn_scale_y(yd, sc), family = family, n_out = n_out, tab = tab, spec = spec,
            desc = cpp_nn_describe(spec), nd = nn_scale_x(nd, sc), newy_d = newy_d, batch_size = batch_size,
            scaling = sc, standardize = standardize, weights = weights, sparse_layers = sparse_layers,
            data = list(x = x, y = y))  # the training data as given (a reference: R copies neither), for the generics
  if (!is.null(units)) {
    if (!is.null(nd)) check_result_size(units, nd$n * n_out, "draws", call = call)  # predictions
    if (keep_draws) check_result_size(units, sum(tab$params), "draws", call = call)  # every parameter
  }
  p
}

# Step 2 of the nn_control() front ends (wbb_nn(), bbb(), sparse_vi()): the control's class, then the epochs and
# minibatch size given as arguments (into the control); the engine's code of its initialization rule.
check_nn_control <- function(control, call) {
  if (!inherits(control, "sb_nn_control")) {
    sb_abort(c("{.arg control} must be made by {.fn nn_control}.", x = "You supplied {.obj_type_friendly {control}}."),
             arg = "control", call = call)
  }
  control
}

nn_control_args <- function(control, epochs, batch_size, call) {
  if (!is.null(epochs)) control$epochs <- check_count(epochs, max = 1e7, arg = "epochs", call = call)
  if (!is.null(batch_size)) control$batch_size <- check_count(batch_size, max = 1e8, arg = "batch_size", call = call)
  control
}

# The classed error of a run whose every draw (fit) diverged, with the fix of an nn_control() method.
nn_abort_diverged <- function(what, standardize, call) {
  sb_abort(c(paste0(what, " (the ", if (grepl("ELBO", what)) "negative ELBO" else "training loss", " became infinite or NaN)."),
             i = "Lower {.arg lr} in {.fn nn_control}{if (standardize) '' else ', or standardize the inputs and responses (standardize = TRUE)'}."),
           kind = "convergence", arg = "control", call = call)
}

# Step 6. The fit, with the fields steps 1 and 3 determine (family, levels, model, layers, spec, description,
# test responses, scaling, the training data `data` (list(x, y) as the front end got them: the generics' default
# data, ?sb_nn_fit-methods), device, seed, call, timing; settings nobs, n_new, input, n_out, standardize, threads)
# and the method's own (`settings` first, then the shared ones it does not set; `...`: new_sb_nn_fit()'s other
# arguments and the method's fields).
nn_build <- function(ctx, p, subclass, method, run, settings, device = ctx$device, ...) {
  shared <- list(nobs = p$xd$n, n_new = if (is.null(p$nd)) 0L else p$nd$n, input = p$xd$shape, n_out = p$n_out,
                 standardize = p$standardize, threads = run$threads)
  new_sb_nn_fit(subclass, method = method, newy = if (!is.null(p$newy_d)) p$newy_d$y, family = p$family,
                levels = p$yd$levels, model = ctx$model, layers = p$tab, spec = p$spec, desc = p$desc,
                settings = c(settings, shared[setdiff(names(shared), names(settings))]), seed = run$seed,
                call = ctx$mcall, device = device, timing = c(elapsed = proc.time()[["elapsed"]] - ctx$t0),
                scaling = p$scaling, data = p$data, ...)
}
