#' Adaptive empirical-Bayes SG-MCMC with spike-and-slab priors (SGLD-SA, SGHMC-SA)
#'
#' Samples the coefficients of a linear (Gaussian), logistic or Poisson (log link) regression with stochastic-gradient Langevin
#' dynamics (SGLD) or stochastic-gradient Hamiltonian Monte Carlo (SGHMC) while the latent variables of a
#' spike-and-slab group-lasso (SSGL) prior are optimized by stochastic approximation, following Deng, Zhang,
#' Liang and Lin (2019), "An adaptive empirical Bayesian method for sparse deep learning" (NeurIPS).
#'
#' The model is
#' \deqn{\beta_j \mid \sigma^2, \gamma_j \sim (1-\gamma_j)\,\mathrm{Laplace}(0, \sigma v_0) +
#'   \gamma_j\, N(0, \sigma^2 v_1),\quad \gamma_j \sim \mathrm{Bern}(\delta),\quad
#'   \delta \sim \mathrm{Beta}(a, b),\quad \sigma^2 \sim IG(\nu/2, \nu\lambda/2)}
#' for the sparse coefficients (the columns flagged by `sparse`), \eqn{N(0, \sigma_0^2)} for the others and the
#' intercept, and the likelihood \eqn{N(x_i'\beta, \sigma^2)} (`"gaussian"`), logistic (`"binomial"`) or
#' Poisson with mean \eqn{e^{x_i'\beta}} (`"poisson"`; see "Poisson regression").
#' Each iteration draws a minibatch of `batch_size` rows (gradients scaled by \eqn{N/n}), takes one SGLD step
#' (eq. 2 of the paper) or SGHMC step (eq. 3, in the SGD-with-momentum form of Saatci and Wilson) at inverse
#' temperature \eqn{\tau}, and then updates the latent variables. `sampler = "sgnht"` is the stochastic-gradient
#' Nose-Hoover thermostat (Ding et al. 2014, Algorithm 2) in the same momentum form:
#' \eqn{v \leftarrow (1 - \xi) v + \eta g + N(0, 2 a \eta / \tau)}, \eqn{\beta \leftarrow \beta + v},
#' \eqn{\xi \leftarrow \xi + v'v/d - \eta/\tau} with one thermostat \eqn{\xi} for all d parameters,
#' \eqn{\xi_0 = a} = `sgmcmc_step(friction = )`: the friction adapts until the kinetic energy per
#' parameter is the target's, which absorbs the minibatch gradient noise that SGHMC must be told
#' (`noise_estimate`). Then the latent variables:
#' \itemize{
#'   \item `method = "sa"`: \eqn{\theta \leftarrow (1-\omega_k)\theta + \omega_k \tilde\theta} for
#'     \eqn{\theta = (\rho, \kappa_0, \kappa_1, \sigma, \delta)} with \eqn{\omega_k = A(k+Z)^{-\alpha}}
#'     (eqs. 12-15; SGLD-SA);
#'   \item `method = "em"`: the same with \eqn{\omega_k = 1} (SGLD-EM);
#'   \item `method = "none"`: the latent variables stay at their initial values (plain SGLD with a fixed prior).
#'     By default this is the authors' baseline: \eqn{\kappa_{0j} = \kappa_{1j} = 1} and \eqn{\sigma} =
#'     `sigma_init` frozen, i.e. the prior \eqn{\exp(-|\beta_j|/\sigma - \beta_j^2/(2\sigma^2))}, which
#'     does not involve `v0` or `v1` (set other values with `sgmcmc_ssgl(kappa0_init, kappa1_init)`).
#' }
#' \eqn{\rho_j} estimates the posterior probability that coefficient j comes from the slab and is returned as
#' the selection probability.
#'
#' @section Deviations from the paper:
#' * The regression \eqn{\sigma} update uses \eqn{R_a = N + p + \nu + 2}, which is what maximizing
#'   \eqn{Q_1} of eq. (10) gives (and what EMVS uses); eq. (14) prints \eqn{N + p + \nu}. \eqn{J} is the squared
#'   norm \eqn{\sum_j \kappa_{1j}\beta_j^2}.
#' * The SA step for \eqn{\beta^{(k)}} is done at the start of iteration k with the residuals of the minibatch
#'   drawn for that iteration's gradient (an unbiased estimate of the residual sum of squares, independent of
#'   \eqn{\beta^{(k)}}), which saves one pass over the minibatch per iteration.
#' * \eqn{\kappa} and \eqn{\delta} are computed from the already-updated \eqn{\rho} (Algorithm 1 read in order).
#' * The paper does not give the frozen latent values of its plain-SGLD arm; the authors' simulation code
#'   freezes \eqn{\kappa_0 = \kappa_1 = 1} (and \eqn{\sigma}), which `method = "none"` does by default.
#' * Optional warm-up `sgmcmc_ssgl(sa_start = )` (not in the paper; default off) keeps the latent
#'   variables fixed for the first iterations.
#'
#' @param x Numeric matrix (n x p) of predictors. With `standardize = TRUE` (the default) the sampler works on
#'   standardized columns (see "Scale"); with `standardize = FALSE` on the columns as given, and a fixed
#'   `sgmcmc_control(step_size = )` then warns (class `scalebayes_warning_scale`) when the median column mean
#'   square is below 0.01 or above 100. Or a model formula, `y ~ x1 + x2` or `y ~ .`, with the variables in `data`: see [sb_formula]. The formula's intercept
#'   is `intercept` (`y ~ . - 1`: none); for a network `model` its numeric design (factors expanded) is `x`.
#' @param y Response: numeric for `"gaussian"`, 0/1 (or a two-level factor / logical) for `"binomial"`,
#'   counts (non-negative whole numbers, not all zero) for `"poisson"` (not given with a formula).
#' @inheritParams wbb
#' @param family `"gaussian"` (linear regression, noise variance \eqn{\sigma^2}), `"binomial"` (logistic) or
#'   `"poisson"` (counts, log link; see "Poisson regression").
#' @param method `"sa"`, `"em"` or `"none"`, see Details.
#' @param sampler `"sgld"` (the default), `"sghmc"`, `"sgnht"` (the stochastic-gradient Nose-Hoover thermostat of Ding et al.
#'   2014: SGHMC whose friction adapts so that the kinetic energy matches the temperature, absorbing the
#'   minibatch noise; see Details), `"hamcmc_sa"` (Hessian-approximated SG-MCMC with stochastic
#'   approximation of the preconditioner, Wang, Deng & Lin 2021), `"hamcmc"` (Simsekli et al. 2016); see
#'   [hamcmc_sa()] and the L-BFGS knobs of [sgmcmc_lbfgs()]) or `"psgld"` (preconditioned SGLD, Li, Chen, Carlson
#'   & Carin 2016: an RMSprop diagonal preconditioner adapted during the burn-in and then held fixed, so the
#'   kept draws target the posterior exactly; its step is RMSprop's learning rate; it reads no `metric`, and is
#'   meant for networks, where the metric warm-up does not run; see `rmsprop_alpha` in [sgmcmc_step()]) or
#'   `"sghmc_baoab"` (SGHMC by the BAOAB splitting of Leimkuhler & Matthews 2013: the same momentum, friction and
#'   cost per iteration as `"sghmc"`, with the friction's Ornstein-Uhlenbeck step solved exactly, which removes
#'   SGHMC's discretization excess in the variance with full-data gradients; it reads no `noise_estimate`).
#' @param weights Networks only: optional non-negative per-example weights \eqn{w_i} of the log-likelihood
#'   \eqn{\sum_i w_i \log p(y_i \mid x_i, \theta)} (one per row of `x`; `NULL`: all 1).
#' @param iterations Number of iterations per chain. `NULL` (default): for regression with the step warm-up,
#'   chosen from the pilot's measured mixing (see "Step-size warm-up"); with a given step 40,000. Networks: see
#'   `epochs`.
#' @param standardize Regression: sample on standardized predictors (centred when there is an intercept,
#'   scaled to unit root mean square, as glmnet) and, for `"gaussian"`, a centred and scaled response (default
#'   `TRUE`); see "Scale". Networks: sample on standardized inputs and a standardized gaussian response, with
#'   results on the user's scale (default `TRUE`); see "Networks".
#' @param batch_size Minibatch size n. A gaussian regression with at most half as many coefficients as rows
#'   (and at most 2,000): default every row at any N, the full-data gradient computed from the Gram matrix
#'   \eqn{X'X} in O(P^2) per iteration (exact, and cheaper than a minibatch of more than P rows; ames, 2,344
#'   rows, 35 coefficients: HAMCMC-SA 12 s -> 3-6 s). Other regressions with SGLD, SGHMC or SGNHT, the warm-up's step and fewer
#'   coefficients than rows (control variates, `sgmcmc_step(gradient = )`): default every row (full-data
#'   gradients) up to 2,000 rows, else 32 to 1,000 rows chosen from the control variate's measured noise.
#'   Otherwise (HAMCMC-SA / HAMCMC, a given step, or `gradient = "minibatch"`): every row up to 10,000 rows, else 50 (the paper's): without control variates a
#'   minibatch of n of N rows must shrink the step by about n / N for the same accuracy, so it buys nothing per
#'   row visited. Networks: see "Networks".
#' @param v0,v1 Spike scale and slab variance factor of the SSGL prior. `v0 = NULL` (default) is, for
#'   regression, 0.2 of a standardized coefficient's posterior sd at the null: \eqn{0.2 / \sqrt{N}} for
#'   `"gaussian"` (whose prior is scaled by \eqn{\sigma}) and \eqn{0.2 / \sqrt{N \bar y (1 - \bar y)}} for
#'   `"binomial"`, \eqn{0.2 / \sqrt{N \bar y}} for `"poisson"` (the same rule: \eqn{N \bar y} is the Fisher
#'   information of a standardized slope at the intercept-only fit), so that a coefficient leaves the spike when its z-score exceeds about 5 whatever N; for a
#'   network 1 (the paper's MNIST setting). A regression samples standardized coefficients (see "Scale"): on the
#'   user's scale the spike of coefficient j is Laplace\eqn{(0, \sigma v_0 / s_{x_j})} (\eqn{s_{x_j}} the
#'   column's root mean square after centring) and the slab \eqn{N(0, \sigma^2 v_1 / s_{x_j}^2)}. Measured with
#'   every default (`bench/sgmcmc_defaults.R`, `bench/RESULTS.md` "SG-MCMC defaults"): diabetes bmi, map, ltg
#'   0.995-1.00 and the other seven at most 0.02 (SGLD); Table 1's design with 5 signals at n = 200, p = 50:
#'   signals 1.00, nulls' mean about 0.002. The old default 0.1 is wider than a posterior sd once N > 100,
#'   every coefficient fits in it and the inclusion probabilities collapse (diabetes: all below 1e-11). A spike
#'   this narrow makes the SA bistable for a borderline coefficient (z about 3-5): the warm-up's SA settles it
#'   on one side from the cross-validated lasso start, with a spike that narrows over its rounds (4, 2, 1 times
#'   `v0` when p < N), and every chain starts from that estimate. With p >= N (gaussian) \eqn{\sigma} is held
#'   at the lasso's residual sd (`sgmcmc_ssgl(fixed_sigma = )`): an SA of \eqn{\sigma} there let it grow as
#'   coefficients dropped into the spike, which dropped more (n = 100, p = 1,000: 2 of 5 signals kept; held, 4
#'   of 5). With 0.1 the Laplace spike holds every weight of a network near zero; on Boston (`nn_mlp()`,
#'   held-out fifth, lm 5.99) SGHMC's test RMSE is 5.64 with 0.1 and 4.42 with 1.
#' @param sparse Logical, length 1 or `ncol(x)`: which columns get the SSGL prior (others get
#'   \eqn{N(0, \sigma_0^2)}, `prior_var` of [sgmcmc_ssgl()]).
#' @param intercept Fit an intercept (non-sparse, \eqn{N(0, \sigma_0^2)} prior)?
#' @param burnin Iterations discarded before draws are stored and averaged (default half).
#' @param thin Keep every `thin`-th iteration after burn-in (default: about 1000 draws per chain).
#' @param keep_draws Which draws are stored. Regression: `TRUE` (every coefficient) or the coefficients whose
#'   draws are stored (names or indices in the order of [coef()], intercept first); posterior means, sds and
#'   predictive averages always cover all coefficients. Networks: `TRUE` (default) stores at most 100 draws
#'   per chain (fewer for a network so large that they would exceed 512 MB) (every parameter and the predictions on `newx`, evenly spaced over the kept iterations, as
#'   float32 unless `sgmcmc_control(float64 = TRUE)`), so that [predict()] works on new inputs; a number stores
#'   at most that many per chain (`Inf`: every kept iteration); `FALSE` none (running averages only).
#'   Posterior-mean predictions and parameters always average over every kept iteration.
#' @param keep Deprecated name of `keep_draws`.
#' @param newx Optional test matrix: posterior predictive averages over all kept iterations are accumulated
#'   during the run (see [predict.sb_fit()]).
#' @param chains Number of independent chains (run in parallel threads, each with its own random stream); default 4
#'   (split R-hat and ESS need several; for a network they are computed on function-space summaries, see
#'   "Networks").
#' @param threads Number of threads (default [sb_default_threads()]); results do not depend on it.
#' @param future,chunks Split the chains into `chunks` (default: one per worker) run through the future
#'   framework (`future.apply`), on the workers of the user's `future::plan()`; each chunk runs its chains on
#'   `threads` threads. Chain c always uses random stream c, so the result is identical to a single-process
#'   run (regression and networks). A single chain always runs in this process.
#' @param seed Seed (`NULL`: drawn from R's RNG, so [set.seed()] works).
#' @param quiet Hide the progress bar (default: `TRUE` when not interactive) and the message (class
#'   `scalebayes_message_warmup`) that the step-size warm-up was long against the run: more than 5 s (option
#'   `scalebayes.warmup_note_seconds`) and more pilot iterations than the run's iterations of all chains; it
#'   names `sgmcmc_control(step_size = )`, which skips the warm-up.
#' @param control [sgmcmc_control()] settings: the step size, the step ([sgmcmc_step()]), the SSGL prior
#'   ([sgmcmc_ssgl()]) and, for the preconditioned samplers, the L-BFGS preconditioner ([sgmcmc_lbfgs()]).
#' @param model A network made by [nn_sequential()], [nn_mlp()] or [nn_cnn()]: sample its weights instead of regression
#'   coefficients (see "Networks" below). `NULL` (default): regression on the columns of `x`.
#' @param epochs Networks: the run length in passes over the data, an alternative to `iterations`
#'   (iterations = epochs x ceiling(n / batch_size)).
#' @param sparse_layers Networks: which weight layers (1 = the first linear or convolution layer) get the SSGL
#'   prior (`NULL` or `TRUE`: all; `FALSE`: none); biases, the other layers and batch-norm parameters get the
#'   \eqn{N(0, \sigma_0^2)} prior of `control$prior_var`.
#' @param newy Networks: test responses for `newx`; the fit then reports the test accuracy (or RMSE) of the
#'   posterior predictive mean, and of every kept draw when `keep_draws = TRUE`.
#' @param device Networks: `"cpu"`, `"cuda"` or `"auto"`.
#' @param batch Networks: run the chains as one batched network (every chain a member of a network whose
#'   weights have a leading chain dimension; see "Batched chains"): `"auto"` (default: batched when the chains
#'   have a batched form and there are at least two of them: a single chain batched costs up to twice one
#'   network), `TRUE` (batched; an error, class `scalebayes_error`, when they have none), `FALSE` (one network
#'   per chain and thread, as before), or a number of chains per batch.
#' @section Scale:
#' With `standardize = TRUE` (the default) the regression is sampled on \eqn{x_s = (x - m_x) / s_x} and, for
#' `"gaussian"`, \eqn{y_s = (y - m_y) / s_y}, so that the same defaults suit any units. The SSGL prior
#' (`v0`, `v1`), the Gaussian prior of the non-sparse coefficients (`prior_var`), \eqn{\sigma}'s initial value
#' and inverse-gamma prior, the step size and the inclusion probabilities act on that scale; `init` is given
#' and `likelihood_sd` is read on the user's scale. Everything returned is on the user's scale: draws,
#' coefficients and their sds, intervals, `predict()`, \eqn{\sigma} (times \eqn{s_y}) and the trace's
#' log-likelihood (less \eqn{N \log s_y}); the map \eqn{\beta_j = s_y b_j / s_{x_j}}, \eqn{\beta_0 = m_y +
#' s_y b_0 - \sum_j \beta_j m_{x_j}} is linear, so every draw maps exactly. `final_state` holds \eqn{\beta}
#' and \eqn{\sigma} on the user's scale and \eqn{\kappa_0, \kappa_1} on the sampler's. Without an intercept
#' nothing is centred. A column with no spread keeps scale 1.
#' @section Poisson regression:
#' `family = "poisson"` models counts \eqn{y_i \sim \mathrm{Poisson}(e^{\eta_i})}, \eqn{\eta_i = x_i'\beta}, with
#' the same SSGL prior, samplers, warm-up and control variates as the other families; the response is not
#' scaled (`standardize = TRUE` scales the predictors only). As for `"binomial"` there is no noise variance: with
#' the warm-up's step \eqn{\sigma} (the SSGL prior's scale) is held at 1 (`sgmcmc_ssgl(fixed_sigma = )`), and the
#' default spike is \eqn{v_0 = 0.2 / \sqrt{N \bar y}}. The chains start at the intercept \eqn{\log \bar y}
#' (the cross-validated lasso or the control variates' centre, found by Newton's method with step halving, when
#' the warm-up uses a sparse start). Numerically: the mean is \eqn{e^{\min(\eta, 40)}} in the gradient and the
#' log-likelihood (a mean of \eqn{2.4 \times 10^{17}}, beyond any count), so a chain that runs away gives finite
#' values and is stopped by the loss rule of divergence instead of producing `NaN`. The trace's `loglik` and the
#' loss rule include \eqn{-\log y_i!}. `predict(type = "link")` is \eqn{\eta}, `type = "response"` the mean
#' \eqn{e^\eta} (averaged over the draws), `posterior_predict()` draws `rpois()`, and `log_lik()` is the Poisson
#' log-density. An exposure offset is not implemented (a formula with `offset()` is an error): give
#' \eqn{\log} exposure as a predictor (its coefficient is then estimated, near 1), or use [wbb()] /
#' [weighted_lasso()], which take `offset`. Checked against an exact importance sampler and for selection in
#' `tests/testthat/test-sgmcmc-poisson.R`; measured against Stan's NUTS in `bench/sgmcmc_scale.R`.
#' @section Step-size warm-up:
#' With `sgmcmc_control(step_size = "auto")` (the default for regression; any given step switches it off) a
#' warm-up chooses the step before the chains run.
#'
#' **SGLD, SGHMC and SGNHT** (with `sgmcmc_step(metric = "auto")`, the default) first adapt a fixed
#' preconditioner \eqn{M = L L'} (the "metric", as Stan's warm-up adapts its mass matrix: dense up to 200
#' coefficients, else diagonal), then choose the step in the whitened coordinates \eqn{L^{-1}\beta}, where the
#' posterior is close to unit scale whatever the data's. For `method = "sa"` or `"em"` the chains and pilots start
#' at the cross-validated lasso (`cv_weighted_lasso()` at glmnet's lambda.1se on the sampler's scale, folds from
#' `seed`) with \eqn{\sigma} at its residual sd (gaussian, unless `sigma_init` is given). \eqn{M} starts at the
#' inverse Hessian of the log posterior (the likelihood at a ridge fit's residual variance, the prior at the
#' latents' start); two pilots of 1,000 iterations (the first with the latent variables held unless the start is
#' the lasso's, the second with the fit's SA) each set its variances from their draws (in the Hessian's
#' correlation, at most the prior variance at the pilot's latents); successive halving by KSD then picks a
#' whitened step from \eqn{2^0, \dots, 2^{-5}} (SGHMC and SGNHT: times the friction) with pilots of 200-1,600
#' iterations, capped where the step's excess variance \eqn{\epsilon/2 (1 + (N - n)/n)} is 10 % of the smallest
#' whitened variance (about 0.2 with full-data gradients); a last pilot of 2,000 iterations at that step measures
#' the mixing rate. All pilots after the SA's one hold the latent variables at its estimate; every chain starts at
#' a draw of the last pilot (spread over its kept half) and samples the posterior with the latent variables held
#' at that empirical-Bayes estimate (\eqn{\rho}, \eqn{\delta}, \eqn{\sigma}), as Stan's adaptation stops with its
#' warm-up: given them the prior of each coefficient is one Laplace times normal density, so the chains sample
#' one posterior. With an SA of their own (from \eqn{\rho = 0.5}, or going on from the estimate) chains settled a
#' borderline coefficient apart (diabetes' tc; Boston's black with `v0 = 0.2 / sqrt(N)`: max R-hat 1.53, bulk
#' ESS 7); held, max R-hat 1.004. Before the rounds end, each coefficient's side of the spike is checked against
#' the evidence: the SA from the sparse start leaves a coefficient of \eqn{|z|} up to about 5 in the spike (where
#' the spike's mode disappears) whatever its posterior inclusion, and a Langevin chain does not cross the spike's
#' barrier. A gaussian regression's chains then hold the median-probability model: the coefficients whose
#' posterior inclusion probability (below) exceeds 1/2; a logistic or Poisson regression's coefficient moves when
#' its one-flip probability at the held model is on the other side of 1/2 from its \eqn{\rho} (the most at odds
#' first). The model's coefficients move to its mode, \eqn{\rho}, \eqn{\delta} and (gaussian) \eqn{\sigma} with
#' it, and up to two more metric rounds run with the latents held there (`fit$warmup$spike_side` lists the moves;
#' `print()` names them). With held latents `fit$inclusion` is then, for a gaussian regression, the posterior
#' inclusion probability \eqn{P(\gamma_j = 1 \mid y, \delta)} with the spike in its point-mass limit and
#' \eqn{\sigma}, the intercept and the slab coefficients integrated out (exact by enumeration up to 12 sparse
#' coefficients, else a Rao-Blackwellized collapsed Gibbs sampler over the indicators, from `seed`); for a GLM the
#' one-flip probability \eqn{P(\gamma_j = 1 \mid y, \gamma_{-j})} at the held model (its Laplace
#' approximation). Measured against the exact point-mass posterior (n = 100, p = 1,000, Table 1's design, six
#' seeds, `bench/sgmcmc_defaults.R selection_pn`): within 0.05 at every seed (signal 3: 0.89 where the exact value
#' is 0.88; 0.00 before, the SA's \eqn{\rho}). A given step (no warm-up)
#' runs the paper's SA in every chain. In all about 9,600 pilot iterations of one chain
#' (a few hundredths of a second on diabetes). `sgmcmc_step(metric = "none")` gives the grid below instead.
#'
#' **HAMCMC-SA and HAMCMC** (and `metric = "none"`): successive halving over a geometric grid: for the
#' preconditioned samplers \eqn{\epsilon = 2^0, 2^{-1}, \dots, 2^{-9}} on the summed scale with first-round pilots of
#' 250 iterations; for SGLD, SGHMC and SGNHT with `metric = "none"` \eqn{h = 2^2, \dots, 2^{-14}} per example
#' (\eqn{\epsilon = h / N}) with pilots of 1,000; for pSGLD (`"psgld"`, no metric) \eqn{\epsilon = 2^2, \dots,
#' 2^{-14}} (RMSprop's learning rate, N-free) with pilots of 1,000. Each later round keeps the better half and doubles the pilot
#' length, until one step is left (about 16,000 pilot iterations for the preconditioned samplers, 143,000 for
#' the others). For `method = "sa"` the preconditioned samplers' chains then start as the metric samplers' do:
#' from the cross-validated lasso, SA pilots of 1,000 iterations at the chosen step (the spike narrowing 4, 2, 1
#' times `v0` when p < N) set the latent variables, and a pilot of 2,000 iterations with them held measures the
#' mixing rate and gives each chain's start (HAMCMC-SA with every default: diabetes 7,000 iterations per
#' chain, 21,000 pilot iterations, max R-hat 1.005; Boston 25,000, max R-hat 1.001). A pilot is scored by the
#' kernel Stein discrepancy ([ksd()]) of its
#' last half (at most 500 draws) against the full-data score of the log posterior, with the latent variables
#' held where the chains start (so every step is scored against the same posterior); a pilot that diverges is
#' ruled out. The KSD of a short pilot rewards mixing more than it punishes the variance a long step adds, so
#' the chosen step is then capped where that excess is at most 10 % of the smallest marginal posterior
#' variance of the pilot (for SGLD the excess is about \eqn{\epsilon/2 (1 + (N - n)/n)} per coordinate with
#' minibatches of n of N rows; SGHMC and SGNHT behave as SGLD at \eqn{\eta/\alpha}; for the preconditioned
#' samplers, whose preconditioner is about the inverse Hessian, the same excess is a fraction
#' \eqn{\epsilon/2 (1 + (N - n)/n)} of each coordinate's variance and is capped at 10 %; for pSGLD, whose
#' preconditioner is about \eqn{\sqrt{v_j / (1 + (N - n)/n)}} for a coordinate of variance \eqn{v_j}, the excess is
#' about \eqn{\epsilon \sqrt{v_j (1 + (N - n)/n)} / 2}, capped at 10 % of \eqn{v_j} in every coordinate).
#'
#' When `iterations` is not given, the run length comes from the last pilot: its smallest bulk ESS per
#' iteration (measured at the final step, or scaled to it) sets the iterations for an expected bulk ESS of 300 per chain after
#' burn-in, between 2,000 (with a metric), 5,000 (HAMCMC-SA, HAMCMC) or 20,000 (`metric = "none"`) and 2,000,000. The step is constant
#' (`sgmcmc_step(schedule = "constant")`) unless a schedule is given. The pilots run on their own random
#' streams of `seed`, so the choice, like the draws, does not depend on `threads`. `fit$warmup` holds the table
#' of steps, pilot lengths and KSDs, the KSD's choice (`ksd_step`), the capped step, the pilot's ESS rate, the
#' pilot iterations and the time it took (with a metric also `metric`, `metric_kind` and the `adaptation`
#' rounds); `print()` shows the step and what the warm-up cost. Measured times are in `bench/RESULTS.md`
#' (`bench/sgmcmc_defaults.R`, `bench/sgmcmc_trust.R`).
#' @section Convergence and divergence:
#' The kept draws of the chains give split R-hat and bulk / tail ESS per coefficient (rank-normalized,
#' posterior package; `fit$diagnostics$convergence`, `summary()`, and the largest R-hat and smallest ESS in
#' `print()`). When the largest R-hat exceeds 1.01 or the smallest bulk ESS is below 100 (Stan's thresholds)
#' the call warns (class `scalebayes_warning_convergence`) and says what to change. A chain whose state (or
#' \eqn{\sigma}) becomes non-finite, or whose training loss per example (half the mean squared residual on the
#' sampler's scale for gaussian, the mean negative log-likelihood for binomial, at each trace point after the
#' burn-in) exceeds `sgmcmc_control(diverge_loss = 10)` times the larger of its lowest so far (from its
#' starting point on) and
#' the loss of the best constant prediction, stops at that iteration, is marked diverged (`fit$diverged`,
#' `fit$diverged_at`, the reason in `fit$diverged_why`), is left out of the draws and of every average, and the call warns (class
#' `scalebayes_warning_diverged`) naming the chain, the iteration and the step; `print()` says so on its first
#' line. When every chain diverged the call is an error (class `scalebayes_error_diverged`) carrying the last
#' good state of chain 1 (field `last_state`; for a network, the iteration of each chain's divergence, field
#' `diverged_at`).
#' @section Batched chains:
#' Chains of a network with a batched form -- linear layers, convolutions, pooling, flatten, reshape and
#' activations (no batch norm, dropout 0), e.g. the MLPs of [nn_mlp()] -- with any sampler (`"sgld"`,
#' `"sghmc"`, `"sgnht"`, `"hamcmc_sa"` with `sa_form` `"diagonal"` or `"lowrank"`, `"hamcmc"`), with or without
#' magnitude pruning -- run by default (`batch = "auto"`) as one
#' batched network per thread: the weights of every chain of a batch are one tensor with a leading chain
#' dimension, updated by batched matrix products and the same update rules, with each chain's own minibatches,
#' initialization, noise generator, latent variables, sigma and divergence (a diverging chain stops alone). Chain
#' c draws from the random streams of chain c whatever the batching or `threads`: the draws are the same for any
#' batch size and `threads` (bitwise in our tests) and equal those of `batch = FALSE` up to floating-point
#' rounding: float64 chains 4e-15 apart (relative) after 60 iterations; float32 chains 3e-8 apart after 12, but
#' over thousands of iterations a chain amplifies last-bit differences until the batched and unbatched paths are
#' different draws of the same posterior (measured: 2,000 SGHMC-SA iterations of a Boston MLP, posterior mean
#' predictions 0.29 sd apart). HAMCMC-SA and HAMCMC keep each chain's L-BFGS memory, preconditioner and
#' curvature pairs as per-chain slices of batched tensors, and pruning zeroes each chain's own smallest weights.
#' Other layers (batch norm, dropout > 0) run one network per
#' chain (`"auto"` falls back; `TRUE` is an error). Measured on 2 CPU cores (`bench/batched.R`,
#' `bench/RESULTS.md`): see "Batched SG-MCMC chains" there. The step-size warm-up's pilots are 4 chains run
#' batched whatever `batch` says (see "Networks"), so the step chosen does not depend on `batch`. The fit
#' records the choice: `fit$settings$batch` (what was asked),
#' `fit$settings$batched` (what ran) and `fit$settings$unbatched` (why the chains ran one network each, e.g. the
#' layer without a batched form that `"auto"` found; `NA` when batched).
#' @section Band coverage:
#' On a simulated regression with a known 1-hidden-layer tanh network as f (2 inputs, noise sd 0.3, 300 training
#' and 200 test rows, an `nn_mlp(8)` fit of 1,000 epochs, 5 seeds; `bench/nn_coverage.R`,
#' `vignette("variational")` section 4), `sgld_sa(model = )` (2 chains)'s 90 % bands covered the true f at 0.84 of the test inputs and
#' its 90 % predictive intervals covered new y at 0.93 (averages over the seeds).
#' @section Networks:
#' With `model = nn_mlp(...)` or `nn_cnn(...)` the same chain driver samples a network's weights: the
#' minibatch gradient of the log-likelihood (cross-entropy for `"multinomial"`, Bernoulli for `"binomial"`,
#' Gaussian with variance \eqn{\sigma^2} for `"gaussian"`) scaled by N/n, the SSGL prior on each weight tensor
#' of `sparse_layers` with its own \eqn{\rho, \kappa_0, \kappa_1, \delta} ("layer l" of the paper), SGLD or
#' SGHMC, the SA / EM / none updates (for a network, `"none"` keeps the latent variables where they start:
#' \eqn{\kappa} implied by `rho_init` unless `kappa0_init` / `kappa1_init` are given), annealing (`sgmcmc_step(anneal = 1.003)` gives the paper's
#' \eqn{\tau_k = \tau 1.003^k}) and magnitude pruning (`prune = TRUE`). `family` defaults from `y` (factor:
#' multinomial). The network starts from PyTorch's default initialization drawn from the chain's stream (or
#' from `sgmcmc_control(init = )`: given parameters or an earlier network fit, e.g. to fine-tune a pre-trained
#' network as the paper's pruning study does), and
#' the Langevin noise comes from a torch generator seeded from that stream: the same seed gives the same draws
#' for any `threads` on the CPU, and for any `future` plan. The step size of a network is chosen by a warm-up
#' by default (`step_size = "auto"`): a grid of per-example steps 9, 3, 1, 1/3, 1/9 times a measured rate
#' (0.3 / N for SGLD and HAMCMC, 0.03 / N for SGHMC and SGNHT, whose momentum moves about
#' 1 / friction times further per step; N training examples), or for HAMCMC-SA steps on the summed scale 9, 3,
#' 1, 1/3, 1/9 times 0.1 (its \eqn{G_1 = I/\gamma_1} divides by the summed curvature from the first iteration,
#' so its step is free of N; see "Starting preconditioner" in [hamcmc_sa()]), for pSGLD 9, 3, 1, 1/3, 1/9 times
#' 0.03 (RMSprop's learning rate, free of N), each scored by the mean training loss per
#' example over the second half of a pilot of 4 chains run batched on their own streams (one chain for a
#' network without a batched form; from chain 1's start when `init` is given; latent variables held;
#' a pilot in which any chain diverges is ruled out), successive halving from pilots of max(200, iterations / 50)
#' iterations (27 times that in all); when the grid step above the winner
#' diverged, the step below the winner is taken, since a step next to a diverging one may diverge in a longer
#' chain (when the winner is the top of the grid, one more pilot of the first round's length, 3 times the top
#' step, stands for the step above). `fit$warmup` holds the table; an explicit
#' `sgmcmc_control(step_size = )` (on the summed scale of the paper) switches it off. The warm-up's step then
#' decays as \eqn{\epsilon_0 k^{-1/3}} (the paper's schedule; `sgmcmc_step(schedule = )` overrides it), except for
#' HAMCMC-SA, whose step stays constant: its preconditioner already shrinks the steps as its curvature estimate
#' grows, and the decay on top stalled it (2,000 MNIST digits: 0.887 held-out accuracy decaying, 0.905
#' constant). With a constant step, SGLD-SA lost one of 4 chains on raw Boston.
#'
#' A network's weights are not identifiable (chains that agree on the function may hold permuted weights),
#' so the 4 chains' R-hat and ESS (`fit$diagnostics$convergence`, `print()`; the convergence warning of
#' networks is described in "Convergence of network chains") are computed on function-space summaries: the training loss per example at the trace points after burn-in,
#' and the predictions at 8 training examples spread over the data (`fit$diagnostics$probe`) from the stored
#' draws. Besides a non-finite state, a chain whose mean training loss per example is not finite or exceeds
#' `sgmcmc_control(diverge_loss = 10)` times the larger of its lowest before (from the loss of a zero output
#' on) and the loss of the best
#' constant prediction is stopped and reported as diverged (the reason in `fit$diverged_why`). With `newx`, predictions are
#' averaged over the kept iterations (posterior predictive mean); the fit (class `c("sb_sgld_sa_nn",
#' "sb_nn_fit", "sb_fit")`, see [sb_nn_fit-methods]) holds them with the stored draws (`keep_draws`), the
#' posterior-mean and final weights, the per-weight inclusion probabilities \eqn{\rho}, the sparsity (share of exactly-zero sparse
#' weights, from pruning), and a trace per chain (sigma, mean delta, mean rho, mean minibatch loss, step size,
#' temperature, sparsity, minibatch accuracy; for HAMCMC-SA / HAMCMC also `drift_ratio`, `noise_ratio` and `gamma`,
#' as below); the progress bar shows the loss, accuracy and sparsity of the first
#' chain. Interrupting a network run (Ctrl-C) returns the state reached, with a warning.
#'
#' With `standardize = TRUE` (the default) a network is sampled on standardized data, as [wbb_nn()] trains
#' (see its section "Standardization"): the inputs centred and scaled to unit sd per column (images, i.e. an
#' array `x` or a network starting with a convolution: by one mean and sd over all pixels), and a gaussian
#' response centred and scaled (per column for a matrix `y`; with `weights`, weighted means and sds, so that an
#' example of weight 0 does not enter). The priors (the SSGL prior with `v0`, `v1`, the
#' \eqn{N(0, \sigma_0^2)} prior of `prior_var`, `sigma_init`), the step size and the stored parameters (draws,
#' `weights_mean`, `weights_final`, [coef()]) and the trace's loss are those of the standardized problem;
#' predictions (`pred`, `pred_mean`, [predict()] on new raw inputs, which applies the stored `fit$scaling`),
#' the test RMSE, and sigma (`latent$sigma`, `trace$sigma`; with several gaussian outputs the common sigma of the
#' standardized outputs, output j's being `sigma * fit$scaling$y_scale[j]`) are on the user's scale, and
#' `sgmcmc_ssgl(likelihood_sd = )` is given on it. A starting network `sgmcmc_control(init = fit)` is
#' re-expressed for this fit's scale when it was trained on another (the same function of the raw inputs);
#' starting parameters given as numbers are on the standardized scale. [nn_export()] folds the transform into
#' the exported network.
#' @section Interrupts:
#' Ctrl-C stops the engine at its next check and returns the partial fit of what finished (for a regression, the kept draws of every chain that kept some (an interrupt in the warm-up or the burn-in keeps nothing); for a network, the state reached (see below)),
#' with one warning of class `scalebayes_warning_interrupted` and `fit$interrupted` `TRUE`; when nothing
#' finished it is R's interrupt. See [scalebayes-interrupts].
#' @return An object of class `c("sb_sgld_sa", "sb_fit")`: the common draws object (see [sb_fit-methods])
#'   with, in addition, `coefficients` (running posterior means of all coefficients over the kept
#'   iterations of all chains), `coef_sd`, `inclusion` (selection probabilities: with the warm-up's held latents
#'   the posterior (gaussian) or one-flip (GLM) inclusion probabilities described above, else \eqn{\rho_j}
#'   averaged over the kept iterations and chains), `trace` (data frame: chain, iteration, sigma, delta, mean_rho, loglik, eps, tau; for the
#'   preconditioned samplers HAMCMC-SA and HAMCMC also `drift_ratio` = \eqn{\|\xi_k\| / \|g_k\|}, the length of
#'   the drift taken relative to the posterior gradient's (1 for SGLD; `NA` where the gradient is exactly zero, e.g.
#'   at a chain started at the mode), `noise_ratio` = \eqn{\|\eta_k\| /
#'   \|z_k\|}, the same for the injected noise, and `gamma`, the scale of the L-BFGS memory's initial Hessian
#'   \eqn{\gamma I}), `latent`
#'   (final sigma and delta per chain, and whether the chain diverged), `pred` (predictive averages for `newx`),
#'   `final_state`, `diverged` / `diverged_at` (per chain), `warmup` (the step warm-up, `NULL` when a step was
#'   given), `diagnostics$convergence` (R-hat and ESS per kept coefficient), and what [ksd()] needs
#'   (`score_data`, `latent_state`).
#' @references Deng, W., Zhang, X., Liang, F. and Lin, G. (2019). An adaptive empirical Bayesian method for
#'   sparse deep learning. NeurIPS 32. arXiv:1910.09987.
#' @export
#' @examples
#' set.seed(1)
#' n <- 60; p <- 20
#' x <- matrix(rnorm(n * p), n, p)
#' y <- drop(x[, 1:3] %*% c(3, 2, 1)) + rnorm(n)
#' fit <- sgld_sa(x, y, intercept = FALSE, seed = 1)
#' fit                  # step chosen by the warm-up, R-hat and ESS of 4 chains
#' round(head(coef(fit)), 2)
#' round(head(fit$inclusion), 2)
#' ksd(fit)
sgld_sa <- function(x, y, family = c("gaussian", "binomial", "poisson"), method = c("sa", "em", "none"),
                    sampler = "sgld", iterations = NULL, batch_size = NULL, v0 = NULL, v1 = 10,
                    sparse = TRUE, intercept = TRUE, burnin = NULL, thin = NULL, keep_draws = TRUE, newx = NULL,
                    chains = NULL, threads = NULL, future = FALSE, chunks = NULL, seed = NULL, quiet = NULL,
                    control = sgmcmc_control(), model = NULL, epochs = NULL, sparse_layers = NULL, newy = NULL,
                    device = "cpu", weights = NULL, standardize = TRUE, batch = "auto", keep, data = NULL, subset = NULL, na.action = NULL, contrasts = NULL) {
  # called by hamcmc_sa(): errors name the user's hamcmc_sa() call
  if (identical(sys.function(sys.parent()), hamcmc_sa)) rlang::local_error_call(parent.frame())
  if (!missing(x) && sb_is_formula(x)) {
    net <- !is.null(model)
    return(sb_formula_fit(environment(), "sgld_sa", sgld_sa, match.call(), intercept = if (net) "none" else "arg",
                          response = if (net) "network" else "glm"))
  }
  sb_formula_only(environment())
  call <- match.call()
  method <- sb_match_arg(method)
  sampler <- sgmcmc_match_sampler(sampler)
  keep_draws <- sb_renamed_arg(if (!missing(keep)) keep, keep_draws, "keep", "keep_draws", missing(keep_draws),
                               "sgld_sa", call = rlang::current_env(), old_missing = missing(keep))
  # arguments of the other front end: a classed error naming the first
  sgld_sa_check_front(net = !is.null(model), c(
    sparse = !missing(sparse), intercept = !missing(intercept), weights = !is.null(weights),
    epochs = !missing(epochs), sparse_layers = !missing(sparse_layers), newy = !missing(newy),
    device = !missing(device), batch = !missing(batch)))
  if (!is.null(model)) {
    family <- if (missing(family)) NULL else sb_match_arg(family, c("gaussian", "binomial", "multinomial"))
    v0 <- check_number(v0 %||% 1, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE, arg = "v0")
    v1 <- check_number(v1, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE)
    return(sgld_sa_nn(x, y, model = model, family = family, method = method, sampler = sampler,
                      iterations = iterations, epochs = epochs,
                      batch_size = batch_size, v0 = v0, v1 = v1, sparse_layers = sparse_layers, burnin = burnin,
                      thin = thin, newx = newx, newy = newy, chains = chains %||% 4L, threads = threads, seed = seed,
                      quiet = quiet, control = control, device = device, keep_draws = keep_draws,
                      future = future, chunks = chunks, weights = weights, standardize = standardize,
                      batch = batch, call = rlang::current_env(), mcall = call))
  }
  family <- sb_match_arg(family)
  sgld_sa_regression(x, y, family = family, method = method, sampler = sampler, iterations = iterations,
                     batch_size = batch_size, v0 = v0, v1 = v1, sparse = sparse, intercept = intercept,
                     burnin = burnin, thin = thin, keep_draws = keep_draws, newx = newx, chains = chains,
                     threads = threads, future = future, chunks = chunks, seed = seed, quiet = quiet,
                     control = control, standardize = standardize, call = rlang::current_env(), mcall = call)
}

# sgld_sa()'s arguments that belong to one front end: `given`, a named logical (was the argument given?) of
# the regression-only (sparse, intercept) and network-only (weights, epochs, sparse_layers, newy, device, batch)
# ones; the first given for the other front end is a classed error that names it.
#' @noRd
sgld_sa_check_front <- function(net, given, call = rlang::caller_env()) {
  regression_only <- c("sparse", "intercept")
  wrong <- names(given)[given & (names(given) %in% regression_only) == net]
  if (!length(wrong)) return(invisible())
  arg <- wrong[1]
  if (net) {
    sb_abort(c("{.arg {arg}} applies to regression, not to a network {.arg model}.",
               i = "For networks choose the sparse layers with {.arg sparse_layers}."), arg = arg, call = call)
  }
  if (arg == "weights") {
    sb_abort(c("{.arg weights} applies to a network {.arg model}, not to regression.",
               i = "Per-example weights of the regression likelihood are not implemented; drop {.arg weights}."),
             arg = "weights", call = call)
  }
  sb_abort(c("{.arg {arg}} applies to networks only.",
             i = "Pass a network as {.arg model} (e.g. {.code model = nn_mlp(50)}), or drop {.arg {arg}}."),
           arg = arg, call = call)
}

# The regression front end of sgld_sa() (and hamcmc_sa()): a GLM's chains on the engine's sgmcmc/glm.hpp.
# Arguments are sgld_sa()'s, already matched where shared (family, method, sampler, keep_draws); `call`:
# sgld_sa()'s frame, which every error names; `mcall`: the user's call, stored in the fit.
#' @noRd
sgld_sa_regression <- function(x, y, family, method, sampler, iterations, batch_size, v0, v1, sparse, intercept,
                               burnin, thin, keep_draws, newx, chains, threads, future, chunks, seed, quiet,
                               control, standardize, call, mcall) {
  rlang::local_error_call(call)  # the helpers' caller_env() errors name sgld_sa(), the user's call
  iterations_given <- !is.null(iterations)
  x <- check_x_matrix(x)
  n <- nrow(x)
  p <- ncol(x)
  y <- switch(family, binomial = binomial_response(y, n, both_classes = FALSE),
              poisson = poisson_response(y, n), check_y_vector(y, n))
  iterations <- if (iterations_given) check_count(iterations) else 40000L  # a given step; else the warm-up's
  check_sgmcmc_control(control, sampler)  # before its settings are read (gradient, step_size)
  gradient <- control$gradient %||% "auto"
  batch_given <- !is.null(batch_size)
  # control variates by default: with the warm-up's step (a given step is the papers' setting, with their plain
  # minibatches) and fewer coefficients than rows
  # (and not for HAMCMC-SA / HAMCMC, whose curvature pairs suffer from small minibatches: ames, 2,344 rows, 389-row
  # control-variate minibatches: 28 s, 406,000 iterations, min ESS 71; every row: 9.5 s, R-hat 1.003)
  cv_auto <- gradient == "auto" && (is.null(control$step_size) || identical(control$step_size, "auto")) &&
    !sgmcmc_sampler_info(sampler)$preconditioned
  cv_default <- (gradient == "control_variate" || cv_auto) && p + intercept_flag(intercept) < n
  # a gaussian regression with at most half as many coefficients as rows: every row in each minibatch, whatever
  # N, in the engine's Gram form (sgmcmc/glm.hpp: GramState), whose gradient costs O(P^2) and is exact, where a
  # minibatch costs O(n P) and is noisy (ames, 2,344 rows, 35 coefficients: control-variate minibatches of about
  # 390 rows cost 11 times a Gram gradient)
  gram_default <- is.null(batch_size) && gradient != "control_variate" && family == "gaussian" &&
    sgmcmc_gram_applies(n, p + intercept_flag(intercept))
  batch_size <- if (gram_default) as.integer(n)
                else if (is.null(batch_size)) sgmcmc_default_batch(n, cv = cv_default) else check_count(batch_size)
  if (batch_size > n) {
    sb_abort(c("{.arg batch_size} must not exceed the number of observations.",
               x = "batch_size = {batch_size} but {.arg x} has {n} rows."), arg = "batch_size")
  }
  v0 <- check_number(v0 %||% sgmcmc_default_v0(y, family), lower = 0, lower_open = TRUE, upper = Inf,
                     upper_open = TRUE, arg = "v0")
  v1 <- check_number(v1, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE)
  check_spike_slab(v0, v1, method)
  if (!is.logical(sparse) || anyNA(sparse) || !(length(sparse) %in% c(1L, p))) {
    sb_abort(c("{.arg sparse} must be TRUE/FALSE or a logical vector with one entry per column of {.arg x}.",
               x = "It has length {length(sparse)}; {.arg x} has {p} columns."), arg = "sparse")
  }
  sparse <- rep_len(sparse, p)
  intercept <- check_flag(intercept)
  burnin_arg <- burnin
  thin_arg <- thin
  lens <- sgmcmc_lengths(iterations, burnin, thin)
  burnin <- lens$burnin
  thin <- lens$thin
  coef_names <- c(if (intercept) "(Intercept)", colnames(x))
  P <- length(coef_names)
  keep <- resolve_keep(keep_draws, coef_names)
  if (!is.null(newx)) {
    newx <- check_x_matrix(newx, min_cols = p)
    if (ncol(newx) != p) {
      sb_abort(c("{.arg newx} must have the same number of columns as {.arg x}.",
                 x = "{.arg newx} has {ncol(newx)}, {.arg x} has {p}."), arg = "newx")
    }
  }
  chains <- if (is.null(chains)) 4L else check_count(chains)
  standardize <- check_flag(standardize)
  n_keep <- if (standardize) P else length(keep)
  check_result_memory(8 * as.double(chains) * ((iterations - burnin) %/% thin) * n_keep, "iterations",
                      peak = 8 * as.double(chains) * ((iterations - burnin) %/% thin) * n_keep * 2,
                      fix = "Use fewer {.arg iterations} or {.arg chains}, a larger {.arg burnin} or {.arg thin}, or keep fewer coefficients ({.arg keep}).")
  future <- check_flag(future)
  run <- run_settings(seed, threads, quiet)
  seed <- run$seed
  check_frozen_step(control, moves = method != "none", what = 'method = "none"')
  # the scale the sampler works on (R/sgmcmc_scale.R); init and likelihood_sd are given on the user's scale
  sc <- if (standardize) sgmcmc_scaling(x, y, family, intercept) else NULL
  xs <- sgmcmc_apply_x(x, sc)
  ys <- sgmcmc_apply_y(y, sc)
  init <- resolve_init(control$init, P, chains, start = if (intercept) intercept_start(ys, family) else NULL)
  if (!is.null(control$init) && !is.null(sc)) init <- t(sgmcmc_to_sampler_scale(t(init), sc))
  if (!is.null(control$likelihood_sd) && !is.null(sc)) control$likelihood_sd <- control$likelihood_sd / sc$y_scale
  check_anneal(control, iterations)
  check_hamcmc_control(control, sampler, P)
  control$sa_form <- control$sa_form %||% sgmcmc_default_sa_form(P)
  warn_hamcmc_experimental(control, sampler, batch_size < n)
  auto_step <- is.null(control$step_size) || identical(control$step_size, "auto")
  control$step_schedule <- control$step_schedule %||% (if (auto_step) "constant" else "polynomial")
  if (!auto_step && !standardize) warn_predictor_scale(x)
  trace_every <- control$trace_every %||% max(1L, iterations %/% 1000L)
  check_result_size(as.double(chains) * (iterations %/% trace_every), 10, "control$trace_every")
  keep_engine <- if (is.null(sc)) keep else seq_len(P)  # the user-scale intercept needs every slope's draw
  # control-variate gradients (R/sgmcmc_cv.R): a minibatch smaller than the data, fewer coefficients than rows
  # ("auto": with the warm-up's step; a given step is the papers' setting, with their plain minibatches)
  use_cv <- batch_size < n && P < n && (gradient == "control_variate" || (cv_auto && auto_step))
  if (gradient == "control_variate" && !use_cv) {
    sb_abort(c("Control variates ({.code sgmcmc_step(gradient = \"control_variate\")}) need a minibatch smaller than the data and fewer coefficients than rows.",
               x = "batch_size = {batch_size}, {n} rows, {P} coefficients.",
               i = "Use a smaller {.arg batch_size}, or {.code gradient = \"auto\"}."),
             arg = "control", kind = "not_applicable")
  }
  cv_mode <- NULL
  # the engine's data made once for the warm-up's pilots and the chains: with control variates (below), and for
  # the Gram form above 2,000 rows (N P^2 once; below that, each call makes it in under a millisecond)
  prepared <- if (gram_default && n > 2000L) cpp_sgld_sa_prepare(xs, ys, as.integer(sparse), intercept, family, numeric(), TRUE)
  if (use_cv) {
    t_cv <- proc.time()
    cv_mode <- sgmcmc_glm_mode(xs, ys, family, intercept, control$prior_var)
    # the control variate's noise a posterior sd (the centre's inverse Hessian) away, and from it the default
    # minibatch (R/sgmcmc_cv.R)
    ih <- tryCatch(chol2inv(chol(cv_mode$hessian)), error = function(e) diag(1 / pmax(diag(cv_mode$hessian), 1e-12)))
    cv_mode$noise_var <- sgmcmc_cv_noise(xs, ys, family, intercept, cv_mode$beta, t(chol(ih + diag(1e-14, P))),
                                         sigma = cv_mode$sigma %||% 1, seed = seed)
    if (!batch_given) batch_size <- sgmcmc_cv_batch(cv_mode$noise_var, n)
    # the engine's data and the centre's state, made once for the warm-up's pilots and the chains
    cv_mode$prepared <- prepared <- cpp_sgld_sa_prepare(xs, ys, as.integer(sparse), intercept, family, cv_mode$beta)
    cv_mode$seconds <- (proc.time() - t_cv)[["elapsed"]]
    control$cv_center <- cv_mode$beta
  }
  score_data <- if (use_cv) sgmcmc_cv_score_data(xs, ys, family, intercept, sparse, cv_mode$beta)
                else sgmcmc_score_data(xs, ys, family, intercept, sparse)
  kappa_default <- if (method == "none") 1 else NaN  # plain SGLD freezes kappa0 = kappa1 = 1 (authors' baseline)
  # the loss rule of divergence (sgmcmc/chain.hpp, glm.hpp): a training loss per example above diverge_loss
  # times the larger of the chain's lowest (from its start on) and a constant prediction's loss stops the chain
  loss_factor <- if (is.finite(control$diverge_loss %||% 10)) control$diverge_loss %||% 10 else 0
  loss_floor <- nn_constant_loss(ys, family)
  # (after the burn-in: a preconditioned chain may make a transient excursion while its curvature memory is
  # young and come back, sgmcmc/chain.hpp)
  engine_ctl <- function(control, method_ = method, ...) {
    ctl <- sgmcmc_engine_control(control, sum(sparse), kappa_default, family = family, method = method_,
                                 sampler = sampler, batch_size = batch_size, v0 = v0, v1 = v1,
                                 loss_factor = loss_factor, loss_floor = loss_floor,
                                 report_every = sgmcmc_report_every(sampler, control$sa_form, P), ...)
    ctl$loss_after <- ctl$burnin %||% 0
    ctl
  }
  warmup <- NULL
  lasso_start <- NULL
  if (use_cv && is.null(control$init)) {
    # the chains and the warm-up start at the control variates' centre (a CV lasso at N = 1e6 rows, p = 20,
    # binomial, took 490 CPU s: the centre's Newton fit a few passes), sigma (gaussian) at its residual sd
    # a sparse start as the lasso's: the centre with its coefficients of |z| < 3 (z from the inverse Hessian) at 0
    # (from the dense centre itself the SA put every coefficient in the spike: N = 1e4, p = 20, 10 signals,
    # every inclusion 1e-14)
    init <- matrix(sgmcmc_cv_sparse_start(cv_mode, intercept, c(if (intercept) FALSE, sparse)), P, chains)
    if (family == "gaussian" && !("sigma_init" %in% attr(control, "given"))) {
      control$sigma_init <- cv_mode$sigma
      # and held there (a root-N estimate when P < N): the SA of sigma from minibatches of 389 rows drove it from
      # 0.43 to 2.6 on ames (2,344 rows, standardized response) and every warm-up pilot then left the posterior;
      # held, the same call runs (bench/sgmcmc_defaults.R ames)
      if (method == "sa" && !("fixed_sigma" %in% attr(control, "given"))) control$fixed_sigma <- TRUE
    }
  } else if (auto_step && is.null(control$init) && method != "none" &&
      (!is.null(sgmcmc_metric_kind(control, sampler, P)) || !sgmcmc_sampler_info(sampler)$metric)) {
    # (a sampler that reads no metric, the preconditioned ones and pSGLD, gets the latent warm-up below: with
    # its own SA in each chain pSGLD's chains split on Boston's dis, max R-hat 1.53, bulk ESS 7)
    # a sparse start (R/sgmcmc_metric.R: sgmcmc_lasso_start): the chains and the warm-up's pilots start at the
    # cross-validated lasso, sigma (gaussian, unless given) at its residual sd
    lasso_start <- sgmcmc_lasso_start(xs, ys, family, intercept, seed)
    init <- matrix(lasso_start$beta, P, chains)
    given <- attr(control, "given")
    if (family == "gaussian" && !("sigma_init" %in% given)) {
      control$sigma_init <- lasso_start$sigma
      # p >= n: sigma held at the lasso's residual sd (R/sgmcmc_metric.R, sgmcmc_lasso_start), unless asked
      if (method == "sa" && P >= n && !("fixed_sigma" %in% given)) control$fixed_sigma <- TRUE
    }
  }
  # a logistic (or Poisson) regression has no noise variance: with the warm-up's step its sigma (the SSGL prior's scale) is held
  # at 1, the scale the default spike assumes (sgmcmc_default_v0()). Adapted by eq. (14), which for a classifier
  # has only the prior's terms, the spike's sum kappa0 |beta| / sigma pushed sigma up, the spike widened with it
  # and delta fell to its floor: N = 2,000, p = 20, 10 signals, sigma 19.7 and every inclusion probability 0
  if (auto_step && family != "gaussian" && method != "none" && !("fixed_sigma" %in% attr(control, "given"))) {
    control$fixed_sigma <- TRUE
  }
  # the inclusion probabilities of chains with held latents, and the warm-up's check of the side of the spike
  # each coefficient sits on (R/sgmcmc_inclusion.R), at temperature 1 without annealing (the posterior those
  # formulas describe)
  rb <- method != "none" && identical(as.double(control$temperature %||% 1), 1) &&
    identical(as.double(control$anneal %||% 1), 1)
  incl_data <- if (!rb) NULL else if (family == "gaussian" || is.null(score_data$cv)) score_data
               else list(family = family, intercept = intercept, sparse = score_data$sparse, x = xs, y = ys)
  if (rb && family == "gaussian") incl_data <- c(incl_data, list(yty = sum(ys^2), n = n))
  lik_var <- if (is.null(control$likelihood_sd)) 0 else control$likelihood_sd^2
  if (auto_step) {
    t_w <- proc.time()
    warmup <- sgmcmc_glm_warmup(xs, ys, sparse, intercept, init[, 1L, drop = FALSE], control, engine_ctl, run,
                                score_data, sampler, n, batch_size, method = method, family = family, v0 = v0,
                                v1 = v1, chains = chains, sparse_start = !is.null(lasso_start) || (use_cv && method != "none"), cv = cv_mode,
                                seed = seed, prepared = prepared,
                                latent_check = if (rb) function(starts, latent) {
                                  sgmcmc_spike_side(starts, latent, incl_data, v0, v1, lik_var, control$prior_var,
                                                    control$a %||% 1, control$b %||% max(1, sum(sparse)),
                                                    seed = seed)
                                })
    if (!is.null(warmup$spike_side)) warmup$spike_side$coefficient <- coef_names[warmup$spike_side$coefficient]
    # without a given init the chains start at the warm-up's draws (spread over its last pilot's kept half)
    if (is.null(control$init) && !is.null(warmup$starts)) init <- warmup$starts
    warmup$seconds <- (proc.time() - t_w)[["elapsed"]]
    control$step_size <- warmup$step_size
    # the default run length from the pilot's measured mixing (R/sgmcmc_warmup.R: sgmcmc_auto_length)
    if (!iterations_given) {
      iterations <- sgmcmc_auto_length(warmup, fallback = iterations, lower = sgmcmc_min_length(warmup, sampler))
      lens <- sgmcmc_lengths(iterations, burnin_arg, thin_arg)
      burnin <- lens$burnin
      thin <- lens$thin
      # (200 trace points with control variates: each reads up to 10,000 rows, sgmcmc/glm.hpp: full_loglik, and
      # 1,000 of them were 4.6 of 7.9 s at N = 1e5)
      trace_every <- control$trace_every %||% max(1L, iterations %/% (if (use_cv) 200L else 1000L))
      check_anneal(control, iterations)
    }
  }
  sgmcmc_note_long_warmup(warmup, iterations, chains, run$quiet)
  frozen <- !is.null(warmup$latent_start) && method != "none"
  ctl <- engine_ctl(control, method_ = if (frozen) "none" else method, trace_every = trace_every,
                    iterations = iterations, burnin = burnin, thin = thin, keep = keep_engine, chains = chains)
  ctl$metric_factor <- warmup[["metric"]]  # [[: no partial match of another field
  if (frozen) {
    # every chain samples the posterior at the warm-up's SA estimate of the latent variables (R/sgmcmc_metric.R,
    # sgmcmc_latent_warmup()), held, as Stan's adaptation stops with its warm-up: with the SA going on in the
    # chains (at the steps of 20,000 iterations later) a chain whose draw of a borderline coefficient left the
    # spike kept it in the slab (Boston, 405 rows, v0 = 0.2 / sqrt(N): SGLD, SGHMC, SGNHT max R-hat 1.53, bulk
    # ESS 7); given the latents the prior is one Laplace x normal per coefficient and the posterior unimodal
    ctl$rho_start <- warmup$latent_start$rho
    ctl$delta_init <- min(max(warmup$latent_start$delta, 1e-12), 1 - 1e-12)
    ctl$sigma_init <- warmup$latent_start$sigma
    ctl$kappa0_init <- NaN
    ctl$kappa1_init <- NaN
  }
  x_test <- if (is.null(newx)) matrix(0, 0, p) else sgmcmc_apply_x(newx, sc)
  t0 <- proc.time()
  # (the prepared data, an external pointer, only in this process: a future worker prepares its own)
  res <- sb_run_chain_chunks(chains, future, chunks, run, function(first, count, run, in_process) {
    cc <- ctl
    cc$chains <- count
    cc$chain_offset <- first
    cpp_sgld_sa(xs, ys, as.integer(sparse), intercept, x_test, init[, first + seq_len(count), drop = FALSE], cc,
                run, if (in_process) prepared)
  }, call = call)
  timing <- proc.time() - t0
  # Ctrl-C (?scalebayes-interrupts): the draws every chain had kept; chains that kept none (not started, or in
  # their burn-in) are left out; nothing kept is R's interrupt
  interrupted <- isTRUE(res$interrupted)
  all_chains <- res$chains
  if (interrupted) {
    saved_all <- vapply(all_chains, function(ch) as.double(ch$saved %||% 0), numeric(1))
    requested <- list(chains = chains, draws = as.double(chains) * (iterations - burnin) %/% thin)
    div <- vapply(all_chains, function(ch) isTRUE(ch$diverged), logical(1))
    if (!any(saved_all > 0 & !div)) rlang::interrupt()
    all_chains <- all_chains[saved_all > 0 | div]
    chains <- length(all_chains)
  }
  diverged <- vapply(all_chains, function(ch) isTRUE(ch$diverged), logical(1))
  diverged_at <- ifelse(diverged, vapply(all_chains, function(ch) as.double(ch$diverged_at), numeric(1)), NA_real_)
  if (all(diverged)) {
    ch <- all_chains[[1]]
    last <- list(beta = stats::setNames(drop(sgmcmc_to_user_scale(matrix(ch$beta, 1L), sc)), coef_names),
                 rho = ch$rho, sigma = ch$sigma * (sc$y_scale %||% 1), delta = ch$delta, iteration = ch$diverged_at - 1)
    sb_abort(c("SG-MCMC diverged in every chain (chain 1 at iteration {ch$diverged_at}).",
               x = "{ch$message}",
               i = "Reduce {.code sgmcmc_control(step_size = )} (now {signif(control$step_size, 3)}){if (auto_step) ', chosen by the warm-up' else ''}{if (!standardize) ', or standardize the predictors' else ''}.",
               i = "The last good state of chain 1 is in the {.field last_state} field of this error (rlang::catch_cnd())."),
             kind = "divergence", also = "diverged", last_state = last)
  }
  chain_fits <- all_chains[!diverged]
  used <- which(!diverged)
  to_user <- function(m) sgmcmc_to_user_scale(m, sc)
  draws <- to_user(do.call(rbind, lapply(chain_fits, `[[`, "draws")))
  colnames(draws) <- coef_names[keep_engine]
  # with standardization the engine kept every coefficient: the user-scale intercept mixes them all
  b0_sd <- if (!is.null(sc) && intercept) stats::sd(draws[, 1L]) else NA_real_
  if (!is.null(sc)) draws <- draws[, keep, drop = FALSE]
  chain_id <- rep(used, vapply(chain_fits, function(ch) nrow(ch$draws), numeric(1)))
  saved <- vapply(all_chains, `[[`, numeric(1), "saved")
  wts <- saved[used] / sum(saved[used])
  pm_s <- Reduce(`+`, Map(function(ch, w) ch$post_mean * w, chain_fits, wts))
  # pooled sd: within-chain second moments around the pooled mean
  # (a chain that kept one draw has no within-chain sd, NaN from the engine: its spread around its mean is 0)
  m2 <- Reduce(`+`, Map(function(ch, w) ((if (ch$saved < 2) 0 else ch$post_sd^2) + ch$post_mean^2) * w, chain_fits, wts))
  psd <- sqrt(pmax(0, m2 - pm_s^2))
  if (warn_one_draw(sum(saved[used]))) psd[] <- NA_real_
  pm <- drop(to_user(matrix(pm_s, 1L)))
  if (!is.null(sc)) {
    slopes <- seq_len(P) > intercept
    psd[slopes] <- psd[slopes] * sc$y_scale / sc$x_scale
    # the intercept mixes every coefficient: its sd from the stored draws (every kept iteration, thinned)
    if (intercept) psd[1L] <- b0_sd
  }
  names(pm) <- names(psd) <- coef_names
  # the inclusion probability: rho averaged over the kept iterations of every chain (weighted by the chains' kept
  # iterations; a chain's last rho, in final_state, is one noisy step of the SA's average)
  rho <- Reduce(`+`, Map(function(ch, w) (ch$rho_mean %||% ch$rho) * w, chain_fits, wts))
  # held latents: the indicators' posterior (gaussian) or the one-flip probabilities at the held model (GLM),
  # R/sgmcmc_inclusion.R
  rho_rb <- if (rb && frozen) sgmcmc_rb_inclusion(chain_fits, wts, incl_data, v0, v1, lik_var, control$prior_var,
                                                     seed = seed)
  if (!is.null(rho_rb)) rho[score_data$sparse] <- rho_rb
  names(rho) <- coef_names
  rho <- rho[!is.na(rho)]
  sy <- sc$y_scale %||% 1
  trace <- sgmcmc_trace_frame(lapply(all_chains, `[[`, "trace"),
                              c("iteration", "sigma", "delta", "mean_rho", "loglik", "eps", "tau"))
  if (!is.null(sc) && family == "gaussian") {
    trace$sigma <- trace$sigma * sy
    trace$loglik <- trace$loglik - n * log(sy)
  }
  pred <- NULL
  if (!is.null(newx)) {
    link <- Reduce(`+`, Map(function(ch, w) ch$pred_link * w, chain_fits, wts))
    resp <- Reduce(`+`, Map(function(ch, w) ch$pred_mean * w, chain_fits, wts))
    if (!is.null(sc) && family == "gaussian") {
      link <- sc$y_center + sy * link
      resp <- sc$y_center + sy * resp
    }
    pred <- list(link = link, response = resp, newx = newx)
  }
  sigma_user <- vapply(all_chains, `[[`, 1, "sigma") * (if (family == "gaussian") sy else 1)
  convergence <- sgmcmc_convergence(draws, chain_id)
  label <- sgmcmc_label(sampler, method)
  settings <- list(family = family, method = method, sampler = sampler, iterations = iterations,
                   batch_size = batch_size, burnin = burnin, thin = thin, v0 = v0, v1 = v1, sparse = sparse,
                   intercept = intercept, chains = chains, nobs = n, coef_names = coef_names, control = control,
                   standardize = standardize, scaling = sc, step_size = control$step_size, auto_step = auto_step,
                   print_info = c(family = family, iterations = iterations, batch = batch_size, chains = chains,
                                  step = if (is.null(warmup[["metric"]])) sgmcmc_step_label(control$step_size, n, auto_step, sampler)
                                         else sprintf("%s in the coordinates of a %s metric, chosen by the warm-up",
                                                      format(signif(control$step_size, 3)), warmup$metric_kind),
                                  warmup = sgmcmc_warmup_label(warmup),
                                  gradient = if (use_cv) sprintf("control variates at the mode (%d Newton steps, %d full-data passes, %.2g s)",
                                                                 cv_mode$newton, cv_mode$passes, cv_mode$seconds)
                                             else if (family == "gaussian" && batch_size >= n && sgmcmc_gram_applies(n, P))
                                               "every row, from the Gram matrix X'X (O(P^2) per iteration)",
                                  sigma = if (family == "gaussian") signif(mean(sigma_user[used]), 4) else NULL,
                                  sgmcmc_convergence_info(convergence)))
  latent_state <- lapply(all_chains, function(ch) {
    na <- function(v) replace(v, is.nan(v), NA_real_)  # not applicable (non-sparse coefficients)
    list(sigma = ch$sigma, kappa0 = na(ch$kappa0), kappa1 = na(ch$kappa1),
         lik_var = if (is.null(control$likelihood_sd)) 0 else control$likelihood_sd^2)
  })
  fit <- new_sb_fit(
    draws = draws, estimate = pm[keep], method = label, subclass = "sb_sgld_sa", call = mcall,
    chain = chain_id, settings = settings, seed = seed, timing = timing,
    diagnostics = list(saved = saved, convergence = convergence),
    coefficients = pm, coef_sd = psd, inclusion = rho, trace = trace,
    latent = data.frame(chain = seq_along(all_chains), sigma = sigma_user,
                        delta = vapply(all_chains, `[[`, 1, "delta"), diverged = diverged),
    pred = pred, diverged = diverged, diverged_at = diverged_at,
    diverged_why = ifelse(diverged, vapply(all_chains, function(ch) ch$message %||% NA_character_, ""), NA_character_),
    warmup = warmup,
    score_data = score_data, latent_state = latent_state, data = list(x = x, y = y),
    final_state = lapply(all_chains, function(ch) {
      na <- function(v) replace(v, is.nan(v), NA_real_)  # not applicable (non-sparse coefficients)
      list(beta = stats::setNames(drop(to_user(matrix(ch$beta, 1L))), coef_names),
           rho = stats::setNames(na(ch$rho), coef_names),
           kappa0 = stats::setNames(na(ch$kappa0), coef_names), kappa1 = stats::setNames(na(ch$kappa1), coef_names),
           sigma = ch$sigma * (if (family == "gaussian") sy else 1), delta = ch$delta)
    })
  )
  sgmcmc_report_divergence(fit, control$step_size, auto_step)
  if (interrupted) {
    return(sb_partial_fit(fit, sum(saved), requested$draws, unit = "kept draws",
                          detail = sprintf("kept draws per chain: %s; chains of %d that kept none are left out",
                                           paste(saved, collapse = ", "), requested$chains)))
  }
  sgmcmc_warn_convergence(convergence, iterations, arg = "iterations")
  fit
}

# The step-size warm-up of a regression (R/sgmcmc_warmup.R): the grid is per example (eps = h / N for SGLD
# and SGHMC, whose drift is the summed gradient) and on the summed scale for the preconditioned samplers (their
# preconditioner divides by the curvature); pilots of one chain on stream 2^20 of the seed. The pilots keep the
# latent variables fixed where the chains start (sigma_init, kappa as rho_init implies; method "none"), so
# every candidate is scored against the same posterior: with the SA running in the pilots a step that
# scatters the coefficients also inflates sigma, which flattens the posterior its own draws are scored
# against (HAMCMC-SA at step 4 on the diabetes data: sigma 8,500 against 54, KSD 0.6 against 7 for a sound
# step).
sgmcmc_glm_warmup <- function(xs, ys, sparse, intercept, init1, control, engine_ctl, run, score_data, sampler, n,
                              batch_size, method = "none", family = "gaussian", v0 = 0.1, v1 = 10, chains = 4L,
                              sparse_start = FALSE, cv = NULL, seed = 1L, prepared = NULL, latent_check = NULL) {
  P <- nrow(init1)
  run_pilot <- utils::modifyList(run, list(quiet = TRUE, threads = 1L))
  lik_var <- if (is.null(control$likelihood_sd)) 0 else control$likelihood_sd^2
  pilot <- function(eps, len, factor = NULL, adapt = FALSE, stream = 2^20, start = NULL, latent = NULL,
                    v0_mult = 1) {
    cc <- control
    cc$step_size <- eps
    ctl <- engine_ctl(cc, method_ = if (adapt) method else "none", trace_every = len, iterations = len,
                      burnin = len %/% 2L, thin = warmup_thin(len), keep = seq_len(P), chains = 1L)
    ctl$chain_offset <- stream
    ctl$metric_factor <- factor
    ctl$v0 <- ctl$v0 * v0_mult
    if (!is.null(latent)) {  # latents held (or, with adapt, started) at the warm-up's estimate
      ctl$rho_start <- latent$rho
      ctl$delta_init <- min(max(latent$delta, 1e-12), 1 - 1e-12)
      ctl$sigma_init <- latent$sigma
      ctl$kappa0_init <- NaN
      ctl$kappa1_init <- NaN
    }
    r <- cpp_sgld_sa(xs, ys, as.integer(sparse), intercept, matrix(0, 0, ncol(xs)),
                     if (is.null(start)) init1 else matrix(start, ncol = 1L), ctl, run_pilot, prepared)
    if (isTRUE(r$interrupted)) rlang::interrupt()
    ch <- r$chains[[1]]
    list(draws = ch$draws, diverged = isTRUE(ch$diverged), final = ch$beta,
         final_latent = list(rho = ch$rho, delta = ch$delta, sigma = ch$sigma),
         latent = list(sigma = ch$sigma, kappa0 = ch$kappa0, kappa1 = ch$kappa1, lik_var = lik_var))
  }
  score <- function(draws, latent) sgmcmc_glm_score(draws, score_data, latent, control$prior_var)
  nb <- min(batch_size, n)
  noise <- 1 + (n - nb) / nb  # the minibatch noise's factor on a step's excess variance
  # control variates: theirs, measured a posterior sd from the centre (R/sgmcmc_cv.R)
  if (!is.null(cv)) noise <- cv_noise_factor(cv$noise_var, n, nb)
  kind <- sgmcmc_metric_kind(control, sampler, P)
  info <- sgmcmc_sampler_info(sampler)
  if (!is.null(kind)) {
    m0 <- sgmcmc_glm_metric0(xs, ys, family, intercept, sparse, control, v0, v1, kind, cv = cv)
    if (!is.null(cv)) {
      # the control variate's own noise factor, a posterior sd from the centre (R/sgmcmc_cv.R)
      noise <- cv_noise_factor(sgmcmc_cv_noise(xs, ys, family, intercept, cv$beta, metric_factor(m0$metric, kind),
                                               sigma = cv$sigma %||% 1, seed = seed), n, nb)
    }
    return(sb_call_engine(sgmcmc_metric_warmup(pilot, score, m0$metric, kind, noise = noise, chains = chains,
                                               sparse_start = sparse_start,
                                               v0_path = if (sparse_start && method == "sa" && P < n) c(4, 2, 1),
                                               friction = if (info$momentum) control$friction,
                                               correlation = m0$correlation, rate_check = !is.null(cv),
                                               var_cap = sgmcmc_glm_var_cap(c(if (intercept) FALSE, sparse),
                                                                            control$prior_var),
                                               latent_check = if (sparse_start && method == "sa") latent_check)))
  }
  # no metric: the grid is per example (eps = h / N for SGLD and SGHMC, whose drift is the summed gradient) and
  # on the summed scale for the preconditioned samplers (their preconditioner divides by the curvature)
  # (the preconditioned samplers: their step is capped at 2 delta / noise, 0.2 with full-data gradients, so their
  # grid stops at 1 and their pilots start at 250 iterations: about 16,000 pilot iterations instead of 143,000;
  # measured in bench/RESULTS.md, "SG-MCMC defaults")
  h <- if (info$preconditioned) 2^(0:-9) else 2^(2:-14)
  grid <- if (info$per_example) h / n else h
  excess <- sgmcmc_step_excess(sampler, control$friction, noise)
  sa_start <- sparse_start && method == "sa"
  w <- sb_call_engine(sgmcmc_step_warmup(grid, pilot, score, excess = excess,
                                         pilot_iterations = if (info$preconditioned) 250L else 1000L,
                                         rate_pilot = if (info$preconditioned && !sa_start) 2000L else 0L))
  if (sa_start) w <- sgmcmc_latent_warmup(w, pilot, chains, v0_path = if (P < n) c(4, 2, 1) else 1,
                                          latent_check = latent_check)
  w
}

# The latent start of a sampler without a metric (the preconditioned ones) from a sparse start, as the metric
# warm-up gives one (R/sgmcmc_metric.R): SA pilots of 1,000 iterations at the chosen step, the spike narrowing
# over them (v0_path), then a pilot of 2,000 iterations with the latents held there, which measures the mixing
# rate and gives the chains' starts. From one latent estimate the chains sample one posterior: with an SA of
# their own from rho = 0.5, HAMCMC-SA's chains settled Boston's black in the spike in some chains and in the
# slab in others (R-hat 1.69, bulk ESS 6 at seed 1).
sgmcmc_latent_warmup <- function(w, pilot, chains, v0_path = 1, adapt_iterations = 1000L, latent_check = NULL) {
  start <- NULL
  latent <- NULL
  for (r in seq_along(v0_path)) {
    pr <- pilot(w$step_size, adapt_iterations, adapt = TRUE, stream = 2^20 + 10 + r, start = start,
                latent = latent, v0_mult = v0_path[r])
    if (isTRUE(pr$diverged) || !all(is.finite(pr$final))) return(w)
    start <- pr$final
    latent <- pr$final_latent
  }
  # the side of the spike (R/sgmcmc_inclusion.R); the rate pilot below holds the moved latents (an SA pilot
  # after a move took the moved coefficient back into the spike, n = 100, p = 1,000)
  chk <- if (!is.null(latent_check)) latent_check(matrix(start, ncol = 1L), latent)
  if (!is.null(chk$moves)) {
    w$spike_side <- chk$moves
    start <- drop(chk$starts)
    latent <- chk$latent
  }
  rp <- pilot(w$step_size, 2L * adapt_iterations, stream = 2^20 + 20, start = start, latent = latent)
  w$iterations <- w$iterations + (length(v0_path) + 2L) * adapt_iterations
  if (isTRUE(rp$diverged) || nrow(rp$draws) < 20L || !all(is.finite(rp$draws))) return(w)
  ess <- suppressWarnings(apply(rp$draws, 2L, function(v) if (stats::var(v) > 0) posterior::ess_bulk(v) else NA_real_))
  if (any(is.finite(ess))) w$ess_rate <- min(ess, na.rm = TRUE) / adapt_iterations
  rows <- unique(round(seq(nrow(rp$draws), 1, length.out = chains)))
  w$starts <- t(rp$draws[rep_len(rows, chains), , drop = FALSE])
  w$latent_start <- latent
  if (!is.null(w$latent_start$rho)) w$latent_start$rho[is.nan(w$latent_start$rho)] <- NA_real_
  w$rate_iterations <- 2L * adapt_iterations
  w
}

# What a warm-up cost, for print(): "9,600 pilot iterations, 0.05 s" (NULL without a warm-up).
sgmcmc_warmup_label <- function(warmup) {
  if (is.null(warmup)) return(NULL)
  out <- sprintf("%s pilot iterations of one chain, %.2g s", format(warmup$iterations, big.mark = ","),
                 warmup$seconds %||% NA_real_)
  mv <- warmup$spike_side
  if (!is.null(mv)) {
    out <- paste0(out, sprintf("; %s moved across the spike by the evidence (%s)",
                               if (nrow(mv) == 1L) "1 coefficient" else paste(nrow(mv), "coefficients"),
                               paste0(mv$coefficient, " to the ", mv$to, collapse = ", ")))
  }
  out
}

# The shortest default run after a warm-up: 2,000 iterations with a metric (the chains start at the warm-up's
# draws and latents), 5,000 for the preconditioned samplers (their chains start afresh; the curvature memory and
# the SA settle within the burn-in half: HAMCMC-SA on diabetes and Boston, bench/sgmcmc_defaults.R), else 20,000.
sgmcmc_min_length <- function(warmup, sampler) {
  if (!is.null(warmup[["metric"]])) return(2000)
  if (sgmcmc_sampler_info(sampler)$preconditioned) 5000 else 20000
}

# The default minibatch of a regression. With control variates (the default with the warm-up's step and P < n):
# every row up to 2,000, else the size chosen from their measured noise (R/sgmcmc_cv.R: sgmcmc_cv_batch(); at
# N = 10,000, p = 20, logistic the full-data default took 104 s on the loaded 2-core machine). Without them:
# every row up to 10,000 (full-data gradients: without control variates
# a minibatch of n of N rows must shrink the step by about n / N for the same accuracy (the warm-up's cap,
# R/sgmcmc_warmup.R), so it visits as many rows per unit of progress and adds per-iteration overhead), else 50
# rows (the paper's). Measured on diabetes (bench/sgmcmc_defaults.R): HAMCMC-SA 6.1-6.4 s with 50 rows, 3.8 s
# with all 354.
sgmcmc_default_batch <- function(n, cv = TRUE) {
  if (cv) return(if (n <= 2000L) as.integer(n) else 1000L)  # 1,000: replaced by sgmcmc_cv_batch() once measured
  if (n <= 10000L) as.integer(n) else min(50L, as.integer(n))
}
intercept_flag <- function(intercept) if (isTRUE(intercept)) 1L else 0L

# HAMCMC-SA's default form: the dense matrix (O(P^3) an iteration, the form with the limiting argument of
# hamcmc_sa()'s help) only for a tiny model, else the exact diagonal (O(P)). Measured with every default
# (2-core VM, load about 4; sgld_sa(sampler = "hamcmc_sa")): ames (2,344 x 34) 3.33 s matrix / 1.70 s diagonal,
# the same test RMSE (0.0719), R-hat 1.003 / 1.004; Table 1's design n = 200, p = 50: 13.5 s / 3.1 s, the same
# inclusion and means; diabetes and Boston (at most 20) keep the matrix.
sgmcmc_default_sa_form <- function(P) if (P <= 20) "matrix" else "diagonal"

# Whether a gaussian regression of n rows and P coefficients gets full-data gradients in the Gram form by
# default (the engine's rule, sgmcmc/glm.hpp: gram_applies(), less its run-length condition): 2 P <= n, P <= 2,000.
sgmcmc_gram_applies <- function(n, P) 2 * P <= n && P <= 2000

# The default spike scale of a regression's SSGL prior: 0.2 of a standardized coefficient's posterior sd at the
# null, 1 / sqrt(N I) with I the Fisher information per row on the prior's scale (gaussian: 1, the prior being
# scaled by sigma; binomial: pbar (1 - pbar); poisson: ybar, the variance of a count at the null's rate, log
# link: the same derivation, the information of a standardized slope at the intercept-only fit being N ybar), so
# that a coefficient leaves the spike when its z-score exceeds about 5 and the selection does not depend on N.
# Measured (bench/sgmcmc_defaults.R "selection", NEWS; poisson: tests/testthat/test-sgmcmc-poisson.R).
sgmcmc_default_v0 <- function(y, family) {
  N <- length(y)
  info <- switch(family, binomial = max(mean(y) * (1 - mean(y)), 1 / N), poisson = max(mean(y), 1 / N), 1)
  0.2 / sqrt(N * info)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# Burn-in (default half) and thinning (default: about 1000 kept draws per chain), checked against iterations.
sgmcmc_lengths <- function(iterations, burnin, thin, call = rlang::caller_env()) {
  burnin <- if (is.null(burnin)) iterations %/% 2L else check_count(burnin, min = 0L, arg = "burnin", call = call)
  if (burnin >= iterations) {
    sb_abort(c("{.arg burnin} must be smaller than {.arg iterations}.",
               x = "burnin = {burnin}, iterations = {iterations}."), arg = "burnin", call = call)
  }
  thin <- if (is.null(thin)) max(1L, (iterations - burnin) %/% 1000L) else check_count(thin, arg = "thin", call = call)
  if ((iterations - burnin) %/% thin < 1L) {
    sb_abort(c("No draw would be kept: {iterations - burnin} iteration{?s} after burn-in with {.arg thin} = {thin}.",
               i = "Increase {.arg iterations}, or decrease {.arg burnin} or {.arg thin}."), arg = "thin", call = call)
  }
  list(burnin = burnin, thin = thin)
}

resolve_keep <- function(keep, coef_names, call = rlang::caller_env()) {
  P <- length(coef_names)
  if (is.null(keep) || isTRUE(keep)) return(seq_len(P))
  if (isFALSE(keep)) {
    sb_abort(c("A regression fit keeps the draws of at least one coefficient.",
               i = "Give {.arg keep_draws} as coefficient names or indices to keep fewer."), arg = "keep_draws",
             call = call)
  }
  if (is.character(keep)) {
    idx <- match(keep, coef_names)
    if (anyNA(idx)) {
      sb_abort(c("Unknown coefficient name{?s} in {.arg keep_draws}: {.val {keep[is.na(idx)]}}.",
                 i = "Names are {.val {utils::head(coef_names, 5)}} ..."), arg = "keep_draws", call = call)
    }
    return(as.integer(idx))
  }
  if (!is.numeric(keep) || length(keep) < 1 || any(!is.finite(keep)) || any(keep != round(keep)) ||
      any(keep < 1 | keep > P)) {
    sb_abort("{.arg keep_draws} must be TRUE, or coefficient names or indices between 1 and {P}.", arg = "keep_draws",
             call = call)
  }
  as.integer(keep)
}

# `start`: the default initial intercept (NULL without one); the slopes start at zero.
resolve_init <- function(init, P, chains, start = NULL, call = rlang::caller_env()) {
  if (is.null(init)) {
    out <- matrix(0, P, chains)
    if (!is.null(start)) out[1, ] <- start
    return(out)
  }
  if (inherits(init, "sb_nn_fit")) {
    sb_abort(c("{.code sgmcmc_control(init = )} is a network fit, which can start only a network chain.",
               i = "For regression give a vector of {P} coefficient{?s} (intercept first)."), arg = "init", call = call)
  }
  init_matrix(init, P, chains, "coefficient", "intercept first", call)
}

# The intercept's maximum-likelihood value when every slope is zero, where the default chain starts: mean(y) for
# "gaussian", the logit of the share of ones (kept within [1/(2n), 1 - 1/(2n)]) for "binomial", the log of the
# mean count (at least 1/(2n)) for "poisson". Started at zero
# instead, the default run (10,000 iterations at step 1e-3) on the diabetes data ended with the intercept at 72
# against mean(y) = 152 and sigma at 108 against sd(y) = 77: once sigma has grown with the residuals, the
# intercept's drift is ~ n (mean(y) - b0) / sigma^2 per unit step and the walk to mean(y) takes far longer.
intercept_start <- function(y, family) {
  m <- mean(y)
  if (family == "gaussian") return(m)
  n <- length(y)
  if (family == "poisson") return(log(max(m, 1 / (2 * n))))
  stats::qlogis(min(max(m, 1 / (2 * n)), 1 - 1 / (2 * n)))
}

# sgmcmc_control(init = ) as a P x chains matrix: a matrix of that shape, or a vector of P values (every chain).
# `what` names one value ("coefficient", "network parameter"), `order` says how they are ordered.
init_matrix <- function(init, P, chains, what, order, call) {
  if (is.matrix(init)) {
    if (nrow(init) != P || ncol(init) != chains) {
      sb_abort(c("A matrix {.code sgmcmc_control(init = )} must be {P} x {chains} ({what}s x chains).",
                 x = "It is {nrow(init)} x {ncol(init)}."), arg = "init", call = call)
    }
    storage.mode(init) <- "double"
    return(init)
  }
  if (length(init) != P) {
    sb_abort(c("{.code sgmcmc_control(init = )} must have one value per {what} ({format(P, big.mark = ',')}; {order}).",
               x = "It has {length(init)}."), arg = "init", call = call)
  }
  matrix(as.double(init), P, chains)
}

#' @export
coef.sb_sgld_sa <- function(object, type = c("mean", "median", "estimate"), ...) {
  sb_check_dots(..., fn = "coef")
  type <- sb_match_arg(type)
  if (type == "mean") return(object$coefficients)
  NextMethod()
}

#' Plot the traces of an adaptive SG-MCMC fit
#'
#' Traces of the latent variables (\eqn{\sigma}, \eqn{\delta}, mean \eqn{\rho}) and of the full-data
#' log-likelihood, one line per chain, or (`type = "draws"`) the stored draws of the first few kept
#' coefficients.
#'
#' @param x An `sb_sgld_sa` fit.
#' @param type `"latent"` or `"draws"`.
#' @param pars For `type = "draws"`: coefficients to show (default the first 4 kept).
#' @param ... Passed to [graphics::matplot()].
#' @return `x`, invisibly.
#' @export
plot.sb_sgld_sa <- function(x, type = c("latent", "draws"), pars = NULL, ...) {
  type <- sb_match_arg(type)
  op <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(op))
  if (type == "latent") {
    tr <- x$trace
    vars <- c("sigma", "delta", "mean_rho", "loglik")
    if (x$settings$family != "gaussian") vars <- setdiff(vars, "sigma")
    graphics::par(mfrow = c(2, 2), mar = c(4, 4, 2, 1))
    for (v in vars) {
      w <- stats::reshape(tr[, c("chain", "iteration", v)], idvar = "iteration", timevar = "chain",
                          direction = "wide")
      graphics::matplot(w$iteration, as.matrix(w[, -1, drop = FALSE]), type = "l", lty = 1, xlab = "iteration",
                        ylab = v, main = v, ...)
    }
  } else {
    d <- select_pars(x$draws, pars %||% utils::head(colnames(x$draws), 4))
    graphics::par(mfrow = c(min(ncol(d), 4), 1), mar = c(4, 4, 2, 1))
    for (j in seq_len(ncol(d))) {
      graphics::plot(d[, j], type = "l", xlab = "kept draw", ylab = colnames(d)[j], main = colnames(d)[j], ...)
    }
  }
  invisible(x)
}

# The method label of a fit: "SGLD-SA", "SGHMC-EM", "SGLD" as before; the quasi-Newton samplers name the sampler
# and the SSGL adaptation apart ("HAMCMC-SA + SSGL-SA": the SA of the preconditioner and of the latents).
sgmcmc_label <- function(sampler, method) {
  info <- sgmcmc_sampler_info(sampler)
  if (info$preconditioned) return(paste0(info$label, switch(method, sa = " + SSGL-SA", em = " + SSGL-EM", none = "")))
  paste0(info$label, switch(method, sa = "-SA", em = "-EM", none = ""))
}

# A fixed step size on unstandardized predictors (standardize = FALSE and a given sgmcmc_control(step_size = )):
# a step that suits columns of about unit variance is ~ 1 / m times too short for columns of mean square m
# (with columns of mean square m the posterior sd of a slope is about sigma / sqrt(n m) while a step's noise
# stays sqrt(eps)), or ~ m times too long. On the diabetes data (unit-norm columns, m = 1 / 442) the old default
# run (step 1e-3) left every slope near its start. Warn (classed) outside a factor 10 of unit scale in the root
# mean square; standardize = TRUE (the default) or step_size = "auto" make the warning moot.
warn_predictor_scale <- function(x) {
  m <- colMeans(x^2)
  m <- m[m > 0]
  if (!length(m)) return(invisible())
  med <- stats::median(m)
  if (med < 0.01 || med > 100) {
    sb_warn(c("The predictors' scale does not suit a fixed step size: the median column mean square of {.arg x} is {signif(med, 2)}.",
              i = if (med < 1) "A step that suits columns of about unit variance needs about {signif(1 / med, 2)} times as many iterations to move across the posterior at this scale." else "A step that suits columns of about unit variance is about {signif(med, 2)} times too large for the posterior's curvature at this scale (noisy draws or divergence).",
              i = "Keep {.code standardize = TRUE} (the default), or let the warm-up choose the step ({.code sgmcmc_control(step_size = \"auto\")})."),
            kind = "scale")
  }
  invisible()
}

# The quasi-Newton form that drifted in our tests (inst/design-sgmcmc.md, "HAMCMC-SA: the step policy"): HAMCMC with
# curvature pairs from consecutive minibatches (its pairs' y is dominated by the difference of two minibatches'
# noise). It runs with a classed warning. (The transport form of HAMCMC-SA, which drifted too, was removed:
# sgmcmc_control() refuses it.)
warn_hamcmc_experimental <- function(control, sampler, minibatch) {
  if (sampler == "hamcmc" && minibatch && identical(control$curvature, "consecutive")) {
    sb_warn(c("HAMCMC with curvature pairs from consecutive minibatches is experimental: it drifted on the minibatch SSGL regression in our tests.",
              i = "Use {.code sgmcmc_lbfgs(curvature = \"same_batch\")} (the default) or full-batch gradients ({.code batch_size = nrow(x)}) (see {.help scalebayes::hamcmc_sa})."),
            kind = "experimental")
  }
  invisible()
}

# The quasi-Newton samplers' settings that depend on the run: HAMCMC needs memory >= 2; the dense ("matrix") form
# is for at most 2,000 parameters of a regression (n_par: their number; NA for a network: not available).
check_hamcmc_control <- function(control, sampler, n_par, call = rlang::caller_env()) {
  if (!sgmcmc_sampler_info(sampler)$preconditioned) return(invisible())
  if (sampler == "hamcmc" && (control$memory %||% 2) < 2) {
    sb_abort(c("{.arg memory} must be at least 2 for {.code sampler = \"hamcmc\"}.",
               x = "You supplied {.code sgmcmc_lbfgs(memory = {control$memory})}.",
               i = "HAMCMC keeps 2 M - 1 samples and moves from the one M iterations back; use memory >= 2."),
             arg = "memory", call = call)
  }
  if (sampler == "hamcmc_sa" && identical(control$sa_form, "matrix")) {
    if (is.na(n_par)) {
      sb_abort(c("{.code sgmcmc_lbfgs(sa_form = \"matrix\")} is implemented for regression only.",
                 i = "Use {.code sa_form = \"diagonal\"} (the default for a network)."), arg = "sa_form", call = call)
    }
    if (n_par > 2000) {
      sb_abort(c("{.code sgmcmc_lbfgs(sa_form = \"matrix\")} keeps a dense {n_par} x {n_par} preconditioner.",
                 x = "The matrix form is for at most 2,000 parameters; this model has {n_par}.",
                 i = "Use {.code sa_form = \"diagonal\"} (the default above 2,000 parameters), which is linear in the number of parameters."),
               arg = "sa_form", call = call)
    }
  }
  invisible()
}

# The chains' trace matrices (one per chain, the engine's columns: `cols`, then the step's report of
# steps.hpp's StepStats) as one data frame with a chain column. The report (drift_ratio = ||xi|| / ||g||,
# noise_ratio = ||eta|| / ||z||, gamma) exists for the preconditioned samplers only: its columns are dropped
# when no chain reported them.
sgmcmc_trace_frame <- function(mats, cols) {
  cols <- c(cols, "drift_ratio", "noise_ratio", "gamma")
  tr <- do.call(rbind, lapply(seq_along(mats), function(c) {
    m <- mats[[c]]
    colnames(m) <- cols
    data.frame(chain = rep(c, nrow(m)), m)
  }))
  stats <- c("drift_ratio", "noise_ratio", "gamma")
  if (all(is.na(tr[stats]))) tr[stats] <- NULL
  # a ratio at a zero gradient (a chain started at the mode) is undefined: NA, not the engine's NaN
  for (v in intersect(stats, names(tr))) tr[[v]][is.nan(tr[[v]])] <- NA_real_
  tr
}
