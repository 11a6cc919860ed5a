// Layer tables of network specifications (engine: nn/layers_spec.hpp). Torch-free: compiled in every build,
// so specifications print, and their parameters are counted, without LibTorch.
#include "nn_glue.h"

namespace nn = scalebayes::nn;

// Every layer's resolved kind (batchnorm -> batchnorm1d / batchnorm2d), name, output shape, parameter count and
// whether training needs two examples per minibatch because of it, and the parameter groups (name, size, penalized) in the network's order. Throws (an R error with
// the engine's message) for a layer that does not fit its input.
// [[Rcpp::export]]
Rcpp::List cpp_nn_plan(Rcpp::List spec) {
  const nn::NetPlan p = nn::plan(sbglue::nn_spec_from(spec));
  const R_xlen_t L = static_cast<R_xlen_t>(p.layers.size());
  Rcpp::IntegerVector kind(L);
  Rcpp::CharacterVector name(L);
  Rcpp::List shape(L);
  Rcpp::NumericVector params(L);
  Rcpp::LogicalVector needs_two(L);
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
    needs_two[i] = lp.needs_two_examples();
    for (const nn::ParamDef& d : lp.params) {
      group.push_back(lp.base + "." + d.name);
      size.push_back(static_cast<double>(d.numel()));
      penalized.push_back(d.penalized);
      n_pen += d.penalized ? 1 : 0;
    }
  }
  return Rcpp::List::create(Rcpp::Named("kind") = kind, Rcpp::Named("name") = name, Rcpp::Named("shape") = shape,
                            Rcpp::Named("params") = params, Rcpp::Named("needs_two") = needs_two,
                            Rcpp::Named("n_parameters") = static_cast<double>(p.n_params()),
                            Rcpp::Named("n_penalized") = n_pen, Rcpp::Named("out") = static_cast<int>(p.out[0]),
                            Rcpp::Named("group") = group, Rcpp::Named("size") = size,
                            Rcpp::Named("penalized") = penalized);
}

// The layer kinds (nn/layers_spec.hpp), the one list R reads (R/nn_spec.R: nn_layer_kinds()): code, name and
// the properties every method decides by (LayerProps). batchnorm (resolved to 1d / 2d by the planner) is a row
// too: R's layer_batchnorm() names it.
// [[Rcpp::export]]
Rcpp::DataFrame cpp_nn_layer_kinds() {
  const int n = nn::layer_kind_count();
  Rcpp::IntegerVector code(n);
  Rcpp::CharacterVector name(n), input(n);
  Rcpp::LogicalVector weighted(n), sparse(n), variational(n), convolution(n), batched(n);
  for (int i = 0; i < n; ++i) {
    const nn::LayerKind k = nn::layer_kind_from_code(i);
    const nn::LayerProps p = nn::layer_props(k);
    code[i] = i;
    name[i] = nn::layer_name(k);
    input[i] = p.input;
    weighted[i] = p.weighted;
    sparse[i] = p.sparse;
    variational[i] = p.variational;
    convolution[i] = p.convolution;
    batched[i] = p.batched;
  }
  return Rcpp::DataFrame::create(Rcpp::Named("code") = code, Rcpp::Named("name") = name,
                                 Rcpp::Named("weighted") = weighted, Rcpp::Named("sparse") = sparse,
                                 Rcpp::Named("variational") = variational, Rcpp::Named("convolution") = convolution,
                                 Rcpp::Named("batched") = batched, Rcpp::Named("input") = input,
                                 Rcpp::Named("stringsAsFactors") = false);
}
