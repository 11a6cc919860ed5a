# layer_conv1d() under the four network methods, every default, on sequences with a motif at a random place
# (the generator of tests/testthat/test-nn-conv1d.R): 400 training rows, 1,000 held out; a dense network of
# similar size for comparison. Prints held-out accuracy and the time of each whole call.
#   Rscript bench/conv1d_motif.R
suppressPackageStartupMessages(library(scalebayes))
source("tests/testthat/helper-sequences.R")  # motif_data(), the generator of the tests
d <- motif_data(400, seed = 1)
te <- motif_data(1000, seed = 2)
net <- nn_sequential(layer_reshape(c(1, 40)), layer_conv1d(4, 5), layer_relu(), layer_flatten(), layer_dense(8),
                     layer_relu())
runs <- list(
  "wbb_nn, conv1d" = function() wbb_nn(d$x, d$y, model = net, draws = 8, seed = 1, quiet = TRUE),
  "wbb_nn, nn_mlp(c(32, 8))" = function() wbb_nn(d$x, d$y, model = nn_mlp(c(32, 8)), draws = 8, seed = 1, quiet = TRUE),
  "sgld_sa, conv1d" = function() suppressWarnings(sgld_sa(d$x, d$y, model = net, seed = 1, quiet = TRUE)),
  "bbb, conv1d" = function() bbb(d$x, d$y, model = net, seed = 1, quiet = TRUE),
  "sparse_vi, conv1d" = function() sparse_vi(d$x, d$y, model = net, seed = 1, quiet = TRUE))
cat(sprintf("%s, %s\n", format(Sys.time(), "%Y-%m-%d"), R.version.string))
for (nm in names(runs)) {
  t <- system.time(f <- runs[[nm]]())[["elapsed"]]
  cat(sprintf("%-26s held-out accuracy %.3f  %6.1f s\n", nm, mean(predict(f, te$x, type = "class") == te$y), t))
}
