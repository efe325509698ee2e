// SPDX-License-Identifier: Apache-2.0
#include "CBuildInfo.h"

#ifndef WRISTLINK_VERSION
#define WRISTLINK_VERSION "unknown"
#endif
#ifndef WRISTLINK_REVISION
#define WRISTLINK_REVISION "unknown"
#endif

const char *wl_build_version(void) { return WRISTLINK_VERSION; }
const char *wl_build_revision(void) { return WRISTLINK_REVISION; }
