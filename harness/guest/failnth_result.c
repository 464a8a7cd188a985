// SPDX-License-Identifier: GPL-2.0-only
/* Markers and the result line of dmaharness-failnth (see failnth_result.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "failnth_names.h"
#include "io.h"
#include "failnth_result.h"

void fn_fmt(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

static size_t clamp(int k, size_t len)
{
	if (k < 0)
		return 0;
	return (size_t)k < len ? (size_t)k : len - 1;
}

size_t fn_format_begin(char *out, size_t len, enum fn_path p, unsigned int n,
		       int pid)
{
	return clamp(snprintf(out, len, FAILNTH_STEP_PREFIX "path=%s n=%u pid=%d begin\n",
			      fn_path_names[p], n, pid), len);
}

size_t fn_format_end(char *out, size_t len, const struct fn_names *set,
		     enum fn_path p, const struct fn_step *st)
{
	char bound[FN_MAX_IFACES * FN_IFNAME_MAX];
	const char *inj = st->injected > 0 ? "1" : st->injected == 0 ? "0" : "?";

	fn_mask_format(set, st->bound_after, bound, sizeof(bound));
	return clamp(snprintf(out, len, FAILNTH_STEP_PREFIX
			      "path=%s n=%u pid=%d end injected=%s errno=%d bound=%s%s%s\n",
			      fn_path_names[p], st->n, st->pid, inj, st->err, bound,
			      st->died[0] ? " died=" : "", st->died), len);
}

static void names_json(struct jw *w, const char *key, const struct fn_names *set,
		       uint32_t mask)
{
	unsigned int i;

	jw_arr(w, key);
	for (i = 0; i < set->n; i++)
		if (mask & (UINT32_C(1) << i))
			jw_str(w, NULL, set->name[i]);
	jw_arr_end(w);
}

static void path_json(struct jw *w, const struct fn_state *s, enum fn_path p)
{
	const struct fn_path_run *r = &s->path[p];
	unsigned int i;

	jw_obj(w, fn_path_names[p]);
	jw_arr(w, "steps");
	for (i = 0; i < r->nsteps; i++) {
		const struct fn_step *st = &r->steps[i];

		jw_obj(w, NULL);
		jw_u64(w, "n", st->n);
		jw_i64(w, "pid", st->pid);
		if (st->injected < 0)
			jw_null(w, "injected");
		else
			jw_bool(w, "injected", st->injected > 0);
		jw_i64(w, "errno", st->err);
		names_json(w, "bound_after", &s->set, st->bound_after);
		jw_str(w, "died", st->died[0] ? st->died : NULL);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_bool(w, "completed", r->completed);
	jw_bool(w, "capped", r->capped);
	jw_str(w, "error", r->error[0] ? r->error : NULL);
	names_json(w, "bound_at_end", &s->set, r->bound_at_end);
	jw_obj_end(w);
}

void fn_result_json(struct jw *w, const struct fn_state *s)
{
	unsigned int i;

	jw_obj(w, NULL);
	jw_u64(w, "version", FAILNTH_JSON_VERSION);
	jw_str(w, "driver", s->opt.driver);
	names_json(w, "interfaces", &s->set, UINT32_MAX);
	jw_u64(w, "max", s->opt.max);
	jw_u64(w, "settle_ms", s->opt.settle_ms);
	jw_obj(w, "paths");
	for (i = 0; i < s->opt.npaths; i++)
		if (s->path[s->opt.paths[i]].ran)
			path_json(w, s, s->opt.paths[i]);
	jw_obj_end(w);
	jw_str(w, "error", s->error[0] ? s->error : NULL);
	jw_i64(w, "exit_code", s->exit_code);
	jw_obj_end(w);
}

int fn_emit_result(int fd, const struct fn_state *s)
{
	static const char oom[] = FAILNTH_LINE_PREFIX
		"{\"version\":1,\"error\":\"" FAILNTH_NAME
		" could not build its result (out of memory)\",\"exit_code\":5}\n";
	struct jw w;
	int ret;

	jw_init(&w);
	jw_raw(&w, FAILNTH_LINE_PREFIX, strlen(FAILNTH_LINE_PREFIX));
	fn_result_json(&w, s);
	jw_raw(&w, "\n", 1);
	if (w.failed || w.depth != 0)
		ret = write_all(fd, oom, sizeof(oom) - 1);
	else
		ret = write_all(fd, w.buf, w.len);
	jw_free(&w);
	return ret;
}
