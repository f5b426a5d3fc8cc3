// The nine C entry points of mhc/mhc.h: validate (nothing is written on a bad argument, and
// aclGetRecentErrMsg() names it), plan (mhc_tiling.h), then run the tasks on the thread pool,
// now or queued on the stream. Computation lives only in mhc_kernels.cc.
#include <climits>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>

#include "mhc/mhc.h"
#include "ops/mhc/mhc_kernels.h"
#include "ops/mhc/mhc_tiling.h"
#include "platform/platform_info.h"
#include "platform/thread_pool.h"
#include "runtime/error.h"
#include "runtime/stream.h"

namespace aclnn_portable {
namespace {

struct NamedPointer {
  const char* name;
  const void* ptr;
};

bool Reject(const char* api, const std::string& message) {
  Fail(0, api, message);
  return false;
}

using ll = long long;

// Null pointers, then sizes, then overflowing products, then the stream (first failure wins).
bool ValidateArgs(const char* api, std::initializer_list<NamedPointer> pointers, const MhcShape& s,
                  MhcDtype dtype, void* stream) {
  for (const NamedPointer& p : pointers)
    if (p.ptr == nullptr) return Reject(api, StrFormat("%s must be a non-null pointer, got NULL", p.name));
  if (s.batch < 0) return Reject(api, StrFormat("batch must be >= 0, got %lld", static_cast<ll>(s.batch)));
  if (s.seqLen < 0) return Reject(api, StrFormat("seq_len must be >= 0, got %lld", static_cast<ll>(s.seqLen)));
  if (s.dim < 0) return Reject(api, StrFormat("dim must be >= 0, got %lld", static_cast<ll>(s.dim)));
  if (s.numStreams <= 0)
    return Reject(api, StrFormat("num_streams must be >= 1, got %lld", static_cast<ll>(s.numStreams)));
  const std::string sizes = StrFormat("(batch=%lld, seq_len=%lld, dim=%lld, num_streams=%lld)",
                                      static_cast<ll>(s.batch), static_cast<ll>(s.seqLen),
                                      static_cast<ll>(s.dim), static_cast<ll>(s.numStreams));
  int64_t rows = 0, row = 0, elems = 0, bytes = 0;
  if (__builtin_mul_overflow(s.batch, s.numStreams, &rows))
    return Reject(api, "batch * num_streams must fit in int64, but overflows " + sizes);
  if (__builtin_mul_overflow(s.seqLen, s.dim, &row))
    return Reject(api, "seq_len * dim must fit in int64, but overflows " + sizes);
  if (__builtin_mul_overflow(rows, row, &elems))
    return Reject(api, "batch * num_streams * seq_len * dim must fit in int64, but overflows " + sizes);
  if (__builtin_mul_overflow(elems, MhcElemBytes(dtype), &bytes) ||
      static_cast<uint64_t>(bytes) > static_cast<uint64_t>(SIZE_MAX))
    return Reject(api, StrFormat("the [batch*num_streams, seq_len, dim] tensor's size in bytes (%lld elements "
                                 "of %lld bytes) must fit in int64 and size_t, but overflows ",
                                 static_cast<ll>(elems), static_cast<ll>(MhcElemBytes(dtype))) + sizes);
  return CheckStream(api, stream);
}

// Runs every task of the plan on the pool (blockIdx = task index).
template <typename Body>
void RunTasks(const MhcTiling& plan, const Body& body) {
  if (plan.numTasks == 1) {
    body(0);
    return;
  }
  ThreadPool::Global().ParallelFor(plan.numTasks, plan.usedCores, body);
}

// Every entry point: clear the message, never let an exception escape into C.
template <typename F>
void Guarded(const char* api, F&& f) {
  ClearRecentError();
  try {
    f();
  } catch (const std::bad_alloc&) {
    Fail(0, api, "out of memory while queuing the call");
  } catch (const std::exception& e) {
    Fail(0, api, std::string("internal error: ") + e.what());
  }
}

template <MhcDtype kDtype>
void PostEntry(const char* api, uint32_t blockDim, void* stream, uint8_t* input, uint8_t* h, uint8_t* output,
               const MhcShape& shape) {
  Guarded(api, [&] {
    if (!ValidateArgs(api, {{"input", input}, {"h_post", h}, {"output", output}}, shape, kDtype, stream)) return;
    const MhcTiling plan = PlanMhc(MhcOp::kPost, kDtype, shape, blockDim, CurrentPlatform());
    if (plan.strategy == MhcStrategy::kEmpty) return;
    const MhcPostTaskFn fn = ACLNN_ISA_SELECT(MhcPostTask);
    const MhcPostArgs args{input, h, output};
    SubmitToStream(api, static_cast<aclrtStream>(stream),
                   [plan, fn, args] { RunTasks(plan, [&](int64_t t) { fn(plan, args, t); }); });
  });
}

template <MhcDtype kDtype>
void PreEntry(const char* api, uint32_t blockDim, void* stream, uint8_t* input, uint8_t* h, uint8_t* output,
              const MhcShape& shape) {
  Guarded(api, [&] {
    if (!ValidateArgs(api, {{"input", input}, {"h_pre", h}, {"output", output}}, shape, kDtype, stream)) return;
    const MhcTiling plan = PlanMhc(MhcOp::kPre, kDtype, shape, blockDim, CurrentPlatform());
    if (plan.strategy == MhcStrategy::kEmpty) return;
    const MhcPreTaskFn fn = ACLNN_ISA_SELECT(MhcPreTask);
    const MhcPreArgs args{input, h, output};
    SubmitToStream(api, static_cast<aclrtStream>(stream),
                   [plan, fn, args] { RunTasks(plan, [&](int64_t t) { fn(plan, args, t); }); });
  });
}

template <MhcDtype kDtype>
void BackwardEntry(const char* api, uint32_t blockDim, void* stream, uint8_t* gradOut, uint8_t* input,
                   uint8_t* h, uint8_t* gradInput, uint8_t* gradH, const MhcShape& shape) {
  Guarded(api, [&] {
    if (!ValidateArgs(api, {{"grad_out", gradOut}, {"input", input}, {"h_post", h}, {"grad_input", gradInput},
                            {"grad_h_post", gradH}},
                      shape, kDtype, stream))
      return;
    const MhcTiling plan = PlanMhc(MhcOp::kPostBackward, kDtype, shape, blockDim, CurrentPlatform());
    // Workspace for the grad_h block partials, owned by the queued call until it has run.
    const int64_t numPartials = plan.numStreams * plan.batch * plan.blocksPerRow;
    std::shared_ptr<float[]> partials;
    if (numPartials > 0) {
      partials.reset(new (std::nothrow) float[static_cast<size_t>(numPartials)]);
      if (!partials) {
        Fail(0, api, StrFormat("cannot allocate the grad_h workspace (%lld fp32 partials)", static_cast<ll>(numPartials)));
        return;
      }
    }
    const MhcBackwardTaskFn fn = ACLNN_ISA_SELECT(MhcBackwardTask);
    const MhcCombineGradHFn combine = ACLNN_ISA_SELECT(MhcCombineGradH);
    const MhcBackwardArgs args{gradOut, input, h, gradInput, partials.get()};
    SubmitToStream(api, static_cast<aclrtStream>(stream), [plan, fn, combine, args, partials, gradH] {
      if (plan.strategy != MhcStrategy::kEmpty) RunTasks(plan, [&](int64_t t) { fn(plan, args, t); });
      combine(plan, args.partials, gradH);  // the empty sum writes zeros
    });
  });
}

}  // namespace
}  // namespace aclnn_portable

using aclnn_portable::MhcDtype;
using aclnn_portable::MhcShape;

#define ACLNN_MHC_SHAPE MhcShape{batch, seq_len, dim, num_streams}

#define ACLNN_MHC_DEFINE(suffix, dtype)                                                                       \
  extern "C" void mhc_post_do_##suffix(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* h_post,     \
                                       uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,         \
                                       int64_t num_streams) {                                                \
    aclnn_portable::PostEntry<dtype>("mhc_post_do_" #suffix, blockDim, stream, input, h_post, output,        \
                                     ACLNN_MHC_SHAPE);                                                       \
  }                                                                                                          \
  extern "C" void mhc_pre_do_##suffix(uint32_t blockDim, void* stream, uint8_t* input, uint8_t* h_pre,       \
                                      uint8_t* output, int64_t batch, int64_t seq_len, int64_t dim,          \
                                      int64_t num_streams) {                                                 \
    aclnn_portable::PreEntry<dtype>("mhc_pre_do_" #suffix, blockDim, stream, input, h_pre, output,           \
                                    ACLNN_MHC_SHAPE);                                                        \
  }                                                                                                          \
  extern "C" void mhc_post_backward_do_##suffix(uint32_t blockDim, void* stream, uint8_t* grad_out,          \
                                                uint8_t* input, uint8_t* h_post, uint8_t* grad_input,        \
                                                uint8_t* grad_h_post, int64_t batch, int64_t seq_len,        \
                                                int64_t dim, int64_t num_streams) {                          \
    aclnn_portable::BackwardEntry<dtype>("mhc_post_backward_do_" #suffix, blockDim, stream, grad_out, input, \
                                         h_post, grad_input, grad_h_post, ACLNN_MHC_SHAPE);                  \
  }

ACLNN_MHC_DEFINE(fp32, MhcDtype::kFp32)
ACLNN_MHC_DEFINE(fp16, MhcDtype::kFp16)
ACLNN_MHC_DEFINE(bf16, MhcDtype::kBf16)
