# The metric warm-up of SGLD, SGHMC and SGNHT (sgmcmc_step(metric = ), with step_size = "auto", regression and
# density targets): a fixed preconditioner M = L L' ("metric", Stan's inverse mass matrix) adapted from pilot
# draws, then the step chosen in the whitened coordinates phi = L^-1 theta, where the posterior is close to
# N(., I) and one grid of steps suits every problem.
#
#   1. M0: the caller's start (a regression: the inverse of the log posterior's Hessian at the chains' start,
#      sgmcmc_glm_metric0(); a density target: a multiple of I sized by a short step search);
#   2. adaptation: two pilots of `adapt_iterations` (one chain, on its own stream), each at the whitened step
#      0.1 / noise (SGHMC / SGNHT: friction times that), a pilot that diverges retried at a quarter of the
#      step: the first with the latent variables held at the chains' start, the second from where the first
#      ended with the fit's SA of the latents, so M sees the adapted prior; M <- the draws' variances in the correlation of M0 (regression: the Hessian's correlation, exact for
#      a Gaussian likelihood) or the draws' covariance shrunk towards its diagonal (density), or the variances
#      alone (diagonal metric);
#   3. the step: sgmcmc_step_warmup() (successive halving by KSD, R/sgmcmc_warmup.R) over whitened steps
#      2^(0:-5) (times the friction for the momentum samplers), pilots of `pilot_iterations`, draws and scores
#      whitened, then the accuracy cap on the whitened variances: the step at which a step's excess variance
#      (eps / 2 (1 + (N - n) / n), R/sgmcmc_warmup.R) is 10 % of the smallest whitened variance, about
#      0.2 / (1 + (N - n) / n) for SGLD, and at most that against the metric itself;
#   4. a pilot of 2 x adapt_iterations at that step with the latents adapted measures the mixing rate that
#      sets the run length (sgmcmc_auto_length()), and the chains start at draws spread over its kept half.
#
# Every pilot runs one chain on stream 2^20 of the seed (2^20 + 1, 2^20 + 2 for the adaptation rounds), so
# the choice depends on the seed only. Cost, with the defaults: 2 x 1,000 + 200 (6 + 2 x 3 + 4 x 2 + 8) + 2,000
# = 9,600 pilot iterations of one chain (measured times in bench/RESULTS.md, "SG-MCMC defaults").
#
# pilot(eps, len, factor, adapt, stream, start) -> list(draws = m x d (sampler scale), diverged, latent, final):
#   a pilot at step eps with the metric `factor` (a d x d matrix L or a vector of L's diagonal), adapt = TRUE
#   with the fit's SA of the latent variables (FALSE: latents held at the chains' start, as every KSD
#   candidate's), from `start` (NULL: the chains' start); `final` its last state;
# score(draws, latent) -> m x d, the log posterior's gradient at the draws;
# metric0: list(cov = d x d matrix) or list(var = vector): the start;
# kind: "dense" or "diagonal"; noise: 1 + (N - n) / n (1 for full-data gradients); friction: NULL for SGLD.
sgmcmc_metric_warmup <- function(pilot, score, metric0, kind, noise = 1, friction = NULL, chains = 4L,
                                 adapt_iterations = 1000L, pilot_iterations = 200L, correlation = NULL,
                                 var_cap = NULL, sparse_start = FALSE, max_rounds = 4L, v0_path = NULL,
                                 rate_check = FALSE, stein_check = FALSE, latent_check = NULL,
                                 call = rlang::caller_env()) {
  base <- if (is.null(friction)) 1 else friction  # a momentum sampler moves about 1 / friction further per step
  metric <- metric0
  adapt <- list()
  start <- NULL  # NULL: the chains' start; then where the previous pilot ended
  latent <- NULL  # the latent variables where the last adapting pilot left them (NULL: none, a density)
  # round 1 holds the latent variables where the chains start unless they start at a sparse estimate
  # (`sparse_start`; an SA from beta = 0 can drop every coefficient into the spike before the signals have moved:
  # measured, n = 100, p = 1,000), round 2 adapts them from where round 1 ended, as the run will
  min_rounds <- max(2L, length(v0_path))
  # `stein_check` (density targets): an adaptation pilot whose kept half fails Stein's identity by more than a
  # factor 2 (-E[s_j (x_j - m_j)] > 2 for some j, where the target gives 1) ran at a step too large for the
  # metric it had; an unadjusted chain there need not diverge (a free scale parameter grows until the step is
  # stable) and its draws give a wide metric that keeps the next round there. Such a round does not count as
  # converged and the next rounds run at a quarter of the whitened step (measured: posteriordb's sblri-blr,
  # a 100 x 5 regression with sigma: -E = 42 at the fixed point the rounds reached, sigma 200 reference sds
  # too high; R/ksd.R, sgmcmc_trust_check(), for the algebra).
  shrink <- 1
  # `latent_check(start, latent)` (a regression's SSGL prior, R/sgmcmc_inclusion.R: sgmcmc_spike_side()) once
  # the rounds have converged: where it moves coefficients to the other side of the spike, up to two more rounds
  # adapt the metric there (a coefficient's variance in the spike is about 1 / 25 of its slab variance: with the
  # metric of before, n = 100, p = 1,000, the moved signal's R-hat was 1.014 at 94,000 iterations)
  rounds <- max(max_rounds, min_rounds)
  extra <- 0L
  moves <- NULL
  for (r in seq_len(rounds + 2L)) {
    if (r > rounds + extra) break
    fac <- metric_factor(metric, kind)
    eps <- base * 0.1 / noise * shrink
    mult <- if (length(v0_path)) v0_path[min(r, length(v0_path))] else 1
    pr <- NULL
    for (try in 1:4) {
      # (the rounds after a spike-side move hold the latents there: an SA pilot took the moved signal back
      # into the spike, n = 100, p = 1,000)
      pr <- pilot(eps, adapt_iterations, fac, (r >= 2L || sparse_start) && extra == 0L, 2^20 + r, start,
                  latent = if (sparse_start) latent, v0_mult = mult)
      if (!isTRUE(pr$diverged) && nrow(pr$draws) >= 10L && all(is.finite(pr$draws))) break
      pr <- NULL
      eps <- eps / 4
    }
    adapt[[r]] <- data.frame(round = r, step_size = eps, pilot_iterations = adapt_iterations,
                             latents = if ((r >= 2L || sparse_start) && extra == 0L) "adapted" else "held",
                             v0_factor = mult,
                             diverged = is.null(pr))
    if (is.null(pr)) break
    # how far the metric the pilot ran with was off: the whitened draws' variances (about 1 when it was right)
    wv <- apply(metric_whitener(fac)$x(pr$draws), 2L, stats::var)
    adapt[[r]]$whitened_var_range <- paste(format(signif(range(wv), 2)), collapse = " - ")
    unstable <- FALSE
    if (stein_check) {
      # (in the whitened coordinates of a dense metric, where the identity's terms are O(1): in the raw ones a
      # thin ridge's terms are of the order 1 / (1 - rho^2) and cancel, so their noise flagged kilpisjarvi's
      # pilots at an exact Laplace metric, -E = 53, and shrank the step 16-fold; the identity holds in any
      # linear coordinates, and for a diagonal metric the two are the same)
      wh <- if (is.matrix(fac) && any(fac[lower.tri(fac)] != 0)) metric_whitener(fac)
      st <- if (is.null(wh)) metric_pilot_stein(pr$draws, function(x) score(x, pr$latent)) else
        metric_pilot_stein(wh$x(pr$draws), function(ph) wh$score(score(wh$x_inv(ph), pr$latent)))
      adapt[[r]]$stein_max <- if (is.null(st)) NA_real_ else max(-st)
      unstable <- !is.null(st) && any(-st > 2)
      if (unstable) shrink <- shrink / 4
    }
    metric <- metric_from_draws(pr$draws, kind, correlation, cap = if (!is.null(var_cap)) var_cap(pr$latent),
                                prev = fac)
    start <- pr$final
    latent <- pr$final_latent
    # (v0_path: the SA rounds' spike scales as multiples of v0, ending at 1: a spike that narrows over the rounds,
  # after the dynamic posterior exploration of Rockova & George 2018, keeps a coefficient of z about 5 in the
  # slab where one SA at the final spike dropped it: diabetes map 0.99 at seeds 1-3 against 0.06 at seed 1.
  # Regression with SA and fewer coefficients than rows only: at n = 100, p = 1,000 the wide spike let sigma
  # grow and lost four of five signals.)
  # at least two rounds; more (up to max_rounds) while the last one's whitened variances were off by more than
    # a factor 2 (a poor start such as a density's multiple of I: a 4-d Gaussian with scales 0.1 to 10 and
    # correlation 0.9 needed 83,000 iterations after two rounds)
    converged <- r >= min_rounds && !unstable && all(is.finite(wv)) && all(wv > 0.5 & wv < 2)
    if ((converged || r == rounds + extra) && !is.null(latent_check) && extra < 2L && !is.null(latent)) {
      chk <- latent_check(matrix(start, ncol = 1L), latent)
      if (!is.null(chk$moves)) {
        start <- drop(chk$starts)
        latent <- chk$latent
        moves <- rbind(moves, cbind(round = r, chk$moves))
        adapt[[r]]$moved <- nrow(chk$moves)
        extra <- extra + 1L
        next
      }
    }
    if (converged) break
  }
  fac <- metric_factor(metric, kind)
  whiten <- metric_whitener(fac)
  # every later pilot holds the latents at that estimate: the run samples that posterior, its chains holding them
  # too (sgld_sa())
  pilot_w <- function(eps, len) {
    pr <- pilot(eps, len, fac, FALSE, 2^20, start, latent)
    pr$draws <- whiten$x(pr$draws)
    pr
  }
  score_w <- function(draws, latent) whiten$score(score(whiten$x_inv(draws), latent))
  excess <- if (is.null(friction)) function(eps) eps / 2 * noise else function(eps) eps / friction / 2 * noise
  w <- sgmcmc_step_warmup(base * 2^(0:-5), pilot_w, score_w, excess = excess,
                          pilot_iterations = pilot_iterations, call = call)
  # the cap against the metric too: the run adapts the latents as the second round did, so its whitened
  # variances are about 1, whatever the held-latent pilots measured
  cap <- base * 2 * w$delta / noise
  if (w$step_size > cap) {
    w$step_size <- cap
    w$capped <- TRUE
  }
  # the mixing rate at the step and metric of the run: one more pilot from where round 2 ended, its latents held
  # (a pilot whose SA restarted measured the drift of its latents: rates up to 30 times low on Boston, and
  # the successive-halving pilots' rate, scaled from a larger step, came out up to 10 times low); its kept half
  # also gives the chains' starts
  rp <- pilot(w$step_size, 2L * adapt_iterations, fac, FALSE, 2^20 + 3, start, latent)
  w$rate_iterations <- 2L * adapt_iterations
  w$ess_rate <- NA_real_
  ok <- !isTRUE(rp$diverged) && nrow(rp$draws) >= 20L && all(is.finite(rp$draws))
  if (ok) {
    ess <- suppressWarnings(apply(rp$draws, 2L, function(v) if (stats::var(v) > 0) posterior::ess_bulk(v) else NA_real_))
    if (any(is.finite(ess))) w$ess_rate <- min(ess, na.rm = TRUE) / adapt_iterations  # per kept iteration
    # A pilot 4 times as long from where this one ended measures the rate again (rate_check: control variates,
    # whose pilots are cheap). It was first run only for one coordinate far below the others (N = 1e5, p = 20,
    # logistic: one coordinate's ESS 3.6 of 1,000 against a median of 105; the run it set was 169,000
    # iterations, and its chains then had a bulk ESS of 3,400 for that coordinate, 8 times the target).
    # With control variates (rate_check) the longer pilot always runs, and the run takes the lower of the two
    # rates: from the 2,000-iteration pilot alone an exact Gaussian posterior (N = 20,000, p = 5) got a run with
    # a bulk ESS of 474 where 1,200 were aimed at (R-hat 1.010)
    if (rate_check && any(is.finite(ess))) {
      rp2 <- pilot(w$step_size, 8L * adapt_iterations, fac, FALSE, 2^20 + 4, rp$final, latent)
      if (!isTRUE(rp2$diverged) && nrow(rp2$draws) >= 20L && all(is.finite(rp2$draws))) {
        ess2 <- suppressWarnings(apply(rp2$draws, 2L, function(v) if (stats::var(v) > 0) posterior::ess_bulk(v) else NA_real_))
        if (any(is.finite(ess2))) {
          ess <- ess2
          w$ess_rate <- min(w$ess_rate, min(ess2, na.rm = TRUE) / (4L * adapt_iterations))
          w$rate_iterations <- w$rate_iterations + 8L * adapt_iterations
        }
      }
    }
    w$rate_ess <- ess
    # the chains start at draws spread over the pilot's kept half (dispersed starts in the posterior's bulk, as
    # R-hat wants them)
    rows <- unique(round(seq(nrow(rp$draws), 1, length.out = chains)))
    w$starts <- t(rp$draws[rep_len(rows, chains), , drop = FALSE])
    # and their latent variables where round 2's SA left them: the SA of each chain from rho = 0.5 settled a
    # borderline coefficient in the spike in one chain and in the slab in another (diabetes tc, Boston nox:
    # R-hat 1.5-2.0, bulk ESS 5-7), an empirical-Bayes estimate per chain; from one estimate the chains
    # sample one posterior
    w$latent_start <- latent
    if (!is.null(w$latent_start$rho)) w$latent_start$rho[is.nan(w$latent_start$rho)] <- NA_real_  # not sparse
  }
  w$metric <- fac
  w$metric_kind <- kind
  w$spike_side <- moves
  w$adaptation <- sb_rbind_fill(adapt)
  w$iterations <- w$iterations + sum(w$adaptation$pilot_iterations) + w$rate_iterations
  w
}

# L with M = L L': the lower Cholesky factor of a dense metric, the square roots of a diagonal one.
# Stein's identity with linear test functions on the kept (second) half of a pilot's draws, at most 200 of them
# scored: E[s_j (x_j - m_j)] per coordinate (-1 for draws of the target); NULL when a score is not finite.
metric_pilot_stein <- function(draws, score, max_draws = 200L) {
  n <- nrow(draws)
  if (n < 20L) return(NULL)
  rows <- unique(round(seq(floor(n / 2) + 1, n, length.out = min(max_draws, n - floor(n / 2)))))
  x <- draws[rows, , drop = FALSE]
  sc <- score(x)
  if (any(!is.finite(sc))) return(NULL)
  colMeans(sc * sweep(x, 2L, colMeans(x)))
}

metric_factor <- function(metric, kind) {
  if (kind == "diagonal") return(sqrt(metric$var %||% diag(metric$cov)))
  cv <- metric$cov %||% diag(metric$var, length(metric$var))
  L <- tryCatch(t(chol(cv)), error = function(e) NULL)
  if (is.null(L)) {  # not positive definite (a rank-deficient estimate): its diagonal
    return(diag(sqrt(pmax(diag(cv), .Machine$double.eps)), nrow(cv)))
  }
  L
}

# A metric from pilot draws: each coordinate's variance (a coordinate that did not move keeps a tiny positive
# one; at most `cap`, a regression's prior variance at the pilot's latents, see sgmcmc_glm_var_cap()), in the correlation `correlation` when given (a regression: the Hessian's), else in the draws' own
# correlation shrunk towards the identity by d / (d + m / 10) (m draws: the chain's autocorrelation leaves
# roughly one draw in ten independent); after a pilot with a dense metric `prev` (its factor L), that estimate
# is made of the whitened draws L^-1 x and mapped back (a density target's rounds after the first, or its
# first after a Laplace start).
metric_from_draws <- function(draws, kind, correlation = NULL, cap = NULL, prev = NULL) {
  if (kind == "dense" && is.null(correlation) && is.null(cap) && is.matrix(prev) && any(prev[lower.tri(prev)] != 0)) {
    # relative to a dense metric the pilot ran with: the estimate in its whitened coordinates (where the
    # posterior is about N(., I)), shrunk there and mapped back, M = L S_w L'. Shrinking the raw correlation
    # towards I instead widens a thin direction by orders of magnitude (posteriordb's kilpisjarvi: alpha and
    # beta of a regression on years, correlation -0.99998 at the Laplace start; shrunk by 0.057 to -0.943, the
    # next pilot's metric was about 2,800 times too wide across the ridge and every pilot diverged)
    w <- metric_from_draws(t(forwardsolve(prev, t(draws))), kind)
    return(list(cov = prev %*% w$cov %*% t(prev)))
  }
  v <- apply(draws, 2L, stats::var)
  v[!is.finite(v) | v <= 0] <- NA_real_
  floor_v <- if (all(is.na(v))) 1 else max(v, na.rm = TRUE) * 1e-8
  v[is.na(v)] <- floor_v
  if (!is.null(cap)) v <- pmin(v, cap)
  if (kind == "diagonal") return(list(var = v))
  d <- ncol(draws)
  R <- correlation
  if (is.null(R)) {
    R <- suppressWarnings(stats::cor(draws))
    R[!is.finite(R)] <- 0
    diag(R) <- 1
    lam <- d / (d + nrow(draws) / 10)
    R <- (1 - lam) * R + lam * diag(d)
  }
  s <- sqrt(v)
  list(cov = R * outer(s, s))
}

# The whitening phi = L^-1 theta of draws (rows) and its inverse, and the score in phi: L' g (rows: g L).
metric_whitener <- function(fac) {
  if (is.matrix(fac)) {
    list(x = function(b) t(forwardsolve(fac, t(b))),
         x_inv = function(ph) ph %*% t(fac),
         score = function(g) g %*% fac)
  } else {
    list(x = function(b) sweep(b, 2L, fac, "/"),
         x_inv = function(ph) sweep(ph, 2L, fac, "*"),
         score = function(g) sweep(g, 2L, fac, "*"))
  }
}

# The metric a call asks for: "auto" is dense up to 200 parameters (the dense step costs 2 d^2 per iteration,
# below a 200-parameter regression's minibatch pass of 50 rows at d = 200), else diagonal; NULL: none.
sgmcmc_metric_kind <- function(control, sampler, d) {
  if (!sgmcmc_sampler_info(sampler)$metric) return(NULL)  # (it keeps its own preconditioner)
  m <- control$metric %||% "auto"
  if (m == "none") return(NULL)
  if (m == "auto") m <- if (d <= 200) "dense" else "diagonal"
  m
}

# The start of a regression's metric: the inverse of the negative log posterior's Hessian at the chains' start,
# on the sampler's scale (z = [1, x], intercept first). Gaussian: z'z / s2 with s2 the residual variance of a
# ridge fit (at least 5 % of the response's: a p > n ridge fits the data almost exactly); binomial: z'z times
# the logistic variance at the start's mean. The prior: the slab's kappa1 / sigma^2 and the Laplace spike's
# variance 2 sigma^2 / kappa0^2 as a precision (sparse coefficients, at the latents' start), 1 / prior_var
# (the others). With control variates (`cv`, R/sgmcmc_cv.R) the likelihood's Hessian at their centre replaces
# the cross products. Returns list(cov = ) (dense) or list(var = ) and the Hessian's correlation.
sgmcmc_glm_metric0 <- function(xs, ys, family, intercept, sparse, control, v0, v1, kind, cv = NULL) {
  P <- ncol(xs) + intercept
  sp <- c(if (intercept) FALSE, sparse)
  if (!is.null(cv)) {
    # control variates (R/sgmcmc_cv.R): the likelihood's Hessian at their centre, the mode
    lik <- cv$lik_hessian
    s2 <- if (family == "gaussian") cv$sigma^2 else control$sigma_init^2
  } else {
    z <- if (intercept) cbind(1, xs) else xs
    N <- nrow(z)
    ztz <- crossprod(z)
    if (family == "gaussian") {
      pen <- diag(ifelse(sp | !(seq_len(P) == 1L & intercept), 1, 0), P)
      b <- tryCatch(solve(ztz + pen, crossprod(z, ys)), error = function(e) NULL)
      s2 <- if (is.null(b)) stats::var(ys) else mean((ys - z %*% b)^2)
      s2 <- max(s2, 0.05 * mean((ys - mean(ys))^2), 1e-8)
      lik <- ztz / s2
    } else if (family == "poisson") {
      # the Hessian at the intercept-only fit, where the chains start: z'z times the mean count
      lik <- ztz * max(mean(ys), 1 / N)
      s2 <- control$sigma_init^2
    } else {
      m <- min(max(mean(ys), 0.05), 0.95)
      lik <- ztz * m * (1 - m)
      s2 <- control$sigma_init^2
    }
  }
  rho0 <- control$rho_init %||% control$delta_init
  k0 <- control$kappa0_init %||% ((1 - rho0) / v0)
  k1 <- control$kappa1_init %||% (rho0 / v1)
  prior <- ifelse(sp, k1 / s2 + k0^2 / (2 * s2), 1 / control$prior_var)
  H <- lik
  diag(H) <- diag(H) + prior
  if (kind == "diagonal" && P > 200) return(list(metric = list(var = 1 / diag(H)), correlation = NULL))
  cv <- tryCatch(chol2inv(chol(H)), error = function(e) NULL)
  if (is.null(cv)) return(list(metric = list(var = 1 / diag(H)), correlation = NULL))
  R <- stats::cov2cor(cv)
  list(metric = if (kind == "dense") list(cov = cv) else list(var = diag(cv)),
       correlation = if (kind == "dense") R else NULL)
}

# The largest variance a regression's metric may give a coefficient: its prior's at the latents a pilot ended
# with (a sparse coefficient: the Laplace spike's 2 sigma^2 / kappa0^2 and the slab's sigma^2 / kappa1 as
# precisions; the others: prior_var). A posterior is narrower than its prior where the likelihood is flat in
# some direction (p > n), and the cap matters there: unadjusted Langevin at a kink |beta| / b (the spike) spreads
# its draws to about sqrt(eps M) when eps M exceeds b^2, the spread enters the SA of sigma through
# sum kappa0 |beta|, sigma grows, the spike widens, and a metric learnt from such draws keeps it so (measured: n
# = 100, p = 1,000, sigma from 0.38 to 17 and every inclusion probability 0, without the cap).
sgmcmc_glm_var_cap <- function(sparse_all, prior_var) {
  function(latent) {
    s2 <- latent$sigma^2
    k0 <- latent$kappa0
    k1 <- latent$kappa1
    cap <- rep(prior_var, length(sparse_all))
    sp <- sparse_all & is.finite(k0) & is.finite(k1)
    cap[sp] <- 1 / (k0[sp]^2 / (2 * s2) + k1[sp] / s2)
    cap
  }
}

# The sparse start of a regression's chains and warm-up: the lasso at glmnet's lambda.1se of a 10-fold
# cross-validation (cv_weighted_lasso() on the sampler's scale, folds from the run's seed), and its residual sd
# sqrt(RSS / (N - nonzero - 1)) (gaussian; at least 1e-3 of the response's). Started at beta = 0 with sigma at the
# response's sd, the SA of n = 100, p = 1,000 (Table 1's design, 5 signals) put every coefficient in the spike
# before the signals moved, and sigma rose to the response's sd: a dense, all-spike fixed point that the chains
# never left (every inclusion probability 0); from the lasso's start the signals are in the slab from the first
# SA step.
sgmcmc_lasso_start <- function(xs, ys, family, intercept, seed) {
  cv <- suppressWarnings(cv_weighted_lasso(xs, ys, family = family, intercept = intercept, standardize = FALSE,
                                           seed = seed, quiet = TRUE, threads = 1L))
  b <- drop(as.matrix(stats::coef(cv, s = "lambda.1se")))
  if (!intercept) b <- b[-1L]
  z <- if (intercept) cbind(1, xs) else xs
  sigma <- NULL
  if (family == "gaussian") {
    r <- ys - drop(z %*% b)
    df <- sum(b != 0)
    sigma <- sqrt(sum(r^2) / max(1, length(ys) - df))
    sigma <- max(sigma, 1e-3 * sqrt(mean((ys - mean(ys))^2)), 1e-8)
  }
  list(beta = unname(b), sigma = sigma)
}

# rbind of data frames whose later rows may carry columns the earlier ones lack (NA there): the adaptation
# table's rounds (a Stein check's or a spike-side move's column appears only in some).
sb_rbind_fill <- function(rows) {
  rows <- Filter(Negate(is.null), rows)
  if (!length(rows)) return(NULL)
  cols <- unique(unlist(lapply(rows, names)))
  do.call(rbind, lapply(rows, function(d) {
    for (m in setdiff(cols, names(d))) d[[m]] <- NA
    d[cols]
  }))
}
