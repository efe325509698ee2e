# Wristlink. The two commands that matter: `make run` and `make test`
# (README). Both install the Debian packages they need first (as root,
# idempotently) so they work on a fresh machine of this kind.

SWIFT ?= swift
# Tests run on the optimised build: it is what ships, preconditions stay on,
# and allocation counts only mean something there.
CONFIG ?= release
CORE_MODULES := Bounded ANCS ATT GATT Feedback Mgmt Config Platform Firmware PhoneSim
FUZZ_TARGETS := notification-source data-source session att phone-link mgmt-event bond-file controller-setup

DEBS := pkg-config binutils libbluetooth-dev libgpiod-dev tshark

.PHONY: all deps build test test-unit embedded-check run fuzz fuzz-build clean install soak bench

all: build

deps:
	@scripts/ensure-packages $(DEBS)

build: deps
	$(SWIFT) build -c $(CONFIG)

test: deps test-unit embedded-check
	@echo "make test: all passed"

test-unit:
	$(SWIFT) build -c $(CONFIG) --build-tests
	$(SWIFT) test -c $(CONFIG) --skip-build

embedded-check:
	@scripts/embedded-check $(CORE_MODULES)

# The simulator: firmware + simulated iPhone + simulated board in this
# terminal (keys: a/A r/R accept/reject, c call, m message, e email, q quit).
run: build
	.build/$(CONFIG)/wristlink sim

# libFuzzer + ASan. SwiftPM passes -sanitize=fuzzer to the executable only,
# so the coverage flags are added for every module explicitly.
fuzz-build:
	WRISTLINK_FUZZ=1 $(SWIFT) build -c release --product wristlink-fuzz --build-path .build/fuzz \
		--sanitize=fuzzer --sanitize=address \
		-Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table

fuzz: deps fuzz-build
	@scripts/fuzz $(FUZZ_TARGETS)

clean:
	rm -rf .build

# On the Pi, as root: make install BOARD=pi-zero-2w (or pi4, pi5).
install:
	@test -n "$(BOARD)" || { echo "usage: make install BOARD=pi-zero-2w|pi4|pi5"; exit 2; }
	board/install.sh $(BOARD) $(or $(BINARY),.build/release/wristlink)

# The seeded fault simulation for as long as you give it (release build).
SOAK_SECONDS ?= 600
soak: deps
	WRISTLINK_SIM_SECONDS=$(SOAK_SECONDS) WRISTLINK_SIM_FIRST_SEED=$(or $(SEED),$(shell date +%s)) \
		$(SWIFT) test -c release --filter SimulationTests/randomPhones

# The figures of docs/performance.md in one run (release build, under 5
# minutes, about 3 of them real time: 60 s idle, 2,000 button presses 20 ms
# apart, the 10 s flood): each printed with its method, and written to
# .build/bench.json. Not part of `make test`: it asserts nothing about time.
# Instruction counts need valgrind (callgrind); strip (binutils) makes the
# copy valgrind 3.19 can read.
bench: deps
	@scripts/ensure-packages valgrind
	$(SWIFT) build -c release
	.build/release/wristlink-bench --root . --json .build/bench.json
