# Reruns the fingerprint configurations on the installed build and reports, per configuration, whether the
# draws are IDENTICAL (bit for bit) to tests/testthat/fingerprints.rds, and the largest relative difference.
#   Rscript tools/compare-fingerprints.R
suppressPackageStartupMessages(library(scalebayes))
`%||%` <- function(a, b) if (is.null(a)) b else a
source("tests/testthat/helper-fingerprints.R")
source("tests/testthat/helper-sgmcmc-engine.R")  # sgld_sa_engine(), which the network configurations call
ref <- readRDS("tests/testthat/fingerprints.rds")
runs <- fingerprint_runs()
for (nm in names(ref)) {
  got <- runs[[nm]]()
  same <- identical(unname(got), unname(ref[[nm]]))
  rel <- max(mapply(function(a, b) max(abs(a - b) / pmax(1, abs(b))), got, ref[[nm]]))
  cat(sprintf("%-26s %s  max rel diff %.1e\n", nm, if (same) "identical" else "DIFFERENT", rel))
}
