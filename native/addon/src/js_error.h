// How a native error reaches JavaScript: said in one place, jsError (in
// addon.cc), for every export. The binding code throws the native errors
// as they are (SqliteError, IngestError, LoadError, ...) and runs its body
// through withJsErrors; nowhere else is an error turned into a JS one.
#pragma once

#include <napi.h>

#include <exception>

namespace streamscope::addon {

// `e` as the JS Error the TypeScript side reads: its message, and for the
// errors that callers tell apart by more than the message, the properties
// they read (addon.cc lists them).
Napi::Error jsError(Napi::Env env, const std::exception& e);

// body(), with a native error it throws thrown as jsError's JS Error (a
// Napi::Error, already a JS one, passes as it is). Without it, a C++
// exception leaving a Node-API callback ends the process.
template <class F>
auto withJsErrors(Napi::Env env, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    throw jsError(env, e);
  }
}

}  // namespace streamscope::addon
