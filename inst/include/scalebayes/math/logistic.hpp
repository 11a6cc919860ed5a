// scalebayes/math/logistic.hpp -- overflow-safe logistic helpers shared by the GLM engines.
#pragma once
#include <cmath>

namespace scalebayes {
namespace math {

// 1 / (1 + exp(-eta)) without overflow
inline double expit(double eta) {
  if (eta >= 0) return 1.0 / (1.0 + std::exp(-eta));
  const double e = std::exp(eta);
  return e / (1.0 + e);
}

// log(1 + exp(eta)) without overflow
inline double log1pexp(double eta) { return eta > 0 ? eta + std::log1p(std::exp(-eta)) : std::log1p(std::exp(eta)); }

}  // namespace math
}  // namespace scalebayes
