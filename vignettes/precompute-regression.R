# Precompute Tables 1-3 of the WBB paper for vignettes/regression.Rmd at the paper's B = 500 datasets per cell.
# Resumable: runs blocks of `block` datasets for all 27 cells, saving each block (per-dataset results) under
# data-raw/blasso-compare-parts/ (route "exact") or data-raw/blasso-compare-paper-parts/ (route "paper_code")
# and skipping blocks already there; then combines whatever blocks exist into the summary the vignette reads,
# inst/extdata/blasso-compare.rds or inst/extdata/blasso-compare-paper.rds (per-dataset rows dropped to keep
# it small; kept for the paper_code route, which the vignette uses for paired differences). Run from the
# package root:
#   Rscript vignettes/precompute-regression.R [B = 500] [block = 50] [threads = 2] [combine_only = 0] [route = exact]
library(scalebayes)
argv <- commandArgs(trailingOnly = TRUE)
args <- suppressWarnings(as.integer(argv))
B <- if (length(args) >= 1) args[1] else 500L
block <- if (length(args) >= 2) args[2] else 50L
threads <- if (length(args) >= 3) args[3] else 2L
combine_only <- length(args) >= 4 && args[4] == 1L
route <- if (length(argv) >= 5) argv[5] else "exact"
dir <- if (route == "exact") "data-raw/blasso-compare-parts" else "data-raw/blasso-compare-paper-parts"
out <- if (route == "exact") "inst/extdata/blasso-compare.rds" else "inst/extdata/blasso-compare-paper.rds"
dir.create(dir, recursive = TRUE, showWarnings = FALSE)
if (!combine_only) for (first in seq(1L, B, by = block)) {
  f <- file.path(dir, sprintf("part-%04d.rds", first))
  if (file.exists(f)) next
  t <- system.time(part <- blasso_compare(datasets = min(block, B - first + 1L), first_dataset = first,
                                          seed = 20210421, threads = threads, quiet = TRUE,
                                          route = route))[["elapsed"]]
  attr(part, "config")$elapsed <- t
  saveRDS(part, f)
  cat(sprintf("%s datasets %d-%d: %.1f s\n", format(Sys.time()), first, first + block - 1L, t))
}
parts <- lapply(list.files(dir, pattern = "^part-.*\\.rds$", full.names = TRUE), readRDS)
all <- blasso_compare_combine(parts)
attr(all, "config")$block_seconds <- vapply(parts, function(x) attr(x, "config")$elapsed, numeric(1))
# per-dataset rows are kept for the paper_code route (the vignette's paired WBB - BLASSO differences)
if (route == "exact") attr(all, "per_dataset") <- NULL
saveRDS(all, out, compress = "xz")
print(all)
