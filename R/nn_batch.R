# The `batch` argument of wbb_nn() / wbb(model = ) (batched WBB draws, engine: inst/include/scalebayes/nn/batched.hpp)
# and of sgld_sa() / hamcmc_sa() with a network `model` (batched SG-MCMC chains, nn/batched_sgmcmc.hpp).
# R checks the argument's type and passes the user's choice through; the engine resolves it in one place,
# nn::decide_batch() (nn/batched.hpp: FALSE, a network without a batched form, "auto" on one chain, held-out
# validation, the group sizes), and returns its decision with the run (cpp_nn_wbb / cpp_nn_sgmcmc: `batch`).
# Why "auto" batches every network with a batched form, measured (bench/batched.R section 3, 2-core AMD EPYC
# shared with other jobs, LibTorch 1.13.1 with OpenBLAS): with the engine's group sizes (one group per thread, at
# most nn::kBatchGroupParams = 131,072 parameters per group, so that a group's buffers stay in the cache) batching
# is 8 times as fast as one network per thread at 3,301 parameters (13-50-50-1), 1.6-1.8 times at 70,000,
# 1.35-1.6 times at the 784-128-64-10 MLP and still 1.5 times at 1.3 million parameters (784-1024-512-1): one
# network per thread did not win again in that range. Where it would have -- one group of 100 draws of the
# 784-128-64-10 MLP, 0.73 times as fast, its optimizer sweeping 44 MB buffers every step -- the group size
# cap takes over, down to groups of one draw from 131,072 parameters (still faster: no autograd graph, one
# optimizer tensor). Convolutional networks (bench/batched.R section 7): a second cap, about 2 million
# activation values per group (nn::kBatchGroupActivations), keeps image CNNs at 1.0-1.3 times one network per
# thread (0.78 times in one group of 16 draws before it); a small conv1d network is 3.3 times as fast.
# SG-MCMC chains (bench/batched.R, "Batched SG-MCMC chains", bench/RESULTS.md): 8 SGHMC-SA chains of the
# 13-50-50-1 Boston MLP, 2,000 iterations, batched 4.0-4.2 times as fast as one network per chain on one
# thread, 2.7-3.5 times on two (a loaded 2-core VM); one chain under "auto" runs one network (nn::decide_batch()
# has the measurement).

# The user's `batch` as the engine takes it: "auto", TRUE / FALSE, or a whole number of `members` per batch.
nn_batch_arg <- function(batch, members, call) {
  if (is.character(batch)) {
    if (length(batch) != 1L || is.na(batch) || batch != "auto") {
      sb_abort(c("{.arg batch} must be {.val auto}, {.code TRUE}, {.code FALSE} or a number of {members} per batch.",
                 x = "You supplied {.obj_type_friendly {batch}}."), arg = "batch", call = call)
    }
    return("auto")
  }
  if (is.logical(batch)) return(check_flag(batch, arg = "batch", call = call))
  check_count(batch, max = 1e7, arg = "batch", call = call)
}

# The engine's decision (the run's `batch` list) as a fit records it: `batched` (what ran), `batch_group` (the
# members per batch asked for; NA: the engine's sizes) and `unbatched` (why one network at a time; NA: batched).
nn_batch_settings <- function(decision) {
  list(batched = isTRUE(decision$batched),
       batch_group = if (isTRUE(decision$batched) && decision$group > 0) as.integer(decision$group) else NA_integer_,
       unbatched = if (isTRUE(decision$batched)) NA_character_ else decision$reason)
}
