"""Kernel reports: a console in, reports titled as syzkaller titles them out.

Takes console text; gives ``engine.Report`` objects (kind, title,
guilty frame, stack, the raw lines) and their signatures, plus the
structure layout around a DMA buffer for the detector's reports.

Open first: ``engine`` (``parse()``: the line engine), which reads
lines through ``frames`` (prefixes, stack frames, skip lists),
``classify`` (which row of the table a header line is) and ``builder``
(a report under construction).  The behaviour is data in ``rules`` (one
row per report kind) read by ``titles`` (syzkaller's title rules);
``golden`` reads and writes the golden files' headers, ``summary``
folds a log's reports by title for `dmaharness reports`.  ``layout`` finds
the structure around a buffer, from ``structs`` (pahole or gdb output);
``failnth`` reads the guest's fail-nth steps and kmemleak's leaks,
``dmesg`` says whether a device's dmesg is clean.

Imports harness.kernel, harness.devices, harness.boot and the leaves.
"""
