// src/sb_glue.h -- helpers shared by the Rcpp glue files: run settings, progress, interrupts.
// Only this directory talks to R; the engine under inst/include/scalebayes never does.
//
// How a run reaches the engine (the same for every engine):
//   * settings: R builds ONE run list with run_settings() (R/seed.R; seed, threads, quiet; the WBB functions add
//     the draw range and weight rules with wbb_engine_settings(), R/wbb_run.R). run_settings() below reads it
//     into the engine's parallel::RunSettings (wbb_settings() into wbb::Settings, which extends it); model
//     settings travel separately (the engine's Control structs).
//   * progress and interrupts: ONE sbglue::Progress per call (cli progress bar, shown unless `quiet`, and the
//     interrupt poll R_CheckUserInterrupt via R_ToplevelExec), handed to the engine as a parallel::Monitor; the
//     engine's driver calls it on this (the main) thread, and a stop request ends the run with interrupted = true,
//     which the glue returns to R (the R side then signals the interrupt).
#pragma once
#include <RcppEigen.h>
#include <cli/progress.h>
#include <cstdint>
#include <string>
#include "scalebayes/enum_names.hpp"
#include "scalebayes/parallel/driver.hpp"
#include "scalebayes/wbb/driver.hpp"

namespace sbglue {

// The R layer passes the seed as a whole number in [0, 2^53) held in a double; see R/seed.R.
inline std::uint64_t seed_from_r(double s) {
  if (!(s >= 0) || s > 9007199254740992.0) Rcpp::stop("internal: invalid seed");
  return static_cast<std::uint64_t>(s);
}

inline void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }
// True if the user asked to interrupt; safe because it never longjmps out of C++ frames.
inline bool user_interrupted() { return !R_ToplevelExec(check_interrupt_fn, nullptr); }

// A progress bar (cli's C API) plus the interrupt poll, called by parallel::run_parallel on the main thread.
class Progress {
 public:
  // `total`: units of work the engine reports (draws, sweeps, iterations, folds); the bar is shown if `show`.
  Progress(double total, bool show, const char* name) : show_(show && total > 0) {
    if (show_) {
      bar_ = PROTECT(cli_progress_bar(total, R_NilValue));
      cli_progress_set_name(bar_, name);
    }
  }
  // The same, shown unless the run list (run_settings()) says quiet.
  Progress(double total, const Rcpp::List& run, const char* name)
      : Progress(total, !Rcpp::as<bool>(run["quiet"]), name) {}
  ~Progress() {
    if (show_) {
      cli_progress_done(bar_);
      UNPROTECT(1);
    }
  }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // Returns false if the run must stop.
  bool operator()(std::size_t done) {
    if (user_interrupted()) {
      interrupted_ = true;
      return false;
    }
    if (show_) cli_progress_set(bar_, static_cast<double>(done));
    return true;
  }
  bool interrupted() const { return interrupted_; }
  // A status shown in the bar's name (main thread only).
  void set_name(const std::string& name) {
    if (show_) cli_progress_set_name(bar_, name.c_str());
  }
  scalebayes::parallel::Monitor monitor() {
    return [this](std::size_t d) { return (*this)(d); };
  }

 private:
  bool show_;
  bool interrupted_ = false;
  SEXP bar_ = R_NilValue;
};

// The run settings (seed, threads) from the list made by R/seed.R's run_settings() (or any list extending it).
inline scalebayes::parallel::RunSettings run_settings(const Rcpp::List& s) {
  scalebayes::parallel::RunSettings rs;
  rs.seed = seed_from_r(Rcpp::as<double>(s["seed"]));
  rs.threads = Rcpp::as<int>(s["threads"]);
  return rs;
}

// An option R passes by name (one string), parsed with the engine's table for E (scalebayes/enum_names.hpp): an
// unknown name, or anything but one string (an integer code, NA), throws std::invalid_argument naming the option
// and its valid names. R never passes an enum as an integer code.
template <class E>
E enum_from(SEXP x) {
  if (TYPEOF(x) == STRSXP && Rf_xlength(x) == 1 && STRING_ELT(x, 0) != NA_STRING)
    return scalebayes::parse_enum<E>(CHAR(STRING_ELT(x, 0)));
  throw std::invalid_argument(std::string(enum_table(E{}).what) + " must be one name, not a code (valid: " +
                              scalebayes::enum_valid_names<E>() + ")");
}
// The same for list entry `key`.
template <class E>
E enum_arg(const Rcpp::List& l, const char* key) {
  return enum_from<E>(l[key]);
}

// The settings of one WBB run (or chunk) from the list made by R/wbb_run.R's wbb_engine_settings(): the run
// settings, first (global index of the first draw), draws, dist, prior (by name: wbb/driver.hpp's tables).
inline scalebayes::wbb::Settings wbb_settings(const Rcpp::List& s) {
  namespace W = scalebayes::wbb;
  W::Settings st;
  static_cast<scalebayes::parallel::RunSettings&>(st) = run_settings(s);
  const double first = Rcpp::as<double>(s["first"]), draws = Rcpp::as<double>(s["draws"]);
  if (!(first >= 0) || !(draws >= 0) || first > 9007199254740992.0 || draws > 2147483647.0)
    Rcpp::stop("internal: invalid draw range");
  st.first_draw = static_cast<std::size_t>(first);
  st.draws = static_cast<std::size_t>(draws);
  st.dist = enum_arg<W::WeightDist>(s, "dist");
  st.prior = enum_arg<W::PriorWeights>(s, "prior");
  return st;
}

// Read-only view of an R numeric matrix as an Eigen map (no copy, never written).
using MapMat = Eigen::Map<const Eigen::MatrixXd>;
using MapVec = Eigen::Map<const Eigen::VectorXd>;
inline MapMat as_map(const Rcpp::NumericMatrix& m) { return MapMat(m.begin(), m.nrow(), m.ncol()); }
inline MapVec as_map(const Rcpp::NumericVector& v) { return MapVec(v.begin(), v.size()); }

}  // namespace sbglue
