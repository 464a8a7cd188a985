/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the agent counts, as plain data with no I/O: V4L2 event sequence
 * numbers (emitted and dropped events), the per-second series, the error
 * table, the control table, and the guest's busy CPU time (/proc/stat).
 */
#ifndef DMAHARNESS_AGENT_COUNTERS_H
#define DMAHARNESS_AGENT_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_CTRLS		128
#define MAX_ERRS		48

/*
 * Event sequence tracking
 *
 * v4l2 numbers the events queued on one file handle 0, 1, 2, ... (the
 * counter starts at -1 in v4l2_fh_init and is incremented before each queued
 * event, also for events that later get replaced).  uvcvideo subscribes with
 * one element per control, so an event not dequeued before the next one for
 * the same control is overwritten: the dequeued numbers then have gaps.  A
 * session is one open file handle; the numbering restarts on each open.
 */

struct seqtrack {
	bool have;		/* an event was seen in this session */
	uint32_t last;		/* its sequence number */
	uint64_t dequeued;	/* totals over all sessions */
	uint64_t emitted;
	uint64_t dropped;
	uint64_t anomalies;	/* duplicate or backwards numbers */
	uint64_t max_session_emitted;
};

struct seq_delta {
	uint64_t emitted;
	uint64_t dropped;
};

void seqtrack_new_session(struct seqtrack *t);
struct seq_delta seqtrack_feed(struct seqtrack *t, uint32_t seq);

/*
 * Per-second series
 */

struct bucket {
	uint64_t dequeued;
	uint64_t emitted;
	uint64_t dropped;
	uint64_t keys;
	uint64_t phys_reads;
	uint64_t cycles;
	uint64_t disconnects;
};

struct series {
	uint64_t start_ns;
	struct bucket *b;
	size_t n;		/* buckets in use */
	size_t cap;
	struct bucket spill;	/* target when allocation fails */
	bool oom;
};

void series_init(struct series *s, uint64_t start_ns);
void series_free(struct series *s);
struct bucket *series_at(struct series *s, uint64_t now_ns);

/*
 * Error table: one record per (operation, errno), with the first context.
 */

struct errrec {
	const char *op;		/* static string */
	int err;
	uint64_t count;
	double first_t;		/* seconds since agent start */
	char first_ctx[96];
};

struct errtab {
	struct errrec e[MAX_ERRS];
	size_t n;
	uint64_t total;
	uint64_t unrecorded;	/* errors beyond MAX_ERRS distinct kinds */
};

bool errtab_add(struct errtab *t, const char *op, int err, const char *ctx,
		double t_s);
/* "ENODEV", or "E<number>" for an errno without a name. */
const char *errno_name(int err, char *buf, size_t len);

/*
 * Control table (per camera, merged across re-enumerations)
 */

struct ctrlinfo {
	uint32_t id;
	uint32_t type;
	uint32_t flags;
	char name[32];
	bool subscribed;
	uint64_t events;
};

struct ctrltab {
	struct ctrlinfo c[MAX_CTRLS];
	size_t n;
	uint64_t overflow;	/* controls beyond MAX_CTRLS */
	uint64_t unknown_events;	/* events for an id not in the table */
};

struct ctrlinfo *ctrltab_find(struct ctrltab *t, uint32_t id);
struct ctrlinfo *ctrltab_add(struct ctrltab *t, uint32_t id, uint32_t type,
			     uint32_t flags, const char *name);
void ctrltab_count(struct ctrltab *t, uint32_t id);

bool cpu_busy_ticks(const char *path, uint64_t *ticks);

#endif
