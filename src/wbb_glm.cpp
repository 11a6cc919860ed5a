// Glue for the weighted elastic-net solver and the WBB driver (engine: scalebayes/cd, scalebayes/wbb).
#include <memory>
#include <numeric>

#include "sb_glue.h"
#include "scalebayes/cd/multinomial.hpp"
#include "scalebayes/cd/path.hpp"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/math/columns.hpp"
#include "scalebayes/wbb/glm.hpp"

namespace cd = scalebayes::cd;
namespace wbb = scalebayes::wbb;

namespace {
cd::Control control_from(const Rcpp::List& c) {
  cd::Control ctrl;
  ctrl.tol = Rcpp::as<double>(c["tol"]);
  ctrl.max_iter = Rcpp::as<int>(c["max_iter"]);
  ctrl.max_outer = Rcpp::as<int>(c["max_outer"]);
  ctrl.intercept = Rcpp::as<bool>(c["intercept"]);
  if (c.containsElementNamed("kkt_tol")) ctrl.kkt_tol = Rcpp::as<double>(c["kkt_tol"]);
  if (c.containsElementNamed("naive_from") && !Rf_isNull(c["naive_from"]))
    ctrl.naive_from = Rcpp::as<int>(c["naive_from"]);
  // optional: offset (n), lower / upper limits (p, standardized scale), the CV measure
  auto vec = [&](const char* nm, Eigen::VectorXd& v) {
    if (c.containsElementNamed(nm) && !Rf_isNull(c[nm])) v = Rcpp::as<Eigen::VectorXd>(c[nm]);
  };
  vec("offset", ctrl.offset);
  vec("lower", ctrl.lower);
  vec("upper", ctrl.upper);
  if (c.containsElementNamed("cv_measure") && !Rf_isNull(c["cv_measure"]))
    ctrl.cv_measure = static_cast<int>(sbglue::enum_arg<cd::CvMeasure>(c, "cv_measure"));
  return ctrl;
}
// family: by name (cd/solver.hpp's enet_family_names); multinomial (cd/multinomial.hpp): the control list carries
// n_class and grouped.
cd::EnetFamily family_from(SEXP name) { return sbglue::enum_from<cd::EnetFamily>(name); }
int n_class(const Rcpp::List& c) { return Rcpp::as<int>(c["n_class"]); }
bool grouped(const Rcpp::List& c) { return c.containsElementNamed("grouped") && Rcpp::as<bool>(c["grouped"]); }

// x as the engine reads it: a dense numeric matrix (already standardized in R) or a Matrix::dgCMatrix, mapped as
// compressed columns with no copy (slots p, i, x) and standardized implicitly with control$x_center /
// control$x_scale (cd/design.hpp). The R objects are kept alive here for the duration of the call.
struct Design {
  bool sparse = false;
  Rcpp::NumericMatrix dense;
  Rcpp::IntegerVector colptr, rowind;
  Rcpp::NumericVector values;
  std::unique_ptr<cd::SparseDesign> sd;
  Eigen::Index rows() const { return sparse ? sd->rows() : dense.nrow(); }
  Eigen::Index cols() const { return sparse ? sd->cols() : dense.ncol(); }
};
std::unique_ptr<Design> design_from(SEXP x, const Rcpp::List& control) {
  std::unique_ptr<Design> d(new Design());
  if (Rf_isS4(x) && Rf_inherits(x, "dgCMatrix")) {
    Rcpp::S4 m(x);
    const Rcpp::IntegerVector dim = m.slot("Dim");
    d->colptr = m.slot("p");
    d->rowind = m.slot("i");
    d->values = m.slot("x");
    const Eigen::Index n = dim[0], p = dim[1];
    if (d->colptr.size() != p + 1 || d->rowind.size() != d->values.size() || d->colptr[p] != d->values.size())
      Rcpp::stop("x: a malformed dgCMatrix");
    const Eigen::VectorXd c = Rcpp::as<Eigen::VectorXd>(control["x_center"]);
    const Eigen::VectorXd s = Rcpp::as<Eigen::VectorXd>(control["x_scale"]);
    d->sd.reset(new cd::SparseDesign(n, p, d->colptr.begin(), d->rowind.begin(), d->values.begin(), c, s));
    d->sparse = true;
    return d;
  }
  d->dense = Rcpp::NumericMatrix(x);
  return d;
}
}  // namespace

// [[Rcpp::export]]
double cpp_lambda_max(SEXP xs, Rcpp::NumericVector y, SEXP family, double alpha, Rcpp::NumericVector w,
                      Rcpp::NumericVector pf, Rcpp::List control) {
  const cd::EnetFamily fam = family_from(family);
  const auto d = design_from(xs, control);
  if (d->sparse) {
    if (fam == cd::EnetFamily::multinomial) Rcpp::stop("the multinomial family takes a dense x");
    return cd::lambda_max_design(*d->sd, sbglue::as_map(y), cd::single_family(fam), alpha, sbglue::as_map(w),
                                 sbglue::as_map(pf), control_from(control));
  }
  const Rcpp::NumericMatrix& x = d->dense;
  if (fam == cd::EnetFamily::multinomial) {
    cd::Multinomial m(sbglue::as_map(x), sbglue::as_map(y), n_class(control), grouped(control), alpha,
                      control_from(control));
    return m.lambda_max(sbglue::as_map(w), sbglue::as_map(pf));
  }
  return cd::lambda_max(sbglue::as_map(x), sbglue::as_map(y), cd::single_family(fam), alpha, sbglue::as_map(w),
                        sbglue::as_map(pf), control_from(control));
}

// The path of `solver` (cd::ElasticNet or cd::Multinomial) on one worker thread, interruptible; the maps are made
// on the main thread (no R API in the worker).
template <class Solver>
Rcpp::List path_call(Solver& solver, const Rcpp::NumericVector& lambda, const Rcpp::NumericVector& w,
                     const Rcpp::NumericVector& pf) {
  const Eigen::VectorXd lam = sbglue::as_map(lambda);
  const sbglue::MapVec wm = sbglue::as_map(w), pfm = sbglue::as_map(pf);
  decltype(cd::fit_path(solver, wm, pfm, lam, scalebayes::parallel::StopToken())) r;
  sbglue::Progress prog(1.0, false, "path");
  const auto status = scalebayes::parallel::run_parallel(
      1, 1,
      [&](std::size_t, int, const scalebayes::parallel::StopToken& stop) {
        solver.set_stop(stop);
        r = cd::fit_path(solver, wm, pfm, lam, stop);
      },
      prog.monitor());
  if (status.interrupted || r.stopped || prog.interrupted()) return Rcpp::List::create(Rcpp::Named("interrupted") = true);
  return Rcpp::List::create(Rcpp::Named("a0") = Rcpp::wrap(r.a0), Rcpp::Named("beta") = Rcpp::wrap(r.beta),
                            Rcpp::Named("kkt") = Rcpp::wrap(r.kkt), Rcpp::Named("iterations") = Rcpp::wrap(r.iterations),
                            Rcpp::Named("converged") = r.converged, Rcpp::Named("interrupted") = false);
}

// Fit along a decreasing lambda sequence (length 1 = a single fit), on one worker thread so that the path is
// interruptible like every other engine call (the CD loop and the path poll the run's stop token; no bar).
// [[Rcpp::export]]
Rcpp::List cpp_enet_path(SEXP xs, Rcpp::NumericVector y, SEXP family, double alpha, Rcpp::NumericVector w,
                         Rcpp::NumericVector pf, Rcpp::NumericVector lambda, Rcpp::List control) {
  const cd::EnetFamily fam = family_from(family);
  const auto d = design_from(xs, control);
  if (d->sparse) {
    if (fam == cd::EnetFamily::multinomial) Rcpp::stop("the multinomial family takes a dense x");
    cd::SparseElasticNet solver(*d->sd, sbglue::as_map(y), cd::single_family(fam), alpha, control_from(control));
    return path_call(solver, lambda, w, pf);
  }
  const Rcpp::NumericMatrix& x = d->dense;
  if (fam == cd::EnetFamily::multinomial) {  // a0: K x L; beta: (p K) x L, column l the p x K matrix stacked by class
    cd::Multinomial solver(sbglue::as_map(x), sbglue::as_map(y), n_class(control), grouped(control), alpha,
                           control_from(control));
    return path_call(solver, lambda, w, pf);
  }
  cd::ElasticNet solver(sbglue::as_map(x), sbglue::as_map(y), cd::single_family(fam), alpha, control_from(control));
  return path_call(solver, lambda, w, pf);
}

// [[Rcpp::export]]
Rcpp::List cpp_enet_cv(SEXP xs, Rcpp::NumericVector y, SEXP family, double alpha, Rcpp::NumericVector w,
                       Rcpp::NumericVector pf, Rcpp::IntegerVector foldid, Rcpp::NumericVector lambda,
                       Rcpp::List control, Rcpp::List run) {
  const cd::EnetFamily fam = family_from(family);
  const bool multi = fam == cd::EnetFamily::multinomial;
  const auto d = design_from(xs, control);
  if (d->sparse && multi) Rcpp::stop("the multinomial family takes a dense x");
  const Rcpp::NumericMatrix x = d->sparse ? Rcpp::NumericMatrix(0, 0) : d->dense;
  Eigen::VectorXi fid = Rcpp::as<Eigen::VectorXi>(foldid);
  const Eigen::VectorXd lam = sbglue::as_map(lambda);
  sbglue::Progress prog(static_cast<double>(fid.maxCoeff() + 1), run, "Cross-validation");
  const cd::CvResult r =
      d->sparse ? cd::cross_validate_design(*d->sd, sbglue::as_map(y), cd::single_family(fam), alpha, sbglue::as_map(w),
                                            sbglue::as_map(pf), fid, lam, control_from(control), sbglue::run_settings(run),
                                            prog.monitor())
      : multi
          ? cd::cross_validate_multinomial(sbglue::as_map(x), sbglue::as_map(y), n_class(control), grouped(control),
                                           alpha, sbglue::as_map(w), sbglue::as_map(pf), fid, lam,
                                           control_from(control), sbglue::run_settings(run), prog.monitor())
          : cd::cross_validate(sbglue::as_map(x), sbglue::as_map(y), cd::single_family(fam), alpha, sbglue::as_map(w),
                               sbglue::as_map(pf), fid, lam, control_from(control), sbglue::run_settings(run),
                               prog.monitor());
  if (r.status.interrupted || prog.interrupted()) return Rcpp::List::create(Rcpp::Named("interrupted") = true);
  if (r.predmat.size() > 0)  // auc: the held-out linear predictors, scored in R (R/cv.R)
    return Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::wrap(r.lambda), Rcpp::Named("predmat") = Rcpp::wrap(r.predmat),
                              Rcpp::Named("interrupted") = false);
  return Rcpp::List::create(Rcpp::Named("lambda") = Rcpp::wrap(r.lambda), Rcpp::Named("cvm") = Rcpp::wrap(r.cvm),
                            Rcpp::Named("cvsd") = Rcpp::wrap(r.cvsd), Rcpp::Named("lambda_min") = r.lambda_min,
                            Rcpp::Named("lambda_1se") = r.lambda_1se, Rcpp::Named("index_min") = r.index_min + 1,
                            Rcpp::Named("index_1se") = r.index_1se + 1, Rcpp::Named("interrupted") = false);
}

// WBB draws first + 1 .. first + count for every lambda (decreasing), warm-started from the unweighted solution
// at lambda[1] (warm_a0, warm_beta: standardized scale). The draws are written straight into the returned R
// matrices (count x (p + 1) per lambda, original scale via center / scale, columns named `names`).
// Multinomial: the warm start is control$warm_a0 (K) and control$warm_beta (p K, by class), and each
// matrix is count x K (p + 1), class by class.
// [[Rcpp::export]]
Rcpp::List cpp_wbb_glm(SEXP xs, Rcpp::NumericVector y, SEXP family, double alpha, Rcpp::NumericVector pf,
                       Rcpp::NumericVector lambda, double warm_a0, Rcpp::NumericVector warm_beta,
                       Rcpp::NumericVector center, Rcpp::NumericVector scale, Rcpp::CharacterVector names,
                       Rcpp::List settings, Rcpp::List control) {
  const cd::EnetFamily fam = family_from(family);
  const wbb::Settings st = sbglue::wbb_settings(settings);
  const auto d = design_from(xs, control);
  const bool multi = fam == cd::EnetFamily::multinomial;
  if (d->sparse && multi) Rcpp::stop("the multinomial family takes a dense x");
  const Rcpp::NumericMatrix x = d->sparse ? Rcpp::NumericMatrix(0, 0) : d->dense;
  const Eigen::Index L = lambda.size(), p = d->cols(), T = static_cast<Eigen::Index>(st.draws);
  const int K = multi ? n_class(control) : 1;
  wbb::GlmProblem pb{sbglue::as_map(x), sbglue::as_map(y), multi ? cd::Family::binomial : cd::single_family(fam), alpha,
                     sbglue::as_map(pf),
                     sbglue::as_map(lambda), cd::Fit(), control_from(control), sbglue::as_map(center),
                     sbglue::as_map(scale), Eigen::VectorXd(), 0, false, cd::MultinomialFit(),
                     d->sparse ? d->sd.get() : nullptr};
  if (control.containsElementNamed("obs_weights") && !Rf_isNull(control["obs_weights"]))
    pb.obs_weights = Rcpp::as<Eigen::VectorXd>(control["obs_weights"]);
  pb.warm.a0 = warm_a0;
  pb.warm.beta = sbglue::as_map(warm_beta);
  if (multi) {
    pb.classes = K;
    pb.grouped = grouped(control);
    pb.warm_multi.a0 = Rcpp::as<Eigen::VectorXd>(control["warm_a0"]);
    const Eigen::VectorXd wb = Rcpp::as<Eigen::VectorXd>(control["warm_beta"]);
    if (pb.warm_multi.a0.size() != K || wb.size() != p * K) Rcpp::stop("multinomial warm start of the wrong size");
    pb.warm_multi.beta = Eigen::Map<const Eigen::MatrixXd>(wb.data(), p, K);
  }
  const Eigen::Index ncol = K * (p + 1);
  Rcpp::List coef(L);
  std::vector<Eigen::Map<Eigen::MatrixXd>> maps;
  for (Eigen::Index l = 0; l < L; ++l) {
    Rcpp::NumericMatrix m(static_cast<int>(T), static_cast<int>(ncol));
    m.attr("dimnames") = Rcpp::List::create(R_NilValue, names);
    coef[l] = m;
    maps.emplace_back(m.begin(), T, ncol);
  }
  Rcpp::NumericVector kkt(T);
  Rcpp::IntegerVector iterations(T), notconv(T);
  wbb::GlmOutput out{maps, Eigen::Map<Eigen::VectorXd>(kkt.begin(), T), Eigen::Map<Eigen::VectorXi>(iterations.begin(), T),
                     Eigen::Map<Eigen::VectorXi>(notconv.begin(), T)};
  sbglue::Progress prog(static_cast<double>(T), settings, "WBB draws");
  const auto status = wbb::run_glm(pb, out, st, prog.monitor());
  return Rcpp::List::create(Rcpp::Named("coef") = coef, Rcpp::Named("kkt") = kkt,
                            Rcpp::Named("iterations") = iterations,
                            Rcpp::Named("not_converged") = std::accumulate(notconv.begin(), notconv.begin() + static_cast<R_xlen_t>(status.prefix), 0),
                            Rcpp::Named("prefix") = static_cast<double>(status.prefix),  // draws 1..prefix finished
                            Rcpp::Named("interrupted") = status.interrupted || prog.interrupted());
}

// Column means and sds (divisor n) of a dense design in one pass each, no temporary copy
// (scalebayes/math/columns.hpp); center: NULL (the column means) or p numbers to take the sds about.
// [[Rcpp::export]]
Rcpp::List cpp_col_moments(const Rcpp::NumericMatrix& x, Rcpp::Nullable<Rcpp::NumericVector> center) {
  const std::size_t n = x.nrow(), p = x.ncol();
  Rcpp::NumericVector mean(p), sd(p);
  if (center.isNotNull()) {
    const Rcpp::NumericVector c(center.get());
    if (static_cast<std::size_t>(c.size()) != p) Rcpp::stop("center: one number per column");
    std::copy(c.begin(), c.end(), mean.begin());
    scalebayes::math::column_moments(x.begin(), n, p, c.begin(), nullptr, sd.begin());
  } else {
    scalebayes::math::column_moments(x.begin(), n, p, nullptr, mean.begin(), sd.begin());
  }
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("sd") = sd);
}

// (x - center) / scale by columns into a new matrix (dimnames kept), the only copy.
// [[Rcpp::export]]
Rcpp::NumericMatrix cpp_standardize_columns(const Rcpp::NumericMatrix& x, const Rcpp::NumericVector& center,
                                            const Rcpp::NumericVector& scale) {
  const std::size_t n = x.nrow(), p = x.ncol();
  if (static_cast<std::size_t>(center.size()) != p || static_cast<std::size_t>(scale.size()) != p)
    Rcpp::stop("center, scale: one number per column");
  Rcpp::NumericMatrix out(x.nrow(), x.ncol());
  scalebayes::math::standardize_columns(x.begin(), n, p, center.begin(), scale.begin(), out.begin());
  if (!Rf_isNull(Rf_getAttrib(x, R_DimNamesSymbol))) out.attr("dimnames") = Rf_getAttrib(x, R_DimNamesSymbol);
  return out;
}

// Whether a double vector or matrix has only finite values (no NA, NaN, Inf): one pass, no temporary.
// [[Rcpp::export]]
bool cpp_all_finite(const Rcpp::NumericVector& x) {
  return scalebayes::math::all_finite(x.begin(), static_cast<std::size_t>(x.size()));
}
