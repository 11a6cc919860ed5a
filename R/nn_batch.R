# Batched WBB draws of networks (engine: inst/include/scalebayes/nn/batched.hpp): the `batch` argument of
# wbb_nn() / wbb(model = ) and its automatic rule (inst/design-nn-batched.md, measurements in bench/RESULTS.md).

# "auto" batches networks of at most this many parameters on the CPU. Measured (bench/batched.R, 2-core AMD
# EPYC, LibTorch 1.13.1 with OpenBLAS): batching is 8-9 times as fast at 3,301 parameters (13-50-50-1), about 5
# times at 18,000, and about as fast as one network per thread from roughly 10^5 parameters (the 784-128-64-10
# MLP, 109,386); above that the matrix products dominate and batching saves only per-operation overhead
# while its batch's activations leave the cache.
nn_batch_max_params <- 120000

# The engine's code for `batch`: 0 one network per thread; g > 0 batched groups of g members; -1 batched, one
# group per worker thread.
nn_wbb_batch <- function(batch, spec, device, call) {
  if (is.character(batch)) {
    if (length(batch) != 1L || is.na(batch) || batch != "auto") {
      sb_abort(c("{.arg batch} must be {.val auto}, {.code TRUE}, {.code FALSE} or a number of draws per batch.",
                 x = "You supplied {.obj_type_friendly {batch}}."), arg = "batch", call = call)
    }
  } else if (is.logical(batch)) {
    batch <- check_flag(batch, arg = "batch", call = call)
  } else {
    batch <- check_count(batch, max = 1e7, arg = "batch", call = call)
  }
  if (isFALSE(batch)) return(0L)
  sup <- cpp_nn_batch_support(spec)
  if (!sup$ok) {
    if (identical(batch, "auto")) return(0L)
    sb_abort(c("This network cannot be trained batched: {sup$reason}.",
               i = "Use {.code batch = FALSE} (or {.code \"auto\"}): one network per thread."),
             arg = "batch", call = call)
  }
  if (isTRUE(batch)) return(-1L)
  if (is.numeric(batch)) return(as.integer(batch))
  # "auto": always on a GPU (one network at a time there otherwise); on the CPU for small networks
  if (identical(cpp_nn_resolve_device(device), "cuda")) return(-1L)
  if (cpp_nn_describe(spec)$n_parameters <= nn_batch_max_params) -1L else 0L
}
