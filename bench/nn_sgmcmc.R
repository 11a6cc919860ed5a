# SG-MCMC of a network against PyTorch (Debian python3-torch, the same LibTorch version): the SGHMC-SA sampler of
# Table 2 of Deng, Zhang, Liang & Lin (2019) on the 2-Conv-2-FC CNN (same padding, 681,506 parameters), SSGL
# prior on the first FC layer, batch 1000, lr 5e-7, tau 1000, v0 = 1, v1 = 0.1, nu = lambda = 1000, on the
# 10,000 Fashion-MNIST test images, one intra-op thread each. PyTorch runs the same sampler written in Python
# (bench/nn_sgmcmc_torch.py). Times are whole calls: scalebayes from the R call (data conversion, network,
# sampling, the posterior-mean bookkeeping); PyTorch from its arrays in memory.
# (The regression Table 1 run through the same chain driver is timed by bench/sgld_sa.R.)
# Run: Rscript bench/nn_sgmcmc.R     (about 4 minutes on 2 cores; SB_BENCH_REPS=3 for best of 3)
suppressPackageStartupMessages(library(scalebayes))
stopifnot(sb_torch_available())
py <- if (file.exists("/usr/bin/python3")) "/usr/bin/python3" else "python3"
ref <- file.path(dirname(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE)[1])), "nn_sgmcmc_torch.py")
if (!file.exists(ref)) ref <- "bench/nn_sgmcmc_torch.py"
reps <- as.integer(Sys.getenv("SB_BENCH_REPS", "1"))
epochs <- as.integer(Sys.getenv("SB_BENCH_EPOCHS", "3"))
best <- function(f) min(replicate(reps, f()))
hyper <- list(lr = 5e-7, tau = 1000, friction = 0.1, v0 = 1, v1 = 0.1, a = 1, nu = 1000, lambda = 1000,
              prior_var = 1e4)
cat(sprintf("scalebayes %s, LibTorch %s, PyTorch %s, %d cores, load %s, %s\n", packageVersion("scalebayes"),
            scalebayes_info()$torch$version,
            system2(py, c("-c", shQuote("import torch; print(torch.__version__)")), stdout = TRUE),
            parallel::detectCores(), paste(readLines("/proc/loadavg", warn = FALSE), collapse = ""),
            format(Sys.time(), "%Y-%m-%d %H:%M")))

fm <- fashion_mnist(split = "test")
run_torch <- function() {
  d <- tempfile("sbsg"); dir.create(d)
  dm <- c(dim(fm$x)[1], 1L, dim(fm$x)[2:3])
  writeBin(as.vector(aperm(array(fm$x, dm), 4:1)), file.path(d, "x.f32"), size = 4)
  writeBin(as.integer(fm$y) - 1L, file.path(d, "y.i32"), size = 4)
  meta <- c(n = dm[1], c = dm[2], h = dm[3], w = dm[4], epochs = epochs, batch = 1000, unlist(hyper))
  writeLines(paste(names(meta), sprintf("%.10g", meta)), file.path(d, "meta.txt"))
  out <- system2(py, c(ref, d), stdout = TRUE, env = "OMP_NUM_THREADS=1")
  as.numeric(strsplit(out[length(out)], " ")[[1]][2])
}
run_sb <- function() {
  system.time(sgld_sa(fm$x, fm$y, model = nn_cnn(), sampler = "sghmc", method = "sa", epochs = epochs,
                      batch_size = 1000, sparse_layers = 3, v0 = hyper$v0, v1 = hyper$v1, threads = 1, seed = 1,
                      quiet = TRUE,
                      control = sgmcmc_control(step_size = hyper$lr,
                                               step = sgmcmc_step(schedule = "constant", temperature = hyper$tau, friction = hyper$friction),
                                               ssgl = sgmcmc_ssgl(a = hyper$a, nu = hyper$nu, lambda = hyper$lambda, prior_var = hyper$prior_var, sigma_init = 1))))[["elapsed"]]
}
cat(sprintf("\n1. SGHMC-SA, 2-Conv-2-FC CNN, %d epochs of 10,000 Fashion-MNIST images (%d iterations of batch 1000), 1 thread (best of %d)\n",
            epochs, epochs * 10L, reps))
t_py <- best(run_torch)
t_sb <- best(run_sb)
cat(sprintf("   PyTorch %.2f s   scalebayes %.2f s   ratio PyTorch/scalebayes %.2f   (%.2f s per 60,000-image epoch in scalebayes)\n",
            t_py, t_sb, t_py / t_sb, t_sb / epochs * 6))

