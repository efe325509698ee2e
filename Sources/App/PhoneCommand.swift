// `wristlink phone`: the simulated iPhone (arrives with the PhoneSim module).

import PlatformLinux

public enum PhoneCommand {
    public static let usage = """
        USAGE: wristlink phone --connect unix:PATH [--scenario FILE]
        """

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        Log.error("the simulated phone is not built yet")
        return ExitCode.setup
    }
}
