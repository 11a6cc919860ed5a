// scalebayes/rng/stream.hpp -- per-draw random streams.
//
// Every draw, chain or dataset gets its own generator keyed by (seed, stream index), so results do not
// depend on how work is split across threads or machines. The generator is xoshiro256++ (Blackman & Vigna
// 2019) whose 256-bit state is filled by SplitMix64 from a hash of (seed, stream): distinct keys give
// statistically independent streams for all practical purposes (the same construction that dqrng and
// numpy's SeedSequence use). Header-only, no R.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace scalebayes {
namespace rng {

inline std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

class Stream {
 public:
  // seed: the user's seed (drawn once from R's RNG by the R layer); stream: the draw / chain / dataset index;
  // substream: a further key for a purpose inside one draw (e.g. 0 = data weights, 1 = prior weights).
  Stream(std::uint64_t seed, std::uint64_t stream, std::uint64_t substream = 0) { reseed(seed, stream, substream); }

  void reseed(std::uint64_t seed, std::uint64_t stream, std::uint64_t substream = 0) {
    std::uint64_t k = seed;
    std::uint64_t h = splitmix64(k);
    k = h ^ (stream * 0xD1B54A32D192ED03ULL + 0x8CB92BA72F3D8DD7ULL);
    h = splitmix64(k);
    k = h ^ (substream * 0xAEF17502108EF2D9ULL + 0x2545F4914F6CDD1DULL);
    for (int i = 0; i < 4; ++i) s_[i] = splitmix64(k);
    has_spare_ = false;
  }

  // 64 random bits.
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform on the open interval (0, 1): 53 random bits, never 0 or 1.
  double uniform() { return ((next() >> 11) + 0.5) * 0x1.0p-53; }

  // Standard exponential by inversion (uniform() is never 0 or 1).
  double exponential() { return -std::log(uniform()); }

  // Standard normal: Marsaglia polar method, caching the second variate.
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double f = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * f;
    has_spare_ = true;
    return u * f;
  }

  // Gamma(shape, rate = 1): Marsaglia & Tsang (2000), with the boost U^(1/shape) for shape < 1.
  double gamma(double shape) {
    if (!(shape > 0.0) || !std::isfinite(shape)) throw std::invalid_argument("gamma shape must be positive and finite");
    if (shape < 1.0) {
      const double g = gamma(shape + 1.0);
      return g * std::exp(std::log(uniform()) / shape);
    }
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = uniform();
      if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
  }

  double beta(double a, double b) {
    const double x = gamma(a), y = gamma(b);
    return x / (x + y);
  }

  // Inverse Gaussian IG(mu, shape) (mean mu, shape lambda), Michael, Schucany & Haas (1976) in a rearranged
  // form that stays accurate when mu * nu^2 / lambda is large (mu huge, e.g. 1/|beta_j| with beta_j ~ 0):
  // the smaller root x1 = mu - mu/(2 lambda) (mu y - sqrt(4 mu lambda y + mu^2 y^2)) is computed as
  // mu * 2 lambda / (2 lambda + mu y + sqrt(4 mu lambda y + mu^2 y^2)) * ... without cancellation.
  double inverse_gaussian(double mu, double lambda) {
    if (!(mu > 0.0) || !(lambda > 0.0)) throw std::invalid_argument("inverse Gaussian parameters must be positive");
    if (!std::isfinite(mu)) {
      // Limit mu -> infinity: the Levy distribution lambda / Z^2.
      const double z = normal();
      return lambda / (z * z);
    }
    const double nu = normal();
    const double y = nu * nu;
    // phi = mu * y / lambda (dimensionless);
    // x1 = mu * (1 + phi/2 - sqrt(phi + phi^2/4)) = mu / (1 + phi/2 + sqrt(phi + phi^2/4)).
    // For phi >= 1 use r = 1/phi: x1 = (lambda / y) / (r + 1/2 + sqrt(r + 1/4)), which neither overflows
    // (phi^2, or phi itself for mu ~ 1e300) nor loses precision.
    double x1;
    if (mu * y <= lambda) {
      const double phi = mu * y / lambda;
      x1 = mu / (1.0 + 0.5 * phi + std::sqrt(phi + 0.25 * phi * phi));
    } else {
      const double r = (lambda / y) / mu;
      x1 = (lambda / y) / (r + 0.5 + std::sqrt(r + 0.25));
    }
    const double u = uniform();
    // accept x1 with probability mu / (mu + x1), else mu^2 / x1
    return (u * (mu + x1) <= mu) ? x1 : mu * (mu / x1);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0.0;
};

}  // namespace rng
}  // namespace scalebayes
