# The mechanism of Concrete's divergence (bench/RESULTS.md, "Table 5 on all five UCI data sets"): along the
# paper-code SGHMC chain of the authors' split 1 (lr eta = 1e-5 on the summed scale, momentum 0.9), the
# curvature of the output layer, eta * lambda_max(2 N mean(h h')) with h = (hidden activations, 1) over the
# N = 927 training rows: a lower bound on eta times the largest Hessian eigenvalue of the summed squared-error
# loss. Heavy-ball SGHMC (v <- 0.9 v - eta grad) is stable on a quadratic only while eta lambda < 2 (1 + 0.9)
# = 3.8. Raw response against the response minus its training mean, and the predictions' mean.
# Run from the package root: Rscript bench/uci_concrete_curvature.R
suppressMessages(library(scalebayes))
d <- uci_prepare("concrete", 1)
p <- ncol(d$x)
state <- function(shift, k) {
  f <- tryCatch(sgld_sa(d$x, d$y - shift, model = nn_mlp(50), sampler = "sghmc", method = "none",
               sparse_layers = FALSE, iterations = k, batch_size = 50, burnin = k - 1L, thin = 1, newx = d$x,
               newy = d$y - shift, seed = d$seed, quiet = TRUE, threads = 1,
               control = sgmcmc_control(step_size = 1e-5,
                                        step = sgmcmc_step(schedule = "constant", temperature = 0.5),
                                        ssgl = sgmcmc_ssgl(prior_var = 1e4, likelihood_sd = sqrt(1 / 2)))),
               scalebayes_error = function(e) NULL)
  if (is.null(f)) return(c(k = k, eta_lambda = NA, mean_pred = NA, max_h = NA))
  w <- f$weights_final[1, ]
  W1 <- matrix(w[seq_len(50 * p)], 50, p, byrow = TRUE)  # torch layout [out, in], row-major
  b1 <- w[50 * p + 1:50]
  W2 <- w[50 * p + 50 + 1:50]
  b2 <- w[50 * p + 101]
  h <- pmax(sweep(d$x %*% t(W1), 2, b1, "+"), 0)
  pred <- drop(h %*% W2) + b2
  stopifnot(max(abs(pred - f$pred[nrow(f$pred), ])) < 1e-3 * max(1, abs(pred)))  # the layout is right
  ht <- cbind(h, 1)
  lam <- max(eigen(2 * nrow(d$x) * crossprod(ht) / nrow(ht), symmetric = TRUE, only.values = TRUE)$values)
  c(k = k, eta_lambda = 1e-5 * lam, mean_pred = mean(pred) + shift, max_h = max(h))
}
ks <- c(1, 5, 10, 15, 20, 25, 28)
for (shift in c(0, mean(d$y))) {
  cat(sprintf("\nresponse %s (training mean %.1f MPa)\n", if (shift == 0) "raw" else "centred", mean(d$y)))
  print(round(do.call(rbind, lapply(ks, function(k) state(shift, k))), 3))
}
