// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs against the simulated uvcvideo (fake_v4l2.c) with several cameras
 * or unusual ones: two cameras, --device, fewer cameras than asked, an
 * input device found by name, no VIDIOC_QUERY_EXT_CTRL, no input device.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "protocol.h"
#include "result.h"
#include "run.h"
#include "tests.h"
#include "timing.h"

static void test_sim_two_cameras(struct tctx *t)
{
	struct sim_cam *s0, *s1;
	struct agent *a;

	sim_reset();
	s0 = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	s1 = sim_add_cam("usb-0000:00:04.0-2", 2, 3, 4);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 1.0;
	a->opt.cameras = 2;
	a->opt.cycle_hz = 4.0;
	CHECK(t, sim_run(a));
	CHECK(t, a->ncam == 2 && cameras_found(a) == 2);
	CHECK_STR(t, a->cam[0].bus_info, "usb-0000:00:04.0-1");
	CHECK_STR(t, a->cam[1].bus_info, "usb-0000:00:04.0-2");
	CHECK_STR(t, a->cam[1].input_path, "/dev/input/event4");
	check_truth(t, &a->cam[0], s0);
	check_truth(t, &a->cam[1], s1);
	CHECK(t, a->cam[0].cycles == 3 && a->cam[1].cycles == 3);
	CHECK(t, SUM(a, seq.dequeued) ==
		 a->cam[0].seq.dequeued + a->cam[1].seq.dequeued);
	CHECK(t, a->cam[1].seq.dequeued > 900);
	CHECK(t, sim_open_handles() == 0);
	sim_free(a);
}

static void test_sim_device_option(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *s1;

	sim_reset();
	sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	s1 = sim_add_cam("usb-0000:00:04.0-2", 2, 3, 4);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.5;
	a->opt.devices[0] = "/dev/video2";
	a->opt.ndevices = 1;
	CHECK(t, sim_run(a));
	CHECK(t, a->ncam == 1);
	CHECK_STR(t, a->cam[0].bus_info, "usb-0000:00:04.0-2");
	CHECK_STR(t, a->cam[0].input_path, "/dev/input/event4");
	check_truth(t, &a->cam[0], s1);
	CHECK(t, sim.cam[0].video_opens == 0);	/* the other was not touched */
	sim_free(a);
}

static void test_sim_fewer_cameras(struct tctx *t)
{
	struct agent *a;
	struct jw w;
	char v[64];

	sim_reset();
	sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.3;
	a->opt.wait_s = 0.2;
	a->opt.cameras = 2;
	CHECK(t, sim_run(a));
	CHECK(t, cameras_found(a) == 1);
	CHECK(t, a->cam[0].seq.dequeued > 200);
	CHECK(t, agent_final_code(a) == EXIT_AGENT_FEWER);
	CHECK(t, strstr(a->error, "only 1 of 2 cameras") != NULL);
	sim_json(t, a, EXIT_AGENT_FEWER, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "cameras_found", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		CHECK(t, json_field(w.buf, "exit_code", v, sizeof(v)));
		CHECK_STR(t, v, "3");
	}
	jw_free(&w);
	sim_free(a);
}

static void test_sim_input_by_name(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *s0, *s1;

	sim_reset();
	s0 = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	s1 = sim_add_cam("usb-0000:00:04.0-2", 2, 3, 4);
	s0->phys_suffix = "/input0";	/* not what uvcvideo writes */
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.3;
	a->opt.cameras = 2;
	CHECK(t, sim_run(a));
	/* same card name on both: camera 0 must not take camera 1's device */
	CHECK_STR(t, a->cam[0].input_path, "/dev/input/event3");
	CHECK_STR(t, a->cam[0].input_match, "name");
	CHECK_STR(t, a->cam[0].input_phys, "usb-0000:00:04.0-1/input0");
	CHECK_STR(t, a->cam[1].input_path, "/dev/input/event4");
	CHECK_STR(t, a->cam[1].input_match, "phys");
	check_truth(t, &a->cam[0], s0);
	check_truth(t, &a->cam[1], s1);
	sim_free(a);
}

static void test_sim_queryctrl_fallback(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_ext_ctrl = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.3;
	CHECK(t, sim_run(a));
	CHECK(t, a->cam[0].used_queryctrl);
	CHECK(t, a->cam[0].ctrls.n == SIM_NCTRL);
	CHECK(t, a->cam[0].class_controls == 1);
	CHECK(t, a->cam[0].subscribed == SIM_NCTRL);
	CHECK_STR(t, a->cam[0].ctrls.c[3].name, "Hue");
	CHECK(t, a->cam[0].seq.dequeued > 200);
	CHECK(t, a->errs.total == 0);
	check_truth(t, &a->cam[0], sc);
	sim_free(a);
}

static void test_sim_no_input_device(struct tctx *t)
{
	struct agent *a;
	struct sim_cam *sc;
	struct jw w;
	char v[320];

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_input = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 1.2;	/* shorter than the grace: noted at end */
	a->opt.phys_hz = 100.0;
	CHECK(t, sim_run(a));
	CHECK(t, a->cam[0].input_fd < 0 && a->cam[0].input_found == 0);
	CHECK(t, strstr(a->cam[0].input_error,
			"phys usb-0000:00:04.0-1/button") != NULL);
	CHECK(t, a->cam[0].phys_reads == 0 && a->cam[0].key_press == 0);
	CHECK(t, a->cam[0].seq.dequeued > 1000);	/* events still counted */
	/* before the first open the settle step waited for the input device
	 * (uvcvideo makes it right before the status URB) and gave up */
	CHECK(t, secs_since(a->t0_ns, a->run_start_ns) >= SETTLE_MAX_S);
	CHECK(t, secs_since(a->t0_ns, a->run_start_ns) < SETTLE_MAX_S + 0.1);
	CHECK(t, sim_open_handles() == 0);
	sim_json(t, a, 0, &w);
	if (w.buf) {
		CHECK(t, json_field(w.buf, "input_device", v, sizeof(v)));
		CHECK_STR(t, v, "null");
		CHECK(t, json_field(w.buf, "input_error", v, sizeof(v)));
		CHECK(t, strncmp(v, "\"no /dev/input/event* with phys", 31) == 0);
	}
	jw_free(&w);
	sim_free(a);

	/* noted during the run once the grace time has passed */
	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_input = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.6;
	sim.active = true;
	agent_apply_options(a);
	CHECK(t, wait_for_cameras(a, &(sigset_t){ 0 }));
	sim.sigterm_at = sim.now + 1900 * 1000000ULL;
	run_loop(a, &(sigset_t){ 0 });
	sim.active = false;
	clear_signal();
	/* not during the run (grace), only at its end */
	CHECK(t, a->cam[0].input_error[0] != '\0');
	CHECK(t, a->cam[0].input_error_ns - a->run_start_ns ==
		 1900 * 1000000ULL);
	sim_free(a);

	sim_reset();
	sc = sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	sc->no_input = true;
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 2.6;
	sim.active = true;
	agent_apply_options(a);
	CHECK(t, wait_for_cameras(a, &(sigset_t){ 0 }));
	sim.sigterm_at = sim.now + 2600 * 1000000ULL - 1;
	run_loop(a, &(sigset_t){ 0 });
	sim.active = false;
	clear_signal();
	/* the input rescan at 2.0 s, once the grace has passed */
	CHECK(t, a->cam[0].input_error[0] != '\0');
	CHECK(t, a->cam[0].input_error_ns - a->run_start_ns ==
		 2000 * 1000000ULL);
	sim_free(a);

	/* with an input device the field is null */
	sim_reset();
	sim_add_cam("usb-0000:00:04.0-1", 0, 1, 3);
	a = sim_agent();
	if (!a) {
		t->checks_failed++;
		return;
	}
	a->opt.duration_s = 0.2;
	CHECK(t, sim_run(a));
	CHECK(t, a->cam[0].input_error[0] == '\0');
	sim_free(a);
}

TEST_LIST(sim_cameras_tests,
	{ "sim_two_cameras", test_sim_two_cameras, false },
	{ "sim_device_option", test_sim_device_option, false },
	{ "sim_fewer_cameras", test_sim_fewer_cameras, false },
	{ "sim_input_by_name", test_sim_input_by_name, false },
	{ "sim_queryctrl_fallback", test_sim_queryctrl_fallback, false },
	{ "sim_no_input_device", test_sim_no_input_device, false }
)
