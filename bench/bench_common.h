// Shared by the Google Benchmark binaries and the peer library used by bench/compare: element
// types, page-touched buffers, deterministic fills, byte counts per operator, and a view of the
// public API that tolerates a library built without an operator (the weak references below are
// null then, and the benchmark reports "not built" instead of failing to link).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "mhc/mhc.h"

#pragma weak aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize
#pragma weak aclnnSoftmaxCrossEntropyWithLogits
#pragma weak mhc_post_do_fp32
#pragma weak mhc_post_do_fp16
#pragma weak mhc_post_do_bf16
#pragma weak mhc_pre_do_fp32
#pragma weak mhc_pre_do_fp16
#pragma weak mhc_pre_do_bf16
#pragma weak mhc_post_backward_do_fp32
#pragma weak mhc_post_backward_do_fp16
#pragma weak mhc_post_backward_do_bf16

namespace bench {

enum class DType : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

inline size_t ElementSize(DType t) { return t == DType::kF32 ? 4 : 2; }
inline aclDataType AclType(DType t) {
  return t == DType::kF32 ? ACL_FLOAT : (t == DType::kF16 ? ACL_FLOAT16 : ACL_BF16);
}
inline const char* Name(DType t) {
  return t == DType::kF32 ? "fp32" : (t == DType::kF16 ? "fp16" : "bf16");
}

inline bool HaveSce() {
  return &aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize != nullptr &&
         &aclnnSoftmaxCrossEntropyWithLogits != nullptr;
}

enum class MhcOp : int { kPost = 0, kPre = 1, kBackward = 2 };
inline const char* Name(MhcOp op) {
  return op == MhcOp::kPost ? "mhc_post" : (op == MhcOp::kPre ? "mhc_pre" : "mhc_post_backward");
}

using MhcFwdFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, int64_t, int64_t, int64_t,
                          int64_t);
using MhcBwdFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, int64_t,
                          int64_t, int64_t, int64_t);

inline MhcFwdFn MhcForward(MhcOp op, DType t) {
  if (op == MhcOp::kPost)
    return t == DType::kF32 ? &mhc_post_do_fp32 : (t == DType::kF16 ? &mhc_post_do_fp16 : &mhc_post_do_bf16);
  return t == DType::kF32 ? &mhc_pre_do_fp32 : (t == DType::kF16 ? &mhc_pre_do_fp16 : &mhc_pre_do_bf16);
}
inline MhcBwdFn MhcBackward(DType t) {
  return t == DType::kF32 ? &mhc_post_backward_do_fp32
                          : (t == DType::kF16 ? &mhc_post_backward_do_fp16 : &mhc_post_backward_do_bf16);
}
inline bool HaveMhc(MhcOp op, DType t) {
  return op == MhcOp::kBackward ? MhcBackward(t) != nullptr : MhcForward(op, t) != nullptr;
}

// h is fp16 for the fp16 entry points and fp32 otherwise (the seed's bf16 path keeps fp32 weights).
inline size_t MhcWeightSize(DType t) { return t == DType::kF16 ? 2 : 4; }

// Bytes an operator must move at least: every input read once, every output written once.
inline double SceBytes(int64_t rows, int64_t classes, int64_t label_rows, DType t) {
  const double es = static_cast<double>(ElementSize(t));
  return es * (2.0 * rows * classes + static_cast<double>(label_rows) * classes + rows);
}
inline double MhcBytes(MhcOp op, int64_t b, int64_t s, int64_t d, int64_t n, DType t) {
  const double x = static_cast<double>(b) * s * d * ElementSize(t);
  const double hb = static_cast<double>(n) * MhcWeightSize(t);
  switch (op) {
    case MhcOp::kPost: return x + hb + x * n;          // read x, h; write N streams
    case MhcOp::kPre: return x * n + hb + x;           // read N streams, h; write one
    case MhcOp::kBackward: return x * n + x + hb + x + 4.0 * n;  // read g, x, h; write gx, gh
  }
  return 0;
}

inline uint16_t FloatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
inline uint16_t FloatToHalf(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}

// Fills n elements with uniform values in [lo, hi) from a fixed-seed generator (xorshift).
inline void FillUniform(void* p, size_t n, DType t, float lo, float hi, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const float v = lo + (hi - lo) * static_cast<float>((s >> 40) * (1.0 / 16777216.0));
    if (t == DType::kF32)
      static_cast<float*>(p)[i] = v;
    else
      static_cast<uint16_t*>(p)[i] = t == DType::kF16 ? FloatToHalf(v) : FloatToBf16(v);
  }
}

// A 64-byte-aligned block from aclrtMalloc, every page written at construction, so first-touch
// page faults (very slow on this VM) never land inside a timed region.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t bytes) : size_(bytes) {
    if (bytes == 0) return;
    if (aclrtMalloc(&data_, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
      throw std::runtime_error("aclrtMalloc failed for " + std::to_string(bytes) + " bytes");
    std::memset(data_, 0, bytes);
  }
  ~Buffer() {
    if (data_) aclrtFree(data_);
  }
  Buffer(Buffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; o.size_ = 0; }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      if (data_) aclrtFree(data_);
      data_ = o.data_; size_ = o.size_;
      o.data_ = nullptr; o.size_ = 0;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  uint8_t* data() const { return static_cast<uint8_t*>(data_); }
  size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

// The SCE operands as aclTensors over caller-owned memory: ND [rows, classes] (labels may be
// [1, classes], broadcast) or NCHW [n, c, h, w] with loss [n, h, w].
struct SceTensors {
  aclTensor* features = nullptr;
  aclTensor* labels = nullptr;
  aclTensor* loss = nullptr;
  aclTensor* backprop = nullptr;

  // row_stride (ND only, elements; 0 = contiguous) pads every row, which makes all three
  // matrices non-contiguous views. Passing bp == f makes backprop exactly the features tensor.
  SceTensors(DType t, bool nchw, const int64_t* dims, bool labels_broadcast, void* f, void* y,
             void* loss_data, void* bp, int64_t row_stride = 0) {
    const aclDataType at = AclType(t);
    if (nchw) {
      const int64_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
      const int64_t shape[4] = {n, c, h, w};
      const int64_t strides[4] = {c * h * w, h * w, w, 1};
      const int64_t lshape[3] = {n, h, w};
      const int64_t lstrides[3] = {h * w, w, 1};
      features = aclCreateTensor(shape, 4, at, strides, 0, ACL_FORMAT_NCHW, shape, 4, f);
      labels = aclCreateTensor(shape, 4, at, strides, 0, ACL_FORMAT_NCHW, shape, 4, y);
      backprop = aclCreateTensor(shape, 4, at, strides, 0, ACL_FORMAT_NCHW, shape, 4, bp);
      loss = aclCreateTensor(lshape, 3, at, lstrides, 0, ACL_FORMAT_ND, lshape, 3, loss_data);
    } else {
      const int64_t rs = row_stride > 0 ? row_stride : dims[1];
      const int64_t shape[2] = {dims[0], dims[1]};
      const int64_t storage[2] = {dims[0], rs};
      const int64_t strides[2] = {rs, 1};
      const int64_t yshape[2] = {labels_broadcast ? 1 : dims[0], dims[1]};
      const int64_t ystorage[2] = {yshape[0], rs};
      const int64_t lshape[1] = {dims[0]};
      const int64_t lstrides[1] = {1};
      features = aclCreateTensor(shape, 2, at, strides, 0, ACL_FORMAT_ND, storage, 2, f);
      labels = aclCreateTensor(yshape, 2, at, strides, 0, ACL_FORMAT_ND, ystorage, 2, y);
      backprop = aclCreateTensor(shape, 2, at, strides, 0, ACL_FORMAT_ND, storage, 2, bp);
      loss = aclCreateTensor(lshape, 1, at, lstrides, 0, ACL_FORMAT_ND, lshape, 1, loss_data);
    }
    if (!features || !labels || !loss || !backprop) {
      Destroy();
      throw std::runtime_error(std::string("aclCreateTensor failed: ") + aclGetRecentErrMsg());
    }
  }
  ~SceTensors() { Destroy(); }
  SceTensors(const SceTensors&) = delete;
  SceTensors& operator=(const SceTensors&) = delete;

  // One plan + execute on the null stream, the way a CANN host program calls the operator.
  // Returns the status; `workspace` must hold at least the planned size (else an error).
  aclnnStatus PlanAndRun(void* workspace, uint64_t workspace_capacity) const {
    uint64_t ws = 0;
    aclOpExecutor* exec = nullptr;
    aclnnStatus st =
        aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(features, labels, loss, backprop, &ws, &exec);
    if (st != ACLNN_SUCCESS) return st;
    if (ws > workspace_capacity) {
      aclDestroyAclOpExecutor(exec);
      return ACLNN_ERR_INNER;
    }
    return aclnnSoftmaxCrossEntropyWithLogits(ws ? workspace : nullptr, ws, exec, nullptr);
  }
  // The workspace the plan asks for (planning only), or an error status.
  aclnnStatus WorkspaceSize(uint64_t* ws) const {
    aclOpExecutor* exec = nullptr;
    aclnnStatus st =
        aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(features, labels, loss, backprop, ws, &exec);
    if (st == ACLNN_SUCCESS) aclDestroyAclOpExecutor(exec);
    return st;
  }

 private:
  void Destroy() {
    for (aclTensor** t : {&features, &labels, &loss, &backprop}) {
      if (*t) aclDestroyTensor(*t);
      *t = nullptr;
    }
  }
};

}  // namespace bench
