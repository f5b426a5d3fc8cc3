// mHC kernels on the 16-lane vector layer. Precision (docs/mhc.md): post is one fp32 multiply
// rounded once to the storage type; pre and grad_input accumulate over s = 0..N-1 with a fused
// multiply-add starting from +0 and round once; grad_h sums in fp32 lanes within fixed
// 1024-element blocks, and the block sums are added in double in a fixed order.
#include <algorithm>
#include <cstring>

#include "numeric/half.h"
#include "numeric/simd.h"
#include "ops/mhc/mhc_kernels.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace {

using simd::kLanes;
using simd::Vf;

// Elements of x processed per pass over the N streams: small enough to stay in L1.
constexpr int64_t kChunkElems = 4096;
static_assert(kChunkElems % kMhcReduceBlockElems == 0, "chunks hold whole reduction blocks");

template <typename H>
inline float LoadWeight(const void* h, int64_t s) {
  H v;
  std::memcpy(&v, static_cast<const unsigned char*>(h) + s * sizeof(H), sizeof(H));
  return ToFloat(v);
}

// out[i] = value(i) for i in [0, n): `full(i)` gives 16 lanes from element i, `part(i, k)` the
// first k. With `stream`, the bulk is written with non-temporal stores after a head that
// aligns the destination (skipped when the pointer is not even element-aligned).
template <typename T, typename Full, typename Part>
inline void StoreRange(T* out, int64_t n, bool stream, Full full, Part part) {
  int64_t i = 0;
  if (stream) {
    constexpr uintptr_t kAlign = sizeof(T) == 4 ? 64 : 32;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
    if (addr % sizeof(T) != 0) {
      stream = false;
    } else {
      const int64_t head = std::min<int64_t>(static_cast<int64_t>((kAlign - addr % kAlign) % kAlign / sizeof(T)), n);
      if (head > 0) simd::StoreAsN(out, part(0, static_cast<int>(head)), static_cast<int>(head));
      i = head;
    }
  }
  if (stream) {
    for (; i + kLanes <= n; i += kLanes) simd::StoreAsStream(out + i, full(i));
  } else {
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
      const Vf a = full(i), b = full(i + kLanes);
      simd::StoreAs(out + i, a);
      simd::StoreAs(out + i + kLanes, b);
    }
    for (; i + kLanes <= n; i += kLanes) simd::StoreAs(out + i, full(i));
  }
  if (i < n) simd::StoreAsN(out + i, part(i, static_cast<int>(n - i)), static_cast<int>(n - i));
}

// out[i] = x[i] * h, one fp32 multiply, rounded once to T.
template <typename T>
inline void ScaleRange(const T* x, T* out, int64_t n, float h, bool stream) {
  const Vf hv = simd::Set(h);
  StoreRange(out, n, stream, [&](int64_t i) { return simd::Mul(simd::LoadAs(x + i), hv); },
             [&](int64_t i, int k) { return simd::Mul(simd::LoadAsN(x + i, k, 0.0f), hv); });
}

// acc[i] = fma(x_s[i], h[s], acc[i]) for s = 0..N-1 in order, acc starting at +0; x_s is
// x + s*stride. acc holds n (<= kChunkElems) floats, rounded up to whole vectors.
template <typename T, typename H>
inline void AccumulateStreams(float* acc, const T* x, int64_t stride, const void* h, int64_t numStreams,
                              int64_t n) {
  const int64_t full = n / kLanes * kLanes;
  const int64_t padded = (n + kLanes - 1) / kLanes * kLanes;
  for (int64_t i = 0; i < padded; i += kLanes) simd::Store(acc + i, simd::Zero());
  for (int64_t s = 0; s < numStreams; ++s) {
    const T* xs = x + s * stride;
    const Vf hv = simd::Set(LoadWeight<H>(h, s));
    int64_t i = 0;
    for (; i < full; i += kLanes) simd::Store(acc + i, simd::MulAdd(simd::LoadAs(xs + i), hv, simd::Load(acc + i)));
    if (i < n)
      simd::Store(acc + i, simd::MulAdd(simd::LoadAsN(xs + i, static_cast<int>(n - i), 0.0f), hv, simd::Load(acc + i)));
  }
}

template <typename T>
inline void StoreAccumulator(T* out, const float* acc, int64_t n, bool stream) {
  StoreRange(out, n, stream, [&](int64_t i) { return simd::Load(acc + i); },
             [&](int64_t i, int k) { return simd::Load(acc + i); });
}

struct TileRange {
  int64_t row, begin, len;  // row = b (ReadOnce) or b*N + s (PerStream)
};
inline TileRange TaskTile(const MhcTiling& t, int64_t task) {
  const int64_t tile = task % t.tilesPerRow;
  const int64_t begin = tile * t.tileElems;
  return {task / t.tilesPerRow, begin, std::min(t.tileElems, t.rowElems - begin)};
}

template <typename T, typename H>
void PostTaskT(const MhcTiling& t, const MhcPostArgs& a, int64_t task) {
  const T* x = static_cast<const T*>(a.x);
  T* out = static_cast<T*>(a.out);
  const int64_t E = t.rowElems, N = t.numStreams;
  const TileRange r = TaskTile(t, task);
  if (t.strategy == MhcStrategy::kPerStream) {
    const int64_t b = r.row / N, s = r.row % N;
    ScaleRange(x + b * E + r.begin, out + r.row * E + r.begin, r.len, LoadWeight<H>(a.h, s), t.streamStores);
  } else {
    // Each chunk of x is read from memory once and from L1 for the other N - 1 streams.
    for (int64_t c = r.begin; c < r.begin + r.len; c += kChunkElems) {
      const int64_t n = std::min(kChunkElems, r.begin + r.len - c);
      for (int64_t s = 0; s < N; ++s)
        ScaleRange(x + r.row * E + c, out + (r.row * N + s) * E + c, n, LoadWeight<H>(a.h, s), t.streamStores);
    }
  }
  if (t.streamStores) simd::StreamFence();
}

template <typename T, typename H>
void PreTaskT(const MhcTiling& t, const MhcPreArgs& a, int64_t task) {
  const T* x = static_cast<const T*>(a.x);
  T* out = static_cast<T*>(a.out);
  const int64_t E = t.rowElems, N = t.numStreams;
  const TileRange r = TaskTile(t, task);
  alignas(64) float acc[kChunkElems];
  for (int64_t c = r.begin; c < r.begin + r.len; c += kChunkElems) {
    const int64_t n = std::min(kChunkElems, r.begin + r.len - c);
    AccumulateStreams<T, H>(acc, x + r.row * N * E + c, E, a.h, N, n);
    StoreAccumulator(out + r.row * E + c, acc, n, t.streamStores);
  }
  if (t.streamStores) simd::StreamFence();
}

// One pass over grad_out: each 16-lane group of grad_out[b*N+s] is multiplied into the
// grad_input accumulator and dotted with x[b]. Tiles start at multiples of the reduction block
// (or cover the whole row), so block boundaries and lane assignment are those of the row.
template <typename T, typename H>
void BackwardTaskT(const MhcTiling& t, const MhcBackwardArgs& a, int64_t task) {
  const T* go = static_cast<const T*>(a.gradOut);
  const T* x = static_cast<const T*>(a.x);
  T* gi = static_cast<T*>(a.gradInput);
  const int64_t E = t.rowElems, N = t.numStreams;
  const int64_t partialsPerStream = t.batch * t.blocksPerRow;
  const TileRange r = TaskTile(t, task);
  const int64_t b = r.row;
  alignas(64) float acc[kMhcReduceBlockElems];
  for (int64_t c = r.begin; c < r.begin + r.len; c += kMhcReduceBlockElems) {
    const int64_t n = std::min(kMhcReduceBlockElems, r.begin + r.len - c);
    const int64_t full = n / kLanes * kLanes;
    const int64_t padded = (n + kLanes - 1) / kLanes * kLanes;
    for (int64_t i = 0; i < padded; i += kLanes) simd::Store(acc + i, simd::Zero());
    const T* xb = x + b * E + c;
    float* partial = a.partials + b * t.blocksPerRow + c / kMhcReduceBlockElems;
    for (int64_t s = 0; s < N; ++s) {
      const T* g = go + (b * N + s) * E + c;
      const Vf hv = simd::Set(LoadWeight<H>(a.h, s));
      Vf dot = simd::Zero();
      int64_t i = 0;
      for (; i < full; i += kLanes) {
        const Vf gv = simd::LoadAs(g + i);
        simd::Store(acc + i, simd::MulAdd(gv, hv, simd::Load(acc + i)));
        dot = simd::MulAdd(gv, simd::LoadAs(xb + i), dot);
      }
      if (i < n) {
        const int k = static_cast<int>(n - i);
        const Vf gv = simd::LoadAsN(g + i, k, 0.0f);
        simd::Store(acc + i, simd::MulAdd(gv, hv, simd::Load(acc + i)));
        dot = simd::MulAdd(gv, simd::LoadAsN(xb + i, k, 0.0f), dot);
      }
      partial[s * partialsPerStream] = simd::ReduceSum(dot);
    }
    StoreAccumulator(gi + b * E + c, acc, n, t.streamStores);
  }
  if (t.streamStores) simd::StreamFence();
}

// Runs `body.template operator()<T, H>()` for the tiling's dtype.
template <typename Body>
inline void WithTypes(MhcDtype dtype, Body&& body) {
  switch (dtype) {
    case MhcDtype::kFp32: body.template operator()<float, float>(); break;
    case MhcDtype::kFp16: body.template operator()<Half, Half>(); break;
    case MhcDtype::kBf16: body.template operator()<BFloat16, float>(); break;
  }
}

}  // namespace

void MhcPostTask(const MhcTiling& t, const MhcPostArgs& a, int64_t task) {
  WithTypes(t.dtype, [&]<typename T, typename H>() { PostTaskT<T, H>(t, a, task); });
}

void MhcPreTask(const MhcTiling& t, const MhcPreArgs& a, int64_t task) {
  WithTypes(t.dtype, [&]<typename T, typename H>() { PreTaskT<T, H>(t, a, task); });
}

void MhcBackwardTask(const MhcTiling& t, const MhcBackwardArgs& a, int64_t task) {
  WithTypes(t.dtype, [&]<typename T, typename H>() { BackwardTaskT<T, H>(t, a, task); });
}

void MhcCombineGradH(const MhcTiling& t, const float* partials, void* gradH) {
  const int64_t perStream = t.batch * t.blocksPerRow;
  for (int64_t s = 0; s < t.numStreams; ++s) {
    double sum = 0.0;
    for (int64_t j = 0; j < perStream; ++j) sum += static_cast<double>(partials[s * perStream + j]);
    const float v = static_cast<float>(sum);
    std::memcpy(static_cast<unsigned char*>(gradH) + s * sizeof(float), &v, sizeof(float));
  }
}

}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
