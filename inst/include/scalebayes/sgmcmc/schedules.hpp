// scalebayes/sgmcmc/schedules.hpp -- step-size, stochastic-approximation, annealing and pruning schedules.
// Iterations are counted from k = 1. Header-only, std only, no R.
#pragma once
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "scalebayes/enum_names.hpp"

namespace scalebayes {
namespace sgmcmc {

// Learning rate eps_k: constant eps0; polynomial eps0 * k^(-gamma) (the paper's 0.001 k^(-1/3)); stepwise
// eps0 * decay^(number of milestones <= k) (the paper's "divided by 10 at epochs 700 and 900"); cyclical (Zhang,
// Li, Zhang, Chen & Wilson 2020, eq. 1): `cycles` cosine cycles of L = ceil(total / cycles) iterations over the
// run's `total`, eps_k = eps0 / 2 (cos(pi t_k) + 1) with t_k = ((k - 1) mod L) / L the position in the cycle;
// the first `explore` (beta) of each cycle is the exploration stage (exploring(k): the chain driver keeps no
// draw there and, unless explore_noise, runs it at zero temperature: no noise), the rest the sampling stage.
struct StepSchedule {
  enum class Type { constant, polynomial, stepwise, cyclical };
  Type type = Type::polynomial;
  double eps0 = 1e-3;
  double gamma = 1.0 / 3.0;
  double decay = 0.1;
  std::vector<long> milestones;
  long cycles = 1, total = 0;  // cyclical: the number of cycles M and the run's iterations K
  double explore = 0.0;        // cyclical: the exploration stage's share beta of each cycle, in [0, 1)
  bool explore_noise = false;  // cyclical: the exploration stage keeps the step's noise (only its draws are
                               // dropped); false: Zhang et al.'s, zero temperature
  // The exploration stage runs at zero temperature (no noise) at iteration k.
  bool cold(long k) const { return !explore_noise && exploring(k); }

  long cycle_length() const { return (total + cycles - 1) / cycles; }
  double cycle_position(long k) const {
    const long L = cycle_length();
    return static_cast<double>((k - 1) % L) / static_cast<double>(L);
  }
  bool exploring(long k) const { return type == Type::cyclical && explore > 0.0 && cycle_position(k) < explore; }

  double at(long k) const {
    switch (type) {
      case Type::constant:
        return eps0;
      case Type::polynomial:
        return eps0 * std::pow(static_cast<double>(k), -gamma);
      case Type::stepwise: {
        long passed = 0;
        for (long m : milestones) passed += (k >= m);
        return eps0 * std::pow(decay, static_cast<double>(passed));
      }
      case Type::cyclical:
        return eps0 / 2.0 * (std::cos(3.14159265358979323846 * cycle_position(k)) + 1.0);
    }
    return eps0;
  }
  void validate() const {
    if (!(eps0 >= 0.0) || !std::isfinite(eps0)) throw std::invalid_argument("step size eps0 must be >= 0");
    if (!(gamma >= 0.0)) throw std::invalid_argument("step-size exponent gamma must be >= 0");
    if (!(decay > 0.0)) throw std::invalid_argument("step-size decay must be > 0");
    if (type == Type::cyclical) {
      if (cycles < 1 || total < cycles) throw std::invalid_argument("a cyclical schedule needs 1 <= cycles <= iterations");
      if (!(explore >= 0.0 && explore < 1.0)) throw std::invalid_argument("the exploration share must lie in [0, 1)");
    }
  }
};
// by name (R: sgmcmc_step(schedule = )), in R's order
inline constexpr EnumTable<StepSchedule::Type, 4> step_schedule_names{
    "step_schedule", {{{"polynomial", StepSchedule::Type::polynomial}, {"constant", StepSchedule::Type::constant},
                       {"stepwise", StepSchedule::Type::stepwise}, {"cyclical", StepSchedule::Type::cyclical}}}};
constexpr const auto& enum_table(StepSchedule::Type) { return step_schedule_names; }

// SA step omega_k = min(cap, A (k + Z)^(-alpha)) (cap = 1 by default); the EM arm uses omega_k = 1.
// The paper's omega_k = 10 (k + 1000)^(-0.7) is A = 10, Z = 1000, alpha = 0.7, cap = 1; the authors' simulation
// code used min(0.1, 1000 (k + 100)^(-0.7)), i.e. A = 1000, Z = 100, cap = 0.1 (constant 0.1 for k < 5.2e5).
struct SAStep {
  double A = 10.0, Z = 1000.0, alpha = 0.7, cap = 1.0;
  bool em = false;
  double at(long k) const {
    if (em) return 1.0;
    return std::min(cap, A * std::pow(static_cast<double>(k) + Z, -alpha));
  }
  void validate() const {
    if (!(A > 0.0) || !(alpha > 0.0) || !(alpha <= 1.0) || !(Z >= 0.0) || !(cap > 0.0 && cap <= 1.0))
      throw std::invalid_argument("SA step needs A > 0, Z >= 0, alpha in (0, 1] and cap in (0, 1]");
  }
};

// Inverse temperature tau_k = tau0 * r^floor(k / every) (r = 1: fixed temperature; r > 1: simulated annealing, the
// "A-" variants: every = 1 gives the paper's tau0 * 1.003^k, every = one epoch the CIFAR rule "multiply tau by 1.005
// every epoch").
struct Annealing {
  double tau0 = 1.0, r = 1.0;
  long every = 1;
  double at(long k) const {
    if (r == 1.0) return tau0;
    return tau0 * std::pow(r, static_cast<double>(every == 1 ? k : k / every));
  }
  void validate() const {
    if (!(tau0 > 0.0) || !(r > 0.0)) throw std::invalid_argument("temperature tau0 and ratio r must be > 0");
    if (every < 1) throw std::invalid_argument("annealing interval must be >= 1");
  }
};

// Magnitude pruning, Algorithm 1: sparse rate s_k = S (1 - D^(k / U)).
struct PruneSchedule {
  bool on = false;
  double S = 0.9, D = 0.99, U = 50.0;
  double at(long k) const { return on ? S * (1.0 - std::pow(D, static_cast<double>(k) / U)) : 0.0; }
  void validate() const {
    if (!on) return;
    if (!(S >= 0.0 && S < 1.0) || !(D > 0.0 && D < 1.0) || !(U > 0.0))
      throw std::invalid_argument("pruning needs S in [0, 1), D in (0, 1), U > 0");
  }
};

}  // namespace sgmcmc
}  // namespace scalebayes
