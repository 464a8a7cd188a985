"""What a case may ask of QEMU: an allow-list, each row with its reason.

A case folder (``run.qemu_opts`` in case.toml) and a campaign's job come
from someone else.  QEMU options name host files (``-pidfile`` overwrites
one and deletes it on exit, ``-D``, ``-drive file=``, ``-chardev file``,
``-object memory-backend-file``, ``-machine dumpdtb=``, a bare word is a
disk image), host devices and sockets (``-monitor``, ``-serial``,
``-device vfio-pci,host=``, ``usb-host``) and host programs (``-netdev
...,script=``, ``-plugin``).  So such a layer may set the options of
:data:`RULES` with the properties each lists, and nothing else; anything
else is refused before any build, with the option named.

The ``--qemu-opts`` of the person at the keyboard is not checked: it is
theirs, as a shell command line is.

QEMU's own syntax is followed: ``--opt`` is ``-opt``; a value is a list of
``key=value`` separated by commas, ``,,`` a literal comma (refused here:
no allowed value needs one), a first element without ``=`` the option's
implied key (``-machine q35`` is ``type=q35``), a bare ``key`` is
``key=on``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ..errors import InputError

_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
_ONOFF = r"on|off|true|false|yes|no"


@dataclass(frozen=True)
class Rule:
    """One option a case may set: the properties it may carry, each with the
    pattern its value must match in whole, and why a case needs it."""
    why: str
    keys: dict[str, str] = field(default_factory=dict)
    implied: str | None = None      # the key of a first element without '='
    whole: str | None = None        # not a property list: the value's pattern
    any_key: bool = False           # -cpu: any feature name (+f, -f, f=on)


RULES: dict[str, Rule] = {
    "icount": Rule("a guest clock that counts instructions: timing that repeats from run to "
                   "run (rr=, rrfile= record to a host file: not here)",
                   {"shift": r"\d{1,2}|auto", "sleep": _ONOFF, "align": _ONOFF}, "shift"),
    "cpu": Rule("the CPU model and its features a driver path depends on",
                {"model": _NAME}, "model", any_key=True),
    "machine": Rule("the machine type and its on-board devices (no firmware, dtb, kernel, "
                    "memory backend: they name host files)",
                    {k: r"[A-Za-z0-9_.-]{1,64}" for k in (
                        "type", "usb", "hpet", "smm", "pit", "pic", "vmport", "acpi",
                        "graphics", "i8042", "sata", "smbus", "dump-guest-core", "mem-merge",
                        "nvdimm", "hmat", "max-ram-below-4g", "default-bus-bypass-iommu",
                        "kernel-irqchip")}, "type"),
    "d": Rule("QEMU's own log items (guest_errors, unimp, trace:EVENT) on its standard "
              "error, which the run folder keeps; -D, a log file, is not allowed",
              whole=r"[A-Za-z0-9_*.:-]+(,[A-Za-z0-9_*.:-]+)*"),
    "rtc": Rule("the guest's real-time clock: its base and which clock drives it",
                {"base": r"utc|localtime|\d{4}-\d\d-\d\d(T\d\d:\d\d:\d\d)?",
                 "clock": r"host|rt|vm", "driftfix": r"none|slew"}),
    "msg": Rule("timestamps on QEMU's own messages",
                {"timestamp": _ONOFF, "guest-name": _ONOFF}),
}
RULES["M"] = RULES["machine"]

# options a case asks for elsewhere, with where
_ELSEWHERE = {
    "m": "memory", "smp": "smp", "append": "append", "accel": "accel (a flag of yours, "
    "not a case's)", "enable-kvm": "accel (a flag of yours, not a case's)",
    "device": "a [devices] table (catalogue entries) or run.devices (USB profiles)",
}


def allowed() -> str:
    return ", ".join("-" + n for n in RULES if n != "M")


def _refuse(word: str, why: str) -> InputError:
    return InputError(f"QEMU option {word!r}: {why}; a case or a campaign job may set only "
                      f"{allowed()} (harness/boot/qemurules.py), and your own --qemu-opts "
                      "on the command line may set anything")


def _elements(value: str) -> list[str]:
    if ",," in value:
        raise ValueError("',,' (a literal comma)")
    return value.split(",")


def check_value(name: str, value: str) -> None:
    """ValueError naming what of ``value`` option ``-name`` may not carry."""
    rule = RULES[name]
    if not value or len(value) > 512 or any(c in value for c in "/\\~\0\n"):
        raise ValueError(f"{value[:80]!r} (empty, too long, or a path character)")
    if rule.whole is not None:
        if not re.fullmatch(rule.whole, value):
            raise ValueError(f"{value[:80]!r}")
        return
    for i, el in enumerate(_elements(value)):
        if rule.any_key and i > 0 and re.fullmatch(r"[+-]" + _NAME, el):
            continue                                    # -cpu qemu64,+ssse3,-x2apic
        if "=" in el:
            key, val = el.split("=", 1)
        elif i == 0 and rule.implied:
            key, val = rule.implied, el
        else:
            key, val = el, "on"
        if key in rule.keys:
            pattern = rule.keys[key]
        elif rule.any_key and re.fullmatch(_NAME, key):
            pattern = r"[A-Za-z0-9_.-]{1,64}"
        else:
            raise ValueError(f"property {key!r} (allowed: {', '.join(rule.keys) or 'none'})")
        if not re.fullmatch(pattern, val):
            raise ValueError(f"{key}={val[:80]!r}")


def check(words: Sequence[str]) -> tuple[str, ...]:
    """``words`` (QEMU options, already split) when a case may set them all;
    else InputError naming the first option it may not."""
    out = tuple(words)
    i = 0
    while i < len(out):
        word = out[i]
        if not word.startswith("-") or word in ("-", "--"):
            raise _refuse(word, "a QEMU argument that is not an option is a disk image "
                                "(a host file)")
        name = word[2:] if word.startswith("--") else word[1:]
        if "=" in name:                 # QEMU takes no -opt=value: it would be an unknown option
            raise _refuse(word, "QEMU spells an option's value as the next word")
        if name not in RULES:
            where = _ELSEWHERE.get(name)
            raise _refuse(word, f"set it with {where}" if where else
                          "not on the allow-list (it may name a host file, device, socket "
                          "or program)")
        if i + 1 >= len(out):
            raise _refuse(word, "it needs a value")
        try:
            check_value(name, out[i + 1])
        except ValueError as e:
            raise _refuse(word, f"it may not carry {e}") from None
        i += 2
    return out
