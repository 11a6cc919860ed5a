# The scale the SG-MCMC regression samplers work on (sgld_sa(standardize = TRUE), the default), and the way
# back to the user's scale.
#
# With standardization the engine sees x_s = (x - m_x) / s_x (columns centred when there is an intercept, and
# scaled to unit root mean square) and, for "gaussian", y_s = (y - m_y) / s_y. A coefficient vector b on that
# scale (intercept first) is beta = A b + a on the user's scale:
#   beta_j = s_y b_j / s_xj,   beta_0 = m_y + s_y b_0 - sum_j beta_j m_xj.
# The map is linear, so draws, posterior means and intervals map exactly; sigma maps to s_y sigma and the
# full-data Gaussian log-likelihood to loglik_s - N log(s_y) (the Jacobian of y -> y_s). A column with no spread
# keeps scale 1. Without an intercept nothing is centred (glmnet's convention) and y is scaled by its root mean
# square.

sgmcmc_scaling <- function(x, y, family, intercept) {
  p <- ncol(x)
  mx <- if (intercept) colMeans(x) else numeric(p)
  # column by column: no N x p temporary (sweep's were 2.4 s of a 1e6 x 20 call)
  sx <- vapply(seq_len(p), function(j) sqrt(mean((x[, j] - mx[j])^2)), numeric(1))
  sx[!(sx > 0) | !is.finite(sx)] <- 1
  if (family == "gaussian") {
    my <- if (intercept) mean(y) else 0
    sy <- sqrt(mean((y - my)^2))
    if (!(sy > 0) || !is.finite(sy)) sy <- 1
  } else {
    my <- 0
    sy <- 1
  }
  list(x_center = unname(mx), x_scale = unname(sx), y_center = my, y_scale = sy, intercept = intercept)
}

sgmcmc_apply_x <- function(x, sc) {
  if (is.null(sc)) return(x)
  out <- x
  attributes(out) <- attributes(x)[c("dim", "dimnames")]
  for (j in seq_len(ncol(out))) out[, j] <- (out[, j] - sc$x_center[j]) / sc$x_scale[j]  # one copy, in place
  out
}

sgmcmc_apply_y <- function(y, sc) if (is.null(sc)) y else (y - sc$y_center) / sc$y_scale

# Rows of b (draws x P, the sampler's scale, intercept first when sc$intercept) to the user's scale.
sgmcmc_to_user_scale <- function(b, sc) {
  if (is.null(sc)) return(b)
  b <- as.matrix(b)
  out <- b
  slopes <- seq_len(ncol(b)) > sc$intercept
  out[, slopes] <- sweep(b[, slopes, drop = FALSE], 2L, sc$y_scale / sc$x_scale, "*")
  if (sc$intercept) {
    out[, 1L] <- sc$y_center + sc$y_scale * b[, 1L] - drop(out[, slopes, drop = FALSE] %*% sc$x_center)
  }
  out
}

# The inverse map: user-scale rows to the sampler's scale.
sgmcmc_to_sampler_scale <- function(beta, sc) {
  if (is.null(sc)) return(beta)
  beta <- as.matrix(beta)
  out <- beta
  slopes <- seq_len(ncol(beta)) > sc$intercept
  out[, slopes] <- sweep(beta[, slopes, drop = FALSE], 2L, sc$x_scale / sc$y_scale, "*")
  if (sc$intercept) {
    out[, 1L] <- (beta[, 1L] - sc$y_center + drop(beta[, slopes, drop = FALSE] %*% sc$x_center)) / sc$y_scale
  }
  out
}

# What the score of the log posterior needs, on the sampler's scale: for "gaussian" the cross products of the
# design z = [1, x] (intercept first) with itself and y (exact, p x p); for "binomial" and "poisson" the data.
sgmcmc_score_data <- function(x, y, family, intercept, sparse) {
  z <- if (intercept) cbind(1, x) else x
  out <- list(family = family, intercept = intercept, sparse = c(if (intercept) FALSE, sparse))
  if (family == "gaussian") {
    out$ztz <- crossprod(z)
    out$zty <- drop(crossprod(z, y))
  } else {
    out$z <- z
    out$y <- y
  }
  out
}

# Gradient of the log posterior at the rows of b (the sampler's scale) with the latent variables `lat`
# (sigma, kappa0, kappa1 over all coefficients, NA where not sparse; lik_var: the likelihood's fixed variance,
# or 0): likelihood gradient (divided by sigma^2 or lik_var for "gaussian") plus the prior's (SSGL:
# -kappa0 sign(b) / sigma - kappa1 b / sigma^2; Gaussian N(0, prior_var) otherwise), as the engine's
# posterior_gradient() computes it on the full data.
sgmcmc_glm_score <- function(b, data, lat, prior_var) {
  b <- as.matrix(b)
  if (data$family == "gaussian") {
    v <- if (lat$lik_var > 0) lat$lik_var else lat$sigma^2
    g <- sweep(-b %*% data$ztz, 2L, data$zty, "+") / v
  } else {
    eta <- b %*% t(data$z)
    mean_fun <- sgmcmc_mean_fun(data$family)
    if (is.null(data$cv)) {
      g <- (rep(data$y, each = nrow(eta)) - mean_fun(eta)) %*% data$z
    } else {  # control variates on a subsample (R/sgmcmc_cv.R, sgmcmc_cv_score_data())
      d <- rep(data$y - data$cv$r_hat, each = nrow(eta)) - mean_fun(eta)
      g <- data$cv$scale * (d %*% data$z) + rep(data$cv$grad, each = nrow(eta))
    }
  }
  sp <- data$sparse
  if (any(sp)) {
    k0 <- lat$kappa0[sp]
    k1 <- lat$kappa1[sp]
    bs <- b[, sp, drop = FALSE]
    g[, sp] <- g[, sp, drop = FALSE] - sweep(sign(bs), 2L, k0 / lat$sigma, "*") - sweep(bs, 2L, k1 / lat$sigma^2, "*")
  }
  if (any(!sp)) g[, !sp] <- g[, !sp, drop = FALSE] - b[, !sp, drop = FALSE] / prior_var
  g
}
