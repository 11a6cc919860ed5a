# A/B of two installed builds on the SGLD row of vignette("variational")'s comparison table: sgld_sa(sampler =
# "sgld") on 784-100-10, the first 5,000 Fashion-MNIST training images, 10 epochs, one thread, predictions on
# 4,000 images; each run in a fresh R process, builds interleaved; prints user and elapsed seconds.
#   Rscript bench/ab_vi_compare_sgld.R LIB_OLD LIB_NEW [rounds]
args <- commandArgs(trailingOnly = TRUE)
libs <- c(old = args[1], new = args[2]); reps <- if (length(args) >= 3) as.integer(args[3]) else 3L
code <- 'suppressMessages(library(scalebayes)); flat <- function(a) matrix(a, dim(a)[1]); fm <- fashion_mnist()
x <- flat(fm$x)[1:5000, ]; y <- fm$y[1:5000]; xt <- flat(fm$x_test)[1:4000, ]
t <- system.time(sgld_sa(x, y, model = nn_mlp(100), newx = xt, epochs = 10, batch_size = 100, threads = 1, seed = 1, quiet = TRUE, sampler = "sgld", iterations = NULL))
cat(t[["user.self"]], t[["elapsed"]], "\n")'
f <- tempfile(fileext = ".R"); writeLines(code, f)
res <- NULL
for (r in seq_len(reps)) for (k in names(libs)) {
  out <- system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE, env = paste0("R_LIBS=", libs[[k]]))
  v <- as.numeric(strsplit(out[length(out)], " ")[[1]])
  res <- rbind(res, data.frame(build = k, rep = r, user = v[1], elapsed = v[2]))
  print(res[nrow(res), ])
}
print(aggregate(cbind(user, elapsed) ~ build, res, median))
