# The step the network warm-up chooses, over seeds (issue 38: a default network run must not lose chains at the
# top of the warm-up's grid): raw Boston through the formula, 405 training rows (set.seed(1) split), nn_mlp()
# (128-64), every default, sampler seeds 1-10. Printed per seed: the step taken, the pilots' winner, the steps a
# pilot ruled out, diverged chains, held-out RMSE, the call's seconds and the warnings' classes.
# Run from the package root:  SAMPLERS=hamcmc_sa SEEDS=1:10 Rscript bench/sgmcmc_nn_warmup_seeds.R  (about a
# minute per call on 2 cores).
suppressPackageStartupMessages(library(scalebayes))
b <- MASS::Boston; set.seed(1); te <- sample(506, 101); tr <- setdiff(1:506, te)
samplers <- strsplit(Sys.getenv("SAMPLERS", "hamcmc_sa,sgld"), ",")[[1]]
seeds <- eval(parse(text = Sys.getenv("SEEDS", "1:10")))
for (s in samplers) for (sd in seeds) {
  w <- character()
  t <- system.time(f <- withCallingHandlers(sgld_sa(medv ~ ., data = b[tr, ], model = nn_mlp(), sampler = s, seed = sd, quiet = TRUE),
    warning = function(x) { w <<- c(w, class(x)[1]); invokeRestart("muffleWarning") }))[["elapsed"]]
  tab <- f$warmup$table
  ro <- paste(signif(unique(tab$step_size[tab$ruled_out]), 2), collapse = "/")
  p <- predict(f, b[te, ])$fit
  cat(sprintf("%-9s seed %2d: chosen %.3g (winner %.3g, ruled out: %s), diverged %d of %d, test RMSE %.2f, %.0f s %s\n", s, sd,
      f$settings$step_size, f$warmup$ksd_step, ro, sum(f$diverged), length(f$diverged), sqrt(mean((p - b$medv[te])^2)), t, paste(unique(w), collapse = ",")))
}
