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

#' Figure 2 of the WBB paper: WBB versus exact posteriors under L1 and L0 priors (p = 2)
#'
#' Simulates n = 50 observations from \eqn{y = X\beta + \epsilon}, rows of X from
#' \eqn{N(0, [[1, .3], [.3, 1]])}, \eqn{\beta = (0, 2)}, \eqn{\sigma^2 = 1}, and draws: WBB (lasso penalty,
#' separate prior weights, lambda by 10-fold CV, [wbb()] without standardization so that the penalty is
#' the prior below), and exact posterior samples (known \eqn{\sigma^2 = 1}, no intercept) under
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
#' @param draws Draws per method.
#' @param slab_halfwidth L above.
#' @param kappa Multipliers of lambda for the L0 priors.
#' @param seed Seed (data, CV folds and all draws).
#' @return A list of class `sb_wbb_figure2`: `draws` (a named list of `draws x 2` matrices), `lambda`,
#'   `model_prob` (posterior model probabilities under each L0 prior), `data`; with a `plot()` method.
#' @export
#' @examples
#' \donttest{
#' f2 <- wbb_figure2(draws = 1000, seed = 1)
#' plot(f2)
#' }
wbb_figure2 <- function(draws = 4000L, slab_halfwidth = 10, kappa = c(1, 5), seed = 1) {
  draws <- check_count(draws)
  L <- check_number(slab_halfwidth, lower = 0, lower_open = TRUE)
  seed <- resolve_seed(seed)
  withr::local_seed(as.integer(seed %% .Machine$integer.max))
  n <- 50L
  S <- matrix(c(1, 0.3, 0.3, 1), 2)
  x <- matrix(stats::rnorm(n * 2), n) %*% chol(S)
  colnames(x) <- c("beta1", "beta2")
  beta <- c(0, 2)
  y <- drop(x %*% beta + stats::rnorm(n))
  fw <- wbb(x, y, prior_weights = "separate", draws = draws, seed = seed, quiet = TRUE,
            control = wbb_control(standardize = FALSE))
  lambda <- fw$lambda
  out <- list(WBB = fw$draws[, c("beta1", "beta2")])
  out[["L1 prior"]] <- l1_posterior_p2(x, y, lambda, draws)
  mp <- list()
  for (k in kappa) {
    r <- l0_posterior_p2(x, y, k * lambda, L, draws)
    nm <- if (k == 1) "L0 prior (lambda)" else sprintf("L0 prior (%g lambda)", k)
    out[[nm]] <- r$draws
    mp[[nm]] <- r$model_prob
  }
  structure(list(draws = out, lambda = lambda, model_prob = mp, data = list(x = x, y = y, beta = beta),
                 slab_halfwidth = L), class = "sb_wbb_figure2")
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
                   main = sprintf("beta%d (true %g)", j, x$data$beta[j]))
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
