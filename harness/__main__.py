"""python3 -m harness"""
import sys

from .cli import main

sys.exit(main())
