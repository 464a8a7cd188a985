"""Integration: two workers share one compiler cache through redis (--ccache-remote).

A redis-server of our own (127.0.0.1, a free port, no persistence, its own
folder; stopped at the end, also on failure) is the remote storage.  Worker
A, a fresh cache folder whose ccache is a copy of yours (warm: its compiles
are local hits), builds the 6.1 variant with CCACHE_RESHARE=1, so every
local hit is written to redis as well.  Worker B, another fresh cache folder
with an empty ccache, builds the same variant: most compiles come from redis
(remote hits), few are misses, and the key is A's.

Both are full builds (a fresh cache folder has no work tree to seed from).
They share your unpacked linux source by a symlink when it is on the same
filesystem (a worker's own unpack is measured apart, see bench/README.md).  Each
build takes a few minutes on two cores, so it runs with
DMAHARNESS_DEEP_TESTS=1 (make test-deep).  Your cache folder is only read.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, str(ROOT / "dmaharness")]
DEEP = os.environ.get("DMAHARNESS_DEEP_TESTS") == "1"
TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")


def user_cache() -> Path:
    env = os.environ.get("DMAHARNESS_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "dmaharness").expanduser().resolve()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_command(port: int, *words: str) -> str:
    """One command in the RESP protocol; its reply's first line."""
    msg = f"*{len(words)}\r\n" + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(msg.encode())
        return s.recv(4096).decode(errors="replace").split("\r\n")[0]


class Redis:
    """A private redis-server: in memory only, at most 2 GiB, dropped at stop()."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.log = folder / "redis.log"
        self.proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(folder), "--logfile", str(self.log),
             "--maxmemory", "2gb", "--maxmemory-policy", "allkeys-lru", "--daemonize", "no"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        # ccache's default connect timeout is 100 ms: thousands of compiles on
        # two loaded cores can miss it now and then and count a remote error
        self.url = f"redis://127.0.0.1:{self.port}|connect-timeout=2000"
        deadline = time.monotonic() + 20
        while True:
            try:
                if redis_command(self.port, "PING") == "+PONG":
                    return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server did not start: {self.log.read_text()[-1000:]}"
                                   if self.log.is_file() else "redis-server did not start")
            time.sleep(0.1)

    def keys(self) -> int:
        return int(redis_command(self.port, "DBSIZE").lstrip(":"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)


def worker(folder: Path, mine: Path, *, share_src: bool, warm: bool) -> None:
    """A fresh cache folder: your unpacked sources by a symlink, your ccache copied."""
    folder.mkdir()
    if share_src:
        (folder / "src").symlink_to(mine / "src", target_is_directory=True)
    if warm and (mine / "ccache").is_dir():
        shutil.copytree(mine / "ccache", folder / "ccache", symlinks=True,
                        ignore=shutil.ignore_patterns("*.lock", "tmp"))


@unittest.skipUnless(DEEP, "DMAHARNESS_DEEP_TESTS=1 (make test-deep): two full 6.1 builds")
@unittest.skipUnless(shutil.which("redis-server"), "redis-server is not installed")
@unittest.skipUnless(TARBALL.is_file(), f"{TARBALL} is missing")
class SharedCompilerCache(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="dmah-ccache-remote-"))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        (self.tmp / "redis").mkdir()
        self.redis = Redis(self.tmp / "redis")
        self.addCleanup(self.redis_gone, self.redis.proc.pid)
        self.addCleanup(self.redis.stop)
        self.mine = user_cache()
        pristine = sorted((self.mine / "src").glob("linux-6.1.*/.dmaharness-pristine"))
        # hard links from your pristine tree into a worker's work tree need one filesystem
        self.share_src = bool(pristine) and os.stat(self.tmp).st_dev == os.stat(pristine[0]).st_dev

    def redis_gone(self, pid: int) -> None:
        self.assertIsNotNone(self.redis.proc.returncode)
        self.assertFalse(Path(f"/proc/{pid}").exists(), f"redis-server {pid} still runs")

    def build(self, folder: Path, *args: str, **env: str) -> tuple[dict, float]:
        t0 = time.monotonic()
        r = subprocess.run(CLI + ["build", "--kernel", "6.1", "--json", *args],
                           env={**os.environ, "DMAHARNESS_CACHE": str(folder), **env},
                           capture_output=True, text=True, timeout=7200)
        el = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, f"build in {folder} failed:\n{r.stderr[-3000:]}")
        return json.loads(r.stdout), el

    def test_a_second_worker_builds_from_the_first_ones_objects(self):
        a_dir, b_dir = self.tmp / "worker-a", self.tmp / "worker-b"
        worker(a_dir, self.mine, share_src=self.share_src, warm=True)
        worker(b_dir, self.mine, share_src=self.share_src, warm=False)

        a, a_s = self.build(a_dir, "--ccache-remote", self.redis.url, CCACHE_RESHARE="1")
        self.assertFalse(a["cached"])
        self.assertIsNone(a["seeded_from"])
        ca = a["ccache"]
        self.assertEqual(ca["remote"], self.redis.url)
        self.assertEqual(ca["remote_errors"], 0, ca)
        keys = self.redis.keys()
        # a result and a manifest for each compilation
        self.assertGreaterEqual(keys, ca["local_hits"] + ca["misses"], (keys, ca))

        # the flag wins over the variable; B's ccache starts empty
        b, b_s = self.build(b_dir, "--ccache-remote", self.redis.url,
                            DMAHARNESS_CCACHE_REMOTE="redis://127.0.0.1:1")
        self.assertEqual(b["key"], a["key"])
        self.assertFalse(b["cached"])
        self.assertIsNone(b["seeded_from"])
        cb = b["ccache"]
        self.assertEqual(cb["remote"], self.redis.url)
        self.assertEqual(cb["remote_errors"], 0, cb)
        looked_up = cb["local_hits"] + cb["remote_hits"] + cb["misses"]
        self.assertGreater(cb["remote_hits"], 0, cb)
        self.assertGreater(cb["remote_hits"], 0.9 * looked_up, cb)      # most from redis
        self.assertLess(cb["misses"], 0.05 * looked_up, cb)
        self.assertLessEqual(cb["misses"], ca["misses"], (ca, cb))
        # the objects from redis make the same kernel
        self.assertEqual(Path(b["bzImage"]).read_bytes(), Path(a["bzImage"]).read_bytes())
        sys.stderr.write(f"\n  worker A (warm local ccache, reshare): {a_s:.0f}s {ca}"
                         f"\n  worker B (empty ccache, redis): {b_s:.0f}s {cb}"
                         f"\n  redis keys: {keys}; sources shared: {self.share_src}\n")


if __name__ == "__main__":
    unittest.main()
