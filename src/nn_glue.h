// src/nn_glue.h -- the network specification list R builds (R/nn_spec.R: nn_engine_spec()) as an
// nn::ModelSpec. Torch-free: shared by the LibTorch units (torch_glue.h) and the layer planner (nn_spec.cpp),
// which is compiled in every build.
#pragma once
#include <cstdint>
#include <vector>

#include "sb_glue.h"
#include "scalebayes/nn/spec.hpp"

namespace sbglue {

// list(input, family, init (optional), layers = list(kind, out, kernel, stride, padding, penalized,
// rate (optional), target (optional: a list with one integer vector per layer, the reshape targets))).
inline scalebayes::nn::ModelSpec nn_spec_from(const Rcpp::List& s) {
  namespace nn = scalebayes::nn;
  nn::ModelSpec m;
  Rcpp::IntegerVector input = s["input"];
  for (int v : input) m.input.push_back(v);
  m.family = enum_arg<nn::Family>(s, "family");
  if (s.containsElementNamed("init")) m.init = enum_arg<nn::Init>(s, "init");
  Rcpp::List L = s["layers"];
  Rcpp::IntegerVector kind = L["kind"], out = L["out"], kernel = L["kernel"], stride = L["stride"],
                      padding = L["padding"];
  Rcpp::LogicalVector pen = L["penalized"];
  const bool has_rate = L.containsElementNamed("rate");
  Rcpp::NumericVector rate = has_rate ? Rcpp::as<Rcpp::NumericVector>(L["rate"]) : Rcpp::NumericVector(kind.size());
  const bool has_target = L.containsElementNamed("target");
  Rcpp::List target = has_target ? Rcpp::as<Rcpp::List>(L["target"]) : Rcpp::List(kind.size());
  for (R_xlen_t i = 0; i < kind.size(); ++i) {
    nn::LayerSpec l;
    try {
      l.kind = nn::layer_kind_from_code(kind[i]);
    } catch (const std::invalid_argument& e) {
      Rcpp::stop("layer " + std::to_string(i + 1) + ": " + e.what());
    }
    l.out = out[i];
    l.kernel = kernel[i];
    l.stride = stride[i];
    l.padding = padding[i];
    l.penalized = pen[i];
    l.rate = rate[i];
    if (has_target && !Rf_isNull(target[i])) {
      Rcpp::IntegerVector t = target[i];
      l.target.assign(t.begin(), t.end());
    }
    m.layers.push_back(l);
  }
  return m;
}

}  // namespace sbglue
