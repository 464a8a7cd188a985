"""`python3 -m harness.cli.failnth LOG`: fail-nth's steps and kmemleak's leaks in a console.

The reader behind it is harness.reports.failnth; the command line is
harness.cli.logcli's, shared with `dmaharness reports`.
"""

import sys

from .logcli import failnth_main

if __name__ == "__main__":
    sys.exit(failnth_main(sys.argv[1:]))
