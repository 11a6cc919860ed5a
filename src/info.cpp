// Build information for scalebayes_info().
#include "sb_glue.h"
#include "scalebayes/cd/solver.hpp"
#include "scalebayes/genlasso/glm_trend.hpp"
#include "scalebayes/genlasso/ip_types.hpp"
#include "scalebayes/genlasso/trend_filter.hpp"
#include "scalebayes/gibbs/blasso.hpp"
#include "scalebayes/gibbs/compare.hpp"
#include "scalebayes/nn/spec.hpp"
#include "scalebayes/math/family.hpp"
#include "scalebayes/pde/darcy.hpp"
#include "scalebayes/sgmcmc/chain.hpp"
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
  namespace sg = scalebayes::sgmcmc;
  using sb::enum_names;
  const std::vector<std::pair<const char*, std::vector<std::string>>> tables = {
      {"nn_family", enum_names<sb::nn::Family>()},
      {"nn_init", enum_names<sb::nn::Init>()},
      {"wbb_dist", enum_names<sb::wbb::WeightDist>()},
      {"wbb_prior", enum_names<sb::wbb::PriorWeights>()},
      {"tf_method", enum_names<sb::genlasso::TFMethod>()},
      {"tf_newton", enum_names<sb::genlasso::NewtonDirections>()},
      {"tf_glm_family", enum_names<sb::genlasso::GLMFamily>()},
      {"enet_family", enum_names<sb::cd::EnetFamily>()},
      {"cv_measure", enum_names<sb::cd::CvMeasure>()},
      {"blasso_lambda_mode", enum_names<sb::gibbs::LambdaMode>()},
      {"blasso_rj_prior", enum_names<sb::gibbs::RjPrior>()},
      {"blasso_rj_cap", enum_names<sb::gibbs::RjCap>()},
      {"compare_setting", enum_names<sb::gibbs::CompareSetting>()},
      {"kle_link", enum_names<sb::pde::KleLink>()},
      {"glm_family", enum_names<sb::Family>()},
      {"sgmcmc_method", enum_names<sg::Method>()},
      {"sgmcmc_step_schedule", enum_names<sg::StepSchedule::Type>()},
      {"sgmcmc_rmsprop_adapt", enum_names<sg::RmspropControl::Adapt>()},
      {"sgmcmc_sa_form", enum_names<sg::SaForm>()},
      {"sgmcmc_curvature", enum_names<sg::Curvature>()},
      {"sgmcmc_precond_init", enum_names<sg::PrecondInit>()}};
  Rcpp::List out(tables.size());
  Rcpp::CharacterVector names(tables.size());
  for (std::size_t i = 0; i < tables.size(); ++i) {
    out[i] = Rcpp::wrap(tables[i].second);
    names[i] = tables[i].first;
  }
  out.attr("names") = names;
  return out;
}
