// Build information for scalebayes_info().
#include <chrono>
#include <thread>
#include <vector>

#include "sb_glue.h"
#include "scalebayes/rng/stream.hpp"

// [[Rcpp::export]]
Rcpp::List cpp_build_info() {
  bool torch = false, cuda = false;
#ifdef SCALEBAYES_HAVE_TORCH
  torch = true;
#endif
#ifdef SCALEBAYES_HAVE_CUDA
  cuda = true;
#endif
  const std::string eigen = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                            std::to_string(EIGEN_MINOR_VERSION);
  return Rcpp::List::create(Rcpp::Named("eigen") = eigen, Rcpp::Named("cxx") = static_cast<int>(__cplusplus / 100 % 100),
                            Rcpp::Named("torch") = torch, Rcpp::Named("cuda") = cuda);
}

// Test hooks for the engine's parallel driver and random streams (used by tests/testthat/test-engine.R).

// Runs n items on `threads` workers; the monitor asks to stop once `stop_after` items are done (never if
// negative); item `throw_at` throws (never if negative). Returns the number of completed items and whether
// a stop happened.
// [[Rcpp::export]]
Rcpp::List cpp_test_driver(int n, int threads, int stop_after, int throw_at) {
  std::vector<int> hit(n, 0);
  auto body = [&](std::size_t i, int) {
    if (static_cast<int>(i) == throw_at) throw std::runtime_error("item failed on purpose");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    hit[i] = 1;
  };
  auto monitor = [&](std::size_t done) { return stop_after < 0 || static_cast<int>(done) < stop_after; };
  const auto st = scalebayes::parallel::run_parallel(static_cast<std::size_t>(n), threads, body, monitor, 5);
  return Rcpp::List::create(Rcpp::Named("completed") = static_cast<double>(st.completed),
                            Rcpp::Named("interrupted") = st.interrupted,
                            Rcpp::Named("hit") = Rcpp::wrap(hit));
}

// n draws of one distribution from stream (seed, stream): kind 0 uniform, 1 normal, 2 exponential,
// 3 gamma(a), 4 beta(a, b), 5 inverse Gaussian(a = mu, b = lambda).
// [[Rcpp::export]]
Rcpp::NumericVector cpp_test_rng(int kind, int n, double a, double b, double seed, double stream) {
  scalebayes::rng::Stream s(sbglue::seed_from_r(seed), static_cast<std::uint64_t>(stream));
  Rcpp::NumericVector out(n);
  for (int i = 0; i < n; ++i) {
    switch (kind) {
      case 0: out[i] = s.uniform(); break;
      case 1: out[i] = s.normal(); break;
      case 2: out[i] = s.exponential(); break;
      case 3: out[i] = s.gamma(a); break;
      case 4: out[i] = s.beta(a, b); break;
      default: out[i] = s.inverse_gaussian(a, b);
    }
  }
  return out;
}
