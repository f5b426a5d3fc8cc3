#include "numeric/numeric_probe.h"

#include "platform/dispatch.h"

namespace aclnn_portable {

ACLNN_DECLARE_FOR_EACH_ISA(void ProbeExp(const float*, float*, size_t))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeExpNonPositive(const float*, float*, size_t))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeExpNormalRange(const float*, float*, size_t))
ACLNN_DECLARE_FOR_EACH_ISA(bool ProbeInExpNormalRange(const float*, float))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeSplitAdd(const float*, size_t, float*, float*))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeToHalf(const float*, uint16_t*, size_t))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeToBf16(const float*, uint16_t*, size_t, int))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeLog(const float*, float*, size_t))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeLogPositiveNormal(const float*, float*, size_t))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeRows(int, int, bool, const void*, float*, const float*, void*))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbePartial(int, int, const void*, float, float*, const float*, void*))
ACLNN_DECLARE_FOR_EACH_ISA(void ProbeReduceRows(const float*, float*, float*, float*, float*))

// An ISA this machine lacks runs the portable kernels (tests only probe supported ones).
#define ACLNN_PROBE_PICK(isa, fn) ACLNN_ISA_SELECT_FOR(IsaSupported(isa) ? (isa) : Isa::kScalar, fn)

void ProbeExp(Isa isa, const float* x, float* y, size_t n) { ACLNN_PROBE_PICK(isa, ProbeExp)(x, y, n); }
void ProbeExpNonPositive(Isa isa, const float* x, float* y, size_t n) {
  ACLNN_PROBE_PICK(isa, ProbeExpNonPositive)(x, y, n);
}
void ProbeExpNormalRange(Isa isa, const float* x, float* y, size_t n) { ACLNN_PROBE_PICK(isa, ProbeExpNormalRange)(x, y, n); }
bool ProbeInExpNormalRange(Isa isa, const float* x, float ref) { return ACLNN_PROBE_PICK(isa, ProbeInExpNormalRange)(x, ref); }
void ProbeSplitAdd(Isa isa, const float* e, size_t vectors, float* k, float* t) {
  ACLNN_PROBE_PICK(isa, ProbeSplitAdd)(e, vectors, k, t);
}
void ProbeToHalf(Isa isa, const float* x, uint16_t* y, size_t n) { ACLNN_PROBE_PICK(isa, ProbeToHalf)(x, y, n); }
void ProbeToBf16(Isa isa, const float* x, uint16_t* y, size_t n, Bf16Store way) {
  ACLNN_PROBE_PICK(isa, ProbeToBf16)(x, y, n, static_cast<int>(way));
}
void ProbeLog(Isa isa, const float* x, float* y, size_t n) { ACLNN_PROBE_PICK(isa, ProbeLog)(x, y, n); }
void ProbeLogPositiveNormal(Isa isa, const float* x, float* y, size_t n) {
  ACLNN_PROBE_PICK(isa, ProbeLogPositiveNormal)(x, y, n);
}
void ProbeRows(Isa isa, int dtype, int n, bool runtime_n, const void* in, float* cols, const float* vals, void* out) {
  ACLNN_PROBE_PICK(isa, ProbeRows)(dtype, n, runtime_n, in, cols, vals, out);
}
void ProbePartial(Isa isa, int dtype, int n, const void* in, float fill, float* loaded, const float* vals, void* out) {
  ACLNN_PROBE_PICK(isa, ProbePartial)(dtype, n, in, fill, loaded, vals, out);
}
void ProbeReduceRows(Isa isa, const float* rows, float* sums, float* maxes, float* sumEach, float* maxEach) {
  ACLNN_PROBE_PICK(isa, ProbeReduceRows)(rows, sums, maxes, sumEach, maxEach);
}

}  // namespace aclnn_portable
