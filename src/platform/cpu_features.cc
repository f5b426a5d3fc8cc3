#include "platform/cpu_features.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace aclnn_portable {
namespace {

#if defined(__x86_64__) || defined(__i386__)
uint64_t Xgetbv0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

bool DetectAvx2() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool osxsave = c & (1u << 27), fma = c & (1u << 12), f16c = c & (1u << 29);
  if (!osxsave || !fma || !f16c) return false;
  if ((Xgetbv0() & 0x6) != 0x6) return false;  // XMM and YMM state enabled by the OS
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return b & (1u << 5);  // AVX2
}

bool DetectAvx512() {
  if (!DetectAvx2()) return false;
  if ((Xgetbv0() & 0xe6) != 0xe6) return false;  // + opmask, ZMM_Hi256, Hi16_ZMM
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool f = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
  return f && dq && bw && vl;
}

bool DetectAvx512Bf16() {
  if (!DetectAvx512()) return false;
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || a < 1) return false;  // leaf 7 subleaf 1 exists
  if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) return false;
  return a & (1u << 5);  // AVX512_BF16
}
#endif

#if defined(ACLNN_HAVE_X86_KERNELS)
// Tiers this build has kernels for (CMake ACLNN_KERNEL_ISAS; all of them by default).
#if defined(ACLNN_HAVE_ISA_AVX2)
constexpr bool kBuiltAvx2 = true;
#else
constexpr bool kBuiltAvx2 = false;
#endif
#if defined(ACLNN_HAVE_ISA_AVX512)
constexpr bool kBuiltAvx512 = true;
#else
constexpr bool kBuiltAvx512 = false;
#endif
#if defined(ACLNN_HAVE_ISA_AVX512BF16)
constexpr bool kBuiltAvx512Bf16 = true;
#else
constexpr bool kBuiltAvx512Bf16 = false;
#endif
#endif

bool Supported(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
#if defined(ACLNN_HAVE_X86_KERNELS)
    case Isa::kAvx2: { static const bool s = kBuiltAvx2 && DetectAvx2(); return s; }
    case Isa::kAvx512: { static const bool s = kBuiltAvx512 && DetectAvx512(); return s; }
    case Isa::kAvx512Bf16: { static const bool s = kBuiltAvx512Bf16 && DetectAvx512Bf16(); return s; }
#else
    default: return false;
#endif
  }
  return false;
}

Isa InitialIsa() {
  Isa best = BestIsa();
  if (const char* env = std::getenv("ACLNN_PORTABLE_ISA")) {
    Isa want = best;
    if (!std::strcmp(env, "scalar")) want = Isa::kScalar;
    else if (!std::strcmp(env, "avx2")) want = Isa::kAvx2;
    else if (!std::strcmp(env, "avx512")) want = Isa::kAvx512;
    else if (!std::strcmp(env, "avx512bf16")) want = Isa::kAvx512Bf16;
    else std::fprintf(stderr, "aclnn_portable: ignoring ACLNN_PORTABLE_ISA=%s (scalar|avx2|avx512|avx512bf16)\n", env);
    if (Supported(want)) best = want;
    else std::fprintf(stderr,
                      "aclnn_portable: ACLNN_PORTABLE_ISA=%s is not supported here (by the CPU, or left out of "
                      "this build); using %s\n", env, IsaName(best));
  }
  return best;
}

std::atomic<int>& ActiveSlot() {
  static std::atomic<int> slot{static_cast<int>(InitialIsa())};
  return slot;
}

}  // namespace

bool IsaSupported(Isa isa) { return Supported(isa); }

Isa BestIsa() {
  for (Isa isa : {Isa::kAvx512Bf16, Isa::kAvx512, Isa::kAvx2})
    if (Supported(isa)) return isa;
  return Isa::kScalar;
}

Isa ActiveIsa() { return static_cast<Isa>(ActiveSlot().load(std::memory_order_relaxed)); }

bool TrySetActiveIsa(Isa isa) {
  if (!Supported(isa)) return false;
  ActiveSlot().store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}
void SetActiveIsa(Isa isa) { TrySetActiveIsa(isa); }

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx512Bf16: return "avx512bf16";
  }
  return "?";
}

}  // namespace aclnn_portable
