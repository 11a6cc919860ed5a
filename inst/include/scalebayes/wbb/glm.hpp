// scalebayes/wbb/glm.hpp -- the weighted Bayesian bootstrap (Newton, Polson & Xu 2021, Algorithm 1) for
// lasso / elastic-net GLMs.
//
// Draw t (global index, so chunks of draws computed anywhere combine into the same result) uses the stream
// rng::Stream(seed, t): first n data weights w_i, then the prior weights w0 (p of them for "separate", one
// for "common", none for "none"), and solves
//     argmin  sum_i w_i l_i(a0, beta) + lambda * sum_j pf_j w0_j [alpha |beta_j| + (1 - alpha) beta_j^2 / 2]
// for every lambda of a decreasing sequence (one lambda is the usual case), warm-started from the unweighted
// solution at that lambda. Memory: the T x (p + 1) x L output and O(n + p + |A|^2) per worker.
#pragma once
#include <Eigen/Dense>
#include <cstdint>
#include <memory>
#include <vector>

#include "scalebayes/cd/path.hpp"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"

namespace scalebayes {
namespace wbb {

enum class PriorWeights { separate = 0, common = 1, none = 2 };
enum class WeightDist { exponential = 0, multinomial = 1 };

struct Settings {
  PriorWeights prior = PriorWeights::separate;
  WeightDist dist = WeightDist::exponential;
  std::uint64_t seed = 1;
  std::size_t first_draw = 0;  // global index of the first draw computed here
  std::size_t draws = 0;       // number of draws computed here
  int threads = 1;
};

struct Result {
  Eigen::MatrixXd coef;  // (L * (p + 1)) x draws, one contiguous column per draw; block l = (a0, beta) at lambda(l)
  Eigen::VectorXd kkt;   // largest KKT violation over the draw's lambdas
  Eigen::VectorXi iterations;
  int not_converged = 0;
  bool interrupted = false;
  std::size_t completed = 0;
};

// Fill data weights w (n) and prior weights w0 (p, multiplied into the base penalty weights) for one draw.
inline void draw_weights(rng::Stream& s, WeightDist dist, PriorWeights prior, Eigen::VectorXd& w,
                         const Eigen::VectorXd& pf_base, Eigen::VectorXd& pf) {
  const Eigen::Index n = w.size();
  if (dist == WeightDist::exponential) {
    for (Eigen::Index i = 0; i < n; ++i) w(i) = s.exponential();
  } else {
    w.setZero();
    for (Eigen::Index k = 0; k < n; ++k) {
      const Eigen::Index i = static_cast<Eigen::Index>(s.uniform() * static_cast<double>(n));
      w(i < n ? i : n - 1) += 1.0;
    }
  }
  pf = pf_base;
  if (prior == PriorWeights::separate) {
    for (Eigen::Index j = 0; j < pf.size(); ++j) pf(j) *= s.exponential();
  } else if (prior == PriorWeights::common) {
    pf *= s.exponential();
  }
}

inline Result run(Eigen::Ref<const Eigen::MatrixXd> x, Eigen::Ref<const Eigen::VectorXd> y, cd::Family family,
                  double alpha, const Eigen::VectorXd& pf_base, const Eigen::VectorXd& lambda,
                  const std::vector<cd::Fit>& warm, const Settings& st, const cd::Control& ctrl,
                  const parallel::Monitor& monitor = parallel::Monitor()) {
  const Eigen::Index n = x.rows(), p = x.cols(), L = lambda.size();
  if (static_cast<Eigen::Index>(warm.size()) != L) throw std::invalid_argument("need one warm start per lambda");
  if (pf_base.size() != p) throw std::invalid_argument("penalty weights must have length p");
  Result res;
  res.coef.resize(L * (p + 1), static_cast<Eigen::Index>(st.draws));
  res.kkt.setZero(static_cast<Eigen::Index>(st.draws));
  res.iterations.setZero(static_cast<Eigen::Index>(st.draws));
  const int nt = std::max(1, st.threads);
  std::vector<std::unique_ptr<cd::ElasticNet>> solvers(nt);
  // per-worker scratch (padded so counters written by different threads never share a cache line)
  struct alignas(64) Scratch {
    Eigen::VectorXd w, pf;
    cd::Fit fit;
    int notconv = 0;
  };
  std::vector<Scratch> scratch(nt);

  auto body = [&](std::size_t i, int worker) {
    if (!solvers[worker]) solvers[worker].reset(new cd::ElasticNet(x, y, family, alpha, ctrl));
    cd::ElasticNet& solver = *solvers[worker];
    rng::Stream s(st.seed, st.first_draw + i);
    Scratch& sc = scratch[worker];
    Eigen::VectorXd& w = sc.w;
    Eigen::VectorXd& pf = sc.pf;
    w.resize(n);
    pf.resize(p);
    draw_weights(s, st.dist, st.prior, w, pf_base, pf);
    double kkt = 0.0;
    int iters = 0;
    cd::Fit& fit = sc.fit;
    for (Eigen::Index l = 0; l < L; ++l) {
      // warm start: the unweighted solution at this lambda, or this draw's solution at the previous lambda
      if (l == 0) fit = warm[0];
      solver.solve(w, pf, lambda(l), fit, l == 0 ? lambda(l) : lambda(l - 1));
      if (!fit.converged) ++sc.notconv;
      kkt = std::max(kkt, fit.kkt);
      iters += fit.iterations;
      const Eigen::Index off = l * (p + 1);
      res.coef(off, static_cast<Eigen::Index>(i)) = fit.a0;
      res.coef.col(static_cast<Eigen::Index>(i)).segment(off + 1, p) = fit.beta;
    }
    res.kkt(static_cast<Eigen::Index>(i)) = kkt;
    res.iterations(static_cast<Eigen::Index>(i)) = iters;
  };
  const auto status = parallel::run_parallel(st.draws, nt, body, monitor);
  res.interrupted = status.interrupted;
  res.completed = status.completed;
  for (const auto& sc : scratch) res.not_converged += sc.notconv;
  return res;
}

}  // namespace wbb
}  // namespace scalebayes
