#!/usr/bin/env python3
"""Measure fake-uvc's own CPU cost per status packet, without QEMU.

Starts fake-uvc --listen on a private socket, plays a minimal usb-guest
(hello with QEMU 7.2's caps, start_interrupt_receiving on 0x83), drains the
socket for --seconds, sends SIGTERM and prints the counters and the CPU
time fake-uvc used.  Prints figures; asserts nothing.

usage: cpu_bench.py path/to/fake-uvc [--seconds S] [fake-uvc options...]
"""
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time


def main() -> int:
    args = sys.argv[1:]
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    binary, rest = args[0], args[1:]
    seconds = 10.0
    if rest[:1] == ["--seconds"]:
        seconds, rest = float(rest[1]), rest[2:]
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o700)
        path = os.path.join(tmp, "cam.sock")
        proc = subprocess.Popen([binary, "--listen", path, "-q", *rest],
                                stdout=subprocess.PIPE, text=True)
        for _ in range(200):
            if os.path.exists(path):
                break
            time.sleep(0.01)
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        caps = (1 << 1) | (1 << 2) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7)
        version = b"cpu_bench usb-guest".ljust(64, b"\0")
        hello = version + struct.pack("<I", caps)
        s.sendall(struct.pack("<III", 0, len(hello), 0) + hello)
        time.sleep(0.1)
        # 64-bit ids from now on: start interrupt receiving on 0x83
        s.sendall(struct.pack("<IIQ", 15, 1, 0) + b"\x83")
        t_end = time.monotonic() + seconds
        received = 0
        s.settimeout(0.2)
        while time.monotonic() < t_end:
            try:
                chunk = s.recv(1 << 16)
            except socket.timeout:
                continue
            if not chunk:
                break
            received += len(chunk)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
        s.close()
    d = json.loads(out.strip().splitlines()[-1])
    if os.environ.get("CPU_BENCH_JSON"):
        print(out.strip())
    cpu = d["cpu_user_s"] + d["cpu_sys_s"]
    print(f"flood_s {d['flood_s']:.2f}  sent {d['sent']}  "
          f"rate {d['sent'] / max(d['flood_s'], 1e-9):.0f}/s  "
          f"bytes_received {received}")
    print(f"fake-uvc cpu {cpu:.3f} s ({d['cpu_user_s']:.3f} user, "
          f"{d['cpu_sys_s']:.3f} sys) = {100 * cpu / seconds:.2f}% of one CPU, "
          f"{1e6 * cpu / max(d['sent'], 1):.2f} us/packet")
    return 0


if __name__ == "__main__":
    sys.exit(main())
