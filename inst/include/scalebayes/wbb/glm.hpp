// scalebayes/wbb/glm.hpp -- the weighted Bayesian bootstrap (Newton, Polson & Xu 2021, Algorithm 1) for
// lasso / elastic-net GLMs: the weighted solver that wbb::run_draws() (wbb/driver.hpp) calls per draw.
//
// Draw t gets data weights w (n; times the user's observation weights when given) and prior weights w0 (p for "separate", one for "common", none for "none")
// from the driver's stream rng::Stream(seed, t), and solves
//     argmin  sum_i w_i l_i(a0, beta) + lambda * sum_j pf_j w0_j [alpha |beta_j| + (1 - alpha) beta_j^2 / 2]
// for every lambda of a decreasing sequence (one lambda is the usual case), warm-started from the unweighted
// solution at the first lambda, then from the draw's own solution at the previous one. The coefficients are
// written straight into the caller's output (one draws x (p + 1) matrix per lambda, row = draw, intercept
// first), mapped back to the original scale of x when a centring / scaling is given, so the caller (the R
// glue) needs no second copy. Memory: the output and O(n + p + |A|^2) per worker.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "scalebayes/cd/multinomial.hpp"
#include "scalebayes/cd/path.hpp"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/wbb/driver.hpp"

namespace scalebayes {
namespace wbb {

// Coefficients on the original scale of x from those on the standardized scale (x_j - center_j) / scale_j:
// beta_j = b_j / scale_j, a0 = b0 - sum_j beta_j center_j (summed in long double, as R's colSums(), so the
// result is identical to R/weighted_lasso.R's unstandardize_coef()). out: p + 1 values at stride `inc`.
inline void unstandardize(double b0, const Eigen::VectorXd& b, const Eigen::VectorXd& center,
                          const Eigen::VectorXd& scale, double* out, Eigen::Index inc) {
  long double s = 0.0L;
  for (Eigen::Index j = 0; j < b.size(); ++j) {
    const double bj = b(j) / scale(j);
    out[(j + 1) * inc] = bj;
    s += static_cast<long double>(bj * center(j));
  }
  out[0] = b0 - static_cast<double>(s);
}

// Read-only problem shared by all workers.
struct GlmProblem {
  Eigen::Ref<const Eigen::MatrixXd> x;   // standardized design (n x p)
  Eigen::Ref<const Eigen::VectorXd> y;
  cd::Family family;
  double alpha;
  Eigen::VectorXd pf_base;               // base penalty weights (p), multiplied by the prior weights
  Eigen::VectorXd lambda;                // decreasing
  cd::Fit warm;                          // the unweighted solution at lambda(0)
  cd::Control ctrl;
  Eigen::VectorXd center, scale;         // empty: write standardized coefficients
  Eigen::VectorXd obs_weights;           // the user's observation weights (n), multiplied into every draw's data
                                         // weights; empty = none (the draw's weights as drawn)
  int classes = 0;                       // > 0: the multinomial family (cd/multinomial.hpp) with this many classes
  bool grouped = false;                  // multinomial: the grouped lasso across classes
  cd::MultinomialFit warm_multi;         // multinomial: the unweighted solution at lambda(0)
  const cd::SparseDesign* sparse = nullptr;  // non-null: the design is these compressed columns (standardization
                                             // implicit, cd/design.hpp) and `x` is unused (0 x 0); gaussian,
                                             // binomial and poisson only
  Eigen::Index nobs() const { return sparse ? sparse->rows() : x.rows(); }
  Eigen::Index nvars() const { return sparse ? sparse->cols() : x.cols(); }
};

// Where the draws go (owned by the caller, e.g. R matrices): coef[l] is draws x (p + 1) at lambda(l)
// (multinomial: draws x K (p + 1), class by class, each class's intercept first).
struct GlmOutput {
  std::vector<Eigen::Map<Eigen::MatrixXd>> coef;
  Eigen::Map<Eigen::VectorXd> kkt;          // largest KKT violation over the draw's lambdas
  Eigen::Map<Eigen::VectorXi> iterations;   // coordinate sweeps over the draw's lambdas
  Eigen::Map<Eigen::VectorXi> not_converged;  // solves of the draw that hit max_iter
};

// The checks both draw solvers (GlmSolver, MultinomialGlmSolver) make of the problem and its output.
inline void check_glm_problem(const GlmProblem& pb, const GlmOutput& out) {
  if (pb.pf_base.size() != pb.nvars()) throw std::invalid_argument("penalty weights must have length p");
  if (static_cast<Eigen::Index>(out.coef.size()) != pb.lambda.size())
    throw std::invalid_argument("need one output matrix per lambda");
  if (pb.obs_weights.size() != 0 && pb.obs_weights.size() != pb.nobs())
    throw std::invalid_argument("observation weights must have length n");
}

// A draw's data weights (the draw's times the observation weights, in `wobs` when there are any) and its penalty
// weights `pf` (pf_base times the prior weights w0: one per coefficient, one common, or none).
inline const Eigen::VectorXd& draw_weights(const GlmProblem& pb, const Eigen::VectorXd& w_draw, const Eigen::VectorXd& w0,
                                           Eigen::VectorXd& wobs, Eigen::VectorXd& pf) {
  const Eigen::Index p = pb.nvars();
  if (w0.size() == p) pf = pb.pf_base.cwiseProduct(w0);
  else if (w0.size() == 1) pf = pb.pf_base * w0(0);
  else pf = pb.pf_base;
  if (pb.obs_weights.size() == 0) return w_draw;
  wobs = w_draw.cwiseProduct(pb.obs_weights);
  return wobs;
}

// The design a solver of storage `Design` reads from the problem.
inline cd::DenseDesign problem_design(const GlmProblem& pb, const cd::DenseDesign*) { return cd::DenseDesign(pb.x); }
inline const cd::SparseDesign& problem_design(const GlmProblem& pb, const cd::SparseDesign*) {
  if (!pb.sparse) throw std::invalid_argument("no sparse design in the problem");
  return *pb.sparse;
}

template <class Design>
class BasicGlmSolver {
 public:
  BasicGlmSolver(const GlmProblem& pb, GlmOutput& out)
      : pb_(pb), out_(out), solver_(problem_design(pb, static_cast<const Design*>(nullptr)), pb.y, pb.family, pb.alpha,
                                    pb.ctrl),
        pf_(pb.nvars()) {
    check_glm_problem(pb, out);
  }
  Eigen::Index n_obs() const { return pb_.nobs(); }
  Eigen::Index n_prior() const { return pb_.nvars(); }

  void solve(std::size_t i, const Eigen::VectorXd& w_draw, const Eigen::VectorXd& w0, rng::Stream&) {
    const Eigen::Index p = pb_.nvars(), L = pb_.lambda.size(), r = static_cast<Eigen::Index>(i);
    const Eigen::VectorXd& w = draw_weights(pb_, w_draw, w0, wobs_, pf_);
    double kkt = 0.0;
    int iters = 0, notconv = 0;
    const bool orig = pb_.scale.size() == p;
    for (Eigen::Index l = 0; l < L; ++l) {
      if (l == 0) fit_ = pb_.warm;
      solver_.solve(w, pf_, pb_.lambda(l), fit_, l == 0 ? pb_.lambda(l) : pb_.lambda(l - 1));
      if (!fit_.converged) ++notconv;
      kkt = std::max(kkt, fit_.kkt);
      iters += fit_.iterations;
      Eigen::Map<Eigen::MatrixXd>& c = out_.coef[static_cast<std::size_t>(l)];
      if (orig) {
        unstandardize(fit_.a0, fit_.beta, pb_.center, pb_.scale, &c(r, 0), c.rows());
      } else {
        c(r, 0) = fit_.a0;
        for (Eigen::Index j = 0; j < p; ++j) c(r, j + 1) = fit_.beta(j);
      }
    }
    out_.kkt(r) = kkt;
    out_.iterations(r) = iters;
    out_.not_converged(r) = notconv;
  }

 private:
  const GlmProblem& pb_;
  GlmOutput& out_;
  cd::BasicElasticNet<Design> solver_;
  Eigen::VectorXd pf_, wobs_;
  cd::Fit fit_;
};
using GlmSolver = BasicGlmSolver<cd::DenseDesign>;

// The multinomial family: the same draw (data and prior weights, warm starts along lambda), solved by
// cd::Multinomial; class k's coefficients go to columns k (p + 1) .. k (p + 1) + p.
class MultinomialGlmSolver {
 public:
  MultinomialGlmSolver(const GlmProblem& pb, GlmOutput& out)
      : pb_(pb), out_(out), solver_(pb.x, pb.y, pb.classes, pb.grouped, pb.alpha, pb.ctrl), pf_(pb.x.cols()) {
    check_glm_problem(pb, out);
  }
  Eigen::Index n_obs() const { return pb_.x.rows(); }
  Eigen::Index n_prior() const { return pb_.x.cols(); }

  void solve(std::size_t i, const Eigen::VectorXd& w_draw, const Eigen::VectorXd& w0, rng::Stream&) {
    const Eigen::Index p = pb_.x.cols(), L = pb_.lambda.size(), r = static_cast<Eigen::Index>(i);
    const int K = pb_.classes;
    const Eigen::VectorXd& w = draw_weights(pb_, w_draw, w0, wobs_, pf_);
    double kkt = 0.0;
    int iters = 0, notconv = 0;
    const bool orig = pb_.scale.size() == p;
    for (Eigen::Index l = 0; l < L; ++l) {
      if (l == 0) fit_ = pb_.warm_multi;
      solver_.solve(w, pf_, pb_.lambda(l), fit_);
      if (!fit_.converged) ++notconv;
      kkt = std::max(kkt, fit_.kkt);
      iters += fit_.iterations;
      Eigen::Map<Eigen::MatrixXd>& c = out_.coef[static_cast<std::size_t>(l)];
      for (int k = 0; k < K; ++k) {
        const Eigen::Index c0 = k * (p + 1);
        if (orig) {
          bk_ = fit_.beta.col(k);
          unstandardize(fit_.a0(k), bk_, pb_.center, pb_.scale, &c(r, c0), c.rows());
        } else {
          c(r, c0) = fit_.a0(k);
          for (Eigen::Index j = 0; j < p; ++j) c(r, c0 + j + 1) = fit_.beta(j, k);
        }
      }
    }
    out_.kkt(r) = kkt;
    out_.iterations(r) = iters;
    out_.not_converged(r) = notconv;
  }

 private:
  const GlmProblem& pb_;
  GlmOutput& out_;
  cd::Multinomial solver_;
  Eigen::VectorXd pf_, wobs_, bk_;
  cd::MultinomialFit fit_;
};

// Draws st.first_draw .. + st.draws - 1 into `out` (see GlmOutput).
inline parallel::RunStatus run_glm(const GlmProblem& pb, GlmOutput& out, const Settings& st,
                                   const parallel::Monitor& monitor = parallel::Monitor()) {
  if (pb.sparse) {
    if (pb.classes > 0) throw std::invalid_argument("the multinomial family takes a dense design");
    return run_draws(
        st, [&](int) { return std::unique_ptr<BasicGlmSolver<cd::SparseDesign>>(new BasicGlmSolver<cd::SparseDesign>(pb, out)); },
        monitor);
  }
  if (pb.classes > 0)
    return run_draws(st, [&](int) { return std::unique_ptr<MultinomialGlmSolver>(new MultinomialGlmSolver(pb, out)); },
                     monitor);
  return run_draws(st, [&](int) { return std::unique_ptr<GlmSolver>(new GlmSolver(pb, out)); }, monitor);
}

}  // namespace wbb
}  // namespace scalebayes
