# Builds data/diabetes.rda from the CRAN package lars (Efron, Hastie, Johnstone & Tibshirani 2004), keeping
# lars's layout: a data frame with the 442 x 10 matrix x (centred, unit L2 norm columns), the response y and
# the 442 x 64 matrix x2 (x plus squares and interactions). Run from the package root:
#   Rscript data-raw/diabetes.R
stopifnot(requireNamespace("lars", quietly = TRUE))
e <- new.env()
utils::data("diabetes", package = "lars", envir = e)
src <- e$diabetes
clean <- function(m) {
  m <- unclass(m)
  attr(m, ".Names") <- NULL
  m <- matrix(as.double(m), nrow = nrow(m), dimnames = list(NULL, colnames(m)))
  m
}
x <- clean(src$x)
x2 <- clean(src$x2)
stopifnot(dim(x) == c(442, 10), dim(x2) == c(442, 64), max(abs(colMeans(x))) < 1e-12,
          max(abs(colSums(x^2) - 1)) < 1e-12)
diabetes <- data.frame(row.names = seq_len(nrow(x)))
diabetes$x <- I(x)
diabetes$y <- as.double(src$y)
diabetes$x2 <- I(x2)
save(diabetes, file = "data/diabetes.rda", compress = "xz")
