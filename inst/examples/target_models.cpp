// Example models for sgmcmc_model() written in C++ against scalebayes/target.hpp (used by the package's tests,
// tests/testthat/test-sgmcmc-model.R, and bench/sgmcmc_model.R). Compile with
//   Rcpp::sourceCpp(system.file("examples", "target_models.cpp", package = "scalebayes"))
// and use as sgmcmc_density(sgmcmc_model(blr_model(X, y), batch_size = 100), init = rep(0, ncol(X))).
//   Blr   y = X beta + e, e ~ N(0, 1), beta ~ N(0, 10^2 I)
//   Mean  y_i ~ N(theta, 1), theta ~ N(0, 10^2), its sums accumulated in long double as R's sum() does, so
//         that its draws equal those of the R model computing the same numbers
// [[Rcpp::depends(scalebayes)]]
#include <Rcpp.h>
#include <scalebayes/target.hpp>
struct Blr : scalebayes::Target {
  Rcpp::NumericMatrix X; Rcpp::NumericVector y;
  Blr(Rcpp::NumericMatrix X_, Rcpp::NumericVector y_) : X(X_), y(y_) {}
  int dim() const override { return X.ncol(); }
  long n_obs() const override { return X.nrow(); }
  double log_lik(const double* th, const long* rows, long n, double* grad) const override {
    const int p = X.ncol(); const long N = X.nrow();
    for (int j = 0; j < p; ++j) grad[j] = 0;
    double ll = 0;
    for (long t = 0; t < n; ++t) {
      const long i = rows[t];
      double r = y[i];
      for (int j = 0; j < p; ++j) r -= X[i + j * N] * th[j];
      ll -= 0.5 * r * r;
      for (int j = 0; j < p; ++j) grad[j] += X[i + j * N] * r;
    }
    return ll;
  }
  double log_prior(const double* th, double* grad) const override {
    double lp = 0;
    for (int j = 0; j < dim(); ++j) { lp -= th[j] * th[j] / 200; grad[j] = -th[j] / 100; }
    return lp;
  }
};
struct Mean : scalebayes::Target {
  std::vector<double> y;
  explicit Mean(std::vector<double> v) : y(v) {}
  int dim() const override { return 1; }
  long n_obs() const override { return (long) y.size(); }
  double log_lik(const double* th, const long* rows, long n, double* grad) const override {
    long double a = 0, b = 0;  // R sum() accumulates in long double
    for (long t = 0; t < n; ++t) { const double r = y[rows[t]] - th[0]; a += r * r; b += r; }
    grad[0] = (double) b;
    return -0.5 * (double) a;
  }
  double log_prior(const double* th, double* grad) const override {
    grad[0] = -th[0] / 100;
    return -th[0] * th[0] / 200;
  }
};
// [[Rcpp::export]]
SEXP blr_model(Rcpp::NumericMatrix X, Rcpp::NumericVector y) {
  return Rcpp::XPtr<scalebayes::Target>(new Blr(X, y), true, Rcpp::wrap(scalebayes::kTargetTag));
}
// [[Rcpp::export]]
SEXP mean_model(std::vector<double> y) {
  return Rcpp::XPtr<scalebayes::Target>(new Mean(y), true, Rcpp::wrap(scalebayes::kTargetTag));
}
// [[Rcpp::export]]
SEXP untagged_model(std::vector<double> y) { return Rcpp::XPtr<scalebayes::Target>(new Mean(y), true); }
