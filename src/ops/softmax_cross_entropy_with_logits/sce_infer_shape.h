// Shape inference for SoftmaxCrossEntropyWithLogits (pure): the broadcast shape of features
// and labels (ND, issue 7), and the loss shape of a layout.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/softmax_cross_entropy_with_logits/sce_tiling.h"

namespace aclnn_portable {

// ND: same rank and every dimension equal or 1 (TensorFlow's rule for this op) -> true and the
// broadcast shape. NCHW: the shapes must be equal. False when not broadcastable.
bool SceBroadcastShape(SceLayout layout, const std::vector<int64_t>& features,
                       const std::vector<int64_t>& labels, std::vector<int64_t>* out);

// ND [N, C] -> [N]; NCHW [N, C, H, W] -> [N, H, W]. `shape` has the layout's rank.
std::vector<int64_t> SceLossShape(SceLayout layout, const std::vector<int64_t>& shape);

}  // namespace aclnn_portable
