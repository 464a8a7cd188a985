/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Time: the monotonic clock in nanoseconds, ppoll() with a timeout in
 * nanoseconds, and the rate scheduler (ticker) behind --cycle-hz, --phys-hz,
 * --live and the rescans.
 */
#ifndef DMAHARNESS_AGENT_TIMING_H
#define DMAHARNESS_AGENT_TIMING_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#define NSEC_PER_SEC		1000000000ULL

uint64_t now_ns(void);
double secs_since(uint64_t start, uint64_t now);
int ppoll_ns(struct pollfd *fds, nfds_t n, uint64_t wait_ns,
	     const sigset_t *mask);

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/*
 * Rate scheduling
 *
 * A ticker fires every period on a fixed grid from its start.  When the
 * caller falls behind, at most max_burst due ticks are returned at once and
 * the rest are counted as skipped (so the achieved rate stays visible).
 */

struct ticker {
	bool on;
	uint64_t period_ns;
	uint64_t next_ns;
	uint64_t fired;
	uint64_t skipped;
};

void ticker_init(struct ticker *t, double hz, uint64_t now_ns);
uint64_t ticker_due(struct ticker *t, uint64_t now_ns, uint64_t max_burst);
uint64_t ticker_wait_ns(const struct ticker *t, uint64_t now_ns);

#endif
