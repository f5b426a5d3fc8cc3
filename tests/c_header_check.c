/* Compiled as C: the public headers must be plain C, and the C entry points must link. */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnnop/aclnn_softmax_cross_entropy_with_logits.h"
#include "mhc/mhc.h"

int main(void) {
  void* p = NULL;
  if (aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS) return 1;  /* size 0 fails */
  if (strlen(aclGetRecentErrMsg()) == 0) return 2;
  if (aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) return 3;
  if (aclrtFree(p) != ACL_SUCCESS) return 4;
  printf("C headers OK\n");
  return 0;
}
