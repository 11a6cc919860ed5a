# Builds bench/posteriordb/reference_summaries.csv from posteriordb's reference draws (NUTS: 10 chains of 1,000
# thinned draws per posterior), read from a git clone of stan-dev/posteriordb (its bare git directory is enough):
#   Rscript bench/posteriordb/make_reference.R /path/to/posteriordb/.git
# Per parameter: the mean and sd over the 10,000 draws, their number, the bulk ESS (posterior::ess_bulk of the
# 10 chains) and the Monte-Carlo standard errors of the mean and the sd (posterior::mcse_mean, mcse_sd).
stopifnot(requireNamespace("jsonlite", quietly = TRUE), requireNamespace("posterior", quietly = TRUE))
git_dir <- commandArgs(trailingOnly = TRUE)[1]
posteriors <- read.csv("bench/posteriordb/posteriors.csv", stringsAsFactors = FALSE)
commit <- system2("git", c("--git-dir", git_dir, "rev-parse", "HEAD"), stdout = TRUE)
rows <- list()
for (p in posteriors$posterior) {
  zip <- tempfile(fileext = ".zip")
  system2("git", c("--git-dir", git_dir, "show",
                   sprintf("HEAD:posterior_database/reference_posteriors/draws/draws/%s.json.zip", p)), stdout = zip)
  js <- jsonlite::fromJSON(unz(zip, paste0(p, ".json")), simplifyVector = FALSE)
  pars <- names(js[[1]])
  for (par in pars) {
    x <- sapply(js, function(ch) unlist(ch[[par]]))  # draws x chains
    rows[[length(rows) + 1]] <- data.frame(
      posterior = p, parameter = par, mean = mean(x), sd = stats::sd(as.vector(x)), draws = length(x),
      ess_bulk = posterior::ess_bulk(x), mcse_mean = posterior::mcse_mean(x), mcse_sd = posterior::mcse_sd(x))
  }
}
out <- do.call(rbind, rows)
num <- vapply(out, is.numeric, TRUE)
out[num & names(out) != "draws"] <- lapply(out[num & names(out) != "draws"], signif, 7)
write.csv(out, "bench/posteriordb/reference_summaries.csv", row.names = FALSE)
cat(sprintf("posteriordb commit %s: %d parameters of %d posteriors\n", commit, nrow(out), nrow(posteriors)))

# The test suite's copy (tests/testthat/test-posteriordb.R): the Stan code, data and reference summaries of the
# posteriors it checks, in one small file (bench/ is not in the built package).
fixture_posteriors <- c("mesquite-logmesquite", "nes2000-nes")
fx <- lapply(fixture_posteriors, function(p) {
  row <- posteriors[posteriors$posterior == p, ]
  list(model = row$model, code = paste(readLines(file.path("bench/posteriordb/models", paste0(row$model, ".stan"))),
                                       collapse = "\n"),
       data = jsonlite::fromJSON(file.path("bench/posteriordb/data", paste0(row$data, ".json")), simplifyVector = TRUE),
       reference = out[out$posterior == p, c("parameter", "mean", "sd", "ess_bulk")])
})
names(fx) <- fixture_posteriors
attr(fx, "source") <- sprintf("stan-dev/posteriordb commit %s (BSD-3); bench/posteriordb/README.md", commit)
dir.create("tests/testthat/fixtures", showWarnings = FALSE)
saveRDS(fx, "tests/testthat/fixtures/posteriordb.rds", version = 2)
