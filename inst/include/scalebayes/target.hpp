// scalebayes/target.hpp -- the interface of a minibatched model written in C++, for sgmcmc_model() (R) and the
// SG-MCMC engine (sgmcmc/density.hpp). This header is PUBLIC: a user's C++ code (Rcpp::cppFunction,
// Rcpp::sourceCpp, or a package with `LinkingTo: scalebayes`) includes it, derives a model from
// scalebayes::Target, and hands R an external pointer to it:
//
//   // [[Rcpp::depends(scalebayes)]]
//   #include <Rcpp.h>
//   #include <scalebayes/target.hpp>
//   // y_i ~ N(theta, 1), theta ~ N(0, 10^2)
//   struct GaussMean : scalebayes::Target {
//     std::vector<double> y;
//     explicit GaussMean(std::vector<double> v) : y(std::move(v)) {}
//     int dim() const override { return 1; }
//     long n_obs() const override { return static_cast<long>(y.size()); }
//     double log_lik(const double* th, const long* rows, long n, double* grad) const override {
//       double ll = 0, g = 0;
//       for (long t = 0; t < n; ++t) { const double r = y[rows[t]] - th[0]; ll -= 0.5 * r * r; g += r; }
//       grad[0] = g;
//       return ll;
//     }
//     double log_prior(const double* th, double* grad) const override {
//       grad[0] = -th[0] / 100;
//       return -0.5 * th[0] * th[0] / 100;
//     }
//   };
//   // [[Rcpp::export]]
//   SEXP gauss_mean_model(std::vector<double> y) {
//     return Rcpp::XPtr<scalebayes::Target>(new GaussMean(y), true, Rcpp::wrap(scalebayes::kTargetTag));
//   }
//
// and in R: fit <- sgmcmc_density(sgmcmc_model(gauss_mean_model(y)), init = 0). The external pointer's tag
// must be the string kTargetTag (a check that the pointer is a scalebayes::Target before anything is called
// through it) and its finalizer deletes the model (Rcpp::XPtr's default, through the virtual destructor, so the
// memory is freed by the code that allocated it).
//
// The contract:
//   dim()        the number of parameters d (>= 1).
//   n_obs()      the number of rows N (>= 1) the log-likelihood sums over.
//   log_lik(theta, rows, n, grad)
//                the log-likelihood of the n rows rows[0..n) (0-based indices into 0..N-1, distinct), SUMMED, not
//                scaled: the engine multiplies by N / n (and adds the control variate, when asked). It WRITES
//                (does not add to) grad[0..d), the gradient of that sum. rows is 0..N-1 in order for a full-data
//                evaluation (the start check, the warm-up's scores, the mode of the control variates).
//   log_prior(theta, grad)
//                the log prior density (up to a constant) and its gradient, written to grad; the default is a flat
//                prior (0, gradient 0).
//   thread_safe()
//                true (the default) when log_lik and log_prior may be called at the same time from several threads
//                (one per chain: sgmcmc_density(threads = )); a model that keeps scratch space in the object
//                returns false and its chains run one after the other.
// Non-finite values are allowed (a chain that meets them stops as a divergence, as with any target); an exception
// thrown by the model stops the run with its message (an R error). The engine never calls the model from more
// threads than chains, and never after R has released the external pointer.
//
// ABI: abi_version() is the first virtual function, so the engine can read it from a model compiled against
// another version of this header and refuse it (an R error asking to recompile) before calling anything else.
// Header-only, std only (no R).
#pragma once

namespace scalebayes {

// The version of this interface; the engine accepts models built against this version only.
constexpr int kTargetAbiVersion = 1;
// The tag of the external pointer that carries a Target (R: the pointer's tag must be this string).
constexpr const char* kTargetTag = "scalebayes::Target";

class Target {
 public:
  // first in the vtable: read before any other call (see "ABI" above); do not override
  virtual int abi_version() const { return kTargetAbiVersion; }
  virtual ~Target() = default;
  virtual int dim() const = 0;
  virtual long n_obs() const = 0;
  virtual double log_lik(const double* theta, const long* rows, long n, double* grad) const = 0;
  virtual double log_prior(const double* theta, double* grad) const {
    const int d = dim();
    for (int j = 0; j < d; ++j) grad[j] = 0.0;
    (void)theta;
    return 0.0;
  }
  virtual bool thread_safe() const { return true; }
};

}  // namespace scalebayes
