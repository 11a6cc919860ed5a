// Glue for the elliptic PDE data generator (engine: inst/include/scalebayes/pde/). R side: R/pde.R.
#include "sb_glue.h"
#include "scalebayes/pde/darcy.hpp"

namespace {
scalebayes::pde::DarcyGrid grid_from(const Rcpp::List& g) {
  scalebayes::pde::DarcyGrid grid;
  grid.nx = Rcpp::as<int>(g["nx"]);
  grid.ny = Rcpp::as<int>(g["ny"]);
  grid.p_left = Rcpp::as<double>(g["p_left"]);
  grid.p_right = Rcpp::as<double>(g["p_right"]);
  return grid;
}
}  // namespace

// n samples of (KLE coefficients, log-permeability, velocities, pressures).
// [[Rcpp::export]]
Rcpp::List cpp_kle_darcy_data(int n, Rcpp::List s, Rcpp::List run) {
  namespace P = scalebayes::pde;
  P::KleDataSettings st;
  st.grid = grid_from(s["grid"]);
  st.terms = Rcpp::as<int>(s["terms"]);
  st.l1 = Rcpp::as<double>(s["l1"]);
  st.l2 = Rcpp::as<double>(s["l2"]);
  st.variance = Rcpp::as<double>(s["variance"]);
  st.kappa0 = Rcpp::as<double>(s["kappa0"]);
  st.link = sbglue::enum_arg<P::KleLink>(s, "link");
  st.nystrom = Rcpp::as<int>(s["nystrom"]);
  st.source = Rcpp::as<double>(s["source"]);
  const scalebayes::parallel::RunSettings rs = sbglue::run_settings(run);
  st.seed = rs.seed;
  st.threads = rs.threads;
  const P::Kle2d kle(st.grid.nx, st.grid.ny, st.l1, st.l2, st.variance, st.terms, st.nystrom);
  const Eigen::Index nc = st.grid.cells(), nf = st.grid.faces();
  Rcpp::NumericMatrix coef(n, st.terms), field(n, nc), velocity(n, nf), pressure(n, nc);
  P::KleDataOut out{coef.begin(), field.begin(), velocity.begin(), pressure.begin()};
  sbglue::Progress prog(n, run, "Darcy solves");
  const auto status = P::kle_darcy_data(static_cast<std::size_t>(n), st, kle, out, prog.monitor());
  return Rcpp::List::create(Rcpp::Named("coef") = coef, Rcpp::Named("field") = field,
                            Rcpp::Named("velocity") = velocity, Rcpp::Named("pressure") = pressure,
                            Rcpp::Named("values") = Rcpp::NumericVector(kle.values.data(), kle.values.data() + kle.values.size()),
                            Rcpp::Named("index1") = Rcpp::IntegerVector(kle.index1.begin(), kle.index1.end()),
                            Rcpp::Named("index2") = Rcpp::IntegerVector(kle.index2.begin(), kle.index2.end()),
                            Rcpp::Named("interrupted") = status.interrupted || prog.interrupted());
}

// Darcy solves for given permeability fields (n x cells) and source (cells).
// [[Rcpp::export]]
Rcpp::List cpp_darcy_solve(Rcpp::NumericMatrix kappa, Rcpp::NumericVector source, Rcpp::List grid, Rcpp::List run) {
  namespace P = scalebayes::pde;
  const P::DarcyGrid g = grid_from(grid);
  const int n = kappa.nrow();
  if (kappa.ncol() != g.cells() || source.size() != g.cells()) Rcpp::stop("internal: wrong kappa / source size");
  const scalebayes::parallel::RunSettings rs = sbglue::run_settings(run);
  Rcpp::NumericMatrix velocity(n, g.faces()), pressure(n, g.cells());
  const Eigen::VectorXd src = Eigen::Map<const Eigen::VectorXd>(source.begin(), source.size());
  sbglue::Progress prog(n, run, "Darcy solves");
  const auto status = P::darcy_many(static_cast<std::size_t>(n), g, kappa.begin(), src, rs.threads, velocity.begin(),
                                    pressure.begin(), prog.monitor());
  return Rcpp::List::create(Rcpp::Named("velocity") = velocity, Rcpp::Named("pressure") = pressure,
                            Rcpp::Named("interrupted") = status.interrupted || prog.interrupted());
}
