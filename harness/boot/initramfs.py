"""The guest's initramfs: busybox, our init, the guest tools and the modules.

The base archive is written by the kernel's own usr/gen_init_cpio from a
spec list (no root, no staging folder) and cached by the content of
everything that goes in.  Each run appends a tiny second archive holding
/etc/dmaharness.conf (the kernel unpacks concatenated archives in order),
so changing the workload never rebuilds the base.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import paths, proc
from ..errors import BuildError, EnvError, InputError
from ..kernel.kbuild import Artifacts
from .settings import FAIL_NTH_PATHS

BUSYBOX = Path("/bin/busybox")
INIT = paths.GUEST / "init"
AGENT = paths.GUEST / "build" / "dmaharness-agent"
# built with the agent (one make); goes in next to it
FAILNTH = paths.GUEST / "build" / "dmaharness-failnth"
FORMAT = 1

KMEMLEAK_MODES = ("auto", "off")


@dataclass(frozen=True)
class RunConfig:
    """What the guest init does in one boot (becomes /etc/dmaharness.conf).

    kmemleak          auto: when the kernel has kmemleak, the init forgets
                      what it would report before the workload and prints
                      what it finds after it (DMAHARNESS-KMEMLEAK block,
                      harness.reports.failnth); off: not
    fail_nth_driver   a USB driver (e.g. uvcvideo): after the workload the
                      init runs dmaharness-failnth on it, which needs the
                      guest tools in the initramfs (needs_guest_tools);
                      "" (default): no fault injection
    fail_nth_paths    probe, disconnect or both, run in that order
    fail_nth_max      the largest N tried on a path

    Left at their defaults these add nothing to the rendered file, which is
    then what it was before they existed.
    """
    modules: tuple[str, ...] = ()
    workload: str = "none"          # none | agent | shell-cmd
    agent_args: str = ""
    workload_cmd: str = ""
    settle: float = 0
    kmemleak: str = "auto"          # auto | off
    fail_nth_driver: str = ""
    fail_nth_paths: tuple[str, ...] = FAIL_NTH_PATHS
    fail_nth_max: int = 500
    tools: tuple[tuple[str, str], ...] = ()   # (guest path, host file): more programs
                                              # in the run's overlay (dmaharness-capture)

    def __post_init__(self) -> None:
        if self.kmemleak not in KMEMLEAK_MODES:
            raise InputError(f"kmemleak must be one of {', '.join(KMEMLEAK_MODES)}, "
                             f"not {self.kmemleak!r}")
        d = self.fail_nth_driver
        if not d:
            return      # the fail-nth settings are not used
        if "/" in d or d in (".", "..") or len(d) >= 64 or any(c.isspace() for c in d):
            raise InputError(f"{d!r} is not a USB driver name")
        bad = [p for p in self.fail_nth_paths if p not in FAIL_NTH_PATHS]
        if bad or not self.fail_nth_paths or len(set(self.fail_nth_paths)) != len(self.fail_nth_paths):
            raise InputError(f"fail-nth paths must be probe, disconnect or both (each once), "
                             f"not {' '.join(self.fail_nth_paths) or 'none'}")
        if not 1 <= self.fail_nth_max <= 1_000_000:
            raise InputError(f"the fail-nth cap must be between 1 and 1000000, not {self.fail_nth_max}")

    @property
    def needs_guest_tools(self) -> bool:
        """Does the init run one of the guest tools (build_agent builds them)?"""
        return self.workload == "agent" or bool(self.fail_nth_driver)

    def render(self) -> str:
        items = [
            ("MODULES", " ".join(self.modules)),
            ("WORKLOAD", self.workload),
            ("AGENT_ARGS", self.agent_args),
            ("WORKLOAD_CMD", self.workload_cmd),
            ("SETTLE", f"{self.settle:g}"),
        ]
        if self.kmemleak != "auto":
            items.append(("KMEMLEAK", self.kmemleak))
        if self.fail_nth_driver:
            items += [
                ("FAIL_NTH_DRIVER", self.fail_nth_driver),
                ("FAIL_NTH_PATHS", " ".join(self.fail_nth_paths)),
                ("FAIL_NTH_MAX", str(self.fail_nth_max)),
            ]
        return "".join(f"{k}={shlex.quote(v)}\n" for k, v in items)


def build_agent() -> Path | None:
    """Build the static guest tools (make -C harness/guest: the agent and,
    next to it, dmaharness-failnth) when it has a Makefile; the agent's path.
    spec() puts dmaharness-failnth in wherever the agent goes."""
    if not (paths.GUEST / "Makefile").is_file():
        return None
    agent = proc.make(paths.GUEST, AGENT, "the guest agent")
    failnth = agent.with_name(FAILNTH.name)       # beside it, wherever proc.make built
    if not failnth.is_file():
        raise BuildError(f"make -C {paths.GUEST} did not build {failnth}", path=str(paths.GUEST))
    return agent


# the guest's init runs `dmaharness-agent $AGENT_ARGS`: busybox sh splits the
# words on white space and expands globs, it removes no quote
_AGENT_ARG_CHARS = "*?[]'\"\\$`"


def check_agent_args(args: str, what: str = "agent_args") -> None:
    """A run's agent command line, checked on the host by the agent's own
    parser (``dmaharness-agent --check``: nothing runs, nothing is written)
    before any kernel is built; InputError with the agent's reason."""
    bad = sorted({c for c in args if c in _AGENT_ARG_CHARS or (ord(c) < 32 and c not in " \t")})
    if bad:
        raise InputError(f"{what} {args[:200]!r}: {' '.join(map(repr, bad))} not allowed (the "
                         "guest's shell splits the agent's arguments on spaces and removes "
                         "no quote)")
    agent = build_agent()
    if agent is None:
        return
    try:
        r = subprocess.run([str(agent), "--check", *args.split()], capture_output=True,
                           text=True, errors="replace", timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise EnvError(f"cannot run {agent} --check: {e}", path=str(agent)) from None
    if r.returncode != 0:
        why = r.stderr.strip().removeprefix("dmaharness-agent: ") or f"exit {r.returncode}"
        raise InputError(f"{what}: the guest agent refuses {args[:200]!r}: {why[:300]}")


def guest_tools(cfg: RunConfig) -> Path | None:
    """The agent to pass to base_archive() for this run: built when the run
    needs a guest tool (the agent workload, fail-nth), else None."""
    return build_agent() if cfg.needs_guest_tools else None


def _busybox_applets() -> list[str]:
    r = subprocess.run([str(BUSYBOX), "--list-full"], capture_output=True, text=True)
    if r.returncode != 0:
        raise EnvError(f"{BUSYBOX} --list-full failed; is busybox-static installed? (make deps)")
    return [a for a in r.stdout.split() if a and a != "bin/busybox"]


def spec(art: Artifacts, agent: Path | None) -> list[str]:
    """The gen_init_cpio spec of the base archive.  With an agent, the guest
    tools: /bin/dmaharness-agent, and /bin/dmaharness-failnth from the same
    folder when it was built there."""
    lines = [
        "dir /dev 0755 0 0",
        "nod /dev/console 0600 0 0 c 5 1",
        "nod /dev/null 0666 0 0 c 1 3",
        "nod /dev/port 0640 0 0 c 1 4",
    ]
    for d in ("/bin", "/sbin", "/usr", "/usr/bin", "/usr/sbin", "/etc", "/proc", "/sys",
              "/tmp", "/root", "/lib", "/lib/modules"):
        lines.append(f"dir {d} 0755 0 0")
    lines.append(f"file /bin/busybox {BUSYBOX} 0755 0 0")
    for applet in _busybox_applets():
        depth = applet.count("/")
        lines.append(f"slink /{applet} {'../' * depth}bin/busybox 0777 0 0")
    lines.append(f"file /init {INIT} 0755 0 0")
    if agent:
        lines.append(f"file /bin/dmaharness-agent {agent} 0755 0 0")
        failnth = agent.with_name(FAILNTH.name)
        if failnth.is_file():
            lines.append(f"file /bin/dmaharness-failnth {failnth} 0755 0 0")
    mod_root = f"/lib/modules/{art.release}"
    lines.append(f"dir {mod_root} 0755 0 0")
    for dirpath, dirnames, files in os.walk(art.modules):
        dirnames.sort()
        rel = os.path.relpath(dirpath, art.modules)
        if rel != ".":
            lines.append(f"dir {mod_root}/{rel} 0755 0 0")
        for f in sorted(files):
            src = os.path.join(dirpath, f)
            dst = f"{mod_root}/{f}" if rel == "." else f"{mod_root}/{rel}/{f}"
            lines.append(f"file {dst} {src} 0644 0 0")
    return lines


def _digest(lines: list[str]) -> str:
    h = hashlib.sha256(f"format {FORMAT}\n".encode())
    for line in lines:
        h.update(line.encode() + b"\n")
        if line.startswith("file "):
            h.update(hashlib.sha256(Path(line.split()[2]).read_bytes()).digest())
    return h.hexdigest()[:20]


def _gen(art: Artifacts, spec_lines: list[str], out: Path) -> None:
    tool = art.gen_init_cpio
    if not tool.is_file():
        raise BuildError(f"{tool} is missing from the artifacts of {art.key}")
    fd, lname = tempfile.mkstemp(prefix=out.name + ".", suffix=".list", dir=out.parent)
    listing = Path(lname)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(spec_lines) + "\n")
    fd, name = tempfile.mkstemp(prefix=out.name + ".", suffix=".tmp", dir=out.parent)
    tmp = Path(name)
    with os.fdopen(fd, "wb") as f:
        r = subprocess.run([str(tool), str(listing)], stdout=f, stderr=subprocess.PIPE, text=False)
    if r.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BuildError(f"gen_init_cpio failed on {listing}: {r.stderr.decode(errors='replace')[-500:]}")
    listing.unlink()
    tmp.rename(out)


def base_archive(art: Artifacts, agent: Path | None) -> Path:
    """The cached base archive for these artifacts and this agent."""
    if not BUSYBOX.is_file():
        raise EnvError(f"{BUSYBOX} is missing; install busybox-static (make deps)")
    lines = spec(art, agent)
    out = paths.sub("initramfs") / f"base-{_digest(lines)}.cpio"
    if not out.is_file():
        _gen(art, lines, out)
    return out


def run_archive(art: Artifacts, base: Path, cfg: RunConfig, run_dir: Path) -> Path:
    """base + a small archive with /etc/dmaharness.conf, in the run folder."""
    conf = run_dir / "dmaharness.conf"
    conf.write_text(cfg.render())
    overlay = run_dir / "overlay.cpio"
    _gen(art, [f"file /etc/dmaharness.conf {conf} 0644 0 0"]
         + [f"file {guest} {host} 0755 0 0" for guest, host in cfg.tools], overlay)
    initrd = run_dir / "initrd.cpio"
    with open(initrd, "wb") as out:
        for part in (base, overlay):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)
    overlay.unlink()
    return initrd
