// SPDX-License-Identifier: Apache-2.0
// wristlink: see `wristlink help` and README.md. This host build adds the
// simulator's commands to the firmware's.
import App
import HostTools
import PlatformLinux

ProcessControl.exit(CLI.main(ProcessControl.arguments, extra: HostTools.simulatorCommands))
