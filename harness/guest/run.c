// SPDX-License-Identifier: GPL-2.0-only
/* The agent's phases: signals, wait, settle, main loop (see run.h). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <linux/videodev2.h>

#include "agent.h"
#include "camera.h"
#include "hold.h"
#include "input.h"
#include "result.h"
#include "run.h"
#include "video.h"

/* Signals */

static volatile sig_atomic_t stop_signal;

void on_signal(int sig)
{
	stop_signal = sig;
}

int setup_signals(sigset_t *wait_mask)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;
	sigset_t block;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -1;
		sigaddset(&block, sigs[i]);
	}
	/* Blocked except while waiting in ppoll(): no lost wake-ups. */
	if (sigprocmask(SIG_BLOCK, &block, wait_mask) < 0)
		return -1;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigdelset(wait_mask, sigs[i]);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void clear_signal(void)
{
	stop_signal = 0;
}

/* Phases */

static bool check_stop(struct agent *a)
{
	int sig = stop_signal;

	if (!sig)
		return false;
	snprintf(a->stop_signal, sizeof(a->stop_signal), "%s",
		 sig == SIGTERM ? "signal:SIGTERM" :
		 sig == SIGINT ? "signal:SIGINT" : "signal:SIGHUP");
	a->stopped_by = a->stop_signal;
	return true;
}

/*
 * uvcvideo registers /dev/videoN (uvc_register_chains) before it sets up
 * the status endpoint (uvc_status_init: the input device, then the URB).
 * An open in between starts no status URB, and nothing does until the
 * next first open: a run that opens once would see no status event at
 * all.  So before the first open wait until each camera's input device
 * exists, then a little more for the URB allocated right after it; a
 * camera without one (no status endpoint, no INPUT_EVDEV) is given up on
 * after SETTLE_MAX_S.
 */
#define SETTLE_AFTER_MS	50

static void settle_cameras(struct agent *a, const sigset_t *mask)
{
	uint64_t deadline = now_ns() + (uint64_t)(SETTLE_MAX_S * 1e9);
	unsigned int i;

	for (;;) {
		bool all = true;

		for (i = 0; i < a->ncam; i++)
			if (a->cam[i].found && !input_present(a->cam[i].bus_info))
				all = false;
		if (all || now_ns() >= deadline || check_stop(a))
			break;
		ppoll_ns(NULL, 0, 20 * 1000000ULL, mask);
	}
	ppoll_ns(NULL, 0, SETTLE_AFTER_MS * 1000000ULL, mask);
}

/* Wait phase: find (bind) the cameras; returns true when at least one. */
bool wait_for_cameras(struct agent *a, const sigset_t *mask)
{
	uint64_t deadline = a->t0_ns + (uint64_t)(a->opt.wait_s * 1e9);
	uint64_t now = a->t0_ns;
	struct ticker t;

	ticker_init(&t, 20.0, now);
	for (;;) {
		scan_cameras(a, now);
		if (cameras_found(a) >= a->opt.cameras || check_stop(a))
			break;
		now = now_ns();
		if (now >= deadline)
			break;
		ppoll_ns(NULL, 0, min_u64(ticker_wait_ns(&t, now),
					  deadline - now), mask);
		now = now_ns();
		ticker_due(&t, now, 1);
	}
	if (cameras_found(a) > 0) {
		settle_cameras(a, mask);
		/* uvcvideo is loaded now: its symbols can be read */
		hold_choose(a);
	}
	a->wait_done_ns = now_ns();
	return cameras_found(a) > 0;
}

struct pollmap {
	struct camera *cam;
	bool input;
};

void run_loop(struct agent *a, const sigset_t *mask)
{
	struct pollfd fds[2 * MAX_CAMERAS];
	struct pollmap map[2 * MAX_CAMERAS];
	uint64_t now;
	unsigned int i;

	a->running = true;
	now = now_ns();
	a->run_start_ns = now;
	a->run_end_ns = now + (uint64_t)(a->opt.duration_s * 1e9);
	a->busy_known = cpu_busy_ticks("/proc/stat", &a->busy_start);
	series_init(&a->series, now);
	series_at(&a->series, now);	/* series has at least one bucket */
	ticker_init(&a->cycle, a->opt.cycle_hz, now);
	ticker_init(&a->phys, a->opt.phys_hz, now);
	ticker_init(&a->rescan, 20.0, now);
	ticker_init(&a->input_rescan, 2.0, now);
	ticker_init(&a->live, a->opt.live ? 1.0 : 0.0, now);

	/* Cameras found in the wait phase were closed again: open them. */
	for (i = 0; i < a->ncam; i++) {
		struct camera *c = &a->cam[i];
		struct v4l2_capability cap;
		const char *op = "";
		int fd, err = 0;
		enum probe_result r;

		if (!c->found)
			continue;	/* a --device not there yet */
		r = video_probe(c->video_path, &fd, &cap, &err, &op);
		if (r == PROBE_OK) {
			camera_attach(a, c, fd, c->video_path, now);
			continue;
		}
		c->open_failures++;
		if (r == PROBE_ERRNO)
			agent_err(a, op, err, "camera %u %s first open",
				  c->index, c->video_path);
		camera_mark_absent(a, c, now);
	}

	while (!check_stop(a)) {
		uint64_t wait, due;
		nfds_t n = 0;
		int pr;

		now = now_ns();
		if (now >= a->run_end_ns) {
			a->stopped_by = "duration";
			break;
		}
		for (i = 0; i < a->ncam; i++) {
			struct camera *c = &a->cam[i];

			if (c->fd >= 0) {
				fds[n].fd = c->fd;
				fds[n].events = POLLPRI;
				fds[n].revents = 0;
				map[n].cam = c;
				map[n].input = false;
				n++;
			}
			if (c->input_fd >= 0) {
				fds[n].fd = c->input_fd;
				fds[n].events = POLLIN;
				fds[n].revents = 0;
				map[n].cam = c;
				map[n].input = true;
				n++;
			}
		}
		if (now < a->next_poll_ns) {
			/* --batch: let events queue up, then read them at once */
			ppoll_ns(NULL, 0, min_u64(a->next_poll_ns, a->run_end_ns) - now,
				 mask);
			a->naps++;
			continue;
		}
		wait = a->run_end_ns - now;
		wait = min_u64(wait, ticker_wait_ns(&a->cycle, now));
		wait = min_u64(wait, ticker_wait_ns(&a->phys, now));
		wait = min_u64(wait, ticker_wait_ns(&a->live, now));
		if (any_absent(a))
			wait = min_u64(wait, ticker_wait_ns(&a->rescan, now));
		wait = min_u64(wait, ticker_wait_ns(&a->input_rescan, now));

		pr = ppoll_ns(fds, n, wait, mask);
		a->wakeups++;
		if (pr < 0 && errno != EINTR) {
			agent_err(a, "ppoll", errno, "main loop");
			snprintf(a->error, sizeof(a->error),
				 "ppoll failed: %s", strerror(errno));
			a->stopped_by = "error";
			break;
		}
		now = now_ns();
		if (pr > 0 && a->opt.batch_s > 0)
			a->next_poll_ns = now + (uint64_t)(a->opt.batch_s * 1e9);

		for (i = 0; pr > 0 && i < n; i++) {
			struct camera *c = map[i].cam;
			short re = fds[i].revents;

			if (!re)
				continue;
			if (map[i].input) {
				if (c->input_fd != fds[i].fd)
					continue;
				if (re & POLLIN)
					input_read(a, c, now);
				if (c->input_fd >= 0 &&
				    (re & (POLLERR | POLLHUP | POLLNVAL)))
					input_lost(a, c);
				continue;
			}
			if (c->fd != fds[i].fd)
				continue;
			if (re & POLLPRI) {
				if (!video_drain(a, c, now, 4096)) {
					camera_mark_absent(a, c, now);
					continue;
				}
			}
			if (re & (POLLERR | POLLHUP | POLLNVAL))
				camera_mark_absent(a, c, now);
		}

		if (now >= a->run_end_ns)
			continue;	/* the loop head ends the run */
		due = ticker_due(&a->phys, now, 1000);
		while (due-- > 0)
			for (i = 0; i < a->ncam; i++)
				if (a->cam[i].input_fd >= 0)
					input_read_phys(a, &a->cam[i], now);
		if (ticker_due(&a->cycle, now, 1))
			for (i = 0; i < a->ncam; i++)
				if (a->cam[i].fd >= 0)
					camera_cycle(a, &a->cam[i], now);
		if (ticker_due(&a->rescan, now, 1) && any_absent(a))
			scan_cameras(a, now);
		if (ticker_due(&a->input_rescan, now, 1))
			for (i = 0; i < a->ncam; i++)
				if (a->cam[i].fd >= 0 && a->cam[i].input_fd < 0)
					input_find(a, &a->cam[i]);
		if (ticker_due(&a->live, now, 1))
			emit_tick(a, now);
	}

	now = now_ns();
	a->busy_known = a->busy_known &&
			cpu_busy_ticks("/proc/stat", &a->busy_end);
	for (i = 0; i < a->ncam; i++) {
		struct camera *c = &a->cam[i];

		c->present_at_end = c->fd >= 0;
		c->hold_at_end = c->hold_streaming;
		if (c->present_at_end)
			input_note_missing(c, true);
		if (c->input_fd >= 0)
			input_read(a, c, now);
		if (c->fd >= 0)
			video_close(a, c, now);
		hold_stop(a, c, false);	/* after the last events were read */
		input_close(c);
		if (c->absent)
			c->absent_ns += now - c->absent_since_ns;
		/* keep fd == -1 but remember presence for the report */
	}
}
