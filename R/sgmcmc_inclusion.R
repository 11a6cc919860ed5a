# Inclusion probabilities of a regression's SSGL prior for chains with held latent variables, and the warm-up's
# check of which side of the spike each coefficient's chains sample (R/sgld_sa.R; inst/design-sgmcmc.md,
# "Selection by default", rule 4). A gaussian regression: the indicators' posterior in closed form
# (ssgl_model_inclusion(): enumeration or a collapsed Gibbs sampler), the chains holding its median-probability
# model; a GLM: one-flip probabilities at the held model (ssgl_slab_prob()), one move at a time.
#
# Given the latent variables held after the warm-up (sigma, delta), the prior of a sparse coefficient with its
# indicator gamma_j summed out is the mixture delta N(0, sigma^2 v1) + (1 - delta) Laplace(0, sigma v0). Where
# the log-likelihood along beta_j is the quadratic -(a / 2) (beta_j - m)^2 (gaussian: exactly; a GLM: to second
# order), the indicator's probability has a closed form,
#   P(gamma_j = 1 | ...) = delta Z1 / (delta Z1 + (1 - delta) Z0),
#   Z1 = int N(b; 0, sigma^2 v1) exp(-a (b - m)^2 / 2) db   (a normal density of m),
#   Z0 = int Laplace(b; sigma v0) exp(-a (b - m)^2 / 2) db  (the Laplace-Gaussian convolution, two normal cdfs).
# The chains do not give it by visiting both sides: beta_j's marginal has a mode near 0 (in the spike, a
# posterior sd / 5 wide) and one near the slab's conditional mean, and a Langevin chain stays at one. With the
# indicator's probability from the draw's own beta_j (the SA's rho~, which `fit$inclusion` reported before), a
# coefficient whose chains sit in the spike reads 0 whatever its evidence: n = 100, p = 1,000 (Table 1's design,
# signals 3, 2, 1, 2, 3), signal 3 (t = 4.9) read 0.00 against 0.88 for the exact posterior of the point-mass
# spike given the other four (bench/sgmcmc_defaults.R selection_pn), and its chains stayed in the spike.

# log of Z1 / Z0 for coordinates with curvature a, conditional mode m, slab variance s1sq, spike scale b.
ssgl_log_bf <- function(m, a, s1sq, b) {
  ssq <- 1 / a
  s <- sqrt(ssq)
  c0 <- ssq / b
  t1 <- -m / b + stats::pnorm((m - c0) / s, log.p = TRUE)
  t2 <- m / b + stats::pnorm((-m - c0) / s, log.p = TRUE)
  hi <- pmax(t1, t2)
  log_z0 <- -log(2 * b) + ssq / (2 * b^2) + hi + log(exp(t1 - hi) + exp(t2 - hi))
  log_z1 <- stats::dnorm(m, 0, sqrt(s1sq + ssq), log = TRUE)
  log_z1 - log_z0
}

ssgl_prob <- function(m, a, slab_var, b, delta) {
  out <- stats::plogis(log(delta) - log1p(-delta) + ssgl_log_bf(m, a, slab_var, b))
  dim(out) <- dim(m)
  out
}

delta_clamp <- function(d) min(max(d, 1e-12), 1 - 1e-12)

# The probability of each sparse coefficient's slab given the model the chains hold: a vector over the sparse
# coefficients. S (logical over the coefficients, the intercept first when there is one) is the held model: the
# non-sparse coefficients and the sparse ones with rho > 1/2. The spike is taken in its point-mass limit (the
# default spike is a fifth of a coefficient's posterior sd wide), so this is the conditional probability of
# gamma_j given the other indicators at S (and delta): for a coefficient outside S, S against S plus j; for one
# inside, S less j against S. Both sides integrate the slab coefficients out with their Gaussian priors; a
# gaussian regression with sigma free also integrates sigma (p(sigma^2) proportional to 1 / sigma^2) and the
# intercept (flat), in closed form from the Gram matrix (`data$yty` the response's sum of squares, `data$n` its
# rows); with a fixed likelihood sd (lik_var > 0) or a GLM (sigma held, its log-likelihood to second order at
# `state`, a coefficient vector whose spike entries are taken as 0) the coefficient's quadratic gives the
# Laplace-spike form (ssgl_log_bf()). The spike's coefficients themselves are left out: in a p > n regression
# their draws together fit part of the response (n = 100, p = 1,000: the 995 spike coefficients' linear
# predictor had sd 0.22 against sigma 0.24), and given them signal 3's probability was 0.003; with sigma held at
# the lasso's residual sd (the p >= n default) 0.50; with sigma integrated 0.90, the point-mass posterior given
# the other four (bench/sgmcmc_defaults.R selection_pn, the "exact" line) 0.88.
ssgl_slab_prob <- function(state, data, S, sigma, delta, v0, v1, lik_var = 0, prior_var = 1e4) {
  sp <- data$sparse
  if (data$family == "gaussian" && lik_var == 0) return(ssgl_slab_prob_conjugate(data, S, delta, v1)[sp])
  state <- replace(state, sp & !S, 0)
  B <- matrix(state, 1L)
  slab_var <- sigma^2 * v1
  if (data$family == "gaussian") {
    info_S <- data$ztz[, S, drop = FALSE] / lik_var
    info_d <- diag(data$ztz) / lik_var
    g <- (data$zty - drop(data$ztz %*% state)) / lik_var
  } else {
    q <- glm_info_pass(state, data, S)
    info_S <- q$info_S
    info_d <- q$info_d
    g <- drop(glm_grad_pass(B, data))
  }
  P <- length(sp)
  prec <- ifelse(sp, 1 / slab_var, 1 / prior_var)
  Hinv <- chol2inv(chol(info_S[S, , drop = FALSE] + diag(prec[S], sum(S))))
  step <- drop(Hinv %*% (g[S] - prec[S] * state[S]))  # the Newton step of S's block
  m <- a <- rep(NA_real_, P)
  out_S <- which(!S & sp)
  if (length(out_S)) {
    IjS <- info_S[out_S, , drop = FALSE]
    a[out_S] <- info_d[out_S] - rowSums((IjS %*% Hinv) * IjS)
    m[out_S] <- (g[out_S] - drop(IjS %*% step)) / pmax(a[out_S], 1e-300)
  }
  in_S <- which(S & sp)
  if (length(in_S)) {
    k <- match(in_S, which(S))
    a_tot <- 1 / diag(Hinv)[k]
    a[in_S] <- a_tot - prec[in_S]
    m[in_S] <- (state[in_S] + step[k]) * a_tot / pmax(a[in_S], 1e-300)  # S's mode, less the slab's shrinkage
  }
  ssgl_prob(m[sp], pmax(a[sp], 1e-300), slab_var, sigma * v0, delta)
}

# The gaussian regression's one-flip probabilities with sigma and the intercept integrated out (a vector over
# all coefficients, NA where not sparse): with A = X_S'X_S + I / v1 (centred), b = A^-1 X_S'y and RSS = y'y -
# b'X_S'y, adding j changes log p(y | S) by -log(a_j v1) / 2 - (n1 / 2) log(1 - u_j^2 / (a_j RSS)), a_j and u_j
# the Schur complements of j's row (n1 = n - 1 with an intercept, else n).
ssgl_slab_prob_conjugate <- function(data, S, delta, v1) {
  gm <- ssgl_gram(data)
  keep <- if (data$intercept) -1L else seq_along(S)
  Gx <- gm$G
  xy <- gm$xy
  sp <- gm$sparse
  Sx <- S[keep]
  A <- Gx[Sx, Sx, drop = FALSE] + diag(1 / v1, sum(Sx))
  Ainv <- if (any(Sx)) chol2inv(chol(A)) else matrix(0, 0, 0)
  b <- drop(Ainv %*% xy[Sx])
  rss <- gm$yty - sum(b * xy[Sx])
  a <- u <- rep(NA_real_, length(sp))
  out_S <- which(!Sx & sp)
  if (length(out_S)) {
    K <- Gx[out_S, Sx, drop = FALSE]
    a[out_S] <- diag(Gx)[out_S] + 1 / v1 - rowSums((K %*% Ainv) * K)
    u[out_S] <- xy[out_S] - drop(K %*% b)
  }
  in_S <- which(Sx & sp)
  if (length(in_S)) {
    k <- match(in_S, which(Sx))
    a[in_S] <- 1 / diag(Ainv)[k]
    u[in_S] <- b[k] * a[in_S]
  }
  a <- pmax(a, 1e-300)
  rss_in <- ifelse(Sx, rss, rss - u^2 / a)   # the residual sum of squares with j in the model
  rss_out <- ifelse(Sx, rss + u^2 / a, rss)  # and without
  lbf <- -0.5 * log(a * v1) - gm$n1 / 2 * (log(pmax(rss_in, 1e-300)) - log(pmax(rss_out, 1e-300)))
  out <- rep(NA_real_, length(S))
  out[keep] <- ifelse(sp, stats::plogis(log(delta) - log1p(-delta) + lbf), NA_real_)
  out
}

# The gaussian model S's residual scale, sqrt(RSS / n1) in the notation above (the sigma the chains hold after
# the warm-up's moves).
ssgl_model_sigma <- function(data, S, v1) {
  gm <- ssgl_gram(data)
  if (data$intercept) S <- S[-1L]
  if (!any(S)) return(sqrt(gm$yty / gm$n1))
  A <- gm$G[S, S, drop = FALSE] + diag(1 / v1, sum(S))
  b <- solve(A, gm$xy[S])
  sqrt(max(gm$yty - sum(b * gm$xy[S]), 1e-300) / gm$n1)
}

# The centred Gram form of a gaussian regression's data (the flat intercept integrated out): Gx, xy over the
# coefficients but the intercept, the centred y'y, n1 and which of them are sparse.
ssgl_gram <- function(data) {
  G <- data$ztz
  zy <- data$zty
  yty <- data$yty
  n <- data$n
  if (data$intercept) {
    g0 <- G[1L, ]
    G <- (G - outer(g0, g0) / n)[-1L, -1L, drop = FALSE]
    zy <- (zy - g0 * zy[1L] / n)[-1L]
    yty <- yty - data$zty[1L]^2 / n
    sp <- data$sparse[-1L]
  } else sp <- data$sparse
  list(G = G, xy = zy, yty = yty, n1 = if (data$intercept) n - 1 else n, sparse = sp)
}

# Posterior inclusion probabilities of a gaussian regression's sparse coefficients with the spike in its
# point-mass limit, sigma, the intercept and the slab coefficients integrated out, and delta held: exact, by
# enumerating the 2^k models, for k <= max_enum sparse coefficients; else a collapsed Gibbs sampler over the
# indicators (each gamma_j from its one-flip conditional, Rao-Blackwellized: the conditionals averaged) from the
# model S0 (logical over the coefficients but the intercept), `sweeps` sweeps after `burn`, its random numbers
# from `seed` (R's generator restored). A vector over the sparse coefficients. Why the full posterior and not the
# one-flip conditional at the held model: diabetes' sex and hdl enter together (each one-flip 0.05 and 0.30 at
# the model bmi, map, ltg; exact 0.59 and 0.58).
ssgl_model_inclusion <- function(gram, S0, delta, v1, seed = 1L, max_enum = 12L, sweeps = NULL, burn = 5L) {
  G <- gram$G
  xy <- gram$xy
  sp <- gram$sparse
  fixed <- !sp  # non-sparse slopes: always in, with the slab's precision (their prior is wider; a constant)
  n1 <- gram$n1
  log_odds <- log(delta) - log1p(-delta)
  log_ml <- function(S) {
    if (!any(S)) return(-n1 / 2 * log(gram$yty))
    A <- G[S, S, drop = FALSE] + diag(1 / v1, sum(S))
    R <- chol(A)
    b <- backsolve(R, forwardsolve(t(R), xy[S]))
    -sum(log(diag(R))) - sum(S) / 2 * log(v1) - n1 / 2 * log(max(gram$yty - sum(b * xy[S]), 1e-300))
  }
  k <- sum(sp)
  idx <- which(sp)
  if (k <= max_enum) {
    M <- as.matrix(expand.grid(rep(list(c(FALSE, TRUE)), k)))
    lp <- apply(M, 1L, function(g) {
      S <- fixed
      S[idx] <- g
      log_ml(S) + sum(g) * log_odds
    })
    w <- exp(lp - max(lp))
    return(drop(crossprod(M, w)) / sum(w))
  }
  sweeps <- sweeps %||% max(20L, min(200L, as.integer(5e4 %/% k)))
  S <- S0 | fixed
  state <- function(S) {
    if (!any(S)) return(list(Ainv = matrix(0, 0, 0), b = numeric(), rss = gram$yty))
    Ainv <- chol2inv(chol(G[S, S, drop = FALSE] + diag(1 / v1, sum(S))))
    b <- drop(Ainv %*% xy[S])
    list(Ainv = Ainv, b = b, rss = gram$yty - sum(b * xy[S]))
  }
  st <- state(S)
  acc <- numeric(k)
  sb_with_seed(as.integer(seed %% .Machine$integer.max), {
    for (sw in seq_len(burn + sweeps)) {
      for (i in seq_len(k)) {
        j <- idx[i]
        inS <- which(S)
        if (S[j]) {
          kk <- match(j, inS)
          a <- 1 / st$Ainv[kk, kk]
          u <- st$b[kk] * a
          rss_in <- st$rss
          rss_out <- st$rss + u^2 / a
        } else {
          K <- G[j, inS]
          a <- G[j, j] + 1 / v1 - (if (length(inS)) sum((K %*% st$Ainv) * K) else 0)
          u <- xy[j] - (if (length(inS)) sum(K * st$b) else 0)
          rss_in <- st$rss - u^2 / a
          rss_out <- st$rss
        }
        lbf <- -0.5 * log(max(a, 1e-300) * v1) - n1 / 2 * (log(max(rss_in, 1e-300)) - log(max(rss_out, 1e-300)))
        pj <- stats::plogis(log_odds + lbf)
        if (sw > burn) acc[i] <- acc[i] + pj
        new <- stats::runif(1L) < pj
        if (new != S[j]) {
          S[j] <- new
          st <- state(S)
        }
      }
    }
  })
  acc / sweeps
}

# fit$inclusion of chains with held latents: ssgl_slab_prob() at each chain's held model and posterior mean
# (engine scale), weighted as the posterior means are. NULL where it does not apply (a held model of more than
# max_model coefficients).
sgmcmc_rb_inclusion <- function(chain_fits, wts, data, v0, v1, lik_var, prior_var, seed = 1L, max_model = 500L) {
  P <- length(data$sparse)
  conj <- data$family == "gaussian" && lik_var == 0
  gram <- if (conj) ssgl_gram(data)
  cache <- list()
  parts <- Map(function(ch, w) {
    rho <- ch$rho_mean %||% ch$rho
    if (length(rho) != P || length(ch$post_mean) != P || !is.finite(ch$sigma) || !is.finite(ch$delta)) return(NULL)
    S <- !data$sparse | (is.finite(rho) & rho > 0.5)
    if (sum(S) > max_model) return(NULL)
    if (!conj) return(ssgl_slab_prob(ch$post_mean, data, S, ch$sigma, ch$delta, v0, v1, lik_var, prior_var) * w)
    # a gaussian regression: the full posterior of the indicators (the chains hold one model and delta: once)
    key <- paste(ch$delta, paste(which(S), collapse = ","))
    if (is.null(cache[[key]])) {
      cache[[key]] <<- ssgl_model_inclusion(gram, if (data$intercept) S[-1L] else S, ch$delta, v1, seed = seed)
    }
    cache[[key]] * w
  }, chain_fits, wts)
  if (!length(parts) || any(vapply(parts, is.null, logical(1)))) return(NULL)
  Reduce(`+`, parts)
}

# The warm-up's check of the side of the spike (chains with held latents). The SA pilots settle each
# coefficient on one side of the spike from the sparse start, and a coefficient whose evidence is a little below
# the point where the spike's mode disappears (|z| about 5 with the default v0) stays in the spike even where its
# posterior inclusion is near 1 (signal 3 above). At the mean of the chains' starts (P x chains)
# ssgl_slab_prob() is computed for every sparse coefficient; where it is on the other side of 1/2 from the held
# rho, the coefficient changes side -- the one most at odds first, then the others re-evaluated, at most
# `max_moves` times. Into the slab: the model's coefficients move by the Newton step to its new mode (exact for
# a gaussian regression) and rho to P(gamma = 1 | beta) there (eq. 12); into the spike: the coefficient to 0,
# the rest likewise; delta moves with the sum of rho as eq. (15) has it. Every chain's start moves by the same
# shift, which keeps the starts' spread. Returns the starts, the latents and the moves made (a data frame:
# coefficient, to, the slab probability that moved it, the new rho).
sgmcmc_spike_side <- function(starts, latent, data, v0, v1, lik_var, prior_var, a_prior, b_prior,
                              seed = 1L, max_moves = 25L, max_model = 500L) {
  sp <- data$sparse
  rho <- latent$rho
  none <- list(starts = starts, latent = latent, moves = NULL)
  if (!any(sp) || is.null(rho) || length(rho) != nrow(starts) || !is.finite(latent$sigma) ||
      !is.finite(latent$delta) || !all(is.finite(starts))) return(none)
  sigma <- latent$sigma
  slab_var <- sigma^2 * v1
  b <- sigma * v0
  p_star <- function(beta, delta) {  # P(gamma = 1 | beta, sigma, delta): the SA's rho~, eq. (12)
    l1 <- stats::dnorm(beta, 0, sqrt(slab_var), log = TRUE)
    l0 <- -log(2 * b) - abs(beta) / b
    stats::plogis(log(delta) - log1p(-delta) + l1 - l0)
  }
  S <- !sp | (is.finite(rho) & rho > 0.5)
  state <- rowMeans(starts)
  state0 <- state
  denom <- a_prior + b_prior + sum(sp) - 2
  prec <- ifelse(sp, 1 / slab_var, 1 / prior_var)
  newton <- function(state, S) {  # the mode of S's block given the rest (one Newton step: exact if gaussian)
    if (data$family == "gaussian") {
      v <- if (lik_var > 0) lik_var else sigma^2
      g <- (data$zty - drop(data$ztz %*% state)) / v
      H <- data$ztz[S, S, drop = FALSE] / v
    } else {
      g <- drop(glm_grad_pass(matrix(state, 1L), data))
      H <- glm_info_pass(state, data, S)$info_S[S, , drop = FALSE]
    }
    H <- H + diag(prec[S], sum(S))
    state[S] <- state[S] + drop(solve(H, g[S] - prec[S] * state[S]))
    state
  }
  moves <- NULL
  sp_idx <- which(sp)
  if (data$family == "gaussian" && lik_var == 0 && sum(S) <= max_model) {
    # a gaussian regression: the median-probability model of the indicators' full posterior
    # (ssgl_model_inclusion()), all moves at once
    pi <- ssgl_model_inclusion(ssgl_gram(data), if (data$intercept) S[-1L] else S, latent$delta, v1, seed = seed)
    odd <- which((pi > 0.5) != S[sp])
    if (length(odd)) {
      j <- sp_idx[odd]
      to_slab <- !S[j]
      S[j] <- to_slab
      state[j[!to_slab]] <- 0
      state <- tryCatch(newton(state, S), error = function(e) NULL)
      if (is.null(state) || !all(is.finite(state))) return(none)
      new_rho <- p_star(state[j], latent$delta)
      latent$delta <- delta_clamp(latent$delta + sum(new_rho - rho[j]) / denom)
      rho[j] <- new_rho
      moves <- data.frame(coefficient = j, to = ifelse(to_slab, "slab", "spike"), slab_probability = unname(pi[odd]),
                          rho = unname(new_rho), row.names = NULL)
    }
    max_moves <- 0L
  }
  for (k in seq_len(max_moves)) {
    if (sum(S) > max_model) break
    cp <- ssgl_slab_prob(state, data, S, sigma, latent$delta, v0, v1, lik_var, prior_var)
    inside <- S[sp]
    odd <- which((cp > 0.5 & !inside) | (cp < 0.5 & inside))
    if (!length(odd)) break
    i <- odd[which.max(abs(cp[odd] - 0.5))]
    j <- sp_idx[i]
    to_slab <- !inside[i]
    S[j] <- to_slab
    if (!to_slab) state[j] <- 0
    state <- tryCatch(newton(state, S), error = function(e) NULL)
    if (is.null(state) || !all(is.finite(state))) return(none)
    new_rho <- p_star(state[j], latent$delta)
    latent$delta <- delta_clamp(latent$delta + (new_rho - rho[j]) / denom)
    rho[j] <- new_rho
    moves <- rbind(moves, data.frame(coefficient = j, to = if (to_slab) "slab" else "spike",
                                     slab_probability = cp[i], rho = new_rho))
  }
  if (is.null(moves)) return(none)
  # a gaussian regression's sigma, integrated out above, held at the new model's residual scale
  if (data$family == "gaussian" && lik_var == 0) latent$sigma <- ssgl_model_sigma(data, S, v1)
  starts <- starts + (state - state0)
  starts[moves$coefficient[moves$to == "spike" & !S[moves$coefficient]], ] <- 0
  latent$rho <- rho
  list(starts = starts, latent = latent, moves = moves)
}

# A GLM's log-likelihood gradient at the rows of B (draws x coefficients), in passes over at most 50,000 rows:
# `data` holds the design with its intercept column (z) or, for many rows, the predictors (x) with an intercept
# flag, and y.
glm_grad_pass <- function(B, data) {
  N <- length(data$y)
  mean_fun <- sgmcmc_mean_fun(data$family)
  g <- matrix(0, nrow(B), ncol(B))
  for (r in glm_row_blocks(N)) {
    z <- glm_rows(data, r)
    g <- g + (rep(data$y[r], each = nrow(B)) - mean_fun(B %*% t(z))) %*% z
  }
  g
}

# A GLM's information at one state: Z' W Z's columns of S (P x |S|) and its diagonal.
glm_info_pass <- function(state, data, S) {
  mean_fun <- sgmcmc_mean_fun(data$family)
  info_S <- matrix(0, length(state), sum(S))
  info_d <- numeric(length(state))
  for (r in glm_row_blocks(length(data$y))) {
    z <- glm_rows(data, r)
    mu <- mean_fun(drop(z %*% state))
    w <- if (data$family == "binomial") mu * (1 - mu) else mu
    info_S <- info_S + crossprod(z, w * z[, S, drop = FALSE])
    info_d <- info_d + drop(crossprod(w, z^2))
  }
  list(info_S = info_S, info_d = info_d)
}

glm_row_blocks <- function(N, size = 50000L) {
  starts <- seq(1L, N, by = size)
  lapply(starts, function(s) s:min(N, s + size - 1L))
}

glm_rows <- function(data, r) {
  if (!is.null(data$z)) return(data$z[r, , drop = FALSE])
  if (data$intercept) cbind(1, data$x[r, , drop = FALSE]) else data$x[r, , drop = FALSE]
}
