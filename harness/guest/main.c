// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmaharness-agent: guest-side load generator and counter for the fake UVC
 * camera.
 *
 * It runs inside the busybox initramfs as a child of PID 1.  It opens the
 * camera's /dev/videoN (up to 6.12 uvcvideo runs its status interrupt URB
 * while a file handle is open; since its power-management rework only while
 * something holds a reference, so --hold stream keeps a second handle
 * streaming, chosen by --hold auto from the kernel's symbols), subscribes
 * to V4L2 control events for every control,
 * counts them (using the events' sequence numbers to also count what the
 * driver emitted but the one-element per-control event queue dropped), reads
 * the camera's input device and counts key events, reads the input device's
 * phys string with EVIOCGPHYS at a configured rate, cycles close/open of the
 * video node at a configured rate, survives the camera disconnecting and
 * coming back, and prints one line `DMAHARNESS-AGENT {json}` at the end.
 *
 * Source layout, one concern a file (each with its header):
 *   main.c      this: the command line (--check: only that), the phases in
 *               order, the exit code
 *   options.c   options, --help text, argument parsing
 *   state.h     the state's types: struct agent, struct camera
 *   protocol.h  the name, output line prefixes, JSON version, exit codes
 *   agent.c     the state as a whole: fresh state, error recording, the
 *               exit code after a run, counts and sums over the cameras
 *   run.c       signals, the wait for the cameras, the main loop
 *   camera.c    a camera's life: scan, attach, close/open cycle, disconnect
 *   video.c     the V4L2 video node: probe, controls, subscribe, dequeue
 *   input.c     the evdev input device: find, key events, EVIOCGPHYS
 *   hold.c      the status hold (--hold): auto's decision, the streaming fd
 *   counters.c  sequence-gap counting, per-second series, error and
 *               control tables, guest CPU time
 *   timing.c    clock, ppoll with a timeout, rate scheduling (ticker)
 *   result.c    the result line and the --live records (fields: result.h)
 *   json.c      the JSON writer
 *   io.c        write_all, parse_uint (shared with dmaharness-failnth)
 * tests/ links all of them but main.c with a simulated uvcvideo camera.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "agent.h"
#include "options.h"
#include "protocol.h"
#include "result.h"
#include "run.h"

int main(int argc, char **argv)
{
	struct agent *a;
	sigset_t wait_mask;
	char err[256] = "";
	int code;

	a = calloc(1, sizeof(*a));
	if (!a) {
		fprintf(stderr, AGENT_NAME ": out of memory\n");
		printf(AGENT_LINE_PREFIX
		       "{\"version\":%d,\"error\":\"agent out of memory\",\"exit_code\":%d}\n",
		       AGENT_JSON_VERSION, EXIT_AGENT_RUNTIME);
		return EXIT_AGENT_RUNTIME;
	}
	agent_init(a);
	code = parse_args(argc, argv, &a->opt, err, sizeof(err));
	if (a->opt.check) {
		/* --check: nothing is run or written (not even --output) */
		if (code == 0 && a->opt.help) {
			snprintf(err, sizeof(err),
				 "--help ends the agent before its run");
			code = -1;
		}
		if (code < 0)
			fprintf(stderr, AGENT_NAME ": %s\n", err);
		free(a);
		return code < 0 ? EXIT_AGENT_USAGE : EXIT_AGENT_OK;
	}
	if (code < 0) {
		a->opt.ndevices = 0;	/* may be partly filled */
		fprintf(stderr, AGENT_NAME ": %s\n", err);
		snprintf(a->error, sizeof(a->error), "usage: %s", err);
		a->stopped_by = "usage";
		code = emit_result(a, EXIT_AGENT_USAGE);
		free(a);
		return code;
	}
	if (a->opt.help) {
		fputs(usage_text, stdout);
		free(a);
		return EXIT_AGENT_OK;
	}
	if (setup_signals(&wait_mask) < 0) {
		snprintf(a->error, sizeof(a->error),
			 "cannot install signal handlers: %s", strerror(errno));
		fprintf(stderr, AGENT_NAME ": %s\n", a->error);
		a->stopped_by = "error";
		code = emit_result(a, EXIT_AGENT_RUNTIME);
		free(a);
		return code;
	}
	agent_apply_options(a);
	/* Fine-grained ppoll() wake-ups for high --phys-hz rates. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	if (!wait_for_cameras(a, &wait_mask)) {
		agent_wait_failed(a);
		fprintf(stderr, AGENT_NAME ": %s\n", a->error);
		code = emit_result(a, EXIT_AGENT_NO_CAMERA);
		free(a);
		return code;
	}
	if (cameras_found(a) < a->opt.cameras)
		fprintf(stderr, AGENT_NAME
			": only %u of %u cameras appeared within %.1f s; running with those and still looking\n",
			cameras_found(a), a->opt.cameras, a->opt.wait_s);

	if (!a->stopped_by)
		run_loop(a, &wait_mask);

	code = agent_final_code(a);
	if (a->error[0])
		fprintf(stderr, AGENT_NAME ": %s\n", a->error);
	code = emit_result(a, code);
	series_free(&a->series);
	free(a);
	return code;
}
