# The methods matrix for network fits (the network half of test-methods-matrix.R): every generic on every
# network fit class, with and without kept draws. Each check compares with a computation from the kept draws or
# the engine's own outputs; a generic that cannot answer without kept draws must say so with a classed error.

skip_if_no_torch()

nnm <- local({
  set.seed(5)
  n <- 60
  x <- matrix(rnorm(n * 3), n, 3)
  yc <- factor(ifelse(x[, 1] - x[, 2] + rnorm(n, sd = 0.5) > 0, "u", "v"))
  yg <- x[, 1] + 0.5 * x[, 3] + rnorm(n, sd = 0.3)
  newx <- x[1:8, ]
  wk <- wbb_nn(x, yc, model = nn_mlp(4), draws = 5, epochs = 3, newx = newx, newy = yc[1:8], seed = 1, quiet = TRUE,
               threads = 1)
  wn <- wbb_nn(x, yc, model = nn_mlp(4), draws = 5, epochs = 3, newx = newx, newy = yc[1:8], seed = 1, quiet = TRUE,
               threads = 1, keep_draws = FALSE)
  sk <- sgld_sa_engine(x, yg, model = nn_mlp(4, batchnorm = TRUE), iterations = 60, burnin = 20, chains = 2, newx = newx,
                newy = yg[1:8], seed = 2, quiet = TRUE, threads = 1)
  sn <- sgld_sa_engine(x, yg, model = nn_mlp(4), iterations = 60, burnin = 20, chains = 2, newx = newx, newy = yg[1:8],
                seed = 2, quiet = TRUE, threads = 1, keep_draws = FALSE)
  # plain SGHMC without a sparse layer: the per-weight fields of the SSGL prior are empty
  s0 <- sgld_sa_engine(x, yg, model = nn_mlp(4), sampler = "sghmc", method = "none", sparse_layers = FALSE,
                iterations = 60, burnin = 20, newx = newx, newy = yg[1:8], seed = 2, quiet = TRUE, threads = 1)
  # HAMCMC-SA on a network: the diagonal form (its default there), same class as SGLD's fits
  hk <- hamcmc_sa_engine(x, yg, model = nn_mlp(4), iterations = 60, burnin = 20, chains = 2, newx = newx, newy = yg[1:8],
                  seed = 2, quiet = TRUE, threads = 1, control = sgmcmc_control(step_size = 1e-4))
  vk <- bbb(x, yc, model = nn_mlp(4), draws = 6, epochs = 3, newx = newx, newy = yc[1:8], seed = 3, quiet = TRUE,
           threads = 1)
  svk <- sparse_vi(x, yg, model = nn_mlp(4, batchnorm = TRUE), draws = 6, epochs = 3, newx = newx, newy = yg[1:8],
                   seed = 3, quiet = TRUE, threads = 1)
  # a multinomial network (three classes) and a gaussian bootstrap (no noise parameter: its posterior_predict() and
  # log_lik() use each draw's RMSE on the training data, fit$sigma)
  ym <- cut(x[, 1] + rnorm(n, sd = 0.3), c(-Inf, -0.5, 0.5, Inf), labels = c("lo", "mid", "hi"))
  vm <- bbb(x, ym, model = nn_mlp(4), draws = 6, epochs = 3, newx = newx, newy = ym[1:8], seed = 4, quiet = TRUE,
            threads = 1)
  wg <- wbb_nn(x, yg, model = nn_mlp(4), draws = 5, epochs = 3, newx = newx, newy = yg[1:8], seed = 5, quiet = TRUE,
               threads = 1)
  list(x = x, newx = newx,
       fits = list(wbb_kept = wk, wbb_none = wn, sgld_kept = sk, sgld_none = sn, sghmc_dense = s0, hamcmc_kept = hk,
                   bbb_kept = vk, sparse_vi_kept = svk, bbb_multinomial = vm, wbb_gaussian = wg),
       chains = c(wbb_kept = 1L, wbb_none = 1L, sgld_kept = 2L, sgld_none = 2L, sghmc_dense = 1L, hamcmc_kept = 2L,
                  bbb_kept = 1L, sparse_vi_kept = 1L, bbb_multinomial = 1L, wbb_gaussian = 1L))
})

kept <- function(f) !is.null(f[["weights"]])

nn_generics <- list(
  print = function(f, nm) {
    out <- utils::capture.output(r <- print(f))
    expect_identical(r, f)
    expect_match(out[1], class(f)[1], fixed = TRUE)
    expect_true(any(grepl(if (kept(f)) "^  kept: .* weights \\(float32" else "^  kept: no weights", out)))
  },
  summary = function(f, nm) {
    s <- summary(f)
    expect_s3_class(s, "summary_sb_nn_fit")
    if (kept(f)) {
      w <- as.matrix(f)
      expect_equal(sum(s$parameters$size), ncol(w))
      first <- seq_len(s$parameters$size[1])
      expect_equal(s$parameters$mean_abs[1], mean(abs(colMeans(w[, first, drop = FALSE]))))
    } else {
      expect_null(s$parameters)
    }
    m <- if (!is.null(f$accuracy)) f$accuracy else f$rmse
    if (!is.null(m)) expect_equal(unname(s$metric["mean"]), mean(m[f$status == "done"]))
  },
  plot = function(f, nm) {
    grDevices::pdf(NULL)
    on.exit(grDevices::dev.off())
    expect_identical(plot(f), f)
  },
  predict = function(f, nm) {
    if (kept(f)) {
      d <- predict(f, nnm$newx, draws = TRUE)
      expect_equal(dim(d)[1], nrow(as.matrix(f)))
      expect_identical(predict(f, nnm$newx, type = "draws"), d)  # the kept synonym of draws = TRUE
      # the kept draws reproduce the predictions the engine stored for the fit's newx (float32 weights are
      # stored exactly; batch-norm nets need the stored running statistics for this)
      expect_equal(d, f$pred, tolerance = 1e-6, ignore_attr = TRUE)
      # the one shape of every fit's predict(): a data frame of fit, se, lower, upper summarizing those draws,
      # one row per example (columns of examples x classes for a multinomial network), plus the class
      p <- predict(f, nnm$newx, prob = 0.5)
      expect_s3_class(p, "data.frame")
      expect_identical(nrow(p), nrow(nnm$newx))
      over <- if (length(dim(d)) == 3L) c(2L, 3L) else 2L
      expect_equal(p$fit, apply(d, over, mean), ignore_attr = TRUE)
      expect_equal(p$se, apply(d, over, sd), ignore_attr = TRUE)
      expect_equal(p$lower, apply(d, over, quantile, 0.25), ignore_attr = TRUE)
      expect_equal(p$upper, apply(d, over, quantile, 0.75), ignore_attr = TRUE)
      if (f$family == "gaussian") {
        expect_identical(names(p), c("fit", "se", "lower", "upper"))
      } else {
        expect_identical(names(p), c("fit", "se", "lower", "upper", "class"))
        expect_identical(p$class, predict(f, nnm$newx, type = "class"))
      }
      if (f$family == "multinomial") expect_identical(colnames(p$fit), f$levels)
      # the old names of the default: one release with a warning
      expect_warning(iv <- predict(f, nnm$newx, type = "interval", prob = 0.5), class = "scalebayes_warning_deprecated")
      expect_identical(iv, p)
    } else {
      expect_error(predict(f, nnm$newx), "keep_draws", class = "scalebayes_error_state")
      # at the fit's newx: its stored per-draw predictions, or (none stored) the posterior predictive mean alone
      p <- predict(f, prob = 0.5)
      if (is.null(f$pred)) {
        expect_equal(p$fit, f$pred_mean)
        expect_true(all(is.na(p$se)) && all(is.na(p$lower)) && all(is.na(p$upper)))
        expect_error(predict(f, draws = TRUE), "keep_draws", class = "scalebayes_error_state")
      } else {
        d <- predict(f, draws = TRUE)
        expect_equal(d, f$pred[f$status == "done", , drop = FALSE], ignore_attr = TRUE)
        expect_equal(p$fit, colMeans(d))
        expect_equal(p$lower, unname(apply(d, 2, quantile, 0.25)))
      }
    }
  },
  predict_one_row = function(f, nm) {
    if (!kept(f)) return(expect_error(predict(f, nnm$newx[1, ]), class = "scalebayes_error_state"))
    p1 <- predict(f, nnm$newx[1, ])  # one example as a vector of its features
    pn <- predict(f, nnm$newx)
    expect_identical(nrow(p1), 1L)
    expect_equal(p1, pn[1, , drop = FALSE], tolerance = 1e-6, ignore_attr = TRUE)
    expect_equal(predict(f, nnm$newx[1, , drop = FALSE]), p1)
    expect_equal(predict(f, newx = nnm$newx), pn)
  },
  predict_link_interval = function(f, nm) {
    if (!kept(f)) {
      if (!is.null(f$pred)) return(expect_s3_class(predict(f, interval = "prediction"), "data.frame"))
      return(expect_error(predict(f, interval = "prediction"), class = "scalebayes_error_state"))
    }
    d <- predict(f, nnm$newx, draws = TRUE)
    if (f$family == "multinomial") {
      expect_error(predict(f, nnm$newx, type = "link"), class = "scalebayes_error_not_applicable")
      return(expect_error(predict(f, nnm$newx, interval = "prediction"), class = "scalebayes_error_not_applicable"))
    }
    lk <- predict(f, nnm$newx, type = "link", draws = TRUE)
    expect_equal(lk, if (f$family == "binomial") qlogis(d) else d)
    expect_equal(predict(f, nnm$newx, type = "link")$fit, colMeans(lk))
    # prediction interval: the draws of posterior_predict() (R's RNG), summarized
    pp <- withr::with_seed(4, predict(f, nnm$newx, interval = "prediction", draws = TRUE))
    expect_identical(pp, withr::with_seed(4, posterior_predict(f, newdata = nnm$newx)))
    pi <- withr::with_seed(4, predict(f, nnm$newx, interval = "prediction", prob = 0.8))
    expect_equal(pi$lower, unname(apply(pp, 2, quantile, 0.1)))
    if (f$family == "gaussian") expect_error(predict(f, nnm$newx, type = "class"), class = "scalebayes_error_input")
    else expect_error(predict(f, nnm$newx, type = "class", draws = TRUE), class = "scalebayes_error_input")
  },
  coef = function(f, nm) {
    if (kept(f)) {
      expect_equal(coef(f), colMeans(as.matrix(f)))
      expect_identical(names(coef(f)), colnames(as.matrix(f)))
    } else if (!is.null(f$weights_mean)) {
      expect_equal(unname(coef(f)), f$weights_mean)  # the running mean over every kept iteration
      expect_length(coef(f), f$n_parameters)
    } else {
      expect_error(coef(f), "keep_draws", class = "scalebayes_error_state")
    }
  },
  as.matrix = function(f, nm) {
    if (kept(f)) {
      m <- as.matrix(f)
      expect_identical(dim(m), c(sum(f$status == "done"), as.integer(f$n_parameters)))
      expect_match(colnames(m)[1], "weight\\[1\\]$")
      expect_identical(as.matrix(f, pars = 2), m[, 2, drop = FALSE])
    } else if (!is.null(f$objective)) {
      m <- as.matrix(f)  # the per-draw test metric and training objective
      expect_identical(colnames(m), c("accuracy", "objective"))
      expect_equal(unname(m[, "accuracy"]), f$accuracy)
    } else {
      expect_error(as.matrix(f), "keep_draws", class = "scalebayes_error_state")
    }
  },
  as_draws_matrix = function(f, nm) {
    if (!kept(f) && is.null(f$objective)) return(expect_error(as_draws_matrix(f), class = "scalebayes_error_state"))
    m <- as_draws_matrix(f)
    d <- as.matrix(f)
    expect_s3_class(m, "draws_matrix")
    expect_equal(posterior::nchains(m), if (kept(f)) nnm$chains[[nm]] else 1)
    expect_identical(posterior::variables(m), colnames(d))
  },
  as_draws_df = function(f, nm) {
    if (!kept(f) && is.null(f$objective)) return(expect_error(as_draws_df(f), class = "scalebayes_error_state"))
    df <- as_draws_df(f)
    d <- as.matrix(f)
    expect_equal(posterior::ndraws(df), nrow(d))
    ch <- if (kept(f) && !is.null(f$chain)) f$chain else rep(1L, nrow(d))
    expect_equal(df$.chain, ch)
    expect_equal(df[[colnames(d)[1]]], unname(d[, 1]))
  },
  as_draws_array = function(f, nm) {
    if (!kept(f) && is.null(f$objective)) return(expect_error(as_draws_array(f), class = "scalebayes_error_state"))
    a <- as_draws_array(f)
    d <- as.matrix(f)
    k <- if (kept(f)) nnm$chains[[nm]] else 1L
    expect_identical(dim(a), c(nrow(d) %/% k, k, ncol(d)))
  },
  posterior_interval = function(f, nm) {
    if (!kept(f) && is.null(f$objective)) {
      return(expect_error(posterior_interval(f), class = "scalebayes_error_state"))
    }
    pi <- posterior_interval(f, prob = 0.8)
    d <- as.matrix(f)
    expect_identical(colnames(pi), c("10%", "90%"))
    expect_equal(unname(pi[, 2]), unname(apply(d, 2, quantile, 0.9)))
  },
  nobs = function(f, nm) expect_identical(as.integer(nobs(f)), nrow(nnm$x)),
  # every stored field reads through `$` (some are decoded or named on access)
  fields = function(f, nm) {
    for (field in names(f)) {
      v <- expect_no_error(do.call(`$`, list(f, field)))
      if (!is.null(names(v)) && is.atomic(v)) expect_length(names(v), length(v))
    }
    if (!is.null(f[["inclusion"]])) expect_true(all(f$inclusion >= 0 & f$inclusion <= 1))
  }
)

# ---- the model generics of issue 39 on network fits: at the training data the fit keeps (fit$data), or at
# `newdata` (and `newy`); each is checked against the kept draws' predictions (predict(type = "draws")).
nn_y <- function(f) if (f$family == "gaussian") f$newy else factor(f$levels[f$newy + 1L], levels = f$levels)
# the training responses in the generics' coding: numbers, 0/1 (the second level), 0-based classes
nn_train_y <- function(f) {
  y <- f$data$y
  if (f$family == "gaussian") as.double(y) else match(as.character(y), f$levels) - 1L
}
nn_sigma <- function(f, pd) {
  ok <- f$status == "done"
  if (inherits(f, "sb_sgld_sa_nn")) return(f$latent$sigma[match(f$chain[ok], f$latent$chain)])
  if (inherits(f, "sb_vi_nn")) return(rep(f$noise_sd[1], nrow(pd)))
  # WBB: each draw's root mean squared residual on the training data
  tr <- predict(f, nnm$x, draws = TRUE)
  sqrt(rowMeans((tr - rep(nn_train_y(f), each = nrow(tr)))^2))
}

nn_generics <- c(nn_generics, list(
  ndraws = function(f, nm) expect_identical(ndraws(f), sum(f$status == "done")),
  vcov = function(f, nm) {
    if (!kept(f)) return(expect_error(vcov(f), "keep_draws", class = "scalebayes_error_state"))
    expect_equal(vcov(f), cov(as.matrix(f)))
  },
  predict_draws_arg = function(f, nm) {
    if (!kept(f)) return(expect_error(predict(f, nnm$newx, draws = TRUE), class = "scalebayes_error_state"))
    expect_identical(predict(f, nnm$newx, draws = TRUE), predict(f, nnm$newx, type = "draws"))
    # one example
    one <- predict(f, nnm$newx[1, , drop = FALSE], type = "draws")
    all <- predict(f, nnm$newx, type = "draws")
    if (length(dim(all)) == 3L) expect_equal(one[, 1, ], all[, 1, ], tolerance = 1e-6) else expect_equal(drop(one), all[, 1], tolerance = 1e-6)
    new <- predict(f, nnm$newx, prob = 0.5)
    expect_warning(old <- predict(f, nnm$newx, level = 0.5), class = "scalebayes_warning_deprecated")
    expect_identical(old, new)
  },
  posterior_epred = function(f, nm) {
    expect_identical(f$data$x, nnm$x)  # the training inputs, kept
    if (!kept(f)) {
      expect_error(posterior_epred(f), "keep_draws", class = "scalebayes_error_state")
      return(expect_error(posterior_epred(f, newdata = nnm$newx), class = "scalebayes_error_state"))
    }
    expect_identical(posterior_epred(f, newdata = nnm$newx), predict(f, nnm$newx, type = "draws"))
    expect_identical(posterior_epred(f), predict(f, nnm$x, type = "draws"))  # the training data
    if (f$family == "multinomial") {
      expect_error(posterior_linpred(f), class = "scalebayes_error_not_applicable")
    } else {
      lp <- posterior_linpred(f)
      expect_equal(lp, if (f$family == "binomial") qlogis(posterior_epred(f)) else posterior_epred(f))
    }
    # without the data: a classed error that says to pass newdata
    g <- f
    g$data <- NULL
    expect_error(posterior_epred(g), "newdata", class = "scalebayes_error_not_applicable")
    expect_identical(posterior_epred(g, newdata = nnm$newx), posterior_epred(f, newdata = nnm$newx))
  },
  fitted_residuals = function(f, nm) {
    if (!kept(f)) {
      expect_error(fitted(f), "keep_draws", class = "scalebayes_error_state")
      return(expect_error(fitted(f, newdata = nnm$newx), class = "scalebayes_error_state"))
    }
    over <- if (f$family == "multinomial") c(2L, 3L) else 2L
    expect_equal(fitted(f), apply(predict(f, nnm$x, draws = TRUE), over, mean), ignore_attr = TRUE)
    expect_equal(fitted(f, newdata = nnm$newx), predict(f, nnm$newx)$fit, ignore_attr = TRUE)
    expect_equal(fitted(f, newx = nnm$newx), fitted(f, newdata = nnm$newx))
    if (f$family == "multinomial") {
      expect_error(residuals(f), class = "scalebayes_error_not_applicable")
      return(expect_error(residuals(f, newdata = nnm$newx, newy = nn_y(f)), class = "scalebayes_error_not_applicable"))
    }
    # response residuals (binomial: the 0/1 class minus its probability)
    expect_equal(residuals(f), nn_train_y(f) - unname(fitted(f)))
    expect_equal(residuals(f, newdata = nnm$newx, newy = nn_y(f)), f$newy - colMeans(predict(f, nnm$newx, type = "draws")))
  },
  log_lik = function(f, nm) {
    if (!kept(f)) {
      expect_error(log_lik(f), "keep_draws", class = "scalebayes_error_state")
      return(expect_error(log_lik(f, newdata = nnm$newx, newy = nn_y(f)), class = "scalebayes_error_state"))
    }
    # at the training data: the same as passing it
    ytr <- if (f$family == "gaussian") nn_train_y(f) else f$data$y
    expect_identical(log_lik(f), log_lik(f, newdata = nnm$x, newy = ytr))
    expect_identical(dim(log_lik(f)), c(ndraws(f), nrow(nnm$x)))
    ll <- log_lik(f, newdata = nnm$newx, newy = nn_y(f))
    pd <- predict(f, nnm$newx, type = "draws")
    expect_identical(dim(ll), c(dim(pd)[1], nrow(nnm$newx)))
    if (f$family == "multinomial") {
      for (i in seq_len(nrow(nnm$newx))) expect_equal(ll[, i], log(pd[, i, f$newy[i] + 1L]))
    } else if (f$family == "binomial") {
      expect_equal(ll, log(ifelse(rep(f$newy, each = nrow(pd)) == 1, pd, 1 - pd)), ignore_attr = TRUE, tolerance = 1e-6)
    } else {
      expect_equal(ll, dnorm(rep(f$newy, each = nrow(pd)), pd, nn_sigma(f, pd), log = TRUE), ignore_attr = TRUE)
    }
    expect_error(log_lik(f, newdata = nnm$newx), class = "scalebayes_error_input")  # newy is needed
    skip_if_not_installed("loo")
    expect_s3_class(suppressWarnings(loo::loo(ll)), "psis_loo")
  },
  posterior_predict = function(f, nm) {
    if (!kept(f)) return(expect_error(posterior_predict(f, newdata = nnm$newx), class = "scalebayes_error_state"))
    expect_identical(dim(posterior_predict(f, seed = 1)), c(ndraws(f), nrow(nnm$x)))  # the training data
    expect_identical(dim(predictive_interval(f)), c(nrow(nnm$x), 2L))
    if (f$family == "gaussian") {  # the draws' means plus noise of each draw's sd (seeded: exactly)
      mu <- predict(f, nnm$newx, draws = TRUE)
      z <- withr::with_seed(3, matrix(rnorm(length(mu)), nrow(mu)))
      expect_equal(posterior_predict(f, newdata = nnm$newx, seed = 3), mu + z * nn_sigma(f, mu), ignore_attr = TRUE)
    }
    pp <- posterior_predict(f, newdata = nnm$newx, seed = 3)
    expect_identical(dim(pp), c(ndraws(f), nrow(nnm$newx)))
    expect_identical(pp, posterior_predict(f, newdata = nnm$newx, seed = 3))
    if (f$family == "multinomial") expect_true(all(pp %in% seq_along(f$levels)))
    if (f$family == "binomial") expect_true(all(pp %in% 0:1))
    pi <- predictive_interval(f, newdata = nnm$newx, seed = 3, prob = 0.5)
    expect_equal(unname(pi[, 1]), unname(apply(pp, 2, quantile, 0.25)))
  },
  prior_summary = function(f, nm) expect_s3_class(prior_summary(f), "sb_prior_summary"),
  update = function(f, nm) {
    cl <- update(f, seed = 7, evaluate = FALSE)
    expect_true(is.call(cl))
    expect_identical(cl$seed, 7)
    if (startsWith(nm, "wbb")) expect_identical(cl[[1]], quote(wbb_nn))
  },
  dots = function(f, nm) {
    expect_error(log_lik(f, newdata = nnm$newx, bogus = 1), "bogus", class = "scalebayes_error_dots")
    expect_error(summary(f, bogus = 1), "bogus", class = "scalebayes_error_dots")
    expect_error(vcov(f, bogus = 1), "bogus", class = "scalebayes_error_dots")
  }
))

for (g in names(nn_generics)) {
  for (nm in names(nnm$fits)) {
    local({
      gen <- nn_generics[[g]]
      f <- nnm$fits[[nm]]
      name <- nm
      test_that(sprintf("network methods matrix: %s() on %s", g, nm), {
        gen(f, name)
      })
    })
  }
}

test_that("wbb(x, y, model = ) keeps the user's wbb() call, which update() reruns", {
  x <- nnm$x
  y <- x[, 1] + rnorm(nrow(x), sd = 0.1)
  f <- wbb(x, y, model = nn_mlp(2), draws = 2, epochs = 1, seed = 1, quiet = TRUE, threads = 1)
  expect_identical(f$call[[1]], quote(wbb))
  g <- update(f, draws = 3)
  expect_s3_class(g, "sb_wbb_nn")
  expect_identical(ndraws(g), 3L)
})

test_that("network fits are sb_fit objects of both classes, and survive saveRDS()", {
  classes <- vapply(nnm$fits, function(f) class(f)[1], "")
  expect_setequal(unique(classes), c("sb_wbb_nn", "sb_sgld_sa_nn", "sb_vi_nn"))
  for (f in nnm$fits) expect_true(inherits(f, "sb_nn_fit") && inherits(f, "sb_fit"))
  p <- tempfile(fileext = ".rds")
  saveRDS(nnm$fits$sgld_kept, p)
  back <- readRDS(p)
  expect_identical(predict(back, nnm$newx, type = "draws"), predict(nnm$fits$sgld_kept, nnm$newx, type = "draws"))
  expect_identical(coef(back), coef(nnm$fits$sgld_kept))
})

test_that("kept draws are stored as float32 without names, and decoded on access", {
  f <- nnm$fits$wbb_kept
  st <- f[["weights"]]
  expect_s3_class(st, "sb_nn_store")
  expect_type(st$raw, "raw")
  expect_length(st$raw, 4 * 5 * f$n_parameters)
  w <- f$weights
  expect_identical(dim(w), c(5L, as.integer(f$n_parameters)))
  # one block of P float32 values per draw (the engine's layout), shown as draws x parameters
  v <- readBin(st$raw, "double", n = length(st$raw) / 4, size = 4, endian = "little")
  expect_identical(w, t(matrix(v, f$n_parameters, 5, dimnames = list(colnames(w), NULL))))
  expect_identical(unname(w[2, ]), v[f$n_parameters + seq_len(f$n_parameters)])
  # float64 networks keep float64 draws, exactly
  f64 <- wbb_nn(nnm$x, as.double(nnm$x[, 1] > 0), model = nn_mlp(2), draws = 2, epochs = 1,
                seed = 1, quiet = TRUE, control = nn_control(float64 = TRUE))
  expect_null(f64[["weights"]]$raw)
})

test_that("predict() refuses unknown arguments and takes newdata as newx", {
  f <- nnm$fits$wbb_kept
  expect_error(predict(f, nnm$newx, levle = 0.9), "levle", class = "scalebayes_error_input")
  expect_identical(predict(f, newdata = nnm$newx), predict(f, nnm$newx))
  expect_error(predict(f, newx = nnm$newx, newdata = nnm$newx), "not both", class = "scalebayes_error_input")
  expect_warning(p <- predict(f, nnm$newx, type = "prob"), class = "scalebayes_warning_deprecated")
  expect_identical(p, predict(f, nnm$newx))
  expect_identical(levels(predict(f, nnm$newx, type = "class")), c("u", "v"))
  expect_error(predict(nnm$fits$sgld_kept, nnm$newx, type = "class"), class = "scalebayes_error_input")
})
