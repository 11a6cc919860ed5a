# Figure 3 of the WBB paper (vignette `diabetes`): the Bayesian-lasso arm as the authors' code ran it, and a
# check of scalebayes's reversible-jump sampler against monomvn's on the same posterior.
#   1. monomvn::blasso exactly as the authors called it (all defaults: reversible jump, lambda^2 ~ Gamma(2, 0.1),
#      intercept, unit-norm columns, thin = min(p, n - 1) = 10; T = 2000, the last 1000 kept). The authors
#      passed scale(x) (unit-sd columns); monomvn centres and rescales every column to unit norm itself, so on
#      lars's x (already unit norm) the posterior is the same and the coefficients are on the scale of x.
#   2. Validation: one long monomvn chain (T = 100000 x thin 10 sweeps, first 1000 draws dropped) and
#      scalebayes's blasso() (4 chains x 25000 kept x thin 10) on the same prior; P(beta_j = 0 | y) and the
#      posterior means with Monte-Carlo standard errors (posterior::ess_mean).
# Run from the package root (about 1 minute; monomvn is single-threaded):
#   nice Rscript vignettes/precompute-diabetes.R
library(scalebayes)
stopifnot(requireNamespace("monomvn", quietly = TRUE), requireNamespace("posterior", quietly = TRUE))
data(diabetes)
x <- diabetes$x
y <- diabetes$y
n <- nrow(x); p <- ncol(x)
stopifnot(max(abs(colMeans(x))) < 1e-12, max(abs(colSums(x^2) - 1)) < 1e-12)  # monomvn's scaling is the identity

# 1. the authors' run
set.seed(2021)
authors <- monomvn::blasso(x, y, T = 2000, verb = 0)
authors_draws <- utils::tail(authors$beta, 1000)
colnames(authors_draws) <- colnames(x)

# 2. validation
T_long <- 100000L
set.seed(20211)
t_mono <- system.time(mono <- monomvn::blasso(x, y, T = T_long, verb = 0))[["user.self"]]
keep <- 1001:T_long
mb <- mono$beta[keep, ]
colnames(mb) <- colnames(x)
chains <- 4L; iter <- 25000L
t_ours <- system.time(
  ours <- blasso(x, y, lambda = "gamma", chains = chains, iterations = iter, burnin = 1000, thin = min(p, n - 1L),
                 seed = 2021, threads = 1, quiet = TRUE,
                 control = blasso_control(rj = TRUE, preset = "monomvn", intercept = TRUE, gamma_prior = c(2, 0.1),
                                          diagnostics = FALSE))
)[["user.self"]]
ob <- ours$draws[, colnames(x)]
# Monte-Carlo standard error of the mean of f(draws): sd / sqrt(ESS), ESS by posterior::ess_mean over chains
mcse <- function(v, chain) {
  k <- length(unique(chain))
  m <- matrix(v, ncol = k)  # draws are stored chain by chain
  if (stats::sd(v) == 0) return(0)
  stats::sd(v) / sqrt(posterior::ess_mean(m))
}
ch_ours <- ours$chain
ch_mono <- rep(1L, nrow(mb))
tab <- data.frame(
  parameter = colnames(x),
  p0_scalebayes = colMeans(ob == 0), p0_scalebayes_se = apply(ob == 0, 2, mcse, chain = ch_ours),
  p0_monomvn = colMeans(mb == 0), p0_monomvn_se = apply(mb == 0, 2, mcse, chain = ch_mono),
  mean_scalebayes = colMeans(ob), mean_scalebayes_se = apply(ob, 2, mcse, chain = ch_ours),
  mean_monomvn = colMeans(mb), mean_monomvn_se = apply(mb, 2, mcse, chain = ch_mono),
  row.names = NULL
)
tab$p0_z <- (tab$p0_scalebayes - tab$p0_monomvn) / sqrt(tab$p0_scalebayes_se^2 + tab$p0_monomvn_se^2)
tab$mean_z <- (tab$mean_scalebayes - tab$mean_monomvn) / sqrt(tab$mean_scalebayes_se^2 + tab$mean_monomvn_se^2)
extra <- data.frame(
  quantity = c("lambda^2", "sigma^2", "model size"),
  scalebayes = c(mean(ours$lambda^2), mean(ours$sigma2), mean(ours$model_size)),
  monomvn = c(mean(mono$lambda2[keep]), mean(mono$s2[keep]), mean(mono$m[keep]))
)
res <- list(authors_draws = authors_draws, validation = tab, hyper = extra,
            settings = list(monomvn_T = T_long, monomvn_kept = length(keep), monomvn_thin = mono$thin,
                            scalebayes_chains = chains, scalebayes_iter = iter, scalebayes_thin = ours$settings$thin,
                            cpu_seconds = c(monomvn = t_mono, scalebayes = t_ours),
                            monomvn_version = as.character(utils::packageVersion("monomvn"))))
saveRDS(res, "inst/extdata/diabetes-figure3.rds", compress = "xz")
print(res$settings)
print(format(tab, digits = 3))
print(extra)
