# dmaharness — see README.md.
#
#   make run     the main job: the seed case before/after on 6.1 (KERNEL=6.12 or 7.3 for those)
#   make test    everything CI runs: unit tests, fuzzing, then kernels built and booted
#   make test-deep  the long integration tests too (6.12 full, the race profile's hunt, fail-nth probe)
#   make deps    install every Debian package (as root; otherwise prints the line);
#                make run installs only its own set, make test adds the tests'
#                (harness/deps.sh --why run|test|all says which and why)
#   make bench   the figures (bench/*; bench/build without --warm is a cold build)

PYTHON ?= python3
KERNEL ?= 6.1
FUZZ_SECONDS ?= 30

.PHONY: all help deps deps-run deps-test c-tools fake-device agent capture run test unit unit-python unit-c \
        integration fuzz bench test-deep

all: c-tools

help:
	@sed -n '3,9p' Makefile

deps:
	@sh harness/deps.sh all

deps-run:
	@KERNEL=$(KERNEL) sh harness/deps.sh run

deps-test:
	@sh harness/deps.sh test

# C parts: the fake device, the guest agent and the capture tool, each with
# its own Makefile
c-tools: fake-device agent capture

fake-device: deps-run
	@$(MAKE) -s -C fake-device

agent: deps-run
	@$(MAKE) -s -C harness/guest

capture: deps-test
	@$(MAKE) -s -C fake-device/capture

# the main job needs the fake camera and the agent, not the capture tool
run: deps-run fake-device agent
	./dmaharness run --kernel $(KERNEL) --case patches/$(KERNEL)/cases/uvc-status-buffer

# unit, fuzz, integration in that order; CI's 7.3 kernel builds in the
# background from the start (tests/run.py ci)
test: deps-test c-tools
	$(PYTHON) tests/run.py ci

unit: unit-python unit-c

unit-python: deps-test
	$(PYTHON) tests/run.py unit

unit-c: deps-test
	@$(MAKE) -s -C fake-device test
	@$(MAKE) -s -C fake-device/capture test
	@$(MAKE) -s -C harness/guest test

# the fake device's fuzz target, for a bounded time (CI too)
fuzz: deps-test
	@$(MAKE) -s -C fake-device fuzz FUZZ_SECONDS=$(FUZZ_SECONDS)

integration: deps-test c-tools
	$(PYTHON) tests/run.py integration

# what `make test` leaves out for CI's time: three more kernels (6.12 full,
# 6.1 and 6.12 race) and runs of many minutes (tests/integration/test_profiles.py)
test-deep: deps-test c-tools
	DMAHARNESS_DEEP_TESTS=1 $(PYTHON) tests/run.py integration

bench: deps c-tools
	bench/boot
	bench/build --warm
	bench/reports
	bench/flood
	bench/run
	bench/detector
	bench/profiles
