// Runtime ISA selection. Kernels are compiled once per ISA (src/numeric/simd.h); the dispatcher
// picks the best one the CPU and OS support, or the one ACLNN_PORTABLE_ISA names
// (scalar | avx2 | avx512 | avx512bf16) when the CPU supports it. Every variant gives identical
// bits. avx512bf16 is the avx512 kernels with AVX512_BF16's fp32 -> bf16 rounding instruction.
#pragma once

namespace aclnn_portable {

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Bf16 = 3 };

bool IsaSupported(Isa isa);   // CPU + OS support, and compiled into this build
Isa BestIsa();                // the best supported
Isa ActiveIsa();              // what kernels use now
void SetActiveIsa(Isa isa);   // tests; ignored (returns false) when unsupported
bool TrySetActiveIsa(Isa isa);
const char* IsaName(Isa isa);

}  // namespace aclnn_portable
