# Precompute for vignette "sgld-sa-networks": Table 5 of Deng, Zhang, Liang & Lin (2019), UCI Boston housing.
# Run from the package root:  Rscript vignettes/precompute-sgld-networks.R   (about 5 minutes on one core)
# Writes vignettes/sgld-sa-networks-results.rds.
suppressMessages(library(scalebayes))
B <- MASS::Boston
X <- as.matrix(B[, -14])
y <- B$medv
splits <- 20
variants <- expand.grid(method = c("none", "em", "sa"), anneal = c(FALSE, TRUE), stringsAsFactors = FALSE)
one <- function(split, method, anneal) {
  set.seed(1000 + split)  # the split only; the chain's seed is fixed below
  te <- sample(nrow(X), round(0.1 * nrow(X)))
  mu <- colMeans(X[-te, ]); s <- apply(X[-te, ], 2, sd)
  xs <- scale(X, mu, s)  # features normalized with the training split's mean and sd
  t0 <- proc.time()[["elapsed"]]
  fit <- sgld_sa(xs[-te, ], y[-te], model = nn_mlp(50), sampler = "sghmc", method = method, epochs = 200,
                 batch_size = 50, v0 = 0.1, v1 = 10, newx = xs[te, ], newy = y[te], seed = split, quiet = TRUE,
                 threads = 1,
                 control = sgmcmc_control(step_schedule = "constant", step_size = 1e-5, temperature = 1,
                                          anneal = if (anneal) 1.003 else 1, a = 1, b = 10, nu = 1, lambda = 1,
                                          sigma_init = 10, delta_init = 0.5))
  data.frame(split = split, method = method, anneal = anneal, label = fit$method, rmse = fit$rmse_mean,
             sigma = fit$latent$sigma, delta = mean(fit$delta), mean_rho = mean(fit$inclusion),
             seconds = proc.time()[["elapsed"]] - t0)
}
rows <- list()
for (v in seq_len(nrow(variants))) for (s in seq_len(splits)) {
  rows[[length(rows) + 1L]] <- one(s, variants$method[v], variants$anneal[v])
}
res <- do.call(rbind, rows)
tab <- aggregate(rmse ~ label, res, function(r) c(mean = mean(r), sd = sd(r)))
print(tab)
saveRDS(list(per_split = res, info = list(date = Sys.time(), machine = Sys.info()[["nodename"]],
                                          version = as.character(packageVersion("scalebayes")))),
        "vignettes/sgld-sa-networks-results.rds")
