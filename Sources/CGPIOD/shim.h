// SPDX-License-Identifier: Apache-2.0
// libgpiod for GPIODLines in PlatformLinux: whichever <gpiod.h> the build
// puts on the include path, 1.6 (Debian 12 libgpiod-dev 1.6.3, uAPI v1,
// GPIODLines.swift) or 2.x (Debian 13 libgpiod-dev 2.2.1, uAPI v2,
// GPIODLines2.swift); docs/pi-build.md "Which libgpiod". Everything either
// backend uses imports directly: no wrappers.
#ifndef WRISTLINK_CGPIOD_H
#define WRISTLINK_CGPIOD_H

#include <gpiod.h>

/* PlatformLinux is compiled for one libgpiod API (WRISTLINK_GPIOD from the
 * Makefile, docs/pi-build.md): a <gpiod.h> of the other major stops here,
 * in one line. 1.x defines GPIOD_LINE_BULK_MAX_LINES, 2.x does not. */
#if defined(WRISTLINK_GPIOD_API)
#  if WRISTLINK_GPIOD_API == 1 && !defined(GPIOD_LINE_BULK_MAX_LINES)
#    error "this <gpiod.h> is libgpiod 2.x but the build asked for the 1.x API: build with make, or set WRISTLINK_GPIOD=2"
#  elif WRISTLINK_GPIOD_API == 2 && defined(GPIOD_LINE_BULK_MAX_LINES)
#    error "this <gpiod.h> is libgpiod 1.x but the build asked for the 2.x API: build with make, or set WRISTLINK_GPIOD=1"
#  endif
#endif

#endif
