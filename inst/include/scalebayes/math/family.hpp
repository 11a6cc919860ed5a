// scalebayes/math/family.hpp -- the GLM response families, shared by every GLM engine (cd/, sgmcmc/, wbb/).
#pragma once
#include "scalebayes/enum_names.hpp"

namespace scalebayes {

// gaussian: squared-error loss / normal likelihood; binomial: 0/1 response, logistic link; poisson: counts, log
// link (the coordinate-descent engine cd/ and the SG-MCMC regressions, sgmcmc/glm.hpp). R passes the name
// (sgld_sa(family = ); the elastic net's, with multinomial: cd::EnetFamily, cd/solver.hpp).
enum class Family { gaussian = 0, binomial = 1, poisson = 2 };
inline constexpr EnumTable<Family, 3> family_names{
    "family", {{{"gaussian", Family::gaussian}, {"binomial", Family::binomial}, {"poisson", Family::poisson}}}};
constexpr const auto& enum_table(Family) { return family_names; }

}  // namespace scalebayes
