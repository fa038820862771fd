// C++ symbol names as people read them, from the C++ runtime's own
// demangler (abi::__cxa_demangle, the one c++filt and gdb use), not a
// parser of our own: the Itanium ABI's mangling of templates, lambdas and
// substitutions is too large to re-implement faithfully.
//
// Header-only: the ingest (which demangles kernel names as it stores them)
// and the JS binding `demangle()` share these few lines.
#pragma once

#include <cxxabi.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace streamscope::addon {

// The demangled form of `name` when it is a mangled C++ function or object
// name (`_Z…`) that demangles; nothing otherwise. Only `_Z` names: the
// demangler also accepts bare type encodings, which would turn a plain
// name such as "i" or "f" into "int" or "float".
inline std::optional<std::string> demangle(const std::string& name) {
  if (name.size() < 3 || name[0] != '_' || name[1] != 'Z') return std::nullopt;
  int status = 0;
  char* out = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return std::nullopt;
  }
  std::string text(out);
  std::free(out);
  return text;
}

}  // namespace streamscope::addon
