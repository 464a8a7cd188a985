#!/usr/bin/env python3
"""A stand-in for Debian's usbredirect on a machine without USB hardware.

Takes usbredirect's command line (`--device VID:PID --as 127.0.0.1:PORT`)
and serves, instead of a real device, the profile named by
$FAKE_USBREDIRECT_PROFILE with the project's fake device: it listens on the
TCP port as usbredirect does, starts `fake-uvc --connect` on a private unix
socket when QEMU connects, and relays bytes both ways until either side
closes. Everything QEMU and the guest see is the real usbredir protocol of
the fake device. Like usbredirect it exits 0 when the device does not
match (there: "Failed to open device!").
"""

import argparse
import os
import selectors
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FAKE_UVC = REPO / "fake-device" / "build" / "fake-uvc"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", required=True)
    ap.add_argument("--as", dest="as_", required=True)
    a = ap.parse_args()
    profile = os.environ["FAKE_USBREDIRECT_PROFILE"]
    text = Path(profile).read_text()
    dev = next(l.split()[1:] for l in text.splitlines() if l.startswith("device "))
    vid, pid = int(dev[8], 16) | int(dev[9], 16) << 8, int(dev[10], 16) | int(dev[11], 16) << 8
    if a.device.lower() != f"{vid:04x}:{pid:04x}":
        print("Failed to open device!", file=sys.stderr)
        return 0
    host, port = a.as_.split(":")
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", int(port)))
    srv.listen(1)
    conn, _ = srv.accept()
    srv.close()
    with tempfile.TemporaryDirectory(prefix="fake-usbredirect-") as tmp:
        path = os.path.join(tmp, "s")
        lsock = socket.socket(socket.AF_UNIX)
        lsock.bind(path)
        lsock.listen(1)
        dur = os.environ.get("FAKE_USBREDIRECT_DURATION", "60")
        child = subprocess.Popen([str(FAKE_UVC), "--connect", path, "--profile", profile,
                                  "--duration", dur], stdout=subprocess.DEVNULL)
        peer, _ = lsock.accept()
        sel = selectors.DefaultSelector()
        sel.register(conn, selectors.EVENT_READ, peer)
        sel.register(peer, selectors.EVENT_READ, conn)
        try:
            while True:
                for key, _ in sel.select():
                    data = key.fileobj.recv(65536)
                    if not data:
                        return 0
                    key.data.sendall(data)
        except OSError:
            return 0
        finally:
            child.terminate()
            child.wait(10)


if __name__ == "__main__":
    sys.exit(main())
