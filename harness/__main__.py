"""python3 -m harness"""
import sys

if sys.argv[1:2] == ["reports"]:
    # the log parser alone (see ./dmaharness)
    from .cli.reportscli import reports_main
    sys.exit(reports_main(sys.argv[2:]))

from .cli.main import main

sys.exit(main())
