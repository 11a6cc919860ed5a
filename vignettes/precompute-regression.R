# Precompute Tables 1-3 of the WBB paper for vignettes/regression.Rmd at the paper's B = 500 datasets per cell.
# Resumable: runs blocks of `block` datasets for all 27 cells, saving each block (per-dataset results) under
# data-raw/blasso-compare-parts/ (route "exact") or data-raw/blasso-compare-paper-parts/ (route "paper_code")
# and skipping blocks already there; then combines whatever blocks exist into the summary the vignette reads,
# inst/extdata/blasso-compare.rds or inst/extdata/blasso-compare-paper.rds (per-dataset rows dropped to keep
# it small; kept for the paper_code route, which the vignette uses for paired differences). Run from the
# package root:
#   Rscript vignettes/precompute-regression.R [B = 500] [block = 50] [threads = 2] [combine_only = 0] [route = exact]
#                                             [blasso_only = 0]
# blasso_only = 1 (route paper_code): rerun only the Bayesian-lasso arm for the blocks already in
# data-raw/blasso-compare-paper-parts (same blocks, datasets and seed; the WBB arm and the data do not depend on
# it), saving data-raw/blasso-compare-paper-blasso-parts/part-*.rds; when such a part exists for every block,
# the combined result takes its Bayesian-lasso columns from them. Used after the 2026-11-24 change of the route's
# Bayesian lasso (monomvn's icept = FALSE): e.g. Rscript vignettes/precompute-regression.R 500 10 2 0 paper_code 1
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
blasso_only <- length(argv) >= 6 && argv[6] == "1"
bdir <- "data-raw/blasso-compare-paper-blasso-parts"
dir.create(dir, recursive = TRUE, showWarnings = FALSE)
if (blasso_only && !combine_only) {
  stopifnot(route == "paper_code")
  dir.create(bdir, recursive = TRUE, showWarnings = FALSE)
  for (f in list.files(dir, pattern = "^part-.*\\.rds$")) {
    if (file.exists(file.path(bdir, f))) next
    old <- attr(readRDS(file.path(dir, f)), "config")
    first <- as.integer(sub("^part-0*([0-9]+)\\.rds$", "\\1", f))
    t <- system.time(part <- blasso_compare(datasets = old$datasets, first_dataset = first, seed = old$seed,
                                            threads = threads, quiet = TRUE, route = route,
                                            methods = "blasso"))[["elapsed"]]
    attr(part, "config")$elapsed <- t
    saveRDS(part, file.path(bdir, f))
    cat(sprintf("%s Bayesian-lasso arm, datasets %d-%d: %.1f s\n", format(Sys.time()), first,
                first + old$datasets - 1L, t))
  }
}
if (!combine_only && !blasso_only) for (first in seq(1L, B, by = block)) {
  f <- file.path(dir, sprintf("part-%04d.rds", first))
  if (file.exists(f)) next
  t <- system.time(part <- blasso_compare(datasets = min(block, B - first + 1L), first_dataset = first,
                                          seed = 20210421, threads = threads, quiet = TRUE,
                                          route = route))[["elapsed"]]
  attr(part, "config")$elapsed <- t
  saveRDS(part, f)
  cat(sprintf("%s datasets %d-%d: %.1f s\n", format(Sys.time()), first, first + block - 1L, t))
}
files <- list.files(dir, pattern = "^part-.*\\.rds$")
parts <- lapply(file.path(dir, files), readRDS)
if (route == "paper_code" && dir.exists(bdir)) {
  have <- file.exists(file.path(bdir, files))
  if (all(have)) {  # the Bayesian-lasso columns from the rerun, dataset by dataset
    bcols <- grep("^blasso_", names(attr(parts[[1]], "per_dataset")), value = TRUE)
    key <- c("n_rule", "setting", "p", "dataset")
    parts <- lapply(seq_along(parts), function(i) {
      per <- attr(parts[[i]], "per_dataset")
      nb <- attr(readRDS(file.path(bdir, files[i])), "per_dataset")
      j <- match(do.call(paste, per[key]), do.call(paste, nb[key]))
      stopifnot(!anyNA(j))
      per[bcols] <- nb[j, bcols]
      attr(parts[[i]], "per_dataset") <- per
      parts[[i]]
    })
    cat("Bayesian-lasso columns taken from", bdir, "\n")
  } else if (any(have)) {
    cat(sprintf("%s: %d of %d blocks rerun; combining the earlier results\n", bdir, sum(have), length(have)))
  }
}
all <- blasso_compare_combine(parts)
attr(all, "config")$block_seconds <- vapply(parts, function(x) attr(x, "config")$elapsed, numeric(1))
# per-dataset rows are kept for the paper_code route (the vignette's paired WBB - BLASSO differences)
if (route == "exact") attr(all, "per_dataset") <- NULL
saveRDS(all, out, compress = "xz")
print(all)
