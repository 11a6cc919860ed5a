// scalebayes/enum_names.hpp -- the names of an option's values, one table per option next to its definition.
//
// A header that defines an option the front ends choose by name (an enum, or the enum naming an int-coded control
// field) defines its table beside it, in the enum's namespace, and an enum_table() overload found by ADL:
//
//   enum class Optimizer { sgd = 0, adam = 1, rmsprop = 2 };
//   inline constexpr EnumTable<Optimizer, 3> optimizer_names{
//       "optimizer", {{{"sgd", Optimizer::sgd}, {"adam", Optimizer::adam}, {"rmsprop", Optimizer::rmsprop}}}};
//   constexpr const auto& enum_table(Optimizer) { return optimizer_names; }
//
// The names are the user-facing ones (what R's match.arg() choices say), in the order R lists them. The glue
// reads the user's choice as a string and calls parse_enum<E>(name), which throws std::invalid_argument naming
// the option and its valid names; nothing casts an integer from R to an enum. enum_names<E>() lists the names in
// table order (cpp_enum_names() returns them, so tests check that R's choices equal the engine's).
#pragma once
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalebayes {

template <class E>
struct EnumName {
  const char* name;
  E value;
};

template <class E, std::size_t N>
struct EnumTable {
  const char* what;  // the option, for messages ("optimizer")
  std::array<EnumName<E>, N> values;
};

template <class E>
std::vector<std::string> enum_names() {
  std::vector<std::string> out;
  for (const auto& e : enum_table(E{}).values) out.emplace_back(e.name);
  return out;
}

// The valid names, quoted, for messages: "a", "b", "c".
template <class E>
std::string enum_valid_names() {
  std::string valid;
  for (const auto& e : enum_table(E{}).values) valid += std::string(valid.empty() ? "" : ", ") + "\"" + e.name + "\"";
  return valid;
}

// The value named `name`; std::invalid_argument naming the option and its valid names otherwise.
template <class E>
E parse_enum(const std::string& name) {
  const auto& t = enum_table(E{});
  for (const auto& e : t.values)
    if (name == e.name) return e.value;
  throw std::invalid_argument(std::string("unknown ") + t.what + " \"" + name + "\" (valid: " + enum_valid_names<E>() +
                              ")");
}

// The name of `value`; std::invalid_argument when the table lacks it.
template <class E>
const char* enum_name(E value) {
  const auto& t = enum_table(E{});
  for (const auto& e : t.values)
    if (e.value == value) return e.name;
  throw std::invalid_argument(std::string("no name for this ") + t.what + " value");
}

}  // namespace scalebayes
