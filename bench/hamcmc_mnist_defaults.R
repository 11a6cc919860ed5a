# hamcmc_sa() on a network with every default (issue 38, item 6: >= 0.90 asked): 2,000 of the 10,000 MNIST digits of
# mnist_digits() for training and 1,000 held out (set.seed(1)), nn_mlp() (128-64), 4 chains, the step warm-up.
# Run from the package root:  Rscript bench/hamcmc_mnist_defaults.R [sampler ...]  (about 13 minutes for
# hamcmc_sa on a loaded 2-core VM; output in bench/hamcmc_mnist_defaults.out.txt).
suppressPackageStartupMessages(library(scalebayes))
cat("scalebayes", format(utils::packageVersion("scalebayes")), "|", R.version.string, "|", format(Sys.time()), "\n")
samplers <- commandArgs(TRUE)
if (!length(samplers)) samplers <- "hamcmc_sa"
md <- mnist_digits()
x <- matrix(md$x, dim(md$x)[1]); y <- md$y
# HMNIST_SPLIT=k: the split of set.seed(k) and sampler seed k (default 1, the issue's); HMNIST_FORM=lowrank or mem5:
# HAMCMC-SA's sgmcmc_lbfgs(sa_form = "lowrank") or (memory = 5) instead of the default form.
split <- as.integer(Sys.getenv("HMNIST_SPLIT", "1"))
form <- Sys.getenv("HMNIST_FORM")
ctl <- switch(form, lowrank = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "lowrank")),
              mem5 = sgmcmc_control(lbfgs = sgmcmc_lbfgs(memory = 5)), sgmcmc_control())
set.seed(split); idx <- sample(nrow(x), 3000); tr <- idx[1:2000]; te <- idx[2001:3000]
for (s in samplers) {
  t0 <- proc.time()[3]
  f <- withCallingHandlers(sgld_sa(x[tr, ], y[tr], model = nn_mlp(), sampler = s, seed = split, quiet = TRUE,
                                   control = ctl),
         warning = function(w) { cat("[warning]", class(w)[1], "\n"); invokeRestart("muffleWarning") })
  acc <- mean(predict(f, x[te, ], type = "class") == y[te])
  cat(sprintf("%s MNIST 2000: held-out accuracy %.3f, step %.3g (per example; HAMCMC-SA: summed scale), diverged %d of %d, %.0f s\n", s, acc,
              f$settings$step_size * if (s == "hamcmc_sa") 1 else f$settings$nobs, sum(f$diverged), length(f$diverged), proc.time()[3] - t0))
}
