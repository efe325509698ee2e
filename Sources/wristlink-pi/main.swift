// SPDX-License-Identifier: Apache-2.0
// The Pi's `wristlink`: the firmware's commands only (run, forget,
// lines-off, doctor, test-board, version). The simulator's `phone` and
// `sim` stay in the host build, so neither its help nor its command list
// names them, and they and PhoneSim drop out of the Pi binary at link time
// (docs/pi-build.md).
import App
import PlatformLinux

ProcessControl.exit(CLI.main(ProcessControl.arguments))
