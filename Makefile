# dmaharness — see README.md.
#
#   make run     the main job: the seed case before/after on 6.1 (KERNEL=6.12 for 6.12)
#   make test    everything CI runs: unit tests, then kernels built and booted
#   make deps    install the Debian packages (as root; otherwise prints the line)

PYTHON ?= python3
KERNEL ?= 6.1

.PHONY: all deps c-tools fake-device agent run test unit unit-python unit-c \
        integration fuzz bench clean-cache help

all: c-tools

help:
	@sed -n '3,7p' Makefile

deps:
	@sh harness/deps.sh

# C parts: the fake camera and the guest agent (each has its own Makefile)
c-tools: fake-device agent

fake-device: deps
	@if [ -f fake-device/Makefile ]; then $(MAKE) -s -C fake-device; fi

agent: deps
	@if [ -f harness/guest/Makefile ]; then $(MAKE) -s -C harness/guest; fi

run: deps c-tools
	./dmaharness run --kernel $(KERNEL) --case patches/$(KERNEL)/cases/uvc-status-buffer

unit: unit-python unit-c

unit-python: deps
	$(PYTHON) tests/run.py unit

unit-c: deps
	@if [ -f fake-device/Makefile ]; then $(MAKE) -s -C fake-device test; fi
	@if [ -f harness/guest/Makefile ]; then $(MAKE) -s -C harness/guest test; fi

integration: deps c-tools
	$(PYTHON) tests/run.py integration

# the fake device's fuzz target runs for a bounded time in CI too
test: unit fuzz integration

fuzz: deps
	@if [ -f fake-device/Makefile ]; then $(MAKE) -s -C fake-device fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-30}; fi

bench: deps c-tools
	bench/build
	bench/boot
