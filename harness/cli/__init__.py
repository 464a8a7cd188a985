"""The command line: arguments into requests, results into text or --json.

Takes argv; gives an exit code (documented in each command's --help and
docs/cli.md: 70 is a bug of ours, never an answer to an input) and prints what the core
modules return, as text or as one JSON object (--json, errors included).
Nothing else imports it.

Open first: ``main`` (the parser of every subcommand, the dispatch and
the mapping of errors to exit codes).  Each command family has its module
with its parser and its text: ``build`` (build, boot, kunit, run),
``case`` (case and run --case, bisect), ``bisectrun`` (git bisect run's test of a
commit), ``sweep``, ``campaign`` (plan, campaign, collect, and `job`, a
line of a campaign's jobs.txt), ``capture``, ``cache`` (cache, profiles)
and ``logcli`` (reports, diff and the fail-nth reader, ``failnth`` its
``python3 -m`` entry); ``common`` holds the option groups they share,
``helptext`` what every --help is made of (paragraphs, examples, the exit
codes a command can return, the commands by area), ``manpage`` dmaharness.1 written from the
parsers (`make install`).
"""
