"""What every command family shares: option groups, run settings as flags, printing.

Each option is declared once here and used by the families' parsers
(harness.cli.build, case, sweep, campaign, cache); ``emit`` prints a
result as text or one JSON object (--json) and writes --json-out.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from .. import jsonout
from ..errors import EnvError, HarnessError, InputError
from ..kernel import ccachestats, debsource, profiles
from ..kernel import series as kseries
from ..boot import settings
from ..pipeline import VariantSpec
from ..campaign import kcidb
from . import helptext
from .reportscli import stdout_fault


# the top-level --help's table: every code a command of dmaharness returns
EPILOG = helptext.table(helptext.MEANING, header="exit codes (each command's --help lists "
                                                  "those it can return):") \
    + "\n\n" + helptext.RUN_SETTINGS + "\n\n" + helptext.CACHE + "\n"


# --- option groups, declared once ------------------------------------------------

def _typed(name: str) -> Callable[[str], Any]:
    """argparse type: the setting's own parser (harness.boot.settings)."""
    def parse(text: str):
        try:
            return settings.SETTINGS[name].parse(text)
        except HarnessError as e:
            raise argparse.ArgumentTypeError(e.message) from None
    parse.__name__ = name
    return parse

def whole_number(text: str) -> int:
    """argparse type: a whole number, 0 or more."""
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"not a whole number >= 0: {text!r}")
    return n

def count(text: str) -> int:
    """argparse type: a count of runs, guests or jobs, 1 to 10000."""
    n = whole_number(text)
    if not 1 <= n <= 10000:
        raise argparse.ArgumentTypeError(f"not a count from 1 to 10000: {text!r}")
    return n

def chance(text: str) -> float:
    """argparse type: a probability strictly between 0 and 1 (nan, inf refused)."""
    try:
        p = float(text)
    except ValueError:
        p = -1.0
    if not 0 < p < 1:
        raise argparse.ArgumentTypeError(f"not a chance between 0 and 1 (exclusive): {text!r}")
    return p

def folder(text: str) -> Path:
    """argparse type: a folder to write into, made if missing; an existing
    file (or anything but a folder) there is refused before any work."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (it would be the current folder)")
    p = Path(text)
    if os.path.lexists(p) and not p.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a folder")
    up = p.absolute().parent          # the nearest folder that exists: one it can be made in
    while not os.path.lexists(up) and up != up.parent:
        up = up.parent
    if not up.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {up} is not a folder, so it cannot be "
                                         "made")
    return p


def out_file(text: str) -> Path:
    """argparse type: a file to write; an empty path or an existing folder is
    refused before any work."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path (it would be the current folder)")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a folder, not a file")
    return Path(text)


# options renamed in #44 whose old spelling the run settings' own help texts
# (harness/boot/settings.py) may still name: --help shows the new one
_RENAMED = {"--device": "--usb-device", "--insn-profile": "--insn-count"}
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)(?![\w-])")


def _spelled(text: str) -> str:
    """A setting's help with its options spelled as today's parsers spell them."""
    return _OPTION.sub(lambda m: _RENAMED.get(m.group(1), m.group(1)), text)


def _setting(g, name: str, *, default_shown: Any = None, help_: str | None = None,
             flag: str | None = None, old: Sequence[str] = (), **kw) -> None:
    """A run setting as a flag whose absence means "not given" (None): its
    option string is ``flag`` (default: the setting's name), ``old`` its old
    spellings kept as aliases (#44); the value goes to the setting's name."""
    s = settings.SETTINGS[name]
    shown = settings.default(name) if default_shown is None else default_shown
    text = _spelled(help_ or s.help)
    strings = (flag or "--" + name.replace("_", "-"), *old)
    note = helptext.old_spelling(*old) if old else ""
    if isinstance(shown, bool):
        g.add_argument(*strings, dest=name, action="store_true", default=None,
                       help=text + note, **kw)
        return
    g.add_argument(*strings, dest=name, type=_typed(name), default=None,
                   help=f"{text} ({shown}){note}", **kw)

def kernel_version(text: str) -> str:
    """--kernel: MAJOR.MINOR; whether it has a series is checked when the kernel is chosen."""
    try:
        return debsource.check_version(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def variant_group(p, *, kernel: bool = True, series: bool = True, tree: bool = True) -> None:
    g = p.add_argument_group("variant (what kernel to build)")
    if kernel:
        g.add_argument("--kernel", type=kernel_version, default=None, metavar="X.Y",
                       help="kernel version, from Debian's linux-source-X.Y (default 6.1; "
                            f"detector series for {', '.join(kseries.SUPPORTED)}; "
                            "`dmaharness sources` lists what Debian offers)")
    if tree:
        g.add_argument("--tree", type=Path, metavar="DIR",
                       help="your own Linux git checkout instead of Debian's source (default "
                            "for bisect-run: the current folder): its HEAD and local changes "
                            "are built in a mirror in the cache; the checkout is never written. "
                            "The detector series is patches/<its version>/series, else the "
                            "nearest version's")
    if series:
        g.add_argument("--series", action="append", type=Path, default=[], metavar="FILE",
                       help="a quilt-style series applied after the base (detector) series "
                            "(repeatable; a case's series, or your own)")
        g.add_argument("--prefix", type=whole_number, metavar="N",
                       help="apply only the first N patches of the --series patches")
    _setting(g, "profile", metavar="NAME",
             help_="debug profile: " + ", ".join(profiles.names())
                   + " (what each finds and costs: `dmaharness profiles`; a case's [run] "
                     "may name one)")
    g.add_argument("--fragment", action="append", default=[], metavar="NAME|FILE",
                   help="kconfig fragment(s) to use instead of the profile's (all of "
                        "kconfig-fragments/ for dma; repeatable; NAME means "
                        "kconfig-fragments/NAME.config)")
    g.add_argument("--no-detector", "--no-base-series", dest="no_base_series",
                   action="store_true",
                   help="do not apply patches/<version>/series, the detector (a stock kernel; "
                        "the detector and kunit fragments are left out too unless "
                        "--fragment is given)" + helptext.old_spelling("--no-base-series"))
    g.add_argument("-j", "--jobs", type=count, metavar="N",
                   help="make's jobs: make -j N (default: number of CPUs); guests at once "
                        "are --parallel")
    g.add_argument(ccachestats.FLAG, dest="ccache_remote", metavar="URL",
                   help="share compiled objects with other machines (a campaign's workers) "
                        "through ccache's remote storage: redis://HOST[:PORT], "
                        "redis+unix:/SOCKET, http://HOST[:PORT]/PATH or file:/DIR, given to "
                        "ccache as CCACHE_REMOTE_STORAGE; not part of the variant key "
                        f"(default ${ccachestats.ENV}; without either, a CCACHE_REMOTE_STORAGE "
                        "of your environment is used as it is).  The build's ccache hits and "
                        "misses are in its JSON (ccache)")
    g.add_argument("--force", action="store_true", help="rebuild even when cached")

# --timeout, the run setting timeout, has one meaning on every command: the
# seconds the guest may take beyond the time its workload is given
TIMEOUT_WHOLE_BOOT = "seconds the guest may take: the whole boot (no workload time is added)"
TIMEOUT_BEYOND_FLOOD = "seconds the guest may take beyond the flood's --duration"


def boot_group(p, *, timeout_help: str, timeout: float | None = None, smp: int | None = None,
               profile: bool = False, run_dir: bool = True):
    g = p.add_argument_group("boot (run settings)")
    _setting(g, "accel", metavar="auto|tcg|kvm")
    _setting(g, "timeout", help_=timeout_help, default_shown=timeout, metavar="S")
    _setting(g, "silence", metavar="S")
    _setting(g, "memory", metavar="MIB")
    _setting(g, "smp", default_shown=smp, metavar="N")
    _setting(g, "append", metavar="ARGS")
    _setting(g, "qemu_opts", help_="more QEMU options, split like a shell would (e.g. "
             "'-icount shift=0,sleep=off' to make the guest clock count instructions)",
             metavar="OPTS")
    if profile:
        # "profile" is the debug profile (--profile); this one counts instructions
        _setting(g, "insn_profile", flag="--insn-count", old=("--insn-profile",),
                 help_="count the guest instructions of every kernel function (a QEMU TCG "
                 "plugin, bench/insnprof; implies --accel tcg): <run-dir>/insnprof.json, "
                 "and the top functions in the result")
    _setting(g, "console")
    if run_dir:
        g.add_argument("--run-dir", type=folder,
                       help="folder for the console log and results (default: a new folder "
                            "under <cache>/runs)")
    return g

def flood_group(p, *, title: str = "flood (run settings)", case: bool = True):
    """The flood's run settings and the devices; ``case``: --case too (`run`;
    the `case` command takes its case as an argument)."""
    g = p.add_argument_group(title)
    metavars = {"flood": "PATTERN[:RATE]", "duration": "TIME", "cycle_hz": "HZ",
                "phys_hz": "HZ", "cameras": "N", "hotplug": "S", "seed": "N", "agent_args": "ARGS"}
    for name, metavar in metavars.items():
        _setting(g, name, metavar=metavar)
    _setting(g, "fail_nth", metavar="PATHS", nargs="?", const=settings.FAIL_NTH_PATHS,
             default_shown="off; without PATHS: probe,disconnect")
    _setting(g, "fail_nth_max", metavar="N")
    g.add_argument("--usb-device", "--device", dest="devices", action="append", default=None,
                   metavar="NAME|FILE",
                   help=_spelled(settings.SETTINGS["devices"].help)
                   + " (a QEMU device model is sweep's --qemu-devices)"
                   + helptext.old_spelling("--device"))
    _setting(g, "modules", metavar="MOD[,MOD...]")
    _setting(g, "exercise")
    _setting(g, "capture")
    _setting(g, "bulk_in", metavar="hold|random|zero")
    g.add_argument("--usb-host", dest="usb_host", action="append", default=None,
                   metavar="VID:PID|BUS-DEV", help=_spelled(settings.SETTINGS["usb_host"].help))
    if case:
        g.add_argument("--case", type=Path, metavar="DIR|case.toml",
                       help="a case: its [run] table gives the run settings that no flag "
                            "gives")
    return g

def output_group(p) -> None:
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--json-out", type=out_file, metavar="FILE",
                   help="also write that JSON object to FILE, whole or not at all (also on "
                        "an error: then with \"ok\": false); what a campaign's jobs do")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")

def variant_spec(a, *, series_: bool = True) -> VariantSpec:
    ccachestats.set_flag(getattr(a, "ccache_remote", None))     # every build of this process
    return VariantSpec(kernel=getattr(a, "kernel", None), tree=a.tree,
                       series=tuple(a.series) if series_ else (),
                       prefix=a.prefix if series_ else None, fragments=tuple(a.fragment),
                       profile=a.profile,
                       base_series=not a.no_base_series, jobs=a.jobs, force=a.force,
                       background=getattr(a, "background", False))

def flags(a) -> dict[str, Any]:
    """The run settings given on the command line (typed; absent ones are None)."""
    return {k: tuple(v) if isinstance(v, list) else v for k in settings.SETTINGS
            if (v := getattr(a, k, None)) is not None}

def add_command(sub, name: str, func, help_text: str, description: str, *,
                examples: Sequence[str], codes: Iterable[int] = (),
                meaning: Mapping[int, str] | None = None, run_settings: bool = False,
                **kw) -> argparse.ArgumentParser:
    """A subcommand whose --help answers questions: its description as
    paragraphs, its examples, the exit codes it can return (harness.cli.helptext)."""
    notes = ((helptext.RUN_SETTINGS,) if run_settings else ()) + (helptext.CACHE,)
    p = sub.add_parser(name, help=help_text, description=description,
                       epilog=helptext.epilog(examples, codes, meaning=meaning, notes=notes),
                       formatter_class=helptext.Formatter, **kw)
    if func is not None:
        p.set_defaults(func=func)
    return p

def command_parser(sub, name: str, func, help_text: str, description: str, *,
                   examples: Sequence[str], codes: Iterable[int] = (),
                   meaning: Mapping[int, str] | None = None, run_settings: bool = False,
                   **variant) -> argparse.ArgumentParser:
    """A subcommand that builds a variant: variant options, --json, -q, examples, exit codes."""
    p = add_command(sub, name, func, help_text, description, examples=examples, codes=codes,
                    meaning=meaning, run_settings=run_settings)
    variant_group(p, **variant)
    output_group(p)
    return p

def kcidb_args(p) -> None:
    p.add_argument("--kcidb", type=Path, metavar="FILE",
                   help="also write the results as a KCIDB I/O document (KernelCI's schema "
                        f"v{kcidb.MAJOR}.{kcidb.MINOR}: checkouts, builds, one "
                        "test per job and per expected outcome), for `kcidb-submit`")
    p.add_argument("--kcidb-origin", default=kcidb.ORIGIN, metavar="NAME",
                   help=f"the KCIDB origin: the ids' prefix ({kcidb.ORIGIN}; your CI system's "
                        "name as KCIDB knows it)")


# --- printing ------------------------------------------------------------------------

def emit(a, payload: dict, text: str) -> None:
    if getattr(a, "json_out", None):
        write_json_out(a.json_out, payload)
    try:
        print(jsonout.dumps(payload) if a.json else text, flush=True)
    except BrokenPipeError:
        raise                               # the reader left: main() says 0
    except (OSError, ValueError) as e:      # /dev/full, an I/O error: the environment's
        stdout_fault()
        raise EnvError("cannot write the output to standard output: "
                       f"{getattr(e, 'strerror', None) or e}") from None

def write_json_out(path: Path, payload: dict) -> None:
    """--json-out FILE: the payload written whole or not at all (InputError)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"--json-out {path}: cannot make its folder ({e.strerror or e})",
                         path=str(path)) from None
    jsonout.write(path, payload)

def on_sigterm(signum, frame):
    raise KeyboardInterrupt
