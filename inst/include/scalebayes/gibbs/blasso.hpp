// scalebayes/gibbs/blasso.hpp -- blocked Gibbs sampler for the Bayesian lasso (Park & Casella 2008).
//
// Model (after centring x and y when there is an intercept, which integrates out a flat-prior intercept):
//   y | beta, sigma2 ~ N(X beta, sigma2 I),  beta_j | tau_j^2, sigma2 ~ N(0, sigma2 tau_j^2),
//   tau_j^2 ~ Exp(lambda^2 / 2),  pi(sigma2) ~ 1/sigma2 (a = b = 0) or InvGamma(a, b).
// lambda is fixed, estimated by Monte-Carlo EM (empirical Bayes), or given a Gamma(r, delta) prior on lambda^2.
//
// One sweep (a two-block Gibbs sampler, blocks (beta, sigma2) and (tau, lambda)):
//   1. sigma2 | tau, y with beta integrated out: InvGamma(n_eff/2 + a, y' M^{-1} y / 2 + b), M = I + X D X'.
//   2. beta | sigma2, tau, y ~ N(A^{-1} X'y, sigma2 A^{-1}),  A = X'X + D^{-1}.
//      p <= n: one Cholesky of A (p x p) serves both steps (y'M^{-1}y = y'y - y'X A^{-1} X'y by Woodbury).
//      p >  n: one Cholesky of M (n x n) serves both; beta by Bhattacharya, Chakraborty & Mallick (2016).
//   3. 1/tau_j^2 | beta, sigma2 ~ InvGaussian(lambda sigma / |beta_j|, lambda^2) (rng::Stream's stable form).
//   4. lambda^2 | tau ~ Gamma(p + r, sum tau_j^2 / 2 + delta) under the hyperprior.
// Optional "rj" mode: a model indicator gamma (active set) with a prior uniform over models (monomvn::blasso's
// default) or uniform on the model size, updated by add/delete moves whose acceptance uses the likelihood with
// beta AND sigma2 integrated out; inactive tau_j^2 are kept as draws from their prior (pseudo-priors), which
// makes the move a valid Metropolis-within-Gibbs step on (gamma, tau) (Carlin & Chib 1995 with pseudo-prior =
// prior). Inactive coefficients are exactly zero.
//
// Chains run in parallel (parallel::run_parallel), chain c drawing from rng::Stream(seed, c), so draws do not
// depend on the number of threads. Monte-Carlo EM synchronises the chains after every EM block: the E-step
// averages the Rao-Blackwellised E[tau_j^2 | beta, sigma2, lambda] = |beta_j| / (lambda sigma) + 1 / lambda^2
// over sweeps and chains; the M-step is lambda = sqrt(2 p / sum_j E[tau_j^2]) (Park & Casella 2008, sec. 3.1).
// Header-only, Eigen + std only, no R.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"
#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace gibbs {

enum class LambdaMode { fixed = 0, em = 1, gamma = 2 };
inline constexpr EnumTable<LambdaMode, 3> lambda_mode_names{
    "lambda mode", {{{"fixed", LambdaMode::fixed}, {"eb", LambdaMode::em}, {"gamma", LambdaMode::gamma}}}};
constexpr const auto& enum_table(LambdaMode) { return lambda_mode_names; }

// The reversible-jump model prior (R: blasso_control(rj_prior = )): every model equally likely (monomvn's
// effective default), or uniform on the size k, then uniform over the models of that size.
enum class RjPrior { models = 0, size = 1 };
inline constexpr EnumTable<RjPrior, 2> rj_prior_names{
    "rj_prior", {{{"models", RjPrior::models}, {"size", RjPrior::size}}}};
constexpr const auto& enum_table(RjPrior) { return rj_prior_names; }
// The largest active set of the rj mode: n_eff - 1 (n - 2 with an intercept), or n - 1, monomvn's
// M = min(p, n - 1) (R: blasso_control(preset = "monomvn")); the lasso prior keeps the active-set regression
// proper either way.
enum class RjCap { n_eff = 0, n = 1 };
inline constexpr EnumTable<RjCap, 2> rj_cap_names{"rj_cap", {{{"n_eff", RjCap::n_eff}, {"n", RjCap::n}}}};
constexpr const auto& enum_table(RjCap) { return rj_cap_names; }

struct BlassoControl {
  LambdaMode mode = LambdaMode::fixed;
  double lambda = 1.0;          // fixed value, or starting value for EM / gamma (EM: 0 = ridge_lambda_start)
  double gamma_shape = 1.0;     // r   (lambda^2 ~ Gamma(r, delta), delta a rate)
  double gamma_rate = 1.78;     // delta
  double sigma2_shape = 0.0;    // a   (0, 0: the improper 1/sigma2 prior)
  double sigma2_scale = 0.0;    // b
  bool intercept = true;        // centre x and y; draw the intercept from N(ybar - xbar'beta, sigma2 / n)
  // monomvn::blasso(icept = FALSE): with intercept = false, still centre the columns of x (not y) and keep n - 1
  // degrees of freedom for sigma2 (monomvn hard-codes the shape (n - 1) / 2 + a); no intercept is drawn.
  bool center_x = false;
  int chains = 4;
  // Run only chains first_chain .. first_chain + chain_count - 1 of the `chains` (chain k always draws from
  // rng::Stream(seed, k)), so that a run split over processes gives the same draws as one run. Under Monte-Carlo
  // EM every chain still runs the EM phase (the E-step averages over all chains); only the burn-in and the kept
  // sweeps are restricted. chain_count < 0: all chains from first_chain on.
  int first_chain = 0;
  int chain_count = -1;
  int iter = 1000;              // saved draws per chain
  int burnin = 1000;            // sweeps discarded after the EM phase
  int thin = 1;
  // Monte-Carlo EM for lambda
  int em_max = 100;             // at most this many EM iterations
  int em_sweeps = 100;          // sweeps per chain per EM iteration (after em_burn)
  int em_burn = 100;            // sweeps before the first E-step
  double em_tol = 1e-3;         // stop when |lambda_new - lambda| < em_tol * lambda twice in a row
  double lambda_min = 1e-8;     // EM guard against collapse (lambda -> 0 with sigma2 -> 0 when p >= n)
  double lambda_max = 1e8;
  bool em_accelerate = true;    // Aitken-type extrapolation of the EM sequence (see run_blasso)
  double sigma2_floor = 0.0;    // sigma2 is kept >= this (guard for p >= n; 0 = none)
  // reversible-jump / model-indicator option
  bool rj = false;
  int rj_moves = 1;             // add/delete proposals per sweep
  RjPrior rj_prior = RjPrior::models;
  RjCap rj_cap = RjCap::n_eff;  // the largest active set (RjCap)
  // Testing hook: if non-empty, tau^2 is held at these values (no tau / lambda updates). The model is then the
  // conjugate normal-inverse-gamma regression, whose posterior is known exactly.
  std::vector<double> fixed_tau2;
};

struct BlassoResult {
  Eigen::MatrixXd beta;         // (chain_count * iter) x p, chain-major
  Eigen::VectorXd intercept;
  Eigen::VectorXd sigma2;
  Eigen::VectorXd lambda;
  Eigen::VectorXi chain;        // 1-based
  Eigen::VectorXi model_size;   // active-set size (p without rj)
  std::vector<double> em_lambda;  // EM trace (lambda after each M-step)
  double lambda_start = 0.0;
  bool em_converged = false;
  bool em_hit_bound = false;
  bool interrupted = false;
  std::vector<long> kept;       // kept draws of each chain run (iter, or fewer when interrupted: the rows
                                // t >= kept[k] of chain k are then not filled; the others are the full run's)
  double accept_rate = 0.0;     // rj moves
  long rj_proposed = 0;         // rj moves proposed / accepted in the chains run (to combine split runs)
  long rj_accepted = 0;
};

// Data shared read-only by all chains.
struct BlassoData {
  Eigen::MatrixXd X;            // centred if intercept
  Eigen::VectorXd y;            // centred if intercept
  Eigen::VectorXd xbar;
  double ybar = 0.0;
  Eigen::MatrixXd XtX;          // only when p <= n (or rj)
  Eigen::VectorXd Xty;
  double yty = 0.0;
  int n = 0, p = 0;
  double n_eff = 0.0;           // n - 1 with intercept
  bool wide = false;            // p > n: use the n x n system
};

class BlassoChain {
 public:
  BlassoChain(const BlassoData& d, const BlassoControl& c, std::uint64_t seed, int chain_index, double lambda0)
      : d_(d), c_(c), rng_(seed, static_cast<std::uint64_t>(chain_index)) {
    const int p = d.p;
    tau2_.setOnes(p);
    beta_.setZero(p);
    active_.assign(p, 1);
    lambda2_ = lambda0 * lambda0;
    sigma2_ = d.yty / std::max(1.0, d.n_eff);
    if (!(sigma2_ > 0)) sigma2_ = 1.0;
    // Start tau^2 from the prior mean given lambda, dispersed a little per chain.
    for (int j = 0; j < p; ++j) tau2_[j] = (2.0 / lambda2_) * rng_.exponential();
    if (!c_.fixed_tau2.empty()) {
      if (static_cast<int>(c_.fixed_tau2.size()) != p) throw std::invalid_argument("fixed_tau2 must have length p");
      for (int j = 0; j < p; ++j) tau2_[j] = c_.fixed_tau2[j];
    }
    if (c_.rj) {
      // start from the empty model plus a random half, so chains start dispersed
      // a random start of at most min(p, max_active()) / 2 coefficients (active sets are capped at max_active())
      const int cap = std::max(0, static_cast<int>(std::min<double>(p, max_active())) / 2);
      std::fill(active_.begin(), active_.end(), 0);
      int k = 0;
      for (int j = 0; j < p && k < cap; ++j)
        if (rng_.uniform() < 0.5) {
          active_[j] = 1;
          ++k;
        }
    }
    z_p_.resize(p);
  }

  double lambda() const { return std::sqrt(lambda2_); }
  void set_lambda(double l) { lambda2_ = l * l; }
  const Eigen::VectorXd& beta() const { return beta_; }
  double sigma2() const { return sigma2_; }
  int model_size() const {
    int k = 0;
    for (int a : active_) k += a;
    return k;
  }
  double intercept_draw() {
    if (!c_.intercept) return 0.0;
    return d_.ybar - d_.xbar.dot(beta_) + std::sqrt(sigma2_ / d_.n) * rng_.normal();
  }
  // Sum over j of E[tau_j^2 | beta, sigma2, lambda] (Rao-Blackwellised E-step), at the current state.
  double expected_tau2_sum() const {
    const double lam = std::sqrt(lambda2_), sig = std::sqrt(sigma2_);
    double s = 0.0;
    for (int j = 0; j < d_.p; ++j) s += std::abs(beta_[j]) / (lam * sig) + 1.0 / lambda2_;
    return s;
  }
  long rj_proposed = 0, rj_accepted = 0;
  // the largest active set of the rj mode (BlassoControl::rj_cap)
  double max_active() const { return c_.rj_cap == RjCap::n ? d_.n - 1.0 : d_.n_eff - 1.0; }

  void sweep() {
    if (c_.rj) {
      for (int m = 0; m < c_.rj_moves; ++m) rj_move();
      draw_beta_sigma_active();
    } else if (d_.wide) {
      draw_beta_sigma_wide();
    } else {
      draw_beta_sigma_tall();
    }
    if (!c_.fixed_tau2.empty()) return;
    draw_tau();
    if (c_.mode == LambdaMode::gamma) draw_lambda();
  }

 private:
  const BlassoData& d_;
  const BlassoControl& c_;
  rng::Stream rng_;
  Eigen::VectorXd tau2_, beta_, z_p_;
  std::vector<int> active_;
  double lambda2_ = 1.0, sigma2_ = 1.0;
  Eigen::MatrixXd A_;
  Eigen::LLT<Eigen::MatrixXd> llt_;

  double draw_sigma2(double quad) {
    const double shape = 0.5 * d_.n_eff + c_.sigma2_shape;
    const double rate = 0.5 * std::max(quad, 0.0) + c_.sigma2_scale;
    double s2 = rate / rng_.gamma(shape);
    if (!(s2 > c_.sigma2_floor)) s2 = c_.sigma2_floor;
    if (!(s2 > 0) || !std::isfinite(s2)) throw std::runtime_error("sigma2 draw is not positive and finite; use a proper sigma2 prior");
    return s2;
  }

  // p <= n: A = X'X + D^{-1}, one Cholesky.
  void draw_beta_sigma_tall() {
    const int p = d_.p;
    A_ = d_.XtX;
    for (int j = 0; j < p; ++j) A_(j, j) += 1.0 / tau2_[j];
    llt_.compute(A_);
    if (llt_.info() != Eigen::Success) throw std::runtime_error("Cholesky of X'X + D^-1 failed");
    Eigen::VectorXd m = llt_.solve(d_.Xty);
    sigma2_ = draw_sigma2(d_.yty - d_.Xty.dot(m));
    for (int j = 0; j < p; ++j) z_p_[j] = rng_.normal();
    // beta = m + sigma * L^{-T} z has covariance sigma2 (L L')^{-1} = sigma2 A^{-1}
    llt_.matrixU().solveInPlace(z_p_);
    beta_ = m + std::sqrt(sigma2_) * z_p_;
  }

  // p > n: M = I + X D X', one Cholesky; beta by Bhattacharya, Chakraborty & Mallick (2016).
  void draw_beta_sigma_wide() {
    const int n = d_.n, p = d_.p;
    Eigen::VectorXd sd = tau2_.cwiseSqrt();
    Eigen::MatrixXd Xs = d_.X * sd.asDiagonal();
    A_.setIdentity(n, n);
    A_.selfadjointView<Eigen::Lower>().rankUpdate(Xs);
    llt_.compute(A_);
    if (llt_.info() != Eigen::Success) throw std::runtime_error("Cholesky of I + X D X' failed");
    Eigen::VectorXd My = llt_.solve(d_.y);
    sigma2_ = draw_sigma2(d_.y.dot(My));
    const double sig = std::sqrt(sigma2_);
    // theta ~ N(A^{-1} X' y / sig, A^{-1}); beta = sig * theta
    Eigen::VectorXd u(p), delta(n);
    for (int j = 0; j < p; ++j) u[j] = sd[j] * rng_.normal();
    for (int i = 0; i < n; ++i) delta[i] = rng_.normal();
    Eigen::VectorXd v = d_.X * u + delta;
    Eigen::VectorXd w = llt_.solve(d_.y / sig - v);
    Eigen::VectorXd theta = u + tau2_.cwiseProduct(d_.X.transpose() * w);
    beta_ = sig * theta;
  }

  void draw_tau() {
    const double lam = std::sqrt(lambda2_), sig = std::sqrt(sigma2_);
    for (int j = 0; j < d_.p; ++j) {
      if (!active_[j]) {  // pseudo-prior = prior: tau_j^2 ~ Exp(lambda^2 / 2)
        tau2_[j] = rng_.exponential() * 2.0 / lambda2_;
        continue;
      }
      const double ab = std::abs(beta_[j]);
      const double mu = ab > 0 ? lam * sig / ab : std::numeric_limits<double>::infinity();
      double inv = rng_.inverse_gaussian(mu, lambda2_);
      double t = 1.0 / inv;
      if (!(t > 1e-300)) t = 1e-300;
      if (!std::isfinite(t)) t = 1e300;
      tau2_[j] = t;
    }
  }

  void draw_lambda() {
    const double shape = d_.p + c_.gamma_shape;
    const double rate = 0.5 * tau2_.sum() + c_.gamma_rate;
    lambda2_ = rng_.gamma(shape) / rate;
  }

  // ----- model-indicator (rj) mode: work on the active columns only, p-space (k <= n assumed small) -----
  std::vector<int> active_index() const {
    std::vector<int> idx;
    for (int j = 0; j < d_.p; ++j)
      if (active_[j]) idx.push_back(j);
    return idx;
  }
  // log p(y | gamma, tau) with beta and sigma2 integrated out, up to a constant; fills llt_/m when asked.
  double log_marginal(const std::vector<int>& idx, Eigen::VectorXd* mean = nullptr) {
    const int k = static_cast<int>(idx.size());
    double quad = d_.yty, logdet = 0.0;
    if (k > 0) {
      A_.resize(k, k);
      Eigen::VectorXd b(k);
      for (int a = 0; a < k; ++a) {
        b[a] = d_.Xty[idx[a]];
        for (int c = 0; c <= a; ++c) A_(a, c) = d_.XtX(idx[a], idx[c]);
        A_(a, a) += 1.0 / tau2_[idx[a]];
      }
      llt_.compute(A_);
      if (llt_.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
      Eigen::VectorXd m = llt_.solve(b);
      quad -= b.dot(m);
      // log|M| = log|A| + sum log tau2 (matrix determinant lemma)
      const Eigen::MatrixXd& L = llt_.matrixLLT();
      for (int a = 0; a < k; ++a) logdet += 2.0 * std::log(L(a, a)) + std::log(tau2_[idx[a]]);
      if (mean) *mean = m;
    }
    const double shape = 0.5 * d_.n_eff + c_.sigma2_shape;
    return -0.5 * logdet - shape * std::log(0.5 * std::max(quad, 1e-300) + c_.sigma2_scale);
  }
  // log prior of a model with k active coefficients: every model equally likely (RjPrior::models; what
  // monomvn::blasso's mprior = 0 amounts to, its add/delete proposal ratio (M - m)/(m + 1) being paired with a
  // constant model prior), or uniform on the size k, then uniform over models of that size (RjPrior::size).
  double log_model_prior(int k) const {
    if (c_.rj_prior == RjPrior::models) return 0.0;
    return -(std::lgamma(d_.p + 1.0) - std::lgamma(k + 1.0) - std::lgamma(d_.p - k + 1.0));
  }
  void rj_move() {
    const int j = static_cast<int>(rng_.uniform() * d_.p);
    std::vector<int> cur = active_index();
    const int k = static_cast<int>(cur.size());
    const double l0 = log_marginal(cur) + log_model_prior(k);
    active_[j] = 1 - active_[j];
    std::vector<int> prop = active_index();
    const int kp = static_cast<int>(prop.size());
    if (kp > max_active()) {  // keep the active set estimable (monomvn's M with RjCap::n)
      active_[j] = 1 - active_[j];
      return;
    }
    const double l1 = log_marginal(prop) + log_model_prior(kp);
    ++rj_proposed;
    if (std::log(rng_.uniform()) < l1 - l0) {
      ++rj_accepted;
    } else {
      active_[j] = 1 - active_[j];
    }
  }
  void draw_beta_sigma_active() {
    std::vector<int> idx = active_index();
    Eigen::VectorXd m;
    const int k = static_cast<int>(idx.size());
    double quad = d_.yty;
    if (k > 0) {
      log_marginal(idx, &m);
      Eigen::VectorXd b(k);
      for (int a = 0; a < k; ++a) b[a] = d_.Xty[idx[a]];
      quad -= b.dot(m);
    }
    sigma2_ = draw_sigma2(quad);
    beta_.setZero();
    if (k > 0) {
      Eigen::VectorXd z(k);
      for (int a = 0; a < k; ++a) z[a] = rng_.normal();
      llt_.matrixU().solveInPlace(z);
      for (int a = 0; a < k; ++a) beta_[idx[a]] = m[a] + std::sqrt(sigma2_) * z[a];
    }
  }
};

inline BlassoData prepare_data(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                               const BlassoControl& c) {
  BlassoData d;
  d.n = static_cast<int>(x.rows());
  d.p = static_cast<int>(x.cols());
  if (d.n < 2 || d.p < 1) throw std::invalid_argument("x must have at least 2 rows and 1 column");
  if (y.size() != d.n) throw std::invalid_argument("y must have one value per row of x");
  d.X = x;
  d.y = y;
  if (c.intercept) {
    d.xbar = d.X.colwise().mean().transpose();
    d.ybar = d.y.mean();
    d.X.rowwise() -= d.xbar.transpose();
    d.y.array() -= d.ybar;
    d.n_eff = d.n - 1.0;
  } else if (c.center_x) {  // monomvn's icept = FALSE: x centred, y not, n - 1 degrees of freedom
    const Eigen::VectorXd xm = d.X.colwise().mean().transpose();
    d.X.rowwise() -= xm.transpose();
    d.xbar.setZero(d.p);
    d.n_eff = d.n - 1.0;
  } else {
    d.xbar.setZero(d.p);
    d.n_eff = d.n;
  }
  d.yty = d.y.squaredNorm();
  d.Xty = d.X.transpose() * d.y;
  d.wide = d.p > d.n;
  if (!d.wide || c.rj) {
    d.XtX.setZero(d.p, d.p);
    d.XtX.selfadjointView<Eigen::Lower>().rankUpdate(d.X.transpose());
    d.XtX.triangularView<Eigen::StrictlyUpper>() = d.XtX.transpose();
  }
  return d;
}

// Starting value for Monte-Carlo EM: the Bayesian lasso prior has Var(beta_j | sigma2) = sigma2 * 2 / lambda^2;
// maximise the marginal likelihood of the Gaussian prior beta ~ N(0, sigma2 v I) with that variance (sigma2
// profiled out; closed form given one eigendecomposition of X X' or X'X) over v, and return sqrt(2 / v).
// Much closer to the EB value than Park & Casella's least-squares start when p >= n. Falls back to 1.
inline double ridge_lambda_start(const BlassoData& d) {
  Eigen::VectorXd ev, u2;
  double r0 = 0.0;
  if (d.n <= d.p) {
    Eigen::MatrixXd K = d.X * d.X.transpose();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(K);
    ev = es.eigenvalues().cwiseMax(0.0);
    u2 = (es.eigenvectors().transpose() * d.y).array().square();
  } else {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(d.XtX);
    ev = es.eigenvalues().cwiseMax(0.0);
    const Eigen::VectorXd g = es.eigenvectors().transpose() * d.Xty;
    u2.resize(d.p);
    double s = 0.0;
    for (int j = 0; j < d.p; ++j) {
      u2[j] = ev[j] > 1e-12 * ev.maxCoeff() ? g[j] * g[j] / ev[j] : 0.0;
      s += u2[j];
    }
    r0 = std::max(d.yty - s, 0.0);
  }
  auto f = [&](double lv) {
    const double v = std::exp(lv);
    double q = r0, ld = 0.0;
    for (Eigen::Index i = 0; i < ev.size(); ++i) {
      q += u2[i] / (1.0 + v * ev[i]);
      ld += std::log1p(v * ev[i]);
    }
    return -0.5 * ld - 0.5 * d.n_eff * std::log(std::max(q, 1e-300));
  };
  double best = -std::numeric_limits<double>::infinity(), blv = 0.0;
  for (int k = 0; k <= 120; ++k) {
    const double lv = -20.0 + k * (40.0 / 120);
    const double v = f(lv);
    if (v > best) {
      best = v;
      blv = lv;
    }
  }
  // golden-section refinement on [blv - h, blv + h]
  double a = blv - 40.0 / 120, b = blv + 40.0 / 120;
  const double gr = 0.5 * (std::sqrt(5.0) - 1.0);
  for (int it = 0; it < 40; ++it) {
    const double c1 = b - gr * (b - a), c2 = a + gr * (b - a);
    if (f(c1) > f(c2)) b = c2; else a = c1;
  }
  const double lv = 0.5 * (a + b);
  if (lv <= -19.5 || lv >= 19.5) return 1.0;
  const double l = std::sqrt(2.0 / std::exp(lv));
  return std::isfinite(l) && l > 0 ? l : 1.0;
}

inline void check_control(const BlassoControl& c) {
  if (c.chains < 1 || c.iter < 1 || c.burnin < 0 || c.thin < 1) throw std::invalid_argument("chains, iter, thin must be >= 1 and burnin >= 0");
  if (c.first_chain < 0 || c.first_chain >= c.chains || c.chain_count == 0 ||
      (c.chain_count > 0 && c.chain_count > c.chains - c.first_chain))
    throw std::invalid_argument("first_chain and chain_count must select chains within 0 .. chains - 1");
  if (!(c.lambda > 0 || (c.lambda == 0 && c.mode == LambdaMode::em)) || !std::isfinite(c.lambda))
    throw std::invalid_argument("lambda must be positive and finite (0 = automatic EM start)");
  if (c.sigma2_shape < 0 || c.sigma2_scale < 0) throw std::invalid_argument("sigma2 prior parameters must be >= 0");
  if (c.mode == LambdaMode::gamma && !(c.gamma_shape > 0 && c.gamma_rate > 0)) throw std::invalid_argument("gamma prior on lambda^2 needs positive shape and rate");
  if (c.mode == LambdaMode::em && (c.em_max < 1 || c.em_sweeps < 1 || c.em_burn < 0)) throw std::invalid_argument("invalid EM settings");
}

// Run the sampler: chains first_chain .. first_chain + chain_count - 1 of c.chains (default all) on run.threads
// threads, chain k drawing from rng::Stream(run.seed, k).
// monitor(sweeps_done) is called on the calling thread about every 100 ms (sweeps of all chains, EM and burn-in
// included); it returns false to stop (the chains then stop within one sweep and the result has
// interrupted = true).
inline BlassoResult run_blasso(const Eigen::Ref<const Eigen::MatrixXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                               const BlassoControl& c, const parallel::RunSettings& run,
                               const parallel::Monitor& monitor = parallel::Monitor()) {
  check_control(c);
  const BlassoData d = prepare_data(x, y, c);
  if (d.n_eff + 2.0 * c.sigma2_shape <= 0) throw std::invalid_argument("too few observations for the sigma2 posterior");
  BlassoResult res;
  // The chains run: first .. first + count - 1. EM needs every chain for its E-step, so then all are built and
  // run through the EM phase; chains[k - base] is chain k.
  const int first = c.first_chain;
  const int count = c.chain_count < 0 ? c.chains - first : c.chain_count;
  const int base = c.mode == LambdaMode::em ? 0 : first;
  const int built = c.mode == LambdaMode::em ? c.chains : count;
  std::vector<BlassoChain> chains;
  chains.reserve(built);
  const double lambda0 = (c.mode == LambdaMode::em && c.lambda == 0) ? ridge_lambda_start(d) : c.lambda;
  for (int k = 0; k < built; ++k) chains.emplace_back(d, c, run.seed, base + k, lambda0);
  const int own = first - base;  // index in `chains` of the first chain run after the EM phase

  std::atomic<std::size_t> sweeps{0};
  parallel::Monitor mon;
  if (monitor) mon = [&](std::size_t) { return monitor(sweeps.load()); };
  // n_sweeps sweeps of chains[off .. off + n - 1]
  auto run_block = [&](int off, int n, int n_sweeps, std::vector<double>* etau) -> bool {
    parallel::RunStatus st = parallel::run_parallel(
        static_cast<std::size_t>(n), run.threads,
        [&](std::size_t i, int, const parallel::StopToken& stop) {
          const std::size_t k = off + i;
          double acc = 0.0;
          for (int s = 0; s < n_sweeps; ++s) {
            if (stop.stop_requested()) return;  // one relaxed load per sweep: Ctrl-C acts within a sweep
            chains[k].sweep();
            if (etau) acc += chains[k].expected_tau2_sum();
            sweeps.fetch_add(1, std::memory_order_relaxed);
          }
          if (etau) (*etau)[k] = acc / n_sweeps;
        },
        mon);
    return !st.interrupted;
  };

  double lambda = lambda0;
  res.lambda_start = lambda0;
  // EM phase
  if (c.mode == LambdaMode::em) {
    if (c.em_burn > 0 && !run_block(0, built, c.em_burn, nullptr)) {
      res.interrupted = true;
      return res;
    }
    std::vector<double> etau(c.chains, 0.0);
    std::vector<double> steps;
    int small = 0;
    for (int it = 0; it < c.em_max; ++it) {
      if (!run_block(0, built, c.em_sweeps, &etau)) {
        res.interrupted = true;
        return res;
      }
      double s = 0.0;
      for (double e : etau) s += e;
      s /= c.chains;
      double next = std::sqrt(2.0 * d.p / s);
      if (!std::isfinite(next)) throw std::runtime_error("EM update of lambda is not finite");
      if (next <= c.lambda_min) {
        next = c.lambda_min;
        res.em_hit_bound = true;
      }
      if (next >= c.lambda_max) {
        next = c.lambda_max;
        res.em_hit_bound = true;
      }
      // Aitken-type extrapolation in log(lambda): EM for lambda converges linearly, often with a rate close to
      // 1 (p >= n). Every 4th iteration, when the last three EM steps point the same way, are clearly above the
      // tolerance, and shrink geometrically with an estimated ratio r < 1, jump to the extrapolated limit
      // l + d r / (1 - r) (at most 50 steps). The EM fixed point is unchanged; EM steps then correct any
      // overshoot.
      const int K0 = static_cast<int>(res.em_lambda.size());
      if (c.em_accelerate && K0 >= 3 && K0 % 4 == 3) {
        const double l0 = std::log(res.em_lambda[K0 - 3]), l1 = std::log(res.em_lambda[K0 - 2]),
                     l2 = std::log(res.em_lambda[K0 - 1]), l3 = std::log(next);
        const double d1 = l1 - l0, d2 = l2 - l1, d3 = l3 - l2;
        if (d1 * d2 > 0 && d2 * d3 > 0 && std::abs(d3) > 2 * c.em_tol && std::abs(d3) < std::abs(d1)) {
          const double r = std::sqrt(d3 / d1);
          const double jump = std::min(r / (1.0 - r), 50.0);
          next = std::exp(l3 + jump * d3);
          next = std::min(std::max(next, c.lambda_min), c.lambda_max);
        }
      }
      const double change = (next - lambda) / lambda;
      lambda = next;
      res.em_lambda.push_back(lambda);
      for (auto& ch : chains) ch.set_lambda(lambda);
      // Converged: three relative steps below em_tol that do not all point the same way (a slow monotone EM
      // also takes small steps, far from its fixed point).
      steps.push_back(change);
      small = std::abs(change) < c.em_tol ? small + 1 : 0;
      if (small >= 3) {
        const std::size_t m = steps.size();
        const bool monotone = (steps[m - 1] > 0) == (steps[m - 2] > 0) && (steps[m - 2] > 0) == (steps[m - 3] > 0);
        if (!monotone) {
          res.em_converged = true;
          break;
        }
      }
      // Monte-Carlo noise dominance: over the last W iterates the fitted linear drift is below twice the
      // residual scatter, so further iterations only add noise; use the mean of those W iterates.
      const int W = 10;
      const int K = static_cast<int>(res.em_lambda.size());
      if (K >= 2 * W) {
        double mt = 0.5 * (W - 1), ml = 0.0;
        for (int i = 0; i < W; ++i) ml += res.em_lambda[K - W + i];
        ml /= W;
        double sxy = 0.0, sxx = 0.0;
        for (int i = 0; i < W; ++i) {
          sxy += (i - mt) * (res.em_lambda[K - W + i] - ml);
          sxx += (i - mt) * (i - mt);
        }
        const double slope = sxy / sxx;
        double rss = 0.0;
        for (int i = 0; i < W; ++i) {
          const double e = res.em_lambda[K - W + i] - ml - slope * (i - mt);
          rss += e * e;
        }
        const double sd = std::sqrt(rss / (W - 2));
        if (std::abs(slope) * W < 2.0 * sd) {
          lambda = std::min(std::max(ml, c.lambda_min), c.lambda_max);
          for (auto& ch : chains) ch.set_lambda(lambda);
          res.em_lambda.push_back(lambda);
          res.em_converged = true;
          break;
        }
      }
    }
  }
  // burn-in
  if (c.burnin > 0 && !run_block(own, count, c.burnin, nullptr)) {
    res.interrupted = true;
    return res;
  }
  // sampling
  const int T = c.iter, p = d.p;
  res.beta.resize(static_cast<Eigen::Index>(count) * T, p);
  res.intercept.resize(count * T);
  res.sigma2.resize(count * T);
  res.lambda.resize(count * T);
  res.chain.resize(count * T);
  res.model_size.resize(count * T);
  res.kept.assign(static_cast<std::size_t>(count), 0);
  parallel::RunStatus st = parallel::run_parallel(
      static_cast<std::size_t>(count), run.threads,
      [&](std::size_t k, int, const parallel::StopToken& stop) {
        BlassoChain& ch = chains[own + k];
        for (int t = 0; t < T; ++t) {
          for (int s = 0; s < c.thin; ++s) {
            if (stop.stop_requested()) return;
            ch.sweep();
            sweeps.fetch_add(1, std::memory_order_relaxed);
          }
          const Eigen::Index row = static_cast<Eigen::Index>(k) * T + t;
          res.beta.row(row) = ch.beta().transpose();
          res.intercept[row] = ch.intercept_draw();
          res.sigma2[row] = ch.sigma2();
          res.lambda[row] = ch.lambda();
          res.chain[row] = first + static_cast<int>(k) + 1;
          res.model_size[row] = ch.model_size();
          res.kept[k] = t + 1;  // slot k is this chain's alone
        }
      },
      mon);
  res.interrupted = st.interrupted;
  long prop = 0, acc = 0;
  for (int k = 0; k < count; ++k) {
    prop += chains[own + k].rj_proposed;
    acc += chains[own + k].rj_accepted;
  }
  res.rj_proposed = prop;
  res.rj_accepted = acc;
  res.accept_rate = prop > 0 ? static_cast<double>(acc) / prop : 0.0;
  return res;
}

}  // namespace gibbs
}  // namespace scalebayes
