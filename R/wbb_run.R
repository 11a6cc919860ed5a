# The one R front end of every weighted-Bayesian-bootstrap run: wbb(), trend_filter_wbb() and
# blasso_compare() (its WBB arm and, with the same rules, its datasets). It resolves the run settings (seed,
# threads, progress: run_settings() in R/seed.R; chunks, future), hands each chunk's settings to the engine as ONE
# list (the run list extended by the draw range; read by src/sb_glue.h, wbb_settings(), into the engine's
# wbb::Settings, which extends parallel::RunSettings), runs the chunks in this process or through
# future.apply, keeps the finished draws of an interrupted run (or stops with an interrupt: wbb_run()), and
# combines the chunks. The engine's driver (inst/include/scalebayes/wbb/driver.hpp) keys draw t by the
# stream (seed, t), so every split gives the same result.

# Settings of one run. `chunks = NULL`: one chunk per future worker when `future = TRUE`, else one chunk.
wbb_run_settings <- function(units, threads = NULL, seed = NULL, quiet = NULL, chunks = NULL, future = FALSE,
                             call = rlang::caller_env()) {
  future <- check_flag(future, arg = "future", call = call)
  chunks <- check_count(chunks, arg = "chunks", call = call, allow_null = TRUE)
  if (future && !requireNamespace("future.apply", quietly = TRUE)) {
    sb_abort(c("{.arg future} = TRUE needs the {.pkg future.apply} package.",
               i = "Install it with {.code install.packages(\"future.apply\")}."),
             kind = "dependency", arg = "future", call = call)
  }
  if (is.null(chunks)) chunks <- if (future) future::nbrOfWorkers() else 1L
  c(run_settings(seed, threads, quiet, call),
    list(units = units, chunks = max(1L, min(as.integer(chunks), units)), future = future,
         start = proc.time()[["elapsed"]]))
}

# The list the engine reads for draws first + 1 .. first + count (src/sb_glue.h, wbb_settings()): the run list
# (engine_run(), R/seed.R) plus the draw range and the weight rules (by name: wbb/driver.hpp's tables).
wbb_engine_settings <- function(rs, first, count, prior = "separate", dist = "exponential") {
  c(engine_run(rs), list(first = as.double(first), draws = as.double(count),
                         dist = dist, prior = prior))
}

# Run engine(first, count) over the chunks of 1..units; returns the chunks' results in order. An interrupted
# chunk (list element or attribute `interrupted`): without `cut`, an R interrupt before anything is combined;
# with `cut`, the run keeps what finished (?scalebayes-interrupts): in this process no later chunk runs, the
# interrupted chunk is cut to its finished prefix by cut(part, k) (k: the chunk's `prefix`, the units 1..k of
# the chunk that finished) and the chunks after it are dropped. The result then has the attribute
# `interrupted` = list(completed = units kept, requested = rs$units); nothing kept is an R interrupt.
wbb_run <- function(rs, engine, call = rlang::caller_env(), cut = NULL) {
  is_stopped <- function(r) isTRUE(if (is.list(r)) r$interrupted else attr(r, "interrupted"))
  idx <- sb_chunk_indices(rs$units, rs$chunks)
  parts <- if (rs$future || is.null(cut)) {
    sb_call_engine(sb_map_chunks(rs$units, rs$chunks, engine, use_future = rs$future, call = call), call = call)
  } else {
    out <- vector("list", length(idx))
    for (j in seq_along(idx)) {
      out[[j]] <- sb_call_engine(engine(first = idx[[j]][1] - 1L, count = length(idx[[j]])), call = call)
      if (is_stopped(out[[j]])) break  # the chunks after an interrupted one do not run
    }
    out
  }
  stopped <- vapply(parts, is_stopped, logical(1))
  if (!any(stopped)) return(parts)
  if (is.null(cut)) rlang::interrupt()
  j <- which(stopped)[1L]
  k <- as.double(parts[[j]]$prefix %||% 0)
  kept <- c(lengths(idx)[seq_len(j - 1L)], k)
  if (sum(kept) == 0) rlang::interrupt()
  if (sum(kept) == rs$units) return(parts[seq_len(j)])  # stopped after the last draw: nothing is missing
  parts <- if (k > 0) c(parts[seq_len(j - 1L)], list(cut(parts[[j]], k))) else parts[seq_len(j - 1L)]
  attr(parts, "interrupted") <- list(completed = sum(kept), requested = rs$units)
  parts
}

# The first k rows (matrices) or elements (vectors) of every component of one chunk's result named in `rows`
# (lists of matrices: each); the chunk's other components are kept as they are.
wbb_cut_rows <- function(part, k, rows) {
  first <- function(v) {
    if (is.list(v)) return(lapply(v, first))
    if (is.matrix(v)) v[seq_len(k), , drop = FALSE] else v[seq_len(k)]
  }
  for (nm in intersect(rows, names(part))) part[[nm]] <- first(part[[nm]])
  part
}

# Combine one component of the chunks: rows of matrices, or concatenated vectors. A single chunk is returned
# as it is (no copy).
wbb_combine <- function(parts, name) wbb_bind(lapply(parts, `[[`, name))
wbb_bind <- function(v) {
  if (length(v) == 1L) return(v[[1L]])
  if (is.matrix(v[[1L]])) do.call(rbind, v) else unlist(v)
}

# Seconds since the run's settings were resolved.
wbb_elapsed <- function(rs) proc.time()[["elapsed"]] - rs$start

# Old argument spellings, still accepted with a deprecation warning.
wbb_lambda_rule <- function(rule, arg = "lambda_rule", call = rlang::caller_env()) {
  old <- c(lambda_min = "min", lambda_1se = "1se")
  if (is.character(rule) && length(rule) == 1L && rule %in% names(old)) {
    sb_warn(c("{.arg {arg}} = {.val {rule}} is deprecated; use {.val {old[[rule]]}}.",
              i = "All WBB functions now spell the rules {.val min} and {.val 1se}."), kind = "deprecated")
    return(old[[rule]])
  }
  if (identical(rule, c("min", "1se"))) return("min")
  if (!is.character(rule) || length(rule) != 1L || !rule %in% c("min", "1se")) {
    sb_abort(c("{.arg {arg}} must be {.val min} or {.val 1se}.", x = "You supplied {.val {format(rule)}}."),
             arg = arg, call = call)
  }
  rule
}
