# dmaharness — see README.md.
#
#   make run     the main job: the seed case before/after on 6.1 (KERNEL=6.12 or 7.3 for those)
#   make test    everything CI runs: unit tests, fuzzing, then kernels built and booted
#   make test-deep  the long integration tests too (6.12 full, the race profile's hunt, fail-nth probe)
#   make deps    install every Debian package (as root; otherwise prints the line);
#                make run installs only its own set, make test adds the tests'
#                (harness/deps.sh --why run|test|all says which and why)
#   make bench   the figures (bench/*; bench/build without --warm is a cold build)
#   make install PREFIX=/usr/local DESTDIR=   dmaharness on the PATH, its man page (docs/install.md)

PYTHON ?= python3
KERNEL ?= 6.1
FUZZ_SECONDS ?= 30

.PHONY: all help deps deps-run deps-test c-tools fake-device agent capture run test unit unit-python unit-c \
        integration fuzz bench test-deep install uninstall

all: c-tools

help:
	@sed -n '3,10p' Makefile

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
	./dmaharness case patches/$(KERNEL)/cases/uvc-status-buffer --kernel $(KERNEL)

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

# `make install`: the harness and the data it reads at run time under
# $(PREFIX)/share/dmaharness (replaced whole: a file gone from the checkout is
# gone there too), `dmaharness` in $(PREFIX)/bin (a relative link, so that a
# DESTDIR staging copy runs too), the man page written from the parsers, the
# docs.  Nothing is built but Python's bytecode (a user cannot write it
# there): the C tools build on first use, into the cache's tools/ when the
# installed folder is not writable (harness/proc.py).
PREFIX ?= /usr/local
DESTDIR ?=
SHAREDIR = $(DESTDIR)$(PREFIX)/share/dmaharness
BINDIR   = $(DESTDIR)$(PREFIX)/bin
MANDIR   = $(DESTDIR)$(PREFIX)/share/man/man1
DOCDIR   = $(DESTDIR)$(PREFIX)/share/doc/dmaharness
# what a run reads: the package (with the guest's C sources and init), the
# series and cases, the fragments, the fake devices' and capture tool's
# sources and profiles, the instruction profiler's plugin
INSTALL_FILES = dmaharness harness patches kconfig-fragments fake-device bench/insnprof
INSTALL_EXCLUDE = --exclude=build --exclude=__pycache__ --exclude='*.pyc' --exclude='*.o' \
		  --exclude=.gitignore --exclude='*.orig' --exclude='*.rej' --exclude='*~'

install:
	@case "$(PREFIX)" in /*) ;; *) echo "make install: PREFIX must be an absolute path: '$(PREFIX)'" >&2; exit 2;; esac
	rm -rf $(SHAREDIR).new
	mkdir -p $(SHAREDIR).new $(BINDIR) $(MANDIR) $(DOCDIR)/docs
	tar -cf - $(INSTALL_EXCLUDE) $(INSTALL_FILES) | tar -xf - -C $(SHAREDIR).new --no-same-owner
	$(PYTHON) -m compileall -q -s $(SHAREDIR).new -p $(PREFIX)/share/dmaharness $(SHAREDIR).new/harness
	chmod -R u+rwX,go+rX,go-w $(SHAREDIR).new
	-git describe --always --dirty > $(SHAREDIR).new/VERSION 2>/dev/null || rm -f $(SHAREDIR).new/VERSION
	PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m harness.cli.manpage --share $(PREFIX)/share/dmaharness \
		--doc $(PREFIX)/share/doc/dmaharness -o $(MANDIR)/dmaharness.1
	chmod 644 $(MANDIR)/dmaharness.1
	rm -rf $(SHAREDIR)
	mv $(SHAREDIR).new $(SHAREDIR)
	ln -sfn ../share/dmaharness/dmaharness $(BINDIR)/dmaharness
	install -m 644 README.md NEWS.md $(DOCDIR)/
	install -m 644 docs/*.md $(DOCDIR)/docs/

uninstall:
	rm -rf $(SHAREDIR) $(DOCDIR)
	rm -f $(BINDIR)/dmaharness $(MANDIR)/dmaharness.1
