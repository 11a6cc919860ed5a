# Draws the package produced before the engine seams of issue 20 (pluggable chain step, open layers, one training
# loop over an objective) were opened. `tools/make-fingerprints.R` ran these closures on the build before that
# change and stored the results in tests/testthat/fingerprints.rds; test-fingerprints.R reruns them and
# compares. Each closure returns a named list of numeric vectors (draws, predictions, traces) from a small run
# of one configuration. The refactor was checked with identical() on the machine that made the file; the
# test's tolerance (1e-10 relative in double, 1e-5 in float32 networks) only absorbs last-bit differences
# of another CPU's kernels, while any change in the order of random numbers moves a draw by O(1).
fingerprint_runs <- function() {
  set <- list()
  sim <- function(n, p, seed, family = "gaussian") {
    set.seed(seed)
    x <- matrix(stats::rnorm(n * p), n, p)
    eta <- drop(x[, 1:3] %*% c(2, -1.5, 1))
    y <- if (family == "gaussian") eta + stats::rnorm(n) else stats::rbinom(n, 1, stats::plogis(eta))
    list(x = x, y = y)
  }
  quiet <- TRUE
  # WBB lasso, separate and common prior weights, gaussian and binomial
  set$wbb_sep <- function() {
    d <- sim(60, 8, 1)
    f <- wbb(d$x, d$y, lambda = 5, prior_weights = "separate", draws = 20, seed = 11, threads = 2, quiet = quiet)
    list(draws = as.numeric(as.matrix(f)))
  }
  set$wbb_common_binom <- function() {
    d <- sim(80, 6, 2, "binomial")
    f <- wbb(d$x, d$y, family = "binomial", lambda = 3, prior_weights = "common", draws = 20, seed = 12,
             threads = 1, quiet = quiet)
    list(draws = as.numeric(as.matrix(f)))
  }
  set$trend_filter_wbb <- function() {
    set.seed(3)
    y <- sin(seq(0, 3, length.out = 80)) + stats::rnorm(80, sd = 0.2)
    f <- trend_filter_wbb(y, k = 1, lambda = 2, draws = 10, seed = 13, threads = 2, quiet = quiet)
    list(draws = as.numeric(as.matrix(f)))
  }
  set$blasso <- function() {
    d <- sim(40, 6, 4)
    f <- blasso(d$x, d$y, lambda = "eb", chains = 2, iterations = 200, burnin = 100, seed = 14, threads = 2,
                quiet = quiet)
    list(draws = as.numeric(as.matrix(f)))
  }
  sg <- function(sampler, method, family = "gaussian", ...) {
    function() {
      d <- sim(100, 20, 5, family)
      # the chains start from zero, as every chain did when the reference was made (the default intercept
      # start is now its maximum-likelihood value; see intercept_start())
      ctl <- list(...)$control
      ctl$init <- numeric(21)
      # standardize = FALSE: the engine on the data as given, as when the reference was made (the default
      # standardization is a front-end transform; the engine's draws must not change); v0 = 0.1, the default
      # spike when the reference was made (the default is now 0.2 / sqrt(N), a front-end choice)
      f <- sgld_sa(d$x, d$y, family = family, method = method, sampler = sampler, iterations = 300,
                   batch_size = 20, chains = 2, seed = 15, threads = 2, quiet = quiet, newx = d$x[1:5, ],
                   control = ctl, standardize = FALSE, v0 = 0.1)
      list(draws = as.numeric(as.matrix(f)), sigma = as.numeric(f$trace$sigma %||% numeric()))
    }
  }
  set$sgld_sa <- sg("sgld", "sa", control = sgmcmc_control(step_size = 1e-3))
  set$sghmc_sa <- sg("sghmc", "sa", control = sgmcmc_control(step_size = 1e-4))
  set$sgld_em <- sg("sgld", "em", control = sgmcmc_control(step_size = 1e-3))
  set$sgld_none_binom <- sg("sgld", "none", "binomial", control = sgmcmc_control(step_size = 1e-3))
  set$sghmc_prune_anneal <- sg("sghmc", "sa", control = sgmcmc_control(step_size = 1e-4,
                                                                       step = sgmcmc_step(anneal = 1.01),
                                                                       ssgl = sgmcmc_ssgl(prune = TRUE, prune_U = 10)))
  if (isTRUE(scalebayes_info()$torch$available)) {
    net_data <- function(family) {
      set.seed(6)
      x <- matrix(stats::runif(120 * 5, -1, 1), 120, 5)
      eta <- 2 * x[, 1] - x[, 2]^2
      y <- switch(family, gaussian = eta + stats::rnorm(120, sd = 0.3),
                  binomial = stats::rbinom(120, 1, stats::plogis(2 * eta)),
                  multinomial = factor(cut(eta, 3, labels = FALSE)))
      list(x = x, y = y)
    }
    wn <- function(family, model, ...) {
      function() {
        d <- net_data(family)
        # standardize = FALSE: the networks on the data as given, as when the reference was made
        f <- wbb_nn(d$x, d$y, model = model, family = family, draws = 3, newx = d$x[1:10, ],
                    keep_draws = TRUE, seed = 16, threads = 2, quiet = quiet,
                    control = nn_control(epochs = 3, batch_size = 32, ...), standardize = FALSE)
        list(weights = as.numeric(f$weights), pred = as.numeric(f$pred))
      }
    }
    set$wbb_nn_gauss <- wn("gaussian", nn_mlp(c(8, 4)))
    set$wbb_nn_binom_drop <- wn("binomial", nn_mlp(c(8), dropout = 0.3))
    set$wbb_nn_multi_bn <- wn("multinomial", nn_mlp(c(8), batchnorm = TRUE), optimizer = "sgd", lr = 0.05)
    sn <- function(family, model, sampler, ...) {
      function() {
        d <- net_data(family)
        f <- sgld_sa_engine(d$x, d$y, model = model, family = family, sampler = sampler, epochs = 3, batch_size = 30,
                     chains = 2, seed = 17, threads = 2, quiet = quiet, newx = d$x[1:10, ], keep_draws = TRUE,
                     control = sgmcmc_control(step_size = 1e-3, ...), standardize = FALSE)
        list(weights = as.numeric(as.matrix(f)), pred = as.numeric(f$pred), pred_mean = as.numeric(f$pred_mean),
             trace = as.numeric(as.matrix(f$trace[, c("sigma", "delta", "mean_rho", "loss", "sparsity")])))
      }
    }
    set$sgld_nn_gauss <- sn("gaussian", nn_mlp(c(8)), "sgld")
    set$sghmc_nn_multi_drop <- sn("multinomial", nn_mlp(c(8), dropout = 0.2), "sghmc")
    set$sghmc_nn_binom_bn_prune <- sn("binomial", nn_mlp(c(8), batchnorm = TRUE), "sghmc",
                                       ssgl = sgmcmc_ssgl(prune = TRUE, prune_U = 2))
    set$sgld_cnn <- function() {
      set.seed(7)
      x <- array(stats::runif(60 * 1 * 8 * 8), c(60, 1, 8, 8))
      y <- factor(sample(1:3, 60, TRUE))
      f <- sgld_sa_engine(x, y, model = nn_cnn(channels = 2, kernel = 3, hidden = 6), sampler = "sghmc", epochs = 2,
                   batch_size = 20, chains = 1, seed = 18, threads = 1, quiet = quiet, keep_draws = TRUE,
                   control = sgmcmc_control(step_size = 1e-3), standardize = FALSE)
      list(weights = as.numeric(as.matrix(f)))
    }
  }
  set
}
