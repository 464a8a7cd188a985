"""tests/integration/chance.py: which failed verdicts count as a chance miss."""

import unittest

from tests.integration.chance import chance_miss

MISS_NONE = "expected fixed /^KASAN: dma-owned (Read|Write) in /: no such report on either side"
MISS_SOME = ("expected fixed /^INFO: task hung in (a|b)$/: matching reports in 2/3 before runs "
             "and 0/3 after runs: INFO: task hung in a (flaky)")
STILL = ("expected fixed /^INFO: task hung in (a|b)$/: matching reports in 3/3 before runs "
         "and 1/3 after runs: INFO: task hung in a (flaky)")
NEW = "new (in 1/1 fix runs): WARNING in foo"


class ChanceMiss(unittest.TestCase):
    def test_before_side_misses_are_chance(self):
        self.assertTrue(chance_miss([{"matches": False, "reasons": [MISS_NONE]}]))
        self.assertTrue(chance_miss([{"matches": False, "reasons": [MISS_SOME]},
                                     {"matches": True, "reasons": []}]))

    def test_anything_else_is_not(self):
        self.assertFalse(chance_miss([{"matches": False, "reasons": [STILL]}]))
        self.assertFalse(chance_miss([{"matches": False, "reasons": [NEW]}]))
        self.assertFalse(chance_miss([{"matches": False, "reasons": [MISS_NONE, NEW]}]))
        self.assertFalse(chance_miss([{"matches": False, "reasons": [MISS_NONE]},
                                      {"matches": False, "reasons": [NEW]}]))

    def test_a_pass_is_not_a_miss(self):
        self.assertFalse(chance_miss([{"matches": True, "reasons": []}]))
        self.assertFalse(chance_miss([]))


if __name__ == "__main__":
    unittest.main()
