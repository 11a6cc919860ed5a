# Writes tests/testthat/fingerprints.rds from the installed build: the draws of the configurations in
# tests/testthat/helper-fingerprints.R. Run it only on a build whose draws are the reference (it was run on
# the build before the engine seams of issue 20); test-fingerprints.R compares later builds against it.
#   Rscript tools/make-fingerprints.R
suppressPackageStartupMessages(library(scalebayes))
`%||%` <- function(a, b) if (is.null(a)) b else a
source("tests/testthat/helper-fingerprints.R")
runs <- fingerprint_runs()
out <- lapply(names(runs), function(nm) {
  t0 <- proc.time()[["elapsed"]]
  v <- runs[[nm]]()
  message(sprintf("%-26s %6.1f s  %s", nm, proc.time()[["elapsed"]] - t0,
                  paste(vapply(v, length, 1L), collapse = "/")))
  v
})
names(out) <- names(runs)
attr(out, "made") <- list(date = format(Sys.time(), tz = "UTC"), commit = system("git rev-parse HEAD", intern = TRUE),
                          libtorch = isTRUE(scalebayes_info()$torch$available))
saveRDS(out, "tests/testthat/fingerprints.rds", version = 2)
