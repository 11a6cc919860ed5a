// Glue for ksd(): draws and scores from R -> math::ksd_imq. No algorithmic code here.
#include "sb_glue.h"
#include "scalebayes/math/ksd.hpp"

// x, score: m x d; weights: m numbers or length 0 (equal). Returns list(ksd, ksd2, interrupted).
// [[Rcpp::export]]
Rcpp::List cpp_ksd(const Rcpp::NumericMatrix& x, const Rcpp::NumericMatrix& score, const Rcpp::NumericVector& weights,
                   double c, double beta) {
  if (x.nrow() != score.nrow() || x.ncol() != score.ncol())
    throw std::invalid_argument("internal: draws and scores must have the same dimensions");
  std::vector<double> w(weights.begin(), weights.end());
  const scalebayes::math::KsdResult r = scalebayes::math::ksd_imq(
      x.begin(), score.begin(), x.nrow(), x.ncol(), w, c, beta, []() { return sbglue::user_interrupted(); });
  return Rcpp::List::create(Rcpp::Named("ksd") = r.ksd, Rcpp::Named("ksd2") = r.ksd2,
                            Rcpp::Named("interrupted") = r.interrupted);
}
