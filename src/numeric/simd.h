// The vector layer every kernel is written against, once: a Vf is 16 fp32 lanes on every ISA
// (one zmm on AVX-512, two ymm on AVX2, an array in the portable build). Each kernel source is
// compiled once per ISA with ACLNN_ISA_NS set to avx512 | avx2 | scalar (see CMakeLists.txt), so
// its code lives in aclnn_portable::<isa>:: and the dispatcher picks one at run time.
//
// Determinism contract: every operation is the same IEEE operation per lane on every ISA
// (MulAdd is a fused multiply-add everywhere; Max/Min return b when either input is NaN);
// ReduceSum/ReduceMax use one fixed pairwise tree (ReduceSumRows16/ReduceMaxRows16: the same
// tree for 16 rows at once); conversions are bit-exact (half.h). A kernel that fixes its
// accumulation order in terms of lanes therefore writes identical bits on every ISA and, given a
// fixed task decomposition, for every thread count.
#pragma once

#if !defined(ACLNN_ISA_NS)
#error "compile kernel sources through aclnn_add_isa_kernels (defines ACLNN_ISA_NS)"
#endif

#if defined(ACLNN_ISA_AVX512)
#include "numeric/simd_avx512.h"
#elif defined(ACLNN_ISA_AVX2)
#include "numeric/simd_avx2.h"
#else
#include "numeric/simd_scalar.h"
#endif

namespace aclnn_portable {
namespace ACLNN_ISA_NS {
namespace simd {

constexpr int kLanes = 16;

// ---- typed loads and stores: element type T in {float, Half, BFloat16}, computed in fp32 ----
inline Vf LoadAs(const float* p) { return Load(p); }
inline Vf LoadAs(const Half* p) { return LoadHalfBits(reinterpret_cast<const uint16_t*>(p)); }
inline Vf LoadAs(const BFloat16* p) { return LoadBf16Bits(reinterpret_cast<const uint16_t*>(p)); }
inline Vf LoadAsN(const float* p, int n, float fill) { return LoadN(p, n, fill); }
inline Vf LoadAsN(const Half* p, int n, float fill) {
  return LoadHalfBitsN(reinterpret_cast<const uint16_t*>(p), n, fill);
}
inline Vf LoadAsN(const BFloat16* p, int n, float fill) {
  return LoadBf16BitsN(reinterpret_cast<const uint16_t*>(p), n, fill);
}
// Stores round fp32 to T once, to nearest even.
inline void StoreAs(float* p, Vf a) { Store(p, a); }
inline void StoreAs(Half* p, Vf a) { StoreHalfBits(reinterpret_cast<uint16_t*>(p), a); }
inline void StoreAs(BFloat16* p, Vf a) { StoreBf16Bits(reinterpret_cast<uint16_t*>(p), a); }
// a to p and b to p + 16, as two StoreAs (bf16: one instruction for both on AVX512_BF16).
inline void StoreAsPair(float* p, Vf a, Vf b) { Store(p, a), Store(p + 16, b); }
inline void StoreAsPair(Half* p, Vf a, Vf b) { StoreAs(p, a), StoreAs(p + 16, b); }
inline void StoreAsPair(BFloat16* p, Vf a, Vf b) { StoreBf16BitsPair(reinterpret_cast<uint16_t*>(p), a, b); }
inline void StoreAsN(float* p, Vf a, int n) { StoreN(p, a, n); }
inline void StoreAsN(Half* p, Vf a, int n) { StoreHalfBitsN(reinterpret_cast<uint16_t*>(p), a, n); }
inline void StoreAsN(BFloat16* p, Vf a, int n) { StoreBf16BitsN(reinterpret_cast<uint16_t*>(p), a, n); }
// Non-temporal (bypasses the cache; for outputs larger than it). p: 64-byte aligned for float,
// 32-byte aligned for 16-bit types. Call StreamFence() before the data is handed on.
inline void StoreAsStream(float* p, Vf a) { StoreStream(p, a); }
inline void StoreAsStream(Half* p, Vf a) { StoreHalfBitsStream(reinterpret_cast<uint16_t*>(p), a); }
inline void StoreAsStream(BFloat16* p, Vf a) { StoreBf16BitsStream(reinterpret_cast<uint16_t*>(p), a); }

// Writes pieces of output that follow one another in memory (consecutive rows, or the chunks
// of a row) through an L1 stage, with non-temporal stores of whole 64-byte lines only: the bytes
// that do not complete a line are carried to the next piece. Only where a run of adjacent pieces
// begins or ends (a block of rows, a gap between strided rows) does a partial line get plain
// stores, of exactly the run's own bytes; no line gets both kinds. Why: one StreamCopy per row
// wrote the line two rows share with a plain store from one row and a non-temporal store from
// the other, and such a line costs a memory round trip or two (the plain store reads it in, the
// non-temporal one evicts it). Rows whose length is not a multiple of 32 bytes took 1.5-3.4x
// the time of rows one element longer or shorter beyond the last-level cache (AVX2 build on Zen
// 3, 2 threads: fp32 [64527, 65] 8.7 ms streamed row by row, 3.3 ms now).
//
// Use: T* s = Next(dst) gives where the piece that belongs at dst goes in the stage
// (element-aligned when dst is); Commit(bytes) after each part of it is written there streams
// the lines that part completes (a piece may be committed in several parts); Finish() writes the
// carried bytes at the end of the run, then StreamFence() before the data is handed on. The
// stage is 64-byte aligned and holds the largest piece + kSlack bytes. Always inlined, as the
// whole vector layer (the KernelInlining test).
class LineStream {
 public:
  static constexpr size_t kSlack = 128;
  explicit LineStream(void* stage) : stage_(static_cast<char*>(stage)) {}
  template <typename T>
  __attribute__((always_inline)) T* Next(T* dst) {
    char* d = reinterpret_cast<char*>(dst);
    if (d != line_ + fill_) {  // a new run: the head of its first line is not ours
      Finish();
      const size_t off = reinterpret_cast<uintptr_t>(d) % 64;
      line_ = d - off;
      fill_ = skip_ = off;
    } else if (sent_ > 0) {
      // The carry (< 64 bytes) to the front, as one fixed-size copy (no call): from >= 64 bytes
      // on, so no overlap; the bytes past the carry are slack, never written out.
      std::memcpy(stage_, stage_ + sent_, 64);
      line_ += sent_;
      fill_ -= sent_;
      sent_ = 0;
    }
    return reinterpret_cast<T*>(stage_ + fill_);
  }
  __attribute__((always_inline)) void Commit(size_t bytes) {
    fill_ += bytes;
    const size_t whole = fill_ / 64 * 64;
    if (whole == sent_) return;
    size_t from = sent_;
    if (skip_ > 0) {  // the run's first line (sent_ is 0): plain stores of its own bytes
      std::memcpy(line_ + skip_, stage_ + skip_, 64 - skip_);
      from = 64;
      skip_ = 0;
    }
    StreamLines(line_ + from, stage_ + from, (whole - from) / 64);
    sent_ = whole;
  }
  __attribute__((always_inline)) void Finish() {
    const size_t from = skip_ > sent_ ? skip_ : sent_;
    if (fill_ > from) std::memcpy(line_ + from, stage_ + from, fill_ - from);
    line_ = nullptr;
    fill_ = skip_ = sent_ = 0;
  }

 private:
  char* stage_;
  char* line_ = nullptr;  // the 64-byte line of the output that stage_[0] stands for
  size_t fill_ = 0;       // bytes of stage_ in use (the next piece goes to stage_ + fill_)
  size_t skip_ = 0;       // leading bytes of the run's first line that are not the run's
  size_t sent_ = 0;       // bytes of stage_ already written out (whole lines)
};

// ---- exp ----------------------------------------------------------------------------------
#if !defined(ACLNN_ISA_AVX512)
// k += round(e) and t += e - round(e) (exact) for e in [0, 1] (AVX-512: masked operations).
__attribute__((always_inline)) inline void SplitAdd(Vf* k, Vf* t, Vf e) {
  const Vf r = Round(e);
  *k = Add(*k, r);
  *t = Add(*t, Sub(e, r));
}
// p * 2^n (n integral) for a normal result: ScaleByPow2's common branch (AVX-512: vscalefps).
__attribute__((always_inline)) inline Vf ScaleByPow2Normal(Vf p, Vf n) { return ScaleNormal(p, ToInt(n)); }
#endif

// p * 2^n rounded once (to nearest even), for p in [0.70, 1.42] (or NaN, which stays that NaN)
// and integral n in [-150, 128]: exact when the result is normal, one rounding when it is
// subnormal. When every lane's result is normal (the common case): add n to the exponent field,
// or on AVX-512 one vscalefps (ScaleByPow2Normal). Otherwise, scalar build: two factors
// 2^(n/2), so that a subnormal result is rounded once. AVX2 and AVX-512: the lanes whose result
// is subnormal (exponent of p plus n below -126) get p * 2^n + 2^-126 from one fused
// multiply-add of normal operands (p * 2^n1 and 2^n2, n1 + n2 = n), rounded to nearest even
// onto the 2^-149 grid of [2^-126, 2^-125), which is the subnormal grid; subtracting 2^-126 in
// the bit pattern leaves p * 2^n rounded once. No operation there has a subnormal operand or
// result, which cost a microcode assist on x86 cores: measured on Zen 4 running the AVX2 build,
// 1 thread, SCE calls whose logits were 30 % -inf (exp reached from -104) or spread over
// +-120 took 0.73-0.76x the time of the two factors; the scalar build, whose target is
// portability (aarch64), measured 1.08-1.14x, so it keeps them. The same bits either way.
// AVX-512 had used vscalefps for every vector, but on Intel cores a vscalefps whose result is
// below 2^-126 (subnormal, or rounded to 0 as exp(-104) and exp(-inf) are) takes a microcode
// assist: 70 ns against 1.3 ns on a Xeon (Sapphire Rapids family) guest (the Zen 4 guest showed
// no such cost). Every row whose class count is not a multiple of 16 padded its last vector with
// -inf, so every row paid one or two: [8192, 72] fp32 took 2.6x the time of [8192, 80]; the
// route above measured 1.4 ns there (the SCE exp pass now pads with 0 and zeroes the padded
// results after the exp, which keeps such rows off this route altogether). The cost on the
// common path is the compare and branch (1 thread, in-cache rows without a tail: 0.94-1.07x the
// time, within the host's noise).
__attribute__((always_inline)) inline Vf ScaleByPow2(Vf p, Vf n) {
#if defined(ACLNN_ISA_AVX512)
  if (__builtin_expect(!Any(Lt(n, Set(-125.0f))), 1)) return ScaleByPow2Normal(p, n);
  const Vi k = ToInt(n);  // in [-150, 128]
#else
  const Vi k = ToInt(n);  // in [-150, 128]
  if (__builtin_expect(!Any(Lt(n, Set(-125.0f))), 1)) return ScaleNormal(p, k);
#endif
  const Vi k1 = HalveFloor(k);
  const Vi k2 = SubI(k, k1);  // k1, k2 >= -75: 2^k1, 2^k2 and p * 2^k1 are normal
#if defined(ACLNN_ISA_AVX2) || defined(ACLNN_ISA_AVX512)
  // Biased exponent of the result (p is positive; a NaN p gives >= 255 + n, or NaN: not subnormal).
  const Mask sub = Lt(Add(ToFloatI(SrlI(AsBits(p), 23)), n), Set(1.0f));
  const Vf t = MulAdd(Mul(p, Pow2(k1)), Pow2(k2), Set(0x1p-126f));
  return Select(sub, FromBits(SubI(AsBits(t), SetI(0x00800000))), ScaleNormal(p, k));
#else
  return Mul(Mul(p, Pow2(k1)), Pow2(k2));
#endif
}

// e^a for a already clamped to [-104, 88.72] (or NaN): Cody-Waite reduction a = n ln2 + r,
// |r| <= ln2/2, a degree-6 polynomial for e^r in Horner form, and a scale by 2^n
// (ScaleByPow2). A NaN lane stays NaN: AVX2 / scalar take the normal branch (k is the integer
// indefinite 0x80000000, whose shifted exponent part is 0), vscalefps returns its NaN input p.
// The polynomial is 1 + r + r^2 (c2 + c3 r + ... + c6 r^4), its c2..c6 minimax for the relative
// error of e^r on |r| <= 0.3476 (a linear program on 3000 Chebyshev nodes; 0.05 * 2^-24 before
// the coefficients are rounded to float). Six fused multiply-adds: two operations fewer than
// Cephes' degree-7 form p(r) r^2 + r + 1 it replaces, and more accurate in fp32. Measured over
// every float input, in this exact operation order: 0.89 ulp at most for normal results (0.88
// on [-104, 0]; Cephes' form: 1.01), 0.86 of a subnormal step for subnormal ones.
// Always inlined: an out-of-line call inside a kernel loop spills every live vector register
// (all of them are caller-saved), which costs more than the function itself.
//
// ExpClampedN: kU vectors at once, stage by stage (each vector gets exactly ExpClamped's
// operations, so the same bits). A vector's exp is one chain of ~15 dependent operations, longer
// than the core keeps waiting operations for where a Vf is two ymm (AVX2): a microbenchmark of
// the FullLoad exp pass (Zen 3, 1 thread, an L1 row) took 0.72-0.75x the time with two vectors'
// stages side by side, and 1.7x with four (16 ymm registers: spills). Used with kU = 2 by the
// AVX2 kernels (ChunkStatsT, LanesCoreG); see the SCE doc for the kernels' gains.
// kNormal (ExpNormalRangeN): every result is known to be normal, so the scale is
// ScaleByPow2Normal, without ScaleByPow2's check (the same bits there).
template <int kU, bool kNormal = false>
__attribute__((always_inline)) inline void ExpClampedN(const Vf (&a)[kU], Vf (&e)[kU]) {
  Vf n[kU], r[kU], p[kU];
  for (int u = 0; u < kU; ++u) n[u] = Round(Mul(a[u], Set(1.44269504088896341f)));
  for (int u = 0; u < kU; ++u) r[u] = MulAdd(n[u], Set(-0.693359375f), a[u]);
  for (int u = 0; u < kU; ++u) r[u] = MulAdd(n[u], Set(2.12194440e-4f), r[u]);
  for (int u = 0; u < kU; ++u) p[u] = MulAdd(Set(1.381419715e-3f), r[u], Set(8.368914016e-3f));
  for (int u = 0; u < kU; ++u) p[u] = MulAdd(p[u], r[u], Set(4.166840762e-2f));
  for (int u = 0; u < kU; ++u) p[u] = MulAdd(p[u], r[u], Set(1.666651964e-1f));
  for (int u = 0; u < kU; ++u) p[u] = MulAdd(p[u], r[u], Set(4.999999404e-1f));
  for (int u = 0; u < kU; ++u) p[u] = MulAdd(p[u], r[u], Set(1.0f));
  for (int u = 0; u < kU; ++u) p[u] = MulAdd(p[u], r[u], Set(1.0f));  // e^r in [0.70, 1.42]; with n = 128, r < 0 and p < 1
  for (int u = 0; u < kU; ++u) {
    if constexpr (kNormal) e[u] = ScaleByPow2Normal(p[u], n[u]);
    else e[u] = ScaleByPow2(p[u], n[u]);
  }
}
__attribute__((always_inline)) inline Vf ExpClamped(Vf a) {
  const Vf in[1] = {a};
  Vf out[1];
  ExpClampedN(in, out);
  return out[0];
}

// Exp(x) = e^x in fp32.
//   Accuracy: <= 2 ulp against the correctly rounded result for x in [-87.3, 88.72] (normal
//   results); results in the subnormal range (x in [-103.9, -87.3]) are within 1 subnormal step;
//   x < -103.97 gives +0 (as does -inf). Valid range: x <= 88.72; larger x returns ~3.39e38, not
//   inf (callers pass x - max <= 0). NaN in, the same NaN out (bits included).
//   Method: ExpClamped. Max(NaN, -104) is -104 (x86 semantics on every ISA); the final select
//   puts the input NaN back.
__attribute__((always_inline)) inline Vf Exp(Vf x) {
  const Mask nan = IsNaN(x);
  return Select(nan, x, ExpClamped(Min(Max(x, Set(-104.0f)), Set(88.72f))));
}

// ExpNonPositive(x) = Exp(x), bit for bit, for x <= 0 (and -inf), three operations cheaper: no
// upper clamp and no NaN select. NaN in gives a quiet NaN (Max(-104, NaN) is NaN, which the
// arithmetic propagates), not necessarily the same bits. x > 0 is outside the contract.
// For softmax-style exp(x - max).
__attribute__((always_inline)) inline Vf ExpNonPositive(Vf x) { return ExpClamped(Max(Set(-104.0f), x)); }
// ExpNonPositive of kU vectors, interleaved as ExpClampedN (the same bits).
template <int kU>
__attribute__((always_inline)) inline void ExpNonPositiveN(const Vf (&x)[kU], Vf (&e)[kU]) {
  Vf a[kU];
  for (int u = 0; u < kU; ++u) a[u] = Max(Set(-104.0f), x[u]);
  ExpClampedN(a, e);
}

// ExpNormalRangeN(x) = ExpNonPositiveN(x), bit for bit, for x in [kExpNormalRangeMin, 0] (and
// NaN): every result is normal there (n = round(x log2 e) >= -125), so neither the clamp nor
// ScaleByPow2's check for subnormal results is needed, three operations fewer per vector (on
// AVX-512: vmaxps, vcmpps, kortestw). Outside that range the results are wrong: callers check
// the range (e.g. the row's minimum minus its maximum) first.
constexpr float kExpNormalRangeMin = -86.5f;
template <int kU>
__attribute__((always_inline)) inline void ExpNormalRangeN(const Vf (&x)[kU], Vf (&e)[kU]) {
  ExpClampedN<kU, true>(x, e);
}
__attribute__((always_inline)) inline Vf ExpNormalRange(Vf x) {
  const Vf in[1] = {x};
  Vf out[1];
  ExpNormalRangeN(in, out);
  return out[0];
}
// True when every lane of x - ref is >= kExpNormalRangeMin (false for a NaN lane): the lanes'
// ExpNonPositive(x - ref) may then be ExpNormalRangeN's.
__attribute__((always_inline)) inline bool InExpNormalRange(Vf x, Vf ref) {
  const Vf d = Sub(x, ref);
  return !Any(Lt(d, Set(kExpNormalRangeMin))) && !Any(IsNaN(d));
}

}  // namespace simd
}  // namespace ACLNN_ISA_NS
}  // namespace aclnn_portable
