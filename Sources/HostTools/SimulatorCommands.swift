// SPDX-License-Identifier: Apache-2.0
// HostTools: the commands only the host build has, the simulated iPhone
// (`wristlink phone`) and the whole product in one terminal (`wristlink
// sim`). They live in their own module, above App, so the Pi binary (App
// and `wristlink-pi` alone) cannot reach PhoneSim's code by construction:
// App does not import PhoneSim, and only the host's `wristlink` links this
// module (docs/architecture.md, docs/pi-build.md).

import App

public enum HostTools {
    /// The host build's simulator commands, listed after `run` in `wristlink help`.
    public static var simulatorCommands: [ExtraCommand] {
        [
            ExtraCommand(
                name: "phone", summary: "phone    a simulated iPhone (ANCS Notification Provider) for run --link unix",
                usage: PhoneCommand.usage, main: PhoneCommand.main),
            ExtraCommand(
                name: "sim", summary: "sim      run + phone + a simulated board in this terminal (what `make run` starts)",
                usage: SimCommand.usage, main: SimCommand.main),
        ]
    }
}
