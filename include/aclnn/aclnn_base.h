/* aclnn/aclnn_base.h — CANN's base header for aclnn operators. In aclnn-portable every type and
 * runtime function lives in acl/acl.h; this header exists so that code including it compiles. */
#ifndef ACLNN_PORTABLE_ACLNN_ACLNN_BASE_H_
#define ACLNN_PORTABLE_ACLNN_ACLNN_BASE_H_
#include "acl/acl.h"
#endif /* ACLNN_PORTABLE_ACLNN_ACLNN_BASE_H_ */
