// wristlink: see `wristlink help` and README.md. This host build adds the
// simulator's commands to the firmware's.
import App
import PlatformLinux

ProcessControl.exit(
    CLI.main(ProcessControl.arguments) { command, arguments in
        switch command {
        case "phone": PhoneCommand.main(arguments)
        case "sim": SimCommand.main(arguments)
        default: nil
        }
    })
