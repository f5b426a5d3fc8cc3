// SoftmaxCrossEntropyWithLogits kernels (one copy per ISA; see sce_tiling.h for the variants).
// Every sum has a fixed order defined in terms of lanes, chunks and classes only, so the bits
// are the same for any ISA, thread count and block split.
// GCC 12 reports its own AVX-512 intrinsics (_mm512_undefined_*) as uninitialised.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "ops/softmax_cross_entropy_with_logits/sce_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "numeric/half.h"
#include "numeric/simd.h"
#include "numeric/simd_log.h"

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace {

using simd::Vf;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int kL = simd::kLanes;
// The lane path sums classes in blocks of this many (a sum of short sums instead of one long
// one: error ~ (block + C / block) ulp instead of C ulp for large NCHW C).
constexpr int64_t kLaneBlock = 32;
// The lane path keeps exp values for reuse when C * 16 floats fit this scratch (NCHW: or the
// workspace scratch holds them).
constexpr int64_t kLaneScratchC = 256;
// NCHW software prefetch distance along a class row, in bytes, into L2 (prefetcht1: 2 C rows x
// 4 KiB ahead is more than L1 holds; measured on AVX-512 Zen 4, [8,19,256,256] fp32 / bf16 on 2
// threads, about 20 % faster than into L1, where the lines evicted the scratch). AVX-512
// (tuned on Zen 4): 4 KiB, past the pages the hardware prefetchers stop at. AVX2 (tuned on Zen
// 3, where 4 KiB ahead helped 16-bit types only): 512 bytes, one fp32 run of 8 groups; measured
// there, 2 threads, 6 alternations, against 4 KiB: fp32 / bf16 / fp16 0.94 / 0.91 / 0.93x the
// time (1 thread 0.95 / 0.95 / 0.99x; 1 KiB 0.95 / 0.92 / 0.97x; no prefetch 1.0 /
// 1.10 / 1.12x).
#if defined(ACLNN_ISA_AVX512)
constexpr int64_t kNchwPrefetch = 4096;
#else
constexpr int64_t kNchwPrefetch = 512;
#endif
constexpr int kToL2 = 2;  // __builtin_prefetch locality 2 = prefetcht1
// Row path: the apply pass fetches features and labels this many bytes ahead. A FullLoad row of
// ~1000 fp32 classes is about one page, so the hardware prefetchers restart at every row; 4 KiB
// ahead is the next row's same position (or, in SplitR, the next page of the chunk).
constexpr int64_t kRowPrefetch = 4096;

// Exps computed side by side, stage by stage (simd::ExpNonPositiveN: the same bits as one at a
// time), by the exp passes of ChunkStatsT and LanesCoreG. AVX2: 2 (a Vf is two ymm, and one
// vector's exp chain leaves the core idle; measured on Zen 3, 1 thread, see the SCE doc). 1
// elsewhere: AVX-512 was not measured this way, and the scalar build gains nothing.
#if defined(ACLNN_ISA_AVX2)
constexpr int kExpBatch = 2;
#else
constexpr int kExpBatch = 1;
#endif
static_assert(kExpBatch == 1 || kExpBatch == 2, "the exp loops below leave at most one vector over");
template <int kU>
using ExpBatch = std::integral_constant<int, kU>;
// The row and lane paths find each row's minimum with its maximum and, when no x - max lies
// below simd::kExpNormalRangeMin, take the exp without the clamp and the subnormal check
// (simd::ExpNormalRangeN: the same bits, three operations fewer per vector).
#if defined(ACLNN_ISA_AVX512) || defined(ACLNN_ISA_AVX2)
constexpr bool kExpRangeCheck = true;
#else
constexpr bool kExpRangeCheck = false;
#endif
#if defined(ACLNN_ISA_AVX2)
constexpr bool kAvx2 = true;
#else
constexpr bool kAvx2 = false;
#endif

inline Vf Fold4(Vf a, Vf b, Vf c, Vf d) { return simd::Add(simd::Add(a, b), simd::Add(c, d)); }

// acc[i] = f(acc[i]) for a run-time i in [0, 4), with constant indices only: an array indexed at
// run time lives in memory (GCC then keeps every accumulator of the loop on the stack).
template <typename A, typename F>
__attribute__((always_inline)) inline void UpdateAt(A* acc, int64_t i, F f) {
  switch (i & 3) {
    case 0: acc[0] = f(acc[0]); break;
    case 1: acc[1] = f(acc[1]); break;
    case 2: acc[2] = f(acc[2]); break;
    default: acc[3] = f(acc[3]); break;
  }
}

// Per lane (a row of the lane path, or of FullLoadRows), from the sum of exp values as s + r
// (s = its fp32 rounding, r what the rounding dropped, exactly): inv = 1 / s and L = log(s + r)
// = Log(s) + r / s in fp32 (log1p(r / s) = r / s to 2^-48), which keeps its relative precision
// when the sum is close to 1 (confident predictions: s may round to 1 while the loss is the
// small r). s lies in [1, C] (the maximum class contributes exp(0) = 1) or is NaN (rows with
// +inf, NaN or, on the lane path, only -inf logits), where inv and so L are NaN too; a FullLoad
// row of only -inf logits has s = 0, r = 0 and L = NaN from 0 * inf. LogPositiveNormal (Log's
// bits, <= 2 ulp) needs no special values.
__attribute__((always_inline)) inline void LanesLog(Vf s, Vf r, Vf* inv, Vf* L) {
  *inv = simd::Div(simd::Set(1.0f), s);
  *L = simd::MulAdd(r, *inv, simd::LogPositiveNormal(s));
}

// ---- row path (kRows) ---------------------------------------------------------------------

// See FullLoadRows.
#if defined(ACLNN_ISA_AVX512)
#define ACLNN_SCE_FLATTEN __attribute__((flatten))
#else
#define ACLNN_SCE_FLATTEN
#endif

// One row of features or labels: contiguous classes, or one value broadcast over the row.
template <typename T, bool kScalar>
struct RowIn {
  // 16-bit rows in memory: the stats pass widens them once, into an fp32 stage (ChunkStatsT).
  static constexpr bool kWidenOnce = sizeof(T) == 2 && !kScalar;
  const T* p;
  float v;  // kScalar: the row's value
  RowIn(const T* ptr) : p(ptr), v(kScalar ? ToFloat(ptr[0]) : 0.0f) {}
  RowIn Skip(int64_t i) const { RowIn r = *this; if constexpr (!kScalar) r.p = p + i; return r; }
  // A hint kRowPrefetch bytes past element i (never faults, even past the end of the data).
  void Prefetch(int64_t i) const {
    if constexpr (!kScalar) __builtin_prefetch(reinterpret_cast<const char*>(p + i) + kRowPrefetch);
  }
  Vf At(int64_t i) const {
    if constexpr (kScalar) return simd::Set(v);
    else return simd::LoadAs(p + i);
  }
  Vf Tail(int64_t i, int n, float fill) const {
    if constexpr (kScalar) {
      alignas(64) float t[kL];
      for (int l = 0; l < kL; ++l) t[l] = l < n ? v : fill;
      return simd::Load(t);
    } else {
      return simd::LoadAsN(p + i, n, fill);
    }
  }
};

// The value ChunkStats subtracts before the exp: the chunk maximum, 0 for an all -inf chunk.
inline float ChunkExpRef(float mc) { return mc == -kInf ? 0.0f : mc; }

struct ChunkStat {
  float m;
  double s;  // k + t (see SceChunkRecord)
  float k, t;
};

// Sum of exp values split as k + t: k = sum of round(e) (integers, exact), t = sum of e - round(e)
// (each term exact), so t keeps the small terms that a plain float sum next to 1 would lose.
struct SplitSum {
  Vf k = simd::Zero(), t = simd::Zero();
  void Add(Vf e) { simd::SplitAdd(&k, &t, e); }
};

// The maximum of a chunk, vector j to accumulator j % 4, tails padded with -inf, before the
// ReduceMax of the folded accumulators. kStage: xs receives the chunk widened to fp32, its tail
// vector padded with -inf (roundup(n, 16) floats). kMin: *minOut receives the lane minima of the
// whole vectors (not the tail, whose exp is always ExpNonPositive), for simd::InExpNormalRange.
template <bool kStage, bool kMin = false, typename In>
__attribute__((always_inline)) inline Vf ChunkMaxV(const In& x, int64_t n, float* xs, Vf* minOut = nullptr) {
  const int64_t nv = n / kL;
  const int tail = static_cast<int>(n % kL);
  Vf mx[4] = {simd::Set(-kInf), simd::Set(-kInf), simd::Set(-kInf), simd::Set(-kInf)};
  Vf mn[2] = {simd::Set(kInf), simd::Set(kInf)};
  auto at = [&](int64_t i) {
    const Vf v = x.At(i);
    if constexpr (kStage) simd::Store(xs + i, v);
    return v;
  };
  int64_t j = 0;
  for (; j + 4 <= nv; j += 4) {
    Vf v[4];
    for (int u = 0; u < 4; ++u) {
      v[u] = at(kL * (j + u));
      mx[u] = simd::Max(mx[u], v[u]);
    }
    if constexpr (kMin) {
      mn[0] = simd::Min(mn[0], simd::Min(v[0], v[1]));
      mn[1] = simd::Min(mn[1], simd::Min(v[2], v[3]));
    }
  }
  for (; j < nv; ++j) UpdateAt(mx, j, [&](Vf a) {
    const Vf v = at(kL * j);
    if constexpr (kMin) mn[0] = simd::Min(mn[0], v);
    return simd::Max(a, v);
  });
  if constexpr (kMin) *minOut = simd::Min(mn[0], mn[1]);
  if (tail) {
    const Vf v = x.Tail(kL * nv, tail, -kInf);
    if constexpr (kStage) simd::Store(xs + kL * nv, v);
    UpdateAt(mx, nv, [&](Vf a) { return simd::Max(a, v); });
  }
  return simd::Max(simd::Max(mx[0], mx[1]), simd::Max(mx[2], mx[3]));
}
template <bool kStage, bool kMin = false, typename In>
float ChunkMaxT(const In& x, int64_t n, float* xs, Vf* minOut = nullptr) {
  return simd::ReduceMax(ChunkMaxV<kStage, kMin>(x, n, xs, minOut));
}
template <typename In>
float ChunkMax(const In& x, int64_t n) { return ChunkMaxT<false>(x, n, nullptr); }

// The two halves of a split sum of exp values, each folded over its accumulators, before their
// ReduceSum.
struct ExpSums {
  Vf k, t;
};

// Max and sum of exp(x - max) over one chunk of n <= kSceChunk classes. Vector j of the chunk
// goes to sum accumulator j % 2 (ChunkMax: j % 4), tails are padded with -inf. kStore: es
// receives exp(x - max); kZ: zs receives x - max (FullLoad, see ChunkApplyT).
// 16-bit rows (In::kWidenOnce) are widened once, by the max pass into the fp32 stage zs, which
// the exp pass reads (and, kZ, overwrites with x - max): two operations fewer per vector than
// widening again (measured on AVX-512 Zen 4, 1 thread, 5 alternations: in-cache [64, 1000]
// bf16 / fp16 0.94x the time, SplitR [64, 131072] 0.97-0.98x).
// x is taken by value: the intrinsic stores may alias anything, so a referenced row would be
// reloaded after each of them.
//
// next (kNext): the features the next stats pass reads (the next chunk of the row, or the next
// row), as many elements ahead as the chunk is long. The pass is compute-bound (an exp per
// element) and finds in the cache only what the hardware prefetchers fetched while it loaded,
// so it asks for its successor's lines while it computes: otherwise memory idles during the
// exp and the exp waits for memory in the next pass (measured on AVX-512 Zen 4, 2 threads:
// fp32 [4096,1000] / [65536,1000] / [1024,32000] / [64,131072] 0.68 / 0.82 / 0.77 / 0.82x the
// time, bf16 SplitR 0.83-0.86x; 16-bit FullLoad, compute-bound at its in-cache rate, unchanged).
//
// ChunkExpSumsT is the exp pass alone, given the chunk maximum m (16-bit rows: zs staged by
// ChunkMaxV<true>); it returns the split sum before its ReduceSum.
template <bool kStore, bool kNext, bool kZ, bool kNormal = false, typename In>
__attribute__((always_inline)) inline ExpSums ChunkExpSumsT(const In x, int64_t n, float m, float* es, const char* next, float* zs) {
  constexpr int64_t kElemBytes = sizeof(*x.p);
  const int64_t nv = n / kL;
  const int tail = static_cast<int>(n % kL);
  constexpr bool kWide = In::kWidenOnce;
  auto xAt = [&](int64_t i) {
    if constexpr (kWide) return simd::Load(zs + i);
    else return x.At(i);
  };
  // An all -inf chunk sums exp(x - 0) = 0 (a NaN in it still shows); +inf gives NaN.
  const Vf M = simd::Set(ChunkExpRef(m));
  SplitSum sa[2];  // vector j -> accumulator j % 2
  // AVX2 with es: the split sums are taken in a pass of their own over es once the exps are
  // done (the same additions in the same order: the same bits). In the exp loop their four
  // vectors (eight ymm) left too few of AVX2's 16 registers for two vectors' exp chains, and
  // GCC kept them on the stack, a load and a store per ymm and vector. Measured on the Zen 3
  // guest, in-process A/B, together with the tail change below: 1 thread, ~65536 elements,
  // fp32 C = 72 / 128 / 136 / 200 / 1000 0.95 / 0.90 / 0.98 / 0.89 / 0.95x the time, bf16
  // [512, 1000] / [2048, 200] / [8192, 72] 0.97 / 0.91 / 1.01x; 2 threads, fp32 [4096, 1000]
  // 0.93x, [16384, 100] 0.94x, [16384, 72] 0.90x, [8192, 200] 1.01x, SplitR [1024, 32000] /
  // [64, 131072] 1.00x (memory-bound there). AVX-512 (32 registers) keeps them in the loop.
  constexpr bool kSumAfter = kAvx2 && kStore;
  // Vectors jj .. jj + kU - 1 into acc[0 .. kU - 1], their exps side by side (see kExpBatch).
  auto steps = [&](auto batch, int64_t jj, SplitSum* acc) __attribute__((always_inline)) {
    constexpr int kU = decltype(batch)::value;
    Vf z[kU], e[kU];
    for (int u = 0; u < kU; ++u) {
      z[u] = simd::Sub(xAt(kL * (jj + u)), M);
      if constexpr (kZ) simd::Store(zs + kL * (jj + u), z[u]);
    }
    if constexpr (kNormal) simd::ExpNormalRangeN(z, e);
    else simd::ExpNonPositiveN(z, e);
    for (int u = 0; u < kU; ++u) {
      if constexpr (kStore) simd::Store(es + kL * (jj + u), e[u]);
      if constexpr (!kSumAfter) acc[u].Add(e[u]);
    }
  };
  int64_t j = 0;
  for (; j + 2 <= nv; j += 2) {
    if constexpr (kNext) {  // the lines of two vectors
      __builtin_prefetch(next + kL * j * kElemBytes);
      if constexpr (kElemBytes == 4) __builtin_prefetch(next + kL * (j + 1) * kElemBytes);
    }
    if constexpr (kExpBatch == 2) {
      steps(ExpBatch<2>{}, j, sa);
    } else {
      steps(ExpBatch<1>{}, j, &sa[0]);
      steps(ExpBatch<1>{}, j + 1, &sa[1]);
    }
  }
  if (j < nv) steps(ExpBatch<1>{}, j++, &sa[0]);
  Vf eTail = simd::Zero();
  if (tail) {
    const Vf z = simd::Sub(kWide ? simd::Load(zs + kL * nv) : x.Tail(kL * nv, tail, -kInf), M);
    if constexpr (kZ) simd::Store(zs + kL * nv, z);
    // The padded lanes go through the exp as 0 and are set to +0 after it (exp(-inf) = +0, the
    // same bits): as -inf they sent every row's tail down ScaleByPow2's route for subnormal
    // results. Measured on the Zen 3 guest, 1 thread, ~65536 elements, in-process A/B: fp32 C
    // = 72 / 88 / 100 / 200 / 1000 0.86-0.99 / 0.96-0.98 / 0.96 / 0.95-0.99 / 0.98x the time.
    eTail = simd::FillFrom(simd::ExpNonPositive(simd::FillFrom(z, tail, 0.0f)), tail, 0.0f);
    if constexpr (kStore) simd::Store(es + kL * nv, eTail);
  }
  if constexpr (kSumAfter) {  // the whole vectors, vector j -> accumulator j % 2 as in the loop
    for (j = 0; j + 2 <= nv; j += 2) {
      sa[0].Add(simd::Load(es + kL * j));
      sa[1].Add(simd::Load(es + kL * (j + 1)));
    }
    if (j < nv) sa[0].Add(simd::Load(es + kL * j));
  }
  // The tail last, after the whole vectors either way.
  if (tail) {
    if (nv & 1) sa[1].Add(eTail);
    else sa[0].Add(eTail);
  }
  return {simd::Add(sa[0].k, sa[1].k), simd::Add(sa[0].t, sa[1].t)};
}
template <bool kStore, bool kNext, bool kZ, typename In>
ChunkStat ChunkStatsT(const In x, int64_t n, float* es, const char* next, float* zs) {
  Vf mn;
  const float m = ChunkMaxT<In::kWidenOnce, kExpRangeCheck>(x, n, zs, &mn);
  const ExpSums sums = kExpRangeCheck && n >= kL && simd::InExpNormalRange(mn, simd::Set(ChunkExpRef(m)))
                           ? ChunkExpSumsT<kStore, kNext, kZ, true>(x, n, m, es, next, zs)
                           : ChunkExpSumsT<kStore, kNext, kZ, false>(x, n, m, es, next, zs);
  const float k = simd::ReduceSum(sums.k);
  const float t = simd::ReduceSum(sums.t);
  return {m, static_cast<double>(k) + static_cast<double>(t), k, t};
}

// es (optional) receives exp(x - max); zs: kSceChunk floats of stage (16-bit rows widened once;
// keepZ, with es: x - max for ChunkApplyT); next (optional): see ChunkStatsT.
template <typename In, typename T>
ChunkStat ChunkStats(const In& x, int64_t n, float* es, float* zs, bool keepZ, const T* next) {
  const char* nx = reinterpret_cast<const char*>(next);
  if (keepZ) return next ? ChunkStatsT<true, true, true>(x, n, es, nx, zs) : ChunkStatsT<true, false, true>(x, n, es, nullptr, zs);
  if (next) return es ? ChunkStatsT<true, true, false>(x, n, es, nx, zs) : ChunkStatsT<false, true, false>(x, n, nullptr, nx, zs);
  return es ? ChunkStatsT<true, false, false>(x, n, es, nullptr, zs) : ChunkStatsT<false, false, false>(x, n, nullptr, nullptr, zs);
}

// Writes backprop = e * scale - y over one chunk and returns its loss part
// sum y * (L - (x - m)) (fused multiply-adds into 4 accumulators) (per element, so 0 * inf is NaN as in TensorFlow);
// kZ (FullLoad): sum y * (x - m) instead, and *ySum = sum y (vector j to accumulator j % 2).
// kParts (FullLoadRowBlocks, with kZ): the two sums are stored in lossPart and yPart before their
// ReduceSum, each folded over its accumulators (16 floats), and the function returns 0. e = exp(x - mExp): read
// from es (kLoad: the values ChunkStats stored for this chunk) or recomputed with the same
// operations, so both give the same bits. FullLoad: mExp = m, scale = 1 / s. SplitR:
// mExp = the chunk's own reference (ChunkExpRef), scale = SceChunkScale.
// kZ (FullLoad, with kLoad): x - m is read from zs, where ChunkStats stored it, instead of
// loading x again: the same bits (the stats pass subtracted ChunkExpRef(m), which differs from m
// only for an all -inf row, whose loss is NaN either way: its s is 0 and LanesLog's L NaN), one subtraction
// fewer and, for 16-bit types, no second widening. Measured on AVX-512 Zen 4, in-cache
// [64, 1000], 1 thread, 6 alternations: bf16 / fp16 0.94x the time, fp32 0.98x.
//
// kStream: dst is the backprop in memory and bp its place in an L1 stage, written out with
// non-temporal stores at the end, and with kPieces every 16 vectors too, so that the loads of a
// long chunk and its stores to memory overlap. Through `lines` (bp = lines->Next(dst)) when dst
// is element-aligned, as a piece of its run; otherwise bp is a stage of its own, copied to dst
// (at 64-byte boundaries of dst) with StreamCopy. Measured on AVX-512 Zen 4, 2 threads: SplitR
// 0.87-0.96x the time in pieces; FullLoad rows of 1000 classes 2-16 % slower (four copies per
// row instead of one), so FullLoad copies once.
// kZX (FullLoad fp32 rows of SceTiling::fullLoadRereadX, with kZ): x - m is taken again from x
// (subtracting ChunkExpRef(m), as the stats pass did; padded tail lanes 0, as zs holds them):
// the same bits as reading zs, which ChunkStats then does not store.
template <bool kLoad, bool kStream, bool kPieces, bool kZ, bool kParts, typename T, typename InX, typename InY, bool kZX = false>
float ChunkApplyT(const InX x, const InY y, T* bp, T* dst, simd::LineStream* lines, int64_t n, float m, float L,
                  float scale, const float* es, float mExp, const float* zs, float* ySum, float* lossPart, float* yPart) {
  int64_t copied = 0;  // kStream: elements of the stage already handed on
  auto flush = [&](int64_t upto) {  // hands on [copied, upto) (StreamCopy: to a 64-byte boundary of dst)
    if constexpr (kStream) {
      if (lines) {
        lines->Commit(static_cast<size_t>(upto - copied) * sizeof(T));
        copied = upto;
        return;
      }
      int64_t cut = n;
      if (upto < n) {
        if (reinterpret_cast<uintptr_t>(dst) % sizeof(T) != 0) return;  // all at the end
        cut = upto - static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst + upto) % 64 / sizeof(T));
      }
      if (cut <= copied) return;
      simd::StreamCopy(dst + copied, bp + copied, static_cast<size_t>(cut - copied) * sizeof(T));
      copied = cut;
    }
  };
  const int64_t nv = n / kL;
  const int tail = static_cast<int>(n % kL);
  const Vf M = simd::Set(m), Scale = simd::Set(scale), Lv = simd::Set(L), Me = simd::Set(mExp);
  const Vf Mz = simd::Set(ChunkExpRef(m));  // kZX
  Vf la[4] = {simd::Zero(), simd::Zero(), simd::Zero(), simd::Zero()};
  Vf ya[2] = {simd::Zero(), simd::Zero()};  // kZ: sum y, vector j to accumulator j % 2
  // Returns the backprop of vector jj; acc = la[jj % 4], yacc = ya[jj % 2] (constant indices at
  // every call: an accumulator array indexed at run time would live on the stack).
  auto step = [&](int64_t jj, Vf& acc, Vf& yacc) {
    x.Prefetch(kL * jj);
    y.Prefetch(kL * jj);
    const Vf yv = y.At(kL * jj);
    Vf e, z;  // exp(x - mExp), x - m
    if constexpr (kZ) {
      e = simd::Load(es + kL * jj);
      if constexpr (kZX) z = simd::Sub(x.At(kL * jj), Mz);
      else z = simd::Load(zs + kL * jj);
    } else {
      const Vf xv = x.At(kL * jj);
      if constexpr (kLoad) e = simd::Load(es + kL * jj);
      else e = simd::ExpNonPositive(simd::Sub(xv, Me));
      z = simd::Sub(xv, M);
    }
    if constexpr (kZ) {
      acc = simd::MulAdd(yv, z, acc);
      yacc = simd::Add(yacc, yv);
    } else {
      acc = simd::MulAdd(yv, simd::Sub(Lv, z), acc);
    }
    return simd::MulSub(e, Scale, yv);
  };
  int64_t j = 0;
  for (; j + 4 <= nv; j += 4) {
    simd::StoreAsPair(bp + kL * j, step(j, la[0], ya[0]), step(j + 1, la[1], ya[1]));
    simd::StoreAsPair(bp + kL * (j + 2), step(j + 2, la[2], ya[0]), step(j + 3, la[3], ya[1]));
    if constexpr (kPieces)
      if ((j + 4) % 16 == 0) flush(kL * (j + 4));
  }
  if (j < nv) simd::StoreAs(bp + kL * j, step(j, la[0], ya[0])), ++j;  // j % 4 == 0 here
  if (j < nv) simd::StoreAs(bp + kL * j, step(j, la[1], ya[1])), ++j;
  if (j < nv) simd::StoreAs(bp + kL * j, step(j, la[2], ya[0])), ++j;
  if (tail) {
    // Padded lanes: y = 0 and a finite z (x = 0, or z = 0 from the stage) add 0 to the loss;
    // their backprop is not stored.
    const Vf yv = y.Tail(kL * nv, tail, 0.0f);
    Vf e, z;
    if constexpr (kZ) {
      e = simd::Load(es + kL * nv);
      if constexpr (kZX) z = simd::FillFrom(simd::Sub(x.Tail(kL * nv, tail, 0.0f), Mz), tail, 0.0f);
      else z = simd::LoadN(zs + kL * nv, tail, 0.0f);
    } else {
      const Vf xv = x.Tail(kL * nv, tail, 0.0f);
      if constexpr (kLoad) e = simd::Load(es + kL * nv);
      else e = simd::ExpNonPositive(simd::Sub(xv, Me));
      z = simd::Sub(xv, M);
    }
    simd::StoreAsN(bp + kL * nv, simd::MulSub(e, Scale, yv), tail);
    if constexpr (kZ) {
      UpdateAt(la, nv, [&](Vf a) { return simd::MulAdd(yv, z, a); });
      if (nv & 1) ya[1] = simd::Add(ya[1], yv);
      else ya[0] = simd::Add(ya[0], yv);
    } else {
      const Vf d = simd::Sub(Lv, z);
      UpdateAt(la, nv, [&](Vf a) { return simd::MulAdd(yv, d, a); });
    }
  }
  flush(n);
  if constexpr (kParts) {
    simd::Store(lossPart, Fold4(la[0], la[1], la[2], la[3]));
    simd::Store(yPart, simd::Add(ya[0], ya[1]));
    return 0.0f;
  }
  if constexpr (kZ) *ySum = simd::ReduceSum(simd::Add(ya[0], ya[1]));
  return simd::ReduceSum(Fold4(la[0], la[1], la[2], la[3]));
}

// Backprop of a chunk goes to bp, or (streamBackprop) through an L1 stage that ChunkApplyT
// copies out with non-temporal stores: the row positions, and so the bits, are the same either
// way, and the stage makes the stream stores aligned whatever the row's address. lines: the
// stage as a LineStream (backprop element-aligned), else null and the stage is used per chunk.
template <typename T>
struct BpOut {
  bool stream;
  T* stage;
  simd::LineStream* lines;
};

// kPieces: stream a SplitR chunk out in pieces (see ChunkApplyT); FullLoad rows copy once.
// rereadX (FullLoad fp32): x - m from x, not zs (ChunkApplyT's kZX).
template <bool kPieces, typename T, typename InX, typename InY>
float ChunkApply(const InX& x, const InY& y, const BpOut<T>& out, T* bp, int64_t n, float m, float L,
                 float scale, const float* es, float mExp, const float* zs, float* ySum = nullptr, bool rereadX = false) {
  T* const none = nullptr;
  T* const stage = out.lines ? out.lines->Next(bp) : out.stage;  // used when streaming
  if (zs) {  // FullLoad
    if constexpr (sizeof(T) == 4) {
      if (rereadX)
        return out.stream ? ChunkApplyT<true, true, kPieces, true, false, T, InX, InY, true>(x, y, stage, bp, out.lines, n, m, L, scale, es, mExp, zs, ySum, nullptr, nullptr)
                          : ChunkApplyT<true, false, false, true, false, T, InX, InY, true>(x, y, bp, none, nullptr, n, m, L, scale, es, mExp, zs, ySum, nullptr, nullptr);
    }
    return out.stream ? ChunkApplyT<true, true, kPieces, true, false>(x, y, stage, bp, out.lines, n, m, L, scale, es, mExp, zs, ySum, nullptr, nullptr)
                      : ChunkApplyT<true, false, false, true, false>(x, y, bp, none, nullptr, n, m, L, scale, es, mExp, zs, ySum, nullptr, nullptr);
  }
  if (out.stream)
    return es ? ChunkApplyT<true, true, kPieces, false, false>(x, y, stage, bp, out.lines, n, m, L, scale, es, mExp, nullptr, nullptr, nullptr, nullptr)
              : ChunkApplyT<false, true, kPieces, false, false>(x, y, stage, bp, out.lines, n, m, L, scale, nullptr, mExp, nullptr, nullptr, nullptr, nullptr);
  return es ? ChunkApplyT<true, false, false, false, false>(x, y, bp, none, nullptr, n, m, L, scale, es, mExp, nullptr, nullptr, nullptr, nullptr)
            : ChunkApplyT<false, false, false, false, false>(x, y, bp, none, nullptr, n, m, L, scale, nullptr, mExp, nullptr, nullptr, nullptr, nullptr);
}

// FullLoadRowBlocks' apply pass: ChunkApply's FullLoad case with kParts (a function of its own:
// another call site of ChunkApply changed what GCC inlines into FullLoadRows on AVX2).
template <typename T, typename InX, typename InY>
void ChunkApplyParts(const InX& x, const InY& y, const BpOut<T>& out, T* bp, int64_t n, float m, float scale,
                     const float* es, const float* zs, float* lossPart, float* yPart) {
  if (out.stream) {
    T* const stage = out.lines ? out.lines->Next(bp) : out.stage;
    ChunkApplyT<true, true, false, true, true>(x, y, stage, bp, out.lines, n, m, 0.0f, scale, es, m, zs, nullptr, lossPart, yPart);
  } else {
    ChunkApplyT<true, false, false, true, true>(x, y, bp, static_cast<T*>(nullptr), nullptr, n, m, 0.0f, scale, es, m, zs,
                                                nullptr, lossPart, yPart);
  }
}

// How a kernel's backprop leaves: plain stores, or streamed through `stage` (as `lines` when
// backprop is element-aligned, so that every access to the stage is).
template <typename T>
BpOut<T> BackpropOut(const SceTiling& t, T* stage, simd::LineStream* lines, const T* bp) {
  const bool aligned = reinterpret_cast<uintptr_t>(bp) % sizeof(T) == 0;
  return {t.streamBackprop, stage, t.streamBackprop && aligned ? lines : nullptr};
}
template <typename T>
void EndStream(const BpOut<T>& out) {
  if (out.lines) out.lines->Finish();
  if (out.stream) simd::StreamFence();
}

inline int64_t ChunkLen(const SceTiling& t, int64_t c) {
  return c == t.rLoopTime - 1 ? t.rLoopTile : kSceChunk;
}

// The losses of n <= 16 FullLoad rows, row i's to lb[i * lossStride]: L = log(s + r) for the 16
// lanes with one vector log (LanesLog; lanes from n on are set to s = 1, r = 0), then
// L * sum y - sum y * z in double (see FullLoadRows).
template <typename T>
__attribute__((always_inline)) inline void StoreRowLosses(float* ps, float* pr, const float* py, const float* pyz,
                                                          int n, T* lb, int64_t lossStride) {
  for (int i = n; i < kL; ++i) ps[i] = 1.0f, pr[i] = 0.0f;
  Vf inv, L;
  LanesLog(simd::Load(ps), simd::Load(pr), &inv, &L);
  alignas(64) float pl[kL];
  simd::Store(pl, L);
  for (int i = 0; i < n; ++i) {
    const double loss = static_cast<double>(pl[i]) * static_cast<double>(py[i]) - static_cast<double>(pyz[i]);
    lb[i * lossStride] = FromFloat<T>(static_cast<float>(loss));
  }
}

// FullLoad rows of up to RowBlockMaxC classes, 16 at a time, each pass over the 16 rows before
// the next: the same operations per row as FullLoadRows (so the same bits), but the five
// reductions of a row (max, the two halves of the exp sum, the two loss sums) are done for 16
// rows side by side (simd::ReduceSumRows16 / ReduceMaxRows16), and so are the scalar steps
// between the passes. One row at a time, a short row is a chain of dependent reductions and
// scalar steps. Measured on the Intel Xeon guest (AVX-512), both libraries alternating in one
// process, against single rows: 1 thread, ~65536 elements (in L2), fp32 C = 64 / 80 / 100
// 0.65-0.70 / 0.72 / 0.77-0.86x the time; 2 threads [16384, C] (in the last-level cache, which
// bounds fp32 there), fp32 C = 64 / 72 / 80 0.90-0.94 / 0.96 / 0.95x, bf16 C = 128 0.81x, fp16
// C = 112 / 128 0.78 / 0.82x. The blocks keep 16 rows' x, y, exp and stage in L1, 16 x C x (8 + 3
// x element bytes): fp32 rows of 96-128 classes took 1.0-1.17x the single rows' time (40 KiB at
// C = 128; only in L2 was C = 100 faster, 0.77-0.86x), so fp32 stops at 80 classes (AVX2: below). 16-bit
// rows, more compute per byte, gain up to 192 classes (stop 32; the limit had been 128): 1
// thread, ~1M elements, bf16 C = 129 / 144 / 160 / 176 / 192 0.70 / 0.72 / 0.76 / 0.78 / 0.93x
// the single rows' time, fp16 C = 129 / 160 / 192 0.73 / 0.76 / 0.87x; 2 threads, ~4M
// elements, bf16 C = 129 / 144 / 192 0.84 / 0.73 / 0.88x; the AVX2 tier on the same core (1
// thread) 0.83-0.98x (one fp16 C = 192 reading of 1.08x was 0.88x when repeated). Beyond that
// the blocks' L1 share runs out: bf16 C = 240 / 256 1.03 / 0.97x at 1 thread, 0.97 / 1.06x at
// 2 (fp16 C = 256 1.08x).
// The AVX2 tier's fp32 rows gain up to 144 classes (stop 34, Zen 3 guest, A/B in one process,
// the same bits): 1 thread, ~65536 elements (L2), C = 96 / 128 / 129 / 144 0.91 / 0.91 / 0.91 /
// 0.98x the time of single rows; 2 threads, ~4M elements, C = 96 / 112 / 129 / 136 / 143
// 0.88-0.92 / 0.83-0.96 / 0.89-0.95 / 0.75-0.96 / 0.87-0.93x, C = 128 0.97-1.09x (at the memcpy
// bound there either way), C = 144 0.87-1.03x; C = 160 / 192 / 256 0.97-1.04 / 1.10 / 1.08x.
template <typename T>
constexpr int64_t RowBlockMaxC() { return sizeof(T) == 4 ? (kAvx2 ? 144 : 80) : 192; }  // the stages' size too
template <typename T, bool kXS, bool kYS>
ACLNN_SCE_FLATTEN void FullLoadRowBlocks(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  const SceTiling& t = k.tiling;
  const int64_t R = t.R;
  const int64_t Rp = (R + kL - 1) / kL * kL;  // a row's stride in es and zs
  constexpr bool kWide = RowIn<T, kXS>::kWidenOnce;
  // The exp range check (kExpRangeCheck) costs a short row a minimum per vector and a check
  // per row: AVX2 fp32 rows of 64 / 80 classes measured 1.01-1.04x the time with it (bf16
  // 0.91x), so they go without.
  constexpr bool kCheck = kExpRangeCheck && (kWide || !kAvx2);
  alignas(64) float es[kL * RowBlockMaxC<T>()];
  alignas(64) float zs[kL * RowBlockMaxC<T>()];  // 16-bit x widened once, then x - max
  alignas(64) T stage[RowBlockMaxC<T>() + simd::LineStream::kSlack / sizeof(T)];  // a row + LineStream's carry
  // Per row of the block: a folded partial vector, 16 floats. Rows past a short last block keep
  // earlier values (zeros at first), which only reach lanes that are not used.
  alignas(64) float part[kL * kL] = {}, part2[kL * kL] = {};
  alignas(64) float m[kL], ks[kL], ts[kL], ps[kL], pr[kL], py[kL], pyz[kL], scale[kL], rowM[kL];
  const T* xb = static_cast<const T*>(k.x);
  const T* yb = static_cast<const T*>(k.y);
  T* bpb = static_cast<T*>(k.bp);
  T* lb = static_cast<T*>(k.loss);
  simd::LineStream lines(stage);  // streamed rows adjacent in memory go out as one run
  const BpOut<T> out = BackpropOut(t, stage, &lines, bpb);
  for (int64_t b = a0; b < a1; b += kL) {
    const int nb = static_cast<int>(std::min<int64_t>(kL, a1 - b));
    auto xRow = [&](int r) { return RowIn<T, kXS>(xb + (b + r) * k.xRowStride); };
    Vf mn[kL];  // each row's minimum (kCheck)
    for (int r = 0; r < nb; ++r) simd::Store(part + kL * r, ChunkMaxV<kWide, kCheck>(xRow(r), R, zs + r * Rp, &mn[r]));
    simd::Store(m, simd::ReduceMaxRows16(part));
    for (int r = 0; r < nb; ++r) {
      // The row the stats pass 16 rows on reads (none for broadcast features).
      const T* next = !kXS && b + r + kL < a1 ? xb + (b + r + kL) * k.xRowStride : nullptr;
      const char* nx = reinterpret_cast<const char*>(next);
      const bool normal = kCheck && R >= kL && simd::InExpNormalRange(mn[r], simd::Set(ChunkExpRef(m[r])));
      const ExpSums sums =
          normal ? (next ? ChunkExpSumsT<true, true, true, true>(xRow(r), R, m[r], es + r * Rp, nx, zs + r * Rp)
                         : ChunkExpSumsT<true, false, true, true>(xRow(r), R, m[r], es + r * Rp, nullptr, zs + r * Rp))
                 : (next ? ChunkExpSumsT<true, true, true>(xRow(r), R, m[r], es + r * Rp, nx, zs + r * Rp)
                         : ChunkExpSumsT<true, false, true>(xRow(r), R, m[r], es + r * Rp, nullptr, zs + r * Rp));
      simd::Store(part + kL * r, sums.k);
      simd::Store(part2 + kL * r, sums.t);
    }
    simd::Store(ks, simd::ReduceSumRows16(part));
    simd::Store(ts, simd::ReduceSumRows16(part2));
    for (int r = 0; r < nb; ++r) {
      const SceOnline row = SceOnline::One(m[r], static_cast<double>(ks[r]) + static_cast<double>(ts[r]));
      const float sf = static_cast<float>(row.S);
      ps[r] = sf;
      pr[r] = static_cast<float>(row.S - static_cast<double>(sf));
      scale[r] = 1.0f / sf;
      rowM[r] = row.m;
    }
    for (int r = 0; r < nb; ++r) {
      ChunkApplyParts(xRow(r), RowIn<T, kYS>(yb + (b + r) * k.yRowStride), out, bpb + (b + r) * k.bpRowStride, R,
                      rowM[r], scale[r], es + r * Rp, zs + r * Rp, part + kL * r, part2 + kL * r);
    }
    simd::Store(pyz, simd::ReduceSumRows16(part));
    simd::Store(py, simd::ReduceSumRows16(part2));
    StoreRowLosses(ps, pr, py, pyz, nb, lb + b * k.lossStride, k.lossStride);
  }
  EndStream(out);
}

// FullLoad (R <= kSceChunk): each row stays in L1 between its passes (fp32 rows of
// SceTiling::fullLoadRereadX keep no copy of x - max, so that long ones still fit).
//
// The apply pass needs only 1 / s: the loss sum y * (L - z) is taken as L * sum y - sum y * z
// (both terms >= 0 for labels >= 0, so nothing cancels), and L for 16 rows at a time (LanesLog,
// as the lane path), so no log call sits in a row's chain of max, exp, sum, 1 / s and apply.
// Measured on AVX-512 Zen 4 against a std::log per row between the passes, 1 and 2 threads:
// fp32 C = 64, 100, 256 0.80-0.93x the time (AVX2: C = 80 / 100 / 256 0.82 / 0.92 / 0.96x, C =
// 64 1.0x), C = 1000 0.96-1.02x; with the log removed altogether (wrong results, a bound) C = 64
// / 100 took 0.80-0.85x. Issuing row a + 1's stats pass before row a's apply pass (two rows in
// flight, own stages) gained nothing more (0.96-1.04x at C = 64 to 256) and cost C = 1000
// 1.07-1.19x: without the log call the core already overlaps consecutive rows.
//
// Flattened on AVX-512 (ACLNN_SCE_FLATTEN: ChunkStatsT and ChunkMaxT inlined here, not in
// SplitR): as calls they cost short rows 3-6 % (fp32 [4096, 64], [1024, 80], [2048, 128] in
// cache, 1 thread, A/B in both orders on Zen 4, the same bits; bf16 and C = 1000 unchanged).
// Inlined everywhere, SplitR [1024, 32000] took 1.03-1.07x; on AVX2 (16 vector registers)
// inlining made [1024, 100] / [4096, 256] fp32 1.16x slower.
template <typename T, bool kXS, bool kYS>
ACLNN_SCE_FLATTEN void FullLoadRows(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  const SceTiling& t = k.tiling;
  const int64_t R = t.R;
  if (R <= RowBlockMaxC<T>()) return FullLoadRowBlocks<T, kXS, kYS>(k, a0, a1);
  alignas(64) float es[kSceChunk];
  alignas(64) float zs[kSceChunk];  // 16-bit x widened once, then x - max (ChunkStatsT)
  alignas(64) T stage[kSceChunk + simd::LineStream::kSlack / sizeof(T)];  // a row + LineStream's carry
  const T* xb = static_cast<const T*>(k.x);
  const T* yb = static_cast<const T*>(k.y);
  T* bpb = static_cast<T*>(k.bp);
  T* lb = static_cast<T*>(k.loss);
  // Streamed rows adjacent in memory go out as one run of whole lines.
  simd::LineStream lines(stage);
  const BpOut<T> out = BackpropOut(t, stage, &lines, bpb);
  // fp32 only: a 16-bit row's zs holds x widened, which its apply pass needs (the stats pass and
  // the apply pass must agree on whether zs keeps x - max).
  const bool rereadX = sizeof(T) == 4 && t.fullLoadRereadX;
  // Up to 16 rows' loss parts, waiting for their L.
  alignas(64) float ps[kL], pr[kL], py[kL], pyz[kL];
  int pending = 0;
  auto flushLosses = [&](int64_t aEnd) {  // rows [aEnd - pending, aEnd)
    StoreRowLosses(ps, pr, py, pyz, pending, lb + (aEnd - pending) * k.lossStride, k.lossStride);
    pending = 0;
  };
  for (int64_t a = a0; a < a1; ++a) {
    const RowIn<T, kXS> x(xb + a * k.xRowStride);
    // What the stats pass after this one reads (none for broadcast features).
    const T* nextRow = !kXS && a + 1 < a1 ? xb + (a + 1) * k.xRowStride : nullptr;
    const ChunkStat st = ChunkStats(x, R, es, zs, !rereadX, nextRow);
    const SceOnline row = SceOnline::One(st.m, st.s);
    const float sf = static_cast<float>(row.S);
    ps[pending] = sf;
    pr[pending] = static_cast<float>(row.S - static_cast<double>(sf));
    // L = 0: unused here (kZ), the loss is formed in flushLosses.
    pyz[pending] = ChunkApply<false>(x, RowIn<T, kYS>(yb + a * k.yRowStride), out, bpb + a * k.bpRowStride, R,
                                     row.m, 0.0f, 1.0f / sf, es, row.m, zs, &py[pending], rereadX);
    if (++pending == kL) flushLosses(a + 1);
  }
  if (pending) flushLosses(a1);
  EndStream(out);
}

// SplitR (R > kSceChunk), and FullLoad through FullLoadRows.
template <typename T, bool kXS, bool kYS>
void Rows(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  const SceTiling& t = k.tiling;
  const int64_t R = t.R;
  if (R <= kSceChunk) return FullLoadRows<T, kXS, kYS>(k, a0, a1);
  alignas(64) float zs[kSceChunk];  // 16-bit x widened once (ChunkStatsT)
  alignas(64) T stage[kSceChunk + simd::LineStream::kSlack / sizeof(T)];
  simd::LineStream lines(stage);  // the block's chunks and rows, in memory order
  const BpOut<T> out = BackpropOut(t, stage, &lines, static_cast<T*>(k.bp));
  float mc[kSceExpScratchMaxChunks];
  // SplitR with a scratch: this block's row of exp values (tasks own disjoint scratch rows).
  float* ex = k.expScratch ? k.expScratch + (a0 / t.blockFactor) * t.expScratchStride : nullptr;
  const T* xb = static_cast<const T*>(k.x);
  const T* yb = static_cast<const T*>(k.y);
  T* bpb = static_cast<T*>(k.bp);
  T* lb = static_cast<T*>(k.loss);
  for (int64_t a = a0; a < a1; ++a) {
    const RowIn<T, kXS> x(xb + a * k.xRowStride);
    const RowIn<T, kYS> y(yb + a * k.yRowStride);
    T* bp = bpb + a * k.bpRowStride;
    double loss = 0.0;
    // What the stats pass after this one reads (none for broadcast features).
    const T* nextRow = !kXS && a + 1 < a1 ? xb + (a + 1) * k.xRowStride : nullptr;
    auto nextChunk = [&](int64_t c) { return !kXS && c + 1 < t.rLoopTime ? x.p + (c + 1) * kSceChunk : nextRow; };
    SceOnline online;  // (max, sum) per chunk, folded in chunk order, then one apply pass
    if (ex == nullptr) {  // no scratch (rows too long for it): the apply pass recomputes exp
      for (int64_t c = 0; c < t.rLoopTime; ++c) {
        const ChunkStat st = ChunkStats(x.Skip(c * kSceChunk), ChunkLen(t, c), nullptr, zs, false, nextChunk(c));
        online.Add(st.m, st.s);
      }
      const SceRowRecord row = online.Finish();
      for (int64_t c = 0; c < t.rLoopTime; ++c) {
        // The chunk maximum again (a max pass, cheap next to the exp it saves storing).
        const float m = ChunkMax(x.Skip(c * kSceChunk), ChunkLen(t, c));
        loss += ChunkApply<true>(x.Skip(c * kSceChunk), y.Skip(c * kSceChunk), out, bp + c * kSceChunk,
                                 ChunkLen(t, c), row.m, row.L, SceChunkScale(m, row), nullptr,
                                 ChunkExpRef(m), nullptr);
      }
    } else {
      for (int64_t c = 0; c < t.rLoopTime; ++c) {
        const ChunkStat st = ChunkStats(x.Skip(c * kSceChunk), ChunkLen(t, c), ex + c * kSceChunk, zs, false, nextChunk(c));
        mc[c] = st.m;
        online.Add(st.m, st.s);
      }
      const SceRowRecord row = online.Finish();
      for (int64_t c = 0; c < t.rLoopTime; ++c) {
        loss += ChunkApply<true>(x.Skip(c * kSceChunk), y.Skip(c * kSceChunk), out, bp + c * kSceChunk,
                                 ChunkLen(t, c), row.m, row.L, SceChunkScale(mc[c], row),
                                 ex + c * kSceChunk, ChunkExpRef(mc[c]), nullptr);
      }
    }
    lb[a * k.lossStride] = FromFloat<T>(static_cast<float>(loss));
  }
  EndStream(out);
}

template <typename T, bool kXS, bool kYS>
void SplitPhase(const SceKernelArgs& k, int phase, int64_t task) {
  const SceTiling& t = k.tiling;
  const int64_t K = t.rLoopTime;
  if (phase == 1 || phase == 3) {  // per row: combine chunk stats / chunk loss parts in order
    const int64_t a = task;
    const SceChunkRecord* rec = k.chunks + a * K;
    if (phase == 1) {
      SceOnline online;
      for (int64_t c = 0; c < K; ++c)
        online.Add(rec[c].m, static_cast<double>(rec[c].k) + static_cast<double>(rec[c].t));
      k.rows[a] = online.Finish();
    } else {
      double loss = 0.0;
      for (int64_t c = 0; c < K; ++c) loss += rec[c].lossPart;
      static_cast<T*>(k.loss)[a * k.lossStride] = FromFloat<T>(static_cast<float>(loss));
    }
    return;
  }
  const int64_t a = task / K, c = task % K;
  const RowIn<T, kXS> x = RowIn<T, kXS>(static_cast<const T*>(k.x) + a * k.xRowStride).Skip(c * kSceChunk);
  SceChunkRecord& rec = k.chunks[task];
  // Row a's exp values (scratch rows are per row on this path), or null: recompute.
  float* ex = k.expScratch ? k.expScratch + a * t.expScratchStride + c * kSceChunk : nullptr;
  if (phase == 0) {
    // The next task of the block is the next chunk, or the next row's first.
    const T* next = kXS ? nullptr
                  : c + 1 < K ? x.p + kSceChunk
                  : a + 1 < t.A ? static_cast<const T*>(k.x) + (a + 1) * k.xRowStride : nullptr;
    alignas(64) float xs[kSceChunk];
    const ChunkStat st = ChunkStats(x, ChunkLen(t, c), ex, xs, false, next);
    rec.m = st.m;
    rec.k = st.k;
    rec.t = st.t;
  } else {
    const RowIn<T, kYS> y =
        RowIn<T, kYS>(static_cast<const T*>(k.y) + a * k.yRowStride).Skip(c * kSceChunk);
    T* bp = static_cast<T*>(k.bp) + a * k.bpRowStride + c * kSceChunk;
    const SceRowRecord& row = k.rows[a];
    alignas(64) T stage[kSceChunk + simd::LineStream::kSlack / sizeof(T)];
    simd::LineStream lines(stage);  // one chunk: a run of its own
    const BpOut<T> out = BackpropOut(t, stage, &lines, static_cast<T*>(k.bp));
    rec.lossPart = ChunkApply<true>(x, y, out, bp, ChunkLen(t, c), row.m, row.L, SceChunkScale(rec.m, row),
                              ex, ChunkExpRef(rec.m), nullptr);
    EndStream(out);
  }
}

// ---- lane path (kPackedRows, kNchwLanes): 16 rows or positions in the lanes ----------------

// s + r = k + t exactly for the split sum (TwoSum).
__attribute__((always_inline)) inline void SplitSumToPair(const SplitSum& sum, Vf* s, Vf* r) {
  const Vf S = simd::Add(sum.k, sum.t);
  const Vf bt = simd::Sub(S, sum.k);
  *r = simd::Add(simd::Sub(sum.k, simd::Sub(S, bt)), simd::Sub(sum.t, bt));
  *s = S;
}

// kG independent groups of 16 lanes (16 rows or positions each) in one pass: lx(g, c), ly(g, c)
// are the lanes of class c in group g, sb(g, c, v) stores its backprop, loss[g] receives its
// loss. Classes are walked in order, in blocks of kLaneBlock. es: kG * C * 16 floats of scratch
// (group g at es + g * C * 16), or null.
// Every group sees exactly the operations of kG = 1, so the bits do not depend on kG; the groups
// are only interleaved. A group is a chain of dependent steps (the max, the two sums and the loss
// accumulate class by class, the log waits for the sums, the apply pass for the log) of several
// hundred instructions, more than the core's reorder window, so one group at a time leaves the
// core waiting on latencies; two interleaved chains fill it where the group is short (see
// PackedRowsT and NchwLanes for the measurements).
template <int kG, typename LX, typename LY, typename SB>
__attribute__((always_inline)) inline void LanesCoreG(int64_t C, LX lx, LY ly, SB sb, float* es, Vf* loss) {
#define ACLNN_FOR_G _Pragma("GCC unroll 4") for (int g = 0; g < kG; ++g)
  Vf m[kG], mn[kG];  // mn: the lane minima (kExpRangeCheck)
  ACLNN_FOR_G m[g] = mn[g] = lx(g, 0);
  for (int64_t c = 1; c < C; ++c)
    ACLNN_FOR_G {
      const Vf v = lx(g, c);
      m[g] = simd::Max(m[g], v);
      if constexpr (kExpRangeCheck) mn[g] = simd::Min(mn[g], v);
    }
  bool normal = kExpRangeCheck;
  if constexpr (kExpRangeCheck) ACLNN_FOR_G normal = normal && simd::InExpNormalRange(mn[g], m[g]);
  Vf s[kG], r[kG];
  if (C == 2) {
    // Two classes, one exp: one of z0, z1 is 0 (its exp is exactly 1) and the other is their
    // sum, so e = Exp(z0 + z1) and 1 are the same bits as the loop below gives. The sum 1 + e
    // splits as s + r by Fast2Sum (1 >= e); the general path's k + t is the same real 1 + e, so
    // s and r are the same bits. A NaN in a lane (NaN or +-inf logits, or both -inf) makes e
    // and so s NaN.
    ACLNN_FOR_G {
      const Vf z0 = simd::Sub(lx(g, 0), m[g]), z1 = simd::Sub(lx(g, 1), m[g]);
      const Vf e = simd::ExpNonPositive(simd::Add(z0, z1)), one = simd::Set(1.0f), zero = simd::Zero();
      const Vf e0 = simd::Select(simd::Lt(z0, zero), e, one), e1 = simd::Select(simd::Lt(z1, zero), e, one);
      if (es) {
        simd::Store(es + 2 * kL * g, e0);
        simd::Store(es + 2 * kL * g + kL, e1);
      }
      s[g] = simd::Add(one, e);
      r[g] = simd::Sub(e, simd::Sub(s[g], one));
    }
  } else {
    SplitSum sum[kG];
    for (int64_t c0 = 0; c0 < C; c0 += kLaneBlock) {
      const int64_t c1 = std::min(C, c0 + kLaneBlock);
      SplitSum b[kG];
      // Classes c .. c + kU - 1 of every group, their exps side by side (see kExpBatch).
      auto classes = [&](auto batch, int64_t c) __attribute__((always_inline)) {
        constexpr int kU = decltype(batch)::value;
        ACLNN_FOR_G {
          Vf z[kU], e[kU];
          for (int u = 0; u < kU; ++u) z[u] = simd::Sub(lx(g, c + u), m[g]);
          if (normal) simd::ExpNormalRangeN(z, e);
          else simd::ExpNonPositiveN(z, e);
          for (int u = 0; u < kU; ++u) {
            if (es) simd::Store(es + kL * (g * C + c + u), e[u]);
            b[g].Add(e[u]);
          }
        }
      };
      int64_t c = c0;
      if constexpr (kExpBatch == 2) {
        for (; c + 2 <= c1; c += 2) classes(ExpBatch<2>{}, c);
        // The odd class as one step (a loop here made GCC warn of an out-of-bounds iteration
        // it could not rule out).
        if (c < c1) classes(ExpBatch<1>{}, c);
      } else {
        for (; c < c1; ++c) classes(ExpBatch<1>{}, c);
      }
      ACLNN_FOR_G {
        sum[g].k = simd::Add(sum[g].k, b[g].k);
        sum[g].t = simd::Add(sum[g].t, b[g].t);
      }
    }
    ACLNN_FOR_G SplitSumToPair(sum[g], &s[g], &r[g]);
  }
  Vf inv[kG], L[kG];
  ACLNN_FOR_G {
    LanesLog(s[g], r[g], &inv[g], &L[g]);
    loss[g] = simd::Zero();
  }
  for (int64_t c0 = 0; c0 < C; c0 += kLaneBlock) {
    const int64_t c1 = std::min(C, c0 + kLaneBlock);
    Vf b[kG];
    ACLNN_FOR_G b[g] = simd::Zero();
    for (int64_t c = c0; c < c1; ++c)
      ACLNN_FOR_G {
        const Vf yv = ly(g, c);
        const Vf z = simd::Sub(lx(g, c), m[g]);
        const Vf e = es ? simd::Load(es + kL * (g * C + c)) : normal ? simd::ExpNormalRange(z) : simd::ExpNonPositive(z);
        sb(g, c, simd::MulSub(e, inv[g], yv));
        b[g] = simd::Add(b[g], simd::Mul(yv, simd::Sub(L[g], z)));
      }
    ACLNN_FOR_G loss[g] = simd::Add(loss[g], b[g]);
  }
#undef ACLNN_FOR_G
}

// One group: lx(c), ly(c), sb(c, v); es: C * 16 floats or null. Returns the group's loss.
template <typename LX, typename LY, typename SB>
__attribute__((always_inline)) inline Vf LanesCore(int64_t C, LX lx, LY ly, SB sb, float* es) {
  Vf loss;
  LanesCoreG<1>(
      C, [&](int, int64_t c) { return lx(c); }, [&](int, int64_t c) { return ly(c); },
      [&](int, int64_t c, Vf v) { sb(c, v); }, es, &loss);
  return loss;
}

// A hint for every 64-byte line of n elements of features at x and of labels at y (never
// faults, even past the end of the data).
template <typename T>
__attribute__((always_inline)) inline void PrefetchBlockRows(const T* x, const T* y, int64_t n) {
  const char* xc = reinterpret_cast<const char*>(x);
  const char* yc = reinterpret_cast<const char*>(y);
  for (int64_t b = 0; b < n * static_cast<int64_t>(sizeof(T)); b += 64) {
    __builtin_prefetch(xc + b);
    __builtin_prefetch(yc + b);
  }
}

// C in [2, kScePackedMaxC]: a block of 16 rows is transposed into lanes (class-major scratch)
// and back. kDense: all of x, y, backprop are dense [A, C] and loss is dense, so a full block is
// transposed with vector shuffles straight from memory (and, for kC > 0, every offset in it is a
// compile-time constant: straight-line code). kC = 0: C is read from the tiling at run time (C >
// 16, one copy for all of them; and every C in the portable scalar build, see RunBlockT).
//
// Dense blocks of kC = 0 (rows of 68-254 bytes) fetch the next block while they compute, and
// beyond the last-level cache write backprop through an L1 stage with non-temporal stores. A
// block is 1-4 KiB of features and as much of labels, read 16 bytes from each of 16 rows at a
// time: the hardware prefetchers did not keep up with that, and the core computes ~2000
// instructions per block, more than its reorder window, so the next block's loads only issue
// once the block is done. Measured on AVX-512 Zen 4 against these blocks without either, 1
// thread: [65536,48] fp32 0.53x the time, [65536,96] bf16 0.54x, [65536,33] fp32 0.60x (each
// alone: 0.78x, 0.68-0.82x, 0.69-0.78x); in L3 ([16384,48] fp32) prefetch alone 0.82-0.91x. For
// C <= 16 both cost time there (2 threads, [1048576,10] fp32: 1.02x with the prefetch, 1.22x
// with the stage). On the Zen 3 guest (AVX2) the prefetch pays beyond the cache (fp32 C = 5 to
// 16 0.80-0.98x the time, see SceTiling::prefetchBlocks), so kC > 0 fetches the next block (or
// pair) when the tiling says so; the stage stays out (a non-temporal stage there: C = 7 / 10
// 1.2 / 1.26x, C = 16 0.8x, 2 threads).
//
// Dense blocks of kC > 0 go two at a time through LanesCoreG<2> (the same bits). Measured on
// AVX-512 Zen 4, 1 thread, in-cache [16384, C], fp32 / bf16, the time against one block at a
// time: C = 2 0.82 / 0.75x, 3 0.90x, 4 0.85 / 0.87x, 5 0.90 / 0.82x, 8 0.97 / 0.84-1.07x,
// 13 0.93 / 0.90x, 16 0.89 / 0.86x, but C = 10 1.02 / 0.89x: its block (~600 instructions) is
// bound by throughput, not by its chain. 2 threads, bench/compare: [1048576, 2] fp32 0.73-0.84x,
// fp16 0.71-0.75x, bf16 0.96-1.0x. For kC = 0 (C = 24 to 120) pairs measured no faster (their
// blocks are long enough to fill the core alone) and are not used. The last block of an odd
// count keeps its own LanesCore call: one kG-generic lambda for both cost bf16 C = 8 / 10
// 1.05 / 1.07x (1 thread, 3 alternations; the same bits, other code).
// The AVX2 tier pairs fewer (PackedPairs): a Vf is two of its 16 ymm registers, so two
// groups spill where the block is long. Measured on the Zen 3 guest, 1 thread, ~262144
// elements, in-process A/B, one block at a time against pairs: fp32 C = 2 / 4 / 8 / 10 / 12
// 1.22 / 1.19 / 1.08 / 1.06 / 1.04x the time (pairs kept), C = 13 / 14 1.00x, 16 0.96x; bf16 C
// = 2 / 8 / 10 1.31 / 1.14 / 1.03x, C = 11 / 12 / 13 / 14 / 16 0.90 / 0.91 / 0.89 / 0.84 /
// 0.83x; fp16 C = 10 / 12 / 16 0.93 / 0.96 / 0.89x. 2 threads, [65536, C]: bf16 C = 12 / 13 /
// 16 0.93 / 0.95 / 0.90x, fp32 C = 16 0.96x. It also makes the AVX2 object ~0.3 MB smaller.
template <typename T>
constexpr bool PackedPairs(int c) { return !kAvx2 || c <= (sizeof(T) == 4 ? 12 : 10); }
template <typename T, int kC, bool kDense>
void PackedRowsT(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  constexpr int kCap = kC > 0 ? kC : static_cast<int>(kScePackedMaxC);
  const int C = kC > 0 ? kC : static_cast<int>(k.tiling.R);
  const T* xb = static_cast<const T*>(k.x);
  const T* yb = static_cast<const T*>(k.y);
  T* bpb = static_cast<T*>(k.bp);
  T* lb = static_cast<T*>(k.loss);
  const int64_t xcs = kDense ? 1 : (k.xScalar ? 0 : 1), ycs = kDense ? 1 : (k.yScalar ? 0 : 1);
  const int64_t xrs = kDense ? C : k.xRowStride, yrs = kDense ? C : k.yRowStride;
  const int64_t brs = kDense ? C : k.bpRowStride, ls = kDense ? 1 : k.lossStride;
  // Backprop of class c overwrites the features of class c (B = X): LanesCore's last pass reads
  // class c before it stores class c and reads none of it after, and a smaller scratch leaves
  // more of L1 to the rows (4 x 6 KiB for 96 classes otherwise).
  // kC > 0: two blocks at a time (see LanesCoreG), the second in X2 / Y2, both exp rows in E.
  constexpr int kPair = kDense && kC > 0 && PackedPairs<T>(kC) ? 2 : 1;
  alignas(64) float X[kCap * kL], Y[kCap * kL], E[kPair * kCap * kL], Lo[kL];
  alignas(64) float X2[kPair == 2 ? kCap * kL : 1], Y2[kPair == 2 ? kCap * kL : 1];
  float* const B = X;
  auto lx = [&](int64_t c) { return simd::Load(X + kL * c); };
  auto ly = [&](int64_t c) { return simd::Load(Y + kL * c); };
  auto sb = [&](int64_t c, Vf v) { simd::Store(B + kL * c, v); };
  // C = 2, dense, beyond the last-level cache: full blocks are written with non-temporal
  // stores when backprop and loss start on a 64-byte line (then every block does: a block is
  // 32 elements of backprop and 16 of loss). kC = 0: consecutive blocks (16 rows of backprop
  // each) as one run of LineStream, at any element-aligned address.
  bool stream = false;
  if constexpr (kDense && kC == 2)
    stream = k.tiling.streamBackprop && reinterpret_cast<uintptr_t>(bpb) % 64 == 0 &&
             reinterpret_cast<uintptr_t>(lb) % 64 == 0;
  if constexpr (kDense && kC == 0)
    stream = k.tiling.streamBackprop && reinterpret_cast<uintptr_t>(bpb) % sizeof(T) == 0;
  alignas(64) T stage[kDense && kC == 0 ? kCap * kL + simd::LineStream::kSlack / sizeof(T) : 1];
  simd::LineStream lines(stage);
  // Backprop (in B = X or X2) and loss of a full dense block of kC > 0 classes. Always inlined:
  // GCC had made it a call per block for bf16 (and on AVX2 for every type, C >= 9); measured on
  // the Xeon guest, 1 thread, bf16 [8192, 10] / [65536, 10]: 0.84 / 0.93x the time.
  auto storeBlock = [&](int64_t blk, const float* bp, Vf loss) __attribute__((always_inline)) {
    if constexpr (kDense && kC > 0) {
      if constexpr (kC == 2) {
        if (stream) {
          simd::StoreRows2Stream(bpb + blk * kC, bp);
          simd::StoreAsStream(lb + blk, loss);
          return;
        }
      }
      simd::StoreRowsT<kC>(bpb + blk * kC, bp);  // after both loads: backprop may be x
      simd::StoreAs(lb + blk, loss);
    }
  };
  const bool fetch = kDense && kC > 0 && k.tiling.prefetchBlocks;
  int64_t blk = a0;
  if constexpr (kPair == 2) {
    for (; blk + 2 * kL <= a1; blk += 2 * kL) {
      simd::LoadRowsT<kC>(xb + blk * kC, X);
      simd::LoadRowsT<kC>(yb + blk * kC, Y);
      simd::LoadRowsT<kC>(xb + (blk + kL) * kC, X2);
      simd::LoadRowsT<kC>(yb + (blk + kL) * kC, Y2);
      if (fetch) PrefetchBlockRows<T>(xb + (blk + 2 * kL) * kC, yb + (blk + 2 * kL) * kC, 2 * kL * kC);
      Vf loss[2];
      LanesCoreG<2>(
          C, [&](int g, int64_t c) { return simd::Load((g ? X2 : X) + kL * c); },
          [&](int g, int64_t c) { return simd::Load((g ? Y2 : Y) + kL * c); },
          [&](int g, int64_t c, Vf v) { simd::Store((g ? X2 : X) + kL * c, v); }, E, loss);
      storeBlock(blk, X, loss[0]);
      storeBlock(blk + kL, X2, loss[1]);
    }
  }
  for (; blk < a1; blk += kL) {
    const int nr = static_cast<int>(std::min<int64_t>(kL, a1 - blk));
    if constexpr (kDense) {
      if (nr == kL) {  // a full dense block: shuffle transposes, straight from memory
        Vf loss;
        if constexpr (kC > 0) {
          simd::LoadRowsT<kC>(xb + blk * kC, X);
          simd::LoadRowsT<kC>(yb + blk * kC, Y);
          if (fetch) PrefetchBlockRows<T>(xb + (blk + kL) * kC, yb + (blk + kL) * kC, kL * kC);
          loss = LanesCore(C, lx, ly, sb, E);
        } else {
          simd::LoadRowsN(xb + blk * C, C, X);
          simd::LoadRowsN(yb + blk * C, C, Y);
          // The next block, 16 * sizeof(T) bytes of features and of labels per class: every
          // line of it for fp32, every line twice for 16-bit (a hint past the end never faults).
          const char* xn = reinterpret_cast<const char*>(xb + (blk + kL) * C);
          const char* yn = reinterpret_cast<const char*>(yb + (blk + kL) * C);
          auto lyFetch = [&](int64_t c) {
            __builtin_prefetch(xn + c * kL * static_cast<int64_t>(sizeof(T)));
            __builtin_prefetch(yn + c * kL * static_cast<int64_t>(sizeof(T)));
            return simd::Load(Y + kL * c);
          };
          loss = LanesCore(C, lx, lyFetch, sb, E);
        }
        if constexpr (kC > 0) {
          storeBlock(blk, B, loss);
          continue;
        }
        // After both loads: backprop may be x.
        if (stream) {
          simd::StoreRowsN(lines.Next(bpb + blk * C), C, B);
          lines.Commit(sizeof(T) * kL * C);
        } else {
          simd::StoreRowsN(bpb + blk * C, C, B);
        }
        simd::StoreAs(lb + blk, loss);
        continue;
      }
    }
    for (int r = 0; r < kL; ++r) {
      if (r < nr) {
        const T* xr = xb + (blk + r) * xrs;
        const T* yr = yb + (blk + r) * yrs;
        for (int c = 0; c < C; ++c) {
          X[c * kL + r] = ToFloat(xr[c * xcs]);
          Y[c * kL + r] = ToFloat(yr[c * ycs]);
        }
      } else {
        for (int c = 0; c < C; ++c) X[c * kL + r] = Y[c * kL + r] = 0.0f;
      }
    }
    if (stream) lines.Finish();  // before plain stores into the run's last line
    simd::Store(Lo, LanesCore(C, lx, ly, sb, E));
    for (int r = 0; r < nr; ++r) {
      T* br = bpb + (blk + r) * brs;
      for (int c = 0; c < C; ++c) br[c] = FromFloat<T>(B[c * kL + r]);
      lb[(blk + r) * ls] = FromFloat<T>(Lo[r]);
    }
  }
  if (stream) {
    lines.Finish();
    simd::StreamFence();
  }
}

// kC = 0: C from the tiling (C > 16, see ScePackedTakes).
template <typename T, int kC>
void PackedRows(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  const int64_t C = kC > 0 ? kC : k.tiling.R;
  const bool dense = !k.xScalar && !k.yScalar && k.xRowStride == C && k.yRowStride == C &&
                     k.bpRowStride == C && k.lossStride == 1;
  if (dense) PackedRowsT<T, kC, true>(k, a0, a1);
  else PackedRowsT<T, kC, false>(k, a0, a1);
}

// NCHW, for groups of n <= 16 positions. Features and labels are first copied into
// class-major scratch (16 floats per class and group) that the lane passes read: the class rows
// lie H*W apart, often a multiple of 4 KiB, so they share cache sets (and would not survive until
// a second pass) and alias the backprop stores. Up to 8 groups are copied together
// (tiling.nchwGroups, see kSceNchwMaxGroups), so each class row is read in runs of up to 8 x 64
// bytes. Backprop replaces the features in the scratch and is written out in the same runs
// (non-temporal when the call moves more than the last-level cache): 19 classes x 64-byte stores
// H*W apart, group by group, measured 15 % slower for [8,19,256,256] fp32 than runs of 8 groups.
template <typename T, bool kFull>
void NchwCopyIn(const T* src, int64_t C, int64_t HW, int n, float* dst) {
  for (int64_t c = 0; c < C; ++c) {
    if constexpr (kFull) simd::Store(dst + kL * c, simd::LoadAs(src + c * HW));
    else simd::Store(dst + kL * c, simd::LoadAsN(src + c * HW, n, 0.0f));
  }
}

// kG full groups in the copy scratch, group h at X + 2 * kL * C * h (C class vectors of
// features, then C of labels); backprop replaces the features (LanesCoreG's last pass has read
// class c before it stores it). loss[h]: group h's loss.
// Pairs (kG = 2) always get an exp scratch. Telling GCC so drops the pair body's exp for a null
// es, which it kept once one caller's es was no longer a stack array's address: a body 1.18x as
// long, and NCHW bf16 / fp16 [4, 19, 128, 128] took 1.05x the time (1 thread, AVX2 Zen 3).
template <int kG>
void NchwScratchGroups(int64_t C, float* X, float* es, Vf* loss) {
  if (kG == 2 && es == nullptr) __builtin_unreachable();
  LanesCoreG<kG>(
      C, [&](int h, int64_t c) { return simd::Load(X + kL * (2 * C * h + c)); },
      [&](int h, int64_t c) { return simd::Load(X + kL * (2 * C * h + C + c)); },
      [&](int h, int64_t c, Vf v) { simd::Store(X + kL * (2 * C * h + c), v); }, es, loss);
}

// The `groups` groups of the copy scratch, two at a time where their exps fit es (LanesCoreG,
// the same bits), storeLoss(g, loss) after each. Measured on AVX-512 Zen 4 against one at a
// time: 1 thread, [1, 19, 64, 64] (in L2) fp32 / bf16 0.92 / 0.89x; 2 threads, [8, 19, 256,
// 256] fp32 0.94-1.0x, bf16 0.87-0.89x, fp16 0.86-0.96x.
template <typename StoreLoss>
__attribute__((always_inline)) inline void NchwScratchRun(int64_t C, int64_t groups, float* scratch, float* es,
                                                          float* esOrNull, StoreLoss storeLoss) {
  int64_t g = 0;
  Vf l[2];
  if (2 * C <= kLaneScratchC) {
    for (; g + 2 <= groups; g += 2) {
      NchwScratchGroups<2>(C, scratch + 2 * kL * C * g, es, l);
      storeLoss(g, l[0]);
      storeLoss(g + 1, l[1]);
    }
  }
  for (; g < groups; ++g) {
    NchwScratchGroups<1>(C, scratch + 2 * kL * C * g, esOrNull, l);
    storeLoss(g, l[0]);
  }
}

// Positions [q, q + n) of small images (nchwAcrossImages, see below) as runs of one image each:
// lanes [lane, lane + len) hold positions whose class c lies at off + c * H*W.
struct NchwRun {
  int lane, len;
  int64_t off;
};
inline int NchwImageRuns(int64_t q, int n, int64_t C, int64_t HW, NchwRun* runs) {
  int count = 0;
  for (int lane = 0; lane < n;) {
    const int64_t pos = q + lane, image = pos / HW, hw = pos % HW;
    const int len = static_cast<int>(std::min<int64_t>(HW - hw, n - lane));
    runs[count++] = {lane, len, image * C * HW + hw};
    lane += len;
  }
  return count;
}

// SceTiling::nchwAcrossImages (H*W <= kSceNchwAcrossImagesMaxHW: 2x2, 2x3, 1x7 maps...): a group of one image's positions would
// leave at least half of its 16 lanes idle (three quarters at 2x2: [128, 1000, 2, 2] fp32 took
// 4x the time per element of ND [512, 1000]). Here a group takes 16 consecutive positions across
// images: every lane still walks its own position's classes in order through the operations
// LanesCoreG gives any lane (nothing crosses lanes), so every position keeps the bits it has in
// a group of its image alone. Each class row of a group is copied in and out in runs of the
// positions one image holds (a whole image: NchwImageIn / Out; part of one, at a group's ends:
// LoadAsN / StoreAsN); an image's C x H*W values are contiguous, so the runs walk memory in
// order. Backprop leaves with plain stores. Measured: see kSceNchwAcrossImagesMaxHW.
//
// Runs that hold a whole image (all H*W of its positions) move kHW values per class with
// fixed-size copies (one or two plain moves each) instead of LoadAsN / StoreAsN. 16-bit images
// are widened (rounded, on the way out) 16 values at a time through a stage of 16 classes, with
// LoadAs / StoreAs as every other group: the same bits.
template <int kHW, typename T>
void NchwImageIn(const T* src, int64_t C, float* dst) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t c = 0; c < C; ++c) std::memcpy(dst + kL * c, src + kHW * c, kHW * sizeof(float));
  } else {
    alignas(64) float stage[kL * kHW];
    for (int64_t c0 = 0; c0 < C; c0 += kL) {
      const int64_t nc = std::min<int64_t>(kL, C - c0), nv = nc * kHW;
      const T* s = src + kHW * c0;
      for (int64_t i = 0; i < nv; i += kL) {
        const int n = static_cast<int>(std::min<int64_t>(kL, nv - i));
        simd::Store(stage + i, n == kL ? simd::LoadAs(s + i) : simd::LoadAsN(s + i, n, 0.0f));
      }
      for (int64_t j = 0; j < nc; ++j) std::memcpy(dst + kL * (c0 + j), stage + kHW * j, kHW * sizeof(float));
    }
  }
}
template <int kHW, typename T>
void NchwImageOut(const float* src, int64_t C, T* dst) {
  if constexpr (std::is_same_v<T, float>) {
    for (int64_t c = 0; c < C; ++c) std::memcpy(dst + kHW * c, src + kL * c, kHW * sizeof(float));
  } else {
    alignas(64) float stage[kL * kHW];
    for (int64_t c0 = 0; c0 < C; c0 += kL) {
      const int64_t nc = std::min<int64_t>(kL, C - c0), nv = nc * kHW;
      T* d = dst + kHW * c0;
      for (int64_t j = 0; j < nc; ++j) std::memcpy(stage + kHW * j, src + kL * (c0 + j), kHW * sizeof(float));
      for (int64_t i = 0; i < nv; i += kL) {
        const int n = static_cast<int>(std::min<int64_t>(kL, nv - i));
        if (n == kL) simd::StoreAs(d + i, simd::Load(stage + i));
        else simd::StoreAsN(d + i, simd::LoadN(stage + i, n, 0.0f), n);  // only the staged lanes are read
      }
    }
  }
}
template <typename T>
struct NchwImageCopies {
  using In = void (*)(const T*, int64_t, float*);
  using Out = void (*)(const float*, int64_t, T*);
  static constexpr In kIn[kSceNchwAcrossImagesMaxHW + 1] = {nullptr, nullptr, NchwImageIn<2, T>, NchwImageIn<3, T>,
                                                         NchwImageIn<4, T>, NchwImageIn<5, T>, NchwImageIn<6, T>,
                                                         NchwImageIn<7, T>, NchwImageIn<8, T>};
  static constexpr Out kOut[kSceNchwAcrossImagesMaxHW + 1] = {nullptr, nullptr, NchwImageOut<2, T>, NchwImageOut<3, T>,
                                                           NchwImageOut<4, T>, NchwImageOut<5, T>, NchwImageOut<6, T>,
                                                           NchwImageOut<7, T>, NchwImageOut<8, T>};
};
template <typename T>
void NchwAcrossImages(const SceKernelArgs& k, int64_t p0, int64_t p1, float* scratch, float* es, float* esOrNull) {
  const int64_t C = k.tiling.R, HW = k.tiling.HW;
  const int64_t wide = k.tiling.nchwGroups;
  const T* xb = static_cast<const T*>(k.x);
  const T* yb = static_cast<const T*>(k.y);
  T* bpb = static_cast<T*>(k.bp);
  T* lb = static_cast<T*>(k.loss);
  NchwRun runs[kSceNchwMaxGroups][kL];
  int runCount[kSceNchwMaxGroups], lanes[kSceNchwMaxGroups];
  for (int64_t p = p0; p < p1;) {
    const int64_t groups = std::min<int64_t>(wide, (p1 - p + kL - 1) / kL);
    for (int64_t g = 0; g < groups; ++g) {
      const int n = static_cast<int>(std::min<int64_t>(kL, p1 - p - kL * g));
      lanes[g] = n;
      runCount[g] = NchwImageRuns(p + kL * g, n, C, HW, runs[g]);
      float* X = scratch + 2 * kL * C * g;
      for (int r = 0; r < runCount[g]; ++r) {
        const NchwRun run = runs[g][r];
        if (run.len == HW) {
          NchwImageCopies<T>::kIn[HW](xb + run.off, C, X + run.lane);
          NchwImageCopies<T>::kIn[HW](yb + run.off, C, X + kL * C + run.lane);
          continue;
        }
        for (int64_t c = 0; c < C; ++c) {
          simd::StoreAsN(X + kL * c + run.lane, simd::LoadAsN(xb + run.off + c * HW, run.len, 0.0f), run.len);
          simd::StoreAsN(X + kL * (C + c) + run.lane, simd::LoadAsN(yb + run.off + c * HW, run.len, 0.0f), run.len);
        }
      }
      // Lanes past the last position: x = y = 0, as a partial group of one image has them.
      if (n < kL)
        for (int64_t c = 0; c < 2 * C; ++c) simd::StoreAsN(X + kL * c + n, simd::Zero(), kL - n);
    }
    NchwScratchRun(C, groups, scratch, es, esOrNull, [&](int64_t g, Vf l) {
      if (lanes[g] == kL) simd::StoreAs(lb + p + kL * g, l);
      else simd::StoreAsN(lb + p + kL * g, l, lanes[g]);
    });
    for (int64_t g = 0; g < groups; ++g) {  // backprop replaced the features in the scratch
      const float* X = scratch + 2 * kL * C * g;
      for (int r = 0; r < runCount[g]; ++r) {
        const NchwRun run = runs[g][r];
        if (run.len == HW) {
          NchwImageCopies<T>::kOut[HW](X + run.lane, C, bpb + run.off);
          continue;
        }
        for (int64_t c = 0; c < C; ++c) simd::StoreAsN(bpb + run.off + c * HW, simd::Load(X + kL * c + run.lane), run.len);
      }
    }
    p = std::min(p1, p + kL * groups);
  }
}

// Large C: no scratch, every pass reads memory.
template <typename T>
void NchwDirect(int64_t C, int64_t HW, const T* x, const T* y, T* bp, T* loss, int n) {
  auto load = [n](const T* p) { return n == kL ? simd::LoadAs(p) : simd::LoadAsN(p, n, 0.0f); };
  const Vf l = LanesCore(
      C, [&](int64_t c) { return load(x + c * HW); }, [&](int64_t c) { return load(y + c * HW); },
      [&](int64_t c, Vf v) {
        if (n == kL) simd::StoreAs(bp + c * HW, v);
        else simd::StoreAsN(bp + c * HW, v, n);
      },
      nullptr);
  if (n == kL) simd::StoreAs(loss, l);
  else simd::StoreAsN(loss, l, n);
}

// Groups copied at once (tiling.nchwGroups, 2 * C * 16 floats each) into the kernel's stack
// scratch, or (kInWs) into the worker's workspace region: the copy, then an exp scratch of 2 *
// C * 16 floats (see kSceNchwMaxGroups).
template <typename T, bool kInWs>
void NchwLanesT(const SceKernelArgs& k, int64_t p0, int64_t p1) {
  const int64_t C = k.tiling.R, HW = k.tiling.HW;
  const bool stream = k.tiling.streamBackprop;
  const int wide = static_cast<int>(k.tiling.nchwGroups);
  alignas(64) float stackScratch[kInWs ? 1 : kSceNchwStackFloats], stackEs[kInWs ? 1 : kLaneScratchC * kL];
  // The workspace region rounded up to a 64-byte line (the planner leaves 16 floats of slack),
  // as the stack arrays are: no vector of the scratch splits a cache line, whatever the
  // workspace's address.
  float* const region = kInWs ? reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(k.nchwScratch) + 63) & ~uintptr_t{63}) : nullptr;
  float* const scratch = kInWs ? region : stackScratch;
  float* const es = kInWs ? region + 2 * kL * C * wide : stackEs;
  const T* xb = static_cast<const T*>(k.x);
  const T* yb = static_cast<const T*>(k.y);
  T* bpb = static_cast<T*>(k.bp);
  T* lb = static_cast<T*>(k.loss);
  if (k.tiling.nchwAcrossImages)
    return NchwAcrossImages<T>(k, p0, p1, scratch, es, kInWs || C <= kLaneScratchC ? es : nullptr);
  for (int64_t p = p0; p < p1;) {
    const int64_t n = p / HW, hw = p % HW;
    const int64_t off = n * C * HW + hw;
    const int64_t avail = std::min(HW - hw, p1 - p);
    if (wide == 0) {  // not one group in the scratch budget
      const int run = static_cast<int>(std::min<int64_t>(kL, avail));
      NchwDirect<T>(C, HW, xb + off, yb + off, bpb + off, lb + p, run);
      p += run;
      continue;
    }
    float* es_or_null = kInWs || C <= kLaneScratchC ? es : nullptr;
    const int64_t groups = std::min<int64_t>(wide, avail / kL);
    if (groups == 0) {  // a partial group at the end of an image or block: backprop to memory
      const int run = static_cast<int>(avail);
      NchwCopyIn<T, false>(xb + off, C, HW, run, scratch);
      NchwCopyIn<T, false>(yb + off, C, HW, run, scratch + kL * C);
      const Vf l = LanesCore(
          C, [&](int64_t c) { return simd::Load(scratch + kL * c); },
          [&](int64_t c) { return simd::Load(scratch + kL * (C + c)); },
          [&](int64_t c, Vf v) { simd::StoreAsN(bpb + off + c * HW, v, run); }, es_or_null);
      simd::StoreAsN(lb + p, l, run);
      p += run;
      continue;
    }
    for (int64_t c = 0; c < C; ++c)  // class rows in runs of `groups` vectors
      for (int64_t g = 0; g < groups; ++g) {
        float* X = scratch + 2 * kL * C * g;
        const int64_t at = off + c * HW + kL * g;
        // 2 C streams H*W apart are more than the hardware prefetchers track: fetch ahead
        // (a hint past the end of the data never faults).
        __builtin_prefetch(reinterpret_cast<const char*>(xb + at) + kNchwPrefetch, 0, kToL2);
        __builtin_prefetch(reinterpret_cast<const char*>(yb + at) + kNchwPrefetch, 0, kToL2);
        simd::Store(X + kL * c, simd::LoadAs(xb + at));
        simd::Store(X + kL * C + kL * c, simd::LoadAs(yb + at));
      }
    NchwScratchRun(C, groups, scratch, es, es_or_null, [&](int64_t g, Vf l) { simd::StoreAs(lb + p + kL * g, l); });
    // Backprop out in class runs of `groups` vectors, rounded to T here (once, as StoreAs does).
    for (int64_t c = 0; c < C; ++c) {
      T* dst = bpb + off + c * HW;
      const bool nt = stream && reinterpret_cast<uintptr_t>(dst) % (kL * sizeof(T)) == 0;
      for (int64_t g = 0; g < groups; ++g) {
        const Vf v = simd::Load(scratch + 2 * kL * C * g + kL * c);
        if (nt) simd::StoreAsStream(dst + kL * g, v);
        else simd::StoreAs(dst + kL * g, v);
      }
    }
    p += groups * kL;
  }
  if (stream) simd::StreamFence();
}

template <typename T>
void NchwLanes(const SceKernelArgs& k, int64_t p0, int64_t p1) {
  if (k.tiling.nchwScratchFloats > 0) NchwLanesT<T, true>(k, p0, p1);
  else NchwLanesT<T, false>(k, p0, p1);
}

// ---- trivial class counts -----------------------------------------------------------------

template <typename T>
void OneClass(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  const T* xb = static_cast<const T*>(k.x);
  const T* yb = static_cast<const T*>(k.y);
  T* bpb = static_cast<T*>(k.bp);
  T* lb = static_cast<T*>(k.loss);
  for (int64_t a = a0; a < a1; ++a) {
    const float x = ToFloat(xb[a * k.xRowStride]), y = ToFloat(yb[a * k.yRowStride]);
    const float z = x - x;  // 0, or NaN for inf / NaN logits; softmax = exp(z) / exp(z)
    bpb[a * k.bpRowStride] = FromFloat<T>((1.0f + z) - y);
    lb[a * k.lossStride] = FromFloat<T>(0.0f + y * (0.0f - z));
  }
}

template <typename T>
void ZeroClasses(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  T* lb = static_cast<T*>(k.loss);
  for (int64_t a = a0; a < a1; ++a) lb[a * k.lossStride] = FromFloat<T>(0.0f);
}

template <typename T>
void RunBlockT(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  switch (k.tiling.kernel) {
    case SceKernel::kNone: return;
    case SceKernel::kZeroClasses: return ZeroClasses<T>(k, a0, a1);
    case SceKernel::kOneClass: return OneClass<T>(k, a0, a1);
    case SceKernel::kNchwLanes: return NchwLanes<T>(k, a0, a1);
    case SceKernel::kPackedRows:
#if defined(ACLNN_ISA_SCALAR)
      // One runtime-C copy (same bits). The scalar Vf is an array of 16 floats, so one unrolled
      // copy per (dtype, C) makes huge functions that gain little there; GCC with sanitizers
      // took ~40 minutes to compile them.
      return PackedRowsT<T, 0, false>(k, a0, a1);
#else
      switch (k.tiling.R) {
        case 2: return PackedRows<T, 2>(k, a0, a1);
        case 3: return PackedRows<T, 3>(k, a0, a1);
        case 4: return PackedRows<T, 4>(k, a0, a1);
        case 5: return PackedRows<T, 5>(k, a0, a1);
        case 6: return PackedRows<T, 6>(k, a0, a1);
        case 7: return PackedRows<T, 7>(k, a0, a1);
        case 8: return PackedRows<T, 8>(k, a0, a1);
        case 9: return PackedRows<T, 9>(k, a0, a1);
        case 10: return PackedRows<T, 10>(k, a0, a1);
        case 11: return PackedRows<T, 11>(k, a0, a1);
        case 12: return PackedRows<T, 12>(k, a0, a1);
        case 13: return PackedRows<T, 13>(k, a0, a1);
        case 14: return PackedRows<T, 14>(k, a0, a1);
        case 15: return PackedRows<T, 15>(k, a0, a1);
        case 16: return PackedRows<T, 16>(k, a0, a1);
        default: return PackedRows<T, 0>(k, a0, a1);  // C > 16: short rows, see ScePackedTakes
      }
#endif
    case SceKernel::kRows:
      if (k.xScalar) {
        if (k.yScalar) return Rows<T, true, true>(k, a0, a1);
        return Rows<T, true, false>(k, a0, a1);
      }
      if (k.yScalar) return Rows<T, false, true>(k, a0, a1);
      return Rows<T, false, false>(k, a0, a1);
  }
}

template <typename T>
void SplitT(const SceKernelArgs& k, int phase, int64_t task) {
  if (k.xScalar) {
    if (k.yScalar) return SplitPhase<T, true, true>(k, phase, task);
    return SplitPhase<T, true, false>(k, phase, task);
  }
  if (k.yScalar) return SplitPhase<T, false, true>(k, phase, task);
  return SplitPhase<T, false, false>(k, phase, task);
}

}  // namespace

void SceRunBlock(const SceKernelArgs& k, int64_t a0, int64_t a1) {
  switch (k.dtype) {
    case SceDtype::kFloat: return RunBlockT<float>(k, a0, a1);
    case SceDtype::kHalf: return RunBlockT<Half>(k, a0, a1);
    case SceDtype::kBf16: return RunBlockT<BFloat16>(k, a0, a1);
  }
}

void SceSplitPhase(const SceKernelArgs& k, int phase, int64_t task) {
  switch (k.dtype) {
    case SceDtype::kFloat: return SplitT<float>(k, phase, task);
    case SceDtype::kHalf: return SplitT<Half>(k, phase, task);
    case SceDtype::kBf16: return SplitT<BFloat16>(k, phase, task);
  }
}

}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
