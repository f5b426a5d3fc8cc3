#include "runtime/error.h"

#include <cstdarg>
#include <cstdio>

namespace aclnn_portable {
namespace {
thread_local std::string t_recent_error;
}  // namespace

void ClearRecentError() { t_recent_error.clear(); }
void SetRecentError(std::string message) { t_recent_error = std::move(message); }
const char* RecentError() { return t_recent_error.c_str(); }

std::string StrFormat(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

std::string ShapeToString(const int64_t* dims, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

const char* DataTypeName(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT: return "ACL_FLOAT";
    case ACL_FLOAT16: return "ACL_FLOAT16";
    case ACL_BF16: return "ACL_BF16";
    case ACL_INT8: return "ACL_INT8";
    case ACL_INT16: return "ACL_INT16";
    case ACL_INT32: return "ACL_INT32";
    case ACL_INT64: return "ACL_INT64";
    case ACL_UINT8: return "ACL_UINT8";
    case ACL_UINT16: return "ACL_UINT16";
    case ACL_UINT32: return "ACL_UINT32";
    case ACL_UINT64: return "ACL_UINT64";
    case ACL_DOUBLE: return "ACL_DOUBLE";
    case ACL_BOOL: return "ACL_BOOL";
    case ACL_STRING: return "ACL_STRING";
    case ACL_COMPLEX64: return "ACL_COMPLEX64";
    case ACL_COMPLEX128: return "ACL_COMPLEX128";
    case ACL_DT_UNDEFINED: return "ACL_DT_UNDEFINED";
  }
  return "unknown aclDataType";
}

const char* FormatName(aclFormat format) {
  switch (format) {
    case ACL_FORMAT_NCHW: return "ACL_FORMAT_NCHW";
    case ACL_FORMAT_NHWC: return "ACL_FORMAT_NHWC";
    case ACL_FORMAT_ND: return "ACL_FORMAT_ND";
    case ACL_FORMAT_NC1HWC0: return "ACL_FORMAT_NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "ACL_FORMAT_FRACTAL_Z";
    case ACL_FORMAT_HWCN: return "ACL_FORMAT_HWCN";
    case ACL_FORMAT_NDHWC: return "ACL_FORMAT_NDHWC";
    case ACL_FORMAT_FRACTAL_NZ: return "ACL_FORMAT_FRACTAL_NZ";
    case ACL_FORMAT_NCDHW: return "ACL_FORMAT_NCDHW";
    case ACL_FORMAT_UNDEFINED: return "ACL_FORMAT_UNDEFINED";
  }
  return "unknown aclFormat";
}

}  // namespace aclnn_portable
