// SPDX-License-Identifier: Apache-2.0
// wristlink-bench: the figures of `make bench`, printed one line
// each with its method, and written to .build/bench.json. Asserts nothing
// about time. `--cost KIND` runs one deterministic CPU-cost workload (the
// main run starts it under callgrind; see Costs.swift).
// `--instructions-only` prints only the instruction counts; with `--budgets
// FILE` (Tests/Bench/budgets.txt, `make test-budgets`, part of `make test`)
// it exits 1 when a count is over its budget, printing both.
// `--recorded FILE` (Tests/Bench/recorded.txt) ends the run with every
// figure next to its last recorded value; `--record` rewrites FILE with
// this run's (see Recorded.swift).
//
//   wristlink-bench [--root DIR] [--json PATH] [--idle-seconds N] [--button-rounds N]
//                   [--recorded FILE [--record]] [--instructions-only [--budgets FILE]]

import BenchSupport
import Glibc
import PlatformLinux

var root = "."
var jsonPath: String? = nil
var costKind: String? = nil
var idleSeconds = 60
var buttonRounds = 2_000
var instructionsOnly = false
var budgetsPath: String? = nil
var recordedPath: String? = nil
var record = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--root": root = arguments.next() ?? root
    case "--json": jsonPath = arguments.next()
    case "--cost": costKind = arguments.next()
    case "--idle-seconds": idleSeconds = Int(arguments.next() ?? "") ?? idleSeconds
    case "--button-rounds": buttonRounds = Int(arguments.next() ?? "") ?? buttonRounds
    case "--instructions-only": instructionsOnly = true
    case "--budgets": budgetsPath = arguments.next()
    case "--recorded": recordedPath = arguments.next()
    case "--record": record = true
    default:
        print("usage: wristlink-bench [--root DIR] [--json PATH] [--idle-seconds N] [--button-rounds N] [--recorded FILE [--record]] [--instructions-only [--budgets FILE]]")
        exit(2)
    }
}
Log.level = .error

if let costKind { exit(CostRun.run(kind: costKind, root: root)) }
if record, recordedPath == nil { fail("--record needs --recorded FILE") }

let started = Clock.ns()
var bench: Bench
do {
    bench = Bench(root: root, config: try benchConfig(root: root), idleSeconds: idleSeconds, buttonRounds: buttonRounds)
} catch {
    fail("configuration: \(error)")
}
let machine = machineDescription()
say("wristlink-bench: \(machine)")
if instructionsOnly {
    guard bench.instructions(selfPath: ChildProcess.selfPath) else { fail("instructions: not measured (valgrind missing or a run failed)") }
    guard let budgetsPath else { exit(0) }
    exit(bench.checkBudgets(path: budgetsPath) ? 0 : 1)
}
bench.binary()
do {
    var rig: BenchRig
    do { rig = try BenchRig(config: bench.config) } catch { fail("\(error)") }
    if let problem = rig.bringUp() { fail(problem) }
    bench.notificationLatency(&rig)
    bench.notificationLatencyAsleep(&rig)
    bench.buttonLatency(&rig)
    bench.patternWakeups(&rig, seconds: 6)
    bench.idleWakeups(&rig)
}
bench.attributeAllocations()
bench.reassembly()
_ = bench.instructions(selfPath: ChildProcess.selfPath)
do {
    var rig: BenchRig
    do { rig = try BenchRig(config: bench.config) } catch { fail("\(error)") }
    if let problem = rig.bringUp() { fail(problem) }
    bench.flood(&rig)
}
let path = jsonPath ?? root + "/.build/bench.json"
let json = bench.figures.json
guard let file = fopen(path, "w") else { fail("cannot write \(path)") }
fputs(json, file)
fclose(file)
if let recordedPath {
    let last = RecordedFigures(path: recordedPath)
    for problem in last.problems { say("recorded: \(problem)") }
    say("against the last recorded run (\(recordedPath)):")
    for line in last.comparison(with: bench.figures) { say("  \(line)") }
    if record {
        guard let out = fopen(recordedPath, "w") else { fail("cannot write \(recordedPath)") }
        fputs(RecordedFigures.text(of: bench.figures, machine: machine), out)
        fclose(out)
        say("recorded this run's figures in \(recordedPath)")
    }
}
say("wrote \(path) in \(fmt(Double(Clock.ns() - started) / 1e9)) s")
