// libgpiod 1.6 (Debian libgpiod-dev 1.6.3, uAPI v1) for GPIODLines in
// PlatformLinux. Everything GPIODLines uses imports directly: no wrappers.
#ifndef WRISTLINK_CGPIOD_H
#define WRISTLINK_CGPIOD_H

#include <gpiod.h>

#endif
