#' Exact posterior mean of the normal-means model with a Laplace prior
#'
#' For \eqn{y \mid \theta \sim N(\theta, 1)} and \eqn{\theta \sim} Laplace(0, 1/lambda) (density
#' \eqn{\frac{\lambda}{2} e^{-\lambda|\theta|}}),
#' \deqn{E(\theta \mid y) = y + \lambda \frac{F(y) - F(-y)}{F(y) + F(-y)}, \qquad F(y) = e^{\lambda y}\Phi(-y - \lambda)}
#' (Mitchell 1994). The WBB paper (Newton, Polson and Xu 2021, section 3.1) prints \eqn{F(y) = e^{y}\Phi(-y-\lambda)},
#' a typo: the exponent must carry \eqn{\lambda}. Evaluated stably as \eqn{y + \lambda \tanh((a - b)/2)} with
#' \eqn{a = \lambda y + \log\Phi(-y-\lambda)}, \eqn{b = -\lambda y + \log\Phi(y-\lambda)} (log-scale normal
#' tails), which neither overflows nor cancels for large \eqn{|y|} or \eqn{\lambda}.
#' @param y Observations.
#' @param lambda Laplace rate (positive).
#' @return Posterior means, one per `y`.
#' @export
#' @examples
#' laplace_posterior_mean(c(-3, 0, 0.5, 3, 40), lambda = 1)
laplace_posterior_mean <- function(y, lambda) {
  if (!is.numeric(y) || any(!is.finite(y))) sb_abort("{.arg y} must be finite numbers.", arg = "y")
  lambda <- check_number(lambda, lower = 0, lower_open = TRUE)
  a <- lambda * y + stats::pnorm(-y - lambda, log.p = TRUE)
  b <- -lambda * y + stats::pnorm(y - lambda, log.p = TRUE)
  check_finite_result(y + lambda * tanh((a - b) / 2))
}

# Closed-form results whose intermediate terms overflow for extreme y or lambda: a classed error, not NaN.
check_finite_result <- function(out, call = rlang::caller_env()) {
  if (any(!is.finite(out))) {
    sb_abort(c("The result overflows double precision for these {.arg y} and {.arg lambda}.",
               i = "Rescale {.arg y} and {.arg lambda} by the same factor (both are on the scale of the data)."),
             kind = "scaling", call = call)
  }
  out
}

#' Exact WBB draws for the normal-means model with a lasso penalty
#'
#' For one observation y and penalty lambda, the WBB draw is the soft-thresholding solution
#' \eqn{\theta^*_w = \mathrm{sign}(y)(|y| - \lambda w_0/w_1)_+} of
#' \eqn{\min_\theta \frac{w_1}{2}(y-\theta)^2 + \lambda w_0|\theta|}, with \eqn{w_0, w_1 \sim} Exp(1).
#' Since \eqn{w_0/w_1} has survival function \eqn{1/(1+r)}, the WBB mean has the closed form
#' \eqn{E_w(\theta^*_w) = \mathrm{sign}(y)\,(|y| - \lambda\log(1 + |y|/\lambda))}.
#' @param y Observations.
#' @param lambda Penalty (positive).
#' @param draws Number of WBB draws per observation.
#' @return `wbb_normal_means()`: a `draws x length(y)` matrix (R's RNG: use [set.seed()]);
#'   `wbb_normal_means_mean()`: the exact WBB means.
#' @export
#' @examples
#' set.seed(1)
#' d <- wbb_normal_means(c(0.5, 2), lambda = 1, draws = 2000)
#' colMeans(d); wbb_normal_means_mean(c(0.5, 2), lambda = 1)
wbb_normal_means <- function(y, lambda, draws = 1000L) {
  if (!is.numeric(y) || any(!is.finite(y))) sb_abort("{.arg y} must be finite numbers.", arg = "y")
  lambda <- check_number(lambda, lower = 0, lower_open = TRUE)
  draws <- check_count(draws)
  k <- length(y)
  check_result_size(draws, k, "draws")
  r <- matrix(stats::rexp(draws * k), draws, k) / matrix(stats::rexp(draws * k), draws, k)
  yy <- matrix(y, draws, k, byrow = TRUE)
  sign(yy) * pmax(abs(yy) - lambda * r, 0)
}

#' @rdname wbb_normal_means
#' @export
wbb_normal_means_mean <- function(y, lambda) {
  if (!is.numeric(y) || any(!is.finite(y))) sb_abort("{.arg y} must be finite numbers.", arg = "y")
  lambda <- check_number(lambda, lower = 0, lower_open = TRUE)
  check_finite_result(sign(y) * (abs(y) - lambda * log1p(abs(y) / lambda)))
}

#' Figure 1 of the WBB paper: WBB mean versus exact posterior mean (normal means, Laplace prior)
#'
#' @param lambda Values of lambda.
#' @param y Grid of observations.
#' @param draws WBB draws per grid point for the Monte-Carlo WBB mean (0: only the exact WBB mean).
#' @return A data frame of class `sb_wbb_figure1` (`y`, `lambda`, `wbb_mean` exact, `wbb_mc` Monte-Carlo,
#'   `posterior_mean` exact), with a `plot()` method.
#' @export
#' @examples
#' f1 <- wbb_figure1(draws = 200)
#' plot(f1)
wbb_figure1 <- function(lambda = c(0.5, 1, 2), y = seq(-4, 4, length.out = 161), draws = 2000L) {
  draws <- check_count(draws, min = 0L)
  out <- do.call(rbind, lapply(lambda, function(l) {
    data.frame(y = y, lambda = l, wbb_mean = wbb_normal_means_mean(y, l),
               wbb_mc = if (draws > 0) colMeans(wbb_normal_means(y, l, draws)) else NA_real_,
               posterior_mean = laplace_posterior_mean(y, l))
  }))
  class(out) <- c("sb_wbb_figure1", "data.frame")
  out
}

#' @export
plot.sb_wbb_figure1 <- function(x, ...) {
  ls <- unique(x$lambda)
  cols <- c("#1b9e77", "#d95f02", "#7570b3", "#e7298a")[seq_along(ls)]
  graphics::plot(range(x$y), range(c(x$wbb_mean, x$posterior_mean)), type = "n", xlab = "y",
                 ylab = "E(theta | y)", main = "Normal means, Laplace prior", ...)
  graphics::abline(0, 1, col = "grey80")
  for (i in seq_along(ls)) {
    d <- x[x$lambda == ls[i], ]
    graphics::lines(d$y, d$wbb_mean, col = cols[i], lwd = 2)
    graphics::lines(d$y, d$posterior_mean, col = cols[i], lwd = 2, lty = 2)
    if (any(is.finite(d$wbb_mc))) graphics::points(d$y[c(TRUE, rep(FALSE, 9))], d$wbb_mc[c(TRUE, rep(FALSE, 9))],
                                                   col = cols[i], pch = 16, cex = 0.5)
  }
  graphics::legend("topleft", c(paste("lambda =", ls), "WBB mean (solid; dots: Monte Carlo)", "posterior mean (dashed)"),
                   col = c(cols, "black", "black"), lty = c(rep(1, length(ls)), 1, 2), bty = "n", cex = 0.8)
  invisible(x)
}

#' Figure 2 of the WBB paper: WBB versus posteriors under L1 and L0 priors (p = 2)
#'
#' Simulates n = 50 observations from \eqn{y = X\beta + \epsilon}, rows of X from
#' \eqn{N(0, [[1, .3], [.3, 1]])}, \eqn{\beta = (0, 2)}, \eqn{\sigma^2 = 1} (the same data for both
#' readings and a given seed), and draws WBB samples and posterior samples under an L1 and two L0 priors, in
#' one of two readings of the paper.
#'
#' **`reading = "spike_slab"`** (default; what the text describes, computed exactly). WBB: lasso penalty,
#' separate prior weights, lambda by 10-fold CV, [wbb()] without standardization so that the penalty is
#' the prior below. Exact posterior samples (known \eqn{\sigma^2 = 1}, no intercept) under
#' * the L1 prior \eqn{p(\beta) \propto e^{-\lambda\|\beta\|_1}} with the same lambda: the posterior is a
#'   mixture over the four orthants of Gaussians truncated to their orthant, sampled exactly (orthant weights
#'   by one-dimensional quadrature, then rejection within the orthant);
#' * the L0 priors \eqn{p(\beta) \propto e^{-\kappa\lambda\|\beta\|_0}}, \eqn{\kappa = 1, 5}. As written this is
#'   improper (Lebesgue mass on the non-zero values); we make it proper by taking it as a density with
#'   respect to \eqn{\prod_j(\delta_0 + \mathrm{Leb}|_{[-L, L]})}: each \eqn{\beta_j} is exactly zero with
#'   weight 1 or uniform on \eqn{[-L, L]} with total weight \eqn{2L e^{-\kappa\lambda}}, i.e. a spike-and-slab
#'   prior with inclusion probability \eqn{2Le^{-\kappa\lambda}/(1 + 2Le^{-\kappa\lambda})} and a uniform
#'   slab (default L = 10). The posterior is sampled exactly by enumerating the 4 models: model probabilities
#'   from the Gaussian integrals over the slab box (quadrature), then \eqn{\beta_\gamma} from its Gaussian
#'   posterior truncated to the box (rejection). The result depends on L (Lindley's paradox), as any proper
#'   version of an L0 prior must.
#'
#' **`reading = "paper_code"`** (what the authors' script `mcmc(figure2).R` computed). lambda is fixed at
#' 10 (no cross-validation); WBB is the weighted lasso at that lambda (separate prior weights, no intercept,
#' no standardization; the authors called glmnet at `s = lambda / n` with its defaults, which also rescale
#' the data weights to mean 1 and the prior weights to mean 1, and standardize the columns, whose SDs are
#' near 1 here); each "posterior" is random-walk Metropolis on the *Lebesgue* density
#' \eqn{\exp(-\|y - X\beta\|^2/2 - \mathrm{pen}(\beta))} with pen \eqn{\lambda\|\beta\|_1},
#' \eqn{\lambda\|\beta\|_0} and \eqn{10\lambda\|\beta\|_0} (the code's multiplier; the text says 5),
#' proposal sd 0.2 per coordinate, start (2, 2), `iterations` iterations of which the last `draws` are kept.
#' A continuous proposal is never exactly 0, so \eqn{\|\beta\|_0 = 2} at every state and every proposal and
#' the L0 term cancels from every acceptance ratio: both L0 chains are the flat-prior posterior
#' \eqn{N(\hat\beta, (X'X)^{-1})}. The result records this as a measurement: `l0_term_changes` counts the
#' Metropolis steps at which the L0 term differed between the current state and the proposal, and
#' `flat_prior_max_diff` is the largest difference between each L0 chain and the chain with no prior term
#' run on the same random numbers.
#' @param draws Draws per method.
#' @param slab_halfwidth L above (`"spike_slab"` only).
#' @param kappa Multipliers of lambda for the L0 priors (`NULL`: `c(1, 5)` for `"spike_slab"`, the text's;
#'   `c(1, 10)` for `"paper_code"`, the code's).
#' @param seed Seed (data, CV folds and all draws).
#' @param reading `"spike_slab"` or `"paper_code"`, see above.
#' @param iterations Metropolis iterations per chain for `reading = "paper_code"` (the authors' 50000); at
#'   least `draws`.
#' @param threads,quiet Threads and progress of the WBB arm, as in [wbb()] (results do not depend on them).
#' @param mh_iter Deprecated name of `iterations` (works for one release, with a warning).
#' @return A list of class `sb_wbb_figure2`: `draws` (a named list of `draws x 2` matrices), `lambda`,
#'   `model_prob` (posterior model probabilities under each L0 prior; empty for `"paper_code"`), `data`,
#'   `reading`, and for `"paper_code"` `accept_rate`, `l0_term_changes` and `flat_prior_max_diff` (per
#'   chain); with a `plot()` method.
#' @export
#' @examples
#' \donttest{
#' f2 <- wbb_figure2(draws = 1000, seed = 1)
#' plot(f2)
#' f2p <- wbb_figure2(draws = 1000, seed = 1, reading = "paper_code", iterations = 10000)
#' f2p$l0_term_changes
#' plot(f2p)
#' }
wbb_figure2 <- function(draws = 4000L, slab_halfwidth = 10, kappa = NULL, seed = 1,
                        reading = c("spike_slab", "paper_code"), iterations = 50000L, threads = NULL, quiet = TRUE,
                        mh_iter) {
  iterations <- sb_renamed_arg(if (!missing(mh_iter)) mh_iter, iterations, "mh_iter", "iterations",
                               missing(iterations), "wbb_figure2", old_missing = missing(mh_iter))
  reading <- sb_match_arg(reading)
  draws <- check_count(draws)
  L <- check_number(slab_halfwidth, lower = 0, lower_open = TRUE)
  mh_iter <- check_count(iterations, arg = "iterations", min = 2L, max = 1e8)
  if (reading == "paper_code" && draws > mh_iter) {
    sb_abort(c("{.arg draws} ({draws}) must be at most {.arg iterations} ({mh_iter}): the last {.arg draws} Metropolis iterations are kept.",
               i = "Increase {.arg iterations} or decrease {.arg draws}."), arg = "draws")
  }
  if (is.null(kappa)) kappa <- if (reading == "spike_slab") c(1, 5) else c(1, 10)
  if (!is.numeric(kappa) || length(kappa) < 1L || length(kappa) > 10L || any(!is.finite(kappa)) || any(kappa <= 0)) {
    sb_abort(c("{.arg kappa} must be 1 to 10 positive numbers (multipliers of lambda).",
               x = "You supplied {.val {format(kappa)}}."), arg = "kappa")
  }
  seed <- resolve_seed(seed)
  withr::local_seed(as.integer(seed %% .Machine$integer.max))
  n <- 50L
  S <- matrix(c(1, 0.3, 0.3, 1), 2)
  x <- matrix(stats::rnorm(n * 2), n) %*% chol(S)
  colnames(x) <- c("beta1", "beta2")
  beta <- c(0, 2)
  y <- drop(x %*% beta + stats::rnorm(n))
  l0_name <- function(k) if (k == 1) "L0 prior (lambda)" else sprintf("L0 prior (%g lambda)", k)
  if (reading == "paper_code") {
    return(wbb_figure2_paper_code(x, y, beta, draws, kappa, seed, mh_iter, l0_name, threads, quiet))
  }
  fw <- wbb(x, y, prior_weights = "separate", draws = draws, seed = seed, threads = threads, quiet = quiet,
            standardize = FALSE)
  lambda <- fw$lambda
  out <- list(WBB = fw$draws[, c("beta1", "beta2")])
  out[["L1 prior"]] <- l1_posterior_p2(x, y, lambda, draws)
  mp <- list()
  for (k in kappa) {
    r <- l0_posterior_p2(x, y, k * lambda, L, draws)
    nm <- l0_name(k)
    out[[nm]] <- r$draws
    mp[[nm]] <- r$model_prob
  }
  structure(list(draws = out, lambda = lambda, model_prob = mp, data = list(x = x, y = y, beta = beta),
                 slab_halfwidth = L, reading = reading), class = "sb_wbb_figure2")
}

# The authors' Figure 2 computation (lambda fixed at 10, random-walk Metropolis on Lebesgue densities).
wbb_figure2_paper_code <- function(x, y, beta, draws, kappa, seed, mh_iter, l0_name, threads = NULL, quiet = TRUE) {
  lambda <- 10
  fw <- wbb(x, y, lambda = lambda, prior_weights = "separate", draws = draws, seed = seed, threads = threads,
            quiet = quiet, standardize = FALSE, control = wbb_control(intercept = FALSE))
  out <- list(WBB = fw$draws[, c("beta1", "beta2")])
  pens <- c(list("L1 prior" = function(b) lambda * sum(abs(b))),
            stats::setNames(lapply(kappa, function(k) function(b) k * lambda * sum(b != 0)),
                            vapply(kappa, l0_name, "")))
  acc <- changes <- flat_diff <- numeric(0)
  for (nm in names(pens)) {
    # each L0 chain is also run with no prior term on the same random numbers
    flat <- if (nm != "L1 prior") withr::with_preserve_seed(rw_metropolis_p2(x, y, function(b) 0, mh_iter))
    r <- rw_metropolis_p2(x, y, pens[[nm]], mh_iter)
    out[[nm]] <- r$chain[(mh_iter - draws + 1L):mh_iter, , drop = FALSE]
    acc[nm] <- r$accept_rate
    if (!is.null(flat)) {
      changes[nm] <- r$prior_changes
      flat_diff[nm] <- max(abs(flat$chain - r$chain))
    }
  }
  structure(list(draws = out, lambda = lambda, model_prob = list(), data = list(x = x, y = y, beta = beta),
                 reading = "paper_code", accept_rate = acc, l0_term_changes = changes,
                 flat_prior_max_diff = flat_diff, iterations = mh_iter), class = "sb_wbb_figure2")
}

# Random-walk Metropolis on the Lebesgue density exp(-|y - X b|^2 / 2 - pen(b)), p = 2: proposal
# N(current, 0.2^2 I), start (2, 2), as in the WBB authors' Figure 2 script (ratio on the log scale).
# `prior_changes` counts the steps at which pen(proposal) != pen(current).
rw_metropolis_p2 <- function(x, y, pen, iter, start = c(2, 2), sd = 0.2) {
  loglik <- function(b) -0.5 * sum((y - x %*% b)^2)
  chain <- matrix(NA_real_, iter, 2, dimnames = list(NULL, colnames(x)))
  cur <- start; lcur <- loglik(cur); pcur <- pen(cur)
  chain[1, ] <- cur
  acc <- 0L; changes <- 0L
  for (i in 2:iter) {
    prop <- c(stats::rnorm(1, cur[1], sd), stats::rnorm(1, cur[2], sd))
    lprop <- loglik(prop); pprop <- pen(prop)
    if (pprop != pcur) changes <- changes + 1L
    if (log(stats::runif(1)) < (lprop - pprop) - (lcur - pcur)) {
      cur <- prop; lcur <- lprop; pcur <- pprop; acc <- acc + 1L
    }
    chain[i, ] <- cur
  }
  list(chain = chain, accept_rate = acc / (iter - 1), prior_changes = changes)
}

# P(Z in [lo1, hi1] x [lo2, hi2]) for Z ~ N(m, V), 2-d, by quadrature over the first coordinate.
rect_prob2 <- function(m, V, lo, hi) {
  s1 <- sqrt(V[1, 1])
  cs <- V[1, 2] / V[1, 1]
  s21 <- sqrt(max(V[2, 2] - V[1, 2]^2 / V[1, 1], 0))
  f <- function(z1) {
    mu2 <- m[2] + cs * (z1 - m[1])
    stats::dnorm(z1, m[1], s1) * (stats::pnorm(hi[2], mu2, s21) - stats::pnorm(lo[2], mu2, s21))
  }
  a <- max(lo[1], m[1] - 12 * s1); b <- min(hi[1], m[1] + 12 * s1)
  if (a >= b) return(0)
  stats::integrate(f, a, b, rel.tol = 1e-10, abs.tol = 0)$value
}

rmvn2 <- function(k, m, V) {
  z <- matrix(stats::rnorm(2 * k), k, 2) %*% chol(V)
  sweep(z, 2, m, "+")
}

# draws from N(m, V) truncated to the rectangle [lo, hi] (2-d) by rejection, in blocks
rtrunc2 <- function(k, m, V, lo, hi) {
  out <- matrix(NA_real_, 0, 2)
  while (nrow(out) < k) {
    z <- rmvn2(max(2 * (k - nrow(out)), 100), m, V)
    ok <- z[, 1] >= lo[1] & z[, 1] <= hi[1] & z[, 2] >= lo[2] & z[, 2] <= hi[2]
    out <- rbind(out, z[ok, , drop = FALSE])
  }
  out[seq_len(k), , drop = FALSE]
}

# Exact posterior draws for y ~ N(X beta, I), p(beta) prop. to exp(-lambda |beta|_1), p = 2.
l1_posterior_p2 <- function(x, y, lambda, draws) {
  A <- crossprod(x); V <- solve(A); xty <- drop(crossprod(x, y))
  signs <- as.matrix(expand.grid(c(-1, 1), c(-1, 1)))
  logw <- numeric(4); ms <- vector("list", 4)
  for (k in 1:4) {
    s <- signs[k, ]
    m <- drop(V %*% (xty - lambda * s)); ms[[k]] <- m
    lo <- ifelse(s > 0, 0, -Inf); hi <- ifelse(s > 0, Inf, 0)
    logw[k] <- 0.5 * sum(m * (A %*% m)) + log(rect_prob2(m, V, lo, hi))
  }
  w <- exp(logw - max(logw)); w <- w / sum(w)
  cnt <- as.vector(stats::rmultinom(1, draws, w))
  out <- do.call(rbind, lapply(1:4, function(k) {
    if (cnt[k] == 0) return(NULL)
    s <- signs[k, ]
    rtrunc2(cnt[k], ms[[k]], V, ifelse(s > 0, 0, -Inf), ifelse(s > 0, Inf, 0))
  }))
  out <- out[sample.int(nrow(out)), , drop = FALSE]
  colnames(out) <- c("beta1", "beta2")
  out
}

# Exact posterior draws under the proper L0 prior (spike at 0 with weight 1, uniform slab on [-L, L] with
# density exp(-pen)), y ~ N(X beta, I), p = 2, by enumerating the 4 models.
l0_posterior_p2 <- function(x, y, pen, L, draws) {
  models <- list(c(FALSE, FALSE), c(TRUE, FALSE), c(FALSE, TRUE), c(TRUE, TRUE))
  logm <- numeric(4); post <- vector("list", 4)
  yy <- sum(y^2)
  for (k in 1:4) {
    g <- models[[k]]; kk <- sum(g)
    if (kk == 0) { logm[k] <- -0.5 * yy; next }
    xg <- x[, g, drop = FALSE]
    A <- crossprod(xg); V <- solve(A); m <- drop(V %*% crossprod(xg, y))
    # integral over the box of exp(-|y - X b|^2 / 2) db = exp(-RSS/2) (2 pi)^{k/2} |V|^{1/2} P(box)
    rss <- yy - sum(m * (A %*% m))
    pbox <- if (kk == 1) stats::pnorm(L, m, sqrt(V[1, 1])) - stats::pnorm(-L, m, sqrt(V[1, 1]))
            else rect_prob2(m, V, c(-L, -L), c(L, L))
    logm[k] <- -0.5 * rss + 0.5 * kk * log(2 * pi) + 0.5 * log(det(V)) + log(pbox) - kk * pen
    post[[k]] <- list(m = m, V = V)
  }
  w <- exp(logm - max(logm)); w <- w / sum(w)
  cnt <- as.vector(stats::rmultinom(1, draws, w))
  out <- matrix(0, 0, 2)
  for (k in 1:4) {
    if (cnt[k] == 0) next
    g <- models[[k]]
    b <- matrix(0, cnt[k], 2)
    if (sum(g) == 1) {
      m <- post[[k]]$m; s <- sqrt(post[[k]]$V[1, 1])
      u <- stats::runif(cnt[k], stats::pnorm(-L, m, s), stats::pnorm(L, m, s))
      b[, which(g)] <- stats::qnorm(u, m, s)
    } else if (sum(g) == 2) {
      b <- rtrunc2(cnt[k], post[[k]]$m, post[[k]]$V, c(-L, -L), c(L, L))
    }
    out <- rbind(out, b)
  }
  out <- out[sample.int(nrow(out)), , drop = FALSE]
  colnames(out) <- c("beta1", "beta2")
  list(draws = out, model_prob = stats::setNames(w, c("none", "beta1", "beta2", "both")))
}

#' @export
plot.sb_wbb_figure2 <- function(x, ...) {
  cols <- c("black", "#1b9e77", "#d95f02", "#7570b3")
  nm <- names(x$draws)
  op <- graphics::par(mfrow = c(1, 2), mar = c(4, 4, 2.5, 0.5), mgp = c(2, 0.6, 0))
  on.exit(graphics::par(op), add = TRUE)
  for (j in 1:2) {
    dens <- lapply(x$draws, function(d) {
      v <- d[, j]; nz <- v[v != 0]
      list(p0 = mean(v == 0), d = if (length(nz) > 10) stats::density(nz) else NULL, frac = length(nz) / length(v))
    })
    ymax <- max(unlist(lapply(dens, function(z) if (is.null(z$d)) 0 else max(z$d$y) * z$frac)))
    xr <- range(unlist(lapply(dens, function(z) if (is.null(z$d)) 0 else range(z$d$x))))
    graphics::plot(xr, c(0, ymax * 1.1), type = "n", xlab = colnames(x$draws[[1]])[j], ylab = "density",
                   main = sprintf("beta%d (true %g)%s", j, x$data$beta[j],
                                  if (identical(x$reading, "paper_code")) ", paper code" else ""))
    for (k in seq_along(dens)) {
      z <- dens[[k]]
      if (!is.null(z$d)) graphics::lines(z$d$x, z$d$y * z$frac, col = cols[k], lwd = 2, lty = if (k == 1) 1 else 2)
      if (z$p0 > 0) {
        graphics::segments(0 + (k - 2.5) * diff(xr) / 100, 0, 0 + (k - 2.5) * diff(xr) / 100, ymax * z$p0,
                           col = cols[k], lwd = 4)
      }
    }
    if (j == 1) {
      lab <- sprintf("%s%s", nm, vapply(dens, function(z) if (z$p0 > 0) sprintf(" [P(0)=%.2f]", z$p0) else "", ""))
      graphics::legend("topright", lab, col = cols[seq_along(nm)], lty = c(1, rep(2, length(nm) - 1)), lwd = 2,
                       bty = "n", cex = 0.7)
    }
  }
  invisible(x)
}

#' Figure 3 of the WBB paper: diabetes marginal posteriors by WBB and two Bayesian lassos
#'
#' Draws the lasso posterior of the regression coefficients four ways: WBB with a common and with separate
#' prior weights ([wbb()], lambda by 10-fold CV), the Bayesian lasso with lambda by empirical Bayes
#' ([blasso()] with `lambda = "eb"`, the sampler the paper's text describes), and the Bayesian lasso as the
#' paper's code ran it: `monomvn::blasso()` with its defaults, i.e. reversible jump over the active set
#' (every subset equally likely), \eqn{\lambda^2 \sim} Gamma(2, 0.1), an intercept, \eqn{\pi(\sigma^2)
#' \propto 1/\sigma^2}, columns of `x` centred and scaled to unit Euclidean norm, `thin = min(p, n - 1)`
#' sweeps per kept draw. That last arm is [blasso()] with `blasso_control(rj = TRUE, preset = "monomvn")`
#' run on the unit-norm columns (the intercept, prior and thinning are passed explicitly); its
#' coefficients are transformed back to the scale of `x`.
#'
#' Reversible jump gives posterior mass at exactly zero, as WBB does; the continuous Bayesian-lasso prior
#' (EB arm) never does. `p_zero` is, for each method and coefficient, the fraction of draws exactly 0:
#' for the RJ arm an estimate of the posterior probability \eqn{P(\beta_j = 0 \mid y)}, for WBB the share
#' of weighted-lasso solutions with \eqn{\beta_j} at zero.
#' @param x,y Predictors (a matrix with column names) and response, e.g. `diabetes$x`, `diabetes$y`.
#' @param draws Draws per WBB scheme, and kept draws per chain of each Bayesian lasso.
#' @param chains Chains per Bayesian lasso.
#' @param burnin Sweeps discarded per Bayesian-lasso chain (for the RJ arm: before thinning).
#' @param seed Seed of every arm.
#' @param threads Threads (results do not depend on it).
#' @param quiet Hide the progress bars of the four fits.
#' @param chunks,future Passed to [wbb()] and [blasso()]: split the draws (chains) into chunks run through
#'   the user's [future::plan()]; results do not depend on them.
#' @param paper_code Also run the two WBB schemes as the authors' script (`wbb_supplemetary.R`) computed them
#'   (arms `"WBB (common, paper code)"` and `"WBB (separate, paper code)"`, beside the exact ones). The script
#'   calls `glmnet(X, y, lambda = rexp(1) * l, weights = rexp(N))` and, for separate weights, the same with
#'   `penalty.factor = rexp(p)`: lambda is multiplied by one Exp(1) draw in BOTH schemes, so its "separate"
#'   prior weights are separate weights normalized to mean 1 (glmnet rescales `penalty.factor` to sum p)
#'   times a common Exp(1) weight; glmnet also divides the loss by the sum of the data weights and
#'   standardizes the columns with the weighted SDs of each draw. Each draw here solves that problem exactly
#'   ([weighted_lasso()] with penalty factors `w0 * v_j / mean(v) * sd_w(x_j)`, lambda `l * sum(w)`), with `l`
#'   the exact arms' cross-validated lambda on glmnet's scale (the script's own `cv.glmnet(nfolds = 10)` has
#'   random folds); the Exp(1) weights come from R's generator under `seed` (the caller's random state is
#'   left as it was).
#' @return A list of class `sb_wbb_figure3`: `draws` (a named list of `draws x p` coefficient matrices,
#'   no intercept), `p_zero` (methods x coefficients), `fits` (the four fits: `wbb_common`,
#'   `wbb_separate`, `blasso_eb`, `blasso_rj`), `column_norms` (the norms of the centred columns of `x`
#'   used by the RJ arm), and with `paper_code = TRUE` `paper_code` (`lambda_glmnet` and the `w0` draws of
#'   both schemes); with a `plot()` method.
#' @export
#' @examples
#' \donttest{
#' data(diabetes)
#' f3 <- wbb_figure3(diabetes$x, diabetes$y, draws = 300, chains = 2)
#' round(f3$p_zero, 2)
#' plot(f3)
#' }
wbb_figure3 <- function(x, y, draws = 1000L, chains = 4L, burnin = 500L, seed = 2021, threads = NULL, quiet = TRUE,
                        chunks = NULL, future = FALSE, paper_code = FALSE) {
  x <- check_x_matrix(x)
  y <- check_y_vector(y, nrow(x))
  if (is.null(colnames(x))) colnames(x) <- paste0("x", seq_len(ncol(x)))
  draws <- check_count(draws)
  chains <- check_count(chains)
  burnin <- check_count(burnin, min = 0L)
  seed <- resolve_seed(seed)
  paper_code <- check_flag(paper_code)
  n <- nrow(x); p <- ncol(x)
  # monomvn's normalization (centre, then unit Euclidean norm), done here so that the RJ arm does not depend
  # on what the "monomvn" preset does with the columns
  xc <- sweep(x, 2, colMeans(x))
  big <- apply(abs(xc), 2, max)  # norms without underflow or overflow for tiny or huge columns
  nrm <- big * sqrt(colSums(sweep(xc, 2, pmax(big, .Machine$double.xmin), "/")^2))
  if (any(nrm == 0)) {
    sb_abort("{.arg x} has constant column{?s} {.val {colnames(x)[nrm == 0]}}; drop {?it/them}.", arg = "x")
  }
  fit_com <- wbb(x, y, prior_weights = "common", draws = draws, seed = seed, threads = threads, quiet = quiet,
                 chunks = chunks, future = future)
  fit_sep <- wbb(x, y, prior_weights = "separate", draws = draws, seed = seed, threads = threads, quiet = quiet,
                 chunks = chunks, future = future)
  bl_eb <- blasso(x, y, lambda = "eb", chains = chains, iterations = draws, burnin = burnin, seed = seed,
                  threads = threads, quiet = quiet, chunks = chunks, future = future)
  bl_rj <- blasso(sweep(xc, 2, nrm, "/"), y, lambda = "gamma", chains = chains, iterations = draws, burnin = burnin,
                  thin = max(1L, min(p, n - 1L)), seed = seed, threads = threads, quiet = quiet, chunks = chunks,
                  future = future,
                  control = blasso_control(rj = TRUE, preset = "monomvn", intercept = TRUE, gamma_prior = c(2, 0.1)))
  rj <- sweep(bl_rj$draws[, colnames(x), drop = FALSE], 2, nrm, "/")
  d <- list("WBB (common)" = fit_com$draws[, colnames(x), drop = FALSE],
            "WBB (separate)" = fit_sep$draws[, colnames(x), drop = FALSE],
            "BLASSO (EB)" = bl_eb$draws[, colnames(x), drop = FALSE],
            "BLASSO (RJ, monomvn defaults)" = rj)
  pc <- NULL
  if (paper_code) {
    lam_g <- fit_sep$lambda / n  # the exact arms' CV lambda on glmnet's scale
    com <- wbb_figure3_paper_wbb(x, y, lam_g, draws, seed, separate = FALSE)
    sep <- wbb_figure3_paper_wbb(x, y, lam_g, draws, seed + 1, separate = TRUE)
    d[["WBB (common, paper code)"]] <- com$draws
    d[["WBB (separate, paper code)"]] <- sep$draws
    pc <- list(lambda_glmnet = lam_g, w0_common = com$w0, w0_separate = sep$w0)
  }
  structure(list(draws = d, p_zero = t(vapply(d, function(m) colMeans(m == 0), numeric(p))),
                 fits = list(wbb_common = fit_com, wbb_separate = fit_sep, blasso_eb = bl_eb, blasso_rj = bl_rj),
                 column_norms = nrm, paper_code = pc), class = "sb_wbb_figure3")
}

# The WBB arms of Figure 3 as wbb_supplemetary.R computed them: per draw glmnet(x, y, lambda = w0 * lam_g,
# weights = w[, t], penalty.factor = v[t, ] (separate) or none (common), standardize = TRUE, intercept = TRUE),
# w ~ Exp(1)^n, w0 ~ Exp(1), v ~ Exp(1)^p. glmnet's problem, multiplied by sum(w):
#   sum_i w_i (y_i - b0 - x_i'b)^2 / 2 + lam_g * w0 * sum(w) * sum_j (v_j / mean(v)) * sd_w(x_j) |b_j|,
# sd_w the weighted SD (weights w / sum(w)) of glmnet's internal standardization; solved exactly on x's scale.
wbb_figure3_paper_wbb <- function(x, y, lam_g, draws, seed, separate) {
  n <- nrow(x); p <- ncol(x)
  wts <- withr::with_seed(as.integer(seed %% .Machine$integer.max), {
    list(w = matrix(stats::rexp(n * draws), n, draws), w0 = stats::rexp(draws),
         v = if (separate) matrix(stats::rexp(p * draws), draws, p) else matrix(1, draws, p))
  })
  out <- matrix(NA_real_, draws, p, dimnames = list(NULL, colnames(x)))
  for (t in seq_len(draws)) {
    w <- wts$w[, t]
    wn <- w / sum(w)
    xm <- colSums(x * wn)
    sdw <- sqrt(colSums(sweep(x, 2, xm)^2 * wn))
    v <- wts$v[t, ] / mean(wts$v[t, ])
    fit <- weighted_lasso(x, y, weights = w, penalty_factor = wts$w0[t] * v * sdw, lambda = lam_g * sum(w),
                          standardize = FALSE, intercept = TRUE)
    out[t, ] <- fit$coefficients[-1, 1]
  }
  list(draws = out, w0 = wts$w0)
}

#' @export
plot.sb_wbb_figure3 <- function(x, pars = NULL, ncol = 5L, ...) {
  ncol <- check_count(ncol, max = 100L)
  d <- x$draws
  vars <- if (is.null(pars)) colnames(d[[1]]) else pars
  bad <- setdiff(vars, colnames(d[[1]]))
  if (length(bad)) sb_abort("Unknown {.arg pars}: {.val {bad}}.", arg = "pars")
  cols <- c("steelblue", "forestgreen", "darkorange", "firebrick", "purple", "grey40")[seq_along(d)]
  op <- graphics::par(mfrow = c(ceiling(length(vars) / ncol), min(ncol, length(vars))), mar = c(3, 1, 2, 0.5),
                      mgp = c(1.8, 0.6, 0), oma = c(2, 0, 0, 0))
  on.exit(graphics::par(op), add = TRUE)
  for (v in vars) {
    parts <- lapply(d, function(m) {
      b <- m[, v]; nz <- b[b != 0]
      list(p0 = mean(b == 0), d = if (length(nz) > 10 && stats::sd(nz) > 0) stats::density(nz) else NULL,
           frac = length(nz) / length(b))
    })
    top <- max(unlist(lapply(parts, function(z) if (is.null(z$d)) 0 else max(z$d$y) * z$frac)), 1e-12)
    xr <- range(0, unlist(lapply(parts, function(z) if (is.null(z$d)) NULL else range(z$d$x))))
    graphics::plot(xr, c(0, top * 1.05), type = "n", xlab = "", ylab = "", main = v, yaxt = "n")
    for (k in seq_along(parts)) {
      z <- parts[[k]]
      if (!is.null(z$d)) graphics::lines(z$d$x, z$d$y * z$frac, col = cols[k], lwd = 2)
      if (z$p0 > 0) {  # the point mass at zero: a bar whose height is P(beta = 0) times the panel height
        at <- (k - (length(parts) + 1) / 2) * diff(xr) / 40
        graphics::segments(at, 0, at, top * 1.05 * z$p0, col = cols[k], lwd = 3, lend = 1)
      }
    }
    graphics::abline(v = 0, lty = 3, col = "grey60")
  }
  # legend below the panels, across the whole device
  graphics::par(fig = c(0, 1, 0, 1), oma = c(0, 0, 0, 0), mar = c(0, 0, 0, 0), new = TRUE)
  graphics::plot.new()
  graphics::legend("bottom", paste(names(d), "  "), col = cols, lwd = 2, bty = "n", cex = 0.8, horiz = TRUE,
                   xpd = NA)
  invisible(x)
}
