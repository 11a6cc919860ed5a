# Probes for the printed-field Table 2 (vignettes/precompute-hamcmc-pde-printed.R, vignette("hamcmc-sa"), "Table 2
# on the printed field"): one chain of SGLD or HAMCMC-SA (low-rank form) on the Table 2 network at grid 25,
# elliptic_kle_data(link = "identity", seed = 2021), with a given per-example learning rate and number of
# epochs, the input image raw or standardized, and the default (U(+-1/sqrt(fan_in))) or a He-uniform start
# (zero biases; `he = 0` also zeroes the last layer). Each run appends a row (test error, training loss at the
# first and last epochs, divergence, CPU seconds) to the file PROBES_OUT (default probes.tsv). Usage, e.g.:
#   nice -n 15 Rscript bench/hamcmc_pde_printed_probes.R 'run(100, 10); run(30, 6, sampler = "hamcmc_sa", M = 1); run(30, 6, he = 0)'
library(scalebayes)
probes_out <- Sys.getenv("PROBES_OUT", "probes.tsv")
G <- 25L; n <- 1500L; n_train <- 1300L
d <- elliptic_kle_data(n, grid = G, link = "identity", seed = 2021, threads = 1, quiet = TRUE)
xm <- mean(d$x[1:n_train, ]); xs <- sd(as.vector(d$x[1:n_train, ]))
y <- d$y; tr <- 1:n_train; te <- (n_train + 1):n
ybar <- colMeans(y[tr, ]); yc <- sweep(y, 2, ybar); w <- 1 / rowSums(y[tr, ]^2)
rel <- function(pred) 100 * mean(sqrt(rowSums((sweep(pred, 2, ybar, "+") - y[te, ])^2) / rowSums(y[te, ]^2)))
net <- nn_sequential(layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_avgpool2d(2),
                     layer_flatten(), layer_dense(100), layer_relu(), layer_reshape(c(1, 10, 10)),
                     layer_conv2d(64, 3), layer_relu(), layer_conv2d(32, 3), layer_relu(), layer_flatten(),
                     layer_dense(800), layer_relu())
tab <- scalebayes:::nn_resolve(net, c(1L, G, G), ncol(y)); desc <- scalebayes:::cpp_nn_describe(scalebayes:::nn_engine_spec(tab, c(1L, G, G), "gaussian"))
he_init <- function(seed, last = 0) {
  set.seed(seed); k <- length(desc$size)
  unlist(lapply(seq_len(k), function(j) {
    if (grepl("bias$", desc$group[j])) return(numeric(desc$size[j]))
    fan_in <- desc$size[j] / desc$size[j + 1]; b <- sqrt(6 / fan_in) * (if (j == k - 1) last else 1)
    runif(desc$size[j], -b, b)
  }))
}
run <- function(lr, epochs, std = TRUE, sampler = "sgld", M = 1, auto = FALSE, he = NULL, ...) {
  x <- array(if (std) (d$x - xm) / xs else d$x, c(n, 1L, G, G))
  ss <- lr / n_train
  ssgl <- sgmcmc_ssgl(likelihood_sd = sqrt(0.5), kappa0_init = 0, kappa1_init = 1e-4)
  ctl <- if (auto) sgmcmc_control(ssgl = ssgl, trace_every = 13, ...) else
    sgmcmc_control(step_size = ss, step = sgmcmc_step(schedule = "constant", temperature = ss * 50000 / 0.01),
                   ssgl = ssgl,
                   lbfgs = sgmcmc_lbfgs(precond_A = 5, precond_Z = 10, precond_alpha = 0.9, memory = M,
                                        sa_form = "lowrank"),
                   trace_every = 13, init = if (!is.null(he)) he_init(1, he), ...)
  msg <- ""
  tm <- system.time(fit <- tryCatch(suppressWarnings(sgld_sa(x[tr, , , , drop = FALSE], yc[tr, ], model = net, sampler = sampler, method = "none",
        iterations = 13 * epochs, batch_size = 100, burnin = 13 * epochs - 26, thin = 1, sparse_layers = c(3, 6, 7), weights = w,
        threads = 1, standardize = FALSE, seed = 1, chains = 1, quiet = TRUE, keep_draws = FALSE, newx = x[te, , , , drop = FALSE], control = ctl)),
        scalebayes_error_divergence = function(e) { msg <<- conditionMessage(e); NULL }))
  cat(sprintf("lr %g epochs %d std %s %s M%d auto %s: err %s, loss %s, %.0f CPU s %s\n", lr, epochs, std, sampler, M, auto,
     if (is.null(fit)) NA else format(rel(fit$pred_mean), digits = 4),
     if (is.null(fit)) NA else paste(format(fit$trace$loss, digits = 3), collapse = " "), sum(tm[1:2]), substr(gsub("\n", " ", msg), 1, 120)))
  write.table(data.frame(lr = lr, epochs = epochs, input = if (std) "standardized" else "raw",
                         init = if (is.null(he)) "default (U(+-1/sqrt(fan_in)))" else if (he == 0) "He uniform, zero biases, last layer 0" else "He uniform, zero biases",
                         sampler = if (sampler == "sgld") "SGLD" else paste0("HAMCMC-SA (M=", M, ", lowrank)"),
                         test_err = if (is.null(fit)) NA else rel(fit$pred_mean),
                         loss_first_epoch = if (is.null(fit)) NA else fit$trace$loss[1],
                         loss_last_epoch = if (is.null(fit)) NA else tail(fit$trace$loss, 1),
                         diverged = if (nzchar(msg)) sub(".*iteration ([0-9]+).*", "iteration \\1", gsub("\n", " ", msg)) else NA,
                         cpu_seconds = sum(tm[1:2])),
              probes_out, sep = "\t", append = file.exists(probes_out),
              col.names = !file.exists(probes_out), row.names = FALSE)
  if (auto && !is.null(fit)) print(fit$settings$step_size %||% fit$control$step_size)
  invisible(fit)
}
`%||%` <- function(a, b) if (is.null(a)) b else a
args <- commandArgs(TRUE)
eval(parse(text = args[1]))
