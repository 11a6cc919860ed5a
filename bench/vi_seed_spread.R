# Seed-to-seed spread of the sparse_vi() row of vignette("variational")'s comparison table (section 4): the
# same fit (784-100-10 MLP, the first 5,000 Fashion-MNIST training images, 10 epochs of minibatches of 100, the
# first 2,000 test images, 30 draws; vignettes/precompute-vi-compare.R) for seeds 1-5. Run it once with the
# current build and once with a build from before q's quantities were held as one flat vector, to see whether
# the row's change after that engine change is more than a change of seed:
#   R_LIBS=<library> Rscript bench/vi_seed_spread.R [seeds = 5]
suppressMessages(library(scalebayes))
args <- commandArgs(trailingOnly = TRUE)
S <- if (length(args)) as.integer(args[1]) else 5L
flat <- function(a) matrix(a, dim(a)[1])
fm <- fashion_mnist()
x <- flat(fm$x)[1:5000, ]; y <- fm$y[1:5000]
xt <- flat(fm$x_test)[1:2000, ]; yt <- fm$y_test[1:2000]
res <- t(sapply(seq_len(S), function(s) {
  f <- sparse_vi(x, y, model = nn_mlp(100), newx = xt, epochs = 10, batch_size = 100, threads = 1, seed = s,
                 quiet = TRUE, draws = 30)
  c(seed = s, accuracy = mean(max.col(as.matrix(f$pred_mean), "first") == as.integer(yt)))
}))
print(res)
cat(sprintf("scalebayes %s: accuracy mean %.4f, sd %.4f over %d seeds\n", packageVersion("scalebayes"),
            mean(res[, 2]), stats::sd(res[, 2]), S))
