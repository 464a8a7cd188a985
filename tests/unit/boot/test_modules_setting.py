"""The `modules` run setting (`run --modules`, a case's run.modules): the
drivers a device made from an ID table needs loaded, named as modules are,
never a path; only with device profiles."""

import unittest

from harness import errors, pipeline
from harness.boot import settings
from harness.boot.settings import FloodSettings


class Modules(unittest.TestCase):
    def test_a_flag_is_comma_separated_and_a_case_gives_a_list(self):
        parse = settings.SETTINGS["modules"].parse
        self.assertEqual(parse("usbtmc,cdc-acm,usbtmc"), ("usbtmc", "cdc-acm"))
        self.assertEqual(parse(["hid_cherry", "usbhid"]), ("hid_cherry", "usbhid"))

    def test_anything_but_a_module_name_is_refused(self):
        parse = settings.SETTINGS["modules"].parse
        for bad in ("../evil", "/lib/modules/x.ko", "a b", "", "x;reboot", "m" * 65,
                    ",".join(f"m{i}" for i in range(settings.MAX_MODULES + 1))):
            with self.assertRaises(errors.InputError, msg=bad):
                parse(bad)

    def test_only_with_device_profiles(self):
        with self.assertRaises(errors.InputError) as cm:
            pipeline.check_combinations(FloodSettings(modules=("usbtmc",)))
        self.assertIn("--usb-device", cm.exception.message)
        pipeline.check_combinations(FloodSettings(modules=("usbtmc",), devices=("x.profile",)))
        self.assertEqual(settings.flood_json(FloodSettings(modules=("a",)))["modules"], ["a"])


if __name__ == "__main__":
    unittest.main()
