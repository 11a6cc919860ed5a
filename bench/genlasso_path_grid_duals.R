# Non-unique duals on 2-D grids: where the knot sequences of scalebayes and genlasso part, and that the primal
# paths agree and both duals certify them (design note, "Non-unique duals").
# Run: R_LIBS=<lib with scalebayes> Rscript bench/genlasso_path_grid_duals.R   (needs genlasso, igraph)
suppressMessages({library(scalebayes); library(genlasso)})
grid_y <- function(d, seed) { set.seed(seed); as.numeric(outer(1:d, 1:d, function(i, j) (i > d/2) + (j > d/3))) + rnorm(d * d, sd = 0.5) }
# 1. how often the knot sequences part (8 x 8, 10 x 10, 12 x 12; seeds 1-12)
parted <- 0
for (d in c(8, 10, 12)) for (seed in 1:12) {
  y <- grid_y(d, seed)
  g <- fusedlasso2d(y, dim1 = d, dim2 = d)
  s <- generalized_lasso(y, fused_lasso_2d(d, d), path = TRUE)
  K <- min(length(g$lambda), length(s$lambda))
  f <- which(abs(g$lambda[1:K] - s$lambda[1:K]) / g$lambda[1:K] > 1e-8)[1]
  parted <- parted + !is.na(f)
  cat(sprintf("%2d x %2d seed %2d: knots %d / %d, first differing knot %s\n", d, d, seed, length(g$lambda), length(s$lambda),
              if (is.na(f)) "none" else f))
}
cat("parted in", parted, "of 36\n")
# 2. 8 x 8, seed 2: the primal paths and both certificates
d <- 8
y2 <- grid_y(8, 2)
D <- fused_lasso_2d(d, d)
g <- fusedlasso2d(y2, dim1 = d, dim2 = d)
s <- generalized_lasso(y2, D, path = TRUE)
K <- min(length(g$lambda), length(s$lambda))
rel <- abs(g$lambda[1:K] - s$lambda[1:K]) / g$lambda[1:K]
first <- which(rel > 1e-8)[1]
print(data.frame(knot = first + (-2:4), gl = g$lambda[first + (-2:4)], sb = s$lambda[first + (-2:4)],
                 gl_hit = g$hit[first + (-2:4)], sb_hit = s$hit[first + (-2:4)], gl_df = g$df[first + (-2:4)], sb_df = s$df[first + (-2:4)]))
cert <- function(beta, u, lam) {
  Db <- as.numeric(D %*% beta); P <- 0.5 * sum((y2 - beta)^2) + lam * sum(abs(Db))
  c(gap = (lam * sum(abs(Db)) - sum(u * Db)) / P, infeas = max(abs(u)) / lam - 1)
}
lams <- sort(unique(c(g$lambda, s$lambda, exp(seq(log(max(g$lambda)), log(min(g$lambda) / 2), length.out = 200)))), decreasing = TRUE)
cg <- coef(g, lambda = lams, type = "both"); cs <- coef(s, lambda = lams, type = "both")
cc <- sapply(seq_along(lams), function(j) c(cert(cg$beta[, j], cg$u[, j], lams[j]), cert(cs$beta[, j], cs$u[, j], lams[j]),
       bd = max(abs(cg$beta[, j] - cs$beta[, j])), ud = max(abs(cg$u[, j] - cs$u[, j]))))
cat("max rel gap gl", max(cc[1, ]), "sb", max(cc[3, ]), " max infeas gl", max(cc[2, ]), "sb", max(cc[4, ]), " max beta diff", max(cc[5, ]), " max u diff", max(cc[6, ]), "\n")
E <- Matrix::summary(D); E <- E[order(E$i), ]; e <- matrix(E$j, ncol = 2, byrow = TRUE)
groups <- function(beta) { Db <- as.numeric(D %*% beta); keep <- abs(Db) <= 1e-9 * max(abs(y2))
  igraph::components(igraph::make_graph(t(e[keep, , drop = FALSE]), n = length(y2), directed = FALSE))$no }
mid <- function(l) { l <- sort(unique(l), decreasing = TRUE); (l[-1] + l[-length(l)]) / 2 }
lm_s <- mid(s$lambda); lm_g <- mid(g$lambda)
cs2 <- coef(s, lambda = lm_s); cg2 <- coef(g, lambda = lm_g)
gs <- apply(cs2$beta, 2, groups); gg <- apply(cg2$beta, 2, groups)
cat("sb: segments", length(lm_s), "df == primal groups", sum(gs == cs2$df), "; gl: segments", length(lm_g), "df == groups", sum(gg == cg2$df), "\n")
print(head(cbind(lambda = lm_s, df = cs2$df, groups = gs)[gs != cs2$df, ], 5)); print(head(cbind(lambda = lm_g, df = cg2$df, groups = gg)[gg != cg2$df, ], 5))
