// tests/cpp/check.hpp -- a minimal test harness for the engine headers (no external framework).
//
//   TEST(name) { CHECK(cond); CHECK_NEAR(a, b, tol); CHECK_THROWS(expr, Type); }
//   int main() { return sbtest::run_all(); }
//
// Every failed check prints file:line and the expression; run_all() runs every TEST, reports
// "<passed> passed, <failed> failed" and returns 1 if any check failed (or a test threw).
#pragma once
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace sbtest {

struct Case {
  const char* name;
  std::function<void()> fn;
};
inline std::vector<Case>& registry() {
  static std::vector<Case> r;
  return r;
}
inline int& failures() {
  static int f = 0;
  return f;
}
inline int& checks() {
  static int c = 0;
  return c;
}
struct Register {
  Register(const char* name, std::function<void()> fn) { registry().push_back({name, std::move(fn)}); }
};
inline void fail(const char* file, int line, const std::string& what) {
  ++failures();
  std::fprintf(stderr, "  FAILED %s:%d: %s\n", file, line, what.c_str());
}
inline int run_all() {
  int failed_tests = 0;
  for (const Case& c : registry()) {
    const int before = failures();
    try {
      c.fn();
    } catch (const std::exception& e) {
      fail(__FILE__, __LINE__, std::string("unexpected exception: ") + e.what());
    } catch (...) {
      fail(__FILE__, __LINE__, "unexpected exception");
    }
    const bool ok = failures() == before;
    if (!ok) ++failed_tests;
    std::printf("[%s] %s\n", ok ? " ok " : "FAIL", c.name);
  }
  std::printf("%d passed, %d failed (%d checks)\n", static_cast<int>(registry().size()) - failed_tests, failed_tests,
              checks());
  return failed_tests > 0 ? 1 : 0;
}

}  // namespace sbtest

#define SBTEST_CAT2(a, b) a##b
#define SBTEST_CAT(a, b) SBTEST_CAT2(a, b)
#define TEST(name)                                                              \
  static void name();                                                           \
  static sbtest::Register SBTEST_CAT(sbtest_reg_, name)(#name, &name);          \
  static void name()

#define CHECK(cond)                                                   \
  do {                                                                \
    ++sbtest::checks();                                               \
    if (!(cond)) sbtest::fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
  } while (0)

// |a - b| <= tol (NaN fails)
#define CHECK_NEAR(a, b, tol)                                                                                \
  do {                                                                                                       \
    ++sbtest::checks();                                                                                      \
    const double sbt_a = static_cast<double>(a), sbt_b = static_cast<double>(b);                             \
    if (!(std::abs(sbt_a - sbt_b) <= static_cast<double>(tol))) {                                            \
      char sbt_buf[256];                                                                                     \
      std::snprintf(sbt_buf, sizeof sbt_buf, "CHECK_NEAR(%s, %s): %.17g vs %.17g (tol %.3g)", #a, #b, sbt_a, \
                    sbt_b, static_cast<double>(tol));                                                        \
      sbtest::fail(__FILE__, __LINE__, sbt_buf);                                                             \
    }                                                                                                        \
  } while (0)

#define CHECK_THROWS(expr, Type)                                                   \
  do {                                                                             \
    ++sbtest::checks();                                                            \
    bool sbt_thrown = false;                                                       \
    try {                                                                          \
      expr;                                                                        \
    } catch (const Type&) {                                                        \
      sbt_thrown = true;                                                           \
    } catch (...) {                                                                \
    }                                                                              \
    if (!sbt_thrown) sbtest::fail(__FILE__, __LINE__, "CHECK_THROWS(" #expr ", " #Type ")"); \
  } while (0)
