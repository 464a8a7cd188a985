// SPDX-License-Identifier: GPL-2.0-only
/* The clock, ppoll with a nanosecond timeout, and the ticker (timing.h). */
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "timing.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

double secs_since(uint64_t start, uint64_t now)
{
	return now > start ? (double)(now - start) / 1e9 : 0.0;
}

int ppoll_ns(struct pollfd *fds, nfds_t n, uint64_t wait_ns,
	     const sigset_t *mask)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(wait_ns / NSEC_PER_SEC);
	ts.tv_nsec = (long)(wait_ns % NSEC_PER_SEC);
	return ppoll(fds, n, &ts, mask);
}

void ticker_init(struct ticker *t, double hz, uint64_t now_ns)
{
	memset(t, 0, sizeof(*t));
	if (!(hz > 0.0))
		return;
	t->on = true;
	t->period_ns = (uint64_t)(1e9 / hz + 0.5);
	if (t->period_ns == 0)
		t->period_ns = 1;
	t->next_ns = now_ns + t->period_ns;
}

uint64_t ticker_due(struct ticker *t, uint64_t now_ns,
		    uint64_t max_burst)
{
	uint64_t n;

	if (!t->on || now_ns < t->next_ns)
		return 0;
	n = (now_ns - t->next_ns) / t->period_ns + 1;
	t->next_ns += n * t->period_ns;
	if (max_burst && n > max_burst) {
		t->skipped += n - max_burst;
		n = max_burst;
	}
	t->fired += n;
	return n;
}

/* Nanoseconds until the next tick (0 when due, UINT64_MAX when off). */
uint64_t ticker_wait_ns(const struct ticker *t, uint64_t now_ns)
{
	if (!t->on)
		return UINT64_MAX;
	return t->next_ns > now_ns ? t->next_ns - now_ns : 0;
}
