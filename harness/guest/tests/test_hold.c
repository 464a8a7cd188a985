// SPDX-License-Identifier: GPL-2.0-only
/*
 * The status hold (hold.c): --hold auto's decision on fake kallsyms files,
 * and runs against the simulated camera as 6.12 (the open node holds the
 * status URB) and 7.x model it (only a streaming handle does): the hold
 * streams once per camera, survives close/open cycles and a reconnect, and
 * does nothing where it is not needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "hold.h"
#include "protocol.h"
#include "result.h"
#include "run.h"
#include "tests.h"

/* As 7.3's /proc/kallsyms lists uvcvideo (abridged). */
static const char kallsyms_73[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81234560 t uvc_something_else_in_core\n"
	"ffffffffa0012340 t uvc_v4l2_open\t[uvcvideo]\n"
	"ffffffffa0012400 t uvc_status_get\t[uvcvideo]\n"
	"ffffffffa0012480 t uvc_pm_get\t[uvcvideo]\n"
	"ffffffffa0012500 t uvc_pm_put\t[uvcvideo]\n";

/* As 6.12's does (from a boot of the harness's 6.12), with near misses. */
static const char kallsyms_612[] =
	"ffffffff81000000 T _stext\n"
	"ffffffffa00adfc9 t uvc_v4l2_open\t[uvcvideo]\n"
	"ffffffffa00c6ae4 t uvc_status_start\t[uvcvideo]\n"
	"ffffffffa00c6b00 t uvc_pm_get_ready\t[uvcvideo]\n"
	"ffffffffa00c6b10 t xuvc_pm_get\t[other]\n"
	"ffffffffa00c6b20 t other_function\t[uvc_pm_get]\n"
	"ffffffffa00c6b30 t uvc_pm_ge\n";

/* kptr_restrict zeroes the addresses; a clang LTO build adds suffixes. */
static const char kallsyms_lto[] =
	"0000000000000000 T _stext\n"
	"0000000000000000 t uvc_v4l2_open.llvm.4242\t[uvcvideo]\n"
	"0000000000000000 t uvc_pm_get.llvm.1234\t[uvcvideo]\n";

static const char kallsyms_no_uvc[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T start_kernel\n";

/* Write text to a new temporary file; its path in path (free: unlink). */
static bool fixture(char *path, size_t len, const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, len, "/tmp/dmaharness-kallsyms-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return false;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return false;
	}
	fputs(text, f);
	return fclose(f) == 0;
}

static enum hold_mode decide(struct tctx *t, const char *text, char *why,
			     size_t len)
{
	char path[64];
	enum hold_mode m;

	if (!fixture(path, sizeof(path), text)) {
		t->checks_failed++;
		return HOLD_AUTO;
	}
	m = hold_auto(path, why, len);
	unlink(path);
	return m;
}

static void test_hold_auto(struct tctx *t)
{
	char why[320];

	CHECK(t, decide(t, kallsyms_73, why, sizeof(why)) == HOLD_STREAM);
	CHECK(t, strstr(why, "has uvc_pm_get") != NULL);
	CHECK(t, strncmp(why, "auto: ", 6) == 0);

	CHECK(t, decide(t, kallsyms_612, why, sizeof(why)) == HOLD_NONE);
	CHECK(t, strstr(why, "without uvc_pm_get") != NULL);

	CHECK(t, decide(t, kallsyms_lto, why, sizeof(why)) == HOLD_STREAM);

	CHECK(t, decide(t, kallsyms_no_uvc, why, sizeof(why)) == HOLD_NONE);
	CHECK(t, strstr(why, "no uvcvideo symbol") != NULL);

	CHECK(t, decide(t, "", why, sizeof(why)) == HOLD_NONE);
	CHECK(t, strstr(why, "no uvcvideo symbol") != NULL);

	/* a last line without its newline counts */
	CHECK(t, decide(t, "ffffffffa0012480 t uvc_pm_get", why,
			sizeof(why)) == HOLD_STREAM);

	CHECK(t, hold_auto(SIM_NO_KALLSYMS, why, sizeof(why)) == HOLD_NONE);
	CHECK(t, strstr(why, "cannot read " SIM_NO_KALLSYMS) != NULL);
	CHECK(t, strstr(why, strerror(ENOENT)) != NULL);

	/* a small buffer truncates, never overflows */
	CHECK(t, decide(t, kallsyms_73, why, 8) == HOLD_STREAM);
	CHECK(t, strlen(why) == 7);
}

static void test_hold_choose(struct tctx *t)
{
	struct agent *a = sim_agent();
	char path[64];

	if (!a || !fixture(path, sizeof(path), kallsyms_73)) {
		t->checks_failed++;
		free(a);
		return;
	}
	a->opt.kallsyms = path;
	hold_choose(a);
	CHECK(t, a->hold == HOLD_STREAM);
	CHECK(t, strstr(a->hold_reason, path) != NULL);
	a->opt.hold = HOLD_NONE;	/* the option beats the evidence */
	hold_choose(a);
	CHECK(t, a->hold == HOLD_NONE);
	CHECK_STR(t, a->hold_reason, "--hold none given");
	a->opt.hold = HOLD_STREAM;
	a->opt.kallsyms = SIM_NO_KALLSYMS;
	hold_choose(a);
	CHECK(t, a->hold == HOLD_STREAM);
	CHECK_STR(t, a->hold_reason, "--hold stream given");
	unlink(path);
	sim_free(a);
}

/*
 * One camera for 2 s with close/open cycles at 5 Hz; kernel: 6.12's model
 * (granular false) or 7.x's; kallsyms: the fixture auto reads (NULL: none).
 */
static struct agent *hold_run(struct tctx *t, bool granular,
			      const char *kallsyms, enum hold_mode opt)
{
	struct agent *a;
	struct sim_cam *sc;
	char path[64] = "";

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->pm_granular = granular;
	a = sim_agent();
	if (!a || (kallsyms && !fixture(path, sizeof(path), kallsyms))) {
		t->checks_failed++;
		free(a);
		return NULL;
	}
	if (kallsyms)
		a->opt.kallsyms = path;
	a->opt.hold = opt;
	a->opt.duration_s = 2.0;
	a->opt.cycle_hz = 5.0;
	CHECK(t, sim_run(a));
	if (path[0])
		unlink(path);
	check_truth(t, &a->cam[0], sc);
	CHECK(t, a->cam[0].cycles == 9);
	CHECK(t, a->cam[0].opens == 10);
	CHECK(t, sim_open_handles() == 0);
	CHECK(t, sc->streamers == 0 && !sc->queue_owned);
	CHECK_STR(t, a->stopped_by, "duration");
	return a;
}

static void test_hold_sim_7x(struct tctx *t)
{
	struct agent *a = hold_run(t, true, kallsyms_73, HOLD_AUTO);
	struct camera *c;
	struct jw w;
	char v[512];

	if (!a)
		return;
	c = &a->cam[0];
	CHECK(t, a->hold == HOLD_STREAM);
	CHECK(t, c->hold_starts == 1 && c->hold_failures == 0);
	CHECK(t, c->hold_at_end && !c->hold_streaming && c->hold_fd < 0);
	CHECK(t, c->hold_buffers == HOLD_BUFFERS);
	CHECK(t, sim.cam[0].streamons == 1);
	/* the hold's open beside the wait probe and the 10 session opens */
	CHECK(t, sim.cam[0].video_opens == c->opens + 2);
	/* as many events as 6.12's model delivers to an open node */
	CHECK(t, c->seq.emitted >= 1900 && c->seq.dequeued >= 1500);
	CHECK(t, c->key_press >= 490);
	CHECK(t, a->errs.total == 0);
	sim_json(t, a, 0, &w);
	if (w.buf) {
		CHECK(t, strstr(w.buf, "\"hold\":\"stream\",\"hold_reason\":\"auto: ") != NULL);
		CHECK(t, strstr(w.buf, "\"hold\":\"auto\"") != NULL);	/* options */
		CHECK(t, json_field(w.buf, "hold_streaming", v, sizeof(v)));
		CHECK_STR(t, v, "true");
		CHECK(t, json_field(w.buf, "hold_starts", v, sizeof(v)));
		CHECK_STR(t, v, "1");
	}
	jw_free(&w);
	sim_free(a);
}

/* What 7.x does to the agent without the hold: nothing arrives. */
static void test_hold_sim_7x_none(struct tctx *t)
{
	struct agent *a = hold_run(t, true, kallsyms_73, HOLD_NONE);

	if (!a)
		return;
	CHECK(t, a->hold == HOLD_NONE);
	CHECK_STR(t, a->hold_reason, "--hold none given");
	CHECK(t, a->cam[0].seq.emitted == 0 && a->cam[0].key_press == 0);
	CHECK(t, a->cam[0].hold_starts == 0 && !a->cam[0].hold_at_end);
	CHECK(t, sim.cam[0].streamons == 0);
	sim_free(a);
}

/* 6.12: auto chooses none, and the run is what it was before the hold. */
static void test_hold_sim_612(struct tctx *t)
{
	struct agent *a = hold_run(t, false, kallsyms_612, HOLD_AUTO);
	struct jw w;

	if (!a)
		return;
	CHECK(t, a->hold == HOLD_NONE);
	CHECK(t, strstr(a->hold_reason, "without uvc_pm_get") != NULL);
	CHECK(t, sim.cam[0].streamons == 0);
	CHECK(t, sim.cam[0].video_opens == a->cam[0].opens + 1);
	CHECK(t, a->cam[0].seq.emitted >= 1900);
	CHECK(t, a->cam[0].hold_starts == 0 && a->cam[0].hold_failures == 0);
	sim_json(t, a, 0, &w);
	if (w.buf)
		CHECK(t, strstr(w.buf, "\"hold\":\"none\",\"hold_reason\":\"auto: ") != NULL);
	jw_free(&w);
	sim_free(a);
}

/* --hold stream on 6.12's model: harmless, the same events. */
static void test_hold_sim_612_forced(struct tctx *t)
{
	struct agent *a = hold_run(t, false, NULL, HOLD_STREAM);

	if (!a)
		return;
	CHECK(t, a->hold == HOLD_STREAM);
	CHECK(t, a->cam[0].hold_starts == 1 && a->cam[0].hold_at_end);
	CHECK(t, a->cam[0].seq.emitted >= 1900);
	sim_free(a);
}

/* A hold that cannot start is an error of its own; the run goes on. */
static void test_hold_sim_refused(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	size_t i;
	bool reqbufs = false;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->pm_granular = true;
	sc->refuse_reqbufs = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.hold = HOLD_STREAM;
	a->opt.duration_s = 1.0;
	CHECK(t, sim_run(a));
	CHECK(t, a->cam[0].hold_failures == 1 && a->cam[0].hold_starts == 0);
	CHECK(t, !a->cam[0].hold_at_end);
	CHECK(t, a->cam[0].seq.emitted == 0);	/* 7.x without a hold */
	for (i = 0; i < a->errs.n; i++)
		if (strcmp(a->errs.e[i].op, "VIDIOC_REQBUFS") == 0 &&
		    a->errs.e[i].err == ENOMEM)
			reqbufs = true;
	CHECK(t, reqbufs);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_OK);
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

/* The camera goes and comes back: the hold follows it. */
static void test_hold_sim_hotplug(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->pm_granular = true;
	sc->unplug_at = sim.now + 700 * 1000000ULL;
	sc->replug_at = sim.now + 1200 * 1000000ULL;
	sc->replug_video_num = 2;
	sc->replug_meta_num = 3;
	sc->replug_input_num = 5;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.hold = HOLD_STREAM;
	a->opt.duration_s = 2.0;
	a->opt.series = true;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, c->disconnects == 1 && c->reconnects == 1);
	CHECK(t, c->hold_starts == 2 && c->hold_failures == 0);
	CHECK(t, c->hold_at_end);
	CHECK(t, sc->streamons == 2);
	check_truth(t, c, sc);
	CHECK(t, a->series.n >= 2 && a->series.b[1].dequeued > 400);
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

static void test_hold_sim_two_cameras(struct tctx *t)
{
	struct sim_cam *s0, *s1;
	struct agent *a;
	char path[64];

	sim_reset();
	s0 = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	s1 = sim_add_cam("usb-0000:00:04.0-2", 2, 3, 4);
	s0->pm_granular = s1->pm_granular = true;
	a = sim_agent();
	if (!a || !fixture(path, sizeof(path), kallsyms_73)) {
		t->checks_failed++;
		free(a);
		return;
	}
	a->opt.kallsyms = path;
	a->opt.duration_s = 1.0;
	a->opt.cameras = 2;
	a->opt.cycle_hz = 4.0;
	a->opt.initial = true;
	CHECK(t, sim_run(a));
	unlink(path);
	CHECK(t, a->hold == HOLD_STREAM);
	CHECK(t, a->cam[0].hold_starts == 1 && a->cam[1].hold_starts == 1);
	CHECK(t, s0->streamons == 1 && s1->streamons == 1);
	check_truth(t, &a->cam[0], s0);
	check_truth(t, &a->cam[1], s1);
	CHECK(t, a->cam[0].seq.dequeued > 900 && a->cam[1].seq.dequeued > 900);
	CHECK(t, a->cam[0].cycles == 3 && a->cam[1].cycles == 3);
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

TEST_LIST(hold_tests,
	{ "hold_auto", test_hold_auto, false },
	{ "hold_choose", test_hold_choose, false },
	{ "hold_sim_7x", test_hold_sim_7x, false },
	{ "hold_sim_7x_none", test_hold_sim_7x_none, false },
	{ "hold_sim_612", test_hold_sim_612, false },
	{ "hold_sim_612_forced", test_hold_sim_612_forced, false },
	{ "hold_sim_refused", test_hold_sim_refused, false },
	{ "hold_sim_hotplug", test_hold_sim_hotplug, false },
	{ "hold_sim_two_cameras", test_hold_sim_two_cameras, false }
)
