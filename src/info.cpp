// Build information for scalebayes_info().
#include "sb_glue.h"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/genlasso/ip_types.hpp"
#include "scalebayes/genlasso/trend_filter.hpp"
#include "scalebayes/gibbs/blasso.hpp"
#include "scalebayes/gibbs/compare.hpp"
#include "scalebayes/nn/spec.hpp"
#include "scalebayes/pde/darcy.hpp"
#include "scalebayes/wbb/driver.hpp"

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

// The names of the engine's options, in table order (scalebayes/enum_names.hpp; the network-engine ones that need
// LibTorch: cpp_enum_names_torch()). R passes every option by these names; tests check R's choices against them.
// [[Rcpp::export]]
Rcpp::List cpp_enum_names() {
  namespace sb = scalebayes;
  using sb::enum_names;
  return Rcpp::List::create(Rcpp::Named("nn_family") = enum_names<sb::nn::Family>(),
                            Rcpp::Named("nn_init") = enum_names<sb::nn::Init>(),
                            Rcpp::Named("wbb_dist") = enum_names<sb::wbb::WeightDist>(),
                            Rcpp::Named("wbb_prior") = enum_names<sb::wbb::PriorWeights>(),
                            Rcpp::Named("tf_method") = enum_names<sb::genlasso::TFMethod>(),
                            Rcpp::Named("tf_newton") = enum_names<sb::genlasso::NewtonDirections>(),
                            Rcpp::Named("cv_measure") = enum_names<sb::cd::CvMeasure>(),
                            Rcpp::Named("blasso_lambda_mode") = enum_names<sb::gibbs::LambdaMode>(),
                            Rcpp::Named("compare_setting") = enum_names<sb::gibbs::CompareSetting>(),
                            Rcpp::Named("kle_link") = enum_names<sb::pde::KleLink>());
}
