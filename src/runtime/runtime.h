// Process-wide runtime state: aclInit / aclFinalize and the device calls.
#pragma once

namespace aclnn_portable {

// Releases every block from aclrtMalloc/aclrtMallocHost (aclFinalize).
void FreeAllBlocks();

}  // namespace aclnn_portable
