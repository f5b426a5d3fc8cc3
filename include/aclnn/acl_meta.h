/* aclnn/acl_meta.h — tensor and executor declarations in CANN; here they live in acl/acl.h. */
#ifndef ACLNN_PORTABLE_ACLNN_ACL_META_H_
#define ACLNN_PORTABLE_ACLNN_ACL_META_H_
#include "acl/acl.h"
#endif /* ACLNN_PORTABLE_ACLNN_ACL_META_H_ */
