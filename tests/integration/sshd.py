"""A private sshd on 127.0.0.1 for the tests: its own host key, a generated
client key, its own config, authorized_keys and pid file in a temporary
folder; the machine's ssh configuration is not touched.  Stopped on exit,
also when the body raises or the start fails half-way."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalSshd:
    """with LocalSshd() as d: d.login is a GNU parallel sshlogin for it."""

    def __init__(self, setenv: dict[str, str] | None = None):
        self.setenv = setenv or {}
        self.dir = Path(tempfile.mkdtemp(prefix="dmah-sshd-"))
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def __enter__(self) -> "LocalSshd":
        if os.geteuid() != 0:
            raise unittest.SkipTest("the sshd test logs in as the user running it and "
                                    "needs root to start sshd")
        for tool in (SSHD, "ssh", "ssh-keygen", "rsync"):
            if not shutil.which(tool):
                raise unittest.SkipTest(f"{tool} is not installed (make deps)")
        try:
            self._start()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self) -> None:
        d = self.dir
        for name in ("host", "client"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"dmah-{name}",
                            "-f", str(d / name)], check=True)
        (d / "authorized_keys").write_text((d / "client.pub").read_text())
        os.chmod(d / "authorized_keys", 0o600)
        # sshd checks its privilege separation folder (Debian's service makes it)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        self.port = free_port()
        env_lines = "".join(f"SetEnv {k}={v}\n" for k, v in self.setenv.items())
        (d / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1:{self.port}\n"
            f"HostKey {d / 'host'}\n"
            f"PidFile {d / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {d / 'authorized_keys'}\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "PermitRootLogin prohibit-password\nUsePAM no\nStrictModes no\n"
            "MaxStartups 100\nMaxSessions 100\nLogLevel ERROR\n" + env_lines)
        with open(d / "sshd.log", "w") as log:
            self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")],
                                         stdout=subprocess.DEVNULL, stderr=log,
                                         start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited {self.proc.returncode}: "
                                   f"{(d / 'sshd.log').read_text()[-2000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    break
            time.sleep(0.1)
        else:
            raise RuntimeError("sshd did not listen in 20 s")
        r = subprocess.run(self.ssh_argv() + ["true"], capture_output=True, text=True, timeout=30)
        if r.returncode:
            raise RuntimeError(f"ssh to the test sshd failed: {r.stderr.strip()}\n"
                               f"{(d / 'sshd.log').read_text()[-2000:]}")

    def ssh_cmd(self, key: str = "client") -> list[str]:
        return ["ssh", "-p", str(self.port), "-i", str(self.dir / key),
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-o", "LogLevel=ERROR", "-o", "IdentitiesOnly=yes"]

    def ssh_argv(self) -> list[str]:
        return self.ssh_cmd() + ["-o", "BatchMode=yes", "root@127.0.0.1"]

    def login(self, key: str = "client") -> str:
        """GNU parallel sshlogin: the ssh command with its options, then the host."""
        return " ".join(self.ssh_cmd(key) + ["root@127.0.0.1"])

    def sessions(self) -> list[int]:
        """Pids of sshd's session processes still alive (children of the listener)."""
        if not self.proc:
            return []
        r = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True)
        return [int(x) for x in r.stdout.split()]

    def __exit__(self, *exc) -> None:
        p = self.proc
        if p is not None and p.poll() is None:
            # the listener and every session it forked (all in its session)
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None
