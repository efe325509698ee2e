// SPDX-License-Identifier: Apache-2.0
// The Pi's `wristlink`: the firmware's commands only (run, forget,
// lines-off, doctor, test-board, version). The simulator's `phone` and
// `sim` stay in the host build, so neither its help nor its command list
// names them; App does not import PhoneSim, so none of it is in the Pi
// binary (HostTools, which holds them, is linked into the host build only)
// (docs/pi-build.md).
import App
import PlatformLinux

ProcessControl.exit(CLI.main(ProcessControl.arguments))
