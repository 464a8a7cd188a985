// SPDX-License-Identifier: GPL-2.0-only
/* The probe and disconnect paths (see failnth_steps.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failnth_names.h"
#include "io.h"
#include "failnth_result.h"
#include "failnth_steps.h"

#define HUNG	(-2)

static uint32_t all_of(const struct fn_names *set)
{
	return set->n >= 32 ? UINT32_MAX : (UINT32_C(1) << set->n) - 1;
}

static struct fn_step *add_step(struct fn_path_run *r)
{
	if (r->nsteps == r->cap) {
		unsigned int ncap = r->cap ? r->cap * 2 : 64;
		struct fn_step *ns = realloc(r->steps, ncap * sizeof(*ns));

		if (!ns)
			return NULL;
		r->steps = ns;
		r->cap = ncap;
	}
	memset(&r->steps[r->nsteps], 0, sizeof(r->steps[0]));
	return &r->steps[r->nsteps++];
}

/* How a task that did not report back ended, for an error message. */
static const char *why(const struct fn_write *w)
{
	return w->hung ? "did not return within the step timeout (stuck in the kernel)"
		       : "ended without reporting back";
}

/*
 * Bind the whole set (want_bound) or unbind every interface of it, without
 * faults, one interface at a time in order, looking again after each write
 * (uvcvideo's probe of the control interface claims the streaming ones, its
 * disconnect releases them).  A write's errno does not matter, the state
 * after does.  0, -1 with a message in msg, or HUNG.
 */
static int put_state(const struct fn_state *s, const struct fn_ops *ops,
		     enum fn_path p, bool want_bound, char *msg, size_t len)
{
	const char *attr = want_bound ? "bind" : "unbind";
	char err[160], names[FN_MAX_IFACES * FN_IFNAME_MAX];
	uint32_t mask = 0, want = want_bound ? all_of(&s->set) : 0;
	unsigned int i;
	int last_err = 0;

	for (i = 0; i < s->set.n; i++) {
		struct fn_write w;

		if (ops->bound(ops->ctx, &s->set, &mask, err, sizeof(err)) < 0) {
			snprintf(msg, len, "%s", err);
			return -1;
		}
		if (!!(mask & (UINT32_C(1) << i)) == want_bound)
			continue;
		memset(&w, 0, sizeof(w));
		if (ops->write(ops->ctx, attr, s->set.name[i], 0, p, &w) < 0) {
			snprintf(msg, len, "%s %s without a fault: the task %s (%s)",
				 attr, s->set.name[i], why(&w), w.died);
			return w.hung ? HUNG : -1;
		}
		if (w.err)
			last_err = w.err;
	}
	if (ops->bound(ops->ctx, &s->set, &mask, err, sizeof(err)) < 0) {
		snprintf(msg, len, "%s", err);
		return -1;
	}
	if (mask != want) {
		fn_mask_format(&s->set, mask, names, sizeof(names));
		fn_fmt(msg, len, "could not %s the interfaces without a fault: bound %s (last errno %d)",
			 attr, names, last_err);
		return -1;
	}
	return 0;
}

static void print_line(const struct fn_ops *ops, const char *line, size_t n)
{
	(void)write_all(ops->out_fd, line, n);
}

int fn_run_path(struct fn_state *s, const struct fn_ops *ops, enum fn_path p)
{
	struct fn_path_run *r = &s->path[p];
	const char *attr = p == FN_PROBE ? "bind" : "unbind";
	char line[FN_MAX_IFACES * FN_IFNAME_MAX + 256];
	char err[160];
	unsigned int n;
	int ret = 0;

	r->ran = true;
	for (n = 1; n <= s->opt.max; n++) {
		struct fn_step *st;
		struct fn_write w;
		int rc;

		rc = put_state(s, ops, p, p == FN_DISCONNECT, r->error,
			       sizeof(r->error));
		if (rc < 0) {
			if (rc == HUNG)
				ret = -1;
			break;
		}
		st = add_step(r);
		if (!st) {
			snprintf(r->error, sizeof(r->error), "out of memory at n=%u", n);
			break;
		}
		memset(&w, 0, sizeof(w));
		rc = ops->write(ops->ctx, attr, s->set.name[0], n, p, &w);
		st->n = n;
		st->pid = w.pid;
		st->injected = rc < 0 ? -1 : w.injected;
		st->err = w.err;
		snprintf(st->died, sizeof(st->died), "%s", rc < 0 ? w.died : "");
		if (!w.hung)
			ops->settle(ops->ctx, s->opt.settle_ms);
		if (ops->bound(ops->ctx, &s->set, &st->bound_after, err, sizeof(err)) < 0)
			st->bound_after = 0;
		print_line(ops, line, fn_format_end(line, sizeof(line), &s->set, p, st));
		if (rc < 0) {
			fn_fmt(r->error, sizeof(r->error),
				 "n=%u: the task writing %s to %s %s (%s)", n,
				 s->set.name[0], attr, why(&w), w.died);
			if (w.hung)
				ret = -1;
			break;
		}
		if (st->injected < 0) {
			snprintf(r->error, sizeof(r->error),
				 "n=%u: fail-nth could not be read back", n);
			break;
		}
		if (st->injected == 0) {
			r->completed = true;
			break;
		}
	}
	if (n > s->opt.max)
		r->capped = true;
	if (ret == 0) {
		/* leave the device bound, as found */
		int rc = put_state(s, ops, p, true, err, sizeof(err));

		if (rc != 0 && !r->error[0])
			snprintf(r->error, sizeof(r->error),
				 "binding again after the path: %s", err);
		if (rc == HUNG)
			ret = -1;
	}
	if (ops->bound(ops->ctx, &s->set, &r->bound_at_end, err, sizeof(err)) < 0)
		r->bound_at_end = 0;
	return ret;
}

void fn_run_paths(struct fn_state *s, const struct fn_ops *ops)
{
	unsigned int i;

	for (i = 0; i < s->opt.npaths; i++) {
		enum fn_path p = s->opt.paths[i];

		if (fn_run_path(s, ops, p) < 0) {
			for (i++; i < s->opt.npaths; i++) {
				struct fn_path_run *r = &s->path[s->opt.paths[i]];

				r->ran = true;
				snprintf(r->error, sizeof(r->error),
					 "not run: a task of the %s path is stuck in the kernel",
					 fn_path_names[p]);
			}
			return;
		}
	}
}

void fn_state_free(struct fn_state *s)
{
	unsigned int p;

	for (p = 0; p < FN_NPATHS; p++) {
		free(s->path[p].steps);
		s->path[p].steps = NULL;
		s->path[p].nsteps = s->path[p].cap = 0;
	}
}
