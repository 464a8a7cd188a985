"""Errors that end a harness command, each with its documented exit code.

Exit codes are part of the interface (docs/cli.md, "Exit codes"):

  0  success
  1  the check's verdict is negative (a diff that does not match its case)
  2  usage error (bad command line)
  3  environment: a package, tool or kernel source is missing
  4  bad input: a series, patch, fragment or config option is wrong
  5  the kernel (or a C helper) failed to build
  6  the guest failed: panic, hang, silence, no end marker, bad status
  7  the fake device failed (crashed, never listened)
  8  a campaign is incomplete: jobs are missing or failed
  9  `check`: the patches touch nothing a device of the harness reaches
  70 a bug of dmaharness (the traceback is printed): never the answer to an input
  130 interrupted (Ctrl-C)
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_VERDICT = 1
EXIT_USAGE = 2
EXIT_ENV = 3
EXIT_INPUT = 4
EXIT_BUILD = 5
EXIT_GUEST = 6
EXIT_DEVICE = 7
EXIT_INCOMPLETE = 8     # a campaign with jobs missing or failed
EXIT_UNREACHABLE = 9    # check: nothing the patches touch is reached by a device of ours
EXIT_INTERNAL = 70      # a bug of ours (sysexits' EX_SOFTWARE), with its traceback
EXIT_INTERRUPTED = 130


class HarnessError(Exception):
    """An error with a short message that names the cause and the file."""

    exit_code = EXIT_USAGE
    kind = "error"

    def __init__(self, message: str, *, detail: str = "", path: str | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.path = path
        self.payload: dict = {}   # extra fields for the --json output

    def to_json(self) -> dict:
        out = {"kind": self.kind, "message": self.message, "exit_code": self.exit_code}
        if self.path:
            out["path"] = self.path
        if self.detail:
            out["detail"] = self.detail
        return out


class EnvError(HarnessError):
    exit_code = EXIT_ENV
    kind = "environment"


class InputError(HarnessError):
    exit_code = EXIT_INPUT
    kind = "input"


class ConfigError(InputError):
    """The configuration asked for is wrong in a way no kernel commit can
    mend (merge_config.sh refuses the fragments): `bisect-run` stops the
    bisection on it instead of skipping every commit."""


class BuildError(HarnessError):
    exit_code = EXIT_BUILD
    kind = "build"


class GuestError(HarnessError):
    exit_code = EXIT_GUEST
    kind = "guest"


class DeviceError(HarnessError):
    exit_code = EXIT_DEVICE
    kind = "device"
