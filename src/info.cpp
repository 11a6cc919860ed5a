// Build information for scalebayes_info().
#include "sb_glue.h"

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
