// Issue 60, item 4 (3): a BAOAB splitting of SGHMC against the package's SGHMC at equal cost (one gradient per
// iteration, the same learning rate eta and friction alpha), on N(0, diag(1, 1/10)), with exact gradients and
// with gradient noise of variance h per coordinate (a minibatch of half the data of a well-specified GLM).
// Standalone (no package code):  g++ -O2 -std=c++17 -o /tmp/baoab bench/sgmcmc_baoab.cpp && /tmp/baoab
// Prints the stationary variance over the exact one (4e6 iterations, the first 10 % dropped; Monte-Carlo se
// 0.5-1 %: the chains relax in 20-200 iterations). Results: bench/RESULTS.md.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
int main() {
  const std::vector<double> hs{1.0, 10.0};  // precisions (two coordinates)
  const double alpha = 0.1;
  const long T = 4000000;
  for (double noise_var : {0.0, 1.0}) {    // minibatch gradient noise variance, times h
    for (double eta : {0.001, 0.004, 0.016, 0.04}) {
      for (int m = 0; m < 2; ++m) {
        std::mt19937_64 rng(1);
        std::normal_distribution<double> N(0.0, 1.0);
        std::vector<double> x(2, 0.0), v(2, 0.0), s2(2, 0.0);
        const double c = std::exp(-alpha);
        for (long k = 1; k <= T; ++k) {
          for (int j = 0; j < 2; ++j) {
            const double g = -hs[j] * x[j] + std::sqrt(noise_var * hs[j]) * N(rng);
            if (m == 0) {  // SGHMC: v <- (1 - a) v + eta g + N(0, 2 a eta); x += v
              v[j] = (1 - alpha) * v[j] + eta * g + std::sqrt(2 * alpha * eta) * N(rng);
              x[j] += v[j];
            } else {  // BAOAB merged over iterations: B (full kick) A O A, v = h p, eta = h^2, gamma h = alpha
              v[j] += eta * g;
              x[j] += v[j] / 2;
              v[j] = c * v[j] + std::sqrt(eta * (1 - c * c)) * N(rng);
              x[j] += v[j] / 2;
            }
            if (k > T / 10) s2[j] += x[j] * x[j];
          }
        }
        const double n = T - T / 10;
        std::printf("noise %.0f eta %.3f %-6s var ratio h=1: %.4f  h=10: %.4f\n", noise_var, eta, m ? "BAOAB" : "SGHMC",
                    s2[0] / n * hs[0], s2[1] / n * hs[1]);
      }
    }
  }
}
