// Engine unit tests: rng::Stream (reproducibility, distinct streams, moments) and parallel::run_parallel
// (every item once, thread-count invariance, stop and exception paths). No Eigen.
#include <atomic>
#include <chrono>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "check.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/rng/stream.hpp"

using scalebayes::rng::Stream;
namespace par = scalebayes::parallel;

TEST(rng_same_seed_same_stream) {
  Stream a(42, 7, 3), b(42, 7, 3);
  bool same = true;
  for (int i = 0; i < 10000; ++i) same = same && a.next() == b.next();
  CHECK(same);
  // reseed restarts the stream
  Stream c(1, 2, 3);
  const std::uint64_t first = c.next();
  c.next();
  c.reseed(1, 2, 3);
  CHECK(c.next() == first);
}

TEST(rng_distinct_streams) {
  // seed, stream and substream each change the sequence; no value shared among the first 1000 of 6 streams
  const std::uint64_t keys[6][3] = {{42, 0, 0}, {42, 1, 0}, {42, 0, 1}, {43, 0, 0}, {0, 0, 0}, {42, 1000000, 0}};
  std::set<std::uint64_t> seen;
  std::size_t total = 0;
  for (const auto& k : keys) {
    Stream s(k[0], k[1], k[2]);
    for (int i = 0; i < 1000; ++i, ++total) seen.insert(s.next());
  }
  CHECK(seen.size() == total);
  // neighbouring streams are uncorrelated: |corr| of their uniforms within 5 standard errors of 0
  Stream s0(5, 0, 0), s1(5, 1, 0);
  const int N = 100000;
  double sxy = 0, sx = 0, sy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < N; ++i) {
    const double x = s0.uniform(), y = s1.uniform();
    sx += x; sy += y; sxy += x * y; sxx += x * x; syy += y * y;
  }
  const double cov = sxy / N - sx / N * sy / N;
  const double corr = cov / std::sqrt((sxx / N - sx * sx / N / N) * (syy / N - sy * sy / N / N));
  CHECK(std::abs(corr) < 5.0 / std::sqrt(static_cast<double>(N)));
}

// mean and variance of N draws within 5 Monte-Carlo standard errors (fixed seeds: deterministic)
template <class Draw>
static void check_moments(Draw draw, double mean, double var, double kurt_excess, int N = 200000) {
  double s = 0, ss = 0;
  std::vector<double> x(N);
  for (int i = 0; i < N; ++i) {
    x[i] = draw();
    s += x[i];
  }
  const double m = s / N;
  for (int i = 0; i < N; ++i) ss += (x[i] - m) * (x[i] - m);
  const double v = ss / (N - 1);
  CHECK_NEAR(m, mean, 5.0 * std::sqrt(var / N));
  // sd of the sample variance: var * sqrt((2 + kurtosis excess) / N)
  CHECK_NEAR(v, var, 5.0 * var * std::sqrt((2.0 + kurt_excess) / N));
}

TEST(rng_moments) {
  Stream s(2024, 1, 0);
  double lo = 1, hi = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = s.uniform();
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  CHECK(lo > 0 && hi < 1);
  check_moments([&] { return s.uniform(); }, 0.5, 1.0 / 12, -1.2);
  check_moments([&] { return s.exponential(); }, 1.0, 1.0, 6.0);
  check_moments([&] { return s.normal(); }, 0.0, 1.0, 0.0);
  check_moments([&] { return s.gamma(2.5); }, 2.5, 2.5, 6.0 / 2.5);
  check_moments([&] { return s.gamma(0.3); }, 0.3, 0.3, 6.0 / 0.3);
  // Beta(2, 3): mean 0.4, variance 0.04; excess kurtosis -0.4286
  check_moments([&] { return s.beta(2.0, 3.0); }, 0.4, 0.04, -3.0 / 7.0);
  // inverse Gaussian(mu = 2, lambda = 3): mean mu, variance mu^3 / lambda, excess kurtosis 15 mu / lambda
  check_moments([&] { return s.inverse_gaussian(2.0, 3.0); }, 2.0, 8.0 / 3.0, 10.0);
}

TEST(driver_every_item_once_any_threads) {
  const std::size_t n = 5000;
  std::vector<double> ref;
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> count(n);
    for (auto& c : count) c = 0;
    std::vector<double> out(n);
    auto body = [&](std::size_t i, int) {
      ++count[i];
      Stream s(99, i);
      out[i] = s.normal();
    };
    const par::RunStatus st = par::run_parallel(n, threads, body);
    CHECK(st.completed == n);
    CHECK(!st.interrupted);
    bool once = true;
    for (auto& c : count) once = once && c.load() == 1;
    CHECK(once);
    if (ref.empty()) ref = out;
    CHECK(out == ref);  // same seed, same draws for any number of threads
  }
}

TEST(driver_monitor_progress_and_zero_items) {
  std::vector<std::size_t> calls;
  const par::Monitor mon = [&](std::size_t d) {
    calls.push_back(d);
    return true;
  };
  par::RunStatus st = par::run_parallel(0, 2, [](std::size_t, int) {}, mon);
  CHECK(st.completed == 0 && !st.interrupted);
  CHECK(calls.size() == 1 && calls[0] == 0);
  calls.clear();
  st = par::run_parallel(20, 2, [](std::size_t, int) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); },
                         mon, 5);
  CHECK(st.completed == 20);
  CHECK(!calls.empty() && calls.back() == 20);  // the final call reports every item
  bool monotone = true;
  for (std::size_t i = 1; i < calls.size(); ++i) monotone = monotone && calls[i] >= calls[i - 1];
  CHECK(monotone);
}

TEST(driver_stop_request) {
  // the monitor asks to stop at its first poll: workers finish the item in hand and return promptly
  const std::size_t n = 100000;
  std::atomic<std::size_t> ran{0};
  const auto t0 = std::chrono::steady_clock::now();
  const par::RunStatus st = par::run_parallel(
      n, 2,
      [&](std::size_t, int) {
        ++ran;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      },
      [](std::size_t) { return false; }, 10);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(st.interrupted);
  CHECK(st.completed < n);
  CHECK(st.completed == ran.load());
  CHECK(secs < 5.0);  // (all items would take 50 s)
  // a monitor that throws is a stop request too
  const par::RunStatus st2 = par::run_parallel(
      n, 2, [](std::size_t, int) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); },
      [](std::size_t) -> bool { throw std::runtime_error("monitor"); }, 10);
  CHECK(st2.interrupted && st2.completed < n);
}

TEST(driver_exception_is_rethrown) {
  std::atomic<std::size_t> ran{0};
  bool caught = false;
  try {
    par::run_parallel(100000, 3, [&](std::size_t i, int) {
      ++ran;
      if (i == 37) throw std::invalid_argument("item 37 failed");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    });
  } catch (const std::invalid_argument& e) {
    caught = std::string(e.what()) == "item 37 failed";
  }
  CHECK(caught);
  CHECK(ran.load() < 100000);  // the others stopped
}

int main() { return sbtest::run_all(); }
