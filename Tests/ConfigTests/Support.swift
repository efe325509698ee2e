// SPDX-License-Identifier: Apache-2.0
import Config
import TestSupport

let shippedBoards = ["board/sim/board.conf", "board/vm/board.conf", "board/pi-zero-2w/board.conf", "board/pi4/board.conf", "board/pi5/board.conf"]

func board(_ text: String) throws(ConfigError) -> BoardConfig { try BoardConfig.parse(text) }

func boardError(_ text: String) -> ConfigError? {
    do {
        _ = try BoardConfig.parse(text)
        return nil
    } catch {
        return error
    }
}

/// The simulated product board, for policy tests.
let simBoard: BoardConfig = {
    do {
        return try BoardConfig.parse(
            """
            name sim
            chip sim
            output led-notify
            output led-call
            output vibration
            button accept
            button reject
            """)
    } catch {
        preconditionFailure("test board: \(error)")
    }
}()

func policyError(_ text: String, board: BoardConfig = simBoard) -> ConfigError? {
    do {
        _ = try PolicyConfig.parse(text, board: board)
        return nil
    } catch {
        return error
    }
}
