// Thread-local "recent error" text behind aclGetRecentErrMsg, and the helpers every API entry
// point uses to fail: the message names the argument, what was expected and what was given.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace aclnn_portable {

// Every public entry point calls this first, so a message always belongs to the latest call.
void ClearRecentError();
void SetRecentError(std::string message);
const char* RecentError();

// printf-style formatting into a std::string.
std::string StrFormat(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// "[2, 3, 4]"
std::string ShapeToString(const int64_t* dims, size_t n);
inline std::string ShapeToString(const std::vector<int64_t>& dims) {
  return ShapeToString(dims.data(), dims.size());
}
const char* DataTypeName(aclDataType dtype);
const char* FormatName(aclFormat format);

// The integer a C caller passed for an enum parameter. C allows any int there, but loading an
// out-of-range value as the C++ enum type is undefined (UBSan's -fsanitize=enum), so entry points
// validate enum arguments through this before using them as enums.
template <typename E>
int RawEnumValue(const E& e) {
  static_assert(sizeof(E) == sizeof(int), "C enums are int-sized");
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}

// Records "<api>: <message>" and returns `status`, so call sites read `return Fail(...)`.
template <typename Status>
Status Fail(Status status, const char* api, const std::string& message) {
  SetRecentError(std::string(api) + ": " + message);
  return status;
}

}  // namespace aclnn_portable
