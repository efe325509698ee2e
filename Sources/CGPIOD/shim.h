// SPDX-License-Identifier: Apache-2.0
// libgpiod for GPIODLines in PlatformLinux: whichever <gpiod.h> the build
// puts on the include path, 1.6 (Debian 12 libgpiod-dev 1.6.3, uAPI v1,
// GPIODLines.swift) or 2.x (Debian 13 libgpiod-dev 2.2.1, uAPI v2,
// GPIODLines2.swift); docs/pi-build.md "Which libgpiod". Everything either
// backend uses imports directly: no wrappers.
#ifndef WRISTLINK_CGPIOD_H
#define WRISTLINK_CGPIOD_H

#include <gpiod.h>

#endif
