/**
 * SoftmaxCrossEntropyWithLogits sample, in the style of CANN's aclnn samples: ND [16, 4] and
 * NCHW [2, 3, 2, 2] in fp32. Prints loss and backprop and checks them against a plain loop;
 * exits non-zero on a mismatch.
 */
#include <cmath>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"

#define CHECK_RET(cond, return_expr) \
  do {                               \
    if (!(cond)) {                   \
      return_expr;                   \
    }                                \
  } while (0)

#define LOG_PRINT(message, ...)     \
  do {                              \
    printf(message, ##__VA_ARGS__); \
  } while (0)

int64_t GetShapeSize(const std::vector<int64_t>& shape) {
  int64_t shapeSize = 1;
  for (auto i : shape) {
    shapeSize *= i;
  }
  return shapeSize;
}

int Init(int32_t deviceId, aclrtStream* stream) {
  // Fixed boilerplate: initialise ACL, pick the device, create a stream.
  auto ret = aclInit(nullptr);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
  ret = aclrtSetDevice(deviceId);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
  ret = aclrtCreateStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
  return 0;
}

template <typename T>
int CreateAclTensor(const std::vector<T>& hostData, const std::vector<int64_t>& shape, void** deviceAddr,
                    aclDataType dataType, aclTensor** tensor, aclFormat format = aclFormat::ACL_FORMAT_ND) {
  auto size = GetShapeSize(shape) * sizeof(T);
  // Device memory, then copy the host data into it.
  auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
  ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);

  // Contiguous strides.
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
    strides[i] = shape[i + 1] * strides[i + 1];
  }
  *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, format, shape.data(),
                            shape.size(), *deviceAddr);
  return 0;
}

// The reference: a plain loop over logical rows (classes at stride `cstride`).
void Reference(const std::vector<float>& x, const std::vector<float>& y, int64_t rows, int64_t C,
               int64_t inner, std::vector<double>* loss, std::vector<double>* backprop) {
  loss->assign(rows * inner, 0.0);
  backprop->assign(x.size(), 0.0);
  for (int64_t n = 0; n < rows; ++n) {
    for (int64_t p = 0; p < inner; ++p) {
      auto at = [&](int64_t c) { return (n * C + c) * inner + p; };
      double m = x[at(0)];
      for (int64_t c = 1; c < C; ++c) m = std::fmax(m, x[at(c)]);
      double s = 0;
      for (int64_t c = 0; c < C; ++c) s += std::exp(x[at(c)] - m);
      for (int64_t c = 0; c < C; ++c) {
        const double z = x[at(c)] - m;
        (*loss)[n * inner + p] += y[at(c)] * (std::log(s) - z);
        (*backprop)[at(c)] = std::exp(z) / s - y[at(c)];
      }
    }
  }
}

// One case: create tensors, two-stage call, copy back, print, check, release.
int RunCase(const char* title, aclrtStream stream, const std::vector<int64_t>& shape,
            const std::vector<int64_t>& lossShape, aclFormat format) {
  const int64_t size = GetShapeSize(shape);
  const int64_t C = shape[1];
  const int64_t rows = shape[0];
  const int64_t inner = size / (rows * C);
  std::vector<float> featuresHostData(size), labelsHostData(size, 0.0f);
  for (int64_t i = 0; i < size; ++i) featuresHostData[i] = static_cast<float>((i * 7) % 11) * 0.5f - 2.0f;
  for (int64_t n = 0; n < rows; ++n)  // a one-hot label per logical row
    for (int64_t p = 0; p < inner; ++p) labelsHostData[(n * C + (n + p) % C) * inner + p] = 1.0f;
  std::vector<float> lossHostData(GetShapeSize(lossShape), 0.0f), backpropHostData(size, 0.0f);

  void* featuresDeviceAddr = nullptr;
  void* labelsDeviceAddr = nullptr;
  void* lossDeviceAddr = nullptr;
  void* backpropDeviceAddr = nullptr;
  aclTensor* features = nullptr;
  aclTensor* labels = nullptr;
  aclTensor* loss = nullptr;
  aclTensor* backprop = nullptr;
  auto ret = CreateAclTensor(featuresHostData, shape, &featuresDeviceAddr, aclDataType::ACL_FLOAT, &features, format);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(labelsHostData, shape, &labelsDeviceAddr, aclDataType::ACL_FLOAT, &labels, format);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(lossHostData, lossShape, &lossDeviceAddr, aclDataType::ACL_FLOAT, &loss);
  CHECK_RET(ret == ACL_SUCCESS, return ret);
  ret = CreateAclTensor(backpropHostData, shape, &backpropDeviceAddr, aclDataType::ACL_FLOAT, &backprop, format);
  CHECK_RET(ret == ACL_SUCCESS, return ret);

  // First stage: workspace size and executor.
  uint64_t workspaceSize = 0;
  aclOpExecutor* executor = nullptr;
  ret = aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(features, labels, loss, backprop, &workspaceSize, &executor);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize failed. ERROR: %d (%s)\n", ret,
                      aclGetRecentErrMsg());
            return ret);
  void* workspaceAddr = nullptr;
  if (workspaceSize > 0) {
    ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
  }
  // Second stage: execute on the stream.
  ret = aclnnSoftmaxCrossEntropyWithLogits(workspaceAddr, workspaceSize, executor, stream);
  CHECK_RET(ret == ACL_SUCCESS,
            LOG_PRINT("aclnnSoftmaxCrossEntropyWithLogits failed. ERROR: %d (%s)\n", ret, aclGetRecentErrMsg());
            return ret);
  ret = aclrtSynchronizeStream(stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

  // Copy the results back to the host and print them.
  ret = aclrtMemcpy(lossHostData.data(), lossHostData.size() * sizeof(float), lossDeviceAddr,
                    lossHostData.size() * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy loss from device to host failed. ERROR: %d\n", ret); return ret);
  ret = aclrtMemcpy(backpropHostData.data(), backpropHostData.size() * sizeof(float), backpropDeviceAddr,
                    backpropHostData.size() * sizeof(float), ACL_MEMCPY_DEVICE_TO_HOST);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy backprop from device to host failed. ERROR: %d\n", ret); return ret);

  std::vector<double> lossRef, backpropRef;
  Reference(featuresHostData, labelsHostData, rows, C, inner, &lossRef, &backpropRef);
  int mismatches = 0;
  LOG_PRINT("== %s (workspace %llu bytes)\n", title, static_cast<unsigned long long>(workspaceSize));
  for (size_t i = 0; i < lossHostData.size(); i++) {
    LOG_PRINT("loss[%zu] is: %f\n", i, lossHostData[i]);
    if (std::fabs(lossHostData[i] - lossRef[i]) > 1e-5 * (1 + std::fabs(lossRef[i]))) ++mismatches;
  }
  for (size_t i = 0; i < backpropHostData.size(); i++) {
    LOG_PRINT("backprop[%zu] is: %f\n", i, backpropHostData[i]);
    if (std::fabs(backpropHostData[i] - backpropRef[i]) > 1e-6) ++mismatches;
  }
  LOG_PRINT("%s: %s against the plain loop (%d mismatches)\n", title, mismatches ? "FAILED" : "matches",
            mismatches);

  // Release tensors and device memory.
  aclDestroyTensor(features);
  aclDestroyTensor(labels);
  aclDestroyTensor(loss);
  aclDestroyTensor(backprop);
  aclrtFree(featuresDeviceAddr);
  aclrtFree(labelsDeviceAddr);
  aclrtFree(lossDeviceAddr);
  aclrtFree(backpropDeviceAddr);
  if (workspaceSize > 0) {
    aclrtFree(workspaceAddr);
  }
  return mismatches ? 1 : 0;
}

int main() {
  // 1. Initialise the device and a stream.
  int32_t deviceId = 0;
  aclrtStream stream;
  auto ret = Init(deviceId, &stream);
  CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

  // 2. ND [N, C] = [16, 4], loss [16]; NCHW [2, 3, 2, 2], loss [2, 2, 2].
  int failed = RunCase("ND [16, 4]", stream, {16, 4}, {16}, aclFormat::ACL_FORMAT_ND);
  failed |= RunCase("NCHW [2, 3, 2, 2]", stream, {2, 3, 2, 2}, {2, 2, 2}, aclFormat::ACL_FORMAT_NCHW);

  // 3. Release the stream and the device.
  aclrtDestroyStream(stream);
  aclrtResetDevice(deviceId);
  aclFinalize();
  return failed;
}
