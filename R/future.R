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
