"""A console log parsed on several cores, with the reports of one pass.

The engine reads a log line by line; one core parses about 14 MB of
reports a second.  A large log is cut into shares at newlines, one worker
process a share, each starting with nothing open.  A worker's first
reports may be wrong: it may start inside a report, and it cannot know
what was open before its first line.  So each worker (but the last) reads
on past its share by ``overlap`` lines, and each notes the lines before
which its parser was at rest (no report open, no banner waiting for its
header: from such a line on, the reports do not depend on anything
before it): the worker of share k in the overlap it read past its end,
the worker of share k+1 in the same lines at its start.  The first line
at rest for both is where one hands over to the other: share k's reports
that start before it, share k+1's from it on.  Both parsers are in the
same state there, so the reports are those of one pass over the whole
log, line numbers included.  When the two never rest on the same line
(a report open across the whole overlap, several CPUs' reports
interleaved without end) the log is parsed again in one pass.

Each worker writes its reports to two temporary files as it goes: a
record per report (its line, title, kind, what the summary needs) and
the report's JSON, so that memory stays bounded by the largest report.
The parent folds the records in range and copies the JSON bytes.

One pass (a single worker, in this process) when: one core, standard
input, a log smaller than two shares (``MIN_SHARE``), a line longer than
half a MiB (log_lines() would hand it over in pieces that depend on where
reading started), or a log whose head never settles whether a kernel had
printed before a "Booting the kernel" (engine's rebooted()).
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from typing import IO, Callable, Iterator, Optional

from .. import files
from ..errors import HarnessError, InputError
from . import engine, summary
from .frames import _JOURNAL_RE
from .model import Report

MIN_SHARE = 4 << 20        # bytes: a smaller share costs more to hand over than it saves
OVERLAP = 10000            # lines a worker reads past its share (5 of the longest reports)
_SCAN = 4 << 20            # bytes the planner reads at a time
_LONG = 1 << 19            # a stretch this long without a newline may be a line log_lines() cuts

_dumps = json.JSONEncoder(separators=(", ", ": ")).encode


@dataclass
class Share:
    """Bytes start..end of the log, lines first..first+lines-1 (lines -1:
    the last share, to the end of the log)."""
    start: int
    end: int
    first: int
    lines: int


def cpus() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def plan(path: str, jobs: int, overlap: int = OVERLAP, min_share: int = MIN_SHARE
         ) -> Optional[list[Share]]:
    """The log cut into up to ``jobs`` shares at newlines, each of at least
    min_share bytes and 2 * overlap lines; None when it must be read in one
    pass (see the module's text).  Reads the log up to its last cut (the
    lines before each cut are counted), and of the rest only what shows
    that no line is too long and that the last share is long enough."""
    size = os.path.getsize(path)
    jobs = min(jobs, size // min_share)
    if jobs < 2:
        return None
    targets = [size * k // jobs for k in range(1, jobs)]
    cuts: list[tuple[int, int]] = []          # (byte just after a newline, lines before it)
    lines = 0
    pos = 0
    cr_end = False                            # the previous block ended with a CR
    with open(path, "rb") as f:
        while targets:
            block = f.read(_SCAN)
            if not block:
                break
            if _long_line(block):
                return None
            while targets and targets[0] < pos + len(block):
                nl = block.find(b"\n", max(targets[0] - pos, 0))
                if nl < 0:
                    break                     # in a later block
                cuts.append((pos + nl + 1, lines + _newlines(block[:nl + 1], cr_end)))
                targets.pop(0)
            lines += _newlines(block, cr_end)
            cr_end = block.endswith(b"\r")
            pos += len(block)
        # keep the cuts that leave at least 2 * overlap lines before them
        kept = [(0, 0)]
        for off, before in cuts:
            if off < size and before - kept[-1][1] >= 2 * overlap:
                kept.append((off, before))
        # ... and after the last one
        while len(kept) > 1 and not _lines_at_least(f, kept[-1][0], 2 * overlap):
            kept.pop()
        if len(kept) < 2 or _long_line_after(f, pos):
            return None
    ends = kept[1:] + [(size, -1)]
    return [Share(off, end, before + 1, after - before if after >= 0 else -1)
            for (off, before), (end, after) in zip(kept, ends)]


def _long_line(block: bytes) -> bool:
    """Is there a stretch of _LONG bytes without a LF in this block (at a
    multiple of _LONG from its start; blocks start at multiples of it)?"""
    return any(block.find(b"\n", i, i + _LONG) < 0
               for i in range(0, len(block) - _LONG + 1, _LONG))


def _long_line_after(f: IO[bytes], pos: int) -> bool:
    """_long_line() for the log from byte pos on (a multiple of _LONG),
    reading of each stretch only up to its first LF."""
    while True:
        f.seek(pos)
        head = f.read(4096)
        if len(head) < 4096:
            return False
        if b"\n" not in head:
            rest = f.read(_LONG - 4096)
            if len(rest) == _LONG - 4096 and b"\n" not in rest:
                return True
        pos += _LONG


def _lines_at_least(f: IO[bytes], pos: int, n: int) -> bool:
    """Are there at least n line ends after byte pos?"""
    f.seek(pos)
    seen = 0
    while seen < n:
        block = f.read(1 << 16)
        if not block:
            return False
        seen += _newlines(block, False)      # a CRLF across two reads counts twice: enough here
    return True


def _newlines(data: bytes, cr_before: bool) -> int:
    """Line ends in data as universal newlines read them (CRLF, CR, LF);
    cr_before: the byte before data was a CR (a LF first is then its end)."""
    n = data.count(b"\n")
    if b"\r" in data:                        # most logs have none: one pass, not three
        n += data.count(b"\r") - data.count(b"\r\n")
    if cr_before and data[:1] == b"\n":
        n -= 1
    return n


def settled_boot(path: str, journal: bool, limit: int) -> Optional[bool]:
    """rebooted()'s answer once the log's head settles it (within `limit`
    lines), else None."""
    p = engine._Parser()
    for n, line in enumerate(files.log_lines(path), 1):
        if n > limit:
            return None
        p.observe(_JOURNAL_RE.sub("", line, 1) if journal else line)
        if p.boot_scan[1] is not None:
            return p.boot_scan[1]
    return None


@dataclass
class _Out:
    """One worker's output: its records, its reports' JSON, the lines it rested at."""
    records: IO[bytes]
    spool: IO[bytes]
    meta: IO[bytes]
    head: list[tuple] = field(default_factory=list)     # engine's rest keys
    tail: list[tuple] = field(default_factory=list)


def _work(path: str, share: Optional[Share], last: bool, journal: Optional[bool],
          booted: Optional[bool], overlap: int, want_json: bool, out: _Out) -> None:
    """Parse a share (None: the whole log in one pass) into out's files."""
    lines: Iterator[str] = files.log_lines(path, offset=share.start if share else 0)
    rest = None
    if share is not None:
        head_to = share.first + overlap if share.start else 0
        tail_from = share.first + share.lines if not last else 1 << 62
        rest = (head_to, tail_from, out.head)
        if not last:
            lines = itertools.islice(lines, share.lines + overlap)
    spool = out.spool
    rec = out.records
    for r in engine.iter_reports(lines, journal, first_line=share.first if share else 1,
                                 booted=booted, rest=rest):
        if want_json:
            offset = spool.tell()
            spool.write((",\n    " + _dumps(r.to_json())).encode())
        else:
            offset = 0
        rec.write(json.dumps([r.first_line, offset, r.title, r.kind, r.corrupted, r.guilty_frame,
                              r.timestamp, r.truncated, r.corrupted_reason]).encode() + b"\n")
    if rest is not None:
        out.tail = [k for k in out.head if k[0] >= rest[1]]
        out.head = [k for k in out.head if k[0] < rest[1]]


@dataclass
class Parsed:
    """The reports of a log: folded, and their JSON as byte ranges of the workers' spools."""
    folder: summary.Folder
    jobs: int
    segments: list[tuple[IO[bytes], int, int]] = field(default_factory=list)
    _files: list[IO[bytes]] = field(default_factory=list)

    def write_reports(self, write: Callable[[bytes], object], fd: Optional[int] = None) -> None:
        """The reports' JSON (ASCII), ",\\n"-separated, each after 4 spaces, to
        write(); or, given the descriptor write() writes to (flushed), by
        sendfile(2) from the spools, without passing through this process."""
        first = True
        for f, a, b in self.segments:
            if first and b > a:
                a += 1                        # the first report has no comma before it
                first = False
            f.flush()
            while fd is not None and a < b:
                try:
                    sent = os.sendfile(fd, f.fileno(), a, b - a)
                except OSError:
                    fd = None                 # not to this file: by hand
                    break
                if sent == 0:
                    break
                a += sent
            f.seek(a)
            while a < b:
                chunk = f.read(min(b - a, 1 << 20))
                if not chunk:
                    break
                write(chunk)
                a += len(chunk)

    def close(self) -> None:
        for f in self._files:
            f.close()


def parse_log(path: str, *, jobs: int = 0, want_json: bool = True, overlap: int = OVERLAP,
              min_share: int = MIN_SHARE) -> Parsed:
    """The reports of the log at path ('-': standard input) on up to `jobs`
    cores (0: every core this process may use)."""
    jobs = jobs or cpus()
    shares = None
    journal = booted = None
    if path != "-" and jobs > 1:
        files.check_file(path, "console log")
        shares = plan(path, jobs, overlap, min_share)
        if shares is not None:
            journal, _ = engine.journal_head(files.log_lines(path))
            booted = settled_boot(path, journal, shares[0].lines)
            if booted is None:
                shares = None
    if shares is not None:
        got = _parallel(path, shares, journal, booted, overlap, want_json)
        if got is not None:
            return got
    return _merge([_one(path, None, True, None, None, overlap, want_json)], None, 1)


def _new_out() -> _Out:
    return _Out(*(tempfile.TemporaryFile("w+b", prefix="dmaharness-reports-") for _ in range(3)))


def _one(path: str, share: Optional[Share], last: bool, journal: Optional[bool],
         booted: Optional[bool], overlap: int, want_json: bool) -> _Out:
    out = _new_out()
    try:
        _work(path, share, last, journal, booted, overlap, want_json, out)
    except BaseException:
        for f in (out.records, out.spool, out.meta):
            f.close()
        raise
    return out


def _parallel(path: str, shares: list[Share], journal: Optional[bool], booted: Optional[bool],
              overlap: int, want_json: bool) -> Optional[Parsed]:
    """The shares parsed by one forked worker each; None when two workers
    never rested on the same line (parse in one pass)."""
    outs = [_new_out() for _ in shares]
    pids: list[int] = []
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        for k, share in enumerate(shares):
            pid = os.fork()
            if pid == 0:                                          # the worker
                code = 0
                try:
                    signal.signal(signal.SIGINT, signal.SIG_DFL)
                    out = outs[k]
                    _work(path, share, k == len(shares) - 1, journal, booted, overlap,
                          want_json, out)
                    msg = {"head": out.head, "tail": out.tail}
                except HarnessError as e:
                    msg, code = {"error": e.message}, 3
                except BaseException as e:          # a bug of ours: the parent parses again
                    msg, code = {"bug": repr(e)}, 4
                try:
                    outs[k].meta.write(json.dumps(msg).encode())
                    for f in (outs[k].records, outs[k].spool, outs[k].meta):
                        f.flush()
                finally:
                    os._exit(code)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        pids = []
        for o in outs:          # a worker killed or failing wrote no rest keys
            o.meta.seek(0)
            try:
                msg = json.loads(o.meta.read() or b"{}")
            except ValueError:                  # cut short
                return None
            if "error" in msg:
                raise InputError(msg["error"], path=path)
            if "head" not in msg:
                return None
            o.head, o.tail = _keys(msg["head"]), _keys(msg["tail"])
        # where each worker hands over to the next
        cuts: list[int] = []
        for a, b in zip(outs, outs[1:]):
            both = sorted(set(a.tail) & set(b.head))
            later = [k[0] for k in both if not cuts or k[0] > cuts[-1]]
            if not later:
                return None
            cuts.append(later[0])
        merged = _merge(outs, cuts, len(shares))
        outs = []
        return merged
    finally:
        for pid in pids:                                        # interrupted: no worker left
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        for o in outs:
            for f in (o.records, o.spool, o.meta):
                f.close()


def _keys(got: list) -> list[tuple]:
    """Rest keys as JSON gave them back: (line, ((context, banner line), ...))."""
    return [(k[0], tuple((c, n) for c, n in k[1])) for k in got]


def _merge(outs: list[_Out], cuts: Optional[list[int]], jobs: int) -> Parsed:
    """Worker k's reports from line cuts[k-1] to before cuts[k], folded; their JSON's byte ranges."""
    bounds = [0] + (cuts or []) + [1 << 62]
    parsed = Parsed(folder=summary.Folder(), jobs=jobs)
    for k, o in enumerate(outs):
        parsed._files += [o.records, o.spool, o.meta]
        lo, hi = bounds[k], bounds[k + 1]
        o.spool.seek(0, os.SEEK_END)
        size = o.spool.tell()
        a = b = None
        o.records.seek(0)
        for raw in o.records:
            first, offset, title, kind, corrupted, guilty, ts, truncated, reason = json.loads(raw)
            if first < lo:
                continue
            if first >= hi:
                b = offset
                break
            if a is None:
                a = offset
            parsed.folder.add(Report(kind=kind, title=title, guilty_frame=guilty, stack=[],
                                     raw=[], first_line=first, timestamp=ts, truncated=truncated,
                                     corrupted=corrupted, corrupted_reason=reason))
        if a is not None:
            parsed.segments.append((o.spool, a, size if b is None else b))
    return parsed
