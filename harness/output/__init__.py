"""Pages: a check's result as one self-contained HTML file.

Takes a case run's result (harness.checks.caserun.CaseResult) or a
sweep's table; gives HTML with no external assets, every piece of text
from a log or a case escaped.

Open first: ``htmlreport`` (a case's page: verdicts, timeline, stacks),
then ``sweephtml`` (a sweep's sites and their layouts).

Imports harness.checks and everything below it.  JSON files and progress
lines are shared leaves (harness.jsonout, harness.progress), not here.
"""
