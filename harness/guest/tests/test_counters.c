// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pure logic: sequence-gap counting, guest CPU time, the ticker, the
 * per-second series, the error and control tables (counters.c, timing.c),
 * and the input device's expected phys (input.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "input.h"
#include "options.h"
#include "tests.h"
#include "timing.h"

/* ------------------------------------------------------------------------
 * Sequence tracking
 */

static void test_seq_contiguous(struct tctx *t)
{
	struct seqtrack s;
	struct seq_delta d;
	uint32_t i;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	for (i = 0; i < 3; i++) {
		d = seqtrack_feed(&s, i);
		CHECK(t, d.emitted == 1 && d.dropped == 0);
	}
	CHECK(t, s.dequeued == 3 && s.emitted == 3 && s.dropped == 0);
	CHECK(t, s.anomalies == 0);
}

static void test_seq_gaps(struct tctx *t)
{
	static const uint32_t seqs[] = { 5, 6, 9, 10, 20 };
	struct seqtrack s;
	struct seq_delta d;
	size_t i;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	d = seqtrack_feed(&s, seqs[0]);
	CHECK(t, d.emitted == 6 && d.dropped == 5);	/* 0..4 overwritten */
	for (i = 1; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		seqtrack_feed(&s, seqs[i]);
	CHECK(t, s.dequeued == 5);
	CHECK(t, s.emitted == 21);		/* 0..20 */
	CHECK(t, s.dropped == 16);
	CHECK(t, s.emitted == s.dequeued + s.dropped);
}

static void test_seq_anomalies(struct tctx *t)
{
	struct seqtrack s;
	struct seq_delta d;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	seqtrack_feed(&s, 0);
	seqtrack_feed(&s, 4);
	d = seqtrack_feed(&s, 4);		/* duplicate */
	CHECK(t, d.emitted == 0 && d.dropped == 0);
	d = seqtrack_feed(&s, 2);		/* backwards */
	CHECK(t, d.emitted == 0 && d.dropped == 0);
	CHECK(t, s.anomalies == 2);
	CHECK(t, s.emitted == 5 && s.dropped == 3 && s.dequeued == 4);
	d = seqtrack_feed(&s, 5);		/* continues from 4 */
	CHECK(t, d.emitted == 1 && d.dropped == 0);
}

static void test_seq_wrap_and_sessions(struct tctx *t)
{
	struct seqtrack s;
	struct seq_delta d;
	uint32_t i;

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	for (i = 0; i < 10; i++)
		seqtrack_feed(&s, i);
	seqtrack_new_session(&s);		/* reopen: numbering restarts */
	d = seqtrack_feed(&s, 0);
	CHECK(t, d.emitted == 1 && d.dropped == 0);
	CHECK(t, s.emitted == 11 && s.anomalies == 0);

	memset(&s, 0, sizeof(s));
	seqtrack_new_session(&s);
	s.have = true;
	s.last = 0xfffffffeu;
	d = seqtrack_feed(&s, 1);		/* ...fe, ff, 0, 1 */
	CHECK(t, d.emitted == 3 && d.dropped == 2);
	CHECK(t, s.anomalies == 0);
}

/* ------------------------------------------------------------------------
 * Guest CPU time, ticker
 */

static void test_cpu_busy(struct tctx *t)
{
	char path[] = "/tmp/agent-stat-XXXXXX";
	int fd = mkstemp(path);
	uint64_t ticks = 0;
	FILE *f;

	CHECK(t, fd >= 0);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	fputs("cpu  100 2 30 5000 7 4 5 1 0 0\ncpu0 100 2 30 5000 7 4 5 1 0 0\n", f);
	fclose(f);
	CHECK(t, cpu_busy_ticks(path, &ticks));
	CHECK(t, ticks == 100 + 2 + 30 + 4 + 5 + 1);	/* not idle, iowait */

	f = fopen(path, "w");
	fputs("intr 12 34\n", f);
	fclose(f);
	CHECK(t, !cpu_busy_ticks(path, &ticks));
	unlink(path);
	CHECK(t, !cpu_busy_ticks(path, &ticks));
}

static void test_ticker_off(struct tctx *t)
{
	struct ticker k;

	ticker_init(&k, 0.0, 1000);
	CHECK(t, !k.on);
	CHECK(t, ticker_due(&k, UINT64_MAX / 2, 10) == 0);
	CHECK(t, ticker_wait_ns(&k, 5) == UINT64_MAX);
	ticker_init(&k, -3.0, 1000);
	CHECK(t, !k.on);
}

static void test_ticker_grid(struct tctx *t)
{
	const uint64_t t0 = 5 * NSEC_PER_SEC, ms = 1000000;
	struct ticker k;

	ticker_init(&k, 10.0, t0);
	CHECK(t, k.period_ns == 100 * ms);
	CHECK(t, ticker_wait_ns(&k, t0) == 100 * ms);
	CHECK(t, ticker_due(&k, t0 + 99 * ms, 0) == 0);
	CHECK(t, ticker_wait_ns(&k, t0 + 99 * ms) == ms);
	CHECK(t, ticker_due(&k, t0 + 100 * ms, 0) == 1);
	CHECK(t, ticker_due(&k, t0 + 100 * ms, 0) == 0);	/* once */
	CHECK(t, ticker_due(&k, t0 + 250 * ms, 0) == 1);	/* 200 */
	/* late wake-up does not shift the grid: next is at 300 ms */
	CHECK(t, k.next_ns == t0 + 300 * ms);
	CHECK(t, ticker_wait_ns(&k, t0 + 250 * ms) == 50 * ms);
	CHECK(t, ticker_due(&k, t0 + 1000 * ms, 0) == 8);	/* 300..1000 */
	CHECK(t, k.fired == 10 && k.skipped == 0);
	CHECK(t, ticker_wait_ns(&k, t0 + 1500 * ms) == 0);
}

static void test_ticker_burst(struct tctx *t)
{
	const uint64_t t0 = 0, ms = 1000000;
	struct ticker k;

	ticker_init(&k, 1000.0, t0);
	CHECK(t, k.period_ns == ms);
	CHECK(t, ticker_due(&k, t0 + 50 * ms, 1) == 1);
	CHECK(t, k.skipped == 49);
	CHECK(t, k.next_ns == t0 + 51 * ms);
	CHECK(t, ticker_due(&k, t0 + 60 * ms, 4) == 4);
	CHECK(t, k.skipped == 55 && k.fired == 5);

	ticker_init(&k, MAX_HZ, t0);
	CHECK(t, k.period_ns == 1000);
	ticker_init(&k, 3.0, t0);			/* rounding */
	CHECK(t, k.period_ns == 333333333);
}

/* ------------------------------------------------------------------------
 * Series, error table, control table, input device phys
 */

static void test_series(struct tctx *t)
{
	const uint64_t t0 = 100 * NSEC_PER_SEC;
	struct series s;
	struct bucket *b;

	series_init(&s, t0);
	series_at(&s, t0 + NSEC_PER_SEC / 2)->dequeued += 3;
	series_at(&s, t0 + NSEC_PER_SEC)->dequeued += 5;
	series_at(&s, t0 + 3 * NSEC_PER_SEC - 1)->keys += 7;
	series_at(&s, t0 - 10)->dequeued += 1;	/* before start: bucket 0 */
	CHECK(t, s.n == 3);
	CHECK(t, s.b[0].dequeued == 4 && s.b[1].dequeued == 5);
	CHECK(t, s.b[2].keys == 7 && s.b[2].dequeued == 0);
	b = series_at(&s, t0 + 1000 * NSEC_PER_SEC);
	b->emitted = 9;
	CHECK(t, s.n == 1001 && s.cap >= 1001);
	CHECK(t, s.b[500].emitted == 0 && s.b[1000].emitted == 9);
	CHECK(t, s.b[0].dequeued == 4);		/* survived realloc */
	CHECK(t, !s.oom);
	series_free(&s);
}

static void test_errtab(struct tctx *t)
{
	struct errtab e;
	char nb[16];
	int i;

	memset(&e, 0, sizeof(e));
	CHECK(t, errtab_add(&e, "VIDIOC_DQEVENT", ENODEV, "cam 0", 1.0));
	CHECK(t, !errtab_add(&e, "VIDIOC_DQEVENT", ENODEV, "cam 1", 2.0));
	CHECK(t, errtab_add(&e, "VIDIOC_DQEVENT", EIO, "cam 0", 3.0));
	CHECK(t, errtab_add(&e, "open", ENODEV, NULL, 4.0));
	CHECK(t, e.n == 3 && e.total == 4);
	CHECK(t, e.e[0].count == 2);
	CHECK_STR(t, e.e[0].first_ctx, "cam 0");
	CHECK(t, e.e[0].first_t == 1.0);
	CHECK_STR(t, e.e[2].first_ctx, "");
	for (i = 0; i < MAX_ERRS + 5; i++)
		errtab_add(&e, "ioctl", 1000 + i, "x", 0.0);
	CHECK(t, e.n == MAX_ERRS);
	CHECK(t, e.unrecorded == 8);		/* 3 + 48 + 5 = 56 kinds */
	CHECK_STR(t, errno_name(ENODEV, nb, sizeof(nb)), "ENODEV");
	CHECK_STR(t, errno_name(EAGAIN, nb, sizeof(nb)), "EAGAIN");
	CHECK_STR(t, errno_name(9999, nb, sizeof(nb)), "E9999");
}

static void test_ctrltab(struct tctx *t)
{
	struct ctrltab *c = calloc(1, sizeof(*c));
	struct ctrlinfo *ci;
	uint32_t i;

	if (!c) {
		t->checks_failed++;
		return;
	}
	CHECK(t, ctrltab_add(c, 0x00980900, 1, 0, "Brightness") != NULL);
	CHECK(t, ctrltab_add(c, 0x00980901, 1, 0, "Contrast") != NULL);
	ci = ctrltab_add(c, 0x00980900, 1, 4, "Brightness 2");
	CHECK(t, c->n == 2);			/* re-add updates */
	CHECK_STR(t, ci->name, "Brightness 2");
	ctrltab_count(c, 0x00980901);
	ctrltab_count(c, 0x00980901);
	ctrltab_count(c, 0x12345678);
	CHECK(t, ctrltab_find(c, 0x00980901)->events == 2);
	CHECK(t, ctrltab_find(c, 0x00980900)->events == 0);
	CHECK(t, c->unknown_events == 1);
	ctrltab_add(c, 0x00980902, 1, 0,
		    "A name that is far longer than thirty-one bytes");
	CHECK(t, strlen(ctrltab_find(c, 0x00980902)->name) == 31);
	for (i = 0; i < MAX_CTRLS + 2; i++)
		ctrltab_add(c, 0x00990000 + i, 1, 0, "x");
	CHECK(t, c->n == MAX_CTRLS);
	CHECK(t, c->overflow == 5);
	free(c);
}

static void test_input_phys(struct tctx *t)
{
	char buf[80];

	expected_input_phys("usb-0000:00:04.0-1", buf, sizeof(buf));
	CHECK_STR(t, buf, "usb-0000:00:04.0-1/button");
	expected_input_phys("usb-dummy_hcd.0-1", buf, sizeof(buf));
	CHECK_STR(t, buf, "usb-dummy_hcd.0-1/button");
}

TEST_LIST(counters_tests,
	{ "seq_contiguous", test_seq_contiguous, false },
	{ "seq_gaps", test_seq_gaps, false },
	{ "seq_anomalies", test_seq_anomalies, false },
	{ "seq_wrap_and_sessions", test_seq_wrap_and_sessions, false },
	{ "cpu_busy", test_cpu_busy, false },
	{ "ticker_off", test_ticker_off, false },
	{ "ticker_grid", test_ticker_grid, false },
	{ "ticker_burst", test_ticker_burst, false },
	{ "series", test_series, false },
	{ "errtab", test_errtab, false },
	{ "ctrltab", test_ctrltab, false },
	{ "input_phys", test_input_phys, false }
)
