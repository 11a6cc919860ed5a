# Precomputes the coverage study of the "Counts and binary series" section of vignettes/trend-filtering.Rmd:
# WBB bands of Poisson and logistic trend filtering (trend_filter_wbb(family = )) against the true rate /
# probability over repeated data sets. Writes inst/extdata/trend-filtering-glm.rds.
#   R_LIBS=<library with scalebayes> Rscript vignettes/precompute-trend-filtering-glm.R   (about 10 minutes on a loaded 2-core machine)
suppressPackageStartupMessages(library(scalebayes))
out_file <- file.path("inst", "extdata", "trend-filtering-glm.rds")
R <- as.integer(Sys.getenv("SB_TF_GLM_R", "50"))  # data sets per family
draws <- 200   # WBB draws per data set
k <- 1

# daily counts over a year: a seasonal rate with an outbreak (log rate piecewise smooth)
n_pois <- 365
day <- seq_len(n_pois)
rate_true <- exp(1.5 + 0.6 * cos(2 * pi * (day - 20) / 365) + 1.2 * exp(-((day - 200) / 12)^2))
# a binary series: success probability drifting up and back down
n_bin <- 500
tb <- seq_len(n_bin)
prob_true <- plogis(-1 + 2.5 * sin(pi * tb / n_bin)^2 - 1.5 * (tb > 350 & tb < 400))

study <- function(family, truth, n) {
  cover90 <- cover95 <- width95 <- lambda <- secs <- numeric(R)
  for (r in seq_len(R)) {
    set.seed(1000 + r)
    y <- if (family == "poisson") rpois(n, truth) else rbinom(n, 1, truth)
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(trend_filter_wbb(y, seq_len(n), k = k, family = family, draws = draws, seed = r,
                                             quiet = TRUE))
    secs[r] <- proc.time()[["elapsed"]] - t0
    p95 <- predict(fit, type = "response", prob = 0.95)
    p90 <- predict(fit, type = "response", prob = 0.90)
    cover95[r] <- mean(p95$lower <= truth & truth <= p95$upper)
    cover90[r] <- mean(p90$lower <= truth & truth <= p90$upper)
    width95[r] <- mean(p95$upper - p95$lower)
    lambda[r] <- fit$lambda
    if (r %% 10 == 0) message(sprintf("%s: %d of %d data sets", family, r, R))
  }
  list(cover90 = cover90, cover95 = cover95, width95 = width95, lambda = lambda, seconds = secs)
}
res <- list(date = format(Sys.time(), tz = "UTC"), cores = parallel::detectCores(), R = R, draws = draws, k = k,
            poisson = study("poisson", rate_true, n_pois), binomial = study("binomial", prob_true, n_bin))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
saveRDS(res, out_file)
for (f in c("poisson", "binomial")) {
  s <- res[[f]]
  cat(sprintf("%s: coverage 95%% band %.3f (MC se %.3f), 90%% band %.3f (MC se %.3f), %.2f s per data set\n", f,
              mean(s$cover95), sd(s$cover95) / sqrt(R), mean(s$cover90), sd(s$cover90) / sqrt(R), mean(s$seconds)))
}
