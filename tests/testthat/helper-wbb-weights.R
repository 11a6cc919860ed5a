# The data and prior weights of WBB draws 1..draws of `seed`, recomputed by the engine's own driver
# (wbb::run_draws() with a recording solver, src/wbb_driver_check.cpp): the streams (seed, t) that wbb(),
# trend_filter_wbb() and wbb_nn() use. The settings list is written here with the engine's names (wbb/driver.hpp's
# tables: prior "separate", "common", "none"; dist "exponential", "multinomial"), not by the R layer's
# wbb_engine_settings(), so a wrong list there is not copied into the reference.
# Returns list(w = draws x n data weights, w0 = draws x m prior weights; m = n_prior, 1 or 0).
wbb_recorded_weights <- function(n, draws, seed, prior = "separate", n_prior = 0L, dist = "exponential") {
  st <- list(seed = seed, threads = 1L, quiet = TRUE, first = 0, draws = as.double(draws),
             dist = dist, prior = prior)  # by name: the engine's tables (wbb/driver.hpp)
  rec <- cpp_wbb_driver_check(rep(0, n), 0, 0L, as.integer(n_prior), st)
  m <- ncol(rec) - n - 1L
  list(w = rec[, seq_len(n), drop = FALSE], w0 = rec[, n + seq_len(m), drop = FALSE])
}
