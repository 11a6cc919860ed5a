# Batched WBB draws of networks (engine: inst/include/scalebayes/nn/batched.hpp): the `batch` argument of
# wbb_nn() / wbb(model = ) and its automatic rule (inst/design-nn-batched.md, measurements in bench/RESULTS.md).

# "auto" batches every network with a batched form. Measured (bench/batched.R section 3, 2-core AMD EPYC shared
# with other jobs, LibTorch 1.13.1 with OpenBLAS): with the engine's group sizes (one group per thread, at most
# nn::kBatchGroupParams = 131,072 parameters per group, so that a group's buffers stay in the cache) batching is
# 8 times as fast as one network per thread at 3,301 parameters (13-50-50-1), 1.6-1.8 times at 70,000,
# 1.35-1.6 times at the 784-128-64-10 MLP and still 1.5 times at 1.3 million parameters (784-1024-512-1): one
# network per thread did not win again in that range. Where it would have -- one group of 100 draws of the
# 784-128-64-10 MLP, 0.73 times as fast, its optimizer sweeping 44 MB buffers every step -- the group size
# cap takes over, down to groups of one draw from 131,072 parameters (still faster: no autograd graph, one
# optimizer tensor). Convolutional networks (bench/batched.R section 7): a second cap, about 2 million
# activation values per group (nn::kBatchGroupActivations), keeps image CNNs at 1.0-1.3 times one network per
# thread (0.78 times in one group of 16 draws before it); a small conv1d network is 3.3 times as fast.
# The engine's code for `batch`: 0 one network per thread; g > 0 batched groups of g members; -1 batched, one
# group per worker thread.
nn_wbb_batch <- function(batch, spec, call) {
  nn_batch_code(batch, function() cpp_nn_batch_support(spec), "This network cannot be trained batched",
                "one network per thread", "draws", call)
}

# SG-MCMC chains of a network (engine: inst/include/scalebayes/nn/batched_sgmcmc.hpp): the `batch` argument of
# sgld_sa() / hamcmc_sa() with a network `model`. "auto" batches whenever the chains have a batched form (linear,
# convolution, pooling, reshape and activation layers, any sampler, with or without pruning; HAMCMC-SA's dense
# sa_form = "matrix" is regression only);
# layers without a batched form run one network per chain. Measured (bench/batched.R, section
# "Batched SG-MCMC chains", bench/RESULTS.md): 8 SGHMC-SA chains of the 13-50-50-1 Boston MLP, 2,000 iterations,
# batched 4.0-4.2 times as fast as one network per chain on one thread, 2.7-3.5 times on two (a loaded 2-core VM).
# `ctl`: the engine control list (sgmcmc_engine_control()).
# One chain: "auto" runs one network. A batched group of one chain runs as two members (a neutral placeholder
# keeps the chain bitwise the same as in larger groups, nn/batched_sgmcmc.hpp), so it does up to twice the
# arithmetic: measured (2026-11-28, one thread, SGHMC-SA, fixed steps, two runs each) one network against batched
# 2.7-3.3 / 2.9-3.3 s for the 13-50-50-1 Boston MLP (2,000 iterations), 1.4-1.8 / 2.5-2.7 s for the
# 784-128-64-10 MLP on 1,000 MNIST digits (300 iterations), 2.2-2.6 / 3.1-3.5 s for the conv1d motif network
# and 1.8-1.9 / 3.4-3.9 s for a small MNIST CNN (200 iterations). `batch = TRUE` or a number still batches.
nn_sgmcmc_batch <- function(batch, spec, ctl, call) {
  code <- nn_batch_code(batch, function() cpp_nn_sgmcmc_batch_support(spec, ctl), "These chains cannot run batched",
                        "one network per chain", "chains", call)
  if (identical(batch, "auto") && ctl$chains == 1L && code != 0L) return(structure(0L, reason = "one chain"))
  code
}

# Why a fit with engine batch code `code` trains one network at a time (NA when it runs batched): the fits'
# `settings$unbatched`.
nn_unbatched_reason <- function(code) {
  if (code != 0L) return(NA_character_)
  attr(code, "reason") %||% NA_character_
}

# The engine's code for `batch` (shared by WBB draws and SG-MCMC chains): 0 one network per thread; g > 0
# batched groups of g members; -1 batched, one group per worker thread. `support()` returns list(ok, reason).
# A code of 0 carries attribute "reason": why the fit trains one network at a time (the engine's sentence
# from its kind table for "auto" on a network without a batched form; nn_unbatched_reason() reads it).
nn_batch_code <- function(batch, support, what, unbatched, members, call) {
  if (is.character(batch)) {
    if (length(batch) != 1L || is.na(batch) || batch != "auto") {
      sb_abort(c("{.arg batch} must be {.val auto}, {.code TRUE}, {.code FALSE} or a number of {members} per batch.",
                 x = "You supplied {.obj_type_friendly {batch}}."), arg = "batch", call = call)
    }
  } else if (is.logical(batch)) {
    batch <- check_flag(batch, arg = "batch", call = call)
  } else {
    batch <- check_count(batch, max = 1e7, arg = "batch", call = call)
  }
  if (isFALSE(batch)) return(structure(0L, reason = "batch = FALSE"))
  sup <- support()
  if (!sup$ok) {
    if (identical(batch, "auto")) return(structure(0L, reason = sup$reason))
    sb_abort(c("{what}: {sup$reason}.",
               i = "Use {.code batch = FALSE} (or {.code \"auto\"}): {unbatched}."),
             arg = "batch", call = call)
  }
  if (isTRUE(batch)) return(-1L)
  if (is.numeric(batch)) return(as.integer(batch))
  -1L  # "auto" with a batched form: batched (engine group sizes), on the CPU and on a GPU
}
