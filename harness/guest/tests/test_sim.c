// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs of one camera against the simulated uvcvideo (fake_v4l2.c): the
 * counts against the model's truth, --batch, close/open cycles, hotplug,
 * a corrupted phys string, a late or missing camera, SIGTERM.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "protocol.h"
#include "result.h"
#include "run.h"
#include "tests.h"
#include "timing.h"

static void test_sim_basic(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;
	struct jw w;
	char v[256];

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.0;
	a->opt.wait_s = 1.0;
	a->opt.phys_hz = 100.0;
	a->opt.series = true;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, a->ncam == 1 && cameras_found(a) == 1);
	CHECK_STR(t, c->video_path, "/dev/video0");
	CHECK_STR(t, c->bus_info, "usb-0000:00:04.0-1");
	CHECK_STR(t, c->card, "Fake UVC Camera");
	CHECK_STR(t, c->input_path, "/dev/input/event3");
	CHECK_STR(t, c->input_phys, "usb-0000:00:04.0-1/button");
	CHECK_STR(t, c->input_match, "phys");
	CHECK(t, c->present_at_end);
	CHECK(t, c->ctrls.n == SIM_NCTRL && c->class_controls == 1);
	CHECK(t, c->subscribed == SIM_NCTRL && c->subscribe_failed == 0);
	CHECK(t, c->opens == 1 && c->cycles == 0 && c->disconnects == 0);
	check_truth(t, c, sc);
	/* nothing was lost at close: every emitted event is accounted */
	CHECK(t, c->seq.dequeued >= 1900 && c->seq.dequeued <= 2001);
	CHECK(t, c->seq.dropped >= 380 && c->seq.dropped <= 401);
	CHECK(t, c->key_press >= 490 && c->key_press <= 501);
	/* one EVIOCGPHYS more: the settle step's look before the first open */
	CHECK(t, c->phys_reads == sc->phys_ioctls - c->input_found - 1);
	CHECK(t, c->phys_reads >= 195 && c->phys_reads <= 200);
	CHECK(t, c->phys_mismatches == 0);
	CHECK(t, a->errs.total == 0);
	CHECK_STR(t, a->stopped_by, "duration");
	CHECK(t, a->series.n == 2 || a->series.n == 3);
	CHECK(t, SERIES_SUM(&a->series, dequeued) == c->seq.dequeued);
	CHECK(t, SERIES_SUM(&a->series, emitted) == c->seq.emitted);
	CHECK(t, SERIES_SUM(&a->series, keys) ==
		 c->key_press + c->key_release);
	CHECK(t, a->series.b[0].dequeued > 900 && a->series.b[1].dequeued > 900);
	CHECK(t, sim_open_handles() == 0);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_OK);

	/* the --live record for the second 1 .. 2 */
	jw_init(&w);
	tick_json(&w, a, a->run_start_ns + 2 * NSEC_PER_SEC + 5);
	CHECK(t, jw_done(&w) && json_valid(w.buf));
	if (w.buf) {
		char want[96];

		CHECK(t, json_field(w.buf, "t", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		snprintf(want, sizeof(want), "%" PRIu64,
			 a->series.b[1].dequeued);
		CHECK(t, json_field(w.buf, "events_dequeued", v, sizeof(v)));
		CHECK_STR(t, v, want);
		snprintf(want, sizeof(want), "%" PRIu64, c->seq.emitted);
		CHECK(t, json_field(w.buf, "total_events_emitted", v,
				    sizeof(v)));
		CHECK_STR(t, v, want);
	}
	jw_free(&w);

	sim_json(t, a, 0, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "version", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		CHECK(t, json_field(w.buf, "error", v, sizeof(v)));
		CHECK_STR(t, v, "null");
		CHECK(t, json_field(w.buf, "video_device", v, sizeof(v)));
		CHECK_STR(t, v, "\"/dev/video0\"");
		CHECK(t, json_field(w.buf, "input_device", v, sizeof(v)));
		CHECK_STR(t, v, "\"/dev/input/event3\"");
		CHECK(t, strstr(w.buf, "\"name\":\"Brightness\"") != NULL);
		CHECK(t, strstr(w.buf, "\"series\":{\"interval_s\":1,") != NULL);
		check_documented_fields(t, w.buf);
		/* the model's clock starts at 1000 s; the camera and its input
		 * device are there at once: only the settle step's 50 ms */
		CHECK(t, json_field(w.buf, "run_start_s", v, sizeof(v)));
		CHECK_STR(t, v, "1000.050000");
	}
	jw_free(&w);
	sim_free(a);
}

/*
 * --batch: the same flood read in batches.  Every event is still counted
 * (the model's truth), with far fewer wake-ups than one per event.
 */
static uint64_t sim_batch_wakeups(struct tctx *t, double batch_s,
				  uint64_t *naps)
{
	struct agent *a;
	struct sim_cam *sc;
	uint64_t wakeups;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return 0;
	}
	a->opt.duration_s = 2.0;
	a->opt.wait_s = 1.0;
	a->opt.batch_s = batch_s;
	CHECK(t, sim_run(a));
	check_truth(t, &a->cam[0], sc);
	CHECK(t, a->cam[0].seq.emitted >= 1900);
	CHECK(t, a->cam[0].key_press >= 490);
	CHECK_STR(t, a->stopped_by, "duration");
	CHECK(t, sim_open_handles() == 0);
	wakeups = a->wakeups;
	*naps = a->naps;
	sim_free(a);
	return wakeups;
}

static void test_sim_batch(struct tctx *t)
{
	uint64_t naps0, naps;
	uint64_t every = sim_batch_wakeups(t, 0.0, &naps0);
	uint64_t batched = sim_batch_wakeups(t, 0.010, &naps);

	CHECK(t, naps0 == 0);
	CHECK(t, every >= 1000);		/* one per status interrupt */
	CHECK(t, batched >= 150 && batched <= 210);	/* one per 10 ms */
	CHECK(t, naps >= 150 && naps <= 210);
}

static void test_sim_cycles(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.0;
	a->opt.cycle_hz = 10.0;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, c->cycles == 19);		/* 0.1 s .. 1.9 s */
	CHECK(t, c->opens == c->cycles + 1);
	CHECK(t, sc->video_opens == c->opens + 1);	/* + wait-phase probe */
	CHECK(t, sc->subscribe_ok == SIM_NCTRL * c->opens);
	CHECK(t, c->subscribed == SIM_NCTRL * c->opens);
	CHECK(t, c->disconnects == 0 && c->open_failures == 0);
	check_truth(t, c, sc);
	CHECK(t, c->seq.dequeued > 1800);
	CHECK(t, SERIES_SUM(&a->series, cycles) == c->cycles);
	CHECK(t, a->cycle.fired == 19 && a->cycle.skipped == 0);
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

/* --set-async: one Focus (absolute) set per open, to the other end of the
 * range each time; without the option, none. */
static void test_sim_set_async(struct tctx *t)
{
	int pass;

	for (pass = 0; pass < 2; pass++) {
		struct agent *a;
		struct sim_cam *sc;
		struct camera *c;

		sim_reset();
		sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
		a = sim_agent();
		if (!a) {
			t->checks_failed++;
			return;
		}
		a->opt.duration_s = 1.0;
		a->opt.cycle_hz = 10.0;
		a->opt.set_async = pass == 1;
		CHECK(t, sim_run(a));
		c = &a->cam[0];
		CHECK(t, c->opens == 10);
		if (pass == 0) {
			CHECK(t, c->async_sets == 0 && sc->s_ctrl_ok == 0);
		} else {
			CHECK(t, c->async_sets == c->opens);
			CHECK(t, sc->s_ctrl_ok == c->opens);
			CHECK(t, c->async_set_failures == 0);
			/* 10 sets from 0: 255, 0, ..., 0 */
			CHECK(t, sc->value[SIM_NCTRL - 1] == 0);
		}
		CHECK(t, sim_open_handles() == 0);
		sim_free(a);
	}
}

static void test_sim_hotplug(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;
	struct jw w;
	size_t i;
	bool enodev = false;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->unplug_at = sim.now + 700 * 1000000ULL;
	sc->replug_at = sim.now + 1200 * 1000000ULL;
	sc->replug_video_num = 2;	/* comes back under other numbers */
	sc->replug_meta_num = 3;
	sc->replug_input_num = 5;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.0;
	a->opt.phys_hz = 50.0;
	a->opt.series = true;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, c->disconnects == 1 && c->reconnects == 1);
	CHECK(t, c->input_disconnects == 1 && c->input_found == 2);
	CHECK(t, c->absent_ns >= 500000000ULL && c->absent_ns <= 560000000ULL);
	CHECK(t, c->present_at_end);
	CHECK_STR(t, c->video_path, "/dev/video2");
	CHECK_STR(t, c->input_path, "/dev/input/event5");
	CHECK(t, c->opens == 2);
	check_truth(t, c, sc);
	CHECK(t, a->series.n >= 2);
	CHECK(t, SERIES_SUM(&a->series, disconnects) == 1);
	/* events flowed again after the reconnect (second 1 .. 2) */
	CHECK(t, a->series.n >= 2 && a->series.b[1].dequeued > 400);
	for (i = 0; i < a->errs.n; i++)
		if (a->errs.e[i].err == ENODEV)
			enodev = true;
	CHECK(t, enodev);
	CHECK(t, sim_open_handles() == 0);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_OK);
	sim_json(t, a, 0, &w);
	if (w.buf)
		CHECK(t, strstr(w.buf, "\"errno\":\"ENODEV\"") != NULL);
	jw_free(&w);
	sim_free(a);
}

static void test_sim_phys_mismatch(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct camera *c;
	struct jw w;
	char v[256];

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->corrupt_phys_on = 11;	/* the 1st read is input discovery */
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.5;
	a->opt.phys_hz = 100.0;
	CHECK(t, sim_run(a));
	c = &a->cam[0];
	CHECK(t, c->phys_reads >= 45);
	CHECK(t, c->phys_mismatches == 1);
	CHECK_STR(t, c->phys_bad, "usb-0000:00:04.0-1/bu\x7ftton");
	sim_json(t, a, 0, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "phys_last_mismatch", v, sizeof(v)));
		CHECK_STR(t, v, "\"usb-0000:00:04.0-1/bu\\u007ftton\"");
	}
	jw_free(&w);
	sim_free(a);
}

static void test_sim_late_camera(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	double waited;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->plugged = false;
	sc->plug_at = sim.now + 500 * 1000000ULL;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 1.0;
	a->opt.wait_s = 2.0;
	CHECK(t, sim_run(a));
	waited = secs_since(a->t0_ns, a->wait_done_ns);
	CHECK(t, waited >= 0.5 && waited <= 0.56);
	CHECK(t, a->cam[0].seq.dequeued > 900);
	CHECK(t, a->cam[0].reconnects == 0 && a->cam[0].disconnects == 0);
	check_truth(t, &a->cam[0], sc);
	sim_free(a);
}

static void test_sim_no_camera(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->plugged = false;		/* never appears */
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.wait_s = 1.0;
	CHECK(t, !sim_run(a));
	CHECK(t, secs_since(a->t0_ns, a->wait_done_ns) >= 1.0);
	CHECK(t, secs_since(a->t0_ns, a->wait_done_ns) < 1.06);
	CHECK_STR(t, a->stopped_by, "wait-timeout");
	CHECK(t, strstr(a->error, "no uvcvideo camera appeared within 1.0 s") &&
		 strstr(a->error, "no /dev/video* node"));
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

static void test_sim_sigterm(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	double ran;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sim.sigterm_at = sim.now + 1300 * 1000000ULL;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 10.0;
	CHECK(t, sim_run(a));
	clear_signal();
	CHECK_STR(t, a->stopped_by, "signal:SIGTERM");
	ran = secs_since(a->run_start_ns, sim.now);
	/* SIGTERM 1.3 s after the start; the run began after the 50 ms settle */
	CHECK(t, ran >= 1.25 && ran < 1.26);
	CHECK(t, a->cam[0].seq.dequeued > 1000);
	check_truth(t, &a->cam[0], sc);
	CHECK(t, sim_open_handles() == 0);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_OK);
	sim_free(a);
}

TEST_LIST(sim_tests,
	{ "sim_basic", test_sim_basic, false },
	{ "sim_batch", test_sim_batch, false },
	{ "sim_cycles", test_sim_cycles, false },
	{ "sim_set_async", test_sim_set_async, false },
	{ "sim_hotplug", test_sim_hotplug, false },
	{ "sim_phys_mismatch", test_sim_phys_mismatch, false },
	{ "sim_late_camera", test_sim_late_camera, false },
	{ "sim_no_camera", test_sim_no_camera, false },
	{ "sim_sigterm", test_sim_sigterm, false }
)
