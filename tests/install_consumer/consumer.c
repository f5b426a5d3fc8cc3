/* A C program written only against the installed headers: runs the operator on TensorFlow's
 * known values and checks an error path. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "mhc/mhc.h"

static int close_to(float a, float b) { return fabsf(a - b) <= 1e-6f * (1.0f + fabsf(b)); }

int main(void) {
  float features[8] = {1, 1, 1, 1, 1, 2, 3, 4};
  float labels[8] = {0, 0, 0, 1, 0, 0.5f, 0.5f, 0};
  float loss[2] = {0}, backprop[8] = {0};
  int64_t shape[2] = {2, 4}, strides[2] = {4, 1}, loss_shape[1] = {2}, loss_strides[1] = {1};
  aclTensor* f = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, features);
  aclTensor* l = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, labels);
  aclTensor* lo = aclCreateTensor(loss_shape, 1, ACL_FLOAT, loss_strides, 0, ACL_FORMAT_ND, loss_shape, 1, loss);
  aclTensor* b = aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, backprop);
  uint64_t ws = 0;
  aclOpExecutor* ex = NULL;
  if (aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f, l, lo, b, &ws, &ex) != ACLNN_SUCCESS) {
    printf("GetWorkspaceSize failed: %s\n", aclGetRecentErrMsg());
    return 1;
  }
  void* wsp = NULL;
  if (ws > 0 && aclrtMalloc(&wsp, ws, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 2;
  if (aclnnSoftmaxCrossEntropyWithLogits(wsp, ws, ex, NULL) != ACLNN_SUCCESS) return 3;
  if (!close_to(loss[0], 1.3862944f) || !close_to(loss[1], 1.9401897f)) {
    printf("wrong loss %.7f %.7f\n", loss[0], loss[1]);
    return 4;
  }
  if (!close_to(backprop[7], 0.6439143f)) return 5;
  /* an error path: null workspaceSize */
  if (aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(f, l, lo, b, NULL, &ex) != ACLNN_ERR_PARAM_NULLPTR) return 6;
  if (strlen(aclGetRecentErrMsg()) == 0) return 7;
  /* mhc_post fp32: out[b*N+s] = x[b] * h[s] */
  float x[3] = {1, 2, 3}, h[2] = {0.5f, -2}, out[6] = {0};
  mhc_post_do_fp32(0, NULL, (uint8_t*)x, (uint8_t*)h, (uint8_t*)out, 1, 1, 3, 2);
  if (out[0] != 0.5f || out[5] != -6.0f) return 8;
  if (wsp) aclrtFree(wsp);
  aclDestroyTensor(f); aclDestroyTensor(l); aclDestroyTensor(lo); aclDestroyTensor(b);
  printf("installed-library consumer OK\n");
  return 0;
}
