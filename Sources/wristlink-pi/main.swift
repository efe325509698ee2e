// The Pi's `wristlink`: the firmware's commands only (run, forget,
// lines-off, doctor, test-board). The simulator's `phone` and `sim` stay
// in the host build, so they and PhoneSim drop out of the Pi binary at
// link time (docs/pi-build.md).
import App
import PlatformLinux

ProcessControl.exit(CLI.main(ProcessControl.arguments) { _, _ in nil })
