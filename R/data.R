#' Diabetes progression data (Efron et al. 2004)
#'
#' The diabetes data of Efron, Hastie, Johnstone and Tibshirani (2004) as the CRAN package lars distributes
#' it: 442 patients, ten baseline variables and a quantitative measure of disease progression one year later.
#' Made by `data-raw/diabetes.R` from lars.
#'
#' @format A data frame with 442 rows and three columns:
#' \describe{
#'   \item{x}{a 442 x 10 matrix (class `AsIs`) with columns `age`, `sex`, `bmi`, `map`, `tc`, `ldl`, `hdl`,
#'     `tch`, `ltg`, `glu`, each centred and scaled to unit Euclidean norm;}
#'   \item{y}{the response, disease progression (raw scale, 25 to 346);}
#'   \item{x2}{a 442 x 64 matrix: `x` plus squares and two-way interactions (standardized likewise).}
#' }
#' @source Efron, B., Hastie, T., Johnstone, I. and Tibshirani, R. (2004). Least angle regression.
#'   *Annals of Statistics* 32, 407-499. Data from `lars::diabetes` (lars 1.3).
#' @examples
#' data(diabetes)
#' dim(diabetes$x)
"diabetes"
