// Picking a kernel for the active ISA. A kernel source (*_kernels.cc) defines its entry points
// in aclnn_portable::<isa>::...; the non-kernel code declares them once for every ISA with
// ACLNN_DECLARE_FOR_EACH_ISA and picks one with ACLNN_ISA_SELECT. The pick is made once per
// plan (or per call), never per element.
#pragma once

#include "platform/cpu_features.h"

namespace aclnn_portable {

template <typename Fn>
Fn PickIsaFor(Isa isa, Fn scalar_fn, Fn avx2_fn, Fn avx512_fn, Fn avx512bf16_fn) {
  switch (isa) {
    case Isa::kAvx512Bf16: return avx512bf16_fn;
    case Isa::kAvx512: return avx512_fn;
    case Isa::kAvx2: return avx2_fn;
    default: return scalar_fn;
  }
}

}  // namespace aclnn_portable

// Use inside namespace aclnn_portable: declares `decl` in scalar::, avx2::, avx512:: and
// avx512bf16::.
#define ACLNN_DECLARE_FOR_EACH_ISA(...) \
  namespace scalar { __VA_ARGS__; }     \
  namespace avx2 { __VA_ARGS__; }       \
  namespace avx512 { __VA_ARGS__; }     \
  namespace avx512bf16 { __VA_ARGS__; }

// Use inside namespace aclnn_portable: a pointer to <isa>::path for the given ISA (which the
// caller has checked is supported), or for the active one. A tier the build left out
// (ACLNN_KERNEL_ISAS) has a null slot; IsaSupported reports it unsupported, so it is never picked.
#if defined(ACLNN_HAVE_ISA_AVX2)
#define ACLNN_ISA_FN_AVX2(path) &avx2::path
#else
#define ACLNN_ISA_FN_AVX2(path) nullptr
#endif
#if defined(ACLNN_HAVE_ISA_AVX512)
#define ACLNN_ISA_FN_AVX512(path) &avx512::path
#else
#define ACLNN_ISA_FN_AVX512(path) nullptr
#endif
#if defined(ACLNN_HAVE_ISA_AVX512BF16)
#define ACLNN_ISA_FN_AVX512BF16(path) &avx512bf16::path
#else
#define ACLNN_ISA_FN_AVX512BF16(path) nullptr
#endif
#if defined(ACLNN_HAVE_X86_KERNELS)
#define ACLNN_ISA_SELECT_FOR(isa, path)                                                              \
  ::aclnn_portable::PickIsaFor<decltype(&scalar::path)>(isa, &scalar::path, ACLNN_ISA_FN_AVX2(path), \
                                                        ACLNN_ISA_FN_AVX512(path), ACLNN_ISA_FN_AVX512BF16(path))
#else
#define ACLNN_ISA_SELECT_FOR(isa, path) (&scalar::path)
#endif
#define ACLNN_ISA_SELECT(path) ACLNN_ISA_SELECT_FOR(::aclnn_portable::ActiveIsa(), path)
