# Splitting work (draws, chains, datasets) into chunks run through the future framework.
#
# Package code never calls future::plan(): the user's plan decides where chunks run (sequential,
# multisession, cluster, batchtools/Slurm). Because every item draws from its own stream keyed by
# (seed, item index), a chunked run is identical to a single-process run.

#' Split indices 1..n into at most `chunks` contiguous blocks.
#' @noRd
sb_chunk_indices <- function(n, chunks) {
  chunks <- max(1L, min(as.integer(chunks), n))
  if (n == 0L) return(list())
  if (chunks == 1L) return(list(seq_len(n)))
  unname(split(seq_len(n), cut(seq_len(n), breaks = chunks, labels = FALSE)))
}

#' Run fun(first, count) over chunks of 1..n, either in this process or through future.apply.
#' fun returns a list; the results are returned as a list in chunk order.
#' @noRd
sb_map_chunks <- function(n, chunks, fun, use_future = FALSE, call = rlang::caller_env()) {
  idx <- sb_chunk_indices(n, chunks)
  run_one <- function(i) fun(first = i[1] - 1L, count = length(i))
  if (!use_future) return(lapply(idx, run_one))
  if (!requireNamespace("future.apply", quietly = TRUE)) {
    sb_abort(c("{.arg future} = TRUE needs the {.pkg future.apply} package.",
               i = "Install it with {.code install.packages(\"future.apply\")}."),
             kind = "dependency", arg = "future", call = call)
  }
  future.apply::future_lapply(idx, run_one, future.seed = NULL,
                              future.packages = "scalebayes", future.globals = list(fun = fun))
}

# Run a sampler's chains (sgld_sa(), hamcmc_sa(): regression and networks): in this process, or with
# `future = TRUE` and more than one chain in chunks of chains through future (sb_map_chunks()). engine(first,
# count, run, in_process) runs chains first + 1 .. first + count under the run settings `run` (chain c draws
# from stream c wherever it runs, so every split gives the same draws); the chunks run quiet (no progress bars
# from future workers). `chunks`: NULL, one per future worker (2 without the future package, where
# sb_map_chunks() stops with its classed error); at most `chains`. A chunked run's result: the chunks' chains
# in order, `interrupted` if any chunk was, and the fields combine(parts) makes of the chunks' results.
#' @noRd
sb_run_chain_chunks <- function(chains, future, chunks, run, engine, combine = NULL, call = rlang::caller_env()) {
  if (!future || chains == 1L) return(sb_call_engine(engine(0, chains, run, TRUE), call = call))
  chunks <- if (!is.null(chunks)) min(chains, check_count(chunks, arg = "chunks", call = call))
            else if (requireNamespace("future", quietly = TRUE)) min(chains, future::nbrOfWorkers()) else 2L
  run_chunk <- utils::modifyList(run, list(quiet = TRUE))
  parts <- sb_call_engine(sb_map_chunks(chains, chunks, function(first, count) engine(first, count, run_chunk, FALSE),
                                        use_future = TRUE, call = call), call = call)
  c(list(chains = do.call(c, lapply(parts, `[[`, "chains")),
         interrupted = any(vapply(parts, function(r) isTRUE(r$interrupted), logical(1)))),
    if (!is.null(combine)) combine(parts))
}
