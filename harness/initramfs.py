"""The guest's initramfs: busybox, our init, the agent and the modules.

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

from . import paths, proc
from .errors import BuildError, EnvError
from .kernel import Artifacts

BUSYBOX = Path("/bin/busybox")
INIT = paths.GUEST / "init"
AGENT = paths.GUEST / "build" / "dmaharness-agent"
FORMAT = 1


@dataclass(frozen=True)
class RunConfig:
    """What the guest init does in one boot (becomes /etc/dmaharness.conf)."""
    modules: tuple[str, ...] = ()
    workload: str = "none"          # none | agent | shell-cmd
    agent_args: str = ""
    workload_cmd: str = ""
    settle: float = 0

    def render(self) -> str:
        return "".join(f"{k}={shlex.quote(v)}\n" for k, v in (
            ("MODULES", " ".join(self.modules)),
            ("WORKLOAD", self.workload),
            ("AGENT_ARGS", self.agent_args),
            ("WORKLOAD_CMD", self.workload_cmd),
            ("SETTLE", f"{self.settle:g}"),
        ))


def build_agent() -> Path | None:
    """Build the static guest agent (make -C harness/guest) when it has a Makefile."""
    if not (paths.GUEST / "Makefile").is_file():
        return None
    return proc.make(paths.GUEST, AGENT, "the guest agent")


def _busybox_applets() -> list[str]:
    r = subprocess.run([str(BUSYBOX), "--list-full"], capture_output=True, text=True)
    if r.returncode != 0:
        raise EnvError(f"{BUSYBOX} --list-full failed; is busybox-static installed? (make deps)")
    return [a for a in r.stdout.split() if a and a != "bin/busybox"]


def spec(art: Artifacts, agent: Path | None) -> list[str]:
    """The gen_init_cpio spec of the base archive."""
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
    _gen(art, [f"file /etc/dmaharness.conf {conf} 0644 0 0"], overlay)
    initrd = run_dir / "initrd.cpio"
    with open(initrd, "wb") as out:
        for part in (base, overlay):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)
    overlay.unlink()
    return initrd
