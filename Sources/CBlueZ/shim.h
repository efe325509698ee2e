// SPDX-License-Identifier: Apache-2.0
// BlueZ's kernel-interface headers (Debian libbluetooth-dev) for the L2CAP
// ATT socket and the management socket, plus inline stand-ins for the macros
// Swift cannot import (compound literals, htobs).
#ifndef WRISTLINK_CBLUEZ_SHIM_H
#define WRISTLINK_CBLUEZ_SHIM_H

// glibc's declarations come through CLinux (its module owns them in the
// Embedded build, where no Glibc module exists; a second textual copy here
// would hide them from files that import only CLinux). So a target that
// imports CBlueZ also depends on CLinux.
#include "CLinux.h"
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/l2cap.h>
#include <string.h>

/// The ATT fixed channel (not defined by the headers).
#define WL_ATT_CID 4

/// A sockaddr_l2 for the ATT fixed channel on any local adapter.
static inline struct sockaddr_l2 wl_att_listen_address(uint8_t bdaddr_type) {
    struct sockaddr_l2 a;
    memset(&a, 0, sizeof(a));
    a.l2_family = AF_BLUETOOTH;
    a.l2_cid = htobs(WL_ATT_CID);
    a.l2_bdaddr_type = bdaddr_type;
    return a;  // l2_bdaddr all zero: BDADDR_ANY
}

/// The address for the management interface's control channel.
static inline struct sockaddr_hci wl_mgmt_address(void) {
    struct sockaddr_hci a;
    memset(&a, 0, sizeof(a));
    a.hci_family = AF_BLUETOOTH;
    a.hci_dev = HCI_DEV_NONE;
    a.hci_channel = HCI_CHANNEL_CONTROL;
    return a;
}

#endif
