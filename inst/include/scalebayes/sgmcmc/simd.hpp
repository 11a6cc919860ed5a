// scalebayes/sgmcmc/simd.hpp -- dot / axpy on contiguous doubles, the inner loops of the minibatch pass.
//
// R compiles packages for the baseline x86-64 ISA (SSE2). On x86-64 with GCC or Clang these kernels carry an
// AVX2+FMA clone selected at run time (__builtin_cpu_supports), which roughly halves the cost of the minibatch
// pass; elsewhere they fall back to Eigen. FMA changes the last bits of results, so draws are identical for
// any number of threads on one machine but may differ in the last bits between CPUs with and without AVX2.
// Header-only, no R.
#pragma once
#include <Eigen/Core>

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(__AVX2__) && \
    !defined(SCALEBAYES_NO_DISPATCH)
#define SCALEBAYES_SGMCMC_DISPATCH 1
#include <immintrin.h>
#endif

namespace scalebayes {
namespace sgmcmc {
namespace simd {

inline double dot_generic(const double* a, const double* b, long n) {
  return Eigen::Map<const Eigen::VectorXd>(a, n).dot(Eigen::Map<const Eigen::VectorXd>(b, n));
}
inline void axpy_generic(double s, const double* x, double* y, long n) {
  Eigen::Map<Eigen::VectorXd>(y, n) += s * Eigen::Map<const Eigen::VectorXd>(x, n);
}

#ifdef SCALEBAYES_SGMCMC_DISPATCH
__attribute__((target("avx2,fma"))) inline double dot_avx2(const double* a, const double* b, long n) {
  __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd(), s2 = _mm256_setzero_pd(), s3 = _mm256_setzero_pd();
  long i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = _mm256_fmadd_pd(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i), s0);
    s1 = _mm256_fmadd_pd(_mm256_loadu_pd(a + i + 4), _mm256_loadu_pd(b + i + 4), s1);
    s2 = _mm256_fmadd_pd(_mm256_loadu_pd(a + i + 8), _mm256_loadu_pd(b + i + 8), s2);
    s3 = _mm256_fmadd_pd(_mm256_loadu_pd(a + i + 12), _mm256_loadu_pd(b + i + 12), s3);
  }
  for (; i + 4 <= n; i += 4) s0 = _mm256_fmadd_pd(_mm256_loadu_pd(a + i), _mm256_loadu_pd(b + i), s0);
  s0 = _mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3));
  alignas(32) double t[4];
  _mm256_store_pd(t, s0);
  double s = (t[0] + t[1]) + (t[2] + t[3]);
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}
__attribute__((target("avx2,fma"))) inline void axpy_avx2(double s, const double* x, double* y, long n) {
  const __m256d sv = _mm256_set1_pd(s);
  long i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_pd(y + i, _mm256_fmadd_pd(sv, _mm256_loadu_pd(x + i), _mm256_loadu_pd(y + i)));
    _mm256_storeu_pd(y + i + 4, _mm256_fmadd_pd(sv, _mm256_loadu_pd(x + i + 4), _mm256_loadu_pd(y + i + 4)));
  }
  for (; i < n; ++i) y[i] += s * x[i];
}
inline bool have_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}
#endif

inline double dot(const double* a, const double* b, long n) {
#ifdef SCALEBAYES_SGMCMC_DISPATCH
  if (have_avx2()) return dot_avx2(a, b, n);
#endif
  return dot_generic(a, b, n);
}
inline void axpy(double s, const double* x, double* y, long n) {
#ifdef SCALEBAYES_SGMCMC_DISPATCH
  if (have_avx2()) return axpy_avx2(s, x, y, n);
#endif
  axpy_generic(s, x, y, n);
}

}  // namespace simd
}  // namespace sgmcmc
}  // namespace scalebayes
