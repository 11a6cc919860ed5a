// scalebayes/genlasso/ip_types.hpp -- settings and result of the interior-point solvers (primal_ip.hpp,
// dual_ip.hpp) and the extended-precision types they share.
// Header-only, Eigen/std only, no R.
#pragma once
#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace genlasso {

// IPControl::newton by name (R: trend_filter_control(newton = )); the int values are IPControl::newton's codes.
enum class NewtonDirections { automatic = 0, qr = 1, dual = 2 };
inline constexpr EnumTable<NewtonDirections, 3> newton_directions_names{
    "newton", {{{"auto", NewtonDirections::automatic}, {"qr", NewtonDirections::qr}, {"dual", NewtonDirections::dual}}}};
constexpr const auto& enum_table(NewtonDirections) { return newton_directions_names; }

struct IPControl {
  double tol = 1e-8;      // relative duality gap
  int max_iter = 200;     // Newton steps
  double mu = 10.0;       // barrier update factor
  double alpha = 0.01;    // line search sufficient decrease
  double beta = 0.5;      // line search backtracking
  int max_ls = 60;
  int refine = 0;         // refinement steps per Newton solve (augmented system, long double residuals)
  bool polish = true;     // primal polishing on the active set (banded D only)
  double polish_from = 1e-3;  // ... tried at every step once the barrier gap is below this fraction of P
  bool mehrotra = true;   // Mehrotra predictor-corrector (measured: about half the Newton steps) instead of the barrier rule
  int stall_iter = 15;    // stop when the certified gap has not halved in this many steps at tiny barrier gap
  int centrality = 1;      // primal interior point with dual-normal directions: Gondzio centrality correctors per
                          // step (one more solve each; n = 1e5, k = 1: 23 -> 21 steps, 2 correctors: 18 steps but
                          // slower overall; with Givens directions they cost steps at n = 1e6, so not used there)
  int newton = 0;  // primal interior point, Newton directions: 0 = dual normal equations (dual_normal_band.hpp)
                   // for k <= 1 where measured to hold, else Givens QR; 1 = Givens QR only; 2 = dual normal
                   // equations for every k <= 1 problem (still restarting on the QR when blocked)
  bool escalate = false;  // primal interior point on the Givens path: on lost directions go back one step and
                          // continue in extended precision (primal_ip.hpp); set for the second primal attempt of
                          // solve_scaled_ip, after a first one without it stopped short
  bool primal_first = true;  // banded D: primal-dual interior point on the primal first (primal_ip.hpp), the dual
                             // interior point only when that does not reach tol (the better certificate wins)
};

struct IPResult {
  Eigen::VectorXd beta;
  Eigen::VectorXd u;       // dual solution
  double gap = NAN;        // absolute duality gap
  double rel_gap = NAN;    // gap / primal objective
  double primal = NAN;
  int iter = 0;
  bool converged = false;
  double rounding_rel = 0;  // relative objective change that rounding beta to double can cause (see rounding_floor)
};

// Solutions along a lambda path (trend_filter_path, generalized_lasso_path): column / entry l for lambda l.
struct PathResult {
  Eigen::MatrixXd beta;   // n x L
  Eigen::VectorXd gap, rel_gap, primal, rounding_rel;
  Eigen::VectorXi iter;
  Eigen::MatrixXd u;      // m x L (dual solutions, for warm starts)
  int completed = 0;      // lambda values solved (all L unless interrupted)
  bool interrupted = false;
  PathResult() = default;
  PathResult(int n, int m, int L)
      : beta(n, L), gap(L), rel_gap(L), primal(L), rounding_rel(Eigen::VectorXd::Zero(L)), iter(L), u(m, L) {}
  void store(int l, const IPResult& r) {
    beta.col(l) = r.beta;
    u.col(l) = r.u;
    gap[l] = r.gap;
    rel_gap[l] = r.rel_gap;
    primal[l] = r.primal;
    rounding_rel[l] = r.rounding_rel;
    iter[l] = r.iter;
    completed = l + 1;
  }
};

// Extended precision for the iterate and the residuals. The dual variable u is of the size of lambda while
// beta = y - W^{-1} D' u is of the size of y: for k >= 2 the cancellation in D' u (and the rounding of u
// itself) puts a floor of about eps * lambda^2 * ||D||^2 on the certified gap in double precision (measured:
// relative gap stalls near 5e-5 at n = 500, k = 3, lambda = 1e-3 lambda_max). Holding u, the multipliers and
// the residuals in long double (64-bit mantissa on x86) removes that floor at O(n k) extra cost per step;
// the O(n k^2) factorization stays in double (it only supplies search directions).
using LD = long double;
using VecLD = Eigen::Matrix<LD, Eigen::Dynamic, 1>;

// Interrupt callback of the solvers' drivers (lambda paths, lambda_max): called between units of work; returns
// true when the caller asks the run to stop (an empty function never stops). The R glue passes a poll of R's
// interrupt flag that never longjmps through C++ frames.
using StopFn = std::function<bool()>;

}  // namespace genlasso
}  // namespace scalebayes
