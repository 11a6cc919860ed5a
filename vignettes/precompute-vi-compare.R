# Precomputes vignettes/results/vi-compare-results.rds for vignette("variational"): (1) one table of sparse_vi(), bbb(),
# sgld_sa() with each of its samplers and wbb_nn() on Fashion-MNIST with one MLP (the issue's table beyond the
# papers), and (2) the pruning table in the layout of the tutorial's Table 2 (Graves 2011) for bbb() and sparse
# variational dropout (bbb(prior = "log_uniform"), Molchanov et al. 2017) on 784-300-100-10.
#
# Metrics of the posterior predictive mean (average of the draws' class probabilities) on the Fashion-MNIST test
# images: accuracy, negative log-likelihood per image, expected calibration error (15 equal-width bins of the top
# probability, |accuracy - confidence| weighted by the bin's share), mean predictive entropy (nats) on the test
# images and on MNIST digits (out of distribution: a method that knows what it does not know is less sure
# there), and CPU and wall time of the fit (user and elapsed seconds, one thread).
#
# CPU scaling (defaults): SB_CMP_N = 5000 training images (the first of Fashion-MNIST's 60 000), the first
# SB_CMP_NTEST = 2000 test images, 2000 MNIST digits, SB_CMP_EPOCHS = 10 epochs of minibatches of 100 for every
# method, nn_mlp(SB_CMP_H = 100); wbb_nn() SB_CMP_WBB = 10 bootstrap fits (each SB_CMP_EPOCHS epochs). Pruning:
# SB_PR_EPOCHS = 10 epochs, SB_PR_RETRAIN = 3 retraining epochs, thresholds of |mu| / sigma 0 to 2 as Graves
# (errors without retraining for all, with retraining for SB_PR_RETRAIN_AT = "0.5,2"). Each unit is cached under
# SB_CMP_CACHE (default "precompute-cache/vi-compare"): an interrupted run resumes.
#
# Run from vignettes/:  nice -n 10 Rscript precompute-vi-compare.R
# SB_CMP_WHAT=compare or =pruning reruns one part and carries the other over from the stored results. The stored
# results: the comparison at the defaults above (2026-11-27, SB_CMP_WHAT=compare, about 10 CPU minutes); the
# pruning part (2026-11-24) on all the data,
#   SB_CMP_WHAT=pruning SB_CMP_N=60000 SB_CMP_NTEST=10000 nice -n 5 Rscript precompute-vi-compare.R
# (about 25 CPU minutes on a shared machine).
# Full size (all 60 000 training and 10 000 test images, 100 epochs, 100 bootstrap fits, retraining everywhere):
#   SB_CMP_N=60000 SB_CMP_NTEST=10000 SB_CMP_EPOCHS=100 SB_CMP_WBB=100 SB_PR_EPOCHS=100 SB_PR_RETRAIN=20 \
#   SB_PR_RETRAIN_AT=0.01,0.05,0.1,0.2,0.5,1,2 nice -n 10 Rscript precompute-vi-compare.R
library(scalebayes)
`%||%` <- function(a, b) if (is.null(a)) b else a
env_num <- function(name, default) as.numeric(strsplit(Sys.getenv(name, default), ",")[[1]])
N <- env_num("SB_CMP_N", "5000"); NTEST <- env_num("SB_CMP_NTEST", "2000")
EPOCHS <- env_num("SB_CMP_EPOCHS", "10"); H <- env_num("SB_CMP_H", "100"); WBB <- env_num("SB_CMP_WBB", "10")
PR_EPOCHS <- env_num("SB_PR_EPOCHS", "10"); PR_RETRAIN <- env_num("SB_PR_RETRAIN", "3")
PR_AT <- env_num("SB_PR_RETRAIN_AT", "0.5,2")
what <- Sys.getenv("SB_CMP_WHAT", "compare,pruning")
cache <- Sys.getenv("SB_CMP_CACHE", "precompute-cache/vi-compare")
dir.create(cache, recursive = TRUE, showWarnings = FALSE)
cached <- function(name, expr) {
  f <- file.path(cache, paste0(name, ".rds"))
  if (file.exists(f)) return(readRDS(f))
  v <- expr
  saveRDS(v, f)
  v
}
flat <- function(a) matrix(a, dim(a)[1])
ENGINE <- "e20261127"

fm <- fashion_mnist()
x <- flat(fm$x)[seq_len(N), ]; y <- fm$y[seq_len(N)]
xt <- flat(fm$x_test)[seq_len(NTEST), ]; yt <- fm$y_test[seq_len(NTEST)]
md <- mnist_digits()
xo <- flat(md$x)[seq_len(NTEST), ]
newx <- rbind(xt, xo)
it <- seq_len(NTEST); io <- NTEST + seq_len(NTEST)

# Posterior predictive probabilities (examples x 10) from a fit's stored draws on newx
probs <- function(fit) {
  p <- fit$pred
  if (length(dim(p)) == 3L) {
    ok <- if (!is.null(fit$status)) fit$status == "done" else rep(TRUE, dim(p)[1])
    return(apply(p[ok, , , drop = FALSE], c(2L, 3L), mean))
  }
  as.matrix(fit$pred_mean)
}
ece <- function(p, y, bins = 15) {
  conf <- apply(p, 1, max); hit <- (max.col(p, "first") - 1L) == (as.integer(y) - 1L)
  b <- cut(conf, seq(0, 1, length.out = bins + 1), include.lowest = TRUE)
  sum(tapply(seq_along(conf), b, function(i) length(i) * abs(mean(hit[i]) - mean(conf[i]))), na.rm = TRUE) / length(conf)
}
entropy <- function(p) mean(-rowSums(p * log(pmax(p, 1e-300))))
metrics <- function(fit, cpu, wall = NA_real_) {
  p <- probs(fit)
  pt <- p[it, , drop = FALSE]
  yi <- as.integer(yt)
  data.frame(accuracy = mean(max.col(pt, "first") == yi), nll = -mean(log(pmax(pt[cbind(seq_along(yi), yi)], 1e-300))),
             ece = ece(pt, yt), entropy_test = entropy(pt), entropy_ood = entropy(p[io, , drop = FALSE]),
             cpu = cpu, wall = wall, draws = dim(fit$pred)[1])
}
timed <- function(expr) {
  t0 <- proc.time()
  fit <- expr
  dt <- proc.time() - t0
  list(fit = fit, cpu = dt[["user.self"]], wall = dt[["elapsed"]])
}

out <- list(N = N, NTEST = NTEST, EPOCHS = EPOCHS, H = H, WBB = WBB, PR_EPOCHS = PR_EPOCHS, PR_RETRAIN = PR_RETRAIN)
# a part not rerun (SB_CMP_WHAT) is carried over from the stored results
old <- if (file.exists("results/vi-compare-results.rds")) readRDS("results/vi-compare-results.rds")
for (part in c("compare", "pruning")) if (!grepl(part, what) && !is.null(old)) out[[part]] <- old[[part]]
# each part's own settings (N, NTEST, ... at the top level are the comparison's)
if (!grepl("compare", what) && !is.null(old)) out[c("N", "NTEST", "EPOCHS", "H", "WBB")] <- old[c("N", "NTEST", "EPOCHS", "H", "WBB")]
out$pruning_settings <- if (grepl("pruning", what)) {
  list(N = N, NTEST = NTEST, PR_EPOCHS = PR_EPOCHS, PR_RETRAIN = PR_RETRAIN)
} else if (!is.null(old)) {
  old$pruning_settings %||% list(N = old$N, NTEST = old$NTEST, PR_EPOCHS = old$PR_EPOCHS, PR_RETRAIN = old$PR_RETRAIN)
}
if (grepl("compare", what)) {
  model <- nn_mlp(H)
  common <- list(x = x, y = y, model = model, newx = newx, epochs = EPOCHS, batch_size = 100, threads = 1,
                 seed = 1, quiet = TRUE)
  runs <- list(
    sparse_vi = function() do.call(sparse_vi, c(common, list(draws = 30))),
    bbb = function() do.call(bbb, c(common, list(draws = 30))),
    sgld = function() do.call(sgld_sa, c(common, list(sampler = "sgld", iterations = NULL))),
    sghmc = function() do.call(sgld_sa, c(common, list(sampler = "sghmc", iterations = NULL))),
    sgnht = function() do.call(sgld_sa, c(common, list(sampler = "sgnht", iterations = NULL))),
    # HAMCMC-SA: the default form for a network (diagonal) and the linear-cost form whose noise has exactly the
    # preconditioner's covariance (lowrank). (The stored results also hold a row of the transport form, run
    # before that form was removed: ?hamcmc_sa.)
    hamcmc_sa = function() do.call(sgld_sa, c(common, list(sampler = "hamcmc_sa", iterations = NULL,
                                                           control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "diagonal"))))),
    hamcmc_sa_lowrank = function() do.call(sgld_sa, c(common, list(sampler = "hamcmc_sa", iterations = NULL,
                                                                   control = sgmcmc_control(lbfgs = sgmcmc_lbfgs(sa_form = "lowrank"))))),
    # plain HAMCMC (Simsekli et al. 2016: L-BFGS over past draws, no SA of the preconditioner), with the
    # package's same-minibatch curvature pairs and two-sided damping (?hamcmc_sa)
    hamcmc = function() do.call(sgld_sa, c(common, list(sampler = "hamcmc", iterations = NULL))),
    wbb_nn = function() do.call(wbb_nn, c(common, list(draws = WBB)))
  )
  tab <- list()
  for (m in names(runs)) {
    # ENGINE: results of an older engine are not reused (HAMCMC's curvature pairs and damping changed 2026-11-27)
    r <- cached(sprintf("cmp_%s_N%d_E%d_H%d_%s", m, N, EPOCHS, H, ENGINE), {
      res <- tryCatch({
        tf <- timed(runs[[m]]())
        cbind(method = m, metrics(tf$fit, tf$cpu, tf$wall), error = NA_character_)
      }, error = function(e) data.frame(method = m, accuracy = NA, nll = NA, ece = NA, entropy_test = NA,
                                        entropy_ood = NA, cpu = NA, wall = NA, draws = NA, error = conditionMessage(e)))
      res
    })
    print(r)
    tab[[m]] <- r
  }
  out$compare <- do.call(rbind, tab)
  # if plain HAMCMC diverges at the default step size: where does it diverge at smaller ones?
  if (!is.na(out$compare$error[out$compare$method == "hamcmc"])) out$hamcmc_steps <- do.call(rbind, lapply(c(2e-5, 6e-6, 2e-6), function(ss) {
    msg <- tryCatch({
      suppressWarnings(do.call(sgld_sa, c(common, list(sampler = "hamcmc", iterations = NULL,
                                                      control = sgmcmc_control(step_size = ss)))))
      NA_character_
    }, error = function(e) conditionMessage(e))
    it <- suppressWarnings(as.integer(sub(".*at iteration ([0-9]+).*", "\\1", msg)))
    data.frame(step_size = ss, diverged_at = it, error = msg)
  }))
  if (!is.null(out$hamcmc_steps)) print(out$hamcmc_steps[, 1:2])
}

if (grepl("pruning", what)) {
  pmodel <- nn_mlp(c(300, 100))
  pr_common <- list(x = x, y = y, model = pmodel, newx = xt, newy = yt, epochs = PR_EPOCHS, batch_size = 100,
                    threads = 1, seed = 1, quiet = TRUE, draws = 10)
  dims <- list(c(300, 784), c(100, 300), c(10, 100))
  units <- function(kept) {  # a hidden unit is kept if any of its incoming weights is kept; inputs: any outgoing
    A <- lapply(seq_along(dims), function(l) matrix(kept[[l]], dims[[l]][1], dims[[l]][2], byrow = TRUE))
    c(inputs = sum(colSums(A[[1]]) > 0), h1 = sum(rowSums(A[[1]]) > 0), h2 = sum(rowSums(A[[2]]) > 0))
  }
  wgroups <- function(v) {
    g <- sub("\\[.*", "", v$parameter)
    split(seq_len(nrow(v)), factor(g, levels = unique(g)))[grepl("weight$", unique(g))]
  }
  # Test error of the network with mean weights mu * kept (biases at their means): an independent forward pass
  err_mean <- function(v, keep) {
    g <- sub("\\[.*", "", v$parameter)
    W <- function(l, b = FALSE) v$mu[g == sprintf("layer%d_linear.%s", 2 * l - 1, if (b) "bias" else "weight")] *
      (if (b) 1 else keep[g == sprintf("layer%d_linear.weight", 2 * l - 1)])
    h <- xt
    for (l in 1:3) {
      z <- h %*% t(matrix(W(l), dims[[l]][1], dims[[l]][2], byrow = TRUE)) + rep(W(l, TRUE), each = nrow(h))
      h <- if (l < 3) pmax(z, 0) else z
    }
    mean(max.col(h, "first") != as.integer(yt))
  }
  pruning <- list()
  for (pr in c("gaussian", "log_uniform")) {
    base <- cached(sprintf("prune_base_%s_N%d_E%d", pr, N, PR_EPOCHS), {
      tf <- timed(do.call(bbb, c(pr_common, list(prior = pr))))
      list(variational = tf$fit$variational, error = 1 - tf$fit$accuracy_mean, cpu = tf$cpu)
    })
    v <- base$variational
    isw <- grepl("weight", v$parameter)
    score <- if (pr == "gaussian") abs(v$mu) / v$sigma else log(v$sigma^2 / v$mu^2)  # SNR, or log alpha
    thr <- if (pr == "gaussian") c(0, 0.01, 0.05, 0.1, 0.2, 0.5, 1, 2) else c(Inf, 5, 3, 2, 1, 0)
    for (t in thr) {
      keep <- if (pr == "gaussian") score >= t else score <= t
      keep[!isw] <- TRUE
      row <- data.frame(prior = pr, threshold = t, weights = sum(isw), kept = sum(keep & isw),
                        percent = 100 * mean(keep[isw]), error_before = 100 * err_mean(v, rep(TRUE, nrow(v))),
                        error_pruned = 100 * err_mean(v, keep), error_retrained = NA_real_, retrain_epochs = 0,
                        error_pruned_engine = NA_real_,
                        units = paste(units(lapply(wgroups(v), function(i) keep[i])), collapse = "-"),
                        predictive_error = 100 * base$error)
      if (t %in% PR_AT && PR_RETRAIN > 0) {
        r <- cached(sprintf("prune_%s_%g_N%d_E%d_R%d", pr, t, N, PR_EPOCHS, PR_RETRAIN), {
          tf <- timed(do.call(bbb, c(pr_common, list(prior = pr, prune = t, retrain_epochs = PR_RETRAIN))))
          vv <- tf$fit$variational
          list(pruning = tf$fit$pruning, cpu = tf$cpu,
               units = paste(units(lapply(wgroups(vv), function(i) vv$kept[i])), collapse = "-"))
        })
        row$error_retrained <- 100 * r$pruning$error_retrained
        row$retrain_epochs <- PR_RETRAIN
        row$error_pruned_engine <- 100 * r$pruning$error_pruned
        row$kept_engine <- r$pruning$kept
        row$units_engine <- r$units
      }
      pruning[[length(pruning) + 1L]] <- row
      print(row)
    }
  }
  cols <- unique(unlist(lapply(pruning, names)))
  out$pruning <- do.call(rbind, lapply(pruning, function(r) { r[setdiff(cols, names(r))] <- NA; r[cols] }))
}
out$date <- Sys.time()
saveRDS(out, "results/vi-compare-results.rds")
