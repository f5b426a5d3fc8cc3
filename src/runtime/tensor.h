// aclTensor: a strided view into storage (CANN's acl_meta semantics), plus the helpers the
// operators' API layers use to reason about views (size, contiguity, memory span, overlap).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "acl/acl.h"
#include "runtime/handles.h"

struct aclTensor {
  aclDataType dtype = ACL_DT_UNDEFINED;
  aclFormat format = ACL_FORMAT_ND;
  std::vector<int64_t> dims;          // view shape
  std::vector<int64_t> strides;       // in elements, >= 0
  int64_t offset = 0;                 // in elements, into storage
  std::vector<int64_t> storage_dims;  // as given
  int64_t storage_numel = 0;          // product of storage_dims
  void* data = nullptr;               // storage base (may be set later through an executor)
};

namespace aclnn_portable {

constexpr size_t kMaxTensorRank = 8;

// Bytes per element of a dtype the runtime can hold; 0 for ACL_STRING and unknown values.
size_t ElementSize(aclDataType dtype);

int64_t NumElements(const aclTensor& t);

// Row-major dense: the view's elements are exactly [offset, offset + numel) of storage in order.
bool IsContiguous(const aclTensor& t);

// Half-open byte range [begin, end) of storage that the view can touch when its storage starts
// at `base`; begin == end for an empty view.
struct ByteSpan {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  bool empty() const { return begin == end; }
};
ByteSpan ViewSpan(const aclTensor& t, const void* base);
inline bool Overlap(ByteSpan a, ByteSpan b) {
  return !a.empty() && !b.empty() && a.begin < b.end && b.begin < a.end;
}
// Same storage address, offset, dtype, shape and strides: one view seen twice.
bool SameView(const aclTensor& a, const void* a_base, const aclTensor& b, const void* b_base);

// What a plan keeps of a view (dtype, shape, strides, offset; not the storage), held inline:
// copying it allocates nothing, where an aclTensor's vectors cost two allocations per view on
// every GetWorkspaceSize. rank <= kMaxTensorRank (aclCreateTensor's limit).
struct ViewDesc {
  aclDataType dtype = ACL_DT_UNDEFINED;
  size_t rank = 0;
  int64_t dims[kMaxTensorRank] = {};
  int64_t strides[kMaxTensorRank] = {};
  int64_t offset = 0;
  int64_t numel = 0;  // NumElements of the view
};
ViewDesc DescribeView(const aclTensor& t);
// As for aclTensor, on a ViewDesc.
ByteSpan ViewSpan(const ViewDesc& v, const void* base);
bool SameView(const ViewDesc& a, const void* a_base, const ViewDesc& b, const void* b_base);

HandleRegistry<aclTensor>& LiveTensors();

}  // namespace aclnn_portable
