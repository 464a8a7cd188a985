// SPDX-License-Identifier: GPL-2.0-only
/* Command-line options of the agent (see options.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io.h"
#include "options.h"
#include "protocol.h"

const char usage_text[] =
"Usage: " AGENT_NAME " [OPTIONS]\n"
"\n"
"Drive uvcvideo cameras the way applications do and count what happens:\n"
"open /dev/videoN (before Linux's uvcvideo power-management rework the\n"
"status URB runs while it is open; after it, see --hold), subscribe to\n"
"V4L2_EVENT_CTRL for every control and count events (dequeued, and emitted\n"
"according to the events' sequence numbers), count key events on the\n"
"camera's input device, read its phys string with EVIOCGPHYS, and cycle\n"
"close/open.  A camera that disconnects is reopened when it comes back.\n"
"At the end one line `" AGENT_LINE_PREFIX "{json}` goes to stdout.\n"
"\n"
"Options (VALUE may also be given as --option=VALUE):\n"
"  --duration SECONDS  run time after the cameras appeared (default 10;\n"
"                      suffixes s, ms, m accepted: 20s, 500ms, 2m)\n"
"  --wait SECONDS      how long to wait for the cameras to appear (default 30)\n"
"  --cycle-hz HZ       close and reopen each video node HZ times per second,\n"
"                      re-subscribing after each open (default 0: never)\n"
"  --phys-hz HZ        EVIOCGPHYS reads of each input device per second\n"
"                      (default 0: never)\n"
"  --batch SECONDS     after a wake-up that found events, wait this long before\n"
"                      polling again, then read everything queued (default 0:\n"
"                      wake for every event).  Fewer wake-ups leave the guest's\n"
"                      CPU to the driver; V4L2 events are still all counted\n"
"                      (sequence numbers), key events as long as the input\n"
"                      device's buffer (64 events) does not overflow\n"
"                      (syn_dropped counts that); at most 1 s, e.g. 2ms\n"
"  --cameras N         wait for and drive N uvcvideo cameras (1..8, default 1)\n"
"  --device PATH       use this video node instead of scanning /dev/video*;\n"
"                      repeat for several cameras (sets --cameras)\n"
"  --initial           subscribe with V4L2_EVENT_SUB_FL_SEND_INITIAL (the\n"
"                      driver reads every control on each subscription)\n"
"  --set-async         after each open's subscriptions, set the camera's Focus\n"
"                      (absolute) control to the other end of its range.\n"
"                      A camera that declares it asynchronous (GET_INFO bit\n"
"                      4; the fake camera does) leaves it pending until it\n"
"                      reports the change on the status endpoint: uvcvideo\n"
"                      holds a power and status reference for it meanwhile\n"
"                      (7.x), and a close with the set still pending drops\n"
"                      that reference in uvc_ctrl_cleanup_fh()\n"
"  --hold MODE         what keeps each camera's status interrupt URB running\n"
"                      for the whole run (default auto):\n"
"                      stream  one more file descriptor per camera streams\n"
"                              (REQBUFS with MMAP buffers, QBUF, STREAMON)\n"
"                              from before the first subscription to the end;\n"
"                              no frame is read.  Since uvcvideo's power-\n"
"                              management rework (uvc_pm_get, after 6.12)\n"
"                              open() starts no status URB: only power-\n"
"                              managed ioctls, SEND_INITIAL subscriptions,\n"
"                              streaming and a pending asynchronous control\n"
"                              set hold it, and the open/close cycles alone\n"
"                              would see no event\n"
"                      none    nothing more: the open video node holds it\n"
"                              (what kernels up to 6.12 need)\n"
"                      auto    stream when --kallsyms lists uvc_pm_get (the\n"
"                              rework is in this kernel), none otherwise\n"
"                              (uvcvideo listed without it, as in 6.1 and\n"
"                              6.12; no uvcvideo symbol; no table)\n"
"                      The result says which hold ran and why (hold,\n"
"                      hold_reason)\n"
"  --kallsyms PATH     the symbol table --hold auto reads (default\n"
"                      " DEFAULT_KALLSYMS "; for tests)\n"
"  --series            include per-second series in the JSON\n"
"  --live              print `" AGENT_TICK_PREFIX "{json}` to stderr every second\n"
"  --output PATH       also write the result line to PATH (e.g. a virtio\n"
"                      console, away from kernel messages on the serial console)\n"
"  --check             check the command line and exit: 0 when it is good,\n"
"                      64 with the reason on stderr otherwise; nothing runs\n"
"                      and nothing is written (the host checks a run's\n"
"                      arguments so before it builds a kernel)\n"
"  -h, --help          show this help and exit\n"
"\n"
"Cameras are found by VIDIOC_QUERYCAP: driver \"uvcvideo\" with the\n"
"video-capture capability (the metadata node is skipped).  A camera that\n"
"comes back is recognised by its bus_info (USB port path).  The input device\n"
"is the /dev/input/eventN whose phys is \"<bus_info>/button\".\n"
"\n"
"Exit status: 0 success; 1 a camera was found but could not be driven;\n"
"2 no camera appeared within --wait; 3 fewer cameras than --cameras appeared\n"
"(the run still happens with those found); 64 bad command line.\n"
"The JSON line is printed in every case except --help; on failure it has an\n"
"\"error\" string, otherwise \"error\" is null.  Its fields (JSON version\n"
"1) are described in harness/guest/result.h.\n";

void options_default(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->duration_s = 10.0;
	o->wait_s = 30.0;
	o->cameras = 1;
	o->hold = HOLD_AUTO;
	o->kallsyms = DEFAULT_KALLSYMS;
}

const char *hold_mode_name(enum hold_mode m)
{
	switch (m) {
	case HOLD_STREAM:
		return "stream";
	case HOLD_NONE:
		return "none";
	case HOLD_AUTO:
		break;
	}
	return "auto";
}

/* Seconds with an optional suffix s, ms or m; finite, >= 0, <= max. */
static int parse_seconds(const char *s, double max, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	if (strcmp(end, "") == 0 || strcmp(end, "s") == 0)
		;
	else if (strcmp(end, "ms") == 0)
		v /= 1000.0;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		v *= 60.0;
	else
		return -1;
	if (!(v >= 0.0) || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A rate in Hz, optionally suffixed "hz" or "/s"; 0 disables. */
static int parse_hz(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	if (*end && strcasecmp(end, "hz") != 0 && strcmp(end, "/s") != 0)
		return -1;
	if (!(v >= 0.0) || v > MAX_HZ)
		return -1;
	*out = v;
	return 0;
}

/*
 * Parse argv into o (which the caller filled with defaults).  Returns 0 on
 * success (o->help set for --help) or -1 with a message in err.
 */
int parse_args(int argc, char **argv, struct options *o,
	       char *err, size_t errlen)
{
	bool cameras_given = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const char *val = NULL;
		char name[32];
		bool flag;

		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			o->help = true;
			return 0;
		}
		if (strncmp(arg, "--", 2) != 0) {
			snprintf(err, errlen, "unexpected argument '%s'", arg);
			return -1;
		}
		if (split_option(arg, name, sizeof(name), &val) < 0) {
			snprintf(err, errlen, "unknown option '%s'", arg);
			return -1;
		}

		flag = strcmp(name, "--series") == 0 ||
		       strcmp(name, "--live") == 0 ||
		       strcmp(name, "--initial") == 0 ||
		       strcmp(name, "--set-async") == 0 ||
		       strcmp(name, "--check") == 0;
		if (flag) {
			if (val) {
				snprintf(err, errlen, "%s takes no value", name);
				return -1;
			}
			if (strcmp(name, "--series") == 0)
				o->series = true;
			else if (strcmp(name, "--live") == 0)
				o->live = true;
			else if (strcmp(name, "--initial") == 0)
				o->initial = true;
			else if (strcmp(name, "--check") == 0)
				o->check = true;
			else
				o->set_async = true;
			continue;
		}
		if (strcmp(name, "--duration") && strcmp(name, "--wait") &&
		    strcmp(name, "--cycle-hz") && strcmp(name, "--phys-hz") &&
		    strcmp(name, "--cameras") && strcmp(name, "--device") &&
		    strcmp(name, "--output") && strcmp(name, "--batch") &&
		    strcmp(name, "--hold") && strcmp(name, "--kallsyms")) {
			snprintf(err, errlen, "unknown option '%s' (see --help)",
				 name);
			return -1;
		}
		if (!val) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "%s needs a value", name);
				return -1;
			}
			val = argv[++i];
		}

		if (strcmp(name, "--duration") == 0) {
			if (parse_seconds(val, MAX_DURATION_S, &o->duration_s)) {
				snprintf(err, errlen,
					 "--duration: '%s' is not a duration between 0 and %.0f seconds (e.g. 20, 20s, 500ms, 2m)",
					 val, MAX_DURATION_S);
				return -1;
			}
		} else if (strcmp(name, "--wait") == 0) {
			if (parse_seconds(val, MAX_DURATION_S, &o->wait_s)) {
				snprintf(err, errlen,
					 "--wait: '%s' is not a duration between 0 and %.0f seconds",
					 val, MAX_DURATION_S);
				return -1;
			}
		} else if (strcmp(name, "--batch") == 0) {
			if (parse_seconds(val, 1.0, &o->batch_s)) {
				snprintf(err, errlen,
					 "--batch: '%s' is not a time between 0 and 1 second (e.g. 2ms)",
					 val);
				return -1;
			}
		} else if (strcmp(name, "--cycle-hz") == 0 ||
			   strcmp(name, "--phys-hz") == 0) {
			double *dst = strcmp(name, "--cycle-hz") == 0 ?
				      &o->cycle_hz : &o->phys_hz;

			if (parse_hz(val, dst)) {
				snprintf(err, errlen,
					 "%s: '%s' is not a rate between 0 and %.0f Hz",
					 name, val, MAX_HZ);
				return -1;
			}
		} else if (strcmp(name, "--cameras") == 0) {
			if (parse_uint(val, 1, MAX_CAMERAS, &o->cameras)) {
				snprintf(err, errlen,
					 "--cameras: '%s' is not a number between 1 and %d",
					 val, MAX_CAMERAS);
				return -1;
			}
			cameras_given = true;
		} else if (strcmp(name, "--device") == 0) {
			if (!*val) {
				snprintf(err, errlen, "--device: empty path");
				return -1;
			}
			if (o->ndevices >= MAX_CAMERAS) {
				snprintf(err, errlen,
					 "--device: at most %d devices",
					 MAX_CAMERAS);
				return -1;
			}
			o->devices[o->ndevices++] = val;
		} else if (strcmp(name, "--hold") == 0) {
			if (strcmp(val, "auto") == 0) {
				o->hold = HOLD_AUTO;
			} else if (strcmp(val, "stream") == 0) {
				o->hold = HOLD_STREAM;
			} else if (strcmp(val, "none") == 0) {
				o->hold = HOLD_NONE;
			} else {
				snprintf(err, errlen,
					 "--hold: '%s' is not auto, stream or none",
					 val);
				return -1;
			}
		} else if (strcmp(name, "--kallsyms") == 0) {
			if (!*val) {
				snprintf(err, errlen, "--kallsyms: empty path");
				return -1;
			}
			o->kallsyms = val;
		} else { /* --output */
			if (!*val) {
				snprintf(err, errlen, "--output: empty path");
				return -1;
			}
			o->output = val;
		}
	}

	if (o->ndevices > 0) {
		if (cameras_given && o->cameras != o->ndevices) {
			snprintf(err, errlen,
				 "--cameras %u contradicts %u --device option(s)",
				 o->cameras, o->ndevices);
			return -1;
		}
		o->cameras = o->ndevices;
	}
	return 0;
}
