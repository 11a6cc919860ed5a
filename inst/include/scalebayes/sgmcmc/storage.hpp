// scalebayes/sgmcmc/storage.hpp -- the parameter-storage concept the SG-MCMC update rules are written against.
//
// Every update rule in updates.hpp (SGLD, SGHMC, SSGL prior gradient, SA of the latent variables, magnitude
// pruning) is a template over an `Ops` policy describing how one parameter group is stored. An `Ops` policy
// provides
//
//   using Array  = ...;                     // storage of one group (Eigen::ArrayXd; torch::Tensor in nn/sgmcmc.hpp)
//   using Scalar = ...;                     // a number that may live on a device (double; a 0-dim tensor)
//   using Rng    = ...;                     // the noise source (rng::Stream; a torch::Generator)
//   static Array zeros_like(const Array&);
//   static Index size(const Array&);
//   static Scalar sum(const Array&);                 // sum of the entries
//   static Scalar abs_sum_weighted(const Array& w, const Array& x);   // sum_j w_j |x_j|
//   static Scalar sq_sum_weighted(const Array& w, const Array& x);    // sum_j w_j x_j^2
//   static Scalar zero_scalar(const Scalar& like);   // 0 where `like` lives
//   static Scalar sqrt(const Scalar&);
//   static Scalar clamp(const Scalar&, double lo, double hi);
//   static double value(const Scalar&);              // to the host (a synchronisation on a device)
//   static std::vector<double> values(const Scalar&);   // idem, one number per chain (several for a batched
//                                                       // storage, whose Scalar holds one per member)
//   static Scalar from_values(const std::vector<double>& v, const Scalar& like);  // like + v, one per chain
//   static bool all_finite(const Array&);            // a synchronisation on a device
//   static bool finite_positive(const Scalar&);      // idem
//   static void assign(Array& dst, const Array& src);                // copy the VALUES (dst keeps its storage)
//   static void add_gaussian(Array& x, double sd, Rng&);              // x += sd * N(0, I)
//   static void ssgl_prior_grad(Array& g, const Array& x, const Array& k0, const Array& k1,
//                               const Scalar& sigma);  // g += -k0 sign(x)/sigma - k1 x / sigma^2
//   static Array inclusion_prob(const Array& x, const Scalar& sigma, const Scalar& delta, double v0,
//                               double v1);         // eq. (12)
//   static void prune_smallest(Array& x, double s);  // x_j = 0 for the floor(s p) smallest |x_j|
//   static Scalar dot(const Array& a, const Array& b);               // sum_j a_j b_j (0 for empty arrays)
//   static void axpy(const Scalar& alpha, const Array& x, Array& y); // y += alpha x, alpha where the data live
//   static Scalar where(const Scalar& c, const Scalar& a, const Scalar& b);  // c > 0 ? a : b, without a branch
//   static Array where(const Array& c, const Array& a, const Array& b);      // elementwise       on the host
//
// Vectors over ALL groups (a quasi-Newton memory pairs every parameter of a model) are `GroupVector<Ops>`
// (updates.hpp): one Array per group, with dot / axpy / scale over the whole list.
//
// and ordinary arithmetic (Array +,- Array, scalar * Array, Array * Array, in-place forms; Scalar with double).
// Value semantics are explicit: `assign` copies values into existing storage. A torch tensor aliases on `=`, and a
// group's value tensor IS the network's parameter, so rules never rebind `value` (they update it in place) and
// snapshots are taken and restored with `assign`. Scalars stay on the device: nothing in a step reads a number
// back to the host except what the driver asks for at its check, trace and save points.
//
// Header-only, Eigen + std, no R.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "scalebayes/rng/stream.hpp"

namespace scalebayes {
namespace sgmcmc {

// Standard normal variates by the ziggurat method (Marsaglia & Tsang 2000, in Doornik's 2005 ZIGNOR form with
// 128 blocks: exact, no 32-bit quantization), drawing from an rng::Stream. SGLD needs one normal per parameter
// per iteration; this is about 3x faster than the polar method of Stream::normal().
class Ziggurat {
 public:
  static double normal(rng::Stream& rs) {
    const Tables& t = tables();
    for (;;) {
      const std::uint64_t bits = rs.next();
      const double u = 2.0 * (((bits >> 11) + 0.5) * 0x1.0p-53) - 1.0;  // (-1, 1)
      const unsigned i = static_cast<unsigned>(bits & 0x7F);            // low 7 bits: the block
      if (std::abs(u) < t.r[i]) return u * t.x[i];                      // inside the rectangle
      if (i == 0) {                                                     // base block: the tail beyond R
        double x, y;
        do {
          x = std::log(rs.uniform()) / kR;
          y = std::log(rs.uniform());
        } while (-2.0 * y < x * x);
        return u < 0 ? x - kR : kR - x;
      }
      const double x = u * t.x[i];                                      // wedge: accept under the density
      const double f0 = std::exp(-0.5 * (t.x[i] * t.x[i] - x * x));
      const double f1 = std::exp(-0.5 * (t.x[i + 1] * t.x[i + 1] - x * x));
      if (f1 + rs.uniform() * (f0 - f1) < 1.0) return x;
    }
  }

 private:
  static constexpr int kC = 128;
  static constexpr double kR = 3.442619855899;
  static constexpr double kV = 9.91256303526217e-3;
  struct Tables {
    double x[kC + 1];
    double r[kC];
    Tables() {
      double f = std::exp(-0.5 * kR * kR);
      x[0] = kV / f;
      x[1] = kR;
      x[kC] = 0.0;
      for (int i = 2; i < kC; ++i) {
        x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f));
        f = std::exp(-0.5 * x[i] * x[i]);
      }
      for (int i = 0; i < kC; ++i) r[i] = x[i + 1] / x[i];
    }
  };
  static const Tables& tables() {
    static const Tables t;  // thread-safe initialization (C++11)
    return t;
  }
};

struct EigenOps {
  using Array = Eigen::ArrayXd;
  using Scalar = double;
  using Index = Eigen::Index;
  using Rng = rng::Stream;

  static Array zeros_like(const Array& a) { return Array::Zero(a.size()); }
  static double zero_scalar(double) { return 0.0; }
  static double sqrt(double v) { return std::sqrt(v); }
  static double clamp(double v, double lo, double hi) { return std::min(std::max(v, lo), hi); }
  static double value(double v) { return v; }
  static std::vector<double> values(double v) { return {v}; }
  static double from_values(const std::vector<double>& v, double like) { return like + v.at(0); }
  static bool finite_positive(double v) { return std::isfinite(v) && v > 0.0; }
  static void assign(Array& dst, const Array& src) { dst = src; }
  static void prune_smallest(Array& x, double s) {
    const double thr = abs_quantile(x, s);
    if (thr > 0.0) zero_below(x, thr);
  }
  static Index size(const Array& a) { return a.size(); }
  static double dot(const Array& a, const Array& b) { return a.size() ? (a * b).sum() : 0.0; }
  static void axpy(double alpha, const Array& x, Array& y) { y += alpha * x; }
  static double where(double c, double a, double b) { return c > 0.0 ? a : b; }
  static Array where(const Array& c, const Array& a, const Array& b) { return (c > 0.0).select(a, b); }
  static double sum(const Array& a) { return a.size() ? a.sum() : 0.0; }
  static double abs_sum_weighted(const Array& w, const Array& x) { return x.size() ? (w * x.abs()).sum() : 0.0; }
  static double sq_sum_weighted(const Array& w, const Array& x) { return x.size() ? (w * x.square()).sum() : 0.0; }
  static bool all_finite(const Array& a) {
    // A sum of finite numbers overflows only for |x| ~ 1e308: treat that as divergence too.
    return std::isfinite(a.size() ? a.sum() : 0.0);
  }
  static void add_gaussian(Array& x, double sd, Rng& rng) {
    if (sd == 0.0) return;
    const Index n = x.size();
    for (Index j = 0; j < n; ++j) x[j] += sd * Ziggurat::normal(rng);
  }
  static void ssgl_prior_grad(Array& g, const Array& x, const Array& k0, const Array& k1, double sigma) {
    const double is = 1.0 / sigma, is2 = is * is;
    // sign(0) = 0: the subgradient of |x| at 0 of smallest norm.
    g -= is * k0 * x.sign() + is2 * k1 * x;
  }
  // P(gamma_j = 1 | x_j, sigma, delta) for the SSGL prior: slab N(0, sigma^2 v1) with weight delta against
  // spike Laplace(0, sigma v0) with weight 1 - delta, computed on the log-odds scale (no under/overflow).
  static Array inclusion_prob(const Array& x, double sigma, double delta, double v0, double v1) {
    const double c = std::log(delta) - std::log1p(-delta) - 0.5 * std::log(2.0 * M_PI * sigma * sigma * v1) +
                     std::log(2.0 * sigma * v0);
    const Array logodds = c - x.square() / (2.0 * sigma * sigma * v1) + x.abs() / (sigma * v0);
    // 1 / (1 + exp(-l)), clamped so exp never overflows.
    return (1.0 + (-logodds.min(700.0).max(-700.0)).exp()).inverse();
  }
  static double abs_quantile(const Array& x, double s) {
    const Index n = x.size();
    if (n == 0 || s <= 0.0) return 0.0;
    std::vector<double> a(static_cast<std::size_t>(n));
    for (Index j = 0; j < n; ++j) a[static_cast<std::size_t>(j)] = std::abs(x[j]);
    std::size_t k = static_cast<std::size_t>(std::floor(s * static_cast<double>(n)));
    if (k == 0) return 0.0;
    if (k >= a.size()) k = a.size();
    std::nth_element(a.begin(), a.begin() + (k - 1), a.end());
    // threshold: prune the k smallest, i.e. everything strictly below the next value; return the k-th smallest
    // and prune |x| <= it via zero_below with a nudged threshold.
    return std::nextafter(a[k - 1], HUGE_VAL);
  }
  static Index zero_below(Array& x, double threshold) {
    Index z = 0;
    for (Index j = 0; j < x.size(); ++j) {
      if (std::abs(x[j]) < threshold) {
        x[j] = 0.0;
        ++z;
      }
    }
    return z;
  }
};

}  // namespace sgmcmc
}  // namespace scalebayes
