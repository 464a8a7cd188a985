"""Every command's --json output against its schema, docs/schemas/<command>.schema.json
(issue #44): real outputs of the CLI, with fixtures for what it reads.

The commands that need no kernel (reports, diff, usb-drivers, cache,
profiles, sources, site-report, mail, plan, collect) run as a user runs
them, through harness.cli.main.  Those that build and boot run through
the same code with a fake machine below them (FakeMachine): kbuild.build
returns artifacts without compiling, qemu.boot writes a recorded console
(tests/fixtures) instead of booting, the fake cameras count without
running; everything above (targets, settings, the flood's summary, case
diffs, bisection, the payloads and the CLI's printing) is the real code.
A sweep's boots are DeviceRuns over recorded sweep consoles.  Every
command's usage error, and the errors of the log readers, are checked
against the same schemas.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

from harness import pipeline
from harness.boot import bootlog, initramfs, qemu
from harness.campaign import campaign as campaign_mod
from harness.checks import patchcheck, sweep, sweeptable, usbsweep
from harness.cli import main as cli
from harness.cli import manpage
from harness.devices import camera, catalogue, usbgen
from harness.kernel import kbuild
from harness.kernel import series as kseries
from tests.unit import jsonschema_lite
from tests.unit.devices.test_usbgen import ALIASES
from tests.unit.output.test_sweephtml import payload as sweep_payload

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
FIX = ROOT / "tests" / "fixtures"
BISECT_SERIES = FIX / "bisect" / "6.1" / "series"

# the commands without --json: `help` prints text only
NO_JSON = {"help"}

AGENT = ('DMAHARNESS-AGENT {"totals": {"events_emitted": 15028, "events_dequeued": 15028, '
         '"key_events": 0, "phys_reads": 499, "cycles": 9}, "run_elapsed_s": 10.0, '
         '"hold": "none", "hold_reason": "auto: no uvc_pm_get"}')

CASE = """\
name = "schema-case"
[run]
duration = "1s"
[[variants]]
name = "before"
role = "before"
patches = ["0001-bug.patch"]
[[variants]]
name = "fix"
role = "after"
patches = []
[expect]
fixed = ["^DMA-API: .* in uvc_status_start$"]
"""

PATCH = ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
         "Subject: [PATCH] media: uvcvideo: x\n\nWhy.\n---\n f | 1 +\n\n"
         "diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1,2 @@\n x\n+y\n")


def schema(command: str) -> dict:
    return json.loads((SCHEMAS / f"{command}.schema.json").read_text())


def commands() -> list[str]:
    """Every command of the CLI (its parsers, as the man page walks them)."""
    return [name for name, _, _ in manpage.commands(cli.parser())]


def call(argv: list[str], cwd: Path | None = None) -> tuple[int, str, str]:
    """`dmaharness ARGV` in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(list(map(str, argv)))
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


class FakeCameras:
    """camera.Cameras without fake-uvc processes: counters as a flood leaves them."""

    def __init__(self, n, spec, run_dir):
        self.cams = [SimpleNamespace(counters={"sent": 85629, "cpu_user_s": 0.2,
                                               "cpu_sys_s": 0.06},
                                     label=f"camera {i}", process=None) for i in range(n)]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def qemu_args(self):
        return []

    def restart(self, *a, **k):
        pass

    def crashed(self):
        return []


class FakeMachine:
    """Builds that compile nothing and boots that print a recorded console.

    The console of a boot is chosen by the patches of its kernel: a kernel
    with BAD_PATCHES shows the detector's report in uvc_status_start
    (tests/fixtures/diff/before-1.log), any other does not (after-1.log);
    ``console`` overrides that for every boot."""

    BAD_PATCHES = {"0001-bug.patch", kseries.parse_series(BISECT_SERIES)[4].path.name}

    def __init__(self, tmp: Path, console: Path | None = None, config: str = "CONFIG_KUNIT=y\n"):
        self.tmp, self.console, self.config = tmp, console, config
        self.patches: dict[str, list[str]] = {}

    def build(self, variant, **kw):
        key = kbuild.variant_key(variant)
        d = self.tmp / "artifacts" / key
        d.mkdir(parents=True, exist_ok=True)
        (d / "config").write_text(self.config)
        self.patches[key] = [p.path.name for p in variant.patches]
        return kbuild.BuildResult(kbuild.Artifacts(key, d, {
            "kernelrelease": "6.1.192",
            "patches": [[p.name, p.digest()] for p in variant.patches]}), True, 0.0)

    def boot(self, req, **kw):
        names = self.patches.get(req.kernel.parent.name, [])
        log = self.console or FIX / "diff" / ("before-1.log" if self.BAD_PATCHES & set(names)
                                              else "after-1.log")
        text = log.read_text() + AGENT + "\n"
        req.console.parent.mkdir(parents=True, exist_ok=True)
        req.console.write_text(text)
        watch = bootlog.ConsoleWatch()
        watch.feed(text)
        watch.finish()
        return qemu.BootResult("ok", "tcg", 4.1, 1, 0, watch, req.console,
                               ["qemu-system-x86_64", "-kernel", str(req.kernel)])

    def __enter__(self):
        self.stack = contextlib.ExitStack()
        for p in (mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.tmp / "cache")}),
                  mock.patch.object(kbuild, "find_source", return_value=kbuild.Source(
                      "6.1", "6.1.192-3", Path("/nonexistent/linux-source-6.1.tar.xz"))),
                  mock.patch.object(kbuild, "compiler_version", return_value="gcc 12"),
                  mock.patch.object(kbuild, "build", side_effect=self.build),
                  mock.patch.object(pipeline, "initrd_for", return_value=self.tmp / "initrd"),
                  mock.patch.object(initramfs, "build_agent", return_value=Path("/bin/true")),
                  mock.patch.object(qemu, "boot", side_effect=self.boot),
                  mock.patch.object(camera, "Cameras", FakeCameras)):
            self.stack.enter_context(p)
        return self

    def __exit__(self, *exc):
        self.stack.close()


class Outputs:
    """The --json objects of every command, gathered once: (command, what,
    exit code, the object)."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.got: list[tuple[str, str, int, object]] = []
        self.failures: list[str] = []

    def add(self, command: str, what: str, argv: list, codes: tuple[int, ...] = (0,),
            cwd: Path | None = None) -> dict | None:
        code, out, err = call(argv, cwd)
        try:
            obj = json.loads(out)
        except ValueError:
            self.failures.append(f"{command} ({what}): exit {code}, stdout is no JSON object: "
                                 f"{out[:300]!r}; stderr: {err[-1500:]}")
            return None
        if code not in codes:
            self.failures.append(f"{command} ({what}): exit {code}, not {codes}: {err[-1500:]}")
        self.got.append((command, what, code, obj))
        return obj

    # --- no kernel needed ---------------------------------------------------------------

    def readers(self):
        log = FIX / "logs" / "real-6.1-detector-stock-camera-flood.log"
        d = FIX / "diff"
        self.add("reports", "a recorded console", ["reports", "--json", log])
        self.add("reports", "a log that is not there", ["reports", "--json", d / "missing.log"],
                 (4,))
        self.add("reports", "a usage error", ["reports", "--json"], (2,))
        self.add("diff", "two runs a side, a case", ["diff", "--json", d / "before-1.log",
                 d / "before-2.log", "--", d / "after-1.log", d / "after-2.log", "--case",
                 d / "case"])
        self.add("diff", "a new report", ["diff", "--json", d / "before-1.log", "--",
                 d / "after-new.log"], (1,))
        self.add("diff", "a log that is not there", ["diff", "--json", d / "before-1.log", "--",
                 d / "missing.log"], (4,))
        self.add("diff", "no --", ["diff", "--json", d / "before-1.log"], (2,))

    def tables(self):
        alias = self.tmp / "modules.alias"
        alias.write_text(ALIASES)
        self.add("usb-drivers", "a modules.alias", ["usb-drivers", "--json", alias, "-o",
                 self.tmp / "gen"])
        env = {"DMAHARNESS_CACHE": str(self.tmp / "cache-list")}
        with mock.patch.dict(os.environ, env):
            self.add("cache", "an empty cache", ["cache", "--json"])
            self.add("cache", "prune", ["cache", "prune", "--json"])
            self.add("profiles", "the shipped profiles", ["profiles", "--json"])
            # what apt says here, or the environment's error: both are its JSON
            self.add("sources", "offline", ["sources", "--offline", "--json"], (0, 3))
        sweep_json = self.tmp / "sweep.json"
        sweep_json.write_text(json.dumps(sweep_payload()))
        self.add("site-report", "row 2", ["site-report", "--json", sweep_json, "2"])
        self.add("site-report", "no such row", ["site-report", "--json", sweep_json, "99"], (4,))

    def mail(self):
        home = self.tmp / "home"
        home.mkdir()
        env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}
        fix = sorted((ROOT / "patches/7.3/cases/virtio-scsi-kick-event/fix").glob("*.patch"))
        with mock.patch.dict(os.environ, env):
            self.add("mail", "no git identity", ["mail", "--json", fix[0]], (3,))
            for key, value in (("user.name", "Ann Sender"), ("user.email", "ann@host.test")):
                subprocess.run(["git", "config", "--global", key, value], check=True)
            self.add("mail", "a fix", ["mail", "--json", fix[0], "-o", self.tmp / "mails"])

    def campaigns(self, case: Path):
        c = self.tmp / "camp"
        self.add("plan", "case", ["plan", "case", case, "-o", c, "--runs", "1", "--json"])
        self.add("plan", "sweep", ["plan", "sweep", "-o", self.tmp / "ps", "--qemu-devices",
                 "usb-kbd", "--json"])
        self.add("plan", "sweep --usb-drivers", ["plan", "sweep", "--usb-drivers", "--shares",
                 "2", "-o", self.tmp / "pu", "--json"])
        self.add("plan", "bisect", ["plan", "bisect", "--series", BISECT_SERIES, "--signature",
                 "uvc_status_start", "-o", self.tmp / "pb", "--json"])
        self.add("collect", "nothing back yet", ["collect", c, "--json"], (8,))
        return c

    def usage_errors(self):
        """`COMMAND --json --no-such-option`: one JSON object, the usage error's."""
        for name in commands():
            if name in NO_JSON or name == "capture":
                continue
            argv = [name, "--json", "--no-such-option"]
            if name == "diff":
                argv += ["a.log", "--", "b.log"]
            self.add(name, "a usage error", argv, (2, 129))

    # --- builds and boots, on the fake machine ------------------------------------------------

    def kernels(self, case: Path, camp: Path):
        t = self.tmp
        with FakeMachine(t):
            self.add("build", "6.1", ["build", "--json"])
            self.add("build", "an unknown profile", ["build", "--json", "--profile", "nope"],
                     (2,))
            self.add("boot", "6.1", ["boot", "--json", "--modules", "uvcvideo", "--run-dir",
                     t / "boot"])
            self.add("run", "a flood", ["run", "--json", "--duration", "1s", "--run-dir",
                     t / "run"])
            self.add("run", "--case", ["run", "--json", "--case", case, "--runs", "1",
                     "--parallel", "1", "--run-dir", t / "case"])
            self.add("case", "a case", ["case", case, "--json", "--runs", "1",
                     "--parallel", "1", "--run-dir", t / "case-command"])
            self.add("case", "a case that is not there", ["case", t / "no-case", "--json"],
                     (4,))
            self.add("run", "a case campaign's job", ["run", "--json", "--case", case,
                     "--case-variant", "before", "--case-run", "1", "--run-dir", t / "job"])
            self.add("run", "a bisection campaign's job", [
                "run", "--json", "--series", BISECT_SERIES, "--prefix", "5",
                "--signature", "uvc_status_start", "--run-dir", t / "bjob"])
            self.add("bisect", "a series", ["bisect", "--json", "--series", BISECT_SERIES,
                     "--signature", "uvc_status_start", "--duration", "1s", "--run-dir",
                     t / "bisect"])
            self.add("bisect-run", "a checkout", ["bisect-run", "--json", "--signature",
                     "uvc_status_start", "--tree", self.checkout(), "--duration", "1s"])
            self.add("bisect-run", "no checkout", ["bisect-run", "--json", "--signature", "x",
                     "--tree", t / "nowhere"], (132,))

            def jobs_here(c, n, prog, pin=False):        # GNU parallel's part, in process
                for j in c.jobs:
                    call(["job", j.id], cwd=c.folder)
                return 0
            with mock.patch.object(campaign_mod, "run_local", side_effect=jobs_here):
                self.add("campaign", "a case campaign", ["campaign", camp, "--json"])
            self.add("collect", "every job back", ["collect", camp, "--json"])
        with FakeMachine(t, console=FIX / "sweep" / "real-6.12-kunit-detector.log"):
            self.add("kunit", "the detector's suite", ["kunit", "--json", "--run-dir",
                     t / "kunit"], (0, 1))
        self.check()

    def checkout(self) -> Path:
        repo = self.tmp / "linux"
        repo.mkdir()
        (repo / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 0\n")
        for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t",
                                                     "commit", "-q", "-m", "x"]):
            subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
        return repo

    def check(self):
        """check on a synthetic tree (its Kconfig and Makefiles): uvcvideo,
        which the camera reaches, and a driver nothing reaches (exit 9)."""
        tree = self.tmp / "srctree"
        for folder, symbol, obj, src in (("drivers/media/usb/uvc", "USB_VIDEO_CLASS", "uvcvideo",
                                          "uvc_status.c"),
                                         ("drivers/gizmo", "GIZMO", "gizmo", "gizmo.c")):
            (tree / folder).mkdir(parents=True)
            (tree / folder / "Kconfig").write_text(f'config {symbol}\n\ttristate "x"\n')
            (tree / folder / "Makefile").write_text(
                f"{obj}-y := {src[:-2]}.o\nobj-$(CONFIG_{symbol}) += {obj}.o\n"
                if obj == "uvcvideo" else f"obj-$(CONFIG_{symbol}) += {obj}.o\n")
            (tree / folder / src).write_text("MODULE_DEVICE_TABLE(usb, ids);\n"
                                             if obj == "uvcvideo" else "\n")
        uvc, gizmo = self.tmp / "uvc.patch", self.tmp / "gizmo.patch"
        uvc.write_text(PATCH.format(f="drivers/media/usb/uvc/uvc_status.c"))
        gizmo.write_text(PATCH.format(f="drivers/gizmo/gizmo.c"))
        with FakeMachine(self.tmp), mock.patch.object(patchcheck.sweep, "source_tree",
                                                      return_value=tree):
            self.add("check", "--dry-run", ["check", "--json", "--dry-run", uvc])
            self.add("check", "nothing reached", ["check", "--json", gizmo], (9,))
            self.add("check", "before and after", ["check", "--json", "--runs", "1",
                     "--parallel", "1", uvc])

    # --- sweeps: recorded consoles as the boots' ------------------------------------------------

    def sweeps(self):
        t = self.tmp
        cat = catalogue.load(None)
        config = "".join(f"{s}={v}\n" for d in cat.devices for s, v in d.kconfig)
        models = {m for d in cat.devices for m in d.qemu_devices}
        consoles = {"virtio-rng": FIX / "sweep" / "real-6.12-sweep-virtio-rng.log"}

        def boot_devices(build, cat_, devices, name, klass, folder, boot, progress):
            folder.mkdir(parents=True, exist_ok=True)
            log = folder / "console.log"
            shutil.copy(consoles.get(name, FIX / "boot" / "6.1-ok-uvcvideo.log"), log)
            from harness.reports import engine
            titles = tuple(r.title for r in engine.parse(log.read_text(errors="replace")))
            return sweep.DeviceRun(name, klass, "ran", "", folder, log, "ok", 0 if devices
                                   else None, 3.0, titles)

        def sweep_target(spec, cat_, progress):
            return pipeline.target(spec), {"e1000": "CONFIG_E1000 is not in this tree"}

        with FakeMachine(t, config=config), \
                mock.patch.object(sweep, "sweep_target", side_effect=sweep_target), \
                mock.patch.object(sweep, "boot_devices", side_effect=boot_devices), \
                mock.patch.object(catalogue, "qemu_models", return_value=models), \
                mock.patch.object(qemu, "qemu_binary", return_value="qemu-system-x86_64"):
            first = self.add("sweep", "virtio-rng and e1000", [
                "sweep", "--json", "--kernel", "6.12", "--qemu-devices", "virtio-rng,e1000",
                "--parallel", "1", "--run-dir", t / "sweep"])
            if first:
                base = t / "baseline.json"
                base.write_text(json.dumps(first))
                self.add("sweep", "against a baseline", [
                    "sweep", "--json", "--kernel", "6.12", "--qemu-devices", "virtio-rng",
                    "--baseline", base, "--run-dir", t / "sweep2"], (0, 1))
            self.add("sweep", "a campaign's job", ["sweep", "--json", "--kernel", "6.12",
                     "--job", "virtio-rng", "--run-dir", t / "sjob"])
        self.usb_sweep()

    def usb_sweep(self):
        t = self.tmp
        plans = {p.module: p for p in usbgen.plan(usbgen.parse_aliases(ALIASES, "modules.alias"))}
        boots = [sweep.DeviceRun(f"try1-boot{i}", "usb", "ran", "", t / "usb" / f"b{i}",
                                 FIX / "sweep" / f"synthetic-7.3-usb-sweep-{x}.log", "ok", 0, 9.0)
                 for i, x in ((1, "a"), (2, "b"))]
        tried = [{"attempt": "int-bulk", "boot": "try1-boot1", "bound": True,
                  "drivers": ["ftdi_sio"], "why": ""}]
        drivers = [usbsweep.DriverRun("ftdi_sio", plans["ftdi_sio"], tried, bound_with="int-bulk"),
                   usbsweep.DriverRun("option", plans["option"], tried,
                                      why="no interface took it"),
                   usbsweep.DriverRun("hid_generic", plans["hid_generic"])]

        def usb_sweep(req, progress):
            req.run_dir.mkdir(parents=True, exist_ok=True)
            tgt = pipeline.target(req.variant)
            build = kbuild.build(tgt.variant())
            return usbsweep.UsbSweepResult(
                tgt, build, req.run_dir, drivers, sweeptable.fold(boots, version="7.3"), [],
                boots=2, wall=20.0, boot_drivers={"try1-boot1": ["ftdi_sio", "option"],
                                                  "try1-boot2": ["hid_generic"]}, runs=boots)
        with FakeMachine(t), mock.patch.object(usbsweep, "usb_sweep", side_effect=usb_sweep):
            self.add("sweep", "--usb-drivers", ["sweep", "--usb-drivers", "--json", "--kernel",
                     "7.3", "--run-dir", t / "usb"])

    # --- capture: the C tool's object, as its README shows it ----------------------------------

    def capture(self):
        """The C tool's --json (fake-device/capture/README.md's example; its
        own tests check the tool prints that shape)."""
        text = (ROOT / "fake-device" / "capture" / "README.md").read_text()
        for block in re.findall(r"```\n(\{.*?\})\n```", text, re.S):
            self.got.append(("capture", "README.md's example", 3, json.loads(block)))
        for m in re.finditer(r"`(\{\"version\":1,\"command\":\"capture\".*?\})`", text):
            self.got.append(("capture", "README.md's error", 1, json.loads(m.group(1))))

    def all(self):
        case = self.tmp / "cases" / "schema-case"
        case.mkdir(parents=True)
        (case / "0001-bug.patch").write_text(PATCH.format(f="drivers/media/usb/uvc/uvc_status.c"))
        (case / "case.toml").write_text(CASE)
        with mock.patch.dict(os.environ, {"DMAHARNESS_CACHE": str(self.tmp / "cache")}):
            self.readers()
            self.tables()
            self.mail()
            camp = self.campaigns(case)
            self.usage_errors()
            self.kernels(case, camp)
            self.sweeps()
        self.capture()
        return self


_GATHERED: list = []


def gathered() -> Outputs:
    if not _GATHERED:
        tmp = Path(tempfile.mkdtemp(prefix="dmaharness-schemas-"))
        _GATHERED.append((tmp, Outputs(tmp).all()))
    return _GATHERED[0][1]


def tearDownModule():
    for tmp, _ in _GATHERED:
        shutil.rmtree(tmp, ignore_errors=True)


class Schemas(unittest.TestCase):
    def test_every_command_with_json_has_a_schema_and_every_schema_a_command(self):
        want = {c for c in commands() if c not in NO_JSON}
        have = {p.name[:-len(".schema.json")] for p in SCHEMAS.glob("*.schema.json")}
        self.assertEqual(have, want)

    def test_each_schema_is_the_subset_with_the_envelope(self):
        for f in sorted(SCHEMAS.glob("*.schema.json")):
            command = f.name[:-len(".schema.json")]
            with self.subTest(schema=f.name):
                s = json.loads(f.read_text())
                jsonschema_lite.check_schema(s)
                self.assertEqual(s.get("$schema"), "https://json-schema.org/draft/2020-12/schema")
                self.assertIn(command, s.get("title", ""))
                # every object it allows: a result or an error, each with the envelope
                for name, d in s["$defs"].items():
                    if name not in ("result", "error"):
                        continue
                    self.assertLessEqual({"version", "command", "ok"}, set(d["required"]), name)
                    self.assertEqual(d["properties"]["version"], {"const": 1})
                    self.assertEqual(d["properties"]["command"], {"const": command})
                self.assertEqual(s["anyOf"], [{"$ref": "#/$defs/result"},
                                              {"$ref": "#/$defs/error"}])

    def test_real_outputs_validate(self):
        g = gathered()
        self.assertEqual(g.failures, [])
        for command, what, code, obj in g.got:
            with self.subTest(command=command, what=what):
                errors = jsonschema_lite.validate(obj, schema(command))
                self.assertEqual(errors, [], json.dumps(obj)[:2000])
                self.assertEqual(obj.get("command"), command)
                self.assertIs(type(obj.get("ok")), bool)
                # ok is what exit 0 means (bisect-run: git bisect run's good, bad or skip)
                if command == "bisect-run":
                    self.assertEqual(obj["ok"], code in (0, 1, 125))
                else:
                    self.assertEqual(obj["ok"], code == 0, (code, obj.get("failure")))

    def test_every_schema_saw_a_result_and_an_error(self):
        seen: dict[str, set] = {}
        for command, _, _, obj in gathered().got:
            kind = "error" if "error" in obj and obj["ok"] is False else "result"
            seen.setdefault(command, set()).add(kind)
        for command in (c for c in commands() if c not in NO_JSON):
            with self.subTest(command=command):
                want = {"result"} if command == "capture" else {"result", "error"}
                if command == "bisect-run":        # its usage error is a verdict of its own
                    want = {"result"}
                self.assertLessEqual(want, seen.get(command, set()))

    def test_docs_json_lists_every_schema(self):
        text = (ROOT / "docs" / "json.md").read_text()
        for f in SCHEMAS.glob("*.schema.json"):
            command = f.name[:-len(".schema.json")]
            self.assertRegex(text, rf"\| `{re.escape(command)}` \| \[`schemas/{re.escape(f.name)}`\]"
                                   rf"\(schemas/{re.escape(f.name)}\)")


class Validator(unittest.TestCase):
    """tests/unit/jsonschema_lite.py says what is wrong, and refuses what it cannot check."""

    S = {"$defs": {"n": {"type": ["integer", "null"], "minimum": 0}},
         "type": "object", "required": ["a"], "additionalProperties": False,
         "properties": {"a": {"enum": ["x", "y"]}, "b": {"type": "array", "items": {"$ref": "#/$defs/n"}},
                        "c": {"anyOf": [{"type": "string"}, {"const": True}]}}}

    def test_a_good_instance(self):
        self.assertEqual(jsonschema_lite.validate({"a": "x", "b": [0, None, 2.0], "c": True},
                                                  self.S), [])

    def test_what_is_wrong_and_where(self):
        errs = jsonschema_lite.validate({"b": [1, True, -1, "2"], "c": 1, "d": 0}, self.S)
        text = "\n".join(errs)
        self.assertIn("(top): 'a' is missing", text)
        self.assertIn(".b[1]: bool True is not integer or null", text)     # true is no number
        self.assertIn(".b[2]: -1 is below 0", text)
        self.assertIn(".b[3]: str", text)
        self.assertIn(".c: matches none of anyOf", text)
        self.assertIn(".d: no value is allowed here", text)
        self.assertIn("is not one of", "\n".join(jsonschema_lite.validate({"a": "z"}, self.S)))

    def test_keywords_outside_the_subset_are_refused(self):
        for bad in ({"pattern": "x"}, {"type": "strin"}, {"$ref": "other.json"},
                    {"properties": {"a": {"format": "date"}}}):
            with self.subTest(schema=bad), self.assertRaises(jsonschema_lite.SchemaError):
                jsonschema_lite.check_schema(bad)
        with self.assertRaises(jsonschema_lite.SchemaError):
            jsonschema_lite.validate("x", {"type": "string", "maxLength": 3})


if __name__ == "__main__":
    unittest.main()
