// Layer tables of network specifications (engine: nn/layers_spec.hpp). Torch-free: compiled in every build,
// so specifications print, and their parameters are counted, without LibTorch.
#include "nn_glue.h"

namespace nn = scalebayes::nn;

// Every layer's resolved kind (batchnorm -> batchnorm1d / batchnorm2d), name, output shape and parameter
// count, and the parameter groups (name, size, penalized) in the network's order. Throws (an R error with
// the engine's message) for a layer that does not fit its input.
// [[Rcpp::export]]
Rcpp::List cpp_nn_plan(Rcpp::List spec) {
  const nn::NetPlan p = nn::plan(sbglue::nn_spec_from(spec));
  const R_xlen_t L = static_cast<R_xlen_t>(p.layers.size());
  Rcpp::IntegerVector kind(L);
  Rcpp::CharacterVector name(L);
  Rcpp::List shape(L);
  Rcpp::NumericVector params(L);
  Rcpp::CharacterVector group;
  Rcpp::NumericVector size;
  Rcpp::LogicalVector penalized;
  int n_pen = 0;
  for (R_xlen_t i = 0; i < L; ++i) {
    const nn::LayerPlan& lp = p.layers[static_cast<std::size_t>(i)];
    kind[i] = static_cast<int>(lp.kind);
    name[i] = nn::layer_name(lp.kind);
    shape[i] = Rcpp::IntegerVector(lp.out.begin(), lp.out.end());
    params[i] = static_cast<double>(lp.n_params());
    for (const nn::ParamDef& d : lp.params) {
      group.push_back(lp.base + "." + d.name);
      size.push_back(static_cast<double>(d.numel()));
      penalized.push_back(d.penalized);
      n_pen += d.penalized ? 1 : 0;
    }
  }
  return Rcpp::List::create(Rcpp::Named("kind") = kind, Rcpp::Named("name") = name, Rcpp::Named("shape") = shape,
                            Rcpp::Named("params") = params, Rcpp::Named("n_parameters") = static_cast<double>(p.n_params()),
                            Rcpp::Named("n_penalized") = n_pen, Rcpp::Named("out") = static_cast<int>(p.out[0]),
                            Rcpp::Named("group") = group, Rcpp::Named("size") = size,
                            Rcpp::Named("penalized") = penalized);
}
