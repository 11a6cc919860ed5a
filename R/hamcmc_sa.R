#' Hessian-approximated SG-MCMC with stochastic approximation (HAMCMC-SA)
#'
#' `hamcmc_sa()` is [sgld_sa()] with `sampler = "hamcmc_sa"`: the adaptive Hessian-approximated SG-MCMC of
#' Wang, Deng and Lin (2021), a preconditioned Langevin step whose preconditioner \eqn{G_k} is a stochastic
#' approximation, \eqn{G_k = (1 - \omega_k) G_{k-1} + \omega_k \tilde G_k}, of the inverse Hessian \eqn{\tilde G_k}
#' of the negative log posterior given by an online damped L-BFGS memory of the last M steps. The SSGL prior, the
#' SA / EM / none updates of its latent variables, annealing and magnitude pruning are those of [sgld_sa()]
#' (the label of a fit with `method = "sa"` is "HAMCMC-SA + SSGL-SA"). `sampler = "hamcmc"` gives HAMCMC
#' (Simsekli et al. 2016) as the paper runs it. Regression and networks (`model = `) alike; threads, seeds,
#' `future` chunks and the progress bar work as for [sgld_sa()].
#'
#' Per iteration k, with \eqn{g_k} the minibatch gradient of the log posterior at \eqn{\beta_k} and
#' \eqn{z_k \sim N(0, I)}:
#' \deqn{\beta_{k+1} = \beta_k + \epsilon_k\, G_k g_k + \sqrt{2\epsilon_k/\tau}\, S_k z_k,\qquad S_k S_k' \approx G_k.}
#' The memory holds pairs \eqn{s = \beta_{k+1} - \beta_k}, \eqn{y = -(g(\beta_{k+1}) - g(\beta_k))}, the second
#' gradient on the same minibatch (`sgmcmc_lbfgs(curvature = "same_batch")`, two gradients per iteration) or
#' the next iteration's (`"consecutive"`), damped (Powell) so that \eqn{s'\bar y \ge r s'B_0 s}
#' (`damping_r`), with \eqn{B_0 = \gamma I}, \eqn{\gamma = \max(y'y/s'y, \delta)} (`gamma_min`). The knobs are
#' in [sgmcmc_lbfgs()] (`sgmcmc_control(lbfgs = )`): `memory`, `precond_A`, `precond_Z`, `precond_alpha` (\eqn{\omega_k}), `damping_r`,
#' `gamma_min`, `sa_form`, `normalize`, `curvature`.
#'
#' @section Starting preconditioner and curvature pairs (deviations, measured):
#' * **\eqn{G_1 = I/\gamma_1}** (`sgmcmc_lbfgs(precond_init = "curvature")`, the default; `"identity"` is
#'   Algorithm 2's \eqn{G_1 = I}, which the paper reproductions use). The memory's \eqn{\tilde G_k} divides by
#'   the curvature of the SUMMED posterior (about N times a per-example curvature); \eqn{G_1 = I} does not. So with \eqn{G_1 = I} no one step
#'   suits the chain: a step on the memory's scale is N-fold too long for the first iterations (a 2,000 x 3
#'   regression at step 0.1: log-likelihood -2.1e133 within 50 iterations, against a start of -1.4e7), and a step
#'   on the identity's scale is shrunk by \eqn{\gamma} (2e4-5e4 on 2,000 MNIST digits) once the SA has moved
#'   \eqn{G_k} to the memory's scale. \eqn{\gamma_1 = y'y/s'y} comes from one probe pair at the starting point on
#'   the first minibatch (\eqn{s} = 1 % of the parameters' root mean square times a normal vector; one extra
#'   gradient), which is also the memory's first pair; on the same regression the chain then stays at its
#'   starting log-likelihood (-3,970) or above for steps 0.01-0.5.
#'
#'   On networks the step is then on the summed scale too: the warm-up's grid is 0.1 times 9, 3, 1, 1/3, 1/9,
#'   free of N, and the chosen step stays constant (the other samplers' warm-up steps decay as
#'   \eqn{k^{-1/3}}: the preconditioner already shrinks HAMCMC-SA's steps as \eqn{\gamma} grows, and the decay on
#'   top stalled the chains). Measured with every default, `hamcmc_sa(x, y, model = nn_mlp())` on 2,000 MNIST
#'   digits (`bench/hamcmc_mnist_defaults.R`, 1,000 held out): 0.905 held-out accuracy (step 0.3 chosen, 4 of 4
#'   chains sound; 0.887 when the step decayed, its single chains still learning at iteration 10,000); with
#'   \eqn{G_1 = I} and the per-example grid (an earlier default) 0.837 (once the SA had moved \eqn{G_k} to the
#'   memory's scale the drift was 0.0024 of the gradient and the chain stopped learning). One chain of 10,000
#'   constant steps: 0.003 / 0.01 / 0.03 / 0.1 / 0.3 / 1 reach 0.52 / 0.74 / 0.87 / 0.89 / 0.90 / 0.90; 3 and 10
#'   diverge. On raw Boston through the formula (`nn_mlp()`, 405 rows, 101 held out, seeds 1-10) the default
#'   gives RMSE 2.12-2.45, no chain diverged (steps 0.033-0.1 chosen; lm 4.38).
#' * **Sign changes left out of a pair.** The SSGL spike's gradient \eqn{-\kappa_0\,\mathrm{sign}(\beta)/\sigma}
#'   jumps by \eqn{2\kappa_0/\sigma} where a coefficient crosses zero. That jump is not curvature: kept, it
#'   inflates \eqn{y'y/s'y} the more the smaller the steps, the preconditioner shrinks, the steps shrink further,
#'   and the chain stops learning (500 MNIST digits, `nn_mlp(32)`, step 0.1, iterations 201-400: median drift
#'   \eqn{|G_k g_k|/|g_k|} 9.8e-6 and \eqn{\gamma} 1.1e5; at step 0.003, 9.6e-7 and 2.4e6), against 5.5e-4 and
#'   2.0e4 with the crossing coordinates of the sparse groups left out of \eqn{s} and \eqn{y}, which is what the
#'   engine does. The probe's first point moves the sparse coordinates within reach of 0 by twice the probe
#'   first, so a regression's start at 0 gets its \eqn{\gamma_1} (raw Boston: \eqn{\gamma_1} about 930, not
#'   \eqn{\delta = 1}); with every default, raw diabetes and raw Boston then give max R-hat 1.002 over 4 chains
#'   and an in-sample RMSE within 0.8 % of lm's (25 s and 45 s).
#' * **A pair with \eqn{s'y \le 0}** sets \eqn{\gamma = \max(\|y\|/\|s\|, \delta)} rather than \eqn{\delta}
#'   (`gamma_min`): on a network whose summed curvature is 1e4-1e5, \eqn{\tilde G = I/\delta = I} is a step
#'   1e4 times too long.
#'
#' @section Which target each form samples:
#' The paper's Algorithm 2 cannot be run as printed with a limited memory: \eqn{G_{k-1} g_k} is not available
#' from a memory of pairs. Three forms are implemented (`sgmcmc_lbfgs(sa_form = )`), each checked with its
#' default settings against the exact posterior of a linear-Gaussian model and against Stan's NUTS on a logistic
#' regression (`test-sgmcmc-trust.R`: means within 0.2 posterior sd, sds within \[0.8, 1.25\] times):
#' * `"matrix"` (the default for at most 20 parameters; allowed up to 2,000 regression coefficients): \eqn{G_k} is kept as a dense
#'   matrix (the object the paper's section 4 analyses) and \eqn{S_k} is its Cholesky factor. With
#'   `normalize = FALSE` each step is a preconditioned Langevin step with a positive definite \eqn{G_k}, which
#'   depends on the current point only through the newest term \eqn{\omega_k \tilde G_k}; as
#'   \eqn{\epsilon_k \to 0} and \eqn{\omega_k \to 0} (\eqn{G_k} then freezes) its bias vanishes: it samples the
#'   posterior at temperature \eqn{1/\tau}, up to the neglected correction term \eqn{\Gamma} of a
#'   position-dependent metric (ignored, as in the paper) and the SA of the SSGL latent variables. This is the
#'   only form with that property. Its cost per iteration grows with the cube of the number of parameters.
#' * `"diagonal"` (the default for networks and for more than 20 parameters; linear in the number of
#'   parameters): the preconditioner is the exact diagonal of the paper's \eqn{G_k} (the diagonal of an SA average
#'   is the SA average of the diagonals, \eqn{d_k = (1 - \omega_k) d_{k-1} + \omega_k \mathrm{diag}(\tilde G_k)},
#'   and \eqn{\mathrm{diag}(\tilde G_k)} comes from the memory in \eqn{O(M^2)} vector operations), and the step
#'   is \eqn{\epsilon_k d_k g_k + \sqrt{2\epsilon_k/\tau}\, d_k^{1/2} z_k}: a preconditioned Langevin step with a
#'   positive diagonal preconditioner that depends on the current point only through \eqn{\omega_k
#'   \tilde G_k}, so the matrix form's argument applies (its bias vanishes as \eqn{\epsilon_k, \omega_k \to 0}).
#'   It keeps the curvature scale of each coordinate and drops the off-diagonal curvature.
#' * `"lowrank"` (linear in the number of parameters; `sgmcmc_lbfgs(sa_memories = K)`, default 4): the paper's
#'   SA average \eqn{G_k = \sum_j w_{k,j} \tilde G_j} with its exact weights, the K newest memories kept whole and
#'   the older ones (with \eqn{G_1}) by their exact diagonal, \eqn{G_k = \mathrm{diag}(D_k) + \sum_{j > k-K}
#'   w_{k,j} \tilde G_j}; the noise is \eqn{D_k^{1/2} z_0 + \sum_j w_{k,j}^{1/2} \tilde S_j z_j} with K + 1
#'   independent normal vectors, so its covariance is exactly the \eqn{G_k} the drift applies: a preconditioned
#'   Langevin step whose preconditioner depends on the current point only through \eqn{\omega_k \tilde G_k}, as
#'   the matrix form (with \eqn{K \ge k} it IS the matrix form's \eqn{G_k}; tested against a dense
#'   reference). It keeps the recent off-diagonal curvature that the diagonal form drops, at 2K applications of a
#'   memory per iteration. Measured with the warm-up's step: the exact linear-Gaussian posterior, mean errors
#'   0.046 sd, sds 0.99-1.01 times the exact; Stan's NUTS on a logistic regression, 0.046 sd, sds 1.01-1.06.
#'   It is the valid linear-cost replacement of the removed transport form.
#' * `"transport"` (removed; asking for it is an error of class `scalebayes_error_removed` pointing to
#'   `"lowrank"`): line 4 as printed, \eqn{G_{k-1} g_k \approx G_{k-1} g_{k-1} + \tilde G_k (g_k - g_{k-1})}
#'   and \eqn{S_k z_k} likewise with \eqn{z_{k-1}}. Its injected noise was an autoregression with coefficient
#'   \eqn{1 - \omega_k} driven by the changes of \eqn{\tilde S_k}, not a draw with the covariance of the
#'   preconditioner the drift applies, and its chains drifted away. Measured before its removal: a 60 x 10
#'   regression whose matrix-form and SGLD chains agree drifted to |beta| ~ 1e3-1e4 in 2,000 iterations; on a
#'   6-coefficient logistic regression its means were 2e4 posterior sd from NUTS; on a 5-20-20-1 MLP its test RMSE
#'   was 121 against 1.28 for the mean predictor; in the cross-method table of `vignette("variational")` it ends
#'   at 26 % accuracy where the lowrank form reaches 73 %.
#' * `normalize = TRUE` (lines 7-8 as printed: unit-length drift and noise directions) turns any form into a
#'   normalized-gradient scheme whose step no longer scales with the gradient; it does not sample the
#'   posterior. Off by default.
#' HAMCMC (`sampler = "hamcmc"`) moves from \eqn{\beta_{t-M}} with the memory of the samples around it (it
#' leaves \eqn{\beta_{t-M}} out) and no SA of the preconditioner: its preconditioner does not depend on the
#' point it moves, which is Simsekli et al.'s argument for dropping \eqn{\Gamma}; the sampled chain interleaves M
#' subsequences. Its pairs' gradients are all taken on the current minibatch (`curvature = "same_batch"`, the
#' default; 2M - 1 gradients per iteration), and its first 2M - 2 steps, before the memory exists, use one probe
#' pair along the gradient (a 0.1 % perturbation). Measured on an exact linear-Gaussian posterior with the
#' warm-up's step (`test-sgmcmc-trust.R`): mean errors 0.065 sd, sds 1.03-1.10 times the exact; with pairs from
#' consecutive minibatches (the previous default) sds were 1.6-1.7 times the exact and 2.1-2.3 times Stan's on a
#' logistic regression, and before the two-sided damping of `damping_r` its chains diverged.
#'
#' @section Measured bias of the forms:
#' On a correlated 5-dimensional Gaussian target ([sgmcmc_density()] with `sgmcmc_target("gaussian")`, covariance
#' \eqn{0.6^{|i-j|} s_i s_j}, s = (1, 2, 0.5, 1, 1.5); 4 chains of 30,000 iterations, constant step 0.01, memory 3,
#' \eqn{\omega_k = 2 (50 + k)^{-0.75}}, full gradients; `bench/density_forms.R`), with z the largest of the 20
#' z-scores of the means and covariance entries (standard errors from the effective sample size):
#' * matrix form, unnormalized: largest mean error 0.04 sd, variances within 6 %, z = 1.7: within Monte-Carlo
#'   error (asserted in the tests, as is plain SGLD at step 0.002: 0.02 sd, 3 %, z = 2.2). With full gradients
#'   `curvature = "consecutive"` gives the same pairs and the same draws.
#' * diagonal form, unnormalized: largest mean error 0.04 sd, variances within 11 %, z = 1.6 (asserted in the
#'   tests); normalized: variances off by up to 78 % (z = 45).
#' * matrix form, `normalize = TRUE`: variances off by up to 85 % (z = 89).
#' * transport form (since removed): drifted away (mean errors of 68 sd); with \eqn{\omega_k \approx 1}
#'   (`precond_A = 1, precond_Z = 0, precond_alpha = 0.01`) stable but variances off by up to 35 % (z = 5).
#' * HAMCMC: mean errors up to 0.11 sd, variances off by up to 9 % (z = 11); normalized: variances off by up to
#'   69 % (z = 141).
#' On the banana target of [sgmcmc_target()], which is not log-concave, the unnormalized forms with
#' `gamma_min = 1` diverge at the paper's learning rate 0.06 (damped curvature pairs of the concave region give
#' long steps); `gamma_min = 16` (the target's largest curvature) makes both stable, with long chains closer to
#' exact draws than SGLD at 0.04 but, in short chains, HAMCMC-SA slower to explore (`vignette("hamcmc-sa")`,
#' [hamcmc_banana_study()]).
#'
#' Divergence is handled as in [sgld_sa()]: a non-finite state stops the chain with the classed error
#' `scalebayes_error_divergence` (regression) carrying the last good state.
#'
#' @inheritParams sgld_sa
#' @param sampler `"hamcmc_sa"` (default) or `"hamcmc"`.
#' @param ... Further arguments of [sgld_sa()] (`family`: `"gaussian"`, `"binomial"` or `"poisson"` (counts, log link; see [sgld_sa()], "Poisson regression"), `iterations`, `batch_size`, `chains`, `seed`, `control`, `model`,
#'   ...; with a formula `x`, `hamcmc_sa(y ~ ., data = d)`, also `data`, `subset`, `na.action` and `contrasts`: see
#'   [sb_formula]). `batch` applies as in [sgld_sa()]: the chains of a network with a batched form (MLPs,
#'   CNNs; not batch norm or dropout) run as one batched network, each with its own L-BFGS memory
#'   (`sa_form = "matrix"`, regression only, has no batched form).
#' @section Interrupts:
#' Ctrl-C stops the engine at its next check and returns the partial fit of what finished (as [sgld_sa()]: the kept draws of every chain that kept some),
#' with one warning of class `scalebayes_warning_interrupted` and `fit$interrupted` `TRUE`; when nothing
#' finished it is R's interrupt. See [scalebayes-interrupts].
#' @return The fit of [sgld_sa()] (class `sb_sgld_sa`, or `sb_sgld_sa_nn` for a network).
#' @references Wang, Y., Deng, W. and Lin, G. (2021). An adaptive Hessian approximated stochastic gradient MCMC
#'   method. Journal of Computational Physics 432, 110150. arXiv:2010.01384.
#'
#'   Simsekli, U., Badeau, R., Cemgil, A. T. and Richard, G. (2016). Stochastic quasi-Newton Langevin Monte Carlo.
#'   ICML.
#' @seealso [sgld_sa()], [sgmcmc_control()], [sgmcmc_density()] (the same samplers on a log-density target),
#'   `vignette("hamcmc-sa")`.
#' @export
#' @examples
#' set.seed(1)
#' n <- 60; p <- 20
#' x <- matrix(rnorm(n * p), n, p)
#' y <- drop(x[, 1:3] %*% c(3, 2, 1)) + rnorm(n)
#' fit <- hamcmc_sa(x, y, intercept = FALSE, seed = 1)  # step and run length from the warm-up
#' fit$method
#' round(head(coef(fit)), 2)
#' fit$warmup$step_size
hamcmc_sa <- function(x, y, ..., sampler = "hamcmc_sa") {
  call <- match.call()
  sampler <- sgmcmc_match_sampler(sampler, preconditioned = TRUE)
  fit <- sgld_sa(x, y, ..., sampler = sampler)
  fit$call <- call  # the user's call (update() reruns it), not the inner sgld_sa() call
  fit
}
