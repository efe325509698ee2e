// wristlink: see `wristlink help` and README.md.
import App
import PlatformLinux

ProcessControl.exit(CLI.main(CommandLine.arguments))
