// scalebayes/sgmcmc/density.hpp -- SG-MCMC of a target given as a log density and its gradient: the "density
// model" of the chain driver (chain.hpp), and the built-in targets.
//
// A Target provides
//   int dim() const;                                  // d
//   double eval(const double* x, double* grad) const; // log p(x) up to a constant, and grad = d log p / dx
// (eval is called only from the thread that runs the chain; a built-in target is a pure function, so one object
// serves every worker thread; a target written in R lives in the glue, src/sgmcmc_density.cpp, and runs in
// run_chains' inline mode on the calling thread).
//
// DensityModel<Target> is a Model of run_chain with one non-sparse group of d parameters, no data and no
// minibatches: n_obs() = 1, so the driver draws no minibatch indices (no random number), and minibatch() /
// gradient() both evaluate the FULL gradient at the current values. Its prior variance is +inf (the prior term
// -value / prior_var adds an exact 0: the posterior gradient is the target's), the likelihood has no sigma
// (regression() is false) and the control's method must be "none" (no SSGL latents). The Langevin noise comes
// from the chain's stream, so chain c of a run is a function of (seed, c) and of nothing else.
// DensityRecorder keeps the draws, the running mean, a trace (iteration, log density at the start of the
// iteration, eps, tau) and the final state.
//
// Minibatched targets (sgmcmc_model() in R; a model written in C++ against scalebayes/target.hpp, or the R
// glue's model of an R log_lik, src/sgmcmc_density.cpp). A BatchTarget provides
//   int dim() const; long n_obs() const;                                          // d, N
//   double log_lik(const double* x, const long* rows, long n, double* grad) const; // sum over the n rows, grad written
//   double log_prior(const double* x, double* grad) const;                       // grad written
// (scalebayes::Target, the public interface, is one). DensityModel<BatchTarget> is then a Model with n_obs() = N:
// the driver draws minibatches of ctl.batch_size rows and minibatch() / gradient() give
//   grad = grad log prior + (N / n) sum_B grad log-lik_i                                (plain)
//   grad = grad log prior + G_hat + (N / n) sum_B (grad log-lik_i(x) - grad log-lik_i(x_hat))   (control variate)
// the second (Baker, Fearnhead, Fox & Nemeth 2019, "SGLD-CV") with a centre x_hat and its full-data log-likelihood
// gradient G_hat computed once per run (BatchCv: batch_mode() finds x_hat, the mode of the log posterior, by the
// package's L-BFGS, math/lbfgs_min.hpp); it costs a second log_lik call per gradient (at x_hat on the same rows).
// The log density recorded is the plain minibatch estimate log prior + (N / n) sum_B log-lik_i. With n = N (every
// row) no control variate is applied (it would add exactly zero). batch_full() is the full-data log posterior
// and gradient (the start check, the warm-up's scores).
//
// Built-in targets:
//   BananaTarget    log p(b) = -b1^4 / 10 - (4 (b2 + 1.2) - b1^2)^2 / 2 (the "2D correlated distribution" of
//                   Wang, Deng & Lin 2021, sec. 5.1, after Simsekli et al. 2016; the paper prints the density
//                   without the exp, i.e. this log density). Exact draws: banana_exact() (b1 from its marginal
//                   by inverse CDF on a grid, b2 | b1 Gaussian).
//   GaussianTarget  N(mean, cov), cov symmetric positive definite.
// Header-only, Eigen + std, no R.
#pragma once
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <algorithm>
#include <type_traits>
#include <utility>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/math/lbfgs_min.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/sgmcmc/chain.hpp"
#include "scalebayes/sgmcmc/storage.hpp"

namespace scalebayes {
namespace sgmcmc {

// p(b) proportional to exp(-b1^4 / 10 - (4 (b2 + 1.2) - b1^2)^2 / 2).
struct BananaTarget {
  int dim() const { return 2; }
  double eval(const double* x, double* grad) const {
    const double b1 = x[0], b2 = x[1];
    const double u = 4.0 * (b2 + 1.2) - b1 * b1;
    grad[0] = -0.4 * b1 * b1 * b1 + 2.0 * b1 * u;
    grad[1] = -4.0 * u;
    return -(b1 * b1 * b1 * b1) / 10.0 - 0.5 * u * u;
  }
};

// Q = cov^-1 of a symmetric positive definite cov (checked): the Cholesky factor, then Q's columns solved in
// blocks of 256 columns (the same triangular solves as llt.solve(I), block by block), calling keep_going()
// between blocks; false stops it (returns false, Q unset). d^3 flops: at d = 3,000 seconds, so a caller
// factorizes ONCE per run and hands Q to every evaluation (GaussianTarget's precision constructor), and can
// stop between blocks.
inline bool gaussian_precision(const Eigen::MatrixXd& cov, Eigen::MatrixXd& prec,
                               const std::function<bool()>& keep_going = {}) {
  const Eigen::Index d = cov.rows();
  if (d < 1 || cov.cols() != d) throw std::invalid_argument("gaussian target: cov must be d x d");
  if (!cov.allFinite()) throw std::invalid_argument("gaussian target: non-finite mean or cov");
  if ((cov - cov.transpose()).cwiseAbs().maxCoeff() > 1e-10 * (1.0 + cov.cwiseAbs().maxCoeff()))
    throw std::invalid_argument("gaussian target: cov must be symmetric");
  if (keep_going && !keep_going()) return false;
  Eigen::LLT<Eigen::MatrixXd> llt(cov);
  if (llt.info() != Eigen::Success) throw std::invalid_argument("gaussian target: cov must be positive definite");
  Eigen::MatrixXd q(d, d);
  const Eigen::Index block = 256;
  for (Eigen::Index j = 0; j < d; j += block) {
    if (keep_going && !keep_going()) return false;
    const Eigen::Index w = std::min(block, d - j);
    Eigen::MatrixXd b = Eigen::MatrixXd::Identity(d, d).middleCols(j, w);
    llt.solveInPlace(b);
    q.middleCols(j, w) = b;
  }
  prec = 0.5 * (q + q.transpose());
  return true;
}

// N(mean, cov): log p = -(x - mean)' Q (x - mean) / 2, Q = cov^-1; gradient -Q (x - mean). Made from cov (Q by
// gaussian_precision()) or from Q itself (GaussianTarget::Precision{}), so that evaluations at many points and
// the chains of a run share one factorization.
class GaussianTarget {
 public:
  struct Precision {};
  GaussianTarget(const Eigen::VectorXd& mean, const Eigen::MatrixXd& cov) : mean_(mean) {
    check_mean(cov.rows());
    gaussian_precision(cov, prec_);
  }
  GaussianTarget(const Eigen::VectorXd& mean, const Eigen::MatrixXd& prec, Precision) : mean_(mean), prec_(prec) {
    check_mean(prec.rows());
    if (prec.cols() != prec.rows()) throw std::invalid_argument("gaussian target: the precision must be d x d");
  }
  int dim() const { return static_cast<int>(mean_.size()); }
  double eval(const double* x, double* grad) const {
    const Eigen::Index d = mean_.size();
    const Eigen::VectorXd r = Eigen::Map<const Eigen::VectorXd>(x, d) - mean_;
    Eigen::Map<Eigen::VectorXd> g(grad, d);
    g.noalias() = -(prec_ * r);
    return 0.5 * r.dot(g);
  }

 private:
  void check_mean(Eigen::Index rows) const {
    const Eigen::Index d = mean_.size();
    if (d < 1) throw std::invalid_argument("gaussian target: mean must have length >= 1");
    if (rows != d) throw std::invalid_argument("gaussian target: cov must be d x d");
    if (!mean_.allFinite()) throw std::invalid_argument("gaussian target: non-finite mean or cov");
  }
  Eigen::VectorXd mean_;
  Eigen::MatrixXd prec_;
};

// Whether a target is minibatched (has log_lik over rows: the BatchTarget of the file comment).
template <class T, class = void>
struct is_batch_target : std::false_type {};
template <class T>
struct is_batch_target<T, std::void_t<decltype(std::declval<const T&>().log_lik(
                              static_cast<const double*>(nullptr), static_cast<const long*>(nullptr), 0L,
                              static_cast<double*>(nullptr)))>> : std::true_type {};

// The control variates of a minibatched target: the centre x_hat and G_hat = sum_i grad log-lik_i(x_hat) over
// every row (empty: plain minibatch gradients). Made once per run, read by every chain.
struct BatchCv {
  Eigen::VectorXd center, grad;
  bool empty() const { return center.size() == 0; }
};

// The rows 0..N-1 (a full-data evaluation of a BatchTarget).
inline const std::vector<long>& all_rows(long N) {
  thread_local std::vector<long> rows;
  if (static_cast<long>(rows.size()) != N) {
    rows.resize(static_cast<std::size_t>(N));
    for (long i = 0; i < N; ++i) rows[static_cast<std::size_t>(i)] = i;
  }
  return rows;
}

// The full-data log posterior of a BatchTarget at x and its gradient (grad: d entries, written); lik_grad (when
// non-null) receives the log-likelihood's part of the gradient alone.
template <class Target>
double batch_full(const Target& t, const double* x, double* grad, double* lik_grad = nullptr) {
  const int d = t.dim();
  const long N = t.n_obs();
  std::vector<double> gl(static_cast<std::size_t>(d));
  const double lp = t.log_prior(x, grad);
  const double ll = t.log_lik(x, all_rows(N).data(), N, gl.data());
  for (int j = 0; j < d; ++j) grad[j] += gl[static_cast<std::size_t>(j)];
  if (lik_grad) std::copy(gl.begin(), gl.end(), lik_grad);
  return lp + ll;
}

struct BatchModeResult {
  BatchCv cv;
  math::LbfgsResult lbfgs;
};

// The control variates' centre: the mode of the full-data log posterior of a BatchTarget from x0, by L-BFGS
// (math::lbfgs_minimize on its negative; stop() polled once per iteration), and G_hat there.
template <class Target>
BatchModeResult batch_mode(const Target& t, const Eigen::VectorXd& x0, const math::LbfgsOptions& opt,
                           const std::function<bool()>& stop = std::function<bool()>()) {
  const int d = t.dim();
  if (x0.size() != d) throw std::invalid_argument("the mode's start must have one value per parameter");
  auto f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) {
    const double v = batch_full(t, x.data(), g.data());
    g = -g;
    return -v;
  };
  BatchModeResult out;
  Eigen::VectorXd x = x0;
  out.lbfgs = math::lbfgs_minimize(f, x, opt, stop);
  out.cv.center = x;
  out.cv.grad.resize(d);
  Eigen::VectorXd g(d);
  batch_full(t, x.data(), g.data(), out.cv.grad.data());
  return out;
}

// An affine reparametrization theta = center + L phi of a density target (`factor` L square and invertible;
// empty: none). The chain then runs on phi, whose log density is the target's at center + L phi (a constant
// Jacobian) and whose gradient is L' g; draws, the final state and the start are theta. With the Laplace
// centre and covariance L L' (R/sgmcmc_density.R) the chain sees a near-standard posterior: what the samplers
// that keep their own preconditioner (HAMCMC-SA, HAMCMC) get in place of the metric of the others.
struct Affine {
  Eigen::VectorXd center;
  Eigen::MatrixXd factor;
  bool empty() const { return factor.size() == 0; }
  void validate(int d) const {
    if (empty()) return;
    if (factor.rows() != d || factor.cols() != d || center.size() != d)
      throw std::invalid_argument("the reparametrization must have one centre value and one factor row per parameter");
    if (!factor.allFinite() || !center.allFinite()) throw std::invalid_argument("the reparametrization must be finite");
    if (!Eigen::FullPivLU<Eigen::MatrixXd>(factor).isInvertible())
      throw std::invalid_argument("the reparametrization's factor must be invertible");
  }
  Eigen::VectorXd to_phi(const Eigen::VectorXd& theta) const {
    return factor.fullPivLu().solve(theta - center);
  }
};

// The density model of the chain driver (see the file comment): a full-gradient Target or a BatchTarget.
template <class Target>
class DensityModel {
 public:
  using Ops = EigenOps;
  static constexpr bool kBatch = is_batch_target<Target>::value;
  DensityModel(const Target& target, const Eigen::VectorXd& init, rng::Stream& rs, const BatchCv* cv = nullptr,
               const Affine* affine = nullptr)
      : target_(target), rs_(rs), groups_(1), cv_(cv && !cv->empty() ? cv : nullptr),
        affine_(affine && !affine->empty() ? affine : nullptr) {
    const int d = target.dim();
    if (init.size() != d) throw std::invalid_argument("init must have one value per parameter of the target");
    if (affine_) {
      affine_->validate(d);
      theta_.resize(d);
    }
    if (cv_ && (cv_->center.size() != d || cv_->grad.size() != d))
      throw std::invalid_argument("the control variates' centre must have one value per parameter");
    Group<EigenOps>& g = groups_[0];
    g.sparse = false;
    g.prior_var = std::numeric_limits<double>::infinity();
    g.value = affine_ ? Eigen::ArrayXd(affine_->to_phi(init).array()) : Eigen::ArrayXd(init.array());
    g.grad = Eigen::ArrayXd::Zero(d);
    g.momentum = Eigen::ArrayXd::Zero(d);
    if constexpr (kBatch) {
      gp_.resize(d);
      gl_.resize(d);
      if (cv_) gc_.resize(d);
    }
  }
  std::vector<Group<EigenOps>>& groups() { return groups_; }
  long n_obs() const {
    if constexpr (kBatch) return target_.n_obs();
    else return 1;
  }
  double lik_terms() const { return static_cast<double>(n_obs()); }
  bool regression() const { return false; }
  rng::Stream& noise_rng() { return rs_; }
  double scalar(double v) const { return v; }
  // The gradient at the current values (a BatchTarget: on the minibatch idx[0..n)); minibatch() also records the
  // log density there. minibatch() is called once per iteration (chain.hpp), so it counts them: the first
  // iteration where the target returned a non-finite gradient (or log density) at a finite state is kept, which
  // tells a target that fails from a step that overflows (a non-finite state).
  void minibatch(const std::vector<long>& idx, long n, bool = false) {
    ++iter_;
    logd_ = evaluate(idx, n);
    note_nonfinite(true);
  }
  void gradient(const std::vector<long>& idx, long n) {
    evaluate(idx, n);
    note_nonfinite(false);
  }
  double resid_ss() const { return 0.0; }
  double log_density() const { return logd_; }
  // The current point on the target's scale (theta = center + L phi under a reparametrization).
  Eigen::ArrayXd value() const {
    if (affine_) return (affine_->center + affine_->factor * groups_[0].value.matrix()).array();
    return groups_[0].value;
  }
  long bad_gradient_at() const { return bad_grad_at_; }
  long bad_log_density_at() const { return bad_logd_at_; }

 private:
  const Target& target_;
  rng::Stream& rs_;
  std::vector<Group<EigenOps>> groups_;
  const BatchCv* cv_ = nullptr;
  const Affine* affine_ = nullptr;
  Eigen::ArrayXd gp_, gl_, gc_;  // a BatchTarget's prior, minibatch and centre gradients
  Eigen::VectorXd theta_;  // under a reparametrization: the point on the target's scale
  double logd_ = std::numeric_limits<double>::quiet_NaN();
  long iter_ = 0, bad_grad_at_ = 0, bad_logd_at_ = 0;

  double evaluate(const std::vector<long>& idx, long n) {
    Group<EigenOps>& g = groups_[0];
    if (!affine_) return evaluate_at(g.value.data(), g.grad, idx, n);
    theta_ = affine_->center + affine_->factor * g.value.matrix();
    Eigen::ArrayXd gt(theta_.size());
    const double ld = evaluate_at(theta_.data(), gt, idx, n);
    g.grad = (affine_->factor.transpose() * gt.matrix()).array();
    return ld;
  }
  // The log density at x (the target's scale) and its gradient into grad.
  double evaluate_at(const double* x, Eigen::ArrayXd& grad, const std::vector<long>& idx, long n) {
    if constexpr (kBatch) {
      const long N = target_.n_obs();
      const double scale = static_cast<double>(N) / static_cast<double>(n);
      const double lp = target_.log_prior(x, gp_.data());
      const double ll = target_.log_lik(x, idx.data(), n, gl_.data());
      if (cv_ && n < N) {
        target_.log_lik(cv_->center.data(), idx.data(), n, gc_.data());
        grad = gp_ + cv_->grad.array() + scale * (gl_ - gc_);
      } else {
        grad = gp_ + scale * gl_;
      }
      return lp + scale * ll;
    } else {
      (void)idx;
      (void)n;
      return target_.eval(x, grad.data());
    }
  }

  void note_nonfinite(bool with_logd) {
    const Group<EigenOps>& g = groups_[0];
    if ((bad_grad_at_ && (bad_logd_at_ || !with_logd)) || !g.value.allFinite()) return;
    if (!bad_grad_at_ && !g.grad.allFinite()) bad_grad_at_ = iter_;
    if (with_logd && !bad_logd_at_ && !std::isfinite(logd_)) bad_logd_at_ = iter_;
  }
};

// Trace columns of a density chain.
enum DensityTraceCol { DT_ITER = 0, DT_LOGD, DT_EPS, DT_TAU, DT_DRIFT, DT_NOISE, DT_GAMMA, DT_NCOL };

struct DensityChainResult {
  Eigen::MatrixXd draws;   // saved x d
  Eigen::MatrixXd trace;   // traced x DT_NCOL
  Eigen::VectorXd state;   // final (or last good) state
  long saved = 0, traced = 0, iterations_done = 0;
  bool diverged = false;
  long diverged_at = 0;
  std::string message;
  long bad_gradient_at = 0;     // first iteration with a non-finite gradient at a finite state (0: none)
  long bad_log_density_at = 0;  // the same for the log density
};

class DensityRecorder {
 public:
  DensityRecorder(int d, const Control& ctl) {
    res.draws.resize(ctl.n_saved(), d);
    res.trace.resize(ctl.n_traced(), DT_NCOL);
  }
  template <class Model>
  void save(const Model& model, double) {
    res.draws.row(res.saved++) = model.value().matrix().transpose();
  }
  template <class Model>
  void trace(const Model& model, long k, double, double eps, double tau, const StepStats& st) {
    const long t = res.traced++;
    res.trace(t, DT_ITER) = static_cast<double>(k);
    res.trace(t, DT_LOGD) = model.log_density();
    res.trace(t, DT_EPS) = eps;
    res.trace(t, DT_TAU) = tau;
    res.trace(t, DT_DRIFT) = st.drift_ratio;
    res.trace(t, DT_NOISE) = st.noise_ratio;
    res.trace(t, DT_GAMMA) = st.gamma;
  }
  template <class Model>
  void finish(const Model& model, double, const ChainStatus& st) {
    res.iterations_done = st.iterations_done;
    res.diverged = st.diverged;
    res.diverged_at = st.diverged_at;
    res.message = st.message;
    res.bad_gradient_at = model.bad_gradient_at();
    res.bad_log_density_at = model.bad_log_density_at();
    res.draws.conservativeResize(res.saved, res.draws.cols());
    res.trace.conservativeResize(res.traced, DT_NCOL);
    res.state = model.value().matrix();
  }
  DensityChainResult res;
};

struct DensityRunResult {
  std::vector<DensityChainResult> chains;
  bool interrupted = false;
};

// The settings a density run needs (no minibatches, no latents); thrown as std::invalid_argument otherwise.
inline void validate_density_control(const Control& ctl) {
  ctl.validate();
  if (ctl.method != Method::none)
    throw std::invalid_argument("a density target has no SSGL latent variables: method must be \"none\"");
  if (ctl.pruning.on) throw std::invalid_argument("a density target is not pruned");
}

// Runs ctl.chains chains of `target` from the columns of init (d x chains); chain c uses
// rng::Stream(run.seed, chain_offset + c). inline_run: on the calling thread (run_chains' inline mode; a target
// that may only be evaluated there), else on run.threads worker threads (the target's eval must then be
// thread-safe). The draws do not depend on the mode nor on the number of threads. A BatchTarget runs on
// minibatches of ctl.batch_size rows, with control variates when cv is given and not empty; a full-gradient
// target needs batch_size 1 (no minibatches).
template <class Target>
DensityRunResult run_density(const Target& target, const Control& ctl, const parallel::RunSettings& run,
                             const Eigen::MatrixXd& init, const parallel::Monitor& monitor = parallel::Monitor(),
                             bool inline_run = false, const BatchCv* cv = nullptr, const Affine* affine = nullptr) {
  validate_density_control(ctl);
  if constexpr (is_batch_target<Target>::value) {
    if (target.n_obs() < 1) throw std::invalid_argument("a minibatched target needs at least one row");
    if (ctl.batch_size > target.n_obs()) throw std::invalid_argument("batch_size must not exceed the rows of the target");
  }
  const int d = target.dim();
  if (init.rows() != d || init.cols() != ctl.chains) throw std::invalid_argument("init must be d x chains");
  if (affine) affine->validate(d);
  DensityRunResult out;
  out.chains.resize(static_cast<std::size_t>(ctl.chains));
  for (int c = 0; c < ctl.chains; ++c) {  // a chain that never runs (a stop before it): no draws, still at init
    DensityChainResult& r = out.chains[static_cast<std::size_t>(c)];
    r.draws.resize(0, d);
    r.trace.resize(0, DT_NCOL);
    r.state = init.col(c);
  }
  auto chain = [&](std::size_t c, std::atomic<long>& progress, const parallel::StopToken& stop) {
    rng::Stream rs(run.seed, static_cast<std::uint64_t>(ctl.chain_offset + static_cast<long>(c)));
    DensityModel<Target> model(target, init.col(static_cast<long>(c)), rs, cv, affine);
    DensityRecorder rec(d, ctl);
    run_chain(model, rec, ctl, rs, progress, stop);
    out.chains[c] = std::move(rec.res);
  };
  out.interrupted = run_chains(ctl.chains, run.threads, chain, monitor, inline_run).interrupted;
  return out;
}

// n exact draws of the banana target (n x 2), stream (seed, 0): b1 by inverse CDF of its marginal,
// p(b1) proportional to exp(-b1^4 / 10) (b2 | b1 ~ N(b1^2 / 4 - 1.2, 1/16) integrates to a constant), tabulated on
// a grid of `grid` points over [-6, 6] (mass outside: exp(-129.6)), linear interpolation of the CDF (trapezoid
// rule); b2 | b1 Gaussian.
inline Eigen::MatrixXd banana_exact(long n, std::uint64_t seed, int grid = 20001) {
  if (n < 0 || grid < 3) throw std::invalid_argument("banana_exact: n >= 0, grid >= 3");
  const double lo = -6.0, hi = 6.0, h = (hi - lo) / (grid - 1);
  std::vector<double> x(static_cast<std::size_t>(grid)), cdf(static_cast<std::size_t>(grid));
  for (int i = 0; i < grid; ++i) x[i] = lo + h * i;
  cdf[0] = 0.0;
  for (int i = 1; i < grid; ++i) {
    const double f0 = std::exp(-std::pow(x[i - 1], 4) / 10.0), f1 = std::exp(-std::pow(x[i], 4) / 10.0);
    cdf[i] = cdf[i - 1] + 0.5 * h * (f0 + f1);
  }
  const double total = cdf[grid - 1];
  for (auto& v : cdf) v /= total;
  rng::Stream rs(seed, 0);
  Eigen::MatrixXd out(n, 2);
  for (long s = 0; s < n; ++s) {
    const double u = rs.uniform();
    const auto it = std::upper_bound(cdf.begin(), cdf.end(), u);
    std::size_t j = static_cast<std::size_t>(it - cdf.begin());
    if (j < 1) j = 1;
    if (j >= cdf.size()) j = cdf.size() - 1;
    // within [x_{j-1}, x_j] the density is nearly linear: invert the linear interpolation of the CDF
    const double w = (u - cdf[j - 1]) / (cdf[j] - cdf[j - 1]);
    const double b1 = x[j - 1] + w * h;
    const double b2 = b1 * b1 / 4.0 - 1.2 + 0.25 * Ziggurat::normal(rs);
    out(s, 0) = b1;
    out(s, 1) = b2;
  }
  return out;
}

}  // namespace sgmcmc
}  // namespace scalebayes
