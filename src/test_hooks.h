// src/test_hooks.h -- how the test hooks reach R. A test hook is a C++ function that only the test suite
// (tests/testthat) and a few bench/ scripts call: it exposes one engine piece (a random stream, the WBB
// driver, a network's raw forward pass, ...) so that a test can check it against a reference written
// independently. The hooks are not Rcpp exports: they are compiled in only when configure ran with
// SCALEBAYES_TEST_HOOKS=1 (tools/setup.sh and tools/run-tests.sh do; R CMD INSTALL of the tarball and
// R CMD check do not), so the package users install registers only the entry points its R code calls.
//
// SB_TEST_HOOK(fn) defines the C entry point sbtest_<fn>, called from R as
//   .External(getNativeSymbolInfo("sbtest_<fn>", "scalebayes"), arg1, ..., argN)
// (tests/testthat/helper-test-hooks.R writes one R function per hook). The arguments are positional and
// converted exactly as Rcpp's generated exports convert them (Rcpp::traits::input_parameter, one RNGScope,
// C++ exceptions and interrupts turned into R conditions). sb_test_hooks_init() (test_hooks.cpp) turns on
// the dynamic symbol lookup that makes these symbols visible to R; without SCALEBAYES_TEST_HOOKS it does
// nothing and the hook files compile to empty objects.
#pragma once
// Include after sb_glue.h (RcppEigen must come before Rcpp).
#include <Rcpp.h>

#include <cstddef>
#include <utility>

namespace sbtesthooks {

template <typename R, typename... A, std::size_t... I>
SEXP invoke(R (*f)(A...), const SEXP* a, std::index_sequence<I...>) {
  return Rcpp::wrap(f(typename Rcpp::traits::input_parameter<A>::type(a[I])...));
}

// args: the .External call's pairlist (its first element is the routine itself)
template <typename R, typename... A>
SEXP call(const char* name, R (*f)(A...), SEXP args) {
  SEXP a[sizeof...(A) + 1];
  std::size_t k = 0;
  for (SEXP p = CDR(args); p != R_NilValue; p = CDR(p), ++k)
    if (k < sizeof...(A)) a[k] = CAR(p);
  if (k != sizeof...(A))
    Rcpp::stop("test hook %s takes %d arguments, got %d", name, static_cast<int>(sizeof...(A)), static_cast<int>(k));
  return invoke(f, a, std::index_sequence_for<A...>{});
}

}  // namespace sbtesthooks

#define SB_TEST_HOOK(fn)                                  \
  RcppExport SEXP sbtest_##fn(SEXP args) {                \
    BEGIN_RCPP                                            \
    Rcpp::RNGScope rcpp_rngScope_gen;                     \
    return sbtesthooks::call(#fn, &fn, args);             \
    END_RCPP                                              \
  }
