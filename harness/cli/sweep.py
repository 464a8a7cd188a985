"""`sweep`: every device model of the catalogue booted, the sharing sites listed."""

from __future__ import annotations

import re
from argparse import ArgumentTypeError
from pathlib import Path

from .. import errors, jsonout
from ..progress import Progress
from ..boot import settings
from ..checks import sweep, sweeptable, usbsweep
from ..devices import usbdevices, usbgen
from ..output import mail, sitemail, sweephtml
from .. import files
from . import helptext
from .common import (add_command, boot_group, command_parser, emit, flags, folder, out_file, output_group,
                     variant_spec, whole_number)


_NUMBER = re.compile(r"[0-9]{1,4}")


def per_boot(text: str) -> int:
    """argparse type: --per-boot, 1 to 8 (the xHCI ports a boot has)."""
    n = whole_number(text)
    if not 1 <= n <= 8:
        raise ArgumentTypeError(f"{text!r}: 1 to 8 (the xHCI ports a boot has)")
    return n


def driver_names(a) -> tuple[str, ...]:
    """--drivers' module names, their syntax checked at the door (a name that
    could be a path, '../x', is refused before the sweep kernel's build of
    up to 25 minutes).  Whether the tree has such a module is only known
    from the built kernel's modules.alias (Kconfig names options, not
    modules; the Makefiles name objects by variables), so usbsweep checks
    that after the build."""
    drivers = tuple(d for part in a.drivers for d in part.split(",") if d)
    bad = [d for d in drivers if not usbsweep.MODULE_NAME.fullmatch(d)]
    if bad:
        raise errors.HarnessError(f"--drivers {bad[0][:80]!r} is not a module name (letters, "
                                  "digits, '_' and '-')")
    return drivers


def cmd_usb_sweep(a, b) -> int:
    if a.devices or a.catalogue or a.job:
        raise errors.InputError("sweep --usb-drivers takes none of --qemu-devices, --catalogue, "
                                "--job")
    base = sweeptable.load_sites(a.baseline) if a.baseline else None
    batch = None
    if a.batch is not None:
        k, _, n = a.batch.partition("/")
        if not (_NUMBER.fullmatch(k) and _NUMBER.fullmatch(n) and 1 <= int(k) <= int(n) <= 1000):
            raise errors.InputError(f"--batch {a.batch[:40]!r}: K/N with 1 <= K <= N <= 1000")
        batch = (int(k), int(n))
    drivers = driver_names(a)
    res = usbsweep.usb_sweep(usbsweep.UsbSweepRequest(
        variant_spec(a, series_=False), b, drivers, 8 if a.per_boot is None else a.per_boot,
        parallel=a.parallel, max_tries=a.tries or 0, run_dir=a.run_dir, plan_only=a.list, as_configured=a.as_configured,
        batch=batch, layouts=tuple(x for part in a.layouts for x in part.split(",") if x)),
        Progress(quiet=a.quiet))
    payload, text, code = res.to_json(), usbsweep.format_text(res), errors.EXIT_OK
    if res.run_dir:
        text, code = _finish(a, base, payload, text, code, res.run_dir / "usb-sweep",
                             {"devices": payload["boots"]})
        text += f"\n  logs     {res.run_dir}/try<N>-boot<M>/"
    emit(a, payload, text)
    return code


def _finish(a, base, payload: dict, text: str, code: int, stem: Path, page: dict
            ) -> tuple[str, int]:
    """A sweep's diff against --baseline (exit 1 when the sites differ), and
    its page and JSON (STEM.html, STEM.json) in its run folder."""
    if base is not None:
        d = sweeptable.diff(base, payload["sites"])
        payload["baseline"] = {"file": str(a.baseline), **d.to_json()}
        text += f"\nagainst {a.baseline}:\n" + d.format_text()
        code = errors.EXIT_VERDICT if d.differs else code
    html, js = stem.with_suffix(".html"), stem.with_suffix(".json")
    payload["html"] = str(html)
    sweephtml.write(html, {**payload, **page})
    jsonout.write(js, payload)
    return text + f"\n  json     {js}\n  html     {html}", code


def cmd_sweep(a) -> int:
    if a.usb_drivers:
        driver_names(a)             # before the settings and the build
        return cmd_usb_sweep(a, settings.resolve(flags(a), boot=settings.BootSettings(
            timeout=300.0, smp=1))[0])
    given = [f for f, v in (("--per-boot", a.per_boot), ("--tries", a.tries)) if v is not None]
    if given:                       # not silently ignored: the user meant something
        raise errors.HarnessError(f"{' and '.join(given)} "
                                  f"{'go' if len(given) > 1 else 'goes'} with --usb-drivers")
    if a.drivers or a.as_configured or a.batch or a.layouts:
        raise errors.InputError("--drivers, --as-configured, --batch and --layouts go with "
                                "--usb-drivers")
    prog = Progress(quiet=a.quiet)
    base = sweeptable.load_sites(a.baseline) if a.baseline else None
    devices = tuple(d for part in a.devices for d in part.split(",") if d)
    b = settings.resolve(flags(a), boot=settings.BootSettings(timeout=300.0, smp=1))[0]
    if a.job:
        if devices or a.list or a.baseline:
            raise errors.HarnessError("sweep --job takes none of --qemu-devices, --list, "
                                      "--baseline")
        payload = sweep.sweep_job(sweep.SweepRequest(variant_spec(a, series_=False), b, (),
                                                     a.catalogue, 1, a.run_dir), a.job, prog)
        d = payload["device"]
        emit(a, payload,
              f"{payload['build']['key']}: {d['device']} {d['state']}"
              + (f" ({d['reason']})" if d["reason"] else "")
              + f", {len(d['reports'])} report(s)" + (f"\n  console  {d['console']}"
                                                      if d["console"] else ""))
        return errors.EXIT_OK
    res = sweep.sweep(sweep.SweepRequest(variant_spec(a, series_=False), b, devices,
                                         a.catalogue, a.parallel, a.run_dir,
                                         plan_only=a.list), prog)
    payload = res.to_json()
    if a.list:
        lines = [f"{res.build.artifacts.key}: {len(res.runs)} device(s)"]
        lines += [f"  {r.state:8} {r.device:<20} {r.klass:<8} {r.reason}".rstrip()
                  for r in res.runs]
        emit(a, payload, "\n".join(lines))
        return errors.EXIT_OK
    text, code = _finish(a, base, payload, sweeptable.format_text(res.table, res.runs),
                         errors.EXIT_OK if res.ok else errors.EXIT_VERDICT,
                         res.run_dir / "sweep", {})
    emit(a, payload, text + f"\n  logs     {res.run_dir}/<device>/console.log")
    return code


def cmd_site_report(a) -> int:
    payload = files.read_json(a.sweep_json, "the sweep's JSON")
    if not isinstance(payload, dict):
        raise errors.InputError(f"{a.sweep_json}: not the JSON of a sweep (not an object)",
                                path=str(a.sweep_json))
    # the sender's identity: needed for a fix (their sign-off), else used when git has one
    sender = mail.identity() if a.fix else mail.identity_or_none()
    report = sitemail.render(payload, a.site, a.sweep_json, a.fix, sender)
    if a.output:
        jsonout.write_text(a.output, report.text())
    emit(a, report.to_json(), report.text().rstrip("\n"))
    return errors.EXIT_OK


def cmd_usb_drivers(a) -> int:
    src = usbgen.find_alias(files.resolve(a.alias, "modules.alias"))
    plans = usbgen.plan(usbgen.parse_aliases(files.read_text(src, "modules.alias"), str(src)))
    written: dict[str, list[str]] = {}
    if a.output:
        out = files.resolve(a.output, "-o")
        for p in plans:
            if p.match is None:
                continue
            mdir = out / p.module                 # a module name: [A-Za-z0-9_-]
            try:
                mdir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise errors.InputError(f"-o {a.output}: cannot make {mdir} "
                                        f"({e.strerror or e})", path=str(mdir)) from None
            for i, attempt in enumerate(p.tries, 1):
                f = mdir / f"{i}-{attempt.replace('tpl:', 'tpl-')}.profile"
                jsonout.write_text(f, usbgen.device_text(p, attempt, usbdevices.PROFILES_DIR))
                written.setdefault(p.module, []).append(str(f))
    made = [p for p in plans if p.match is not None]
    payload = {"command": "usb-drivers", "ok": True, "alias_file": str(src),
               "drivers": len(plans), "with_device": len(made),
               "plans": [dict(p.to_json(), profiles=written.get(p.module, [])) for p in plans]}
    lines = [f"{src}: {len(plans)} USB/HID driver(s) with an ID table, {len(made)} with a "
             "device to try"]
    for p in plans:
        what = (f"{p.match.alias}  tries: {', '.join(p.tries)}" if p.match
                else f"nothing to try: {p.reason}")
        lines.append(f"  {p.module:<20} {p.entries:>4} entries  {what}")
    if a.output:
        lines.append(f"  profiles {a.output}/<module>/<n>-<try>.profile")
    emit(a, payload, "\n".join(lines))
    return errors.EXIT_OK


def add_parsers(sub) -> None:
    """sweep, site-report, usb-drivers."""
    sw = command_parser(
        sub, "sweep", cmd_sweep, "DMA sharing sites, a boot per QEMU device (or --usb-drivers)",
        "Survey a stock kernel (the detector series only): build it with the drivers of "
        "kconfig-fragments/sweep/catalogue.toml, boot it once without a device and once per "
        "device model (virtio with the DMA API forced, storage, NICs in pairs, sound, USB), "
        "run each device's workload (real I/O) and fold every detector report into sites: "
        "one row per driver function and buffer that shares a cache line with other data of "
        "its object, with the devices that reached it, whether a CPU access to the "
        "device-owned bytes was seen (KASAN: dma-owned), the structure layout and the console "
        "evidence. Devices whose model this QEMU lacks or whose driver this kernel cannot "
        "build are listed as skipped, with the reason. Exit 0, or 1 when a boot failed or "
        "(with --baseline) the sites differ from the baseline's.", series=False,
        examples=("dmaharness sweep --kernel 6.12 --qemu-devices virtio,nvme",
                  "# new / gone / unchanged sites against an earlier sweep",
                  "dmaharness sweep --kernel 6.12 --baseline old/sweep.json",
                  "# one generated device per USB driver, its own ID table",
                  "dmaharness sweep --usb-drivers --kernel 7.3 --drivers ftdi_sio,asix"),
        codes=(errors.EXIT_VERDICT, errors.EXIT_INPUT, errors.EXIT_BUILD, errors.EXIT_DEVICE),
        meaning={errors.EXIT_OK: "every boot ran (and, with --baseline, the sites are the "
                 "baseline's)",
                 errors.EXIT_VERDICT: "a boot failed, or (--baseline) the sites differ",
                 errors.EXIT_BUILD: "the sweep kernel or the fake device failed to build",
                 errors.EXIT_DEVICE: "--usb-drivers: a fake device failed to start"},
        run_settings=True)
    g = sw.add_argument_group("sweep")
    g.add_argument("--qemu-devices", "--devices", dest="devices", action="append", default=[],
                   metavar="LIST",
                   help="comma-separated QEMU device models of the catalogue, by name or class "
                        "(virtio, storage, network, sound, usb, misc; default: all; "
                        "repeatable); a USB device profile is run's --usb-device"
                        + helptext.old_spelling("--devices"))
    g.add_argument("--catalogue", type=Path, metavar="FILE",
                   help="another device catalogue (default kconfig-fragments/sweep/catalogue.toml)")
    g.add_argument("--baseline", type=Path, metavar="FILE",
                   help="an earlier sweep's sweep.json or usb-sweep.json (or --json output): "
                        "list new, gone and unchanged sites; exit 1 when they differ, as diff(1)")
    g.add_argument("--parallel", type=whole_number, default=0,
                   help="guests booted at once (default: one per core)")
    g.add_argument("--list", action="store_true",
                   help="build the sweep kernel (cached) and list what would run and what is "
                        "skipped, and why; boot nothing")
    g = sw.add_argument_group("USB drivers (--usb-drivers)")
    g.add_argument("--usb-drivers", action="store_true",
                   help="instead of the catalogue: every USB and HID driver of the tree as a "
                        "module, each bound by a device made from its own ID table (sweep "
                        "kernel with the tree's USB drivers; see usb-drivers), up to "
                        "--per-boot devices a boot, their endpoints flooded, their nodes held "
                        "open; a driver that does not bind gets its next try")
    g.add_argument("--drivers", action="append", default=[], metavar="LIST",
                   help="--usb-drivers: only these modules (comma-separated; repeatable)")
    g.add_argument("--as-configured", action="store_true",
                   help="--usb-drivers: without the generated fragment, only the drivers the "
                        "kernel already builds (its profile and kconfig-fragments/usb/): no "
                        "build of its own when the profile devices' kernel is cached")
    helptext.job_only(g, "--batch", metavar="K/N",
                      help="--usb-drivers: a campaign's job (`plan sweep --usb-drivers`): every "
                           "N-th driver from the K-th; the JSON carries each boot's console "
                           "whole")
    g.add_argument("--layouts", action="append", default=[], metavar="LIST",
                   help="--usb-drivers: only these tries of each driver's plan (comma-separated: "
                        "tpl for a class template, " + ", ".join(usbgen.LAYOUTS) + "; default all)")
    g.add_argument("--per-boot", type=per_boot, default=None, metavar="N",
                   help="--usb-drivers: devices a boot, 1 to 8 (8)")
    g.add_argument("--tries", type=whole_number, default=None, metavar="N",
                   help="--usb-drivers: tries a driver (default: its whole plan)")
    helptext.job_only(g, "--job", metavar="DEVICE",
                      help="a sweep campaign's job (`plan sweep`): the one boot of this device "
                           "of the catalogue, or '(boot)' for the boot without a device; the "
                           "JSON carries its console whole (`collect` folds the sites)")
    boot_group(sw, timeout_help="seconds the guest may take beyond the "
               f"{sweep.WORKLOAD_TIMEOUT:g} s its device's workload is given", timeout=300,
               smp=1)
    sr = add_command(
        sub, "site-report", cmd_site_report, "one sweep site as a report to mail its "
        "maintainers",
        "Write, for one site of a sweep, the report a maintainer wants: a subject; "
        "what maps what; the structure layout around the line; the mapping stack; the CPU's "
        "access to the device-owned bytes with its stack (read from the boot's console when "
        "it lies in the sweep's folder); on which real machines it corrupts (the exposure "
        "table); the kernel and package version; the dmaharness command that reproduces it; "
        "and the fix patch, with --fix. SITE is a row number of the sweep's table, a site key "
        "or the mapping function (when it names one site). Nothing is run; only --output is "
        "written.",
        examples=("# row 1 of the sweep's table",
                  "dmaharness site-report ~/.cache/dmaharness/runs/<sweep>/sweep.json 1",
                  "# a site by its mapping function, with your fix, as a file",
                  "dmaharness site-report sweep.json virtscsi_kick_event --fix fix.patch \\",
                  "    -o report.txt"),
        codes=(errors.EXIT_INPUT,))
    sr.add_argument("sweep_json", type=Path, metavar="SWEEP_JSON",
                    help="a sweep's sweep.json (or its --json output)")
    sr.add_argument("site", metavar="SITE", help="row number, site key or mapping function")
    sr.add_argument("--fix", type=Path, metavar="PATCH",
                    help="a fix patch to append as the proposed fix, as your mail: From: and "
                         "Signed-off-by: are git's user.name and user.email (required)")
    sr.add_argument("-o", "--output", type=out_file, metavar="FILE",
                    help="also write the report to FILE")
    output_group(sr)
    ud = add_command(
        sub, "usb-drivers", cmd_usb_drivers,
        "a device profile per USB/HID driver, from its ID table",
        "Read a kernel's modules.alias (a built kernel's artifacts/modules folder, "
        "or the file) and plan, for every USB and HID driver with an ID table, the devices "
        "that should bind it: the entry's IDs and classes, at the level the entry matches "
        "(device or interface), the interface at the number it names, a class driver's "
        "shipped template (UVC, UAC, CDC ACM/ECM) first, then the endpoint layouts "
        f"({', '.join(usbgen.LAYOUTS)}); a catch-all driver (hid_generic) gets none. With -o, "
        "write the profiles (fake-device/profiles/FORMAT.md) into DIR/<module>/, to attach "
        "with run --usb-device. Nothing is booted.",
        examples=("dmaharness usb-drivers ~/.cache/dmaharness/artifacts/<key>/modules",
                  "# write the profiles, then attach one",
                  "dmaharness usb-drivers modules.alias -o gen/",
                  "dmaharness run --usb-device gen/ftdi_sio/2-int-bulk.profile"),
        codes=(errors.EXIT_INPUT,))
    ud.add_argument("alias", type=Path, metavar="MODULES_ALIAS",
                    help="a modules.alias file, or a folder holding one")
    ud.add_argument("-o", "--output", type=folder, metavar="DIR",
                    help="write every driver's profiles under DIR")
    output_group(ud)

