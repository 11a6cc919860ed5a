# Batched WBB draws of networks (engine: inst/include/scalebayes/nn/batched.hpp): the `batch` argument of
# wbb_nn() / wbb(model = ) and its automatic rule (inst/design-nn-batched.md).

# The engine's code for `batch`: 0 one network per thread; g > 0 batched groups of g members; -1 batched, one
# group per worker thread.
nn_wbb_batch <- function(batch, spec, xd, control, rs, device, call) {
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
  sup <- cpp_nn_batch_support(spec)
  if (isFALSE(batch)) return(0L)
  if (!sup$ok) {
    if (identical(batch, "auto")) return(0L)
    sb_abort(c("This network cannot be trained batched: {sup$reason}.",
               i = "Use {.code batch = FALSE} (or {.code \"auto\"}): one network per thread."),
             arg = "batch", call = call)
  }
  if (isTRUE(batch)) return(-1L)
  if (is.numeric(batch)) return(as.integer(batch))
  0L  # "auto": decided below once measured
}
