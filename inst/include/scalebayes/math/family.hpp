// scalebayes/math/family.hpp -- the GLM response families, shared by every GLM engine (cd/, sgmcmc/, wbb/).
#pragma once

namespace scalebayes {

// gaussian: squared-error loss / normal likelihood; binomial: 0/1 response, logistic link; poisson: counts, log
// link (the coordinate-descent engine cd/ and the SG-MCMC regressions, sgmcmc/glm.hpp). The codes are what the R glue passes (src/wbb_glm.cpp,
// src/sgld_sa.cpp).
enum class Family { gaussian = 0, binomial = 1, poisson = 2 };

}  // namespace scalebayes
