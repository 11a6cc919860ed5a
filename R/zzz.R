#' scalebayes: fast posterior sampling for sparse models
#'
#' C++ engines (header-only, under `inst/include/scalebayes`) for the weighted Bayesian bootstrap over
#' lasso / elastic-net GLMs ([wbb()], [weighted_lasso()]), with draws in parallel threads that are
#' identical for any number of threads. See `vignette("diabetes", package = "scalebayes")`.
#'
#' Options: `scalebayes.threads` (default threads), `scalebayes.quiet` (hide progress bars).
#' @keywords internal
#' @useDynLib scalebayes, .registration = TRUE
#' @importFrom Rcpp evalCpp
#' @importFrom stats nobs
"_PACKAGE"
