// mHC kernels on the 16-lane vector layer. Precision (docs/mhc.md): post is one fp32 multiply
// rounded once to the storage type; pre and grad_input accumulate over s = 0..N-1 with a fused
// multiply-add starting from +0 and round once; grad_h sums in fp32 lanes within fixed
// 1024-element blocks, and the block sums are added in double in a fixed order.
// GCC 12 reports its own AVX-512 intrinsics (_mm512_undefined_*, e.g. in _mm512_cvtph_ps) as
// uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

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
static_assert(kChunkElems % kMhcReduceBlockElems == 0, "chunks hold whole grad_h blocks");

// Partial vectors (at most a head and a tail per chunk) go through calls. Inlined, their
// branches changed how GCC allocated registers in the loops around them: after the AVX2 partial
// stores became branches of plain stores, pre bf16 [4, 512, 256] N = 4 took 1.13x the time with
// its weights spilled in the main loop.
template <typename T>
[[gnu::noinline]] Vf LoadTail(const T* p, int n) { return simd::LoadAsN(p, n, 0.0f); }
template <typename T>
[[gnu::noinline]] void StoreTail(T* p, Vf v, int n) { simd::StoreAsN(p, v, n); }

template <typename H>
inline float LoadWeight(const void* h, int64_t s) {
  H v;
  std::memcpy(&v, static_cast<const unsigned char*>(h) + s * sizeof(H), sizeof(H));
  return ToFloat(v);
}

// Pre and backward read N (+ 1) streams E elements apart at once: the hardware prefetchers
// restart at every 4 KiB page of each, so calls that move more than the last-level cache (those
// with streaming stores; smaller ones find their data in the cache) fetch this many bytes ahead
// themselves (a hint past the end of the data never faults). Measured on 2 threads, AVX-512:
// backward 4-12 % faster out of cache, 16-bit pre 7-17 %; fp32 pre no faster (not used there).
constexpr int64_t kPrefetchBytes = 4096;
template <typename T>
__attribute__((always_inline)) inline void PrefetchAhead(const T* p) {
  __builtin_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes);
}

// PostTaskT writes misaligned fp32 streams one at a time with aligned stores (x86 only: there a
// full vector is a 64-byte line, and a store that straddles two lines costs about two).
#if defined(ACLNN_ISA_AVX2) || defined(ACLNN_ISA_AVX512)
constexpr bool kAlignMisalignedFp32Streams = true;
#else
constexpr bool kAlignMisalignedFp32Streams = false;
#endif

// Streams whose accumulation shares one pass over a chunk, held in registers (AVX-512 has 32
// vector registers; a Vf is two of AVX2's 16).
#if defined(ACLNN_ISA_AVX512)
constexpr int kStreamGroup = 8;
#else
constexpr int kStreamGroup = 4;
#endif

// Full-vector stores of the kernels: StoreAs / StoreAsStream, with bf16 through the mhc
// primitives (the same bits; cheaper when no lane is NaN).
//
// kDe: bf16 vectors in the deinterleaved layout of the mhc primitives (cheaper loads and stores;
// AVX2 only, the natural layout elsewhere). Per 16-element position a task uses one layout for
// every load and store, full vectors only (tails are natural), and it is never combined with
// streaming stores, whose aligned head shifts the positions. Lanes of a reduction are put back in
// natural order (MhcFromDeint) before anything natural is added to them.
template <bool kDe, typename T>
__attribute__((always_inline)) inline Vf LoadIn(const T* p) {
  if constexpr (kDe && std::is_same_v<T, BFloat16>) return simd::MhcLoadBf16Deint(reinterpret_cast<const uint16_t*>(p));
  else return simd::LoadAs(p);
}
// kNarrowNaN (bf16, deinterleaved): the caller knows every NaN lane is quiet with a zero low half
// (PostTaskT, NoNaNWeight), so the store skips its NaN test (MhcStoreBf16DeintNarrowNaN; the same
// bits). The kernels instantiate it only where simd::kMhcNarrowNaNStoreIsCheaper (AVX2).
template <bool kDe, bool kNarrowNaN = false, typename T>
__attribute__((always_inline)) inline void StoreOut(T* p, Vf v) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    uint16_t* q = reinterpret_cast<uint16_t*>(p);
    if constexpr (kDe && kNarrowNaN) simd::MhcStoreBf16DeintNarrowNaN(q, v);
    else if constexpr (kDe) simd::MhcStoreBf16Deint(q, v);
    else simd::MhcStoreBf16Bits(q, v);
  } else {
    simd::StoreAs(p, v);
  }
}
// StoreOut of a to p and of b to p + kLanes.
template <bool kDe, bool kNarrowNaN = false, typename T>
__attribute__((always_inline)) inline void StoreOutPair(T* p, Vf a, Vf b) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    uint16_t* q = reinterpret_cast<uint16_t*>(p);
    if constexpr (kDe && kNarrowNaN) {
      simd::MhcStoreBf16DeintNarrowNaN(q, a);
      simd::MhcStoreBf16DeintNarrowNaN(q + kLanes, b);
    } else if constexpr (kDe) {
      simd::MhcStoreBf16DeintPair(q, a, b);
    } else {
      simd::MhcStoreBf16Pair(q, a, b);
    }
  } else {
    simd::StoreAsPair(p, a, b);
  }
}
template <bool kDe>
__attribute__((always_inline)) inline Vf Natural(Vf v) {
  if constexpr (kDe) return simd::MhcFromDeint(v);
  else return v;
}
template <typename T>
__attribute__((always_inline)) inline void StreamOut(T* p, Vf v) { simd::StoreAsStream(p, v); }
__attribute__((always_inline)) inline void StreamOut(BFloat16* p, Vf v) { simd::MhcStoreBf16BitsStream(reinterpret_cast<uint16_t*>(p), v); }

// Calls f.template operator()<G>() with G = ns in [1, kStreamGroup], so that the loops over a
// group's streams are unrolled with their accumulators in registers.
template <int G = 1, typename F>
inline void WithGroup(int ns, F&& f) {
  if constexpr (G < kStreamGroup) {
    if (ns != G) return WithGroup<G + 1>(ns, f);
  }
  f.template operator()<G>();
}

// out[i] = value(i) for i in [0, n): `full(i)` gives 16 lanes from element i, `part(i, k)` the
// first k. With `stream` or `alignHead`, a partial head first aligns the destination to a
// vector's width (skipped when the pointer is not even element-aligned); with `stream` the bulk
// is then written with non-temporal stores.
template <bool kDe = false, bool kNarrowNaN = false, typename T, typename Full, typename Part>
inline void StoreRange(T* out, int64_t n, bool stream, Full full, Part part, bool alignHead = false) {
  int64_t i = 0;
  if (stream || alignHead) {
    constexpr uintptr_t kAlign = sizeof(T) == 4 ? 64 : 32;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(out);
    if (addr % sizeof(T) != 0) {
      stream = false;
    } else {
      const int64_t head = std::min<int64_t>(static_cast<int64_t>((kAlign - addr % kAlign) % kAlign / sizeof(T)), n);
      if (head > 0) StoreTail(out, part(0, static_cast<int>(head)), static_cast<int>(head));
      i = head;
    }
  }
  if (stream) {
    for (; i + kLanes <= n; i += kLanes) StreamOut(out + i, full(i));
  } else {
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) StoreOutPair<kDe, kNarrowNaN>(out + i, full(i), full(i + kLanes));
    for (; i + kLanes <= n; i += kLanes) StoreOut<kDe, kNarrowNaN>(out + i, full(i));
  }
  if (i < n) StoreTail(out + i, part(i, static_cast<int>(n - i)), static_cast<int>(n - i));
}

// out[i] = x[i] * h, one fp32 multiply, rounded once to T.
template <typename T>
inline void ScaleRange(const T* x, T* out, int64_t n, float h, bool stream, bool alignHead = false) {
  const Vf hv = simd::Set(h);
  StoreRange(
      out, n, stream, [&](int64_t i) __attribute__((always_inline)) { return simd::Mul(simd::LoadAs(x + i), hv); },
      [&](int64_t i, int k) __attribute__((always_inline)) { return simd::Mul(LoadTail(x + i, k), hv); }, alignHead);
}

template <typename T>
inline void StoreAccumulator(T* out, const float* acc, int64_t n, bool stream) {
  StoreRange(
      out, n, stream, [&](int64_t i) __attribute__((always_inline)) { return simd::Load(acc + i); },
      [&](int64_t i, int k) __attribute__((always_inline)) { return LoadTail(acc + i, k); });
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
  // fp32 streams that do not all start on a 64-byte boundary (E not a multiple of 16, or an
  // output at an offset): stored a vector into each stream at a time, most stores would straddle
  // two cache lines, so each stream is written on its own after a head that aligns it, and the
  // chunk of x is loaded (from L1) once per stream instead. Measured on the Intel Xeon guest, fp32,
  // min of 3 alternating runs, 1 / 2 threads: (4,1,16001)x4 0.68 / 0.65x the time (level with
  // E = 16000 now), (2,3,1001)x11 0.72 / 0.69x, (4,511,255)x4, (16,3,10001)x4 and (8,100,999)x4
  // (in L3) 0.86-0.90 / 0.83-0.96x; the AVX2 tier on that CPU alike. Not for 16-bit types: their
  // 32-byte stores split less often and their loads widen x, which the group path does once per
  // group; per stream, bf16 took 1.1-1.9x the time, fp16 0.7-1.7x (no consistent gain).
  const bool alignEachStream = kAlignMisalignedFp32Streams && sizeof(T) == 4 &&
                               ((E * sizeof(T)) % 64 != 0 || reinterpret_cast<uintptr_t>(out) % 64 != 0);
  if (t.strategy == MhcStrategy::kPerStream) {
    const int64_t b = r.row / N, s = r.row % N;
    ScaleRange(x + b * E + r.begin, out + r.row * E + r.begin, r.len, LoadWeight<H>(a.h, s), t.streamStores,
               alignEachStream);
  } else {
    // Each chunk of x is read from memory once and from L1 for the other N - 1 streams.
    for (int64_t c = r.begin; c < r.begin + r.len; c += kChunkElems) {
      const int64_t n = std::min(kChunkElems, r.begin + r.len - c);
      const T* xc = x + r.row * E + c;
      if (t.streamStores || alignEachStream) {  // each stream's aligned head differs: one stream at a time
        for (int64_t s = 0; s < N; ++s)
          ScaleRange(xc, out + (r.row * N + s) * E + c, n, LoadWeight<H>(a.h, s), t.streamStores, true);
        continue;
      }
      // Each vector of x is loaded (and widened) once for a group of streams.
      for (int64_t s0 = 0; s0 < N; s0 += kStreamGroup) {
        WithGroup(static_cast<int>(std::min<int64_t>(kStreamGroup, N - s0)), [&]<int G>() {
          T* o[G];
          Vf hv[G];
          // bf16 x times non-NaN weights: every NaN product is x's NaN quieted or inf * 0's
          // default NaN, whose low 16 bits are zero, so the stores need no NaN test (the same
          // bits). Measured on AVX2 Zen 3, in-cache shapes (B, S, D) = (2, 64, 256) to
          // (4, 512, 1024), N = 4: 0.78-0.83x the time on 1 thread, 0.77-0.85x on 2.
          bool narrowNaN = std::is_same_v<T, BFloat16>;
          for (int k = 0; k < G; ++k) {
            o[k] = out + (r.row * N + s0 + k) * E + c;
            const float h = LoadWeight<H>(a.h, s0 + k);
            hv[k] = simd::Set(h);
            narrowNaN = narrowNaN && !std::isnan(h);
          }
          // The whole vectors of the chunk; returns where the partial tail starts.
          auto wholeVectors = [&]<bool kNarrowNaN>() {
            int64_t i = 0;
            for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
              const Vf xa = LoadIn<true>(xc + i), xb = LoadIn<true>(xc + i + kLanes);  // element-wise: the layout is free
              for (int k = 0; k < G; ++k)
                StoreOutPair<true, kNarrowNaN>(o[k] + i, simd::Mul(xa, hv[k]), simd::Mul(xb, hv[k]));
            }
            for (; i + kLanes <= n; i += kLanes) {
              const Vf xv = LoadIn<true>(xc + i);
              for (int k = 0; k < G; ++k) StoreOut<true, kNarrowNaN>(o[k] + i, simd::Mul(xv, hv[k]));
            }
            return i;
          };
          int64_t i;
          if constexpr (std::is_same_v<T, BFloat16> && simd::kMhcNarrowNaNStoreIsCheaper)
            i = narrowNaN ? wholeVectors.template operator()<true>() : wholeVectors.template operator()<false>();
          else
            i = wholeVectors.template operator()<false>();
          if (i < n) {
            const int m = static_cast<int>(n - i);
            const Vf xv = LoadTail(xc + i, m);
            for (int k = 0; k < G; ++k) StoreTail(o[k] + i, simd::Mul(xv, hv[k]), m);
          }
        });
      }
    }
  }
  if (t.streamStores) simd::StreamFence();
}

// out[i] = sum_s x_s[i] * h[s] as acc = fma(x_s[i], h[s], acc) for s = 0..N-1, acc starting at
// +0. Streams are taken kStreamGroup at a time with the accumulator in registers; between
// groups it waits in `acc` (L1), and the last group writes the output directly. Every element
// sees the same sequence of fmas whatever the grouping, so the bits do not depend on it.
template <typename T, typename H, bool kDe, bool kPrefetch, bool kNarrowNaN>
void PreTaskImpl(const MhcTiling& t, const MhcPreArgs& a, int64_t task) {
  const T* x = static_cast<const T*>(a.x);
  T* out = static_cast<T*>(a.out);
  const int64_t E = t.rowElems, N = t.numStreams;
  const TileRange r = TaskTile(t, task);
  alignas(64) float acc[kChunkElems];
  for (int64_t c = r.begin; c < r.begin + r.len; c += kChunkElems) {
    const int64_t n = std::min(kChunkElems, r.begin + r.len - c);
    for (int64_t s0 = 0; s0 < N; s0 += kStreamGroup) {
      WithGroup(static_cast<int>(std::min<int64_t>(kStreamGroup, N - s0)), [&]<int G>() {
        const T* xs[G];
        Vf hv[G];
        for (int k = 0; k < G; ++k) {
          xs[k] = x + (r.row * N + s0 + k) * E + c;
          hv[k] = simd::Set(LoadWeight<H>(a.h, s0 + k));
        }
        const bool first = s0 == 0, last = s0 + G == N;
        // Both always inlined: GCC had kept `full` out of line (a call per vector) in some
        // instantiations (AVX-512, 16-bit, 4-8 streams); measured on the Xeon guest, bf16, in-cache
        // (4,128,256) N = 6 / 7: 0.88 / 0.84x the time, out of cache N = 8 0.94-0.96x.
        auto full = [&](int64_t i) __attribute__((always_inline)) {
          Vf v = first ? simd::Zero() : simd::Load(acc + i);
          if constexpr (kPrefetch)
            for (int k = 0; k < G; ++k) PrefetchAhead(xs[k] + i);
          for (int k = 0; k < G; ++k) v = simd::MulAdd(LoadIn<kDe>(xs[k] + i), hv[k], v);
          return v;
        };
        auto part = [&](int64_t i, int m) __attribute__((always_inline)) {
          Vf v = first ? simd::Zero() : LoadTail(acc + i, m);
          for (int k = 0; k < G; ++k) v = simd::MulAdd(LoadTail(xs[k] + i, m), hv[k], v);
          return v;
        };
        if (last) {
          StoreRange<kDe, kNarrowNaN>(out + r.row * E + c, n, t.streamStores, full, part);
        } else {
          int64_t i = 0;
          for (; i + kLanes <= n; i += kLanes) simd::Store(acc + i, full(i));
          if (i < n) simd::Store(acc + i, part(i, static_cast<int>(n - i)));
        }
      });
    }
  }
  if (t.streamStores) simd::StreamFence();
}

// True when no weight is NaN. Then a bf16 sum of products fma(x_s, h[s], acc) (pre, grad_input)
// is NaN only through a bf16 operand's NaN, quieted (x86 returns a NaN operand's payload, and
// x's low half is zero), or the default NaN 0xffc00000 of inf * 0 or inf - inf: every NaN lane
// has a zero low half, and its stores may skip the NaN test (kNarrowNaN, as in PostTaskT).
// Measured on AVX2 Zen 3, in-cache bf16 (B, S, D) = (2, 64, 256) to (4, 512, 1024), N = 4,
// 1 thread: pre 0.90-0.95x the time, backward 0.96-0.98x; 2 threads: no change (cache-bound).
template <typename H>
inline bool NoNaNWeight(const void* h, int64_t n) {
  for (int64_t s = 0; s < n; ++s)
    if (std::isnan(LoadWeight<H>(h, s))) return false;
  return true;
}

// The deinterleaved layout pays for bf16 without streaming stores (see LoadIn); there the stores
// skip the NaN test when they can (NoNaNWeight). Software prefetch with streaming stores, for
// 16-bit types (fp32 pre measured no faster with it).
template <typename T, typename H>
void PreTaskT(const MhcTiling& t, const MhcPreArgs& a, int64_t task) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (!t.streamStores) {
      if constexpr (simd::kMhcNarrowNaNStoreIsCheaper)
        if (NoNaNWeight<H>(a.h, t.numStreams)) return PreTaskImpl<T, H, true, false, true>(t, a, task);
      return PreTaskImpl<T, H, true, false, false>(t, a, task);
    }
  }
  if constexpr (sizeof(T) == 2) {
    if (t.streamStores) return PreTaskImpl<T, H, false, true, false>(t, a, task);
  }
  PreTaskImpl<T, H, false, false, false>(t, a, task);
}

// One pass over grad_out: each 16-lane group of grad_out[b*N+s] is multiplied into the
// grad_input accumulator and dotted with x[b] into the lanes of its block's grad_h partial.
// Tiles start at multiples of the reduction block (or cover the whole row), so block boundaries
// and lane assignment are those of the row, whatever the tiling.
template <typename T, typename H, bool kDe, bool kPrefetch, bool kNarrowNaN>
void BackwardTaskImpl(const MhcTiling& t, const MhcBackwardArgs& a, int64_t task) {
  const T* go = static_cast<const T*>(a.gradOut);
  const T* x = static_cast<const T*>(a.x);
  T* gi = static_cast<T*>(a.gradInput);
  const int64_t E = t.rowElems, N = t.numStreams;
  const int64_t partialsPerStream = t.batch * t.blocksPerRow;
  const TileRange r = TaskTile(t, task);
  const int64_t b = r.row;
  alignas(64) float acc[kChunkElems];
  for (int64_t c = r.begin; c < r.begin + r.len; c += kChunkElems) {
    const int64_t n = std::min(kChunkElems, r.begin + r.len - c);
    const T* xb = x + b * E + c;
    T* gib = gi + b * E + c;
    float* partial = a.partials + b * t.blocksPerRow + c / kMhcReduceBlockElems;
    for (int64_t s0 = 0; s0 < N; s0 += kStreamGroup) {
      WithGroup(static_cast<int>(std::min<int64_t>(kStreamGroup, N - s0)), [&]<int G>() {
        const T* g[G];
        Vf hv[G];
        for (int k = 0; k < G; ++k) {
          g[k] = go + (b * N + s0 + k) * E + c;
          hv[k] = simd::Set(LoadWeight<H>(a.h, s0 + k));
        }
        const bool first = s0 == 0, last = s0 + G == N;
        // The last group writes grad_input directly unless it streams (the aligned head of the
        // streaming store would shift the lanes); then the chunk goes through `acc`.
        const bool direct = last && !t.streamStores;
        for (int64_t lo = 0, blk = 0; lo < n; lo += kMhcReduceBlockElems, ++blk) {
          const int64_t hi = std::min(n, lo + kMhcReduceBlockElems);
          const int64_t full = lo + (hi - lo) / kLanes * kLanes;
          Vf dot[G];
          for (int k = 0; k < G; ++k) dot[k] = simd::Zero();
          int64_t i = lo;
          for (; i < full; i += kLanes) {
            if constexpr (kPrefetch) {
              PrefetchAhead(xb + i);
              for (int k = 0; k < G; ++k) PrefetchAhead(g[k] + i);
            }
            const Vf xv = LoadIn<kDe>(xb + i);
            Vf v = first ? simd::Zero() : simd::Load(acc + i);
            for (int k = 0; k < G; ++k) {
              const Vf gv = LoadIn<kDe>(g[k] + i);
              v = simd::MulAdd(gv, hv[k], v);
              dot[k] = simd::MulAdd(gv, xv, dot[k]);
            }
            if (direct) StoreOut<kDe, kNarrowNaN>(gib + i, v);
            else simd::Store(acc + i, v);
          }
          for (int k = 0; k < G; ++k) dot[k] = Natural<kDe>(dot[k]);  // before the natural tail
          if (i < hi) {
            const int m = static_cast<int>(hi - i);
            const Vf xv = LoadTail(xb + i, m);
            Vf v = first ? simd::Zero() : simd::Load(acc + i);
            for (int k = 0; k < G; ++k) {
              const Vf gv = LoadTail(g[k] + i, m);
              v = simd::MulAdd(gv, hv[k], v);
              dot[k] = simd::MulAdd(gv, xv, dot[k]);
            }
            if (direct) StoreTail(gib + i, v, m);
            else simd::Store(acc + i, v);
          }
          for (int k = 0; k < G; ++k) partial[(s0 + k) * partialsPerStream + blk] = simd::ReduceSum(dot[k]);
        }
      });
    }
    if (t.streamStores) StoreAccumulator(gib, acc, n, true);
  }
  if (t.streamStores) simd::StreamFence();
}

template <typename T, typename H>
void BackwardTaskT(const MhcTiling& t, const MhcBackwardArgs& a, int64_t task) {
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (!t.streamStores) {
      if constexpr (simd::kMhcNarrowNaNStoreIsCheaper)
        if (NoNaNWeight<H>(a.h, t.numStreams)) return BackwardTaskImpl<T, H, true, false, true>(t, a, task);
      return BackwardTaskImpl<T, H, true, false, false>(t, a, task);
    }
  }
  if (t.streamStores) return BackwardTaskImpl<T, H, false, true, false>(t, a, task);  // software prefetch
  BackwardTaskImpl<T, H, false, false, false>(t, a, task);
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
