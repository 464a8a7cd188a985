import tempfile
import unittest
from pathlib import Path

from harness.kernel import series
from harness.errors import InputError

PATCH = """From: a <a@b>
Subject: [PATCH] x

---
diff --git a/drivers/x.c b/drivers/x.c
--- a/drivers/x.c
+++ b/drivers/x.c
@@ -1 +1 @@
-a
+b
diff --git a/new.h b/new.h
--- /dev/null
+++ b/new.h
@@ -0,0 +1 @@
+x
"""


class Series(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        (self.dir / "sub").mkdir()
        for n in ("0001-a.patch", "sub/0002-b.patch", "0003-c.patch"):
            (self.dir / n).write_text(PATCH)

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, text):
        p = self.dir / "series"
        p.write_text(text)
        return p

    def test_order_comments_strip_levels(self):
        s = self.write("# header\n\n0001-a.patch\nsub/0002-b.patch -p0  # trailing\n"
                       "   0003-c.patch\n#0004-not.patch\n")
        ps = series.parse_series(s)
        self.assertEqual([p.path.name for p in ps], ["0001-a.patch", "0002-b.patch", "0003-c.patch"])
        self.assertEqual([p.strip for p in ps], [1, 0, 1])
        self.assertTrue(ps[1].origin.endswith("series:4"))

    def test_missing_patch_names_series_line(self):
        s = self.write("0001-a.patch\n0009-missing.patch\n")
        with self.assertRaises(InputError) as cm:
            series.parse_series(s)
        self.assertIn("series:2", cm.exception.message)
        self.assertIn("0009-missing.patch", cm.exception.message)

    def test_unknown_option(self):
        with self.assertRaises(InputError):
            series.parse_series(self.write("0001-a.patch --reverse\n"))

    def test_missing_series(self):
        with self.assertRaises(InputError):
            series.parse_series(self.dir / "nope")

    def test_the_digest_is_what_patch_applies(self):
        """A changelog edit or a sender's sign-off rebuilds no kernel; a hunk does."""
        a, b = self.dir / "a.patch", self.dir / "b.patch"
        a.write_text(PATCH)
        b.write_text(PATCH.replace("Subject: [PATCH] x\n", "Subject: [PATCH v2] y\n\nWhy.\n"
                                   "Signed-off-by: S <s@t>\n"))
        self.assertEqual(series.Patch(a).digest(), series.Patch(b).digest())
        b.write_text(PATCH.replace("+b\n", "+c\n"))
        self.assertNotEqual(series.Patch(a).digest(), series.Patch(b).digest())
        plain = "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n"
        a.write_text("notes\n" + plain)
        b.write_text("other notes\n" + plain)
        self.assertEqual(series.Patch(a).digest(), series.Patch(b).digest())

    def test_touched_files(self):
        p = series.parse_series(self.write("0001-a.patch\n"))[0]
        self.assertEqual(p.touched_files(), ["drivers/x.c", "new.h"])

    def test_prefix_of_extra_series_after_base(self):
        s = self.write("0001-a.patch\nsub/0002-b.patch\n0003-c.patch\n")
        base = series.variant_patches("6.1")
        got = series.variant_patches("6.1", [s], prefix=2)
        self.assertEqual(len(got), len(base) + 2)
        self.assertEqual(got[-1].path.name, "0002-b.patch")
        with self.assertRaises(InputError):
            series.variant_patches("6.1", [s], prefix=4)
        self.assertEqual(series.variant_patches("6.1", [s], with_base=False)[0].path.name,
                         "0001-a.patch")

    def test_repository_series_parse(self):
        for v in ("6.1", "6.12"):
            series.parse_series(series.base_series(v))


if __name__ == "__main__":
    unittest.main()


class HunksTest(unittest.TestCase):
    FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/bisect/6.1/series"

    def write(self, d, text):
        p = Path(d) / "x.patch"
        p.write_text(text)
        return series.Patch(p)

    def test_function_from_heading_and_from_lines_inside_the_hunk(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.write(d, (
                "--- a/f.c\n+++ b/f.c\n"
                "@@ -10,9 +10,9 @@ static int before(void)\n"
                " \treturn 0;\n-\tbefore_line();\n+\tbefore_line2();\n }\n \n"
                " static int after(struct x *x)\n {\n-\tint a;\n+\tint b;\n"
                "@@ -40,2 +40,3 @@ struct thing {\n \tint a;\n+\tint b;\n \tint c;\n"
                "--- a/g.c\n+++ b/g.c\n@@ -1 +1 @@\n-int g(void);\n+int g(int);\n"))
            hs = series.hunks(p)
            self.assertEqual([h.file for h in hs], ["f.c", "f.c", "g.c"])
            self.assertEqual(hs[0].functions, ("before", "after"))
            self.assertEqual(hs[1].functions, ())
            self.assertEqual(hs[2].functions, ())        # a prototype is not a definition
            self.assertTrue(series.touches_function(p, "after"))
            self.assertFalse(series.touches_function(p, "g"))
            self.assertTrue(series.touches_struct(p, "thing"))
            self.assertFalse(series.touches_struct(p, "x"))

    def test_fixture_series(self):
        ps = series.parse_series(self.FIXTURE)
        self.assertEqual(len(ps), 16)
        self.assertIn("Embed the status URB buffer", series.subject(ps[10]))
        touching = lambda f: [i + 1 for i, p in enumerate(ps) if series.touches_function(p, f)]
        self.assertEqual(touching("uvc_v4l2_open"), [2])
        self.assertEqual(touching("uvc_status_init"), [11])
        self.assertEqual(touching("uvc_status_cleanup"), [11])
        self.assertEqual([i + 1 for i, p in enumerate(ps) if series.touches_struct(p, "uvc_device")],
                         [11])
        total = sum(len(series.hunks(p)) for p in ps)
        self.assertEqual(total, sum(p.path.read_text().count("\n@@ ") for p in ps))
