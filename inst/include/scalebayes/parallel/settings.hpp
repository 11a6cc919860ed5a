// scalebayes/parallel/settings.hpp -- the run settings every engine driver takes.
//
// One struct for the settings of a run that are not part of the model: the seed of the run's random streams
// and the number of worker threads. Every driver takes it (gibbs::run_blasso, gibbs::run_compare,
// cd::cross_validate, sgmcmc::run_sgld_sa; wbb::Settings extends it with the draw range and weight rules),
// together with a parallel::Monitor (driver.hpp) for progress and interrupts. Results never depend on
// `threads`: randomness comes from streams keyed by (seed, item index).
// The R glue fills it from one list (src/sb_glue.h, sbglue::run_settings(); R/seed.R, run_settings()).
// Header-only, std only, no R.
#pragma once
#include <cstdint>

namespace scalebayes {
namespace parallel {

struct RunSettings {
  std::uint64_t seed = 1;  // key of the run's streams: item i draws from rng::Stream(seed, i)
  int threads = 1;         // worker threads (values < 1 mean 1)
};

}  // namespace parallel
}  // namespace scalebayes
