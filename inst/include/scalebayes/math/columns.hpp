// scalebayes/math/columns.hpp -- column moments and standardization of a dense column-major matrix in one pass
// each, with no temporary copy: what R's `colMeans(sweep(x, 2, colMeans(x))^2)` and `sweep(sweep(x, 2, m), 2, s,
// "/")` compute with two or three n x p temporaries. The R front end checks and standardizes every dense design
// with them (R/weighted_lasso.R: prepare_glm_data(), standardize_x()); at n = 1e6, p = 100 those temporaries took
// 16 s of an 18 s wbb() call of 4 draws (bench/RESULTS.md, "WBB lasso as n grows").
//
//   column_moments(x, n, p, center, mean, sd)   mean_j (long double sums, as R's colMeans) unless `center` is
//                                               given, and sd_j = sqrt(mean_i (x_ij - c_j)^2) about it (divisor n)
//   standardize_columns(x, n, p, center, scale, out)   out_ij = (x_ij - c_j) / s_j
//   all_finite(x, len)                          no NA, NaN or Inf among x[0 .. len)
// Header-only, std only; the caller owns the buffers (column-major, n rows, p columns).
#pragma once
#include <cmath>
#include <cstddef>

namespace scalebayes {
namespace math {

// mean (size p) is written unless center != nullptr (then the moments are about center); sd (size p) always.
inline void column_moments(const double* x, std::size_t n, std::size_t p, const double* center, double* mean,
                           double* sd) {
  for (std::size_t j = 0; j < p; ++j) {
    const double* c = x + j * n;
    double m;
    if (center) {
      m = center[j];
    } else {
      long double s = 0.0L;
      for (std::size_t i = 0; i < n; ++i) s += c[i];
      m = n ? static_cast<double>(s / static_cast<long double>(n)) : 0.0;
      mean[j] = m;
    }
    long double ss = 0.0L;
    for (std::size_t i = 0; i < n; ++i) {
      const double d = c[i] - m;
      ss += d * d;  // d * d in double, as R's (x - m)^2: an overflow is Inf here too
    }
    sd[j] = n ? std::sqrt(static_cast<double>(ss / static_cast<long double>(n))) : 0.0;
  }
}

inline void standardize_columns(const double* x, std::size_t n, std::size_t p, const double* center,
                                const double* scale, double* out) {
  for (std::size_t j = 0; j < p; ++j) {
    const double* c = x + j * n;
    double* o = out + j * n;
    const double m = center[j], s = scale[j];
    for (std::size_t i = 0; i < n; ++i) o[i] = (c[i] - m) / s;
  }
}

inline bool all_finite(const double* x, std::size_t len) {
  bool ok = true;
  for (std::size_t i = 0; i < len; ++i) ok &= std::isfinite(x[i]);
  return ok;
}

}  // namespace math
}  // namespace scalebayes
