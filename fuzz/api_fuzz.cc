// libFuzzer harness for the public C API (docs/RELIABILITY.md). Each input is decoded into a
// short program of calls:
//   * aclCreateTensor with arbitrary shapes, strides, offsets, storage sizes, dtypes, formats and
//     null pointers, compared with an independent 128-bit oracle of what must be accepted;
//   * the SoftmaxCrossEntropyWithLogits two-stage call on real, guarded storage: valid calls in
//     ND/NCHW and fp32/fp16/bf16 with any strides, offsets, gaps and in-place backprop, or calls
//     broken in one way (null, dtype, format, shape, rank, overlap, workspace, stream), with
//     random workspace sizes, null/created/bogus streams, repeatable executors re-run and rebound
//     with aclSet{Input,Output}TensorAddr;
//   * the mHC entry points with arbitrary sizes (valid ones on real buffers; negative, zero,
//     overflowing or null ones that must be refused);
//   * aclrtMalloc/Memcpy/Memset with arbitrary sizes and bounds, streams created/destroyed.
// Every buffer has 64-byte guard zones. Asserted (abort -> libFuzzer crash report): no byte
// written outside an output's view (gaps of strided views included) or into any input; failing
// calls write nothing and leave a non-empty aclGetRecentErrMsg; valid calls succeed and match
// an fp64 reference (mhc_post bit-exact). Allocations are capped at kByteBudget per input.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "mhc/mhc.h"
#include "numeric/half.h"

namespace {

constexpr size_t kByteBudget = 16u << 20;  // per input, all buffers together
constexpr size_t kGuard = 64;
constexpr uint8_t kGuardByte = 0xa5;

[[noreturn]] void Violation(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "\n*** contract violation: %s %s\n    aclGetRecentErrMsg: \"%s\"\n", what,
               detail.c_str(), aclGetRecentErrMsg());
  std::abort();
}
#define CHECK(cond, ...) \
  do {                   \
    if (!(cond)) Violation(#cond, ##__VA_ARGS__); \
  } while (0)

bool HasMessage() { return aclGetRecentErrMsg() != nullptr && aclGetRecentErrMsg()[0] != '\0'; }

// ---- guarded buffers ---------------------------------------------------------------------

size_t g_bytes_used = 0;

// `size` usable bytes, 64-byte aligned, between two guard zones. The usable bytes start as a
// fuzz-chosen fill; Snapshot() records them so Unchanged*() can prove what was (not) written.
class Buffer {
 public:
  explicit Buffer(size_t size, uint8_t fill) : size_(size) {
    raw_ = static_cast<uint8_t*>(std::aligned_alloc(64, (size + 2 * kGuard + 63) / 64 * 64));
    std::memset(raw_, kGuardByte, kGuard);
    std::memset(raw_ + kGuard, fill, size);
    std::memset(raw_ + kGuard + size, kGuardByte, kGuard);
    g_bytes_used += size + 2 * kGuard;
  }
  ~Buffer() {
    CheckGuards();
    g_bytes_used -= size_ + 2 * kGuard;
    std::free(raw_);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  uint8_t* data() { return raw_ + kGuard; }
  size_t size() const { return size_; }
  void Snapshot() { before_.assign(raw_ + kGuard, raw_ + kGuard + size_); }
  const std::vector<uint8_t>& before() const { return before_; }
  void CheckGuards() const {
    for (size_t i = 0; i < kGuard; ++i) {
      if (raw_[i] != kGuardByte) Violation("write before a buffer", std::to_string(i));
      if (raw_[kGuard + size_ + i] != kGuardByte) Violation("write after a buffer", std::to_string(i));
    }
  }
  bool Unchanged() const {
    if (before_.size() != size_) Violation("harness: buffer compared without a snapshot");
    return size_ == 0 || std::memcmp(before_.data(), raw_ + kGuard, size_) == 0;
  }
  // Every byte outside `allowed` (a mask of size() bytes) still holds its snapshot.
  bool UnchangedOutside(const std::vector<bool>& allowed) const {
    if (before_.size() != size_) Violation("harness: buffer compared without a snapshot");
    for (size_t i = 0; i < size_; ++i)
      if (!allowed[i] && raw_[kGuard + i] != before_[i]) return false;
    return true;
  }

 private:
  size_t size_;
  uint8_t* raw_;
  std::vector<uint8_t> before_;
};

bool Affordable(size_t bytes) { return bytes <= kByteBudget && g_bytes_used + bytes <= kByteBudget; }

// ---- dtypes ------------------------------------------------------------------------------

size_t DtypeSize(int d) {  // int: the harness also passes values outside the enum
  switch (d) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    default: return 0;
  }
}

bool IsFloat(aclDataType d) { return d == ACL_FLOAT || d == ACL_FLOAT16 || d == ACL_BF16; }

float LoadFloat(const uint8_t* p, aclDataType d) {
  if (d == ACL_FLOAT) { float f; std::memcpy(&f, p, 4); return f; }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return d == ACL_FLOAT16 ? aclnn_portable::HalfToFloat(h) : aclnn_portable::Bf16ToFloat(h);
}
void StoreFloat(uint8_t* p, aclDataType d, float f) {
  if (d == ACL_FLOAT) { std::memcpy(p, &f, 4); return; }
  const uint16_t h = d == ACL_FLOAT16 ? aclnn_portable::FloatToHalf(f) : aclnn_portable::FloatToBf16(f);
  std::memcpy(p, &h, 2);
}
// Relative precision of one rounding to the dtype, plus room for fp32 accumulation.
double Eps(aclDataType d) {
  return (d == ACL_FLOAT16 ? std::ldexp(1.0, -10) : d == ACL_BF16 ? std::ldexp(1.0, -7) : 0.0) +
         std::ldexp(1.0, -17);
}
double AbsFloor(aclDataType d) { return d == ACL_FLOAT16 ? std::ldexp(1.0, -23) : 1e-6; }

// ---- 1. aclCreateTensor against an independent oracle --------------------------------------

// What aclCreateTensor must accept: acl.h + DESIGN §4, recomputed in 128 bits.
bool DeclaredFormat(int f) { return (f >= -1 && f <= 4) || f == 16 || f == 27 || f == 29 || f == 30; }

bool TensorMustBeAccepted(const std::vector<int64_t>& dims, const int64_t* strides, int64_t offset,
                          const std::vector<int64_t>& storage, int dtype, int format) {
  if (dims.size() > 8 || storage.size() > 8 || DtypeSize(dtype) == 0 || offset < 0) return false;
  if (!DeclaredFormat(format)) return false;
  __int128 numel = 1, storage_numel = 1;
  const __int128 kMax = INT64_MAX;
  for (int64_t d : dims) {
    if (d < 0) return false;
    numel *= d;
    if (numel > kMax) return false;
  }
  std::vector<__int128> st(dims.size());
  if (strides) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (strides[i] < 0) return false;
      st[i] = strides[i];
    }
  } else {
    __int128 s = 1;
    for (size_t i = dims.size(); i-- > 0;) { st[i] = s; s = std::min<__int128>(s * std::max<int64_t>(dims[i], 1), kMax); }
  }
  for (int64_t d : storage) {
    if (d < 0) return false;
    storage_numel *= d;
    if (storage_numel > kMax) return false;
  }
  if (storage_numel * static_cast<__int128>(DtypeSize(dtype)) > kMax) return false;
  if (numel == 0) return true;
  __int128 last = offset;
  for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * st[i];
  return last <= kMax && last < storage_numel;
}

int64_t ArbitraryInt64(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: return fdp.ConsumeIntegral<int64_t>();
    case 1: return -fdp.ConsumeIntegralInRange<int64_t>(1, 4);
    case 2: return INT64_MAX - fdp.ConsumeIntegralInRange<int64_t>(0, 3);
    case 3: return (int64_t{1} << fdp.ConsumeIntegralInRange<int>(20, 62)) + fdp.ConsumeIntegralInRange<int>(-1, 1);
    default: return fdp.ConsumeIntegralInRange<int64_t>(0, 40);
  }
}

int ArbitraryDtype(FuzzedDataProvider& fdp) {
  static const int kAll[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT8, ACL_INT32, ACL_DOUBLE,
                             ACL_BOOL, ACL_STRING, ACL_COMPLEX128, ACL_DT_UNDEFINED, 5, 99, -1000};
  return fdp.PickValueInArray(kAll);
}

void FuzzCreateTensor(FuzzedDataProvider& fdp) {
  const size_t rank = fdp.ConsumeIntegralInRange<size_t>(0, 9);
  const size_t srank = fdp.ConsumeIntegralInRange<size_t>(0, 9);
  std::vector<int64_t> dims(rank), strides(rank), storage(srank);
  for (auto& d : dims) d = ArbitraryInt64(fdp);
  for (auto& s : strides) s = ArbitraryInt64(fdp);
  for (auto& s : storage) s = ArbitraryInt64(fdp);
  const bool null_strides = fdp.ConsumeBool();
  const bool null_dims = rank > 0 && fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
  const bool null_storage = srank > 0 && fdp.ConsumeIntegralInRange<int>(0, 15) == 0;
  const int64_t offset = ArbitraryInt64(fdp);
  const int dtype = ArbitraryDtype(fdp);
  const int format = fdp.ConsumeIntegralInRange<int>(-40, 40);
  int sentinel = 0;  // the data pointer is never dereferenced at creation
  aclTensor* t = aclCreateTensor(null_dims ? nullptr : dims.data(), rank, static_cast<aclDataType>(dtype),
                                 null_strides ? nullptr : strides.data(), offset, static_cast<aclFormat>(format),
                                 null_storage ? nullptr : storage.data(), srank,
                                 fdp.ConsumeBool() ? &sentinel : nullptr);
  const bool expect = !null_dims && !null_storage &&
                      TensorMustBeAccepted(dims, null_strides ? nullptr : strides.data(), offset, storage, dtype, format);
  if (expect != (t != nullptr))
    Violation(expect ? "aclCreateTensor refused a valid view" : "aclCreateTensor accepted an invalid view");
  if (t == nullptr) {
    CHECK(HasMessage());
    return;
  }
  int64_t* got = nullptr;
  uint64_t got_n = 0;
  CHECK(aclGetViewShape(t, &got, &got_n) == ACLNN_SUCCESS && got_n == rank);
  for (size_t i = 0; i < rank; ++i) CHECK(got[i] == dims[i]);
  aclDataType got_dtype;
  CHECK(aclGetDataType(t, &got_dtype) == ACLNN_SUCCESS && static_cast<int>(got_dtype) == dtype);
  CHECK(aclDestroyTensor(t) == ACLNN_SUCCESS);
  CHECK(aclDestroyTensor(t) != ACLNN_SUCCESS && HasMessage());  // a dead handle is refused
}

// ---- views on real storage ---------------------------------------------------------------

struct View {
  std::vector<int64_t> dims, strides;
  int64_t offset = 0;
  int64_t storage_numel = 0;
  bool pass_null_strides = false;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  // fn(logical row-major index, storage element offset) for every element of the view.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    const int64_t n = numel();
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t off = offset;
      for (size_t k = 0; k < dims.size(); ++k) off += idx[k] * strides[k];
      fn(i, off);
      for (size_t k = dims.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) break;
        idx[k] = 0;
      }
    }
  }
};

// A layout for `dims`: contiguous (null or explicit strides), or a permuted order with padding
// (gaps), zero strides when `allow_broadcast`, an offset and some slack in the storage.
View MakeView(FuzzedDataProvider& fdp, const std::vector<int64_t>& dims, bool allow_broadcast) {
  View v;
  v.dims = dims;
  v.strides.assign(dims.size(), 0);
  // 0: contiguous, null strides; 1: contiguous, explicit; 2: a transpose; 3: a transpose with
  // gaps between elements and between dims; 4: as 3 with some zero (broadcast) strides.
  const int mode = fdp.ConsumeIntegralInRange<int>(0, allow_broadcast ? 4 : 3);
  std::vector<size_t> order(dims.size());  // order[0] = innermost dim in memory
  for (size_t i = 0; i < order.size(); ++i) order[i] = dims.size() - 1 - i;
  if (mode >= 2)
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[fdp.ConsumeIntegralInRange<size_t>(0, i - 1)]);
  // Each stride is at least the extent of the dims inside it, so distinct elements never alias.
  int64_t stride = mode >= 3 ? 1 + fdp.ConsumeIntegralInRange<int64_t>(0, 2) : 1;
  for (size_t k : order) {
    v.strides[k] = (mode == 4 && fdp.ConsumeBool()) ? 0 : stride;
    stride = stride * std::max<int64_t>(dims[k], 1) + (mode >= 3 ? fdp.ConsumeIntegralInRange<int64_t>(0, 2) : 0);
  }
  v.pass_null_strides = mode == 0;
  v.offset = fdp.ConsumeIntegralInRange<int64_t>(0, mode == 0 ? 0 : 5);
  int64_t last = v.offset;
  for (size_t i = 0; i < dims.size(); ++i) last += std::max<int64_t>(dims[i] - 1, 0) * v.strides[i];
  v.storage_numel = (v.numel() > 0 ? last + 1 : v.offset) + fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  return v;
}

// A tensor over a guarded buffer holding its whole storage.
struct Tensor {
  View view;
  aclDataType dtype = ACL_FLOAT;
  aclFormat format = ACL_FORMAT_ND;
  std::unique_ptr<Buffer> buf;  // null when it shares another tensor's buffer
  Buffer* storage = nullptr;
  aclTensor* handle = nullptr;

  size_t bytes() const { return static_cast<size_t>(view.storage_numel) * DtypeSize(dtype); }
  ~Tensor() {
    if (handle) CHECK(aclDestroyTensor(handle) == ACLNN_SUCCESS);
  }
  // Creates the handle over `storage`; false when the view does not fit (never for our views).
  void Create() {
    const int64_t sdims[1] = {view.storage_numel};
    handle = aclCreateTensor(view.dims.data(), view.dims.size(), dtype,
                             view.pass_null_strides ? nullptr : view.strides.data(), view.offset,
                             format, sdims, 1, storage->data());
    if (handle == nullptr) Violation("aclCreateTensor refused a valid view (harness layout)");
  }
  // Marks the bytes of every element of the view in `mask` (sized to the storage buffer).
  void MarkView(std::vector<bool>& mask) const {
    const size_t es = DtypeSize(dtype);
    view.ForEach([&](int64_t, int64_t off) {
      for (size_t b = 0; b < es; ++b) mask[static_cast<size_t>(off) * es + b] = true;
    });
  }
  float Get(int64_t storage_off) const { return LoadFloat(storage->data() + storage_off * DtypeSize(dtype), dtype); }
};

// ---- 2. SoftmaxCrossEntropyWithLogits -----------------------------------------------------

// Ways to break a call; kNone is a valid call that must succeed.
enum class SceBreak {
  kNone, kNullArg, kBadDtype, kDtypeMismatch, kBadFormat, kFormatMismatch, kLabelsShape, kRank,
  kLossShape, kBackpropShape, kOverlap, kSmallWorkspace, kNullWorkspace, kBadStream, kCount
};

aclrtStream g_streams[2] = {nullptr, nullptr};  // created by the harness, destroyed per input

aclrtStream PickStream(FuzzedDataProvider& fdp) {
  const int k = fdp.ConsumeIntegralInRange<int>(0, 2);
  if (k == 0) return nullptr;
  aclrtStream& s = g_streams[k - 1];
  if (s == nullptr) CHECK(aclrtCreateStream(&s) == ACL_SUCCESS);
  return s;
}

void SyncAll() {
  for (aclrtStream s : g_streams)
    if (s) CHECK(aclrtSynchronizeStream(s) == ACL_SUCCESS);
}

// fp64 reference of one SCE call (DESIGN §5) on the values stored in the inputs, checked
// against the outputs; rows are [A, R] folds of the ND / NCHW views.
void CheckSceValues(const Tensor& f, const Tensor& l, const Tensor& loss, const Tensor& bp,
                    const std::vector<double>& feat_vals, const std::vector<double>& lab_vals, bool nchw) {
  const int64_t n = f.view.dims[0], c = f.view.dims[1];
  const int64_t hw = nchw ? f.view.dims[2] * f.view.dims[3] : 1;
  std::vector<int64_t> loss_off, bp_off;
  loss.view.ForEach([&](int64_t, int64_t off) { loss_off.push_back(off); });
  bp.view.ForEach([&](int64_t, int64_t off) { bp_off.push_back(off); });
  const double eps = Eps(f.dtype), floor = AbsFloor(f.dtype);
  for (int64_t a = 0; a < n * hw; ++a) {
    const int64_t row = a / hw, pos = a % hw;
    auto at = [&](int64_t r) { return (row * c + r) * hw + pos; };  // logical index in features
    double m = -INFINITY;
    for (int64_t r = 0; r < c; ++r) m = std::max(m, feat_vals[at(r)]);
    double s = 0, mag = 0;
    for (int64_t r = 0; r < c; ++r) s += std::exp(feat_vals[at(r)] - m);
    double ref_loss = 0;
    for (int64_t r = 0; r < c; ++r) {
      const double z = feat_vals[at(r)] - m, y = lab_vals[at(r)];
      ref_loss += y * (std::log(s) - z);
      mag += std::fabs(y) * (std::fabs(std::log(s)) + std::fabs(z));
      const double p = std::exp(z) / s, ref_bp = p - y;
      const double got = bp.Get(bp_off[at(r)]);
      if (!(std::fabs(got - ref_bp) <= eps * (std::fabs(p) + std::fabs(y) + 1e-3) * 4 + floor))
        Violation("SCE backprop differs from the fp64 reference",
                  "row " + std::to_string(a) + " class " + std::to_string(r) + ": got " +
                      std::to_string(got) + " want " + std::to_string(ref_bp));
    }
    const double got = loss.Get(loss_off[a]);
    if (c == 0) CHECK(got == 0.0, "C = 0 must give loss 0");
    if (!(std::fabs(got - ref_loss) <= eps * (mag + std::fabs(ref_loss)) * 4 + floor))
      Violation("SCE loss differs from the fp64 reference",
                "row " + std::to_string(a) + ": got " + std::to_string(got) + " want " + std::to_string(ref_loss));
  }
}

void FuzzSce(FuzzedDataProvider& fdp) {
  const auto brk = static_cast<SceBreak>(
      fdp.ConsumeBool() ? 0 : fdp.ConsumeIntegralInRange<int>(0, static_cast<int>(SceBreak::kCount) - 1));
  static const aclDataType kTypes[] = {ACL_FLOAT, ACL_FLOAT16, ACL_BF16};
  aclDataType dtype = fdp.PickValueInArray(kTypes);
  const bool nchw = fdp.ConsumeBool();
  const int64_t n = fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  const int64_t c = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? fdp.ConsumeIntegralInRange<int64_t>(0, 1100)
                                                                : fdp.ConsumeIntegralInRange<int64_t>(0, 34);
  const int64_t h = nchw ? fdp.ConsumeIntegralInRange<int64_t>(0, 5) : 1;
  const int64_t w = nchw ? fdp.ConsumeIntegralInRange<int64_t>(0, 5) : 1;
  std::vector<int64_t> fdims = nchw ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, c};
  std::vector<int64_t> ldims = fdims, bdims = fdims;
  std::vector<int64_t> lossdims = nchw ? std::vector<int64_t>{n, h, w} : std::vector<int64_t>{n};
  const int64_t bump = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  switch (brk) {
    case SceBreak::kLabelsShape: {  // never to 1: a labels dim of 1 may broadcast (issue 7)
      int64_t& dim = ldims[fdp.ConsumeIntegralInRange<size_t>(0, ldims.size() - 1)];
      dim += dim + bump == 1 ? bump + 1 : bump;
      break;
    }
    case SceBreak::kBackpropShape: bdims[fdp.ConsumeIntegralInRange<size_t>(0, bdims.size() - 1)] += bump; break;
    case SceBreak::kLossShape:
      if (fdp.ConsumeBool()) lossdims.push_back(1);
      else lossdims[fdp.ConsumeIntegralInRange<size_t>(0, lossdims.size() - 1)] += bump;
      break;
    case SceBreak::kRank:  // the same rank for features, labels and backprop, but the wrong one
      fdims.push_back(1);
      ldims = bdims = fdims;
      break;
    default: break;
  }

  // Four tensors, each over its own guarded buffer (in-place: backprop is features).
  const bool in_place = brk == SceBreak::kNone && fdp.ConsumeIntegralInRange<int>(0, 3) == 0;
  Tensor t[4];  // features, labels, loss, backprop
  const std::vector<int64_t>* shapes[4] = {&fdims, &ldims, &lossdims, &bdims};
  for (int i = 0; i < 4; ++i) {
    t[i].view = MakeView(fdp, *shapes[i], /*allow_broadcast=*/i == 1 || (i == 0 && !in_place));
    t[i].dtype = dtype;
  }
  if (in_place) t[3].view = t[0].view;
  const aclFormat fmt = nchw ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
  t[0].format = t[1].format = t[3].format = fmt;
  t[2].format = nchw && fdp.ConsumeBool() ? ACL_FORMAT_NHWC : ACL_FORMAT_ND;
  if (brk == SceBreak::kBadDtype) {
    static const aclDataType kBad[] = {ACL_INT32, ACL_DOUBLE, ACL_INT8, ACL_INT64, ACL_UINT8};
    for (auto& x : t) x.dtype = fdp.PickValueInArray(kBad);
  }
  if (brk == SceBreak::kDtypeMismatch) {
    const int which = fdp.ConsumeIntegralInRange<int>(1, 3);
    t[which].dtype = dtype == ACL_FLOAT ? ACL_FLOAT16 : ACL_FLOAT;
  }
  if (brk == SceBreak::kBadFormat) t[0].format = t[1].format = fdp.ConsumeBool() ? ACL_FORMAT_NHWC : ACL_FORMAT_NC1HWC0;
  if (brk == SceBreak::kFormatMismatch) t[1].format = nchw ? ACL_FORMAT_ND : ACL_FORMAT_NCHW;

  size_t total = 0;
  for (auto& x : t) total += x.bytes() + 2 * kGuard;
  if (!Affordable(total + (1u << 20))) return;

  const uint8_t out_fill = fdp.ConsumeIntegral<uint8_t>();
  const bool raw_values = fdp.ConsumeIntegralInRange<int>(0, 15) == 0;  // any bits: NaN, inf...
  for (int i = 0; i < 4; ++i) {
    if (i == 3 && in_place) {
      t[3].storage = t[0].storage;
      continue;
    }
    t[i].buf = std::make_unique<Buffer>(t[i].bytes(), out_fill);
    t[i].storage = t[i].buf.get();
  }
  // Input values: features k/8 in [-16, 16], labels k/256 in [0, 1) — exact in every dtype.
  std::vector<double> vals[2];
  for (int i = 0; i < 2; ++i) {
    vals[i].assign(static_cast<size_t>(std::max<int64_t>(t[i].view.numel(), 0)), 0.0);
    const size_t es = DtypeSize(t[i].dtype);
    Buffer& b = *t[i].storage;
    if (raw_values) {
      const std::vector<uint8_t> bytes = fdp.ConsumeBytes<uint8_t>(b.size());
      if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
    }
    if (!raw_values && IsFloat(t[i].dtype))
      t[i].view.ForEach([&](int64_t, int64_t off) {
        const float v = i == 0 ? static_cast<float>(static_cast<int8_t>(fdp.ConsumeIntegral<uint8_t>())) / 8.0f
                               : static_cast<float>(fdp.ConsumeIntegral<uint8_t>()) / 256.0f;
        StoreFloat(b.data() + off * es, t[i].dtype, v);
      });
  }
  // Read back after all writes: zero-stride (broadcast) views alias elements.
  for (int i = 0; i < 2; ++i)
    if (IsFloat(t[i].dtype)) t[i].view.ForEach([&](int64_t li, int64_t off) { vals[i][li] = t[i].Get(off); });
  if (brk == SceBreak::kOverlap) {
    // An output laid contiguously from element 0 over another tensor's storage, whose first
    // element it then covers: a real overlap that is not the exact in-place alias.
    const int out = fdp.ConsumeBool() ? 3 : 2;
    const int other = (out + 1 + fdp.ConsumeIntegralInRange<int>(0, 2)) % 4;
    View& ov = t[out].view;
    const View& tv = t[other].view;
    const int64_t n_out = ov.numel();
    if (n_out == 0 || tv.numel() == 0 || tv.offset >= n_out || n_out > tv.storage_numel) return;
    int64_t stride = 1;
    for (size_t k = ov.dims.size(); k-- > 0;) { ov.strides[k] = stride; stride *= ov.dims[k]; }
    ov.offset = 0;
    ov.pass_null_strides = false;
    ov.storage_numel = tv.storage_numel;
    if (ov.dims == tv.dims && ov.strides == tv.strides && tv.offset == 0) return;  // that is in-place
    t[out].buf.reset();
    t[out].storage = t[other].storage;
  }
  for (auto& x : t) x.Create();
  if (in_place && fdp.ConsumeBool()) {  // in-place through the very same handle
    CHECK(aclDestroyTensor(t[3].handle) == ACLNN_SUCCESS);
    t[3].handle = nullptr;
  }
  for (auto& x : t)
    if (x.buf) x.buf->Snapshot();
  if (std::getenv("ACLNN_FUZZ_VERBOSE")) {  // describe the call, for reproducing a report
    static const char* kNames[4] = {"features", "labels", "loss", "backprop"};
    std::fprintf(stderr, "SCE break %d dtype %d nchw %d in_place %d same_handle %d raw %d\n", static_cast<int>(brk),
                 static_cast<int>(dtype), nchw, in_place, t[3].handle == nullptr, raw_values);
    for (int i = 0; i < 4; ++i) {
      std::string d, st;
      for (size_t k = 0; k < t[i].view.dims.size(); ++k) {
        d += std::to_string(t[i].view.dims[k]) + " ";
        st += std::to_string(t[i].view.strides[k]) + " ";
      }
      std::fprintf(stderr, "  %-8s dims [%s] strides [%s] offset %lld storage %lld null_strides %d fmt %d dtype %d\n",
                   kNames[i], d.c_str(), st.c_str(), static_cast<long long>(t[i].view.offset),
                   static_cast<long long>(t[i].view.storage_numel), t[i].view.pass_null_strides,
                   static_cast<int>(t[i].format), static_cast<int>(t[i].dtype));
    }
  }
  auto handle = [&](int i) -> aclTensor* { return (i == 3 && t[3].handle == nullptr) ? t[0].handle : t[i].handle; };

  uint64_t ws_size = 0xdeadbeef;
  aclOpExecutor* exec = nullptr;
  const aclTensor* args[4] = {handle(0), handle(1), handle(2), handle(3)};
  int null_which = -1;
  if (brk == SceBreak::kNullArg) {
    null_which = fdp.ConsumeIntegralInRange<int>(0, 5);
    if (null_which < 4) args[null_which] = nullptr;
  }
  const aclnnStatus st1 = aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(
      args[0], args[1], const_cast<aclTensor*>(args[2]), const_cast<aclTensor*>(args[3]),
      null_which == 4 ? nullptr : &ws_size, null_which == 5 ? nullptr : &exec);
  const bool stage1_must_fail = brk != SceBreak::kNone && brk != SceBreak::kSmallWorkspace &&
                                brk != SceBreak::kNullWorkspace && brk != SceBreak::kBadStream;
  auto check_untouched = [&] {
    SyncAll();
    for (auto& x : t)
      if (x.buf) {
        x.buf->CheckGuards();
        if (!x.buf->Unchanged()) Violation("a failed SCE call wrote memory");
      }
  };
  if (stage1_must_fail) {
    if (st1 == ACLNN_SUCCESS) {
      aclDestroyAclOpExecutor(exec);
      Violation("SCE GetWorkspaceSize accepted a broken call", std::to_string(static_cast<int>(brk)));
    }
    CHECK(st1 == (brk == SceBreak::kNullArg ? ACLNN_ERR_PARAM_NULLPTR : ACLNN_ERR_PARAM_INVALID),
          std::to_string(st1) + " for break " + std::to_string(static_cast<int>(brk)));
    CHECK(HasMessage());
    check_untouched();
    return;
  }
  if (st1 != ACLNN_SUCCESS) Violation("SCE GetWorkspaceSize refused a valid call", std::to_string(st1));
  CHECK(exec != nullptr);

  // Stage 2, possibly several times on a repeatable executor, possibly rebound.
  const bool repeatable = fdp.ConsumeBool();
  if (repeatable) CHECK(aclSetAclOpExecutorRepeatable(exec) == ACLNN_SUCCESS);
  // In place, a second run would read the first one's gradient: run once.
  const int runs = repeatable && !in_place ? fdp.ConsumeIntegralInRange<int>(1, 3) : 1;
  std::unique_ptr<Buffer> ws;
  uint64_t given = ws_size;
  bool expect_fail = false;
  if (brk == SceBreak::kSmallWorkspace && ws_size > 0) {
    given = fdp.ConsumeIntegralInRange<uint64_t>(0, ws_size - 1);
    expect_fail = true;
  } else if (brk == SceBreak::kNone) {
    given = ws_size + fdp.ConsumeIntegralInRange<uint64_t>(0, 1) * fdp.ConsumeIntegralInRange<uint64_t>(0, 100);
  }
  if (!Affordable(given + 2 * kGuard)) {
    CHECK(aclDestroyAclOpExecutor(exec) == ACLNN_SUCCESS);
    return;
  }
  if (given > 0 && brk != SceBreak::kNullWorkspace) ws = std::make_unique<Buffer>(static_cast<size_t>(given), 0);
  if (brk == SceBreak::kNullWorkspace && ws_size > 0) expect_fail = true;
  int bogus_stream = 0;
  aclrtStream stream = PickStream(fdp);
  if (brk == SceBreak::kBadStream) {
    stream = &bogus_stream;
    expect_fail = true;
  }
  std::unique_ptr<Buffer> spoiled_labels;  // kept alive until the queued runs are done
  for (int run = 0; run < runs; ++run) {
    // Rebinding an output to a fresh copy of its buffer: the result must land there only.
    if (run > 0 && fdp.ConsumeBool() && !in_place) {
      const int which = fdp.ConsumeIntegralInRange<int>(2, 3);
      if (t[which].buf && Affordable(t[which].bytes() + 2 * kGuard)) {
        SyncAll();
        auto fresh = std::make_unique<Buffer>(t[which].bytes(), out_fill ^ 0x5a);
        fresh->Snapshot();
        std::vector<bool> mask(t[which].bytes(), false);
        t[which].MarkView(mask);
        t[which].buf->CheckGuards();
        if (!t[which].buf->UnchangedOutside(mask)) Violation("SCE wrote outside an output view (before rebind)");
        CHECK(aclSetOutputTensorAddr(exec, which - 2, t[which].handle, fresh->data()) == ACLNN_SUCCESS);
        t[which].buf = std::move(fresh);
        t[which].storage = t[which].buf.get();
      }
    }
    // Rebinding labels to a copy of their storage, then spoiling the old one: the run must read
    // the copy (the reference values are the same).
    if (run > 0 && !in_place && fdp.ConsumeBool() && t[1].buf && Affordable(t[1].bytes() + 2 * kGuard)) {
      SyncAll();
      auto copy = std::make_unique<Buffer>(t[1].bytes(), 0);
      if (t[1].bytes() > 0) std::memcpy(copy->data(), t[1].buf->data(), t[1].bytes());
      copy->Snapshot();
      t[1].buf->CheckGuards();
      if (!t[1].buf->Unchanged()) Violation("SCE wrote into labels (before rebind)");
      CHECK(aclSetInputTensorAddr(exec, 1, t[1].handle, copy->data()) == ACLNN_SUCCESS);
      if (t[1].bytes() > 0) std::memset(t[1].buf->data(), 0x7f, t[1].bytes());  // NaN-ish garbage
      spoiled_labels = std::move(t[1].buf);
      t[1].buf = std::move(copy);
      t[1].storage = t[1].buf.get();
    }
    const aclnnStatus st2 = aclnnSoftmaxCrossEntropyWithLogits(ws ? ws->data() : nullptr, given, exec, stream);
    if (expect_fail) {
      CHECK(st2 == ACLNN_ERR_PARAM_INVALID, std::to_string(st2));
      CHECK(HasMessage());
      check_untouched();
      CHECK(aclDestroyAclOpExecutor(exec) == ACLNN_SUCCESS);  // a failed launch keeps it alive
      return;
    }
    if (st2 != ACLNN_SUCCESS) Violation("SCE execute refused a valid call", std::to_string(st2));
  }
  if (repeatable) {
    CHECK(aclSetInputTensorAddr(exec, 2, nullptr, nullptr) == ACLNN_ERR_PARAM_INVALID && HasMessage());
    CHECK(aclSetOutputTensorAddr(exec, 2, nullptr, nullptr) == ACLNN_ERR_PARAM_INVALID && HasMessage());
    CHECK(aclDestroyAclOpExecutor(exec) == ACLNN_SUCCESS);
  } else {  // consumed by its run
    CHECK(aclnnSoftmaxCrossEntropyWithLogits(ws ? ws->data() : nullptr, given, exec, nullptr) != ACLNN_SUCCESS);
    CHECK(HasMessage());
  }
  SyncAll();
  // Outputs: nothing outside their views; inputs unchanged (but in-place features).
  for (int i = 0; i < 4; ++i) {
    if (!t[i].buf) continue;
    t[i].buf->CheckGuards();
    std::vector<bool> mask(t[i].bytes(), false);
    if (i >= 2) t[i].MarkView(mask);
    if (i == 0 && in_place) t[3].MarkView(mask);
    if (!t[i].buf->UnchangedOutside(mask))
      Violation(i >= 2 ? "SCE wrote outside an output view" : "SCE wrote into an input", std::to_string(i));
  }
  if (!raw_values) CheckSceValues(t[0], t[1], t[2], t[3], vals[0], vals[1], nchw);
}

// ---- 3. mHC ------------------------------------------------------------------------------

enum class MhcOp { kPost, kPre, kBackward };
enum class MhcType { kFp32, kFp16, kBf16 };

using PostFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, int64_t, int64_t, int64_t, int64_t);
using BwdFn = void (*)(uint32_t, void*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, uint8_t*, int64_t,
                       int64_t, int64_t, int64_t);

void FuzzMhc(FuzzedDataProvider& fdp) {
  const auto op = static_cast<MhcOp>(fdp.ConsumeIntegralInRange<int>(0, 2));
  const auto type = static_cast<MhcType>(fdp.ConsumeIntegralInRange<int>(0, 2));
  const aclDataType act = type == MhcType::kFp32 ? ACL_FLOAT : type == MhcType::kFp16 ? ACL_FLOAT16 : ACL_BF16;
  const aclDataType hdt = type == MhcType::kFp16 ? ACL_FLOAT16 : ACL_FLOAT;
  const size_t es = DtypeSize(act), hs = DtypeSize(hdt);
  int64_t b = fdp.ConsumeIntegralInRange<int64_t>(0, 4), s = fdp.ConsumeIntegralInRange<int64_t>(0, 6);
  int64_t d = fdp.ConsumeIntegralInRange<int>(0, 5) == 0 ? fdp.ConsumeIntegralInRange<int64_t>(0, 2100)
                                                          : fdp.ConsumeIntegralInRange<int64_t>(0, 70);
  int64_t nst = fdp.ConsumeIntegralInRange<int64_t>(1, fdp.ConsumeBool() ? 9 : 70);
  // Broken calls that must be refused: a negative size, num_streams <= 0, sizes whose product
  // overflows int64 (and size_t), a null pointer, a bogus stream.
  const int mode = fdp.ConsumeIntegralInRange<int>(0, 11);
  bool must_fail = false;
  int null_arg = -1;
  int64_t* sizes[4] = {&b, &s, &d, &nst};
  if (mode == 1) {
    *sizes[fdp.ConsumeIntegralInRange<int>(0, 3)] = -fdp.ConsumeIntegralInRange<int64_t>(1, INT64_MAX);
    must_fail = true;
  } else if (mode == 2) {
    nst = 0;
    must_fail = true;
  } else if (mode == 3) {  // B*S*D >= 2^64
    const int e1 = fdp.ConsumeIntegralInRange<int>(1, 62), e2 = fdp.ConsumeIntegralInRange<int>(std::max(1, 64 - e1 - 62), 62);
    const int e3 = std::clamp(64 - e1 - e2 + fdp.ConsumeIntegralInRange<int>(0, 4), 0, 62);
    b = int64_t{1} << e1;
    s = int64_t{1} << e2;
    d = int64_t{1} << e3;
    if (e1 + e2 + e3 < 64) nst = INT64_MAX;  // then B*N overflows
    must_fail = true;
  } else if (mode == 4) {
    null_arg = fdp.ConsumeIntegralInRange<int>(0, op == MhcOp::kBackward ? 4 : 2);
    must_fail = true;
  }
  const bool real_sizes = mode == 0 || mode >= 4;
  const int64_t plane = real_sizes ? s * d : 0;
  // x: post [B,S,D], pre [B*N,S,D], backward grad_out [B*N,S,D]; out: post [B*N,S,D], pre and
  // backward's grad_input [B,S,D]; the backward also reads x [B,S,D] and writes grad_h [N].
  const int64_t x_elems = real_sizes ? (op == MhcOp::kPost ? b : b * nst) * plane : 1;
  const int64_t out_elems = real_sizes ? (op == MhcOp::kPost ? b * nst : b) * plane : 1;
  const size_t a_bytes = static_cast<size_t>(x_elems) * es;
  const size_t o_bytes = static_cast<size_t>(out_elems) * es;
  const size_t h_bytes = static_cast<size_t>(real_sizes ? nst : 1) * hs;
  const size_t x2_bytes = op == MhcOp::kBackward ? static_cast<size_t>(real_sizes ? b * plane : 1) * es : 0;
  const size_t gh_bytes = op == MhcOp::kBackward ? static_cast<size_t>(real_sizes ? nst : 1) * 4 : 0;
  const bool zero_work = real_sizes && b * plane == 0;
  const bool may_fail = null_arg >= 0 && zero_work;  // zero work with a null pointer: either
  if (a_bytes + o_bytes + x2_bytes > (4u << 20) ||
      !Affordable(a_bytes + o_bytes + h_bytes + x2_bytes + gh_bytes + 10 * kGuard))
    return;
  Buffer in(a_bytes, 0), h(h_bytes, 0), out(o_bytes, fdp.ConsumeIntegral<uint8_t>());
  Buffer x2(x2_bytes, 0), gh(gh_bytes, 0x77);
  auto fill = [&](Buffer& buf, aclDataType dt) {
    const size_t n = buf.size() / DtypeSize(dt);
    for (size_t i = 0; i < n; ++i)
      StoreFloat(buf.data() + i * DtypeSize(dt), dt,
                 static_cast<float>(static_cast<int8_t>(fdp.ConsumeIntegral<uint8_t>())) / 16.0f);
  };
  fill(in, act);
  fill(h, hdt);
  fill(x2, act);
  for (Buffer* p : {&in, &h, &out, &x2, &gh}) p->Snapshot();
  const uint32_t block_dim = fdp.ConsumeIntegralInRange<uint32_t>(0, 9);
  int bogus = 0;
  aclrtStream stream = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? static_cast<aclrtStream>(&bogus) : PickStream(fdp);
  if (stream == &bogus) must_fail = true;
  auto ptr = [&](int idx, Buffer& buf) -> uint8_t* { return idx == null_arg ? nullptr : buf.data(); };

  static const PostFn kPost[] = {mhc_post_do_fp32, mhc_post_do_fp16, mhc_post_do_bf16};
  static const PostFn kPre[] = {mhc_pre_do_fp32, mhc_pre_do_fp16, mhc_pre_do_bf16};
  static const BwdFn kBwd[] = {mhc_post_backward_do_fp32, mhc_post_backward_do_fp16, mhc_post_backward_do_bf16};
  const int ti = static_cast<int>(type);
  if (op == MhcOp::kBackward) {
    // grad_out is `in` ([B*N,S,D]); input x is x2; grad_input is out; grad_h is gh.
    kBwd[ti](block_dim, stream, ptr(0, in), ptr(1, x2), ptr(2, h), ptr(3, out), ptr(4, gh), b, s, d, nst);
  } else {
    (op == MhcOp::kPost ? kPost : kPre)[ti](block_dim, stream, ptr(0, in), ptr(1, h), ptr(2, out), b, s, d, nst);
  }
  const bool failed = HasMessage();
  SyncAll();
  for (Buffer* p : {&in, &h, &x2}) {
    p->CheckGuards();
    if (!p->Unchanged()) Violation("mhc wrote into an input");
  }
  out.CheckGuards();
  gh.CheckGuards();
  if (must_fail && !may_fail && !failed) Violation("mhc accepted a broken call without a message", std::to_string(mode));
  if (failed || must_fail) {
    if (!out.Unchanged() || !gh.Unchanged()) Violation("a failed mhc call wrote its outputs");
    return;
  }
  if (zero_work && op == MhcOp::kBackward) {  // grad_h of an empty sum: untouched or zeros
    bool zeros = true;
    for (size_t i = 0; i < gh.size(); ++i) zeros &= gh.data()[i] == 0;
    CHECK(zeros || gh.Unchanged(), "zero-size backward wrote a non-zero grad_h");
    return;
  }
  // Valid call: compare with the reference.
  auto load = [&](Buffer& buf, aclDataType dt, int64_t i) {
    return static_cast<double>(LoadFloat(buf.data() + i * DtypeSize(dt), dt));
  };
  if (op == MhcOp::kPost) {
    for (int64_t bb = 0; bb < b; ++bb)
      for (int64_t st = 0; st < nst; ++st)
        for (int64_t e = 0; e < plane; ++e) {
          const float xv = LoadFloat(in.data() + (bb * plane + e) * es, act);
          const float hv = LoadFloat(h.data() + st * hs, hdt);
          uint8_t want[4];
          StoreFloat(want, act, xv * hv);  // fp32 product (exact for fp16 inputs), one rounding
          const uint8_t* got = out.data() + ((bb * nst + st) * plane + e) * es;
          if (std::memcmp(want, got, es) != 0)
            Violation("mhc_post is not bit-exact", "b " + std::to_string(bb) + " s " + std::to_string(st) +
                                                       " e " + std::to_string(e));
        }
    return;
  }
  // pre / backward's grad_input: out[b] = sum_s x[b*N + s] * h[s], fp32 accumulation.
  const double eps = Eps(act);
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t e = 0; e < plane; ++e) {
      double ref = 0, mag = 0;
      for (int64_t st = 0; st < nst; ++st) {
        const double term = load(in, act, (bb * nst + st) * plane + e) * load(h, hdt, st);
        ref += term;
        mag += std::fabs(term);
      }
      const double got = load(out, act, bb * plane + e);
      if (!(std::fabs(got - ref) <= (eps + nst * std::ldexp(1.0, -23)) * (mag + std::fabs(ref)) + AbsFloor(act)))
        Violation("mhc pre/grad_input differs from the fp64 reference",
                  std::to_string(got) + " vs " + std::to_string(ref));
    }
  if (op == MhcOp::kBackward) {
    for (int64_t st = 0; st < nst; ++st) {
      double ref = 0, mag = 0;
      for (int64_t bb = 0; bb < b; ++bb)
        for (int64_t e = 0; e < plane; ++e) {
          const double term = load(in, act, (bb * nst + st) * plane + e) * load(x2, act, bb * plane + e);
          ref += term;
          mag += std::fabs(term);
        }
      const double got = load(gh, ACL_FLOAT, st);
      if (!(std::fabs(got - ref) <= std::ldexp(1.0, -16) * mag + 1e-6))
        Violation("mhc grad_h differs from the fp64 reference", std::to_string(got) + " vs " + std::to_string(ref));
    }
  }
}

// ---- 4. memory calls and streams ---------------------------------------------------------

void FuzzMemory(FuzzedDataProvider& fdp) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {  // aclrtMalloc of small (used, then freed) or impossible sizes
      const bool huge = fdp.ConsumeBool();
      const size_t size = huge ? (SIZE_MAX >> fdp.ConsumeIntegralInRange<int>(0, 23)) - fdp.ConsumeIntegralInRange<size_t>(0, 64)
                               : fdp.ConsumeIntegralInRange<size_t>(0, 1 << 16);
      void* p = &g_bytes_used;
      const aclError st = fdp.ConsumeBool() ? aclrtMalloc(&p, size, static_cast<aclrtMemMallocPolicy>(fdp.ConsumeIntegralInRange<int>(-1, 6)))
                                            : aclrtMallocHost(&p, size);
      if (st != ACL_SUCCESS) {
        CHECK(HasMessage());
        CHECK(p == &g_bytes_used, "a failed malloc wrote its output");
        return;
      }
      CHECK(!huge && size > 0);
      std::memset(p, 0x3c, (size + 31) / 32 * 32 + 32);  // the padded size is ours (ASan checks)
      CHECK(aclrtFree(p) == ACL_SUCCESS);
      CHECK(aclrtFree(p) != ACL_SUCCESS && HasMessage());
      return;
    }
    case 1:
    case 2: {  // aclrtMemcpy / aclrtMemset with arbitrary counts against a true destMax
      const size_t cap = fdp.ConsumeIntegralInRange<size_t>(0, 4096);
      Buffer dst(cap, 0x11), src(4096, 0x22);
      dst.Snapshot();
      const size_t dest_max = fdp.ConsumeIntegralInRange<size_t>(0, cap);
      const size_t count = fdp.ConsumeBool() ? fdp.ConsumeIntegralInRange<size_t>(0, std::min<size_t>(dest_max + 8, 4096))
                                             : fdp.ConsumeIntegral<size_t>();
      aclError st;
      const bool memcpy_call = fdp.ConsumeBool();
      const int kind = fdp.ConsumeIntegralInRange<int>(-1, 5);
      if (memcpy_call) st = aclrtMemcpy(dst.data(), dest_max, src.data(), count, static_cast<aclrtMemcpyKind>(kind));
      else st = aclrtMemset(dst.data(), dest_max, fdp.ConsumeIntegral<int32_t>(), count);
      const bool ok = count <= dest_max && (!memcpy_call || (kind >= 0 && kind <= 4));
      CHECK((st == ACL_SUCCESS) == ok);
      dst.CheckGuards();
      std::vector<bool> mask(cap, false);
      if (st == ACL_SUCCESS) std::fill(mask.begin(), mask.begin() + static_cast<std::ptrdiff_t>(count), true);
      else CHECK(HasMessage());
      CHECK(dst.UnchangedOutside(mask), "memcpy/memset wrote past count");
      return;
    }
  }
}

void FuzzStreams(FuzzedDataProvider& fdp) {
  const int k = fdp.ConsumeIntegralInRange<int>(0, 1);
  if (fdp.ConsumeBool()) {  // destroy (possibly with queued work) and forget
    if (g_streams[k]) CHECK(aclrtDestroyStream(g_streams[k]) == ACL_SUCCESS);
    g_streams[k] = nullptr;
  } else if (g_streams[k]) {
    CHECK(aclrtSynchronizeStream(g_streams[k]) == ACL_SUCCESS);
  }
  int bogus = 0;
  CHECK(aclrtSynchronizeStream(&bogus) != ACL_SUCCESS && HasMessage());
  CHECK(aclrtDestroyStream(&bogus) != ACL_SUCCESS && HasMessage());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  for (int op = 0; op < 8 && fdp.remaining_bytes() > 0; ++op) {
    switch (fdp.ConsumeIntegralInRange<int>(0, 9)) {
      case 0: case 1: FuzzCreateTensor(fdp); break;
      case 2: case 3: case 4: FuzzSce(fdp); break;
      case 5: case 6: case 7: FuzzMhc(fdp); break;
      case 8: FuzzMemory(fdp); break;
      case 9: FuzzStreams(fdp); break;
    }
  }
  for (aclrtStream& s : g_streams)
    if (s) {
      CHECK(aclrtDestroyStream(s) == ACL_SUCCESS);
      s = nullptr;
    }
  return 0;
}
