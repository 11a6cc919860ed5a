# Elliptic PDE data (Wang, Deng & Lin 2021, section 5.3.2): Darcy flow through random permeability fields.
# Engine: inst/include/scalebayes/pde/ (kle.hpp, darcy.hpp); glue: src/pde.cpp.

#' Darcy-flow data from Karhunen-Loeve permeability fields (the elliptic PDE study of HAMCMC-SA)
#'
#' `elliptic_kle_data()` generates the training data of Wang, Deng and Lin (2021, section 5.3.2, Table 2):
#' random permeability fields \eqn{\kappa} on the unit square and the velocity of the Darcy flow
#' \eqn{-\mathrm{div}(\kappa \nabla p) = f} through them, with \eqn{f = 1}, no flow through the top and bottom
#' sides, pressure 1 on the left side and 0 on the right. `darcy_tpfa()` solves the same problem for permeability
#' fields you give (any field: the SPE10 model of the paper's Table 1 is not distributed with the package and
#' cannot be downloaded offline; read it yourself and pass it here).
#'
#' **Permeability.** The log-permeability is a Gaussian field given by its Karhunen-Loeve expansion (KLE)
#' \deqn{\log\kappa(x) = \log\kappa_0 + \sum_{k=1}^{K} \mu_k \sqrt{\lambda_k}\, \Phi_k(x),\qquad \mu_k \sim N(0, 1),}
#' where \eqn{(\lambda_k, \Phi_k)} are the K = `terms` leading eigenpairs of the separable Gaussian covariance
#' \eqn{C(x, x') = \sigma \exp(-(x_1 - x_1')^2 / l_1^2 - (x_2 - x_2')^2 / l_2^2)} on \eqn{[0, 1]^2}. The paper's
#' \eqn{\sigma = 2} multiplies the exponential, so it is the **variance** of the field at a point (`variance = 2`,
#' standard deviation 1.41). The 2-D eigenpairs are products of 1-D ones (eigenvalue \eqn{\sigma \lambda^{(1)}_a
#' \lambda^{(2)}_b}); the 1-D eigenpairs of \eqn{\exp(-(s - t)^2 / l^2)} on \eqn{[0, 1]} are computed by the
#' Nystrom method on `nystrom` midpoint nodes (no closed form exists on a bounded interval) and the `terms`
#' largest products are kept. The paper prints the expansion additively, \eqn{\kappa = \kappa_0 + \sum \dots},
#' without a value of \eqn{\kappa_0}; with variance 2 an additive field is negative somewhere unless
#' \eqn{\kappa_0} is large (about 7 for most fields on a 50 x 50 grid), which the paper does not state. The
#' default is the log-normal field (`link = "log"`) with \eqn{\kappa_0 = 1}: the geometric mean permeability 1,
#' the usual KLE permeability model of the multiscale literature the paper builds on, and positive by
#' construction. `link = "identity"` gives the printed additive form, with \eqn{\kappa_0 = 7} unless given (it
#' stops with an error naming the sample when \eqn{\kappa} is not positive everywhere: raise `kappa0`).
#'
#' **Solver.** Lowest-order mixed finite elements (Raviart-Thomas RT0 velocity, piecewise constant P0
#' pressure) on a `grid` x `grid` mesh of squares, with the two-point flux approximation: the flux through the
#' face between two cells is the harmonic mean of their permeabilities times the pressure difference over the
#' distance of their centres (through a Dirichlet face: the cell's permeability over the half cell width). The
#' scheme is mass conservative: the outward fluxes of every cell sum to its source exactly. Pressure at the
#' cell centres converges at order 2 for smooth \eqn{\kappa} (tests: measured 2.0).
#'
#' **Output.** The velocity is returned as the RT0 degrees of freedom, the normal velocity \eqn{u \cdot n} at
#' each face (flux divided by the face length), positive in the \eqn{+x} direction on vertical faces and
#' \eqn{+y} on horizontal faces, in the order: the \eqn{(G + 1) G} vertical faces \eqn{x = i/G}
#' (column \eqn{i + (G+1) j + 1}, \eqn{i = 0..G}, \eqn{j = 0..G-1} from the bottom), then the \eqn{G (G + 1)}
#' horizontal faces \eqn{y = j/G} (column \eqn{(G+1)G + i + G j + 1}, \eqn{j = 0..G}); 5,100 values on the
#' 50 x 50 grid (the horizontal faces on the top and bottom sides are 0 by the no-flow condition). Cells are in
#' the order \eqn{i + G j + 1} (x fastest, y upward), so `array(x, c(n, 1, G, G))` is the image input of a
#' network with the third index along \eqn{x}. The network input of the paper is "the permeability, 50 x 50":
#' `x` holds \eqn{\log\kappa} (link `"log"`; the natural input for a log-normal field) or \eqn{\kappa} (link
#' `"identity"`); the KLE coefficients are returned as well (`coef`).
#'
#' **Randomness and threads.** Sample s uses its own random stream keyed by (seed, s), so the data are the
#' same for any `threads`; `seed = NULL` draws the seed from R's generator (so `set.seed()` works).
#'
#' @param n Number of samples.
#' @param grid Cells per side (the paper: 50).
#' @param terms Number of KLE terms (the paper: 64).
#' @param corr_length Correlation lengths \eqn{(l_1, l_2)} along x and y (the paper: 0.2, 0.3).
#' @param variance Variance \eqn{\sigma} of the field (the paper: 2).
#' @param kappa0 \eqn{\kappa_0}: the geometric mean permeability (`link = "log"`) or the mean (`"identity"`).
#'   `NULL` (default): 1 for the log link; 7 for the identity link, the smallest integer that keeps all of 1,500
#'   fields of `seed = 2021` (the paper's data size) positive with the other defaults (a field with a
#'   non-positive value stops with an error naming the sample: raise `kappa0`).
#' @param link `"log"` (log-normal field, default) or `"identity"` (the additive form as printed).
#' @param source Constant source \eqn{f} (the paper: 1).
#' @param pressure Pressures on the left and right sides (the paper: 1 and 0).
#' @param nystrom Nodes of the 1-D Nystrom discretization of the covariance operator.
#' @param seed,threads As in [wbb()]: the data do not depend on `threads`.
#' @param quiet Suppress the progress bar.
#' @return `elliptic_kle_data()`: a list with `x` (n x G^2: the log-permeability, or the permeability for the
#'   identity link), `y` (n x (2 G (G + 1)) normal velocities), `coef` (n x `terms` KLE coefficients),
#'   `pressure` (n x G^2 cell pressures), `eigen` (a data frame: eigenvalue and the 1-D indices of each term),
#'   `grid`, `settings` and `seed`. `darcy_tpfa()`: a list with `velocity` and `pressure` (one row per field).
#' @references Wang, Y., Deng, W. and Lin, G. (2021). An adaptive Hessian approximated stochastic gradient MCMC
#'   method. Journal of Computational Physics 432, 110150.
#' @seealso [hamcmc_sa()], `vignettes/precompute-hamcmc-pde.R` (the Table 2 study).
#' @export
#' @examples
#' d <- elliptic_kle_data(4, grid = 20, seed = 1, threads = 1)
#' dim(d$x); dim(d$y)
#' head(d$eigen)
#' # mass balance of cell (1, 1): outward normal velocities times face length = source times area
#' G <- 20; v <- d$y[1, ]
#' (v[2] - v[1] + v[(G + 1) * G + 1 + G] - v[(G + 1) * G + 1]) / G
#' image(matrix(d$x[1, ], G, G), main = "log permeability")
elliptic_kle_data <- function(n, grid = 50, terms = 64, corr_length = c(0.2, 0.3), variance = 2, kappa0 = NULL,
                              link = c("log", "identity"), source = 1, pressure = c(1, 0), nystrom = 500,
                              seed = NULL, threads = NULL, quiet = NULL) {
  n <- check_count(n, max = 1e7)
  grid <- check_count(grid, min = 2L, max = 2000L)
  terms <- check_count(terms, max = 10000L)
  nystrom <- check_count(nystrom, min = 2L, max = 5000L)
  if (terms > nystrom) {
    sb_abort(c("{.arg terms} must not exceed {.arg nystrom}.", x = "terms = {terms}, nystrom = {nystrom}."),
             arg = "terms")
  }
  if (!is.numeric(corr_length) || length(corr_length) != 2L || anyNA(corr_length) || any(!is.finite(corr_length)) ||
      any(corr_length <= 0)) {
    sb_abort(c("{.arg corr_length} must be two positive numbers (correlation lengths along x and y).",
               x = "You supplied {.val {format(corr_length)}}."), arg = "corr_length")
  }
  variance <- check_number(variance, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE)
  link <- sb_match_arg(link)
  if (is.null(kappa0)) kappa0 <- if (link == "log") 1 else 7
  kappa0 <- check_number(kappa0, lower = 0, lower_open = TRUE, upper = Inf, upper_open = TRUE)
  source <- check_number(source)
  pressure <- check_pressure(pressure)
  # the result (x and pressure n x G^2, y n x 2G(G + 1), coef n x terms) before the engine allocates it; the
  # classed memory error of every front end (issue 61: n = 1e6, grid = 50 asked the engine for 18.6 GiB)
  per_row <- 2 * as.double(grid)^2 + 2 * as.double(grid) * (grid + 1) + terms
  fix <- "Use a smaller {.arg n} (or {.arg grid}); for more samples, generate batches with different seeds and combine them."
  check_result_memory(8 * as.double(n) * per_row, "n", fix = fix, peak = 16 * as.double(n) * per_row)
  run <- run_settings(seed, threads, quiet)
  g <- list(nx = grid, ny = grid, p_left = pressure[1], p_right = pressure[2])
  s <- list(grid = g, terms = terms, l1 = corr_length[1], l2 = corr_length[2], variance = variance,
            kappa0 = kappa0, link = link, nystrom = nystrom, source = source)
  res <- sb_call_engine(cpp_kle_darcy_data(n, s, engine_run(run)))
  if (isTRUE(res$interrupted)) rlang::interrupt()
  structure(list(x = res$field, y = res$velocity, coef = res$coef, pressure = res$pressure,
                 eigen = data.frame(value = res$values, index_x = res$index1 + 1L, index_y = res$index2 + 1L),
                 grid = grid, link = link,
                 settings = list(terms = terms, corr_length = corr_length, variance = variance, kappa0 = kappa0,
                                 source = source, pressure = pressure, nystrom = nystrom),
                 seed = run$seed),
            class = "sb_elliptic_data")
}

#' @rdname elliptic_kle_data
#' @param kappa For `darcy_tpfa()`: permeability fields, one per row of a matrix (n x G^2, cells in the order
#'   above), or one field as a G x G matrix (`kappa[i, j]` the cell i along x, j along y) or a vector of G^2;
#'   positive and finite.
#' @param f For `darcy_tpfa()`: the source, one number or one value per cell.
#' @export
darcy_tpfa <- function(kappa, f = 1, pressure = c(1, 0), threads = NULL, quiet = NULL) {
  if (!is.numeric(kappa) || !length(kappa)) {
    sb_abort(c("{.arg kappa} must be a numeric matrix of permeability fields.",
               x = "You supplied {.obj_type_friendly {kappa}}."), arg = "kappa")
  }
  d <- dim(kappa)
  if (is.null(d) || (length(d) == 2L && d[1] == d[2])) {
    # one field: a G x G matrix or a vector of G^2
    G <- if (is.null(d)) round(sqrt(length(kappa))) else d[1]
    kappa <- matrix(as.double(kappa), 1L)
  } else if (length(d) == 2L) {
    G <- round(sqrt(d[2]))
  } else {
    G <- NA
  }
  if (is.na(G) || G < 2 || G^2 != ncol(kappa)) {
    sb_abort(c("{.arg kappa} must hold square grids: rows of G^2 cells, a G x G matrix or a vector of G^2.",
               x = "It has dimensions {paste(d %||% length(kappa), collapse = ' x ')}."), arg = "kappa")
  }
  if (anyNA(kappa) || any(!is.finite(kappa)) || any(kappa <= 0)) {
    sb_abort(c("{.arg kappa} must be positive and finite in every cell.",
               x = "{sum(!is.finite(kappa) | kappa <= 0, na.rm = TRUE) + sum(is.na(kappa))} value{?s} {?is/are} not."),
             arg = "kappa")
  }
  # the solver's transmissibility 2 k1 k2 / (k1 + k2) multiplies neighbouring permeabilities: beyond 1e150
  # their product overflows (NaN pressures), below 1e-150 it underflows (a singular system)
  rng <- range(kappa)
  if (rng[2] > darcy_kappa_max || rng[1] < 1 / darcy_kappa_max) {
    bad <- if (rng[2] > darcy_kappa_max) rng[2] else rng[1]
    sb_abort(c("{.arg kappa} must lie in [1e-150, 1e150] in every cell: the solver multiplies neighbouring permeabilities.",
               x = "It has a value of {format(bad, digits = 3)}.",
               i = "Rescale {.arg kappa} (for a source {.arg f} = 0 the pressures do not change; otherwise they scale by the inverse factor)."),
             arg = "kappa", kind = "scaling")
  }
  if (!is.numeric(f) || !(length(f) %in% c(1L, G^2)) || anyNA(f) || any(!is.finite(f))) {
    sb_abort(c("{.arg f} must be one finite number or one per cell ({G^2}).",
               x = "It has {length(f)} value{?s}."), arg = "f")
  }
  pressure <- check_pressure(pressure)
  run <- run_settings(0, threads, quiet)
  storage.mode(kappa) <- "double"
  res <- sb_call_engine(cpp_darcy_solve(kappa, rep_len(as.double(f), G^2),
                                        list(nx = G, ny = G, p_left = pressure[1], p_right = pressure[2]),
                                        engine_run(run)))
  if (isTRUE(res$interrupted)) rlang::interrupt()
  if (any(!is.finite(res$pressure)) || any(!is.finite(res$velocity))) {
    sb_abort(c("The solution is not finite: the permeabilities in {.arg kappa} (range {format(rng[1], digits = 3)} to {format(rng[2], digits = 3)}) and the source {.arg f} are beyond what the solver resolves in double precision.",
               i = "Rescale {.arg kappa} and {.arg f} nearer 1."), arg = "kappa", kind = "scaling")
  }
  res[c("velocity", "pressure")]
}

# The largest permeability darcy_tpfa() takes (and 1 / it the smallest): products of two stay in double range.
darcy_kappa_max <- 1e150

check_pressure <- function(pressure, call = rlang::caller_env()) {
  if (!is.numeric(pressure) || length(pressure) != 2L || anyNA(pressure) || any(!is.finite(pressure))) {
    sb_abort(c("{.arg pressure} must be two finite numbers: the pressure on the left and on the right side.",
               x = "You supplied {.val {format(pressure)}}."), arg = "pressure", call = call)
  }
  as.double(pressure)
}

#' @export
print.sb_elliptic_data <- function(x, ...) {
  s <- x$settings
  cat(sprintf("<sb_elliptic_data> %d Darcy-flow samples on a %d x %d grid: %d inputs (%s), %d face velocities\n",
              nrow(x$x), x$grid, x$grid, ncol(x$x), if (x$link == "log") "log permeability" else "permeability",
              ncol(x$y)))
  cat(sprintf("KLE: %d terms of the Gaussian covariance, variance %g, correlation lengths %g x %g, kappa0 %g (%s link); %.2f%% of the variance kept\n",
              s$terms, s$variance, s$corr_length[1], s$corr_length[2], s$kappa0, x$link,
              100 * sum(x$eigen$value) / s$variance))
  invisible(x)
}
