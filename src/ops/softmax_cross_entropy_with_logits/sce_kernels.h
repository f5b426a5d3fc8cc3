// SoftmaxCrossEntropyWithLogits kernels, compiled once per ISA (sce_kernels.cc). A kernel gets
// the tiling and resolved pointers; it never allocates, validates or spawns threads. The API
// layer runs the entry points as tasks of the thread pool (blockIdx = task).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "ops/softmax_cross_entropy_with_logits/sce_tiling.h"
#include "platform/dispatch.h"

namespace aclnn_portable {

enum class SceDtype : int32_t { kFloat = 0, kHalf = 1, kBf16 = 2 };

// Element pointers to element 0 of each (dense or gathered) tensor. ND: row a of features at
// x + a * xRowStride, classes contiguous (xScalar: one value per row broadcast over the classes;
// xRowStride 0: one row broadcast over N). NCHW: dense [N, R, HW], loss dense [N, HW].
struct SceKernelArgs {
  const void* x = nullptr;
  const void* y = nullptr;
  void* bp = nullptr;
  void* loss = nullptr;
  int64_t xRowStride = 0, yRowStride = 0, bpRowStride = 0, lossStride = 1;
  bool xScalar = false, yScalar = false;
  SceDtype dtype = SceDtype::kFloat;
  SceTiling tiling;
  SceChunkRecord* chunks = nullptr;  // splitRAcrossCores: [A][rLoopTime]
  SceRowRecord* rows = nullptr;      // splitRAcrossCores: [A]
  // SplitR with tiling.expScratchStride > 0: fp32 exp values, one row of expScratchStride per
  // block (serial) or per row (splitRAcrossCores); null: the apply pass recomputes them.
  float* expScratch = nullptr;
  // kNchwLanes with tiling.nchwScratchFloats > 0: that many floats for this block's worker alone.
  float* nchwScratch = nullptr;
};

// SplitR: backprop of chunk c is exp(x - m_c) * scale_c - y with scale_c = e^(m_c - m) / S in
// double, rounded once. The same on the serial and the cross-core path, with or without the
// exp scratch. An all -inf chunk of a finite row has scale 0; inf / NaN rows give NaN.
inline float SceChunkScale(float mc, const SceRowRecord& row) {
  return static_cast<float>(std::exp(static_cast<double>(mc) - static_cast<double>(row.m)) / row.S);
}

// Row statistics from the per-chunk (max m_k, sum s_k of exp(x - m_k)) pairs, folded in chunk
// order in double. Shared by the serial SplitR path and the cross-core one, so both give the
// same bits. An all -inf chunk (m_k = -inf) adds nothing; NaN or +inf poison S (as in TF).
struct SceOnline {
  float m = -std::numeric_limits<float>::infinity();
  double S = 0.0;
  void Add(float mk, double sk) {
    if (mk > m) {
      S = S * std::exp(static_cast<double>(m) - static_cast<double>(mk)) + sk;
      m = mk;
    } else if (mk != -std::numeric_limits<float>::infinity()) {
      S += sk * std::exp(static_cast<double>(mk) - static_cast<double>(m));
    }
  }
  // The same bits as a fresh SceOnline after Add(mk, sk), without the exp.
  static SceOnline One(float mk, double sk) {
    SceOnline o;
    if (mk == -std::numeric_limits<float>::infinity()) return o;
    o.m = std::isnan(mk) ? o.m : mk;
    o.S = std::isnan(mk) ? std::numeric_limits<double>::quiet_NaN() : sk;
    return o;
  }
  SceRowRecord Finish() const { return Record(m, S); }
  static SceRowRecord Record(float m, double S) {
    SceRowRecord r{};
    r.S = S;
    r.m = m;
    r.L = static_cast<float>(std::log(S));
    return r;
  }
};

// kZeroClasses / kOneClass / kPackedRows / kRows (serial SplitR included): rows [a0, a1).
// kNchwLanes: positions [a0, a1) of the flattened [N, HW].
ACLNN_DECLARE_FOR_EACH_ISA(void SceRunBlock(const SceKernelArgs& k, int64_t a0, int64_t a1))
// splitRAcrossCores, in four phases run one after the other (task ranges in brackets):
//   0 [A * rLoopTime]: chunk (max, sum) of task = row * rLoopTime + chunk into k.chunks;
//   1 [A]: fold a row's chunks in order into k.rows;
//   2 [A * rLoopTime]: backprop of the chunk and its loss part into k.chunks;
//   3 [A]: the row's loss, its chunk parts summed in order in double.
ACLNN_DECLARE_FOR_EACH_ISA(void SceSplitPhase(const SceKernelArgs& k, int phase, int64_t task))

}  // namespace aclnn_portable
