#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# The USB status console's program (board/image/usb-console, docs/sd-image.md
# "The USB status console") against a pseudo-terminal, as it runs on the
# gadget's /dev/ttyGS0: stubs for `wristlink` and `journalctl` first on
# PATH (they print what they were asked and log each call), the real
# board/image/report beside it. Checks the menu; that 1 prints the report
# (version, doctor with the card's settings files, bonds, the journal's
# boots and logs), 2 doctor alone, 3 the log's last lines and then its
# follow until a key, after which the follow is gone; that typed bytes are
# not echoed, that shell metacharacters and control keys typed or pasted
# run nothing and do not end the program; and that a hang-up (the computer
# closing the port), at the menu or during the follow, ends it with status
# 0 and the follow stopped.
#   Tests/Image/console-test.py    (make test-unit) exit 0 when all passed
import os, pty, select, signal, sys, tempfile, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONSOLE = os.path.join(ROOT, "board", "image", "usb-console")
PROMPT = b"choice (1, 2, 3): "
VERSION = b"wristlink 0.0.0-stub (git stub, libgpiod 2 API), licence Apache-2.0"

failures = []
def check(name, ok, detail=""):
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures.append(name)

def stubs(d):
    os.mkdir(os.path.join(d, "bin"))
    files = {
        "wristlink": """#!/bin/sh
echo "wristlink $*" >> "$WL_TEST_DIR/calls"
case "$1" in
  --version) echo "wristlink 0.0.0-stub (git stub, libgpiod 2 API), licence Apache-2.0" ;;
  doctor) echo "OK   stub doctor: $*" ;;
  *) echo "wristlink stub: unexpected $*" >&2; exit 2 ;;
esac
""",
        "journalctl": """#!/bin/sh
echo "journalctl $*" >> "$WL_TEST_DIR/calls"
case " $* " in
  *" -f "*)
    echo $$ > "$WL_TEST_DIR/follow.pid"
    echo "journalctl stub: $*"
    i=1; while [ $i -le 3 ]; do echo "stub last line $i"; i=$((i + 1)); done
    i=1; while [ $i -le 3000 ]; do echo "stub follow line $i"; i=$((i + 1)); sleep 0.05; done ;;
  *) echo "journalctl stub: $*" ;;
esac
""",
    }
    for name, text in files.items():
        p = os.path.join(d, "bin", name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o755)

def start(d):
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(d)
        env = {"PATH": os.path.join(d, "bin") + ":/usr/bin:/bin", "WL_TEST_DIR": d,
               "WL_CONSOLE_FOLLOW_S": "60", "LANG": "C.UTF-8"}
        os.execve("/bin/sh", ["sh", CONSOLE], env)
    return pid, fd

def read_until(fd, want, timeout_s=15.0):
    got = b""
    end = time.monotonic() + timeout_s
    while want not in got:
        left = end - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    return got

def read_for(fd, seconds):
    got = b""
    end = time.monotonic() + seconds
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return got
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return got
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return got
        if not chunk:
            return got
        got += chunk

def exited(pid, timeout_s=10.0):
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None

def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False

def follow_gone(d, timeout_s=5.0):
    with open(os.path.join(d, "follow.pid")) as f:
        fpid = int(f.read())
    end = time.monotonic() + timeout_s
    while alive(fpid) and time.monotonic() < end:
        time.sleep(0.05)
    return not alive(fpid)

def calls(d):
    try:
        with open(os.path.join(d, "calls")) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []

def session_menu_and_choices(d):
    pid, fd = start(d)
    out = read_until(fd, PROMPT)
    check("the menu opens with the firmware's version line and offers report, doctor and log",
          out.count(PROMPT) == 1 and VERSION in out and b"1  the report" in out and b"2  wristlink doctor" in out
          and b"3  the firmware log" in out and b"read-only" in out, repr(out))
    check("lines end with CRLF on the terminal (the tty's onlcr)", b"\r\n  1  the report" in out, repr(out))

    os.write(fd, b"x")
    out = read_until(fd, b"Enter: the menu) ")
    check("another key gets a one-line hint and is not echoed",
          b"(press 1, 2 or 3; Enter: the menu) " in out and b"x" not in out, repr(out))

    os.write(fd, b"1")
    out = read_until(fd, PROMPT, 30)
    text = out.decode(errors="replace")
    doctor = ("OK   stub doctor: doctor --board /boot/firmware/wristlink/board.conf "
              "--policy /boot/firmware/wristlink/policy.conf --state-dir ")
    check("1: the report: version, doctor on the card's settings files, bonds, battery, the journal's boots and logs",
          out.endswith(PROMPT) and VERSION in out and "== wristlink doctor" in text and doctor in text
          and "== bonded phones" in text and "== battery" in text
          and "journalctl stub: --list-boots --no-pager" in text
          and "journalctl stub: -b 0 -u wristlink.service -o short-monotonic --no-pager" in text
          and "journalctl stub: -b -1 -u wristlink.service -o short-monotonic --no-pager" in text
          and "journalctl stub: -b -1 -p warning -o short-monotonic --no-pager" in text, text[-3000:])

    os.write(fd, b"2")
    out = read_until(fd, PROMPT, 30)
    text = out.decode(errors="replace")
    check("2: doctor alone, now", out.endswith(PROMPT) and doctor in text and "== bonded phones" not in text
          and "journalctl stub" not in text, text)

    os.write(fd, b"3")
    out = read_until(fd, b"stub follow line 5")
    text = out.decode(errors="replace")
    check("3: the log: journalctl -u wristlink.service -n 40 -f, its last lines, then new ones as they come",
          "journalctl stub: -u wristlink.service -n 40 -f -o short-monotonic --no-pager" in text
          and "stub last line 3" in text and "stub follow line 5" in text and PROMPT not in out, text)
    os.write(fd, b"q")
    out = read_until(fd, PROMPT)
    check("3: a key (q) stops the follow and shows the menu", out.endswith(PROMPT), repr(out[-300:]))
    check("3: the follow's journalctl is gone after the key", follow_gone(d))
    later = read_for(fd, 0.6)
    check("3: no log line after the menu is back", b"stub follow" not in later, repr(later))

    before = calls(d)
    canary = os.path.join(d, "canary")
    typed = [b"; touch canary\r", b"$(touch canary)\r", b"`touch canary`\r", b"| touch canary\n",
             b"&& touch canary || touch canary\r", b"'\"\\ touch canary\r",
             b"\x03", b"\x1a", b"\x1c", b"\x04", b"\x1b[A", b"wristlink doctor\r"]
    for data in typed:
        os.write(fd, data)
        read_for(fd, 0.3)
    os.write(fd, b"\r")
    out = read_until(fd, PROMPT)
    check("metacharacters, quotes, Ctrl-C/Z/\\/D and escape sequences typed run nothing",
          not os.path.exists(canary) and calls(d)[len(before):] == [c for c in calls(d)[len(before):] if c == "wristlink --version"],
          "canary %s, new calls %r" % (os.path.exists(canary), calls(d)[len(before):]))
    check("... and the program still runs and shows the menu on Enter", alive(pid) and out.endswith(PROMPT), repr(out[-300:]))
    check("no call ever carried typed text", not any("touch" in c or "canary" in c for c in calls(d)), repr(calls(d)))

    os.close(fd)  # the computer closes the port: the tty hangs up
    status = exited(pid)
    check("a hang-up at the menu ends the program with status 0",
          status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, repr(status))

def session_hangup_during_follow(d):
    os.remove(os.path.join(d, "follow.pid"))
    pid, fd = start(d)
    read_until(fd, PROMPT)
    os.write(fd, b"3")
    out = read_until(fd, b"stub follow line 3")
    check("a second session: the log follows", b"stub follow line 3" in out, repr(out))
    os.close(fd)
    status = exited(pid)
    check("a hang-up during the follow ends the program with status 0",
          status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, repr(status))
    check("... and stops the follow", follow_gone(d))

def main():
    with tempfile.TemporaryDirectory(prefix="wl-console-") as d:
        stubs(d)
        session_menu_and_choices(d)
        session_hangup_during_follow(d)
    if failures:
        print("console-test: %d failed" % len(failures))
        return 1
    print("console-test: board/image/usb-console: all passed")
    return 0

sys.exit(main())
