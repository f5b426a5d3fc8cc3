// Entry points that run the vector layer's math (Exp, Log, fp16/bf16 stores, row transposes) over
// arrays on a given ISA, so tests can hold every ISA to the contracts in simd.h, simd_log.h and
// half.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "platform/cpu_features.h"

namespace aclnn_portable {

void ProbeExp(Isa isa, const float* x, float* y, size_t n);
void ProbeExpNonPositive(Isa isa, const float* x, float* y, size_t n);
// simd::ExpNormalRange over x; simd::InExpNormalRange(16 floats at x, ref).
void ProbeExpNormalRange(Isa isa, const float* x, float* y, size_t n);
bool ProbeInExpNormalRange(Isa isa, const float* x, float ref);
// simd::SplitAdd of `vectors` vectors of 16 floats at e into k = t = 0 (16 lanes each).
void ProbeSplitAdd(Isa isa, const float* e, size_t vectors, float* k, float* t);
void ProbeToHalf(Isa isa, const float* x, uint16_t* y, size_t n);
// The bf16 rounding of simd::StoreBf16Bits (kSingle), StoreAsPair (kPair: 32 values at a time),
// StoreRowsT<16> (kRows: each 256 values are 16 vectors of 16, written transposed: y[256 b +
// 16 r + c] = bf16(x[256 b + 16 c + r])), StoreRowsT<2> (kRows2: each 32 values are 2 vectors,
// y[32 b + 2 r + c] = bf16(x[32 b + 16 c + r])) or StoreRows2Stream (kRows2Stream: the same with
// non-temporal stores; y 64-byte aligned, else kSingle) or simd::MhcStoreBf16Deint (kMhcDeint:
// mhc's deinterleaved layout, AVX2 only, natural elsewhere; y[i] = bf16(x[i]) either way). The
// rest of n as kSingle.
enum class Bf16Store { kSingle = 0, kPair = 1, kRows = 2, kRows2 = 3, kRows2Stream = 4, kMhcDeint = 5 };
void ProbeToBf16(Isa isa, const float* x, uint16_t* y, size_t n, Bf16Store way = Bf16Store::kSingle);
void ProbeLog(Isa isa, const float* x, float* y, size_t n);
void ProbeLogPositiveNormal(Isa isa, const float* x, float* y, size_t n);
// A 16 x n block of dtype 0 fp32, 1 fp16, 2 bf16: `in` (row-major) -> cols (n vectors of 16
// floats); vals (n vectors) -> `out` (row-major). Through simd::LoadRowsT / StoreRowsT<n> (n in
// 1..16), or with runtime_n through LoadRowsN / StoreRowsN (any n).
void ProbeRows(Isa isa, int dtype, int n, bool runtime_n, const void* in, float* cols, const float* vals, void* out);

// The partial vector loads and stores of row tails in dtype 0 fp32, 1 fp16, 2 bf16:
// loaded = simd::LoadAsN(in, n, fill) (16 floats), then simd::StoreAsN(out, vals, n) (n in 0..16).
void ProbePartial(Isa isa, int dtype, int n, const void* in, float fill, float* loaded, const float* vals, void* out);

// 16 rows of 16 floats (rows[16 r + i]): sums / maxes = simd::ReduceSumRows16 / ReduceMaxRows16
// (16 lanes), sumEach / maxEach = simd::ReduceSum / ReduceMax of each row.
void ProbeReduceRows(Isa isa, const float* rows, float* sums, float* maxes, float* sumEach, float* maxEach);

}  // namespace aclnn_portable
