#include "runtime/tensor.h"

#include <memory>
#include <string>

#include "runtime/error.h"

namespace aclnn_portable {

size_t ElementSize(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    default: return 0;
  }
}

int64_t NumElements(const aclTensor& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;  // cannot overflow: checked at creation
  return n;
}

bool IsContiguous(const aclTensor& t) {
  if (NumElements(t) == 0) return true;  // touches nothing; also keeps `expected` from overflowing
  int64_t expected = 1;
  for (size_t i = t.dims.size(); i-- > 0;) {
    if (t.dims[i] == 1) continue;  // the stride of a size-1 dim is never used
    if (t.strides[i] != expected) return false;
    expected *= t.dims[i];
  }
  return true;
}

ViewDesc DescribeView(const aclTensor& t) {
  ViewDesc v;
  v.dtype = t.dtype;
  v.rank = t.dims.size();
  for (size_t i = 0; i < v.rank; ++i) {
    v.dims[i] = t.dims[i];
    v.strides[i] = t.strides[i];
  }
  v.offset = t.offset;
  v.numel = NumElements(t);
  return v;
}

ByteSpan ViewSpan(const ViewDesc& v, const void* base) {
  if (v.numel == 0) return {};
  int64_t last = v.offset;
  for (size_t i = 0; i < v.rank; ++i) last += (v.dims[i] - 1) * v.strides[i];
  const size_t es = ElementSize(v.dtype);
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  return {b + static_cast<uintptr_t>(v.offset) * es, b + static_cast<uintptr_t>(last + 1) * es};
}

ByteSpan ViewSpan(const aclTensor& t, const void* base) { return ViewSpan(DescribeView(t), base); }

bool SameView(const ViewDesc& a, const void* a_base, const ViewDesc& b, const void* b_base) {
  if (a_base != b_base || a.offset != b.offset || a.dtype != b.dtype || a.rank != b.rank) return false;
  for (size_t i = 0; i < a.rank; ++i)
    if (a.dims[i] != b.dims[i] || a.strides[i] != b.strides[i]) return false;
  return true;
}

bool SameView(const aclTensor& a, const void* a_base, const aclTensor& b, const void* b_base) {
  return SameView(DescribeView(a), a_base, DescribeView(b), b_base);
}

HandleRegistry<aclTensor>& LiveTensors() {
  static auto* registry = new HandleRegistry<aclTensor>();  // outlives static destructors
  return *registry;
}

namespace {

// a * b into *out, false on int64 overflow (both non-negative).
bool MulNonNeg(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool AddNonNeg(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

constexpr const char* kApi = "aclCreateTensor";

bool IsDeclaredDataType(int v) {
  switch (v) {
    case ACL_DT_UNDEFINED: case ACL_FLOAT: case ACL_FLOAT16: case ACL_INT8: case ACL_INT32:
    case ACL_UINT8: case ACL_INT16: case ACL_UINT16: case ACL_UINT32: case ACL_INT64:
    case ACL_UINT64: case ACL_DOUBLE: case ACL_BOOL: case ACL_STRING: case ACL_COMPLEX64:
    case ACL_COMPLEX128: case ACL_BF16:
      return true;
    default:
      return false;
  }
}

bool IsDeclaredFormat(int v) {
  switch (v) {
    case ACL_FORMAT_UNDEFINED: case ACL_FORMAT_NCHW: case ACL_FORMAT_NHWC: case ACL_FORMAT_ND:
    case ACL_FORMAT_NC1HWC0: case ACL_FORMAT_FRACTAL_Z: case ACL_FORMAT_HWCN:
    case ACL_FORMAT_NDHWC: case ACL_FORMAT_FRACTAL_NZ: case ACL_FORMAT_NCDHW:
      return true;
    default:
      return false;
  }
}

}  // namespace
}  // namespace aclnn_portable

using namespace aclnn_portable;

extern "C" aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum,
                                      aclDataType dataType, const int64_t* stride, int64_t offset,
                                      aclFormat format, const int64_t* storageDims,
                                      uint64_t storageDimsNum, void* tensorData) {
  ClearRecentError();
  auto fail = [](const std::string& msg) -> aclTensor* {
    Fail(0, kApi, msg);
    return nullptr;
  };
  if (viewDimsNum > kMaxTensorRank)
    return fail(StrFormat("viewDimsNum must be at most %zu, got %llu", kMaxTensorRank,
                          static_cast<unsigned long long>(viewDimsNum)));
  if (storageDimsNum > kMaxTensorRank)
    return fail(StrFormat("storageDimsNum must be at most %zu, got %llu", kMaxTensorRank,
                          static_cast<unsigned long long>(storageDimsNum)));
  if (viewDimsNum > 0 && viewDims == nullptr)
    return fail("viewDims is null but viewDimsNum is " + std::to_string(viewDimsNum));
  if (storageDimsNum > 0 && storageDims == nullptr)
    return fail("storageDims is null but storageDimsNum is " + std::to_string(storageDimsNum));
  // Enum arguments are checked as the ints a C caller may pass (see RawEnumValue).
  const int raw_dtype = RawEnumValue(dataType);
  const size_t es = IsDeclaredDataType(raw_dtype) ? ElementSize(dataType) : 0;
  if (es == 0) return fail(StrFormat("dataType must be a numeric aclDataType, got %d", raw_dtype));
  if (!IsDeclaredFormat(RawEnumValue(format)))
    return fail(StrFormat("format must be an aclFormat declared in acl/acl.h, got %d", RawEnumValue(format)));
  if (offset < 0) return fail(StrFormat("offset must be >= 0, got %lld", static_cast<long long>(offset)));

  auto t = std::make_unique<aclTensor>();
  t->dtype = dataType;
  t->format = format;
  t->offset = offset;
  t->data = tensorData;
  t->dims.assign(viewDims, viewDims + viewDimsNum);
  t->storage_dims.assign(storageDims, storageDims + storageDimsNum);

  int64_t numel = 1;
  for (uint64_t i = 0; i < viewDimsNum; ++i) {
    if (viewDims[i] < 0)
      return fail(StrFormat("viewDims[%llu] must be >= 0, got %lld in %s",
                            static_cast<unsigned long long>(i), static_cast<long long>(viewDims[i]),
                            ShapeToString(t->dims).c_str()));
    if (!MulNonNeg(numel, viewDims[i], &numel))
      return fail("the element count of viewDims " + ShapeToString(t->dims) + " overflows int64");
  }
  if (stride != nullptr) {
    t->strides.assign(stride, stride + viewDimsNum);
  } else {  // no strides: row-major contiguous
    t->strides.assign(viewDimsNum, 1);
    // The product can only overflow for an empty view (a non-empty one's strides are bounded
    // by its element count), whose strides are never used: saturate instead of overflowing.
    for (size_t i = viewDimsNum; i-- > 1;)
      if (!MulNonNeg(t->strides[i], t->dims[i], &t->strides[i - 1])) t->strides[i - 1] = INT64_MAX;
  }
  for (uint64_t i = 0; i < viewDimsNum; ++i) {
    if (t->strides[i] < 0)
      return fail(StrFormat("stride[%llu] must be >= 0, got %lld",
                            static_cast<unsigned long long>(i), static_cast<long long>(t->strides[i])));
  }
  int64_t storage_numel = 1;
  for (uint64_t i = 0; i < storageDimsNum; ++i) {
    if (storageDims[i] < 0)
      return fail(StrFormat("storageDims[%llu] must be >= 0, got %lld",
                            static_cast<unsigned long long>(i), static_cast<long long>(storageDims[i])));
    if (!MulNonNeg(storage_numel, storageDims[i], &storage_numel))
      return fail("the element count of storageDims " + ShapeToString(t->storage_dims) +
                  " overflows int64");
  }
  int64_t storage_bytes = 0;
  if (!MulNonNeg(storage_numel, static_cast<int64_t>(es), &storage_bytes))
    return fail("the byte size of storageDims " + ShapeToString(t->storage_dims) + " overflows int64");
  t->storage_numel = storage_numel;

  if (numel > 0) {  // the last element the view can touch must lie inside the storage
    int64_t last = offset;
    for (uint64_t i = 0; i < viewDimsNum; ++i) {
      int64_t step = 0;
      if (!MulNonNeg(viewDims[i] - 1, t->strides[i], &step) || !AddNonNeg(last, step, &last))
        return fail("the view's largest element offset overflows int64");
    }
    if (last >= storage_numel)
      return fail(StrFormat("the view (shape %s, strides %s, offset %lld) reaches element %lld but "
                            "the storage %s holds %lld elements",
                            ShapeToString(t->dims).c_str(), ShapeToString(t->strides).c_str(),
                            static_cast<long long>(offset), static_cast<long long>(last),
                            ShapeToString(t->storage_dims).c_str(),
                            static_cast<long long>(storage_numel)));
  }
  aclTensor* raw = t.release();
  LiveTensors().Add(raw);
  return raw;
}

extern "C" aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  ClearRecentError();
  if (tensor == nullptr) return ACLNN_SUCCESS;  // like free(NULL)
  if (!LiveTensors().Remove(tensor))
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclDestroyTensor",
                "tensor is not a live aclTensor (already destroyed, or released by aclFinalize)");
  delete tensor;
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclGetViewShape(const aclTensor* tensor, int64_t** viewDims,
                                       uint64_t* viewDimsNum) {
  ClearRecentError();
  if (tensor == nullptr || viewDims == nullptr || viewDimsNum == nullptr)
    return Fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetViewShape", "tensor, viewDims and viewDimsNum must not be null");
  if (!LiveTensors().Contains(tensor))
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclGetViewShape", "tensor is not a live aclTensor");
  *viewDims = const_cast<int64_t*>(tensor->dims.data());
  *viewDimsNum = tensor->dims.size();
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclGetDataType(const aclTensor* tensor, aclDataType* dataType) {
  ClearRecentError();
  if (tensor == nullptr || dataType == nullptr)
    return Fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetDataType", "tensor and dataType must not be null");
  if (!LiveTensors().Contains(tensor))
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclGetDataType", "tensor is not a live aclTensor");
  *dataType = tensor->dtype;
  return ACLNN_SUCCESS;
}

extern "C" aclnnStatus aclGetFormat(const aclTensor* tensor, aclFormat* format) {
  ClearRecentError();
  if (tensor == nullptr || format == nullptr)
    return Fail(ACLNN_ERR_PARAM_NULLPTR, "aclGetFormat", "tensor and format must not be null");
  if (!LiveTensors().Contains(tensor))
    return Fail(ACLNN_ERR_PARAM_INVALID, "aclGetFormat", "tensor is not a live aclTensor");
  *format = tensor->format;
  return ACLNN_SUCCESS;
}
