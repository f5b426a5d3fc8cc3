// Entry points that run the vector layer's math (Exp, fp16/bf16 stores) over arrays on a given
// ISA, so tests can hold every ISA to the contracts in simd.h and half.h.
#pragma once

#include <cstddef>
#include <cstdint>

#include "platform/cpu_features.h"

namespace aclnn_portable {

void ProbeExp(Isa isa, const float* x, float* y, size_t n);
void ProbeExpNonPositive(Isa isa, const float* x, float* y, size_t n);
void ProbeToHalf(Isa isa, const float* x, uint16_t* y, size_t n);
void ProbeToBf16(Isa isa, const float* x, uint16_t* y, size_t n);

}  // namespace aclnn_portable
