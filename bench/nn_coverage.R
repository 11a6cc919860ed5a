# Coverage of the 90 % bands of the network methods on a simulated 1-hidden-layer regression with known f.
#
# Data: x ~ U(-2, 2)^2, f(x) = a 2-8-1 tanh network with fixed random weights, y = f(x) + N(0, sigma^2),
# sigma = 0.3; n = 300 training rows, 200 test rows, R seeds. Every method fits an nn_mlp(8) (ReLU) network with
# its defaults except the training length (short runs on a 2-core machine). For each fit:
#   cover_f: share of test rows whose true f(x) lies in the central 90 % posterior band of f (predict()'s
#            lower / upper at prob = 0.9, from the draws of the network's output);
#   cover_y: share of test rows whose fresh y lies in the 90 % posterior predictive interval
#            (predictive_interval(): the draws of f plus each draw's noise sd).
# wbb_nn() has no noise parameter: its predictive draws add N(0, sigma_t^2), sigma_t the draw's root mean
# squared training residual (fit$sigma, ?wbb_nn).
# Run: R_LIBS=<lib> Rscript bench/nn_coverage.R   (writes vignettes/results/nn-coverage-results.rds)
suppressPackageStartupMessages(library(scalebayes))
R <- as.integer(Sys.getenv("SB_COVER_SEEDS", "5"))
EPOCHS <- as.integer(Sys.getenv("SB_COVER_EPOCHS", "1000"))
n <- 300L; nt <- 200L; sigma <- 0.3; prob <- 0.9
truth_net <- function() {
  set.seed(20261202)
  list(W1 = matrix(rnorm(16, sd = 1.2), 2, 8), b1 = rnorm(8, sd = 0.5), w2 = rnorm(8), b2 = 0.2)
}
tn <- truth_net()
f_true <- function(x) drop(tanh(x %*% tn$W1 + matrix(tn$b1, nrow(x), 8, byrow = TRUE)) %*% tn$w2) + tn$b2
one <- function(seed) {
  set.seed(seed)
  x <- matrix(runif(2 * (n + nt), -2, 2), ncol = 2)
  f <- f_true(x)
  y <- f + rnorm(n + nt, sd = sigma)
  tr <- seq_len(n); te <- n + seq_len(nt)
  fits <- list(
    sgld_sa = function() sgld_sa(x[tr, ], y[tr], model = nn_mlp(8), epochs = EPOCHS, chains = 2, seed = seed, quiet = TRUE,
                                 threads = 1),
    sparse_vi = function() sparse_vi(x[tr, ], y[tr], model = nn_mlp(8), epochs = EPOCHS, draws = 100, seed = seed,
                                     quiet = TRUE, threads = 1),
    bbb = function() bbb(x[tr, ], y[tr], model = nn_mlp(8), epochs = EPOCHS, draws = 100, seed = seed, quiet = TRUE,
                         threads = 1),
    wbb_nn = function() wbb_nn(x[tr, ], y[tr], model = nn_mlp(8), epochs = EPOCHS, draws = 50, seed = seed, quiet = TRUE,
                               threads = 1))
  do.call(rbind, lapply(names(fits), function(m) {
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(fits[[m]]())
    el <- proc.time()[["elapsed"]] - t0
    pf <- predict(fit, newdata = x[te, ], prob = prob)
    pi <- predictive_interval(fit, newdata = x[te, ], prob = prob, seed = seed)
    data.frame(method = m, seed = seed, cover_f = mean(f[te] >= pf$lower & f[te] <= pf$upper),
               cover_y = mean(y[te] >= pi[, 1] & y[te] <= pi[, 2]),
               width_f = mean(pf$upper - pf$lower), width_y = mean(pi[, 2] - pi[, 1]),
               rmse_f = sqrt(mean((pf$fit - f[te])^2)), seconds = el)
  }))
}
t0 <- proc.time()[["elapsed"]]
res <- do.call(rbind, lapply(seq_len(R), one))
summ <- aggregate(cbind(cover_f, cover_y, width_f, width_y, rmse_f, seconds) ~ method, res, mean)
print(res, digits = 3)
cat("\nMean over", R, "seeds (nominal 0.90):\n"); print(summ, digits = 3)
out <- list(results = res, summary = summ, settings = list(n = n, n_test = nt, sigma = sigma, prob = prob, seeds = R,
            hidden = 8L, epochs = EPOCHS, date = Sys.Date(), machine = "2-core Debian 12 VM, R 4.2.2, OpenBLAS",
            total_seconds = proc.time()[["elapsed"]] - t0))
if (dir.exists("vignettes/results")) saveRDS(out, "vignettes/results/nn-coverage-results.rds")
