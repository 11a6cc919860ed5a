// scalebayes/sgmcmc/glm.hpp -- adaptive empirical-Bayes SG-MCMC (SGLD-SA / SGHMC-SA) for linear and logistic
// regression with SSGL priors (and Poisson regression, log link): the Eigen model, output management and the multi-chain driver.
//
// Coefficients are held in two groups: the sparse group (SSGL prior) and the non-sparse group (N(0, sigma0^2)
// prior; the intercept always lives here). The engine transposes X once into a P x N matrix whose rows are the
// sparse columns, then the non-sparse columns, then the intercept, so each observation is one contiguous column
// and a minibatch costs one fused pass per observation (linear predictor, residual, gradient).
//
// The chain itself is the generic driver of chain.hpp: GlmModel is its Model (two groups: the sparse and the
// non-sparse coefficients; the minibatch pass is one fused loop per observation: linear predictor, residual,
// gradient), GlmRecorder its Recorder (draws of the kept coefficients, running posterior means / second moments,
// predictive averages for x_test, and a trace of sigma, delta, mean rho, the full-data log-likelihood, eps, tau).
// Header-only, Eigen + std, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "scalebayes/math/logistic.hpp"
#include "scalebayes/math/family.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/sgmcmc/chain.hpp"
#include "scalebayes/sgmcmc/simd.hpp"

namespace scalebayes {
namespace sgmcmc {

// Trace columns.
enum TraceCol { T_ITER = 0, T_SIGMA, T_DELTA, T_MEANRHO, T_LOGLIK, T_EPS, T_TAU, T_DRIFT, T_NOISE, T_GAMMA, T_NCOL };

struct ChainResult {
  Eigen::MatrixXd draws;        // saved x keep.size()
  Eigen::VectorXd post_mean;    // P, output order
  Eigen::VectorXd post_sd;      // P
  Eigen::MatrixXd trace;        // n_trace x T_NCOL
  Eigen::VectorXd beta;         // final (or last good) state, output order
  Eigen::VectorXd rho;          // final rho, output order (NaN for non-sparse coefficients)
  Eigen::VectorXd rho_mean;     // rho averaged over the kept iterations, output order (NaN: non-sparse, none kept)
  Eigen::VectorXd kappa0, kappa1;  // final kappa, output order (NaN for non-sparse coefficients)
  double sigma = 0.0, delta = 0.0;
  Eigen::VectorXd pred_link, pred_mean;  // running predictive averages for x_test
  long saved = 0, traced = 0, iterations_done = 0;
  bool diverged = false;
  long diverged_at = 0;
  std::string message;
};

// The data in engine order.
struct GlmData {
  Eigen::MatrixXd xt;     // P x N
  Eigen::VectorXd y;      // N
  Eigen::MatrixXd xtest;  // P x m (may have 0 columns)
  long ps = 0, pd = 0;    // sizes of the sparse / non-sparse groups
  std::vector<long> out_to_engine;  // output index -> engine index
  std::vector<long> order;          // engine index -> output index
  bool intercept = false;
  Family family = Family::gaussian;
};

// The rows to predict (x_test: m x p, may have 0 rows) in engine order.
inline void set_test_rows(GlmData& d, const Eigen::Ref<const Eigen::MatrixXd>& x_test) {
  const long P = static_cast<long>(d.order.size()), m = x_test.rows();
  d.xtest.resize(P, m);
  if (!m) return;
  for (long e = 0; e < P; ++e) {
    const long o = d.order[e];
    if (d.intercept && o == 0) d.xtest.row(e).setOnes();
    else d.xtest.row(e) = x_test.col(o - (d.intercept ? 1 : 0)).transpose();
  }
}

// X: N x p; sparse: length p (nonzero = SSGL prior); output order = (intercept, x columns).
inline GlmData make_data(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                         const std::vector<int>& sparse, bool intercept,
                         const Eigen::Ref<const Eigen::MatrixXd>& x_test, Family family) {
  const long N = x.rows(), p = x.cols();
  if (N < 1 || y.size() != N) throw std::invalid_argument("x and y must have the same number of rows (>= 1)");
  if (static_cast<long>(sparse.size()) != p) throw std::invalid_argument("sparse mask must have one entry per column");
  if (x_test.cols() != p && x_test.rows() > 0) throw std::invalid_argument("x_test must have as many columns as x");
  GlmData d;
  d.family = family;
  const long P = p + (intercept ? 1 : 0);
  std::vector<long> order;  // engine index -> output index
  for (long j = 0; j < p; ++j)
    if (sparse[j]) order.push_back(j + (intercept ? 1 : 0));
  d.ps = static_cast<long>(order.size());
  for (long j = 0; j < p; ++j)
    if (!sparse[j]) order.push_back(j + (intercept ? 1 : 0));
  if (intercept) order.push_back(0);
  d.pd = P - d.ps;
  d.out_to_engine.assign(P, 0);
  for (long e = 0; e < P; ++e) d.out_to_engine[order[e]] = e;
  d.order = order;
  d.intercept = intercept;
  // the transpose in blocks of rows, so that the strided writes of a P x N matrix stay in cache
  d.xt.resize(P, N);
  constexpr long kBlock = 256;
  for (long i0 = 0; i0 < N; i0 += kBlock) {
    const long i1 = std::min(N, i0 + kBlock);
    for (long e = 0; e < P; ++e) {
      const long o = order[e];
      if (intercept && o == 0) {
        for (long i = i0; i < i1; ++i) d.xt(e, i) = 1.0;
      } else {
        const long j = o - (intercept ? 1 : 0);
        for (long i = i0; i < i1; ++i) d.xt(e, i) = x(i, j);
      }
    }
  }
  set_test_rows(d, x_test);
  d.y = y;
  if (family == Family::binomial) {
    for (long i = 0; i < N; ++i)
      if (!(y[i] == 0.0 || y[i] == 1.0)) throw std::invalid_argument("binomial y must be 0 or 1");
  }
  if (family == Family::poisson) {
    for (long i = 0; i < N; ++i)
      if (!(std::isfinite(y[i]) && y[i] >= 0.0 && y[i] == std::floor(y[i])))
        throw std::invalid_argument("poisson y must be non-negative whole numbers (counts)");
  }
  return d;
}

using math::log1pexp;
inline double inv_logit(double eta) { return math::expit(eta); }

using Grp = Group<EigenOps>;

inline double linpred(const GlmData& d, long i, const Grp& gs, const Grp& gd) {
  const double* col = d.xt.data() + i * d.xt.rows();
  double eta = 0.0;
  if (d.ps) eta += simd::dot(col, gs.value.data(), d.ps);
  if (d.pd) eta += simd::dot(col + d.ps, gd.value.data(), d.pd);
  return eta;
}

// Control-variate gradients (Baker, Fearnhead, Fox & Nemeth 2019, "SGLD-CV"): at a fixed centre beta_hat
// (a mode found before the run), the full-data residual-form gradient G_hat = sum_i r_i(beta_hat) x_i and every
// row's residual r_i(beta_hat) are computed once; a minibatch then estimates
//   G_hat + (N/n) sum_{i in B} (r_i(beta) - r_i(beta_hat)) x_i,
// unbiased like the plain estimate, with a variance that shrinks with ||beta - beta_hat||^2 (about the
// posterior's variance, 1 / N per coordinate) instead of staying O(N^2 / n): the minibatch noise that forces
// plain SGLD's step down by n / N at large N. The minibatch's residual sum of squares (the SA of sigma) stays the
// plain (N/n) sum_B r_i^2: its control-variate form RSS_hat + (N/n) sum_B (r_i^2 - r_hat_i^2) can be negative far
// from the centre, and on ames (2,344 rows, 389-row minibatches, from the sparse start) its noise sent sigma's
// SA to 0 and every warm-up pilot diverged; the plain one is never negative and its relative sd is sqrt(2 / n).
// Shared read-only by every chain.
struct CvState {
  Eigen::VectorXd r_hat;            // N: y_i - mu(x_i' beta_hat)
  Eigen::ArrayXd g_s, g_d;          // the full gradient at beta_hat, sparse / non-sparse group (engine order)
  bool empty() const { return r_hat.size() == 0; }
};

// The Poisson log link's clamp: a linear predictor above kPoissonEtaMax (a mean of e^40 = 2.4e17, beyond any
// count a double holds exactly) is read as kPoissonEtaMax in the mean, the gradient and the log-likelihood, so a
// chain that runs away gives large finite numbers (caught by the loss rule of divergence, chain.hpp) instead of
// Inf / NaN. Below it the Poisson terms are exact; eta has no lower clamp (exp underflows to 0 harmlessly).
constexpr double kPoissonEtaMax = 40.0;
inline double poisson_eta(double eta) { return eta < kPoissonEtaMax ? eta : kPoissonEtaMax; }

// The mean of the response at linear predictor eta: identity (gaussian), logistic (binomial), exp (poisson,
// clamped: poisson_eta()).
inline double mean_of(Family f, double eta) {
  switch (f) {
    case Family::gaussian: return eta;
    case Family::poisson: return std::exp(poisson_eta(eta));
    default: return math::expit(eta);
  }
}

// Fused minibatch pass: acc_s, acc_d = (N/n) sum r_i x_i with r_i = y_i - mu_i; returns (N/n) sum r_i^2. With a
// control variate (cv non-null and not empty) the control-variate estimates of both (CvState).
inline double minibatch_pass(const GlmData& d, const std::vector<long>& idx, long n, Grp& gs, Grp& gd,
                             const CvState* cv = nullptr) {
  const double scale = static_cast<double>(d.y.size()) / static_cast<double>(n);
  const bool use_cv = cv && !cv->empty();
  gs.grad.setZero();
  gd.grad.setZero();
  double rss = 0.0;
  for (long t = 0; t < n; ++t) {
    const long i = idx[t];
    const double eta = linpred(d, i, gs, gd);
    double r = d.y[i] - mean_of(d.family, eta);
    rss += r * r;
    if (use_cv) r -= cv->r_hat[i];
    const double* col = d.xt.data() + i * d.xt.rows();
    if (d.ps) simd::axpy(r, col, gs.grad.data(), d.ps);
    if (d.pd) simd::axpy(r, col + d.ps, gd.grad.data(), d.pd);
  }
  gs.grad *= scale;
  gd.grad *= scale;
  if (use_cv) {
    gs.grad += cv->g_s;
    gd.grad += cv->g_d;
  }
  return scale * rss;
}

// The control variate's state at beta_hat (output order, one entry per coefficient).
inline CvState make_cv_state(const GlmData& d, const std::vector<double>& center) {
  CvState cv;
  const long P = d.ps + d.pd, N = d.y.size();
  if (center.empty()) return cv;
  if (static_cast<long>(center.size()) != P) throw std::invalid_argument("cv_center must have one entry per coefficient");
  Grp gs, gd;
  gs.value.resize(d.ps);
  gd.value.resize(d.pd);
  for (long o = 0; o < P; ++o) {
    if (!std::isfinite(center[o])) throw std::invalid_argument("cv_center must be finite");
    const long e = d.out_to_engine[o];
    if (e < d.ps) gs.value[e] = center[o];
    else gd.value[e - d.ps] = center[o];
  }
  cv.r_hat.resize(N);
  cv.g_s = Eigen::ArrayXd::Zero(d.ps);
  cv.g_d = Eigen::ArrayXd::Zero(d.pd);
  for (long i = 0; i < N; ++i) {
    const double r = d.y[i] - mean_of(d.family, linpred(d, i, gs, gd));
    cv.r_hat[i] = r;
    const double* col = d.xt.data() + i * d.xt.rows();
    if (d.ps) simd::axpy(r, col, cv.g_s.data(), d.ps);
    if (d.pd) simd::axpy(r, col + d.ps, cv.g_d.data(), d.pd);
  }
  return cv;
}

// Full-data gradients of a gaussian regression from its Gram matrix: with every row in each minibatch (the
// default up to 2,000 rows) the gradient sum_i r_i x_i = X'y - X'X beta and the residual sum of squares are
// functions of the P x P matrix G = X'X and X'y, so an iteration costs O(P^2) instead of a pass over the N x P
// data (ames, N = 2,344, P = 35: 67 times fewer multiply-adds per gradient). They are expanded about a reference
// beta_0 (the ridge-stabilized least-squares fit), with r_0 = y - X beta_0, c_0 = X'r_0 and d = beta - beta_0:
//   gradient = c_0 - G d,    RSS = r_0'r_0 - 2 d'c_0 + d'G d = RSS_0 - d'(c_0 + gradient),
// so that the RSS, whose direct expansion y'y - 2 beta'X'y + beta'G beta would cancel digits when the response
// has a large mean, is a small correction of the smallest residual sum of squares. Equal to the row pass up to
// rounding. Shared read-only by every chain.
struct GramState {
  Eigen::MatrixXd G;    // P x P, engine order
  Eigen::VectorXd c0;   // P: X'r_0
  Eigen::VectorXd b0;   // P: the reference coefficients
  double rss0 = 0.0;    // r_0'r_0
  bool empty() const { return G.size() == 0; }
};

// Whether the Gram form pays: a gaussian regression whose minibatch is every row, with fewer coefficients than
// half the rows (O(P^2) against O(N P) per iteration), at most 2,000 of them (G's memory: 32 MB), and a run of
// at least P iterations (G costs N P^2 once, P iterations' worth of row passes).
inline bool gram_applies(const GlmData& d, long batch, long iterations) {
  const long P = d.ps + d.pd, N = d.y.size();
  return d.family == Family::gaussian && batch >= N && 2 * P <= N && P <= 2000 && iterations >= P;
}

inline GramState make_gram_state(const GlmData& d) {
  GramState gm;
  const long P = d.ps + d.pd;
  gm.G = Eigen::MatrixXd::Zero(P, P);
  gm.G.selfadjointView<Eigen::Lower>().rankUpdate(d.xt);
  gm.G = gm.G.selfadjointView<Eigen::Lower>();
  const Eigen::VectorXd xty = d.xt * d.y;
  // the reference: least squares with a ridge of 1e-10 of the mean diagonal (only to keep a rank-deficient X
  // solvable; beta_0 needs to be near the data's fit, not exact)
  double ridge = 1e-10 * gm.G.diagonal().mean();
  if (!(ridge > 0.0)) ridge = 1e-10;
  Eigen::MatrixXd A = gm.G;
  A.diagonal().array() += ridge;
  gm.b0 = A.ldlt().solve(xty);
  if (!gm.b0.allFinite()) gm.b0.setZero();
  const Eigen::VectorXd r0 = d.y - d.xt.transpose() * gm.b0;
  gm.rss0 = r0.squaredNorm();
  gm.c0 = d.xt * r0;
  return gm;
}

// The Gram form of minibatch_pass() with every row: grad = X'(y - X beta) in the two groups; returns the RSS.
inline double gram_pass(const GramState& gm, Grp& gs, Grp& gd, Eigen::VectorXd& work) {
  const long ps = gs.value.size(), pd = gd.value.size();
  work.resize(ps + pd);
  work.head(ps) = gs.value.matrix();
  work.tail(pd) = gd.value.matrix();
  work -= gm.b0;
  Eigen::VectorXd g = gm.c0;
  g.noalias() -= gm.G.selfadjointView<Eigen::Lower>() * work;
  gs.grad = g.head(ps).array();
  gd.grad = g.tail(pd).array();
  const double rss = gm.rss0 - work.dot(gm.c0 + g);
  return rss > 0.0 ? rss : 0.0;
}

// The full-data log-likelihood; `loss` (when given) receives the training loss per example of the loss rule of
// divergence (chain.hpp): half the mean squared residual (gaussian, free of sigma, so a chain whose sigma grows
// with its residuals is still seen) or the mean negative log-likelihood (binomial; poisson, with its log y! terms, so that it is >= 0). With max_rows > 0 and more
// rows than that, an estimate from every (N / max_rows)-th row scaled to N (the trace's, so that a trace point of
// a million-row minibatch run costs what one of 10,000 rows does instead of a full pass per point: 1,000 full
// passes per chain were 10 s at N = 1e6, p = 20).
inline double full_loglik(const GlmData& d, const Grp& gs, const Grp& gd, double sigma, double* loss = nullptr,
                          long max_rows = 0) {
  const long N = d.y.size();
  const long stride = max_rows > 0 && N > max_rows ? (N + max_rows - 1) / max_rows : 1;
  double ll = 0.0, rss = 0.0;
  long used = 0;
  for (long i = 0; i < N; i += stride, ++used) {
    const double eta = linpred(d, i, gs, gd);
    if (d.family == Family::gaussian) {
      const double r = d.y[i] - eta;
      ll += -0.5 * std::log(2.0 * M_PI * sigma * sigma) - r * r / (2.0 * sigma * sigma);
      rss += r * r;
    } else if (d.family == Family::poisson) {
      const double e = poisson_eta(eta);
      ll += d.y[i] * e - std::exp(e) - std::lgamma(d.y[i] + 1.0);
    } else {
      ll += d.y[i] * eta - log1pexp(eta);
    }
  }
  if (stride > 1 && used > 0) {
    const double f = static_cast<double>(N) / static_cast<double>(used);
    ll *= f;
    rss *= f;
  }
  if (loss) *loss = N ? (d.family == Family::gaussian ? 0.5 * rss : -ll) / static_cast<double>(N) : 0.0;
  return ll;
}

// The rows a trace point's log-likelihood reads at most (full_loglik).
constexpr long kTraceRows = 10000;

// The GLM as a Model of the chain driver (chain.hpp). Groups: [0] the sparse coefficients, [1] the others (and
// the intercept), in engine order. The Langevin noise comes from the chain's own stream (the one that also
// draws the minibatches), so a chain is a function of (seed, chain index).
class GlmModel {
 public:
  using Ops = EigenOps;
  // beta_init in output order.
  GlmModel(const GlmData& d, const Control& ctl, const Eigen::VectorXd& beta_init, rng::Stream& rs,
           const CvState* cv = nullptr, const GramState* gram = nullptr)
      : d_(d), rs_(rs), groups_(2), cv_(cv), gram_(gram) {
    Grp& gs = groups_[0];
    Grp& gd = groups_[1];
    gs.sparse = true;
    gd.sparse = false;
    gd.prior_var = ctl.prior_var;
    gs.value.resize(d.ps);
    gd.value.resize(d.pd);
    const long P = d.ps + d.pd;
    for (long o = 0; o < P; ++o) {
      const long e = d.out_to_engine[o];
      if (e < d.ps) gs.value[e] = beta_init[o];
      else gd.value[e - d.ps] = beta_init[o];
    }
    for (Grp& g : groups_) {
      g.grad = Eigen::ArrayXd::Zero(g.value.size());
      g.momentum = Eigen::ArrayXd::Zero(g.value.size());
    }
  }
  std::vector<Grp>& groups() { return groups_; }
  long n_obs() const { return static_cast<long>(d_.y.size()); }
  double lik_terms() const { return static_cast<double>(d_.y.size()); }
  bool regression() const { return d_.family == Family::gaussian; }
  rng::Stream& noise_rng() { return rs_; }
  double scalar(double v) const { return v; }
  // The minibatch gradient (the GLM has nothing to replay: `replayable` changes nothing) and the same gradient at
  // the current values without touching the recorded residual sum of squares.
  void minibatch(const std::vector<long>& idx, long n, bool = false) {
    rss_ = pass(idx, n);
  }
  void gradient(const std::vector<long>& idx, long n) { pass(idx, n); }
  double resid_ss() const { return rss_; }

  const GlmData& data() const { return d_; }
  const Grp& sparse_group() const { return groups_[0]; }
  const Grp& dense_group() const { return groups_[1]; }
  // current coefficients in engine order
  void gather(Eigen::VectorXd& ev) const {
    ev.head(d_.ps) = groups_[0].value.matrix();
    ev.tail(d_.pd) = groups_[1].value.matrix();
  }

 private:
  const GlmData& d_;
  rng::Stream& rs_;
  std::vector<Grp> groups_;
  const CvState* cv_ = nullptr;  // control-variate gradients when set (shared by the chains, read-only)
  const GramState* gram_ = nullptr;  // Gram-form full-data gradients when set (shared, read-only)
  Eigen::VectorXd work_;
  double rss_ = 0.0;
  double pass(const std::vector<long>& idx, long n) {
    if (gram_ && n >= static_cast<long>(d_.y.size())) return gram_pass(*gram_, groups_[0], groups_[1], work_);
    return minibatch_pass(d_, idx, n, groups_[0], groups_[1], cv_);
  }
};

// The GLM chain's output (a Recorder of the chain driver).
class GlmRecorder {
 public:
  GlmRecorder(const GlmData& d, const Control& ctl) : d_(d), ctl_(ctl) {
    const long P = d.ps + d.pd, m = d.xtest.cols();
    res.draws.resize(ctl.n_saved(), static_cast<long>(ctl.keep.size()));
    res.trace.resize(ctl.n_traced(), T_NCOL);
    sum1_ = Eigen::VectorXd::Zero(P);
    sum2_ = Eigen::VectorXd::Zero(P);
    rho_sum_ = Eigen::VectorXd::Zero(d.ps);
    plink_ = Eigen::VectorXd::Zero(m);
    pmean_ = Eigen::VectorXd::Zero(m);
    ev_.resize(P);
  }
  void save(const GlmModel& model, double) {
    model.gather(ev_);
    const long s = res.saved++;
    const long K = static_cast<long>(ctl_.keep.size());
    for (long c = 0; c < K; ++c) res.draws(s, c) = ev_[d_.out_to_engine[ctl_.keep[c]]];
    sum1_ += ev_;
    sum2_ += ev_.cwiseAbs2();
    if (d_.ps) rho_sum_ += model.sparse_group().rho.matrix();
    if (d_.xtest.cols()) {
      const Eigen::VectorXd eta = d_.xtest.transpose() * ev_;
      plink_ += eta;
      if (d_.family == Family::gaussian) pmean_ += eta;
      else
        for (long i = 0; i < eta.size(); ++i) pmean_[i] += mean_of(d_.family, eta[i]);
    }
  }
  void trace(const GlmModel& model, long k, double sigma, double eps, double tau, const StepStats& st) {
    const Grp& gs = model.sparse_group();
    const long t = res.traced++;
    res.trace(t, T_ITER) = static_cast<double>(k);
    res.trace(t, T_SIGMA) = sigma;
    res.trace(t, T_DELTA) = gs.delta;
    res.trace(t, T_MEANRHO) = d_.ps ? gs.rho.mean() : NAN;
    res.trace(t, T_LOGLIK) = full_loglik(d_, gs, model.dense_group(), sigma, &last_loss_, kTraceRows);
    res.trace(t, T_EPS) = eps;
    res.trace(t, T_TAU) = tau;
    res.trace(t, T_DRIFT) = st.drift_ratio;
    res.trace(t, T_NOISE) = st.noise_ratio;
    res.trace(t, T_GAMMA) = st.gamma;
  }
  void finish(const GlmModel& model, double sigma, const ChainStatus& st) {
    const long P = d_.ps + d_.pd, m = d_.xtest.cols();
    const Grp& gs = model.sparse_group();
    res.iterations_done = st.iterations_done;
    res.diverged = st.diverged;
    res.diverged_at = st.diverged_at;
    res.message = st.message;
    res.draws.conservativeResize(res.saved, res.draws.cols());
    res.trace.conservativeResize(res.traced, T_NCOL);
    res.post_mean.resize(P);
    res.post_sd.resize(P);
    res.beta.resize(P);
    res.rho.resize(P);
    res.rho_mean.resize(P);
    res.kappa0.resize(P);
    res.kappa1.resize(P);
    model.gather(ev_);
    const double ns = static_cast<double>(res.saved);
    for (long o = 0; o < P; ++o) {
      const long e = d_.out_to_engine[o];
      if (res.saved > 0) {
        const double mu = sum1_[e] / ns;
        res.post_mean[o] = mu;
        res.post_sd[o] = res.saved > 1 ? std::sqrt(std::max(0.0, (sum2_[e] - ns * mu * mu) / (ns - 1.0))) : NAN;
      } else {
        res.post_mean[o] = NAN;
        res.post_sd[o] = NAN;
      }
      res.beta[o] = ev_[e];
      res.rho[o] = e < d_.ps ? gs.rho[e] : NAN;
      res.rho_mean[o] = e < d_.ps && res.saved > 0 ? rho_sum_[e] / ns : NAN;
      res.kappa0[o] = e < d_.ps ? gs.kappa0[e] : NAN;
      res.kappa1[o] = e < d_.ps ? gs.kappa1[e] : NAN;
    }
    res.sigma = sigma;
    res.delta = gs.delta;
    if (m && res.saved > 0) {
      res.pred_link = plink_ / ns;
      res.pred_mean = pmean_ / ns;
    } else {
      res.pred_link = Eigen::VectorXd::Constant(m, NAN);
      res.pred_mean = Eigen::VectorXd::Constant(m, NAN);
    }
  }
  // The training loss per example at the last trace point (full_loglik): the loss rule of divergence.
  double last_loss() const { return last_loss_; }
  ChainResult res;

 private:
  const GlmData& d_;
  const Control& ctl_;
  Eigen::VectorXd sum1_, sum2_, plink_, pmean_, ev_, rho_sum_;
  double last_loss_ = 0.0;
};

struct RunResult {
  std::vector<ChainResult> chains;
  bool interrupted = false;
};

// Run ctl.chains chains on run.threads threads; chain c uses rng::Stream(run.seed, chain_offset + c), so the
// result does not depend on the number of threads, nor on how chains are split into chunks across processes.
// monitor(iterations_done) is called on the calling thread about every 100 ms (iterations of all chains); it
// returns false to stop (each chain then stops within 256 iterations and the result has interrupted = true).
// cv_given: a control-variate state made once for several runs on the same data and centre (make_cv_state();
// the warm-up's pilots and the chains), used when ctl.cv_center is set; else made here from ctl.cv_center.
// gram_given: the Gram form made once likewise (make_gram_state()), used when gram_applies(); else made here.
inline RunResult run_sgld_sa(const GlmData& d, const Control& ctl, const parallel::RunSettings& run,
                             const Eigen::MatrixXd& beta_init, const parallel::Monitor& monitor = parallel::Monitor(),
                             const CvState* cv_given = nullptr, const GramState* gram_given = nullptr) {
  ctl.validate();
  const long P = d.ps + d.pd;
  if (beta_init.rows() != P || beta_init.cols() != ctl.chains)
    throw std::invalid_argument("beta_init must be P x chains");
  for (long c : ctl.keep)
    if (c < 0 || c >= P) throw std::invalid_argument("keep index out of range");
  // the metric is given in output order: into engine order (rows of the factor, entries of the diagonal)
  Control ectl = ctl;
  if (!ctl.metric.empty()) {
    if (ctl.metric.dim() != P) throw std::invalid_argument("metric must have one row per coefficient");
    for (long o = 0; o < P; ++o) {
      const long e = d.out_to_engine[o];
      if (ctl.metric.factor.size()) ectl.metric.factor.row(e) = ctl.metric.factor.row(o);
      else ectl.metric.diag[e] = ctl.metric.diag[o];
    }
  }
  if (!ctl.rho_start.empty()) {
    if (static_cast<long>(ctl.rho_start.size()) != P) throw std::invalid_argument("rho_start must have one entry per coefficient");
    for (long o = 0; o < P; ++o) ectl.rho_start[d.out_to_engine[o]] = ctl.rho_start[o];
  }
  const CvState cv_own = cv_given ? CvState() : make_cv_state(d, ctl.cv_center);
  const CvState& cv = cv_given && !ctl.cv_center.empty() ? *cv_given : cv_own;
  // every row in each minibatch of a gaussian regression (no control variate: with every row it changes
  // nothing): the Gram form
  const bool use_gram = ctl.gram && cv.empty() && gram_applies(d, ctl.batch_size, ctl.iterations);
  const bool gram_shared = use_gram && gram_given && !gram_given->empty();
  const GramState gram_own = use_gram && !gram_shared ? make_gram_state(d) : GramState();
  const GramState& gram = gram_shared ? *gram_given : gram_own;
  RunResult out;
  out.chains.resize(ctl.chains);
  auto chain = [&](std::size_t c, std::atomic<long>& progress, const parallel::StopToken& stop) {
    rng::Stream rs(run.seed, static_cast<std::uint64_t>(ctl.chain_offset + static_cast<long>(c)));
    GlmModel model(d, ectl, beta_init.col(static_cast<long>(c)), rs, cv.empty() ? nullptr : &cv,
                   gram.empty() ? nullptr : &gram);
    // the loss rule's level before the first trace point: the loss at the chain's start, so that a chain that
    // explodes before it is caught there (the start is where the chain may fairly be; a caller's loss_start
    // counts when higher)
    Control cc = ectl;
    if (cc.loss_factor > 0.0) {
      double L0 = 0.0;
      full_loglik(d, model.sparse_group(), model.dense_group(), 1.0, &L0);
      if (std::isfinite(L0)) cc.loss_start = std::max(cc.loss_start, L0);
    }
    GlmRecorder rec(d, cc);
    run_chain(model, rec, cc, rs, progress, stop);
    out.chains[c] = std::move(rec.res);
  };
  out.interrupted = run_chains(ctl.chains, run.threads, chain, monitor).interrupted;
  return out;
}

}  // namespace sgmcmc
}  // namespace scalebayes
