# posteriordb (issue 60, item 5): SGLD with every default on a Stan model of posteriordb, against posteriordb's
# NUTS reference posterior. bench/posteriordb.R runs every sampler on 12 posteriors (bench/RESULTS.md,
# "posteriordb"); this file checks the default sampler on two of them, the Bayesian linear regression `blr` with
# two data sets (one compile, about two minutes, extended tier): sblri-blr and sblrc-blr. Their reference
# summaries (mean, sd and bulk ESS over posteriordb's 10,000 draws per parameter), Stan code and data are in
# fixtures/posteriordb.rds (written by bench/posteriordb/make_reference.R; posteriordb is BSD-3).
#
# The criterion is the issue's: every parameter's mean within 0.25 reference sd, every sd ratio in
# [0.75, 1.33]. Its Monte-Carlo error: with a bulk ESS E of the fit and the reference's 10,000 (about
# independent) draws, the error of the mean in reference sds has sd sqrt(1 / E + 1 / 10000), and the log sd
# ratio sd sqrt(1 / (2 E) + 1 / 20000) (a normal's sd from E independent draws). The test first asserts E >= 300,
# so these are at most 0.058 and 0.041: the tolerances are 4.3 and 7 of them (log(0.75) = -0.29,
# log(1.33) = 0.29). A sampler off by 0.25 sd or by 25 % in an sd is then caught (the bench's failing cells
# are off by far more).

pdb_fixture <- readRDS(test_path("fixtures", "posteriordb.rds"))

pdb_blr_model <- local({
  cache <- NULL
  function() {
    skip_if_fast_tier()
    skip_if_not_installed("rstan")
    if (is.null(cache)) {
      cache <<- tryCatch(stan_target(pdb_fixture[["sblri-blr"]]$code, pdb_fixture[["sblri-blr"]]$data,
                                     model_name = "blr"),
                         scalebayes_error_stan_compile = function(e) e)
    }
    if (inherits(cache, "error")) skip(paste("rstan cannot compile here:", conditionMessage(cache)))
    cache$fit  # the stanfit: its compiled model is reused for each data set
  }
})

pdb_check <- function(post, sampler = "sgld", seed = 1) {
  fx <- pdb_fixture[[post]]
  tg <- stan_target(rstan::get_stanmodel(pdb_blr_model()), fx$data)
  fit <- suppressWarnings(sgmcmc_density(tg, sampler = sampler, seed = seed, quiet = TRUE))
  ref <- fx$reference
  d <- as.matrix(fit)[, ref$parameter, drop = FALSE]
  ess <- min(fit$diagnostics$convergence$ess_bulk)
  list(fit = fit, ess = ess, mean_err = abs(colMeans(d) - ref$mean) / ref$sd,
       sd_ratio = apply(d, 2, stats::sd) / ref$sd)
}

test_that("SGLD with every default matches posteriordb's NUTS reference on sblri-blr and sblrc-blr", {
  for (post in c("sblri-blr", "sblrc-blr")) {
    r <- pdb_check(post)
    # the Monte-Carlo error is well inside the tolerances (see the top of the file)
    expect_gte(r$ess, 300)
    expect_equal(sort(names(r$mean_err)), sort(pdb_fixture[[post]]$reference$parameter))
    expect_lt(max(r$mean_err), 0.25)
    expect_gt(min(r$sd_ratio), 0.75)
    expect_lt(max(r$sd_ratio), 1.33)
    expect_false(any(r$fit$diverged))
  }
})
