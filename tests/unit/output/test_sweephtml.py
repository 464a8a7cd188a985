"""harness.output.sweephtml: the sweep's triage page, self-contained, escaped, well-formed."""

import copy
import tempfile
import unittest
from html.parser import HTMLParser
from pathlib import Path

from harness.reports import exposure, layout
from harness.output import sweephtml
from tests.unit.output.test_htmlreport import check
from tests.unit.reports.test_layout import SHARING, pahole_structs

EVIL = "DMA-API: device driver maps a buffer <script>alert(1)</script> in e1000_xmit & co"


def uvc_layout() -> layout.Layout:
    f = layout.parse_facts(SHARING)
    cand, best = layout.choose(pahole_structs(), f)
    return layout.build_layout(f, cand, pahole_structs(), source="drivers/media/usb/uvc/uvc_v4l2.c",
                               tool="pahole", others=best)


def site(function: str, *, owned: bool, lay=None, **kw) -> dict:
    s = {"key": f"{function} sharing kmalloc-2k+977:16 DMA_FROM_DEVICE", "rule": "sharing",
         "function": function, "caller": "uvc_v4l2_open",
         "title": ("DMA-API: device driver maps a buffer that shares a cache line with other "
                   f"data of its object in {function}"),
         "location": "drivers/media/usb/uvc/uvc_status.c:312", "direction": "DMA_FROM_DEVICE",
         "cache": "kmalloc-2k", "object_size": 2048, "offset": 977, "length": 16,
         "struct": lay.struct if lay else None, "member": lay.buffer if lay else None,
         "neighbours": [r.name or r.decl for r in lay.sharing] if lay else [],
         "layout_summary": lay.summary() if lay else "no structure layout: plain kmalloc buffer",
         "layout": lay.to_json() if lay else None,
         "devices": ["usb-camera"], "boots": 2, "dma_owned": owned,
         "dma_owned_titles": ["KASAN: dma-owned Write in uvc_status_stop"] if owned else [],
         "dma_owned_boots": 1 if owned else 0,
         "evidence": {"console": "/runs/sweep-6.12/usb-camera/console.log", "first_line": 412,
                      "excerpt": ["[   30.100000] ------------[ cut here ]------------",
                                  f"[   30.100020] {SHARING}",
                                  "[   30.100220]  <TASK>"],
                      "stack": ["usb_submit_urb+0x72a/0x1150",
                                f"{function}+0x4f/0x70 [uvcvideo]",
                                "uvc_v4l2_open+0x1f7/0x2c0 [uvcvideo]"]}}
    s.update(kw)
    return s


def payload() -> dict:
    """Two sites (the second dma-owned, so it must move first), a baseline,
    a failed and a skipped device."""
    plain = site("e1000_xmit_frame", owned=False, title=EVIL, caller=None, struct=None,
                 offset=8, length=8, cache="kmalloc-64", direction="DMA_TO_DEVICE",
                 key="e1000_xmit_frame sharing kmalloc-64+8:8 DMA_TO_DEVICE",
                 devices=["e1000", "(boot)"])
    seed = layout.parse_facts(SHARING)
    owned = site("uvc_status_start", owned=True, lay=uvc_layout(),
                 exposure=[v.to_json() for v in exposure.assess(seed, "6.12")],
                 exposure_summary=exposure.summary(exposure.assess(seed, "6.12")))
    gone = site("virtblk_add_req", owned=False, key="virtblk_add_req sharing kmalloc-96+0:16 ?")
    return {
        "version": 1, "command": "sweep", "ok": False, "kernel": "6.12", "profile": "default",
        "build": {"key": "6.12-default-0123abcd", "cached": True},
        "run_dir": "/runs/sweep-6.12", "wall_seconds": 754.2,
        "devices": [
            {"device": "(boot)", "class": "boot", "state": "ran", "reason": None,
             "console": "/runs/sweep-6.12/boot/console.log", "outcome": "ok",
             "workload_status": None, "wall_seconds": 41.0, "reports": []},
            {"device": "usb-camera", "class": "usb", "state": "ran", "reason": None,
             "console": "/runs/sweep-6.12/usb-camera/console.log", "outcome": "ok",
             "workload_status": 0, "wall_seconds": 95.3,
             "reports": [owned["title"], owned["title"],
                         "KASAN: dma-owned Write in uvc_status_stop"]},
            {"device": "e1000", "class": "network", "state": "ran", "reason": None,
             "console": "/runs/sweep-6.12/e1000/console.log", "outcome": "ok",
             "workload_status": 0, "wall_seconds": 60.0, "reports": [EVIL]},
            {"device": "nvme", "class": "storage", "state": "failed",
             "reason": "workload exited 3 (console /runs/sweep-6.12/nvme/console.log)",
             "console": "/runs/sweep-6.12/nvme/console.log", "outcome": "ok",
             "workload_status": 3, "wall_seconds": 70.0, "reports": []},
            {"device": "es1370", "class": "sound", "state": "skipped",
             "reason": "this QEMU has no ES1370 (qemu-system-x86_64 -device help)",
             "console": None, "outcome": None, "workload_status": None, "wall_seconds": 0.0,
             "reports": []}],
        "sites": [plain, owned],
        "other_reports": [{"title": "WARNING in <do_one_initcall>", "devices": ["(boot)"]}],
        "baseline": {"file": "/runs/sweep-6.1/sweep.json", "new": [owned], "gone": [gone],
                     "unchanged": [plain]},
    }


class _Rows(HTMLParser):
    """Every table's rows (tr attributes, cell texts, hrefs); every id and href."""

    def __init__(self):
        super().__init__()
        self.tables: list[list[tuple[dict, list[str], list[str]]]] = []
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self._in = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append((a, [], []))
            self._in = True
        elif self._in and tag in ("td", "th"):
            self.tables[-1][-1][1].append("")
        elif self._in and tag == "a":
            self.tables[-1][-1][2].append(a.get("href", ""))

    def handle_endtag(self, tag):
        if tag == "tr":
            self._in = False

    def handle_data(self, data):
        if self._in and self.tables[-1][-1][1]:
            self.tables[-1][-1][1][-1] += data

    def table(self, first: str) -> list[tuple[dict, list[str], list[str]]]:
        """The rows under the header of the table whose header starts with `first`."""
        t = [t for t in self.tables if t and t[0][1][:1] == [first]]
        assert len(t) == 1, (first, len(t))
        return t[0][1:]


def rows_of(page: str) -> _Rows:
    r = _Rows()
    r.feed(page)
    r.close()
    return r


class SweepHtml(unittest.TestCase):
    def setUp(self):
        self.payload = payload()
        self.page = sweephtml.render(self.payload)
        self.c = check(self.page)
        self.text = "".join(self.c.text)
        self.r = rows_of(self.page)

    def triage(self):
        return [(a, " | ".join(cells)) for a, cells, _ in self.r.table("#")]

    def test_well_formed_and_self_contained(self):
        self.assertEqual(self.c.errors, [])
        self.assertEqual(self.c.stack, [])           # every element closed
        self.assertTrue(self.page.startswith("<!DOCTYPE html>"))
        for bad in ("<script", "src=", "http", "<link", "<img", "<iframe", "url("):
            self.assertNotIn(bad, self.page.lower())
        for tag, attrs in self.c.tags:
            if "href" in attrs:
                self.assertTrue(attrs["href"].startswith("#"), attrs)
            self.assertFalse([k for k in attrs if k.startswith("on")], (tag, attrs))

    def test_anchors_resolve(self):
        ids = self.r.ids
        self.assertEqual(len(ids), len(set(ids)), "duplicate ids")
        self.assertTrue(self.r.hrefs)
        for h in self.r.hrefs:
            self.assertIn(h[1:], ids, h)
        for want in ("#sites", "#baseline", "#devices", "#other", "#site-1", "#site-2"):
            self.assertIn(want, self.r.hrefs)

    def test_triage_rows(self):
        rows = self.triage()
        self.assertEqual(len(rows), 2)
        (a1, t1), (a2, t2) = rows
        # the dma-owned site comes first and is marked, though the payload lists it second
        self.assertEqual(a1.get("class"), "owned")
        self.assertIn("uvc_status_start", t1)
        self.assertIn("uvc_v4l2_open", t1)                    # its caller
        self.assertIn("uvc_device.status[16]", t1)            # struct.member
        self.assertIn("kmalloc-2k+977:16", t1)
        self.assertIn("int_urb, flush_status, input", t1)     # neighbours in the line
        self.assertIn("yes", t1)
        self.assertIn("KASAN: dma-owned Write in uvc_status_stop", t1)
        self.assertNotIn("class", a2)
        self.assertIn("e1000_xmit_frame", t2)
        self.assertIn("8 bytes", t2)                          # no struct: its length
        self.assertIn("kmalloc-64+8:8", t2)
        self.assertIn("DMA_TO_DEVICE", t2)
        self.assertIn("e1000, (boot)", t2)
        self.assertTrue(t2.endswith("| no | ?"), t2)          # a sweep without exposure rows
        self.assertTrue(t1.endswith("| arm, mips, powerpc32"), t1)   # arm64 bounces it on 6.12
        # row #1 links to the owned site's details
        h3 = self.page.index('id="site-1"')
        self.assertLess(h3, self.page.index('id="site-2"'))
        one = self.page[h3:self.page.index('id="site-2"')]
        self.assertIn("uvc_status_start", one)
        self.assertIn("exposure on real machines", one)
        self.assertRegex(one, r"<code>arm64</code></td><td>bounced</td>")
        self.assertNotIn("exposure on real machines", self.page[self.page.index('id="site-2"'):])
        for s in self.payload["sites"]:
            self.assertIn(s["function"], self.text)

    def test_ranking_real_then_writes_then_reads(self):
        # issue #41: a site real on some architecture first, then dma-owned
        # evidence (a write before a read), then the rest
        seed = layout.parse_facts(SHARING)
        real = [v.to_json() for v in exposure.assess(seed, "7.3")]
        safe = [dict(v, verdict="own-lines") if v["verdict"] == "corrupts" else v for v in real]
        rows = [site("plain_x86", owned=False, exposure=safe),
                site("owned_read", owned=True, exposure=safe, dma_owned_access="read"),
                site("owned_write", owned=True, exposure=safe, dma_owned_access="write"),
                site("real_one", owned=False, exposure=real, status="real on arm"),
                site("folded_ring", owned=False, exposure=safe,
                     folded={"rows": 104, "offsets": [0, 4, 8], "lengths": [1, 4]})]
        page = sweephtml.render({**self.payload, "sites": rows, "baseline": None})
        order = [page.index(f'<code>{f}</code></a>') for f in
                 ("real_one", "owned_write", "owned_read", "plain_x86", "folded_ring")]
        self.assertEqual(order, sorted(order))
        trs = [" | ".join(c) for _, c, _ in rows_of(page).table("#")]
        self.assertIn("write", trs[1])
        self.assertIn("read", trs[2])
        self.assertTrue(trs[3].endswith("| none: x86 layout only"), trs[3])
        self.assertIn("104 rows of one buffer, offsets 0, 4, 8", trs[4])
        self.assertIn("real on arm: ", page)          # the status before the summary

    def test_escaping(self):
        self.assertIn(EVIL, self.text)                        # shown as text ...
        self.assertNotIn("<script>", self.page)               # ... escaped in the page
        self.assertIn("&lt;script&gt;alert(1)&lt;/script&gt;", self.page)
        self.assertIn("WARNING in <do_one_initcall>", self.text)
        self.assertIn("<TASK>", self.text)                    # console excerpt lines
        self.assertNotIn("task", [t for t, _ in self.c.tags])

    def test_details(self):
        t = self.text
        self.assertIn("struct uvc_device: 1144 bytes in a kmalloc-2k object", t)
        self.assertIn("u8 status[16];  <== buffer (DMA_FROM_DEVICE)", t)
        self.assertIn("bool flush_status;  <-- shares the line", t)
        self.assertIn("no structure layout: plain kmalloc buffer", t)   # the plain site
        self.assertIn("uvc_status_start+0x4f/0x70 [uvcvideo]", t)       # the stack
        self.assertIn("/runs/sweep-6.12/usb-camera/console.log:412", t)
        self.assertIn("shares a cache line with other data of its object [object offset=977]", t)
        # a stack and an excerpt per site, and the exposure table of the one with rows
        self.assertEqual([x for x, _ in self.c.tags].count("details"), 5)
        self.assertIn("drivers/media/usb/uvc/uvc_status.c:312", t)

    def test_layout_round_trip(self):
        lay = uvc_layout()
        back = sweephtml.layout_from_json(lay.to_json())
        self.assertEqual(back.format_text(), lay.format_text())
        self.assertEqual(back.format_html(), lay.format_html())
        broken = copy.deepcopy(lay.to_json())
        broken["facts"]["from_the_future"] = 1
        self.assertIsNone(sweephtml.layout_from_json(broken))
        self.assertIsNone(sweephtml.layout_from_json(None))
        p = payload()
        p["sites"][1]["layout"] = broken                       # falls back to the summary
        self.assertIn(lay.summary(), "".join(check(sweephtml.render(p)).text))

    def test_header_and_devices(self):
        t = self.text
        for want in ("6.12", "default", "6.12-default-0123abcd", "12:34",
                     "3 ran, 1 failed, 1 device(s) skipped", "2, 1 with a CPU access", "Some boots failed"):
            self.assertIn(want, t)
        dev = {cells[0]: (a, " | ".join(cells)) for a, cells, _ in self.r.table("device")}
        self.assertEqual(list(dev), ["(boot)", "usb-camera", "e1000", "nvme", "es1370"])
        self.assertIn("skipped", dev["es1370"][1])
        self.assertIn("this QEMU has no ES1370 (qemu-system-x86_64 -device help)", dev["es1370"][1])
        self.assertIn("failed", dev["nvme"][1])
        self.assertIn("workload exited 3", dev["nvme"][1])
        self.assertIn("\u00d72", dev["usb-camera"][1])          # a title twice: once, x2
        self.assertIn("none", dev["(boot)"][1])

    def test_baseline(self):
        t = self.text
        self.assertIn("Against the baseline /runs/sweep-6.1/sweep.json", t)
        self.assertIn("1 new, 1 gone, 1 unchanged", t)
        rows = {cells[0]: h for a, cells, h in self.r.table("status")}
        self.assertEqual(rows["new"], ["#site-1"])           # links to the current site
        self.assertEqual(rows["unchanged"], ["#site-2"])
        self.assertEqual(rows["gone"], [])                   # not on this page
        self.assertIn("virtblk_add_req sharing kmalloc-96+0:16 ?", t)

    def test_without_baseline_and_empty(self):
        p = payload()
        del p["baseline"]
        page = sweephtml.render(p)
        self.assertNotIn("baseline", page)
        page = sweephtml.render({"command": "sweep"})
        c = check(page)
        self.assertEqual((c.errors, c.stack), ([], []))
        self.assertIn("no sharing sites", "".join(c.text))
        self.assertIn("no device", "".join(c.text))
        r = rows_of(page)
        self.assertTrue(all(h[1:] in r.ids for h in r.hrefs))

    def test_write(self):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "sweep.html"
            sweephtml.write(p, self.payload)
            self.assertEqual(p.read_text(encoding="utf-8"), self.page)
            self.assertEqual(sorted(x.name for x in Path(d).iterdir()), ["sweep.html"])


class Figures(unittest.TestCase):
    def test_a_usb_sweeps_figures_are_on_its_page(self):
        page = sweephtml.render({"kernel": "7.3", "sites": [], "devices": [], "figures": {
            "drivers": 582, "bound": 398, "bound_share_of_tried_without_firmware": 0.857,
            "workload_classes": {"tty": 40, "net": 31}, "sites_real": {"arm": 12},
            "sites_dma_owned": 11, "sites_dma_owned_write": 9}})
        for text in ("582", "86%", "tty 40, net 31", "arm 12", "sites with dma-owned evidence"):
            self.assertIn(text, page)
        self.assertNotIn('id="figures"', sweephtml.render({"sites": [], "devices": []}))


if __name__ == "__main__":
    unittest.main()
