/*
 * aclnnop/aclnn_softmax_cross_entropy_with_logits.h — TensorFlow's SoftmaxCrossEntropyWithLogits
 * behind CANN's two-stage aclnn API.
 *
 * For every logical row a of features (ND [N, C]: classes last; NCHW [N, C, H, W]: classes on
 * dim 1), computed in fp32 for every dtype:
 *   m = max_r x,  z_r = x_r - m,  s = sum_r exp(z_r),
 *   loss[a] = sum_r y_r * (log s - z_r),   backprop[a, r] = exp(z_r) / s - y_r.
 * dtypes: ACL_FLOAT, ACL_FLOAT16, ACL_BF16 (all four tensors the same). loss is [N] (ND) or
 * [N, H, W] (NCHW; its tensor may say NCHW, NHWC or ND); backprop has the shape of features and
 * may be exactly the features tensor (in-place gradient). Any strides and offsets are accepted.
 *
 * Stage 1 validates (in the order documented in docs/ and DESIGN §5; the first failure wins,
 * ACLNN_ERR_PARAM_NULLPTR or ACLNN_ERR_PARAM_INVALID with a message for aclGetRecentErrMsg),
 * plans, and returns the workspace size and an executor. Stage 2 runs the plan on `stream`
 * (NULL: synchronously). A NULL or too-small workspace is ACLNN_ERR_PARAM_INVALID, and a failed
 * call never writes an output.
 */
#ifndef ACLNN_PORTABLE_ACLNNOP_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS_H_
#define ACLNN_PORTABLE_ACLNNOP_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS_H_

#include "aclnn/aclnn_base.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclnnStatus aclnnSoftmaxCrossEntropyWithLogitsGetWorkspaceSize(
    const aclTensor* features, const aclTensor* labels, aclTensor* loss, aclTensor* backprop,
    uint64_t* workspaceSize, aclOpExecutor** executor);

ACL_FUNC_VISIBILITY aclnnStatus aclnnSoftmaxCrossEntropyWithLogits(void* workspace,
                                                                   uint64_t workspaceSize,
                                                                   aclOpExecutor* executor,
                                                                   aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* ACLNN_PORTABLE_ACLNNOP_SOFTMAX_CROSS_ENTROPY_WITH_LOGITS_H_ */
