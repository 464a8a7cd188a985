"""Campaigns: a check's runs as a job list, run by an engine people already have.

Takes a case, a bisection or a sweep; gives a campaign folder (jobs.txt,
campaign.json) that GNU parallel runs here or over ssh, or Slurm runs as
one array job, and collects the results back into the same verdicts as
a local run, as JUnit or as a KCIDB document.

Open first: ``campaign`` (plan, run, collect).  Then ``remote`` (hosts
over ssh), ``slurm`` (sbatch arrays), ``junit`` (JUnit XML) and
``kcidb`` (the KCIDB I/O schema).

Imports harness.checks and everything below it.
"""
