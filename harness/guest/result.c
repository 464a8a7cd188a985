// SPDX-License-Identifier: GPL-2.0-only
/* The result line and the --live records (fields listed in result.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "agent.h"
#include "io.h"
#include "json.h"
#include "protocol.h"
#include "result.h"

static void json_camera(struct jw *w, const struct camera *c)
{
	size_t i;

	jw_obj(w, NULL);
	jw_u64(w, "index", c->index);
	jw_str(w, "video_device", c->video_path[0] ? c->video_path : NULL);
	jw_str(w, "bus_info", c->bus_info[0] ? c->bus_info : NULL);
	jw_str(w, "card", c->card[0] ? c->card : NULL);
	jw_bool(w, "found", c->found);
	jw_bool(w, "present_at_end", c->present_at_end);
	jw_str(w, "input_device", c->input_path[0] ? c->input_path : NULL);
	jw_str(w, "input_name", c->input_name[0] ? c->input_name : NULL);
	jw_str(w, "input_phys", c->input_phys[0] ? c->input_phys : NULL);
	jw_str(w, "input_match", c->input_match[0] ? c->input_match : NULL);
	jw_str(w, "input_error", c->input_error[0] ? c->input_error : NULL);

	jw_u64(w, "events_dequeued", c->seq.dequeued);
	jw_u64(w, "events_emitted", c->seq.emitted);
	jw_u64(w, "events_dropped", c->seq.dropped);
	jw_u64(w, "seq_anomalies", c->seq.anomalies);
	jw_u64(w, "events_value_change", c->ev_value);
	jw_u64(w, "events_flags_change", c->ev_flags);
	jw_u64(w, "events_range_change", c->ev_range);
	jw_u64(w, "events_other_type", c->ev_other_type);

	jw_u64(w, "controls", c->ctrls.n);
	jw_u64(w, "class_controls", c->class_controls);
	jw_u64(w, "controls_untracked", c->ctrls.overflow);
	jw_bool(w, "used_queryctrl", c->used_queryctrl);
	jw_u64(w, "subscriptions", c->subscribed);
	jw_u64(w, "subscribe_failures", c->subscribe_failed);
	jw_u64(w, "async_sets", c->async_sets);
	jw_u64(w, "async_set_failures", c->async_set_failures);
	jw_u64(w, "events_unknown_control", c->ctrls.unknown_events);
	jw_arr(w, "per_control");
	for (i = 0; i < c->ctrls.n; i++) {
		const struct ctrlinfo *ci = &c->ctrls.c[i];
		char idbuf[16];

		snprintf(idbuf, sizeof(idbuf), "0x%08" PRIx32, ci->id);
		jw_obj(w, NULL);
		jw_str(w, "id", idbuf);
		jw_str(w, "name", ci->name);
		jw_u64(w, "type", ci->type);
		jw_bool(w, "subscribed", ci->subscribed);
		jw_u64(w, "events", ci->events);
		jw_obj_end(w);
	}
	jw_arr_end(w);

	jw_u64(w, "key_events", c->key_press + c->key_release);
	jw_u64(w, "key_press", c->key_press);
	jw_u64(w, "key_release", c->key_release);
	jw_u64(w, "key_repeat", c->key_repeat);
	jw_u64(w, "key_other_codes", c->key_other_codes);
	jw_u64(w, "input_events", c->input_events);
	jw_u64(w, "syn_dropped", c->syn_dropped);
	jw_u64(w, "phys_reads", c->phys_reads);
	jw_u64(w, "phys_mismatches", c->phys_mismatches);
	jw_str(w, "phys_last_mismatch", c->phys_bad[0] ? c->phys_bad : NULL);

	jw_bool(w, "hold_streaming", c->hold_at_end);
	jw_u64(w, "hold_starts", c->hold_starts);
	jw_u64(w, "hold_failures", c->hold_failures);
	jw_u64(w, "hold_buffers", c->hold_buffers);

	jw_u64(w, "opens", c->opens);
	jw_u64(w, "open_failures", c->open_failures);
	jw_u64(w, "cycles", c->cycles);
	jw_u64(w, "disconnects", c->disconnects);
	jw_u64(w, "reconnects", c->reconnects);
	jw_dbl(w, "absent_s", (double)c->absent_ns / 1e9, 3);
	jw_dbl(w, "attach_s_total", (double)c->attach_ns_total / 1e9, 3);
	jw_dbl(w, "attach_s_max", (double)c->attach_ns_max / 1e9, 3);
	jw_dbl(w, "cycle_s_max", (double)c->cycle_ns_max / 1e9, 3);
	jw_u64(w, "input_found", c->input_found);
	jw_u64(w, "input_disconnects", c->input_disconnects);
	jw_obj_end(w);
}

#define SERIES_FIELD(w, s, name, field)					\
	do {								\
		size_t k_;						\
		jw_arr((w), (name));					\
		for (k_ = 0; k_ < (s)->n; k_++)				\
			jw_u64((w), NULL, (s)->b[k_].field);		\
		jw_arr_end(w);						\
	} while (0)

void json_build(struct jw *w, const struct agent *a, int exit_code,
		uint64_t now)
{
	const struct options *o = &a->opt;
	unsigned int i;
	size_t k;

	jw_obj(w, NULL);
	jw_u64(w, "version", AGENT_JSON_VERSION);
	jw_str(w, "tool", AGENT_NAME);
	jw_str(w, "error", a->error[0] ? a->error : NULL);
	jw_i64(w, "exit_code", exit_code);
	jw_str(w, "stopped_by", a->stopped_by);

	jw_obj(w, "options");
	jw_dbl(w, "duration_s", o->duration_s, 3);
	jw_dbl(w, "wait_s", o->wait_s, 3);
	jw_dbl(w, "cycle_hz", o->cycle_hz, 3);
	jw_dbl(w, "phys_hz", o->phys_hz, 3);
	jw_dbl(w, "batch_s", o->batch_s, 4);
	jw_u64(w, "cameras", o->cameras);
	jw_arr(w, "devices");
	for (i = 0; i < o->ndevices; i++)
		jw_str(w, NULL, o->devices[i]);
	jw_arr_end(w);
	jw_bool(w, "initial", o->initial);
	jw_bool(w, "set_async", o->set_async);
	jw_str(w, "hold", hold_mode_name(o->hold));
	jw_bool(w, "series", o->series);
	jw_obj_end(w);

	/* null until decided (no camera appeared) */
	jw_str(w, "hold", a->hold == HOLD_AUTO ? NULL : hold_mode_name(a->hold));
	jw_str(w, "hold_reason", a->hold_reason[0] ? a->hold_reason : NULL);

	jw_dbl(w, "wait_elapsed_s", secs_since(a->t0_ns, a->wait_done_ns ?
					       a->wait_done_ns : now), 3);
	jw_dbl(w, "run_elapsed_s", a->run_start_ns ?
	       secs_since(a->run_start_ns, now) : 0.0, 3);
	/* absolute CLOCK_MONOTONIC: the clock of printk's timestamps */
	jw_dbl(w, "agent_start_s", (double)a->t0_ns / 1e9, 6);
	if (a->run_start_ns)
		jw_dbl(w, "run_start_s", (double)a->run_start_ns / 1e9, 6);
	else
		jw_null(w, "run_start_s");
	jw_u64(w, "cameras_requested", o->cameras);
	jw_u64(w, "cameras_found", cameras_found(a));

	jw_obj(w, "totals");
	jw_u64(w, "events_dequeued", SUM(a, seq.dequeued));
	jw_u64(w, "events_emitted", SUM(a, seq.emitted));
	jw_u64(w, "events_dropped", SUM(a, seq.dropped));
	jw_u64(w, "seq_anomalies", SUM(a, seq.anomalies));
	jw_u64(w, "key_events", SUM(a, key_press) + SUM(a, key_release));
	jw_u64(w, "syn_dropped", SUM(a, syn_dropped));
	jw_u64(w, "phys_reads", SUM(a, phys_reads));
	jw_u64(w, "phys_mismatches", SUM(a, phys_mismatches));
	jw_u64(w, "cycles", SUM(a, cycles));
	jw_u64(w, "opens", SUM(a, opens));
	jw_u64(w, "disconnects", SUM(a, disconnects));
	jw_u64(w, "reconnects", SUM(a, reconnects));
	jw_u64(w, "hold_failures", SUM(a, hold_failures));
	jw_u64(w, "async_sets", SUM(a, async_sets));
	jw_u64(w, "errors", a->errs.total);
	jw_obj_end(w);

	jw_obj(w, "scheduling");
	jw_u64(w, "cycle_ticks", a->cycle.fired);
	jw_u64(w, "cycle_ticks_skipped", a->cycle.skipped);
	jw_u64(w, "phys_ticks", a->phys.fired);
	jw_u64(w, "phys_ticks_skipped", a->phys.skipped);
	jw_u64(w, "wakeups", a->wakeups);
	jw_u64(w, "naps", a->naps);
	if (a->busy_known && a->busy_end >= a->busy_start)
		jw_dbl(w, "guest_cpu_busy_s", (double)(a->busy_end - a->busy_start) /
		       (double)sysconf(_SC_CLK_TCK), 2);
	else
		jw_null(w, "guest_cpu_busy_s");
	{
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru) == 0) {
			jw_dbl(w, "cpu_user_s", (double)ru.ru_utime.tv_sec +
			       (double)ru.ru_utime.tv_usec / 1e6, 3);
			jw_dbl(w, "cpu_sys_s", (double)ru.ru_stime.tv_sec +
			       (double)ru.ru_stime.tv_usec / 1e6, 3);
		} else {
			jw_null(w, "cpu_user_s");
			jw_null(w, "cpu_sys_s");
		}
	}
	jw_obj_end(w);

	jw_arr(w, "cameras");
	for (i = 0; i < a->ncam; i++)
		json_camera(w, &a->cam[i]);
	jw_arr_end(w);

	jw_arr(w, "errors");
	for (k = 0; k < a->errs.n; k++) {
		const struct errrec *e = &a->errs.e[k];
		char nb[16];

		jw_obj(w, NULL);
		jw_str(w, "op", e->op);
		jw_str(w, "errno", errno_name(e->err, nb, sizeof(nb)));
		jw_str(w, "message", strerror(e->err));
		jw_u64(w, "count", e->count);
		jw_str(w, "first_context", e->first_ctx);
		jw_dbl(w, "first_t_s", e->first_t, 3);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	jw_u64(w, "errors_unrecorded", a->errs.unrecorded);

	if (o->series) {
		const struct series *s = &a->series;

		jw_obj(w, "series");
		jw_u64(w, "interval_s", 1);
		jw_bool(w, "truncated", s->oom);
		SERIES_FIELD(w, s, "events_dequeued", dequeued);
		SERIES_FIELD(w, s, "events_emitted", emitted);
		SERIES_FIELD(w, s, "events_dropped", dropped);
		SERIES_FIELD(w, s, "key_events", keys);
		SERIES_FIELD(w, s, "phys_reads", phys_reads);
		SERIES_FIELD(w, s, "cycles", cycles);
		SERIES_FIELD(w, s, "disconnects", disconnects);
		jw_obj_end(w);
	}
	jw_obj_end(w);
}

/* Print the result line (one write, to keep it in one piece). */
int emit_result(struct agent *a, int exit_code)
{
	const char *prefix = AGENT_LINE_PREFIX;
	struct jw w;
	int ret = exit_code;

	jw_init(&w);
	jw_raw(&w, prefix, strlen(prefix));
	/* jw_raw left the writer at top level with nothing written */
	json_build(&w, a, exit_code, now_ns());
	jw_raw(&w, "\n", 1);
	if (w.failed || w.depth != 0) {
		fprintf(stderr, AGENT_NAME
			": could not build the JSON result (out of memory)\n");
		printf(AGENT_LINE_PREFIX
		       "{\"version\":%d,\"error\":\"agent out of memory\",\"exit_code\":%d}\n",
		       AGENT_JSON_VERSION, EXIT_AGENT_RUNTIME);
		fflush(stdout);
		jw_free(&w);
		return EXIT_AGENT_RUNTIME;
	}
	fflush(stdout);
	if (write_all(STDOUT_FILENO, w.buf, w.len) < 0) {
		fprintf(stderr, AGENT_NAME ": writing the result to stdout: %s\n",
			strerror(errno));
		ret = EXIT_AGENT_RUNTIME;
	}
	if (a->opt.output) {
		int fd = open(a->opt.output,
			      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0 || write_all(fd, w.buf, w.len) < 0) {
			fprintf(stderr, AGENT_NAME ": writing the result to %s: %s\n",
				a->opt.output, strerror(errno));
			ret = ret ? ret : EXIT_AGENT_RUNTIME;
		}
		if (fd >= 0)
			close(fd);
	}
	jw_free(&w);
	return ret;
}

/*
 * The --live progress record for the second that ended at now: that
 * second's counts ("t" is its index in the series) and running totals.
 */
void tick_json(struct jw *w, const struct agent *a, uint64_t now)
{
	const struct bucket *b = NULL;
	size_t idx = now > a->run_start_ns ?
		     (size_t)((now - a->run_start_ns) / NSEC_PER_SEC) : 0;

	if (idx > 0 && idx - 1 < a->series.n)
		b = &a->series.b[idx - 1];
	jw_obj(w, NULL);
	jw_u64(w, "version", AGENT_JSON_VERSION);
	jw_u64(w, "t", idx ? idx - 1 : 0);
	jw_u64(w, "events_dequeued", b ? b->dequeued : 0);
	jw_u64(w, "events_emitted", b ? b->emitted : 0);
	jw_u64(w, "key_events", b ? b->keys : 0);
	jw_u64(w, "phys_reads", b ? b->phys_reads : 0);
	jw_u64(w, "cycles", b ? b->cycles : 0);
	jw_u64(w, "disconnects", b ? b->disconnects : 0);
	jw_u64(w, "total_events_dequeued", SUM(a, seq.dequeued));
	jw_u64(w, "total_events_emitted", SUM(a, seq.emitted));
	jw_u64(w, "total_key_events", SUM(a, key_press) + SUM(a, key_release));
	jw_obj_end(w);
}

void emit_tick(const struct agent *a, uint64_t now)
{
	struct jw w;

	jw_init(&w);
	tick_json(&w, a, now);
	if (jw_done(&w))
		fprintf(stderr, AGENT_TICK_PREFIX "%s\n", w.buf);
	jw_free(&w);
}
