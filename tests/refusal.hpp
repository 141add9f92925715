// The CPU argument tests' helper: what a call that must be refused before any CUDA work says.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace fp8gemm::test {

/// The message of the std::invalid_argument that `call()` throws; "OTHER: <message>" for any other
/// exception; "accepted" when it throws nothing.
template <class F>
std::string refusal_of(F&& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("OTHER: ") + e.what();
  }
  return "accepted";
}

inline bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

}  // namespace fp8gemm::test
