// SPDX-License-Identifier: GPL-2.0-only
/* The agent's counters and tables (see counters.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "timing.h"

/* Event sequence tracking */

void seqtrack_new_session(struct seqtrack *t)
{
	t->have = false;
	t->last = 0;
}

struct seq_delta seqtrack_feed(struct seqtrack *t, uint32_t seq)
{
	struct seq_delta d = { 0, 0 };

	t->dequeued++;
	if (!t->have) {
		/* events 0 .. seq-1 were emitted and overwritten */
		d.emitted = (uint64_t)seq + 1;
		d.dropped = seq;
		t->have = true;
	} else {
		uint32_t step = seq - t->last;	/* modulo 2^32 */

		if (step == 0 || step >= 0x80000000u) {
			t->anomalies++;
			return d;
		}
		d.emitted = step;
		d.dropped = step - 1;
	}
	t->last = seq;
	t->emitted += d.emitted;
	t->dropped += d.dropped;
	return d;
}

/* Per-second series */

void series_init(struct series *s, uint64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	s->start_ns = start_ns;
}

void series_free(struct series *s)
{
	free(s->b);
	s->b = NULL;
	s->n = s->cap = 0;
}

/* The bucket for time now_ns (times before the start go to bucket 0). */
struct bucket *series_at(struct series *s, uint64_t now_ns)
{
	size_t idx = now_ns > s->start_ns ?
		     (size_t)((now_ns - s->start_ns) / NSEC_PER_SEC) : 0;

	if (idx >= s->cap) {
		size_t ncap = s->cap ? s->cap : 64;
		struct bucket *nb;

		while (ncap <= idx)
			ncap *= 2;
		nb = realloc(s->b, ncap * sizeof(*nb));
		if (!nb) {
			s->oom = true;
			return &s->spill;
		}
		memset(nb + s->cap, 0, (ncap - s->cap) * sizeof(*nb));
		s->b = nb;
		s->cap = ncap;
	}
	if (idx >= s->n)
		s->n = idx + 1;
	return &s->b[idx];
}

/* Error table */

/* Returns true the first time this (op, err) is seen. */
bool errtab_add(struct errtab *t, const char *op, int err,
		const char *ctx, double t_s)
{
	size_t i;

	t->total++;
	for (i = 0; i < t->n; i++) {
		if (t->e[i].err == err && strcmp(t->e[i].op, op) == 0) {
			t->e[i].count++;
			return false;
		}
	}
	if (t->n >= MAX_ERRS) {
		t->unrecorded++;
		return false;
	}
	t->e[t->n].op = op;
	t->e[t->n].err = err;
	t->e[t->n].count = 1;
	t->e[t->n].first_t = t_s;
	snprintf(t->e[t->n].first_ctx, sizeof(t->e[t->n].first_ctx), "%s",
		 ctx ? ctx : "");
	t->n++;
	return true;
}

const char *errno_name(int err, char *buf, size_t len)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	if (name)
		return name;
	snprintf(buf, len, "E%d", err);
	return buf;
}

/* Control table */

struct ctrlinfo *ctrltab_find(struct ctrltab *t, uint32_t id)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->c[i].id == id)
			return &t->c[i];
	return NULL;
}

struct ctrlinfo *ctrltab_add(struct ctrltab *t, uint32_t id,
			     uint32_t type, uint32_t flags,
			     const char *name)
{
	struct ctrlinfo *c = ctrltab_find(t, id);

	if (!c) {
		if (t->n >= MAX_CTRLS) {
			t->overflow++;
			return NULL;
		}
		c = &t->c[t->n++];
		memset(c, 0, sizeof(*c));
		c->id = id;
	}
	c->type = type;
	c->flags = flags;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

void ctrltab_count(struct ctrltab *t, uint32_t id)
{
	struct ctrlinfo *c = ctrltab_find(t, id);

	if (c)
		c->events++;
	else
		t->unknown_events++;
}

/* Guest CPU time */

/*
 * Non-idle CPU time of the whole guest so far, in USER_HZ ticks: user,
 * nice, system, irq, softirq and steal of /proc/stat's "cpu" line.  Over
 * the run it says how much guest CPU the flood took, whatever the clock
 * does while the guest idles (e.g. QEMU's -icount, where it jumps ahead).
 */
bool cpu_busy_ticks(const char *path, uint64_t *ticks)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7)
		return false;
	/* user nice system [idle iowait] irq softirq steal */
	*ticks = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	return true;
}
