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

#' UCI regression benchmarks of Table 5 of Deng et al. (2019): Yacht, Energy, Wine (red), Concrete
#'
#' Four of the five UCI data sets of the regression table (Table 5) of Deng, Zhang, Liang and Lin (2019)
#' (the fifth, Boston housing, is `MASS::Boston`, identical to their file), as numeric data frames in the
#' row order of the UCI files. Made by `data-raw/uci.R` from the copies the authors keep with their code
#' (GitHub repository WayneDW/Bayesian-Sparse-Deep-Learning, folder `data/uci`), which are the UCI Machine
#' Learning Repository's files; the raw files and their SHA-256 sums are in the package's source repository
#' under `data-raw/uci/` (not in the built package). `uci_prepare()` returns the authors' 90/10 splits of each,
#' standardized as their code does.
#'
#' @format
#' `uci_yacht`: 308 rows, 7 columns: `lcb` (longitudinal position of the centre of buoyancy), `prismatic`
#' (prismatic coefficient), `length_displacement`, `beam_draught`, `length_beam` (ratios), `froude` (Froude
#' number), and the response `resistance` (residuary resistance per unit weight of displacement), all
#' dimensionless. The authors' reader takes the file's first line as a header, so their splits use rows 2-308.
#'
#' `uci_energy`: 768 rows, 10 columns: `relative_compactness`, `surface_area`, `wall_area`, `roof_area`,
#' `overall_height`, `orientation`, `glazing_area`, `glazing_distribution` (X1-X8 of the file) and the two
#' responses `heating_load` and `cooling_load` (Y1, Y2, kWh/m^2); Table 5 (the authors' code) predicts
#' `cooling_load`.
#'
#' `uci_wine`: 1,599 rows (red wines), 12 columns: `fixed_acidity`, `volatile_acidity`, `citric_acid`,
#' `residual_sugar`, `chlorides`, `free_sulfur_dioxide`, `total_sulfur_dioxide`, `density`, `ph`,
#' `sulphates`, `alcohol` and the response `quality` (score 3 to 8).
#'
#' `uci_concrete`: 1,030 rows, 9 columns: `cement`, `blast_furnace_slag`, `fly_ash`, `water`,
#' `superplasticizer`, `coarse_aggregate`, `fine_aggregate` (kg per m^3 of mixture), `age` (days) and the
#' response `compressive_strength` (MPa), at the full precision of the `.xls` file (`modeldata::concrete`
#' rounds to two decimals).
#' @source UCI Machine Learning Repository, licensed CC BY 4.0 (<https://creativecommons.org/licenses/by/4.0/>):
#' \itemize{
#'   \item Yacht Hydrodynamics, <https://archive.ics.uci.edu/dataset/243/yacht+hydrodynamics>:
#'     Gerritsma, J., Onnink, R. and Versluis, A. (1981). Geometry, resistance and stability of the Delft
#'     systematic yacht hull series. *International Shipbuilding Progress* 28, 276-297.
#'   \item Energy Efficiency, <https://archive.ics.uci.edu/dataset/242/energy+efficiency>: Tsanas, A. and
#'     Xifara, A. (2012). Accurate quantitative estimation of energy performance of residential buildings
#'     using statistical machine learning tools. *Energy and Buildings* 49, 560-567.
#'   \item Wine Quality, <https://archive.ics.uci.edu/dataset/186/wine+quality>: Cortez, P., Cerdeira, A.,
#'     Almeida, F., Matos, T. and Reis, J. (2009). Modeling wine preferences by data mining from
#'     physicochemical properties. *Decision Support Systems* 47, 547-553.
#'   \item Concrete Compressive Strength, <https://archive.ics.uci.edu/dataset/165/concrete+compressive+strength>:
#'     Yeh, I.-C. (1998). Modeling of strength of high-performance concrete using artificial neural networks.
#'     *Cement and Concrete Research* 28, 1797-1808.
#' }
#' Table 5: Deng, W., Zhang, X., Liang, F. and Lin, G. (2019). An adaptive empirical Bayesian method for
#' sparse deep learning. *NeurIPS 2019*.
#' @seealso [uci_splits()], [uci_prepare()].
#' @examples
#' data(uci_concrete)
#' dim(uci_concrete)
#' d <- uci_prepare("concrete", split = 1)
#' c(train = length(d$y), test = length(d$newy))
#' @name uci_data
#' @aliases uci_yacht uci_energy uci_wine uci_concrete
#' @keywords datasets
NULL
