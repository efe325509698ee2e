// SPDX-License-Identifier: Apache-2.0
// `wristlink run`: the firmware daemon. Its log opens with the version line
// (BuildInfo), its events stream with the hello event (Reporter).

import Bounded
import Config
import Firmware
import Mgmt
import Platform
import PlatformLinux

public enum RunCommand {
    public static let usage = """
        USAGE: wristlink run [--link bluez[:hciN] | --link unix:PATH] [--board FILE] [--policy FILE]
                             [--gpio chip | --gpio sim] [--events FILE|-] [--trace FILE]
                             [--log-level LEVEL] [--state-dir DIR] [--consent-window-ms MS] [--accept-pairing]
                             [--replay-window-ms MS] [--keep-alive-ms MS] [--resubscribe-ms MS]
                             [--fallback-board FILE] [--fallback-policy FILE] [--power-supply DIR]

          --link bluez[:hciN]  the phone over the kernel's Bluetooth stack (default bluez:hci0)
          --link unix:PATH     listen on a UNIX SOCK_SEQPACKET socket instead (one packet = one ATT PDU),
                               for the simulated phone (wristlink phone --connect unix:PATH)
          --gpio chip          real GPIO lines through libgpiod, as the board file names them (default)
          --gpio sim           simulated lines: press buttons on stdin with `press <button> <ms>`;
                               line changes appear in the events stream
          --board FILE         pin map (default /etc/wristlink/board.conf; with --gpio sim:
                               board/sim/board.conf)
          --policy FILE        what alerts look like and what buttons do (default
                               /etc/wristlink/policy.conf; with --gpio sim: board/policy.conf)
          --fallback-board FILE, --fallback-policy FILE
                               the shipped defaults, used when --board or --policy is missing or has an
                               error (or the board's lines cannot be had): each error is logged with its
                               file and line, and the policy's settings-error feedback plays once
          --events FILE|-      JSON Lines events stream to FILE or stdout (may contain notification contents)
          --trace FILE         every ATT PDU in and out as a btsnoop file (Wireshark, tshark, btmon), titles and
                               messages included; like the events FILE it is made mode 0600, and a
                               symbolic link there is refused
          --log-level LEVEL    error, warning, notice, info (default) or debug; contents are logged only at debug
          --state-dir DIR      where bonds are kept (default /var/lib/wristlink), and where the system leaves
                               a notice for the wrist: DIR/notice holding update-done or update-failed is
                               shown once (the policy's feedback of that name) at start and on SIGUSR1,
                               then removed (on the UNIX link only when --state-dir is given)
          --consent-window-ms MS  how long a pairing request waits for the wearer's press before it is
                               refused (1000...25000, default 20000; SMP itself gives up after 30 s)
          --accept-pairing     accept pairing requests in pairing mode without a press, and keep the
                               keys of any pairing made in pairing mode (a headless test rig; a wearer
                               should not use it)
          --replay-window-ms MS  after subscribing, how long notifications (calls excepted) are taken
                               as the phone's replay and never alert (0...30000, default 3000)
          --keep-alive-ms MS   Notification Source silence after which the wearable checks that the
                               phone still has its subscription (10000...3600000, default 900000)
          --resubscribe-ms MS  Notification Source silence after which the wearable subscribes again on
                               the live link, even if the phone answers the check (10000...86400000,
                               default 1800000)
          --power-supply DIR   where the board's `battery` is looked for (default /sys/class/power_supply;
                               another directory with the same files stands in for a fuel gauge, e.g.
                               for the simulated board)

        Stops on SIGINT or SIGTERM with every output off; SIGUSR1 looks for DIR/notice. Exit codes: see wristlink help.
        """

    enum LinkChoice {
        case bluez(index: UInt16)
        case unix(path: String)
    }

    struct Options {
        var link = LinkChoice.bluez(index: 0)
        var simulatedGPIO = false
        var boardPath = "/etc/wristlink/board.conf"
        var policyPath = "/etc/wristlink/policy.conf"
        var fallbackBoardPath: String? = nil
        var fallbackPolicyPath: String? = nil
        var eventsPath: String? = nil
        var tracePath: String? = nil
        var stateDir = "/var/lib/wristlink"
        var stateDirGiven = false
        var consentWindowMs: Int64? = nil
        var acceptPairing = false
        var replayWindowMs: Int64? = nil
        var keepAliveMs: Int64? = nil
        var resubscribeMs: Int64? = nil
        var powerSupplyRoot = PowerSupplyReader.defaultRoot

        /// The system's notice for the wrist: in the state directory, on
        /// the UNIX link only when one was given (a simulated run on a
        /// wearable must not take the real firmware's notice).
        var noticePath: String? {
            if case .unix = link, !stateDirGiven { return nil }
            return StateFile.path(stateDir, NoticeFile.name)
        }
    }

    static func parse(_ args: ArraySlice<String>) throws(UsageError) -> Options {
        let a = try Arguments(
            args,
            valued: [
                "--link", "--board", "--policy", "--gpio", "--events", "--trace", "--log-level", "--state-dir", "--consent-window-ms",
                "--replay-window-ms", "--keep-alive-ms", "--resubscribe-ms", "--fallback-board", "--fallback-policy",
                "--power-supply",
            ],
            boolean: ["--accept-pairing"])
        var o = Options()
        if let link = a.value("--link") {
            if link.utf8Equals("bluez") {
                o.link = .bluez(index: 0)
            } else if link.utf8HasPrefix("bluez:hci"), let n = UInt16(link.utf8Dropping(first: 9)) {
                o.link = .bluez(index: n)
            } else if link.utf8HasPrefix("unix:"), link.utf8.count > 5 {
                o.link = .unix(path: link.utf8Dropping(first: 5))
            } else {
                throw UsageError("--link must be bluez, bluez:hciN or unix:PATH (got '\(link)')")
            }
        }
        if let gpio = a.value("--gpio"), !gpio.utf8Equals("chip") {
            guard gpio.utf8Equals("sim") else { throw UsageError("--gpio must be chip or sim (got '\(gpio)')") }
            o.simulatedGPIO = true
            o.boardPath = "board/sim/board.conf"
            o.policyPath = "board/policy.conf"
        }
        if let p = a.value("--board") { o.boardPath = p }
        if let p = a.value("--policy") { o.policyPath = p }
        o.fallbackBoardPath = a.value("--fallback-board")
        o.fallbackPolicyPath = a.value("--fallback-policy")
        o.eventsPath = a.value("--events")
        o.tracePath = a.value("--trace")
        if let d = a.value("--power-supply") { o.powerSupplyRoot = d }
        if let d = a.value("--state-dir") {
            o.stateDir = d
            o.stateDirGiven = true
        }
        o.acceptPairing = a.flag("--accept-pairing")
        o.consentWindowMs = try milliseconds(a, "--consent-window-ms", in: 1_000...25_000)
        o.replayWindowMs = try milliseconds(a, "--replay-window-ms", in: 0...30_000)
        o.keepAliveMs = try milliseconds(a, "--keep-alive-ms", in: 10_000...3_600_000)
        o.resubscribeMs = try milliseconds(a, "--resubscribe-ms", in: 10_000...86_400_000)
        if let level = a.value("--log-level") {
            guard let l = LogLevel(name: level) else { throw UsageError("--log-level must be error, warning, notice, info or debug") }
            Log.level = l
        }
        return o
    }

    /// The value of a milliseconds flag, nil if absent; outside `range` a
    /// usage error naming the flag and the range.
    static func milliseconds(_ a: Arguments, _ flag: String, in range: ClosedRange<Int64>) throws(UsageError) -> Int64? {
        guard let text = a.value(flag) else { return nil }
        guard let ms = Int64(text), range.contains(ms) else {
            throw UsageError("\(flag) must be a number of milliseconds from \(range.lowerBound) to \(range.upperBound) (got '\(text)')")
        }
        return ms
    }

    /// The notice file `run ARGS` looks at (nil: none): the state
    /// directory's `notice`, on the UNIX link only with `--state-dir`.
    public static func noticePath(_ args: ArraySlice<String>) throws(UsageError) -> String? { try parse(args).noticePath }

    public static func main(_ args: ArraySlice<String>) -> Int32 {
        // SIGUSR1 ("look for the notice") held from the start: one that
        // comes while the files, lines and sockets are set up waits for
        // the loop's signalfd instead of ending the process.
        Signals.holdNoticeSignal()
        let options: Options
        do { options = try parse(args) } catch { return CLI.fail(error, command: "run") }
        Log.notice(BuildInfo.line)
        let board: BoardConfig
        let policy: PolicyConfig
        var settingsError = false
        var fallbackBoard = false
        switch ConfigFiles.load(options.paths) {
        case .success(let loaded):
            (board, policy) = (loaded.board, loaded.policy)
            settingsError = loaded.fellBack
            fallbackBoard = loaded.fallbackBoard
        case .failure(let lines):
            for line in lines { Log.error(line) }
            return ExitCode.config
        }
        if options.simulatedGPIO && !board.simulated {
            Log.notice("--gpio sim with the board \(board.name): its line names are used, its pins are not")
        }
        if !options.simulatedGPIO && board.simulated {
            Log.error("\(options.boardPath) is a simulated board (chip sim); use --gpio sim, or a board file for real lines")
            return ExitCode.usage
        }
        var config = WearableConfig(board: board, policy: policy)
        config.settingsError = settingsError
        if let ms = options.consentWindowMs { config.controller.consentWindowMs = ms }
        config.controller.autoAcceptPairing = options.acceptPairing
        if let ms = options.replayWindowMs { config.replayWindowMs = ms }
        if let ms = options.keepAliveMs { config.link.keepAliveQuietMs = ms }
        if let ms = options.resubscribeMs { config.link.resubscribeQuietMs = ms }
        var events: OutputFile? = nil
        if let path = options.eventsPath {
            do { events = try OutputFile(path: path) } catch {
                Log.error("cannot open events file: \(error)")
                return ExitCode.setup
            }
        }
        switch options.link {
        case .unix(let path):
            config.controller.enabled = false
            let link: UnixLink
            do { link = try UnixLink.listening(at: path) } catch {
                Log.error("cannot listen on \(path): \(error)")
                return ExitCode.setup
            }
            return serve(
                link: .unix(link), options: options, config: config, fallbackBoard: fallbackBoard, events: events, mgmt: .none, bondsPath: nil,
                bonds: BondStore())
        case .bluez(let index):
            config.controller.index = index
            let bondsPath = StateFile.path(options.stateDir)
            do { try StateFile.ensureDirectory(options.stateDir) } catch {
                Log.error("state directory: \(error)")
                return ExitCode.setup
            }
            let bonds = BondLoading.load(bondsPath)
            let mgmt: MgmtSocket
            do { mgmt = try MgmtSocket.open() } catch {
                Log.error("cannot open the Bluetooth management interface: \(error) (needs CAP_NET_ADMIN; the kernel needs Bluetooth support)")
                return ExitCode.setup
            }
            let link: BlueZLink
            do { link = try BlueZLink.listening(addressType: 1) } catch {
                Log.error("cannot listen on the ATT channel: \(error)")
                return ExitCode.setup
            }
            return serve(
                link: .bluez(link), options: options, config: config, fallbackBoard: fallbackBoard, events: events, mgmt: mgmt,
                bondsPath: bondsPath, bonds: bonds)
        }
    }

    /// Picks the line backend and runs the daemon on `link`.
    static func serve(
        link: consuming EitherLink, options: Options, config: WearableConfig, fallbackBoard: Bool, events: consuming OutputFile?,
        mgmt: consuming MgmtSocket, bondsPath: String?, bonds: consuming BondStore
    ) -> Int32 {
        let board = config.board
        if options.simulatedGPIO {
            let lines = SimLines(outputs: board.outputs.map { $0.name }, buttons: board.buttons.map { $0.name }, consoleFD: 0)
            return Daemon.serve(
                link: link, lines: .simulated(lines), config: config, events: events, trace: options.tracePath, mgmt: mgmt, bondsPath: bondsPath,
                bonds: bonds, powerSupplyRoot: options.powerSupplyRoot, noticePath: options.noticePath)
        }
        var config = config
        let lines: GPIODLines
        do throws(GPIOError) { lines = try GPIODLines(board: board.lines) } catch {
            // The wearer's board names lines this machine does not have (or
            // another process holds them): the defaults, if there are any.
            // Not for a permission, a system failure or a machine without
            // any gpiochip, which the default board would meet as well.
            let boardsFault = error.reason == .noSuchChip || error.reason == .noSuchLine || error.reason == .busy
            guard boardsFault, !error.noChips, options.fallbackBoardPath != nil, !fallbackBoard,
                case .success(let loaded) = ConfigFiles.load(options.paths, boardUnusable: "\(error)")
            else {
                Log.error("\(error)")
                return ExitCode.setup
            }
            config.board = loaded.board
            config.policy = loaded.policy
            config.settingsError = true
            do { lines = try GPIODLines(board: loaded.board.lines) } catch {
                Log.error("\(error)")
                return ExitCode.setup
            }
        }
        return Daemon.serve(
            link: link, lines: .gpiod(lines), config: config, events: events, trace: options.tracePath, mgmt: mgmt, bondsPath: bondsPath,
            bonds: bonds, powerSupplyRoot: options.powerSupplyRoot, noticePath: options.noticePath)
    }
}

/// The folder of a state file's path.
func stateDirectory(of path: String) -> String {
    guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    return String(path[..<slash])
}

/// The handle cache at start-up: missing or unreadable is an empty cache
/// (the phones' services are discovered again; nothing else depends on it).
enum GATTCacheLoading {
    static func load(_ path: String) -> GATTCache {
        let bytes: [UInt8]?
        do { bytes = try StateFile.read(path) } catch {
            Log.warning("cannot read the GATT handle cache: \(error); phones are discovered again")
            return GATTCache()
        }
        guard let bytes else { return GATTCache() }
        if let cache = GATTCache.parse(bytes.span) { return cache }
        Log.warning("\(path) does not parse; phones are discovered again (it is rewritten at the next link)")
        return GATTCache()
    }
}

/// The bond state file at start-up: missing is fine (no bonds yet), corrupt
/// is set aside and reported, never fatal.
enum BondLoading {
    static func load(_ path: String) -> BondStore {
        let bytes: [UInt8]?
        do { bytes = try StateFile.read(path) } catch {
            Log.error("cannot read the bond file: \(error); starting without bonds")
            return BondStore()
        }
        guard let bytes else { return BondStore() }
        do throws(BondFileErrors) {
            let store = try BondStore.parseReportingAll(bytes.span)
            Log.info("loaded \(store.count) bonded phone(s) from \(path)")
            return store
        } catch {
            let aside = StateFile.setAside(path)
            for i in 0..<error.count { Log.error("\(path):\(error[i].line): corrupt bond file (\(error[i].problem.name))") }
            if error.notKept > 0 { Log.error("\(path): \(error.notKept) more bad line(s) after these") }
            Log.error("\(path) moved to \(aside), starting without bonds")
            return BondStore()
        }
    }
}

extension RunCommand.Options {
    var paths: ConfigFiles.Paths {
        ConfigFiles.Paths(board: boardPath, policy: policyPath, fallbackBoard: fallbackBoardPath, fallbackPolicy: fallbackPolicyPath)
    }
}

/// Loads and checks the board and policy files, with errors as lines
/// naming the file and line: every error of a file (up to
/// `ConfigErrors.capacity`), one per line.
///
/// With fallbacks (the SD-card image: the wearer's copies on the boot
/// partition, the package's defaults in /etc/wristlink) a file given that
/// is missing is replaced by its fallback with a notice, and one that
/// cannot be read or has an error with logged errors and `fellBack` set
/// (the firmware then plays the settings-error feedback). As much of the
/// wearer's settings is kept as still fits: a bad policy falls back alone
/// when the defaults' policy fits the wearer's board, and only otherwise
/// are both set aside.
public enum ConfigFiles {
    public struct Paths {
        var board: String
        var policy: String
        var fallbackBoard: String? = nil
        var fallbackPolicy: String? = nil

        public init(board: String, policy: String, fallbackBoard: String? = nil, fallbackPolicy: String? = nil) {
            self.board = board
            self.policy = policy
            self.fallbackBoard = fallbackBoard
            self.fallbackPolicy = fallbackPolicy
        }
    }

    public struct Settings {
        public var board: BoardConfig
        public var policy: PolicyConfig
        /// A file given had an error and its fallback is in use.
        var fellBack: Bool
        /// The board is the fallback one.
        var fallbackBoard = false
    }

    public enum Loaded {
        case success(Settings)
        /// What went wrong, one line each (logged as they are).
        case failure([String])
    }

    /// One file read: its text, or why not (nil text with `missing`: it
    /// does not exist).
    private static func read(_ path: String, what: String) -> (text: String?, problem: String?, missing: Bool) {
        do throws(SystemError) { return (try ProcessControl.readFile(path), nil, false) } catch {
            return (nil, "cannot read \(what) file: \(error)", error.notFound)
        }
    }

    private static func board(_ path: String) -> (BoardConfig?, problems: [String], missing: Bool) {
        let file = read(path, what: "board")
        guard let text = file.text else { return (nil, [file.problem ?? "cannot read \(path)"], file.missing) }
        do throws(ConfigErrors) { return (try BoardConfig.parseReportingAll(text), [], false) } catch {
            return (nil, error.located(in: path), false)
        }
    }

    private static func policy(_ path: String, board: BoardConfig) -> (PolicyConfig?, problems: [String], missing: Bool) {
        let file = read(path, what: "policy")
        guard let text = file.text else { return (nil, [file.problem ?? "cannot read \(path)"], file.missing) }
        do throws(ConfigErrors) { return (try PolicyConfig.parseReportingAll(text, board: board), [], false) } catch {
            return (nil, error.located(in: path), false)
        }
    }

    /// `problems` with `suffix` added to the last line.
    private static func ending(_ problems: [String], _ suffix: String) -> [String] {
        guard let last = problems.last else { return [suffix] }
        return Array(problems.dropLast()) + [last + suffix]
    }

    /// Says why a given file is set aside for its fallback: a notice when
    /// it does not exist, errors otherwise (returns true then).
    private static func setAside(_ problems: [String], missing: Bool, fallback: String) -> Bool {
        if missing {
            for line in ending(problems, "; using \(fallback)") { Log.notice(line) }
            return false
        }
        for line in ending(problems, "; using the defaults in \(fallback)") { Log.error(line) }
        return true
    }

    /// `boardUnusable`: the given board parsed but its lines could not be
    /// had (the reason), so its fallback is used whatever it says.
    public static func load(_ paths: Paths, boardUnusable: String? = nil) -> Loaded {
        var fellBack = false
        // The board: the given one, else its fallback.
        var board: BoardConfig
        var wearersBoard = true
        let given: (BoardConfig?, problems: [String], missing: Bool) =
            boardUnusable == nil ? Self.board(paths.board) : (nil, ["\(paths.board): \(boardUnusable!)"], false)
        if let b = given.0 {
            board = b
        } else {
            guard let fallback = paths.fallbackBoard else { return .failure(given.problems) }
            fellBack = setAside(given.problems, missing: given.missing, fallback: fallback) || fellBack
            let defaults = Self.board(fallback)
            guard let b = defaults.0 else {
                return .failure(ending(given.problems, ", and the fallback board \(fallback) cannot be used either:") + defaults.problems)
            }
            board = b
            wearersBoard = false
        }
        // The policy: the given one against that board, else the fallback
        // policy against it, else (the defaults' policy does not fit the
        // wearer's board) the fallback policy against the fallback board.
        let policy = Self.policy(paths.policy, board: board)
        if let p = policy.0 {
            return .success(Settings(board: board, policy: p, fellBack: fellBack, fallbackBoard: !wearersBoard))
        }
        guard let fallback = paths.fallbackPolicy else { return .failure(policy.problems) }
        fellBack = setAside(policy.problems, missing: policy.missing, fallback: fallback) || fellBack
        let defaults = Self.policy(fallback, board: board)
        if let p = defaults.0 {
            return .success(Settings(board: board, policy: p, fellBack: fellBack, fallbackBoard: !wearersBoard))
        }
        if wearersBoard, let fallbackBoard = paths.fallbackBoard, let b = Self.board(fallbackBoard).0,
            let p = Self.policy(fallback, board: b).0
        {
            for line in ending(defaults.problems, " with the board \(paths.board); using the defaults in \(fallbackBoard) too") { Log.error(line) }
            return .success(Settings(board: b, policy: p, fellBack: true, fallbackBoard: true))
        }
        return .failure(ending(policy.problems, ", and the fallback policy \(fallback) cannot be used either:") + defaults.problems)
    }
}

/// The loop of the daemon: one copy, whichever backends were picked
/// (EitherLink, EitherLines).
enum Daemon {
    static func serve(
        link: consuming EitherLink, lines: consuming EitherLines, config: WearableConfig, events: consuming OutputFile?, trace: String?,
        mgmt: consuming MgmtSocket, bondsPath: String?, bonds: consuming BondStore, powerSupplyRoot: String, noticePath: String?
    ) -> Int32 {
        let hasController = config.controller.enabled
        // The bonded phones' handles, beside the bonds (none on the UNIX
        // link: its phone's are kept in memory only).
        let gattCachePath = bondsPath.map { StateFile.path(stateDirectory(of: $0), StateFile.gattCacheName) }
        var gattCache = GATTCache()
        if let gattCachePath { gattCache = GATTCacheLoading.load(gattCachePath) }
        let platform: LinuxPlatform<EitherLink, EitherLines>
        do {
            platform = try LinuxPlatform(
                link: link, lines: lines, handleSignals: true, tracePath: trace, mgmt: mgmt, bondsPath: bondsPath, gattCachePath: gattCachePath,
                battery: config.board.battery, powerSupplyRoot: powerSupplyRoot, noticePath: noticePath)
        } catch {
            Log.error("\(error)")
            return ExitCode.setup
        }
        var reporter = Reporter(board: config.board, events: events, start: platform.now())
        // Without a controller the link is ready for a phone at once.
        if !hasController { reporter.advertising(now: platform.now()) }
        var runner = Runner(platform: platform, sink: reporter, core: WearableCore(config: config, bonds: bonds, gattCache: gattCache))
        let reason = runner.run()
        runner.shutdown()
        // A fatal stop (the loop could not go on) is a failure for systemd's
        // Restart=on-failure; the outputs are off either way.
        if reason.text.description.utf8HasPrefix("fatal") {
            Log.error("stopped: \(reason)")
            return ExitCode.failure
        }
        Log.info("stopped (\(reason))")
        return ExitCode.ok
    }
}
