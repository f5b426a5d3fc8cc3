#include "ops/softmax_cross_entropy_with_logits/sce_infer_shape.h"

#include <cstddef>

namespace aclnn_portable {

bool SceBroadcastShape(SceLayout layout, const std::vector<int64_t>& features,
                       const std::vector<int64_t>& labels, std::vector<int64_t>* out) {
  if (features.size() != labels.size()) return false;
  if (layout == SceLayout::kNCHW) {
    if (features != labels) return false;
    *out = features;
    return true;
  }
  std::vector<int64_t> b(features.size());
  for (size_t i = 0; i < features.size(); ++i) {
    const int64_t f = features[i], l = labels[i];
    if (f != l && f != 1 && l != 1) return false;
    b[i] = f == 1 ? l : f;
  }
  *out = std::move(b);
  return true;
}

std::vector<int64_t> SceLossShape(SceLayout layout, const std::vector<int64_t>& shape) {
  if (layout == SceLayout::kNCHW) return {shape[0], shape[2], shape[3]};
  return {shape[0]};
}

}  // namespace aclnn_portable
