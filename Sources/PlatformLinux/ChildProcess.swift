// SPDX-License-Identifier: Apache-2.0
// Child processes for the simulator (`wristlink sim` runs the firmware and
// the simulated phone as children and reads the firmware's events stream)
// and for end-to-end tests. posix_spawn with pipes; nothing here is used by
// the firmware itself.

import CLinux

public struct ChildProcess: ~Copyable {
    public let pid: pid_t
    /// Write end of the child's stdin (-1 when not piped).
    public private(set) var stdin: Int32
    /// Read end of the child's stdout (-1 when not piped).
    public private(set) var stdout: Int32
    public private(set) var exitStatus: Int32? = nil

    /// Starts `arguments[0]` (a path) with `arguments`. Its stderr goes to
    /// `stderrFD` (-1: inherited).
    public static func spawn(
        _ arguments: [String], pipeStdin: Bool, pipeStdout: Bool, stderrFD: Int32 = -1
    ) throws(SystemError) -> ChildProcess {
        var inPipe: [Int32] = [-1, -1]
        var outPipe: [Int32] = [-1, -1]
        if pipeStdin { _ = try Sys.call32("pipe2") { wl_pipe_cloexec(&inPipe) } }
        if pipeStdout { _ = try Sys.call32("pipe2") { wl_pipe_cloexec(&outPipe) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if pipeStdin { posix_spawn_file_actions_adddup2(&actions, inPipe[0], 0) }
        if pipeStdout { posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1) }
        if stderrFD >= 0 { posix_spawn_file_actions_adddup2(&actions, stderrFD, 2) }
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, arguments[0], &actions, nil, &argv, wl_environ())
        if pipeStdin { CLinux.close(inPipe[0]) }
        if pipeStdout { CLinux.close(outPipe[1]) }
        guard rc == 0 else {
            if pipeStdin { CLinux.close(inPipe[1]) }
            if pipeStdout { CLinux.close(outPipe[0]) }
            throw SystemError("posix_spawn(\(arguments[0]))", errno: rc)
        }
        if pipeStdout { try? Sys.setNonBlocking(outPipe[0]) }
        return ChildProcess(pid: pid, stdin: pipeStdin ? inPipe[1] : -1, stdout: pipeStdout ? outPipe[0] : -1)
    }

    private init(pid: pid_t, stdin: Int32, stdout: Int32) {
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
    }

    deinit {
        if stdin >= 0 { CLinux.close(stdin) }
        if stdout >= 0 { CLinux.close(stdout) }
        if exitStatus == nil {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
    }

    /// Writes `line` and a newline to the child's stdin; false if it is gone.
    @discardableResult
    public func send(line: String) -> Bool {
        guard stdin >= 0 else { return false }
        let bytes = Array((line + "\n").utf8)
        return bytes.withUnsafeBufferPointer { Sys.writeAll(stdin, $0) }
    }

    public func signal(_ number: Int32) { kill(pid, number) }

    public mutating func closeStdin() {
        if stdin >= 0 { CLinux.close(stdin) }
        stdin = -1
    }

    /// Reaps the child if it has exited; returns its status.
    public mutating func poll() -> Int32? {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { exitStatus = Self.decode(status) }
        return exitStatus
    }

    /// Waits up to `timeoutMs` for the child to exit, then kills it.
    public mutating func wait(timeoutMs: Int64) -> Int32 {
        let start = Sys.monotonicMs()
        while poll() == nil {
            if Sys.monotonicMs() - start > timeoutMs {
                kill(pid, SIGKILL)
                var status: Int32 = 0
                waitpid(pid, &status, 0)
                exitStatus = Self.decode(status)
                break
            }
            usleep(10_000)
        }
        return exitStatus!
    }

    /// Exit code, or 128 + signal number.
    static func decode(_ status: Int32) -> Int32 {
        if status & 0x7F == 0 { return (status >> 8) & 0xFF }
        return 128 + (status & 0x7F)
    }

    /// The path of the running executable.
    public static var selfPath: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return "/proc/self/exe" }
        return buffer.withUnsafeBufferPointer { String(decoding: UnsafeRawBufferPointer($0).prefix(n), as: UTF8.self) }
    }
}

/// The terminal of the simulator: raw keys in, ANSI drawing out.
public struct Terminal: ~Copyable {
    private var saved = termios()
    public let isInteractive: Bool

    public init() {
        isInteractive = isatty(0) == 1 && isatty(1) == 1
        guard isInteractive else { return }
        tcgetattr(0, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        tcsetattr(0, TCSANOW, &raw)
        write("\u{1B}[?25l")  // hide the cursor
    }

    deinit {
        if isInteractive {
            write("\u{1B}[?25h\u{1B}[0m\n")
            var restore = saved
            tcsetattr(0, TCSANOW, &restore)
        }
    }

    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { Sys.writeAll(1, $0) }
    }

    /// The terminal's width in columns (80 when unknown).
    public var columns: Int {
        var size = winsize()
        return wl_window_size(1, &size) == 0 && size.ws_col > 0 ? Int(size.ws_col) : 80
    }
}
