"""Checks: runs turned into verdicts.

Takes cases (case.toml), series, signatures and sweep catalogues; gives
outcomes with a verdict: a case's diff of reports between variants
(new, fixed, unchanged, flaky), a bisection's culprit, a sweep's table of
sharing sites.  Built on harness.pipeline (build, boot, flood once).

Open first: ``diff`` (statuses, expectations, the diff table) and
``caserun`` (`run --case`).  Then ``case`` (reading case.toml),
``casedevices`` (a case's catalogue devices), ``sitekeys`` (what names a
site, for sweeps and a case's expect.sites),
``bisect`` (the search and its verdicts) with ``bisectjob`` (`bisect`,
`bisect-run`, runs as bisection evidence) and ``pointing`` (the code a
culprit touches), ``sweep`` with ``sweeptable`` (sites), ``usbsweep``
(every USB driver bound by a device made from its table), and ``enrich``
(file:line and layouts on an outcome's reports).

Imports everything below it: the pipeline, reports, boot, devices,
kernel and the leaves.
"""
