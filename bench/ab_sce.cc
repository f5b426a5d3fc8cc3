// ab_sce: two (or more) builds of the library, one SoftmaxCrossEntropyWithLogits shape, timed in
// one process. On a shared machine whose speed drifts 10-25 % from one process to the next, a
// before/after comparison of a kernel change run as two processes measures the drift; here the
// builds' calls alternate batch by batch on the same inputs, so the drift reaches both alike.
//
//   ab_sce [--dtype fp32|bf16|fp16] [--nchw HxW] [--rounds R] [--batch B] [--gap-us G] A C LIB_OLD LIB_NEW [LIB ...]
//
// Each LIB is a libaclnn_portable.so (of a build directory); it is copied to a private file and
// loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND), so every build keeps its own symbols, thread
// pool and dispatch. Every build runs plan + execute (GetWorkspaceSize + execute, null stream)
// on the same features U(-4, 4) and labels U(0, 2 / C) of shape [A, C] (--nchw: NCHW [A, C, H,
// W], loss [A, H, W]), into outputs of its own;
// R rounds (default 20) of B calls (default 20) per build, the order of the builds reversed
// every other round. Reported per build: the minimum and the median over rounds of the mean
// time per call, in ns per element, the ratio of minima to the first build, and "same" / "DIFF"
// for whether its loss and backprop bytes equal the first build's.
//
// --gap-us G (G > 0): calls that find the pool asleep, as in a training step whose other work
// lasts longer than the workers' spin: before each call the caller busy-waits G microseconds,
// and each call is timed alone; reported per build besides: the median and 90th percentile of
// the single calls. (The batch means then hold the calls' times without the gaps.)
//
// AB_SCE_KEEP_COPIES=1 leaves the private copies in place (named on stderr, for `perf report`
// to find the builds' symbols; remove them afterwards).
// Threads: ACLNN_PORTABLE_NUM_THREADS as for any call (and ACLNN_PORTABLE_ISA to pick a tier).
// With several threads, each build's pool is its own, and short calls (tens of microseconds)
// are disturbed by the other builds' pool threads: compare those on one thread.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "bench_common.h"

namespace {

using bench::DType;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "ab_sce: %s\n", what.c_str());
  std::exit(2);
}

// Page-touched, 64-byte aligned bytes of this process (bench::Buffer allocates through the
// library, and no build's library is linked here).
class Bytes {
 public:
  Bytes() = default;
  explicit Bytes(size_t n) : p_(static_cast<uint8_t*>(std::aligned_alloc(64, (n + 63) / 64 * 64 + 64))) {
    if (p_ == nullptr) Fail("out of memory");
    std::memset(p_, 0, (n + 63) / 64 * 64 + 64);
  }
  Bytes(Bytes&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Bytes& operator=(Bytes&& o) noexcept { std::swap(p_, o.p_); return *this; }
  Bytes(const Bytes&) = delete;
  ~Bytes() { std::free(p_); }
  uint8_t* data() const { return p_; }

 private:
  uint8_t* p_ = nullptr;
};

struct Build {
  std::string path;
  decltype(&aclInit) init = nullptr;
  decltype(&aclCreateTensor) createTensor = nullptr;
  decltype(&aclDestroyAclOpExecutor) destroyExecutor = nullptr;
  decltype(&aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize) getWorkspaceSize = nullptr;
  decltype(&aclnnSoftmaxCrossEntropyWithLogits) execute = nullptr;
  aclTensor *features = nullptr, *labels = nullptr, *loss = nullptr, *backprop = nullptr;
  Bytes lossBuf, backpropBuf, workspace;
  std::vector<double> means;  // ns per element, one per round
  std::vector<double> calls;  // --gap-us: ns per element of every call
};

// A private copy of the library: dlopen returns the loaded copy again for a path (or file) it
// has seen, and two build directories may hand over the same file through symlinks.
std::string PrivateCopy(const std::string& src) {
  char name[] = "/tmp/ab_sce_XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) Fail("cannot create a temporary file for " + src);
  close(fd);
  std::ifstream in(src, std::ios::binary);
  if (!in) Fail("cannot read " + src);
  std::ofstream out(name, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  if (!out) Fail("cannot copy " + src);
  return name;
}

template <typename F>
void Resolve(void* h, const char* symbol, F* fn, const std::string& lib) {
  *fn = reinterpret_cast<F>(dlsym(h, symbol));
  if (*fn == nullptr) Fail(lib + " has no " + symbol);
}

}  // namespace

int main(int argc, char** argv) {
  DType dt = DType::kF32;
  int rounds = 20, batch = 20;
  double gapUs = 0.0;
  int64_t H = 0, W = 0;  // --nchw
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--dtype") {
      const std::string v = value();
      if (v == "fp32") dt = DType::kF32;
      else if (v == "bf16") dt = DType::kBF16;
      else if (v == "fp16") dt = DType::kF16;
      else Fail("--dtype: expected fp32, bf16 or fp16, got " + v);
    } else if (a == "--nchw") {
      const std::string v = value();
      long long h = 0, w = 0;
      char end = 0;
      if (std::sscanf(v.c_str(), "%lldx%lld%c", &h, &w, &end) != 2 || h < 1 || w < 1)
        Fail("--nchw: expected HxW with positive H and W (e.g. 256x256), got " + v);
      H = h, W = w;
    } else if (a == "--rounds") {
      rounds = std::atoi(value().c_str());
    } else if (a == "--batch") {
      batch = std::atoi(value().c_str());
    } else if (a == "--gap-us") {
      gapUs = std::atof(value().c_str());
      if (!(gapUs >= 0.0)) Fail("--gap-us: expected a number of microseconds >= 0");
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: ab_sce [--dtype fp32|bf16|fp16] [--nchw HxW] [--rounds R] [--batch B] [--gap-us G] A C LIB_OLD LIB_NEW [LIB ...]\n");
      return 0;
    } else {
      args.push_back(a);
    }
  }
  if (args.size() < 4) Fail("expected A C and at least two libraries (--help)");
  const int64_t A = std::atoll(args[0].c_str()), C = std::atoll(args[1].c_str());
  if (A < 1 || C < 1) Fail("A and C: expected positive integers, got " + args[0] + " " + args[1]);
  if (rounds < 1 || batch < 1) Fail("--rounds and --batch: expected positive integers");

  const bool nchw = H > 0;
  const int64_t HW = nchw ? H * W : 1;
  const size_t es = bench::ElementSize(dt), n = static_cast<size_t>(A * C * HW), nLoss = static_cast<size_t>(A * HW);
  Bytes features(n * es), labels(n * es);
  bench::FillUniform(features.data(), n, dt, -4.0f, 4.0f, 1);
  bench::FillUniform(labels.data(), n, dt, 0.0f, 2.0f / static_cast<float>(C), 2);

  std::vector<Build> builds(args.size() - 2);
  for (size_t b = 0; b < builds.size(); ++b) {
    Build& B = builds[b];
    B.path = args[b + 2];
    const std::string copy = PrivateCopy(B.path);
    void* h = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (std::getenv("AB_SCE_KEEP_COPIES"))
      std::fprintf(stderr, "ab_sce: %s is a copy of %s\n", copy.c_str(), B.path.c_str());
    else
      std::remove(copy.c_str());  // the mapping stays
    if (h == nullptr) Fail("dlopen " + B.path + ": " + dlerror());
    Resolve(h, "aclInit", &B.init, B.path);
    Resolve(h, "aclCreateTensor", &B.createTensor, B.path);
    Resolve(h, "aclDestroyAclOpExecutor", &B.destroyExecutor, B.path);
    Resolve(h, "aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize", &B.getWorkspaceSize, B.path);
    Resolve(h, "aclnnSoftmaxCrossEntropyWithLogits", &B.execute, B.path);
    B.init(nullptr);
    const aclDataType at = bench::AclType(dt);
    const uint64_t rank = nchw ? 4 : 2, lossRank = nchw ? 3 : 1;
    const aclFormat fmt = nchw ? ACL_FORMAT_NCHW : ACL_FORMAT_ND;
    int64_t shape[4] = {A, C, H, W}, strides[4] = {C * HW, HW, W, 1}, lossShape[3] = {A, H, W}, lossStrides[3] = {HW, W, 1};
    if (!nchw) strides[0] = C, strides[1] = 1, lossStrides[0] = 1;
    B.lossBuf = Bytes(nLoss * es);
    B.backpropBuf = Bytes(n * es);
    B.features = B.createTensor(shape, rank, at, strides, 0, fmt, shape, rank, features.data());
    B.labels = B.createTensor(shape, rank, at, strides, 0, fmt, shape, rank, labels.data());
    B.backprop = B.createTensor(shape, rank, at, strides, 0, fmt, shape, rank, B.backpropBuf.data());
    B.loss = B.createTensor(lossShape, lossRank, at, lossStrides, 0, ACL_FORMAT_ND, lossShape, lossRank, B.lossBuf.data());
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    const aclnnStatus st = B.getWorkspaceSize(B.features, B.labels, B.loss, B.backprop, &ws, &ex);
    if (st != ACLNN_SUCCESS) Fail(B.path + ": GetWorkspaceSize failed with status " + std::to_string(st));
    B.destroyExecutor(ex);  // only the workspace size was wanted
    B.workspace = Bytes(ws + 64);
  }

  auto call = [&](Build& B) {
    uint64_t ws = 0;
    aclOpExecutor* ex = nullptr;
    if (B.getWorkspaceSize(B.features, B.labels, B.loss, B.backprop, &ws, &ex) != ACLNN_SUCCESS)
      Fail(B.path + ": GetWorkspaceSize failed");
    if (B.execute(ws ? B.workspace.data() : nullptr, ws, ex, nullptr) != ACLNN_SUCCESS) Fail(B.path + ": execute failed");
  };
  for (Build& B : builds)
    for (int i = 0; i < 5; ++i) call(B);  // warm-up: caches, pages, thread pools
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < builds.size(); ++i) {
      Build& B = builds[(r & 1) ? builds.size() - 1 - i : i];
      auto since = [](std::chrono::steady_clock::time_point t0) {
        return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      };
      double ns = 0.0;  // the batch's calls, without the gaps
      if (gapUs > 0.0) {
        for (int k = 0; k < batch; ++k) {
          const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(gapUs);
          while (std::chrono::steady_clock::now() < until) {
          }
          const auto t0 = std::chrono::steady_clock::now();
          call(B);
          const double one = since(t0);
          B.calls.push_back(one / static_cast<double>(n));
          ns += one;
        }
      } else {
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < batch; ++k) call(B);
        ns = since(t0);
      }
      B.means.push_back(ns / batch / static_cast<double>(n));
    }

  std::printf("%s %s[%lld, %lld%s], %d rounds of %d calls; ns per element (min, median over rounds)\n", bench::Name(dt),
              nchw ? "NCHW " : "", static_cast<long long>(A), static_cast<long long>(C),
              nchw ? (", " + std::to_string(H) + ", " + std::to_string(W)).c_str() : "", rounds, batch);
  const double base = *std::min_element(builds[0].means.begin(), builds[0].means.end());
  for (Build& B : builds) {
    std::vector<double> v = B.means;
    std::sort(v.begin(), v.end());
    const bool same = std::memcmp(B.backpropBuf.data(), builds[0].backpropBuf.data(), n * es) == 0 &&
                      std::memcmp(B.lossBuf.data(), builds[0].lossBuf.data(), nLoss * es) == 0;
    std::printf("  %-40s min %.4f  median %.4f  x%.3f  %s\n", B.path.c_str(), v[0], v[v.size() / 2], v[0] / base,
                &B == &builds[0] ? "(reference)" : same ? "same bits" : "DIFF");
    if (!B.calls.empty()) {
      std::vector<double> c = B.calls;
      std::sort(c.begin(), c.end());
      std::printf("  %-40s single calls after %.0f us: median %.4f  p90 %.4f  (%zu calls)\n", "", gapUs,
                  c[c.size() / 2], c[c.size() * 9 / 10], c.size());
    }
  }
  return 0;
}
