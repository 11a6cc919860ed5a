# Tables 1-3 of Newton, Polson & Xu (2021), "Weighted Bayesian bootstrap for scalable posterior
# distributions", Canadian Journal of Statistics 49, section 3.1, transcribed from the paper
# (/work/shared/papers/wbb_newton_polson_xu_2021.txt). The n = p/2 block has no p = 100 column (it would repeat
# n = 50). Run from the package root: Rscript data-raw/wbb_paper_tables.R
p <- c(40, 60, 80, 100, 120)
rows <- list(
  # table, n_rule, setting, method, values for p = 40..120
  list(1, "50", "A(i)", "blasso", c(0.13, 0.09, 0.06, 0.05, 0.04)),
  list(1, "50", "A(i)", "wbb", c(0.19, 0.06, 0.05, 0.04, 0.03)),
  list(1, "50", "A(ii)", "blasso", c(5.59, 3.74, 2.90, 2.33, 1.96)),
  list(1, "50", "A(ii)", "wbb", c(7.40, 2.89, 2.31, 1.90, 1.62)),
  list(1, "50", "B", "blasso", c(0.67, 0.67, 0.68, 0.70, 0.70)),
  list(1, "50", "B", "wbb", c(1.77, 0.49, 0.50, 0.51, 0.52)),
  list(1, "p/2", "A(i)", "blasso", c(0.13, 0.08, 0.06, NA, 0.05)),
  list(1, "p/2", "A(i)", "wbb", c(0.14, 0.08, 0.05, NA, 0.03)),
  list(1, "p/2", "A(ii)", "blasso", c(6.88, 4.09, 2.88, NA, 1.94)),
  list(1, "p/2", "A(ii)", "wbb", c(6.58, 3.80, 2.53, NA, 1.47)),
  list(1, "p/2", "B", "blasso", c(0.52, 0.56, 0.64, NA, 0.74)),
  list(1, "p/2", "B", "wbb", c(0.68, 0.62, 0.55, NA, 0.48)),
  list(2, "50", "A(i)", "blasso", c(3.35, 3.42, 3.43, 3.61, 3.68)),
  list(2, "50", "A(i)", "wbb", c(3.34, 3.37, 3.40, 3.60, 3.72)),
  list(2, "50", "A(ii)", "blasso", c(119.65, 124.03, 130.49, 132.21, 135.46)),
  list(2, "50", "A(ii)", "wbb", c(121.45, 123.40, 129.89, 134.04, 140.44)),
  list(2, "50", "B", "blasso", c(20.24, 33.18, 46.75, 61.86, 80.57)),
  list(2, "50", "B", "wbb", c(20.61, 32.47, 46.27, 60.59, 78.71)),
  list(2, "p/2", "A(i)", "blasso", c(4.55, 4.15, 3.83, NA, 3.61)),
  list(2, "p/2", "A(i)", "wbb", c(3.65, 3.75, 3.66, NA, 3.65)),
  list(2, "p/2", "A(ii)", "blasso", c(180.56, 153.56, 136.82, NA, 128.39)),
  list(2, "p/2", "A(ii)", "wbb", c(145.73, 141.35, 133.66, NA, 132.23)),
  list(2, "p/2", "B", "blasso", c(26.35, 39.23, 50.77, NA, 73.63)),
  list(2, "p/2", "B", "wbb", c(21.80, 34.82, 47.76, NA, 75.29)),
  list(3, "50", "A(i)", "blasso", c(0.91, 0.92, 0.93, 0.94, 0.94)),
  list(3, "50", "A(i)", "wbb", c(0.92, 0.92, 0.93, 0.94, 0.95)),
  list(3, "50", "A(ii)", "blasso", c(0.91, 0.93, 0.95, 0.96, 0.96)),
  list(3, "50", "A(ii)", "wbb", c(0.91, 0.92, 0.94, 0.94, 0.95)),
  list(3, "50", "B", "blasso", c(1.00, 1.00, 1.00, 1.00, 1.00)),
  list(3, "50", "B", "wbb", c(0.95, 0.96, 0.94, 0.93, 0.91)),
  list(3, "p/2", "A(i)", "blasso", c(0.93, 0.93, 0.94, NA, 0.94)),
  list(3, "p/2", "A(i)", "wbb", c(0.91, 0.92, 0.93, NA, 0.94)),
  list(3, "p/2", "A(ii)", "blasso", c(0.92, 0.94, 0.95, NA, 0.96)),
  list(3, "p/2", "A(ii)", "wbb", c(0.91, 0.93, 0.94, NA, 0.95)),
  list(3, "p/2", "B", "blasso", c(1.00, 1.00, 1.00, NA, 1.00)),
  list(3, "p/2", "B", "wbb", c(0.94, 0.93, 0.93, NA, 0.92))
)
metric <- c("mse_coef", "mse_pred", "coverage")
wbb_paper_tables <- do.call(rbind, lapply(rows, function(r) {
  data.frame(metric = metric[r[[1]]], n_rule = r[[2]], setting = r[[3]], method = r[[4]], p = p,
             value = r[[5]], stringsAsFactors = FALSE)
}))
wbb_paper_tables <- wbb_paper_tables[!is.na(wbb_paper_tables$value), ]
rownames(wbb_paper_tables) <- NULL
save(wbb_paper_tables, file = "data/wbb_paper_tables.rda", compress = "xz", version = 2)
