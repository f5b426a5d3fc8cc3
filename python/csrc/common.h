// Shared helpers of the torch extension: argument checks that raise the right Python exception,
// dtype mapping, and an owning wrapper that describes an at::Tensor to the C API as an
// aclTensor view (sizes, strides and storage offset passed through, never copied).
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstdint>
#include <string>

#include "acl/acl.h"

namespace aclnn_portable_torch {

// "[2, 3, 4]"
inline std::string ShapeStr(at::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

inline std::string DtypeStr(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "torch.float32";
    case at::kHalf: return "torch.float16";
    case at::kBFloat16: return "torch.bfloat16";
    case at::kDouble: return "torch.float64";
    case at::kByte: return "torch.uint8";
    case at::kChar: return "torch.int8";
    case at::kShort: return "torch.int16";
    case at::kInt: return "torch.int32";
    case at::kLong: return "torch.int64";
    case at::kBool: return "torch.bool";
    case at::kComplexFloat: return "torch.complex64";
    case at::kComplexDouble: return "torch.complex128";
    default: return std::string("torch.") + c10::toString(t);
  }
}

inline bool IsKernelDtype(at::ScalarType t) {
  return t == at::kFloat || t == at::kHalf || t == at::kBFloat16;
}

// CPU, strided, one of the kernel dtypes. device -> RuntimeError, layout/dtype -> TypeError.
inline void CheckKernelTensor(const char* op, const char* name, const at::Tensor& t) {
  TORCH_CHECK(t.defined(), op, ": ", name, " must be a tensor, got None");
  TORCH_CHECK(t.device().is_cpu(), op, ": ", name,
              " must be a CPU tensor (aclnn_portable runs on the host), got a tensor on ",
              t.device().str());
  TORCH_CHECK_TYPE(t.layout() == at::kStrided, op, ": ", name,
                   " must be a dense (strided) tensor, got layout ", t.layout());
  TORCH_CHECK_TYPE(IsKernelDtype(t.scalar_type()), op, ": ", name,
                   " must have dtype torch.float32, torch.float16 or torch.bfloat16, got ",
                   DtypeStr(t.scalar_type()));
}

inline aclDataType AclDtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return ACL_FLOAT;
    case at::kHalf: return ACL_FLOAT16;
    case at::kBFloat16: return ACL_BF16;
    default: TORCH_CHECK(false, "aclnn_portable: no ACL dtype for ", DtypeStr(t));
  }
}

// The C API reports failures through the thread-local aclGetRecentErrMsg(); every call clears it
// on entry, so a non-empty message after a call means that call failed.
inline void ThrowIfCallFailed(const char* function) {
  const char* msg = aclGetRecentErrMsg();
  TORCH_CHECK(msg == nullptr || msg[0] == '\0', function, " failed: ", msg);
}

// a * b for non-negative sizes, ValueError naming `what` when it does not fit in int64.
inline int64_t CheckedMul(const char* op, const char* what, int64_t a, int64_t b) {
  int64_t out = 0;
  TORCH_CHECK_VALUE(!__builtin_mul_overflow(a, b, &out), op, ": ", what, " = ", a, " * ", b,
                    " overflows int64");
  return out;
}

inline uint8_t* Bytes(const at::Tensor& t) { return static_cast<uint8_t*>(t.data_ptr()); }

// An aclTensor describing exactly the view of `t`: its sizes, strides (elements) and storage
// offset, over the whole storage. Destroyed with the wrapper.
class AclTensor {
 public:
  AclTensor(const at::Tensor& t, aclFormat format) {
    const int64_t item = static_cast<int64_t>(t.element_size());
    const int64_t offset = t.storage_offset();
    char* base = static_cast<char*>(t.data_ptr()) - offset * item;
    const int64_t storage_elems = static_cast<int64_t>(t.storage().nbytes()) / item;
    const int64_t storage_dims[1] = {storage_elems};
    handle_ = aclCreateTensor(t.sizes().data(), t.dim(), AclDtype(t.scalar_type()),
                              t.strides().data(), offset, format, storage_dims, 1, base);
    ThrowIfCallFailed("aclCreateTensor");
    TORCH_CHECK(handle_ != nullptr, "aclCreateTensor failed without a message");
  }
  ~AclTensor() {
    if (handle_) aclDestroyTensor(handle_);
  }
  AclTensor(const AclTensor&) = delete;
  AclTensor& operator=(const AclTensor&) = delete;
  aclTensor* get() const { return handle_; }

 private:
  aclTensor* handle_ = nullptr;
};

// Calls the operator `name` below the Autograd key (from inside a torch::autograd::Function's
// forward, or from a backward), so the CPU kernel runs.
inline c10::OperatorHandle FindOp(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "");
}

}  // namespace aclnn_portable_torch
