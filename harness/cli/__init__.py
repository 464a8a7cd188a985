"""The command line: arguments into requests, results into text or --json.

Takes argv; gives an exit code (documented in EPILOG and the README) and
prints what the core modules return.  Nothing else imports it.

Open first: ``main`` (the parser of every subcommand and the dispatch).
Each command family has its module with its parser and its text:
``build`` (build, boot, kunit, run), ``case`` (run --case, bisect,
bisect-run), ``sweep``, ``campaign`` (plan, campaign, collect),
``capture``, ``cache`` (cache, profiles) and ``logcli`` (reports, diff,
and the fail-nth reader); ``common`` holds the option groups they share.
"""
