// scalebayes/sgmcmc/lbfgs.hpp -- Hessian-approximated SG-MCMC: the online damped L-BFGS memory of Wang, Deng &
// Lin (2021, Algorithm 1) and the step policies HAMCMC-SA (their Algorithm 2) and HAMCMC (Simsekli et al. 2016,
// as Wang et al. run it), written once over the storage policy `Ops` (storage.hpp).
//
// Conventions. The groups' `grad` is the gradient g of the LOG posterior (what the driver hands a policy), so
// the curvature pairs use the gradient of the NEGATIVE log posterior: s = theta_{k+1} - theta_k,
// y = -(g(theta_{k+1}) - g(theta_k)), both gradients on the same minibatch ("same_batch", the online L-BFGS of
// Schraudolph et al. that the paper follows) or on consecutive minibatches ("consecutive"). The approximation
// G~ of the inverse Hessian of -log posterior is then positive definite and the drift is + eps G g.
//
// Damping (Powell, as the proof of Lemma 1 uses it): B0 = gamma I with gamma = max(y'y / s'y, gamma_min) from the
// NEWEST pair (max(||y|| / ||s||, gamma_min) when s'y <= 0; gamma_min when the memory is empty), and for every pair
//   ybar = theta y + (1 - theta) B0 s,   theta = (1 - r) s'B0 s / (s'B0 s - s'y)  if s'y < r s'B0 s, else 1,
// so that s'ybar >= r s'B0 s > 0 (s != 0). Eq. (4) as printed (ybar = theta y + (1 - theta) s, theta with s's in
// the numerator) does not give this; the proof's version is used (design-sgmcmc.md, "HAMCMC-SA: the step policy").
// Because gamma changes with every new pair, ybar, s'ybar and the vectors a_i = B_{i-1} s_i are recomputed from
// the raw pairs at every `prepare()` (O(M^2) vector operations; M = memory, 2 by default).
//
//   apply_G(v)  = G~ v   (the two-loop recursion, lines 1-4, 10, 12-14; ybar in place of y)
//   apply_S(z)  = S~ z   with S~ S~' = G~: S_0 = gamma^{-1/2} I, S_{i+1} = (I - p_i q_i') S_i, applied oldest pair
//                 last-multiplied first, p = s / s'ybar, q = sqrt(s'ybar / s'a) a + ybar, a = B_{i-1} s (line 15;
//                 eq. (8)'s minus sign would break S S' = G~; line 8 with ybar, not y).
// A pair with s = 0 (a step of size zero) contributes nothing (its reciprocal curvature is taken as 0), without a
// branch, so the policy never reads a number back from a device.
// Header-only, std, no R.
#pragma once
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "scalebayes/sgmcmc/schedules.hpp"
#include "scalebayes/sgmcmc/storage.hpp"
#include "scalebayes/sgmcmc/updates.hpp"

namespace scalebayes {
namespace sgmcmc {

// Settings of the quasi-Newton step policies (part of StepControl).
// (The "transport" form of line 4 as printed, G_{k-1} g_k ~ G_{k-1} g_{k-1} + G~_k (g_k - g_{k-1}), was removed:
// its injected noise is an autoregression of the memories' factors, not a draw with the covariance of the
// preconditioner it applies, and its chains drifted; "lowrank" below is the valid linear-cost form.)
enum class SaForm { matrix, diagonal, lowrank };
inline constexpr EnumTable<SaForm, 3> sa_form_names{
    "sa_form", {{{"matrix", SaForm::matrix}, {"diagonal", SaForm::diagonal}, {"lowrank", SaForm::lowrank}}}};
constexpr const auto& enum_table(SaForm) { return sa_form_names; }
enum class Curvature { same_batch, consecutive };
inline constexpr EnumTable<Curvature, 2> curvature_names{
    "curvature", {{{"same_batch", Curvature::same_batch}, {"consecutive", Curvature::consecutive}}}};
constexpr const auto& enum_table(Curvature) { return curvature_names; }
// LbfgsControl::init_curvature by name (R: sgmcmc_lbfgs(precond_init = )): curvature = true, identity = false
enum class PrecondInit { curvature, identity };
inline constexpr EnumTable<PrecondInit, 2> precond_init_names{
    "precond_init", {{{"curvature", PrecondInit::curvature}, {"identity", PrecondInit::identity}}}};
constexpr const auto& enum_table(PrecondInit) { return precond_init_names; }

struct LbfgsControl {
  int memory = 2;              // M: pairs kept (HAMCMC: 2M - 2 samples, 2M - 3 pairs)
  double damping_r = 0.2;      // r in (0, 1) of Powell's damping
  double gamma_min = 1.0;      // delta: lower bound of gamma (B0 = gamma I)
  SAStep precond;              // omega_k of the preconditioner's SA (eq. 15): min(cap, A (k + Z)^-alpha)
  SaForm sa_form = SaForm::diagonal;
  bool normalize = false;      // Algorithm 2, lines 7-8: unit-length drift and noise directions
  Curvature curvature = Curvature::same_batch;
  int sa_memories = 4;         // "lowrank": K, the memories kept whole (older ones by their diagonal)
  // G_1 of HAMCMC-SA's SA: false = I (Algorithm 2 as printed), true = I / gamma_1, gamma_1 the L-BFGS scale
  // y'y / s'y of a probe pair on the first minibatch (see HamcmcSaStep)
  bool init_curvature = true;
  double probe_size = 1e-2;    // the probe pair's s: probe_size rms(theta) z, z ~ N(0, I) (probe_size if theta = 0)
  LbfgsControl() {
    precond.A = 2.0;
    precond.Z = 50.0;
    precond.alpha = 0.75;
    precond.cap = 1.0;
  }
  void validate() const {
    if (memory < 1) throw std::invalid_argument("memory must be >= 1");
    if (sa_memories < 1) throw std::invalid_argument("sa_memories must be >= 1");
    if (!(damping_r > 0.0 && damping_r < 1.0)) throw std::invalid_argument("damping_r must lie in (0, 1)");
    if (!(gamma_min > 0.0) || !std::isfinite(gamma_min)) throw std::invalid_argument("gamma_min must be > 0 and finite");
    if (!(probe_size > 0.0) || !std::isfinite(probe_size)) throw std::invalid_argument("probe_size must be > 0 and finite");
    precond.validate();
  }
};

namespace lbfgs_detail {
// A deep copy (a torch tensor aliases on `=`: every vector that is changed in place is cloned first).
template <class Ops>
GroupVector<Ops> clone(const GroupVector<Ops>& o) {
  GroupVector<Ops> v;
  v.parts.resize(o.parts.size());
  for (std::size_t g = 0; g < o.parts.size(); ++g) Ops::assign(v.parts[g], o.parts[g]);
  return v;
}
// A step's report at a traced iteration (steps.hpp's StepStats): ||xi|| / ||g||, ||eta|| / ||z||, gamma.
template <class Ops, class Stats>
void report(Stats& st, const GroupVector<Ops>& g, const GroupVector<Ops>& xi, const GroupVector<Ops>& z,
            const GroupVector<Ops>& eta, const typename Ops::Scalar& gamma) {
  const std::vector<double> xx = Ops::values(xi.dot(xi)), gg = Ops::values(g.dot(g)),
                            ee = Ops::values(eta.dot(eta)), zz = Ops::values(z.dot(z)), ga = Ops::values(gamma);
  const std::size_t m = xx.size();
  std::vector<double> drift(m), noise(m);
  for (std::size_t i = 0; i < m; ++i) {
    drift[i] = std::sqrt(xx[i] / gg[i]);
    noise[i] = std::sqrt(ee[i] / zz[i]);
  }
  st.drift_ratio = drift[0];
  st.noise_ratio = noise[0];
  st.gamma = ga[0];
  if (m > 1) {  // a batched group: every member's (one chain: the scalars only)
    st.member_drift = std::move(drift);
    st.member_noise = std::move(noise);
    st.member_gamma = ga;
  }
}
}  // namespace lbfgs_detail

// The online damped L-BFGS memory (Algorithm 1) over GroupVector<Ops>.
template <class Ops>
class DampedLbfgs {
 public:
  using GV = GroupVector<Ops>;
  using Scalar = typename Ops::Scalar;

  DampedLbfgs(int memory, double r, double gamma_min) : M_(memory), r_(r), gmin_(gamma_min) {
    if (memory < 1) throw std::invalid_argument("DampedLbfgs: memory must be >= 1");
  }

  // Adds the pair (s, y) (y from the NEGATIVE log-posterior gradient); the oldest beyond M is dropped.
  void push(GV s, GV y) {
    Pair p;
    p.ss = s.dot(s);
    p.sy = s.dot(y);
    p.yy = y.dot(y);
    p.s = std::move(s);
    p.y = std::move(y);
    pairs_.push_back(std::move(p));
    while (static_cast<int>(pairs_.size()) > M_) pairs_.pop_front();
    prepared_ = false;
  }
  // push() for a storage with one memory per member (a batched group of chains, whose Scalars hold one number per
  // member): the members with keep > 0 get the pair, the others keep their memory as it was. The pairs are aligned
  // at the newest: a member that keeps its memory has its pairs where they were counted from the newest, and the
  // slot left over at the oldest end holds a neutral pair (s = y = 0), which apply_G, apply_S and diag_G skip
  // exactly (rho = c_a = 0 and a = 0: each of its terms adds exact zeros) and which, being older than the member's
  // own pairs, sets gamma only when the member has none: then prepare()'s fallbacks give gamma_min, the value of an
  // empty memory. So a member's memory acts as the memory of its own pushes only.
  void push_masked(GV s, GV y, const Scalar& keep) {
    std::vector<std::pair<GV, GV>> old;
    for (const Pair& p : pairs_) old.emplace_back(p.s, p.y);
    push(std::move(s), std::move(y));
    const std::size_t n_old = old.size(), n = pairs_.size();
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t back = n - 1 - j;  // 0: the newest
      Pair& p = pairs_[j];
      GV s_old = back < n_old ? old[n_old - 1 - back].first : GV::zeros_like(p.s);
      GV y_old = back < n_old ? old[n_old - 1 - back].second : GV::zeros_like(p.y);
      for (std::size_t g = 0; g < p.s.parts.size(); ++g) {
        p.s.parts[g] = select(keep, p.s.parts[g], s_old.parts[g]);
        p.y.parts[g] = select(keep, p.y.parts[g], y_old.parts[g]);
      }
      p.ss = p.s.dot(p.s);
      p.sy = p.s.dot(p.y);
      p.yy = p.y.dot(p.y);
    }
    prepared_ = false;
  }
  void clear() {
    pairs_.clear();
    prepared_ = false;
  }
  int size() const { return static_cast<int>(pairs_.size()); }

  // gamma, ybar, 1/s'ybar and a_i = B_{i-1} s_i for the current pairs; `like` places the scalars (a Scalar where
  // the data live). Called once after the pairs change, before apply_G / apply_S.
  void prepare(const Scalar& like) {
    const Scalar zero = Ops::zero_scalar(like);
    zero_ = zero;
    const Scalar dmin = zero + gmin_;
    if (pairs_.empty()) {
      gamma_ = dmin;
    } else {
      const Pair& nw = pairs_.back();
      // y'y / s'y; when s'y <= 0 (no curvature along s: a nonconvex region, or noise) ||y|| / ||s||, the
      // pair's own scale, in place of gamma_min (a deviation: with gamma_min = 1, G~ = I on a network whose
      // summed curvature is 1e4-1e5, measured on MNIST, is a step 1e4 times too long)
      const Scalar ratio = nw.yy / nw.sy;
      const Scalar norm_ratio = Ops::sqrt(nw.yy / nw.ss);
      const Scalar fallback = Ops::where(nw.ss, Ops::where(norm_ratio - dmin, norm_ratio, dmin), dmin);
      gamma_ = Ops::where(nw.sy, Ops::where(ratio - dmin, ratio, dmin), fallback);
    }
    inv_gamma_ = 1.0 / gamma_;
    inv_sqrt_gamma_ = 1.0 / Ops::sqrt(gamma_);
    for (auto& p : pairs_) {
      const Scalar sBs = gamma_ * p.ss;
      const Scalar damp = r_ * sBs - p.sy;                  // > 0: damp
      const Scalar th_low = Ops::where(damp, (1.0 - r_) * sBs / (sBs - p.sy), zero + 1.0);
      // The upper side (a safeguard, not in the paper): the largest theta in [0, 1] with
      // ybar'ybar <= (gamma / r) s'ybar, ybar = theta y + (1 - theta) gamma s. A pair whose y is long and nearly
      // orthogonal to s passes Powell's test but gives B an eigenvalue ~ gamma r / K, hence G~ one ~ K / (gamma r)
      // with K = ybar'ybar / (s'ybar gamma) unbounded (measured on a network: K ~ 1e3, the preconditioner ~ 1e3
      // times too long for one iteration, and the chain diverged). With both sides each pair's curvatures lie in
      // [r gamma, gamma / r], so G~'s spectrum is bounded by the memory. The quadratic in theta
      // A theta^2 + B theta + C <= 0 has C = gamma^2 s's (1 - 1 / r) < 0, so its positive root is the bound,
      // computed in the form without cancellation.
      const double c = 1.0 / r_;
      const Scalar A = p.yy - 2.0 * gamma_ * p.sy + gamma_ * gamma_ * p.ss;
      const Scalar B = 2.0 * gamma_ * p.sy - 2.0 * gamma_ * sBs - c * gamma_ * (p.sy - sBs);
      const Scalar negC = (c - 1.0) * gamma_ * sBs;
      const Scalar sq = Ops::sqrt(B * B + 4.0 * A * negC);
      const Scalar root = Ops::where(B, 2.0 * negC / (B + sq), Ops::where(A, (sq - B) / (2.0 * A), zero + 1.0));
      const Scalar th_up = Ops::where(root - 1.0, zero + 1.0, root);
      const Scalar th = Ops::where(th_low - th_up, th_up, th_low);
      p.theta = th;
      p.ybar = lbfgs_detail::clone<Ops>(p.y);
      p.ybar.scale(th);
      p.ybar.axpy((1.0 - th) * gamma_, p.s);              // ybar = theta y + (1 - theta) gamma s
      p.sybar = th * p.sy + (1.0 - th) * sBs;             // s'ybar (= r s'B0 s when damped)
      p.rho = safe_inv(p.sybar, zero);
    }
    // a_i = B_{i-1} s_i = gamma s_i + sum_{l < i} [ybar_l (ybar_l's_i) / s_l'ybar_l - a_l (a_l's_i) / s_l'a_l]
    for (std::size_t i = 0; i < pairs_.size(); ++i) {
      Pair& pi = pairs_[i];
      pi.a = lbfgs_detail::clone<Ops>(pi.s);
      pi.a.scale(gamma_);
      for (std::size_t l = 0; l < i; ++l) {
        const Pair& pl = pairs_[l];
        pi.a.axpy(pl.ybar.dot(pi.s) * pl.rho, pl.ybar);
        pi.a.axpy(-(pl.a.dot(pi.s) * pl.inv_sa), pl.a);
      }
      pi.sa = pi.s.dot(pi.a);
      pi.inv_sa = safe_inv(pi.sa, zero);
      // coefficient of a'eta in line 15: 1 / (sqrt(s'ybar) sqrt(s'a))
      pi.c_a = safe_inv(Ops::sqrt(pi.sybar) * Ops::sqrt(pi.sa), zero);
    }
    prepared_ = true;
  }

  // G~ v (two-loop recursion).
  GV apply_G(const GV& v) const {
    check_prepared();
    GV w = lbfgs_detail::clone<Ops>(v);
    std::vector<Scalar> alpha(pairs_.size());
    for (std::size_t j = pairs_.size(); j-- > 0;) {
      const Pair& p = pairs_[j];
      alpha[j] = p.s.dot(w) * p.rho;
      w.axpy(-alpha[j], p.ybar);
    }
    w.scale(inv_gamma_);
    for (std::size_t j = 0; j < pairs_.size(); ++j) {
      const Pair& p = pairs_[j];
      const Scalar beta = p.ybar.dot(w) * p.rho;
      w.axpy(alpha[j] - beta, p.s);
    }
    return w;
  }

  // S~ z with S~ S~' = G~ (line 15).
  GV apply_S(const GV& z) const {
    check_prepared();
    GV eta = lbfgs_detail::clone<Ops>(z);
    eta.scale(inv_sqrt_gamma_);
    for (const Pair& p : pairs_) {
      const Scalar coef = p.a.dot(eta) * p.c_a + p.ybar.dot(eta) * p.rho;
      eta.axpy(-coef, p.s);
    }
    return eta;
  }

  // diag(G~) at linear cost. With q_i = c_a a_i + rho_i ybar_i (the vector of line 15 that apply_S uses),
  // S~ = gamma^{-1/2} T_M, T_i = (I - s_i q_i') T_{i-1}, T_0 = I; by induction T_i = I - sum_{l <= i} s_l r_l'
  // with r_i = T_{i-1}' q_i = q_i - sum_{l < i} r_l (s_l'q_i). So G~ = S~ S~' has the diagonal
  //   diag_j = (1 - 2 sum_i s_ij r_ij + sum_{i,l} s_ij s_lj r_i'r_l) / gamma   (the squared norm of row j of T_M),
  // which is >= 0 by construction: M^2 dot products and M(M + 3)/2 elementwise products.
  GV diag_G(const GV& like) const {
    check_prepared();
    const std::size_t m = pairs_.size();
    std::vector<GV> r(m);
    for (std::size_t i = 0; i < m; ++i) {
      const Pair& p = pairs_[i];
      r[i] = lbfgs_detail::clone<Ops>(p.a);
      r[i].scale(p.c_a);
      r[i].axpy(p.rho, p.ybar);
      const GV qi = lbfgs_detail::clone<Ops>(r[i]);
      for (std::size_t l = 0; l < i; ++l) r[i].axpy(zero_ - pairs_[l].s.dot(qi), r[l]);
    }
    GV out = GV::constant_like(like, 1.0);
    for (std::size_t i = 0; i < m; ++i) {
      out.add_product(zero_ - 2.0, pairs_[i].s, r[i]);
      for (std::size_t l = 0; l <= i; ++l)
        out.add_product(r[i].dot(r[l]) * (l == i ? 1.0 : 2.0), pairs_[i].s, pairs_[l].s);
    }
    out.scale(inv_gamma_);
    return out;
  }

  // For tests: the damped pairs as prepared.
  const Scalar& gamma() const { return gamma_; }
  const GV& s(int i) const { return pairs_[static_cast<std::size_t>(i)].s; }
  const GV& ybar(int i) const { return pairs_[static_cast<std::size_t>(i)].ybar; }
  const Scalar& sybar(int i) const { return pairs_[static_cast<std::size_t>(i)].sybar; }
  const Scalar& ss(int i) const { return pairs_[static_cast<std::size_t>(i)].ss; }

  static Scalar safe_inv(const Scalar& x, const Scalar& zero) { return Ops::where(x, 1.0 / x, zero); }
  // keep > 0 ? a : b, per chain (member)
  static typename Ops::Array select(const Scalar& keep, const typename Ops::Array& a, const typename Ops::Array& b) {
    if constexpr (std::is_arithmetic<Scalar>::value) return keep > 0.0 ? a : b;
    else return Ops::where(keep, a, b);
  }

 private:
  struct Pair {
    GV s, y, ybar, a;
    Scalar ss{}, sy{}, yy{}, theta{}, sybar{}, rho{}, sa{}, inv_sa{}, c_a{};
  };
  void check_prepared() const {
    if (!prepared_) throw std::logic_error("DampedLbfgs: prepare() must follow push()");
  }
  int M_;
  double r_, gmin_;
  std::deque<Pair> pairs_;
  Scalar gamma_{}, inv_gamma_{}, inv_sqrt_gamma_{}, zero_{};
  bool prepared_ = false;
};

namespace lbfgs_detail {
template <class Ops>
GroupVector<Ops> normals_like(const GroupVector<Ops>& like, typename Ops::Rng& rng) {
  GroupVector<Ops> z = GroupVector<Ops>::zeros_like(like);
  for (auto& p : z.parts) Ops::add_gaussian(p, 1.0, rng);
  return z;
}
// c in every coordinate of like's shape (c: a Scalar, one number per chain or member)
template <class Ops>
GroupVector<Ops> constant_like(const GroupVector<Ops>& like, const typename Ops::Scalar& c) {
  GroupVector<Ops> v;
  for (const auto& p : like.parts) v.parts.push_back(Ops::zeros_like(p) + c);
  return v;
}
// v / ||v|| (0 for v = 0)
template <class Ops>
void normalize(GroupVector<Ops>& v) {
  const auto n2 = v.dot(v);
  const auto zero = Ops::zero_scalar(n2);
  v.scale(DampedLbfgs<Ops>::safe_inv(Ops::sqrt(n2), zero));
}
template <class Ops>
void set_values(std::vector<Group<Ops>>& groups, const GroupVector<Ops>& v) {
  for (std::size_t g = 0; g < groups.size(); ++g) Ops::assign(groups[g].value, v.parts[g]);
}
// A probe's gradient difference on the current minibatch: y = -(g(base + s) - g_base), by one extra gradient at
// base + s (`one`: 1 as a Scalar where the data live); the groups are then set to `restore`. The probe pairs of
// HAMCMC-SA (G_1 = I / gamma_1) and of HAMCMC's first steps.
template <class Ops, class Regrad>
GroupVector<Ops> probe_difference(std::vector<Group<Ops>>& groups, const GroupVector<Ops>& base,
                                  const GroupVector<Ops>& s, const GroupVector<Ops>& g_base,
                                  const typename Ops::Scalar& one, const GroupVector<Ops>& restore, Regrad& regrad) {
  GroupVector<Ops> b = clone<Ops>(base);
  b.axpy(one, s);
  set_values<Ops>(groups, b);
  regrad();
  GroupVector<Ops> y = GroupVector<Ops>::difference(g_base, GroupVector<Ops>::grads(groups));
  set_values<Ops>(groups, restore);
  return y;
}
// theta += eps xi + sd eta, in place (values may alias a network's parameters); returns the increment.
template <class Ops>
GroupVector<Ops> move(std::vector<Group<Ops>>& groups, const GroupVector<Ops>& xi, double eps,
                      const GroupVector<Ops>& eta, double sd, const typename Ops::Scalar& like) {
  GroupVector<Ops> s = clone<Ops>(xi);
  s.scale(like + eps);
  s.axpy(like + sd, eta);
  for (std::size_t g = 0; g < groups.size(); ++g) groups[g].value += s.parts[g];
  return s;
}
// Drops from a curvature pair (s, y) between the points theta and theta + s the coordinates of the sparse groups
// whose sign changed: the SSGL prior's Laplace spike has the gradient -kappa0 sign(theta) / sigma, which jumps by
// 2 kappa0 / sigma there. That jump is not curvature; kept, it inflates y'y / s'y without bound as the steps
// shrink (measured on 2,000 MNIST digits: gamma 1e5-1e6 and a drift 1e-5 of the gradient, against 2e4-9e4 and
// 1e-3 without the sparse prior), and the smaller preconditioner shrinks the steps further.
template <class Ops>
void drop_sign_changes(const std::vector<Group<Ops>>& groups, const GroupVector<Ops>& theta, GroupVector<Ops>& s,
                       GroupVector<Ops>& y) {
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!groups[g].sparse) continue;
    const typename Ops::Array& a = theta.parts[g];
    const typename Ops::Array keep = a * (a + s.parts[g]);  // > 0 where the sign held
    const typename Ops::Array zero = Ops::zeros_like(a);
    const typename Ops::Array s_kept = Ops::where(keep, s.parts[g], zero);
    const typename Ops::Array y_kept = Ops::where(keep, y.parts[g], zero);
    s.parts[g] = s_kept;
    y.parts[g] = y_kept;
  }
}
inline Eigen::VectorXd flat(const GroupVector<EigenOps>& v) {
  Eigen::Index n = 0;
  for (const auto& p : v.parts) n += p.size();
  Eigen::VectorXd out(n);
  Eigen::Index o = 0;
  for (const auto& p : v.parts) {
    out.segment(o, p.size()) = p.matrix();
    o += p.size();
  }
  return out;
}
inline GroupVector<EigenOps> unflat(const Eigen::VectorXd& x, const GroupVector<EigenOps>& like) {
  GroupVector<EigenOps> v;
  Eigen::Index o = 0;
  for (const auto& p : like.parts) {
    v.parts.push_back(x.segment(o, p.size()).array());
    o += p.size();
  }
  return v;
}
}  // namespace lbfgs_detail

// HAMCMC-SA (Algorithm 2). Per iteration k, with g_k the posterior gradient at theta_k on minibatch d_k:
//   z_k ~ N(0, I) (one normal per parameter, group order, from the model's noise source)
//   G~_k, S~_k from the memory (Algorithm 1)
//   "matrix" (Eigen storage only): G_k = (1 - w) G_{k-1} + w G~_k dense (G~_k by recursion (6)), S_k = chol(G_k),
//     u_k = G_k g_k, v_k = S_k z_k.
//   "diagonal": the exact diagonal of the paper's G_k, d_k = (1 - w) d_{k-1} + w diag(G~_k) (diag is linear, so
//     this IS diag(G_k) with no approximation), d_0 = the diagonal of G_1 (below), diag(G~_k) from the memory at linear cost (diag_G());
//     u_k = d_k * g_k, v_k = sqrt(d_k) * z_k: a preconditioned Langevin step with a positive diagonal
//     preconditioner (the off-diagonal curvature is dropped).
//   "lowrank": the paper's G_k = sum_j w_{k,j} G~_j (SA weights w_{k,j} = omega_j prod_{i > j} (1 - omega_i), and
//     w_{k,0} = prod (1 - omega_i) on G_1, below) with the K newest memories kept whole and the older ones (and G_1)
//     by their diagonal: G_k = diag(D_k) + sum_{j > k - K} w_{k,j} G~_j, D_k = w_{k,0} diag(G_1) + sum_{j <= k - K}
//     w_{k,j} diag(G~_j) (exact diagonals, diag_G()). u_k = G_k g_k; v_k = sqrt(D_k) * z_0 + sum_j sqrt(w_{k,j})
//     S~_j z_j with K + 1 independent normal vectors, so v_k has EXACTLY the covariance G_k of the drift's
//     operator (a preconditioned Langevin step with a positive definite G_k that depends on the current point
//     only through omega_k G~_k, as the matrix form). Linear in the number of parameters: 2K applications of a
//     memory; with K >= k it is the matrix form's G_k (tested).
//   G_1 (init_curvature, the default; a deviation from Algorithm 2's G_1 = I): I / gamma_1, with gamma_1 the
//     L-BFGS scale of a probe pair at the starting point on the first minibatch, s = probe_size rms(theta_1) z
//     (z ~ N(0, I) from the chain's stream), y = -(g(theta_1 + s; d_1) - g_1): gamma_1 = y'y / s'y, or ||y|| / ||s||
//     when s'y <= 0, at least gamma_min. Why: G~_k = B_k^{-1} divides by the curvature of the SUMMED posterior
//     (about N times the per-example curvature), while G_1 = I does not, so with G_1 = I a step that suits G~_k is
//     N-fold too long for the first iterations, and a step that suits G_1 = I is shrunk by gamma (2e4-5e4 on 2,000
//     MNIST digits) once the SA has moved G_k to the memory's scale (measured: the drift fell to 0.0024 of the
//     gradient and the chain stopped learning). I / gamma_1 is the memory's own starting matrix G~_{k,0} (Algorithm
//     1), so G_k keeps one scale from the first iteration and the step is chosen on it. The probe pair is also the
//     memory's first pair (a same-minibatch pair at the start; "consecutive" pairs follow from iteration 2). The
//     probe costs one gradient once; the probe's point is restored exactly (the values are copied back).
//   normalize: u / ||u||, v / ||v|| (lines 7-8).
//   theta_{k+1} = theta_k + eps u_k + sqrt(2 eps / tau) v_k
//   then the curvature pair: "same_batch" s = the increment, y = -(g(theta_{k+1}; d_k) - g_k) (a second gradient
//   through regrad()); "consecutive" the pair (theta_k - theta_{k-1}, -(g_k - g_{k-1})) is added at the start of
//   iteration k instead (no second gradient).
struct HamcmcSaStep {
  static constexpr bool needs_regradient = true;
  explicit HamcmcSaStep(const LbfgsControl& lc) : lc_(lc) {}
  template <class Ops>
  void start(std::vector<Group<Ops>>&) {}

  // Ctx: steps.hpp's StepContext (k, eps, tau)
  template <class Ops, class Ctx, class Regrad>
  void step(std::vector<Group<Ops>>& groups, const Ctx& c, typename Ops::Rng& rng, Regrad& regrad) {
    state<Ops>().step(groups, c, rng, regrad, lc_);
  }

 private:
  template <class Ops>
  struct State {
    using GV = GroupVector<Ops>;
    DampedLbfgs<Ops> mem;
    GV g_prev, u, v, theta_prev;
    GV D;  // diagonal form: diag(G_k); lowrank form: the diagonal part D_k
    std::deque<std::pair<DampedLbfgs<Ops>, typename Ops::Scalar>> recent;  // lowrank: K memories and weights
    typename Ops::Scalar zero{};
    bool first = true;
    Eigen::MatrixXd G;  // matrix form
    explicit State(const LbfgsControl& lc) : mem(lc.memory, lc.damping_r, lc.gamma_min) {}

    typename Ops::Scalar g1_scale{};  // G_1 = g1_scale I
    bool chain_pair = false;  // every chain (member) has a pair of its own steps in the memory
    typename Ops::Scalar have_pair{};  // > 0: this member has (batched storage: one number per member)

    // Adds a pair of the chain's steps. Until the first one is in, a pair that drop_sign_changes() emptied (a
    // sparse start at exactly 0, every coordinate crossing the kink) is skipped: its gamma would be gamma_min,
    // G~ = I. A batched group skips it for the members concerned only (DampedLbfgs::push_masked; `active`: the
    // members that still run, the others do not count). One host read of s's, at most until every member has a
    // pair.
    void push_chain_pair(GV s, GV y, const std::vector<char>* active) {
      if (!chain_pair) {
        const auto ss = s.dot(s);
        const auto keep = Ops::where(have_pair, have_pair, Ops::where(ss, zero + 1.0, zero));
        const std::vector<double> k = Ops::values(keep);
        bool any = false, all = true;
        for (std::size_t i = 0; i < k.size(); ++i) {
          if (active && i < active->size() && !(*active)[i]) continue;
          any = any || k[i] > 0.0;
          all = all && k[i] > 0.0;
        }
        if (!any) return;
        have_pair = keep;
        if (!all) {
          mem.push_masked(std::move(s), std::move(y), keep);
          return;
        }
        chain_pair = true;
      }
      mem.push(std::move(s), std::move(y));
    }

    // A probe pair at the current point on the current minibatch (header comment): s = probe_size rms(theta) z,
    // y = -(g(theta + s) - g); the values are restored exactly and g is left as it was.
    template <class Regrad>
    std::pair<GV, GV> probe_pair(std::vector<Group<Ops>>& groups, const GV& g, typename Ops::Rng& rng,
                                 Regrad& regrad, const LbfgsControl& lc) {
      GV th = GV::values(groups);
      double P = 0.0;
      for (const auto& p : th.parts) P += static_cast<double>(Ops::size(p));
      std::vector<double> scale = Ops::values(th.dot(th));  // one per chain (member)
      for (double& v : scale) {
        const double rms = P > 0 ? std::sqrt(v / P) : 0.0;
        v = lc.probe_size * std::max(rms > 0.0 && std::isfinite(rms) ? rms : 1.0, 1e-2);
      }
      GV s = lbfgs_detail::normals_like<Ops>(g, rng);
      s.scale(Ops::from_values(scale, zero));
      // The pair's first point: theta, with the coordinates of sparse groups whose sign would change along s (those
      // within |s_j| of 0, such as a regression's default start, which sits at 0) moved by 2 s_j first, so the
      // pair crosses no kink of the spike. Kept where they are, drop_sign_changes() would leave nothing of a
      // sparse start (measured on Boston: gamma_1 = gamma_min, G_1 = I). When no coordinate is that close to 0
      // (a network's start), the first point is theta and g its gradient (no extra gradient). s is at least
      // probe_size * 0.01 per coordinate (a start at 1e-16 gave y = 0 in double precision).
      GV a = lbfgs_detail::clone<Ops>(th);
      bool moved = false;
      for (std::size_t k = 0; k < groups.size(); ++k) {
        if (!groups[k].sparse) continue;
        const typename Ops::Array& ak = a.parts[k];
        const typename Ops::Array near = Ops::where(ak * (ak + s.parts[k]), Ops::zeros_like(ak),
                                                    Ops::zeros_like(ak) + 2.0);  // 2 where the sign would change
        const std::vector<double> any = Ops::values(Ops::sum(near));  // any member (the others move by 0)
        if (std::any_of(any.begin(), any.end(), [](double v) { return v > 0.0; })) {
          a.parts[k] += near * s.parts[k];
          moved = true;
        }
      }
      GV ga = lbfgs_detail::clone<Ops>(g);
      if (moved) {
        lbfgs_detail::set_values<Ops>(groups, a);
        regrad();
        ga = GV::grads(groups);
      }
      GV y = lbfgs_detail::probe_difference<Ops>(groups, a, s, ga, zero + 1.0, th, regrad);  // -(g(a + s) - g(a))
      lbfgs_detail::drop_sign_changes<Ops>(groups, a, s, y);
      return {std::move(s), std::move(y)};
    }
    // 1 / the L-BFGS scale of a pair: y'y / s'y, or ||y|| / ||s|| when s'y <= 0; at least gamma_min (per chain,
    // computed on the host in double).
    typename Ops::Scalar inverse_pair_gamma(const GV& s, const GV& y, double gamma_min) const {
      const std::vector<double> sy = Ops::values(s.dot(y)), yy = Ops::values(y.dot(y)), ss = Ops::values(s.dot(s));
      std::vector<double> out(sy.size());
      for (std::size_t i = 0; i < sy.size(); ++i) {
        double gam = sy[i] > 0.0 ? yy[i] / sy[i] : std::sqrt(yy[i] / ss[i]);
        if (!std::isfinite(gam) || gam < gamma_min) gam = gamma_min;
        out[i] = 1.0 / gam;
      }
      return Ops::from_values(out, zero);
    }

    template <class Ctx, class Regrad>
    void step(std::vector<Group<Ops>>& groups, const Ctx& c, typename Ops::Rng& rng, Regrad& regrad,
              const LbfgsControl& lc) {
      GV g = GV::grads(groups);
      if (first) {
        zero = Ops::zero_scalar(g.dot(g));  // a 0 where the data live, once
        g1_scale = zero + 1.0;
        have_pair = zero;
      }
      const auto& like = zero;
      if (first && lc.init_curvature) {
        // the probe pair also starts the memory: an empty memory is G~ = I / gamma_min, which the SA would
        // average into G_1 with the weight omega_1 (about 0.1)
        auto pr = probe_pair(groups, g, rng, regrad, lc);
        g1_scale = inverse_pair_gamma(pr.first, pr.second, lc.gamma_min);
        mem.push(std::move(pr.first), std::move(pr.second));
      }
      if (lc.curvature == Curvature::consecutive) {
        GV th = GV::values(groups);
        if (!first) {
          GV y = GV::difference(g_prev, g);  // -(g_k - g_{k-1})
          GV s = GV::difference(th, theta_prev);
          lbfgs_detail::drop_sign_changes<Ops>(groups, theta_prev, s, y);
          push_chain_pair(std::move(s), std::move(y), c.active);
        }
        theta_prev = std::move(th);
      }
      mem.prepare(like);
      GV z = lbfgs_detail::normals_like<Ops>(g, rng);
      const double w = lc.precond.at(c.k);
      if (lc.sa_form == SaForm::matrix) {
        matrix_step(g, z, w);
      } else if (lc.sa_form == SaForm::lowrank) {
        if (first) D = lbfgs_detail::constant_like<Ops>(g, g1_scale);  // G_1, kept by its diagonal
        D.scale(like + (1.0 - w));
        for (auto& r : recent) r.second = r.second * (1.0 - w);
        recent.emplace_back(mem, like + w);  // the prepared memory (read only from here on)
        if (static_cast<int>(recent.size()) > lc.sa_memories) {
          D.axpy(recent.front().second, recent.front().first.diag_G(g));
          recent.pop_front();
        }
        u = lbfgs_detail::clone<Ops>(g);
        u.multiply(D);
        v = GV::sqrt(D);
        v.multiply(z);
        for (auto& r : recent) {
          u.axpy(r.second, r.first.apply_G(g));
          const GV zj = lbfgs_detail::normals_like<Ops>(g, rng);
          v.axpy(Ops::sqrt(r.second), r.first.apply_S(zj));
        }
      } else {  // diagonal
        if (first) D = lbfgs_detail::constant_like<Ops>(g, g1_scale);  // G_1
        D.scale(like + (1.0 - w));
        D.axpy(like + w, mem.diag_G(g));
        u = lbfgs_detail::clone<Ops>(g);
        u.multiply(D);
        v = GV::sqrt(D);
        v.multiply(z);
      }
      GV xi = lbfgs_detail::clone<Ops>(u), eta = lbfgs_detail::clone<Ops>(v);
      if (lc.normalize) {
        lbfgs_detail::normalize<Ops>(xi);
        lbfgs_detail::normalize<Ops>(eta);
      }
      if (c.stats) lbfgs_detail::report<Ops>(*c.stats, g, xi, z, eta, mem.gamma());
      GV s = lbfgs_detail::move<Ops>(groups, xi, c.eps, eta, std::sqrt(2.0 * c.eps / c.tau), like);
      if (lc.curvature == Curvature::same_batch) {
        regrad();
        GV y = GV::grads(groups);
        GV yneg = GV::difference(g, y);  // -(g(theta_{k+1}) - g(theta_k))
        const GV th0 = GV::difference(GV::values(groups), s);  // theta_k
        lbfgs_detail::drop_sign_changes<Ops>(groups, th0, s, yneg);
        push_chain_pair(std::move(s), std::move(yneg), c.active);
      }
      g_prev = std::move(g);
      first = false;
    }

    void matrix_step(const GV& g, const GV& z, double w) {
      if constexpr (std::is_same<Ops, EigenOps>::value) {
        const Eigen::VectorXd gf = lbfgs_detail::flat(g), zf = lbfgs_detail::flat(z);
        const Eigen::Index d = gf.size();
        if (G.rows() != d) G = g1_scale * Eigen::MatrixXd::Identity(d, d);
        // G~ column by column through the memory
        Eigen::MatrixXd Gt(d, d);
        for (Eigen::Index j = 0; j < d; ++j) {
          Eigen::VectorXd ej = Eigen::VectorXd::Zero(d);
          ej[j] = 1.0;
          Gt.col(j) = lbfgs_detail::flat(mem.apply_G(lbfgs_detail::unflat(ej, g)));
        }
        G = (1.0 - w) * G + w * (0.5 * (Gt + Gt.transpose()));
        Eigen::LLT<Eigen::MatrixXd> llt(G);
        if (llt.info() != Eigen::Success) {
          // A non-finite G (the chain ran off: infinite gradients or steps) is the driver's divergence, reported
          // at its next check with the last good state; a finite G that is not positive definite is a bug.
          if (!G.allFinite() || !gf.allFinite()) {
            u = lbfgs_detail::unflat(Eigen::VectorXd::Constant(d, std::numeric_limits<double>::quiet_NaN()), g);
            v = u;
            return;
          }
          throw std::runtime_error("HAMCMC-SA: the preconditioning matrix lost positive definiteness");
        }
        u = lbfgs_detail::unflat(G * gf, g);
        v = lbfgs_detail::unflat(llt.matrixL() * zf, g);
      } else {
        (void)g;
        (void)z;
        (void)w;
        throw std::invalid_argument("sa_form = \"matrix\" is implemented for the Eigen (regression) storage only");
      }
    }
  };

  // The per-chain state, built at the first step for the storage the chain uses (a policy object serves one
  // chain, hence one Ops type).
  template <class Ops>
  State<Ops>& state() {
    if (!state_) state_ = std::make_shared<State<Ops>>(lc_);
    return *static_cast<State<Ops>*>(state_.get());
  }

  LbfgsControl lc_;
  std::shared_ptr<void> state_;
};

// HAMCMC (Simsekli, Durmus, Badeau, Richard, Moulines & Cemgil 2016) as Wang et al. run it (sec. 5.1, "without
// the other tricks"): at iteration t
//   theta_t = theta_{t-M} + eps G~ g(theta_{t-M}; d_t) + sqrt(2 eps / tau) S~ z_t,
// where G~ (S~) is the damped L-BFGS memory (above) of the 2M - 3 pairs of consecutive entries of the samples
// (theta_{t-2M+1}, ..., theta_{t-M-1}, theta_{t-M+1}, ..., theta_{t-1}) -- theta_{t-M} left out, so the
// preconditioner does not depend on the point it moves. The gradient at theta_{t-M} on d_t is a second gradient
// (regrad()). The pairs' gradient differences:
//   "same_batch" (the default): every history entry's gradient on d_t, so a pair's y is the minibatch Hessian's
//     action on s (exact for a quadratic) -- 2M - 1 gradients per iteration (3 for M = 2: the driver's at
//     theta_{t-1}, theta_{t-M} and theta_{t-2M+1});
//   "consecutive": each entry's gradient on the minibatch of the iteration after it (the driver's), one extra
//     gradient per iteration. Measured: its y is dominated by the difference of two minibatches' noise, which
//     does not shrink with the step, so G~ swings between 1 / (a noise-inflated gamma) and I / gamma_min: at the
//     warm-up's step the exact Gaussian posterior came out with sds 1.6-1.7 times the exact, the logistic
//     regression 2.1-2.3 times NUTS's, and before the two-sided damping it diverged.
// Until 2M - 1 samples exist (t <= 2M - 1) the step starts from theta_{t-1} with a memory of one probe pair on
// d_t: s = delta g / ||g|| along the current gradient, ||s|| = 1e-3 sqrt(d) max(rms(theta), 1e-3) (a 0.1 %
// perturbation), y = -(g(theta_{t-1} + s; d_t) - g(theta_{t-1}; d_t)); with an empty memory (G~ = I / gamma_min)
// those first steps were SGLD steps at a step meant for a preconditioned one, and the warm-up had to choose a
// step 1 / lambda_max(H) small. No SA of the preconditioner (the control's precond_* and sa_form do not apply).
struct HamcmcStep {
  static constexpr bool needs_regradient = true;
  explicit HamcmcStep(const LbfgsControl& lc) : lc_(lc) {
    if (lc.memory < 2) throw std::invalid_argument("HAMCMC needs memory >= 2");
  }
  template <class Ops>
  void start(std::vector<Group<Ops>>&) {}

  template <class Ops, class Ctx, class Regrad>
  void step(std::vector<Group<Ops>>& groups, const Ctx& c, typename Ops::Rng& rng, Regrad& regrad) {
    using GV = GroupVector<Ops>;
    if (!state_) state_ = std::make_shared<State<Ops>>(lc_);
    State<Ops>& st = *static_cast<State<Ops>*>(state_.get());
    const int M = lc_.memory;
    const std::size_t need = static_cast<std::size_t>(2 * M - 1);
    st.hist.emplace_back(GV::values(groups), GV::grads(groups));  // theta_{t-1}, g(theta_{t-1}; d_t)
    while (st.hist.size() > need) st.hist.pop_front();
    const GV& g_cur = st.hist.back().second;
    if (st.hist.size() == 1) {
      st.zero = Ops::zero_scalar(g_cur.dot(g_cur));  // a 0 where the data live, once
      st.d = 0.0;
      for (const auto& p : g_cur.parts) st.d += static_cast<double>(Ops::size(p));
    }
    const auto& like = st.zero;
    GV z = lbfgs_detail::normals_like<Ops>(g_cur, rng);
    st.mem.clear();
    GV gb;
    if (st.hist.size() < need) {  // the first steps: from theta_{t-1}, a memory of one probe pair on d_t
      const GV& th = st.hist.back().first;
      const auto rms = Ops::sqrt(th.dot(th) * (1.0 / st.d));
      const auto scale = Ops::where(rms - 1e-3, rms, like + 1e-3);
      GV s = lbfgs_detail::clone<Ops>(g_cur);
      s.scale(DampedLbfgs<Ops>::safe_inv(Ops::sqrt(g_cur.dot(g_cur)), like) * scale * (1e-3 * std::sqrt(st.d)));
      GV y = lbfgs_detail::probe_difference<Ops>(groups, th, s, g_cur, like + 1.0, th, regrad);  // -(g(th + s) - g)
      st.mem.push(std::move(s), std::move(y));
      st.mem.prepare(like);
      gb = g_cur;
    } else {
      // entries 0 .. 2M-2 are theta_{t-2M+1} .. theta_{t-1}; entry M-1 is the base theta_{t-M}
      std::vector<GV> grads;
      if (lc_.curvature == Curvature::same_batch) {
        grads.resize(need);
        for (std::size_t i = 0; i + 1 < need; ++i) {
          lbfgs_detail::set_values<Ops>(groups, st.hist[i].first);
          regrad();
          grads[i] = GV::grads(groups);
        }
        grads[need - 1] = g_cur;
      }
      auto grad_of = [&](std::size_t i) -> const GV& {
        return lc_.curvature == Curvature::same_batch ? grads[i] : st.hist[i].second;
      };
      std::vector<std::size_t> seq;
      for (std::size_t i = 0; i < need; ++i)
        if (i != static_cast<std::size_t>(M - 1)) seq.push_back(i);
      for (std::size_t j = 1; j < seq.size(); ++j) {
        const std::size_t a = seq[j - 1], b = seq[j];
        st.mem.push(GV::difference(st.hist[b].first, st.hist[a].first), GV::difference(grad_of(a), grad_of(b)));
      }
      st.mem.prepare(like);
      if (lc_.curvature == Curvature::same_batch) {
        gb = grads[static_cast<std::size_t>(M - 1)];
      } else {
        lbfgs_detail::set_values<Ops>(groups, st.hist[static_cast<std::size_t>(M - 1)].first);
        regrad();
        gb = GV::grads(groups);
      }
      lbfgs_detail::set_values<Ops>(groups, st.hist[static_cast<std::size_t>(M - 1)].first);  // move from the base
    }
    GV xi = st.mem.apply_G(gb), eta = st.mem.apply_S(z);
    if (lc_.normalize) {
      lbfgs_detail::normalize<Ops>(xi);
      lbfgs_detail::normalize<Ops>(eta);
    }
    if (c.stats) lbfgs_detail::report<Ops>(*c.stats, gb, xi, z, eta, st.mem.gamma());
    lbfgs_detail::move<Ops>(groups, xi, c.eps, eta, std::sqrt(2.0 * c.eps / c.tau), like);
  }

 private:
  template <class Ops>
  struct State {
    using GV = GroupVector<Ops>;
    std::deque<std::pair<GV, GV>> hist;
    DampedLbfgs<Ops> mem;
    typename Ops::Scalar zero{};
    double d = 0.0;
    explicit State(const LbfgsControl& lc) : mem(std::max(1, 2 * lc.memory - 3), lc.damping_r, lc.gamma_min) {}
  };
  LbfgsControl lc_;
  std::shared_ptr<void> state_;
};

}  // namespace sgmcmc
}  // namespace scalebayes
