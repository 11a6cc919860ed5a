// scalebayes/pde/darcy.hpp -- Darcy flow -div(kappa grad p) = f on [0,1]^2 by the lowest-order mixed finite
// elements (RT0 velocity / P0 pressure) with the two-point flux approximation, and the KLE data generator.
//
// On a uniform nx x ny grid of rectangles, RT0/P0 with the trapezoidal quadrature of the velocity mass matrix
// is the cell-centred finite volume scheme with two-point fluxes: the flux through a face between cells 1 and
// 2 is F = T (p1 - p2) with T = (face length / centre distance) * 2 k1 k2 / (k1 + k2) (the harmonic mean of the
// cell permeabilities); through a Dirichlet face of cell c, T = (face length / half cell width) * k_c. Boundary
// conditions of Wang, Deng & Lin (2021, section 5.3.2): p = p_left on x = 0, p = p_right on x = 1, no flow
// (u.n = 0) on y = 0 and y = 1. Mass balance per cell: sum of outward face fluxes = f_c |cell|. The pressure
// system is symmetric positive definite (sparse Cholesky, Eigen::SimplicialLDLT).
//
// Output: the RT0 degrees of freedom as normal VELOCITIES u.n (flux / face length), positive in +x on vertical
// faces and +y on horizontal faces, in the order
//   vertical faces (x = i/nx, i = 0..nx; normal x):   index i + (nx + 1) j,           j = 0..ny-1;
//   horizontal faces (y = j/ny, j = 0..ny; normal y): index (nx + 1) ny + i + nx j,    i = 0..nx-1;
// (nx + 1) ny + nx (ny + 1) values: 5,100 on 50 x 50; the top and bottom faces are 0 by the boundary condition.
// Cells are in the order i + nx j (x fastest, y from the bottom). Header-only, Eigen, no R.
#pragma once
#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/pde/kle.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace pde {

struct DarcyGrid {
  int nx = 50, ny = 50;
  double p_left = 1.0, p_right = 0.0;
  Eigen::Index cells() const { return static_cast<Eigen::Index>(nx) * ny; }
  Eigen::Index faces() const { return static_cast<Eigen::Index>(nx + 1) * ny + static_cast<Eigen::Index>(nx) * (ny + 1); }
};

struct DarcySolution {
  Eigen::VectorXd pressure;  // cells
  Eigen::VectorXd velocity;  // faces (normal velocity)
};

// Solve for one permeability field (cells, all > 0 and finite) and source (cells).
inline DarcySolution darcy_tpfa(const DarcyGrid& g, const Eigen::Ref<const Eigen::VectorXd>& kappa,
                                const Eigen::Ref<const Eigen::VectorXd>& source) {
  const int nx = g.nx, ny = g.ny;
  if (nx < 1 || ny < 1) throw std::invalid_argument("grid must have at least one cell each way");
  const Eigen::Index nc = g.cells();
  if (kappa.size() != nc || source.size() != nc) throw std::invalid_argument("kappa and source need one value per cell");
  for (Eigen::Index c = 0; c < nc; ++c) {
    if (!(kappa[c] > 0.0) || !std::isfinite(kappa[c])) throw std::invalid_argument("permeability must be positive and finite in every cell");
    if (!std::isfinite(source[c])) throw std::invalid_argument("source must be finite");
  }
  const double hx = 1.0 / nx, hy = 1.0 / ny;
  auto id = [nx](int i, int j) { return static_cast<Eigen::Index>(i) + static_cast<Eigen::Index>(nx) * j; };
  auto harm = [](double a, double b) { return 2.0 * a * b / (a + b); };
  std::vector<Eigen::Triplet<double>> trip;
  trip.reserve(static_cast<std::size_t>(5 * nc));
  Eigen::VectorXd rhs = source * (hx * hy);
  Eigen::VectorXd diag = Eigen::VectorXd::Zero(nc);
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      const Eigen::Index c = id(i, j);
      if (i + 1 < nx) {
        const double T = hy / hx * harm(kappa[c], kappa[id(i + 1, j)]);
        diag[c] += T; diag[id(i + 1, j)] += T;
        trip.emplace_back(c, id(i + 1, j), -T);
        trip.emplace_back(id(i + 1, j), c, -T);
      }
      if (j + 1 < ny) {
        const double T = hx / hy * harm(kappa[c], kappa[id(i, j + 1)]);
        diag[c] += T; diag[id(i, j + 1)] += T;
        trip.emplace_back(c, id(i, j + 1), -T);
        trip.emplace_back(id(i, j + 1), c, -T);
      }
      if (i == 0) {
        const double T = 2.0 * hy / hx * kappa[c];
        diag[c] += T;
        rhs[c] += T * g.p_left;
      }
      if (i == nx - 1) {
        const double T = 2.0 * hy / hx * kappa[c];
        diag[c] += T;
        rhs[c] += T * g.p_right;
      }
    }
  }
  for (Eigen::Index c = 0; c < nc; ++c) trip.emplace_back(c, c, diag[c]);
  Eigen::SparseMatrix<double> A(nc, nc);
  A.setFromTriplets(trip.begin(), trip.end());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver(A);
  if (solver.info() != Eigen::Success) throw std::runtime_error("Darcy pressure system could not be factorized");
  DarcySolution out;
  out.pressure = solver.solve(rhs);
  if (solver.info() != Eigen::Success) throw std::runtime_error("Darcy pressure solve failed");
  const Eigen::VectorXd& p = out.pressure;
  out.velocity = Eigen::VectorXd::Zero(g.faces());
  const Eigen::Index off = static_cast<Eigen::Index>(nx + 1) * ny;
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i <= nx; ++i) {  // vertical face x = i hx; velocity = flux / hy
      double u;
      if (i == 0) u = 2.0 / hx * kappa[id(0, j)] * (g.p_left - p[id(0, j)]);
      else if (i == nx) u = 2.0 / hx * kappa[id(nx - 1, j)] * (p[id(nx - 1, j)] - g.p_right);
      else u = harm(kappa[id(i - 1, j)], kappa[id(i, j)]) / hx * (p[id(i - 1, j)] - p[id(i, j)]);
      out.velocity[i + static_cast<Eigen::Index>(nx + 1) * j] = u;
    }
  }
  for (int j = 1; j < ny; ++j)  // horizontal faces y = j hy; j = 0 and ny stay 0 (no flow)
    for (int i = 0; i < nx; ++i)
      out.velocity[off + i + static_cast<Eigen::Index>(nx) * j] =
          harm(kappa[id(i, j - 1)], kappa[id(i, j)]) / hy * (p[id(i, j - 1)] - p[id(i, j)]);
  return out;
}

enum class KleLink { log = 0, identity = 1 };
inline constexpr EnumTable<KleLink, 2> kle_link_names{
    "link", {{{"log", KleLink::log}, {"identity", KleLink::identity}}}};
constexpr const auto& enum_table(KleLink) { return kle_link_names; }

// Settings of the KLE data set.
struct KleDataSettings {
  DarcyGrid grid;
  int terms = 64;
  double l1 = 0.2, l2 = 0.3, variance = 2.0, kappa0 = 1.0;
  KleLink link = KleLink::log;
  int nystrom = 500;
  double source = 1.0;
  std::uint64_t seed = 1;
  int threads = 1;
  bool keep_pressure = true;
};

// Output buffers (column-major, one row per sample), written in slots indexed by the sample: the result is the
// same for any number of threads.
struct KleDataOut {
  double* coef = nullptr;      // n x terms (KLE coefficients mu ~ N(0, 1), from the stream (seed, sample))
  double* field = nullptr;     // n x cells: log kappa (link log) or kappa (link identity)
  double* velocity = nullptr;  // n x faces
  double* pressure = nullptr;  // n x cells (may be null)
};

// Sample s: coefficients from rng::Stream(seed, s), kappa = kappa0 exp(Y) or kappa0 + Y with Y the KLE field.
inline parallel::RunStatus kle_darcy_data(std::size_t n, const KleDataSettings& st, const Kle2d& kle, KleDataOut out,
                                          const parallel::Monitor& monitor = parallel::Monitor()) {
  const Eigen::Index nc = st.grid.cells(), nf = st.grid.faces();
  const Eigen::VectorXd src = Eigen::VectorXd::Constant(nc, st.source);
  auto body = [&](std::size_t s, int) {
    rng::Stream rs(st.seed, s);
    Eigen::VectorXd mu(st.terms);
    for (int k = 0; k < st.terms; ++k) mu[k] = rs.normal();
    const Eigen::VectorXd Y = kle.field(mu);
    Eigen::VectorXd kappa = st.link == KleLink::log ? Eigen::VectorXd((Y.array().exp() * st.kappa0).matrix())
                                                    : Eigen::VectorXd((Y.array() + st.kappa0).matrix());
    if (st.link == KleLink::identity && !(kappa.minCoeff() > 0.0))
      throw std::invalid_argument("sample " + std::to_string(s + 1) + ": kappa0 + KLE field is not positive everywhere (minimum " +
                                  std::to_string(kappa.minCoeff()) + "); increase kappa0 or use the log link");
    const DarcySolution sol = darcy_tpfa(st.grid, kappa, src);
    for (int k = 0; k < st.terms; ++k) out.coef[s + n * k] = mu[k];
    const double logk0 = std::log(st.kappa0);
    for (Eigen::Index c = 0; c < nc; ++c)  // the network's input: log kappa (log link) or kappa (identity link)
      out.field[s + n * c] = st.link == KleLink::log ? Y[c] + logk0 : kappa[c];
    for (Eigen::Index f = 0; f < nf; ++f) out.velocity[s + n * f] = sol.velocity[f];
    if (out.pressure)
      for (Eigen::Index c = 0; c < nc; ++c) out.pressure[s + n * c] = sol.pressure[c];
  };
  return parallel::run_parallel(n, st.threads, body, monitor);
}

// Solve for n given permeability fields (n x cells, column-major) and one source per cell.
inline parallel::RunStatus darcy_many(std::size_t n, const DarcyGrid& grid, const double* kappa, const Eigen::VectorXd& source,
                                      int threads, double* velocity, double* pressure,
                                      const parallel::Monitor& monitor = parallel::Monitor()) {
  const Eigen::Index nc = grid.cells(), nf = grid.faces();
  auto body = [&](std::size_t s, int) {
    Eigen::VectorXd k(nc);
    for (Eigen::Index c = 0; c < nc; ++c) k[c] = kappa[s + n * c];
    const DarcySolution sol = darcy_tpfa(grid, k, source);
    for (Eigen::Index f = 0; f < nf; ++f) velocity[s + n * f] = sol.velocity[f];
    if (pressure)
      for (Eigen::Index c = 0; c < nc; ++c) pressure[s + n * c] = sol.pressure[c];
  };
  return parallel::run_parallel(n, threads, body, monitor);
}

}  // namespace pde
}  // namespace scalebayes
