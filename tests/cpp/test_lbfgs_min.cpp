// tests/cpp/test_lbfgs_min.cpp -- the L-BFGS minimizer (math/lbfgs_min.hpp) against known minima (Rosenbrock,
// weighted least squares in closed form, a barrier with a non-finite region), its status codes, and the inline
// mode of the WBB driver (wbb/driver.hpp): the same draws as the threaded mode, stop between and inside draws,
// exceptions propagated.
#include <Eigen/Dense>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "check.hpp"
#include "scalebayes/math/lbfgs_min.hpp"
#include "scalebayes/wbb/driver.hpp"

namespace sm = scalebayes::math;
namespace wbb = scalebayes::wbb;
using Eigen::MatrixXd;
using Eigen::VectorXd;

namespace {

// extended Rosenbrock: sum over pairs of 100 (x_{2i} - x_{2i-1}^2)^2 + (1 - x_{2i-1})^2; minimum 0 at all ones
double rosenbrock(const VectorXd& x, VectorXd& g) {
  double f = 0;
  g.setZero();
  for (Eigen::Index i = 0; i + 1 < x.size(); i += 2) {
    const double a = x(i + 1) - x(i) * x(i), b = 1 - x(i);
    f += 100 * a * a + b * b;
    g(i) += -400 * a * x(i) - 2 * b;
    g(i + 1) += 200 * a;
  }
  return f;
}

// the weighted least-squares problem of draw t: the solver concept of wbb/driver.hpp over an L-BFGS solve
struct WlsSolver {
  const MatrixXd* X;
  const VectorXd* y;
  MatrixXd* out;  // draws x p
  std::vector<int>* status;
  Eigen::Index n_obs() const { return X->rows(); }
  Eigen::Index n_prior() const { return 0; }
  void solve(std::size_t i, const VectorXd& w, const VectorXd&, scalebayes::rng::Stream&) {
    auto f = [&](const VectorXd& b, VectorXd& g) {
      const VectorXd r = *y - *X * b;
      g = -X->transpose() * (w.asDiagonal() * r);
      return 0.5 * r.dot(w.asDiagonal() * r);
    };
    VectorXd b = VectorXd::Zero(X->cols());
    sm::LbfgsOptions o;
    o.tol = 1e-12;
    const sm::LbfgsResult r = sm::lbfgs_minimize(f, b, o);
    out->row(static_cast<Eigen::Index>(i)) = b.transpose();
    (*status)[i] = static_cast<int>(r.status);
  }
};

VectorXd wls_exact(const MatrixXd& X, const VectorXd& y, const VectorXd& w) {
  const MatrixXd A = X.transpose() * w.asDiagonal() * X;
  return A.ldlt().solve(X.transpose() * (w.asDiagonal() * y));
}

void wls_data(MatrixXd& X, VectorXd& y) {
  scalebayes::rng::Stream s(7, 0);
  X.resize(40, 3);
  y.resize(40);
  for (Eigen::Index i = 0; i < 40; ++i) {
    X(i, 0) = 1;
    X(i, 1) = s.normal();
    X(i, 2) = 3 * s.normal() + 2;
    y(i) = 1 + 2 * X(i, 1) - X(i, 2) + s.normal();
  }
}

}  // namespace

TEST(lbfgs_rosenbrock_2d_and_10d) {
  for (int p : {2, 10}) {
    VectorXd x(p);
    for (int i = 0; i < p; ++i) x(i) = (i % 2 == 0) ? -1.2 : 1.0;
    sm::LbfgsOptions o;
    o.tol = 1e-10;
    const sm::LbfgsResult r = sm::lbfgs_minimize(rosenbrock, x, o);
    CHECK(r.status == sm::LbfgsStatus::converged);
    CHECK(r.iterations < 200);
    for (int i = 0; i < p; ++i) CHECK_NEAR(x(i), 1.0, 1e-7);
    CHECK(r.value < 1e-14);
    CHECK(r.grad_max <= 1e-10);
  }
}

TEST(lbfgs_weighted_least_squares_closed_form) {
  MatrixXd X;
  VectorXd y;
  wls_data(X, y);
  scalebayes::rng::Stream s(3, 1);
  VectorXd w(40);
  for (Eigen::Index i = 0; i < 40; ++i) w(i) = s.exponential();
  auto f = [&](const VectorXd& b, VectorXd& g) {
    const VectorXd r = y - X * b;
    g = -X.transpose() * (w.asDiagonal() * r);
    return 0.5 * r.dot(w.asDiagonal() * r);
  };
  VectorXd b = VectorXd::Zero(3);
  sm::LbfgsOptions o;
  o.tol = 1e-12;
  const sm::LbfgsResult r = sm::lbfgs_minimize(f, b, o);
  CHECK(r.status == sm::LbfgsStatus::converged);
  const VectorXd e = wls_exact(X, y, w);
  for (int j = 0; j < 3; ++j) CHECK_NEAR(b(j), e(j), 1e-9 * (1 + std::abs(e(j))));
}

TEST(lbfgs_one_dimensional_quadratic_is_exact) {
  // f = sum w_i (y_i - t)^2 / 2: the minimizer sum w y / sum w to rounding
  const VectorXd yy = (VectorXd(5) << 3.0, -1.0, 10.0, 4.5, 0.25).finished();
  const VectorXd w = (VectorXd(5) << 0.3, 2.0, 0.7, 1.1, 0.05).finished();
  auto f = [&](const VectorXd& t, VectorXd& g) {
    const VectorXd r = yy.array() - t(0);
    g(0) = -w.dot(r);
    return 0.5 * r.dot(w.asDiagonal() * r);
  };
  VectorXd t = VectorXd::Zero(1);
  const sm::LbfgsResult r = sm::lbfgs_minimize(f, t);
  CHECK(r.status == sm::LbfgsStatus::converged);
  CHECK_NEAR(t(0), w.dot(yy) / w.sum(), 1e-13);
}

TEST(lbfgs_non_finite_region_is_backed_off) {
  // f = x - log(x) (infinite for x <= 0), minimum at 1; the first steps overshoot into x < 0
  auto f = [](const VectorXd& x, VectorXd& g) {
    if (x(0) <= 0) {
      g(0) = std::numeric_limits<double>::quiet_NaN();
      return std::numeric_limits<double>::infinity();
    }
    g(0) = 1 - 1 / x(0);
    return x(0) - std::log(x(0));
  };
  VectorXd x = VectorXd::Constant(1, 50.0);
  const sm::LbfgsResult r = sm::lbfgs_minimize(f, x);
  CHECK(r.status == sm::LbfgsStatus::converged);
  CHECK_NEAR(x(0), 1.0, 1e-6);
}

TEST(lbfgs_status_codes) {
  VectorXd x = (VectorXd(2) << -1.2, 1.0).finished();
  sm::LbfgsOptions o;
  o.max_iter = 3;
  sm::LbfgsResult r = sm::lbfgs_minimize(rosenbrock, x, o);
  CHECK(r.status == sm::LbfgsStatus::max_iterations);
  CHECK(r.iterations == 3);
  // non-finite start
  auto bad = [](const VectorXd&, VectorXd& g) {
    g.setZero();
    return std::numeric_limits<double>::quiet_NaN();
  };
  VectorXd z = VectorXd::Zero(2);
  r = sm::lbfgs_minimize(bad, z);
  CHECK(r.status == sm::LbfgsStatus::non_finite);
  // a stop request
  x << -1.2, 1.0;
  int polls = 0;
  r = sm::lbfgs_minimize(rosenbrock, x, sm::LbfgsOptions(), [&]() { return ++polls > 2; });
  CHECK(r.status == sm::LbfgsStatus::stopped);
  CHECK(r.iterations == 2);
  // a wrong gradient (its sign flipped): no step decreases f along -g; reported, never converged
  auto wrong = [](const VectorXd& v, VectorXd& g) {
    g = -2 * v;
    return v.squaredNorm();
  };
  z << 1.0, -2.0;
  r = sm::lbfgs_minimize(wrong, z);
  CHECK(r.status == sm::LbfgsStatus::line_search_failed);
  CHECK(z(0) == 1.0 && z(1) == -2.0);
  // a start at the minimum converges at once
  x << 1.0, 1.0;
  r = sm::lbfgs_minimize(rosenbrock, x);
  CHECK(r.status == sm::LbfgsStatus::converged);
  CHECK(r.iterations == 0);
  CHECK(std::string(sm::lbfgs_status_name(sm::LbfgsStatus::line_search_failed)) == "line_search_failed");
}

TEST(wbb_inline_mode_same_draws_as_threads) {
  MatrixXd X;
  VectorXd y;
  wls_data(X, y);
  const std::size_t D = 12;
  MatrixXd a(D, 3), b(D, 3);
  std::vector<int> sa(D, -1), sb(D, -1);
  wbb::Settings st;
  st.seed = 11;
  st.draws = D;
  st.prior = wbb::PriorWeights::none;
  st.threads = 3;
  auto ra = wbb::run_draws(st, [&](int) { return std::make_unique<WlsSolver>(WlsSolver{&X, &y, &a, &sa}); });
  std::atomic<int> calls{0};
  auto rb = wbb::run_draws(
      st, [&](int) { return std::make_unique<WlsSolver>(WlsSolver{&X, &y, &b, &sb}); },
      [&](std::size_t) {
        ++calls;
        return true;
      },
      true);
  CHECK(ra.completed == D && rb.completed == D && !rb.interrupted);
  CHECK((a - b).cwiseAbs().maxCoeff() == 0.0);
  CHECK(calls.load() >= static_cast<int>(D));  // polled between draws (and once at the end)
  for (std::size_t i = 0; i < D; ++i) CHECK(sb[i] == 0);
  // draw t is the exact weighted least-squares solution for the weights of stream (seed, t)
  for (std::size_t t = 0; t < D; ++t) {
    scalebayes::rng::Stream s(11, t);
    VectorXd w(40);
    wbb::draw_data_weights(s, wbb::WeightDist::exponential, w);
    const VectorXd e = wls_exact(X, y, w);
    for (int j = 0; j < 3; ++j) CHECK_NEAR(b(static_cast<Eigen::Index>(t), j), e(j), 1e-8 * (1 + std::abs(e(j))));
  }
  // a chunk (first_draw = 5) gives the same rows
  wbb::Settings sc = st;
  sc.first_draw = 5;
  sc.draws = 4;
  MatrixXd c(4, 3);
  std::vector<int> scs(4);
  wbb::run_draws(
      sc, [&](int) { return std::make_unique<WlsSolver>(WlsSolver{&X, &y, &c, &scs}); }, scalebayes::parallel::Monitor(),
      true);
  CHECK((c - b.middleRows(5, 4)).cwiseAbs().maxCoeff() == 0.0);
}

TEST(wbb_inline_mode_stop_and_exceptions) {
  MatrixXd X;
  VectorXd y;
  wls_data(X, y);
  MatrixXd a(10, 3);
  std::vector<int> sa(10, -1);
  wbb::Settings st;
  st.seed = 1;
  st.draws = 10;
  st.prior = wbb::PriorWeights::none;
  int polls = 0;
  auto r = wbb::run_draws(
      st, [&](int) { return std::make_unique<WlsSolver>(WlsSolver{&X, &y, &a, &sa}); },
      [&](std::size_t done) { return ++polls <= 4 && done < 100; }, true);
  CHECK(r.interrupted);
  CHECK(r.completed == 4);
  CHECK(sa[3] == 0 && sa[4] == -1);
  // an exception of a draw propagates at once, on this thread
  struct Throwing {
    Eigen::Index n_obs() const { return 3; }
    Eigen::Index n_prior() const { return 0; }
    void solve(std::size_t i, const VectorXd&, const VectorXd&, scalebayes::rng::Stream&) {
      if (i == 2) throw std::runtime_error("draw 2");
    }
  };
  bool thrown = false;
  try {
    wbb::run_draws(st, [](int) { return std::make_unique<Throwing>(); }, scalebayes::parallel::Monitor(), true);
  } catch (const std::runtime_error& e) {
    thrown = std::string(e.what()) == "draw 2";
  }
  CHECK(thrown);
}

int main() { return sbtest::run_all(); }
