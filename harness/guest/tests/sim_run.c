// SPDX-License-Identifier: GPL-2.0-only
/*
 * Running the agent against the simulated camera (fake_v4l2.c), in virtual
 * time, as main() does, and the checks every such run shares.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"
#include "result.h"
#include "run.h"
#include "tests.h"

struct agent *sim_agent(void)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	sim.active = true;	/* t0 in virtual time */
	agent_init(a);
	sim.active = false;
	/* --hold auto must not read the host's own kallsyms: none */
	a->opt.kallsyms = SIM_NO_KALLSYMS;
	return a;
}

/* Wait phase and run, as main() does; returns whether a camera was found. */
bool sim_run(struct agent *a)
{
	sigset_t none;
	bool found;

	sigemptyset(&none);
	sim.active = true;
	agent_apply_options(a);
	found = wait_for_cameras(a, &none);
	if (!found)
		agent_wait_failed(a);
	else if (!a->stopped_by)
		run_loop(a, &none);
	sim.active = false;
	return found;
}

/* Build the result JSON and check it is valid; caller frees. */
void sim_json(struct tctx *t, struct agent *a, int code, struct jw *w)
{
	jw_init(w);
	sim.active = true;
	json_build(w, a, code, now_ns());
	sim.active = false;
	CHECK(t, jw_done(w));
	CHECK(t, w->buf && json_valid(w->buf));
}

void sim_free(struct agent *a)
{
	series_free(&a->series);
	free(a);
}

uint64_t series_sum(const struct series *s, size_t off)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		sum += *(const uint64_t *)((const char *)&s->b[i] + off);
	return sum;
}

/* Counts that must agree with the model in every scenario. */
void check_truth(struct tctx *t, const struct camera *c,
		 const struct sim_cam *sc)
{
	uint64_t per_ctrl = 0;
	size_t i;

	CHECK(t, c->seq.dequeued == sc->dequeued);
	CHECK(t, c->seq.emitted == sc->emitted_seen);
	CHECK(t, c->seq.dropped == c->seq.emitted - c->seq.dequeued);
	CHECK(t, c->seq.anomalies == 0);
	CHECK(t, c->key_press == sc->key_press);
	CHECK(t, c->key_release == sc->key_release);
	CHECK(t, c->key_other_codes == 0 && c->syn_dropped == 0);
	CHECK(t, c->input_events == 2 * (sc->key_press + sc->key_release));
	for (i = 0; i < c->ctrls.n; i++)
		per_ctrl += c->ctrls.c[i].events;
	CHECK(t, per_ctrl == c->seq.dequeued);
	CHECK(t, c->ctrls.unknown_events == 0);
	CHECK(t, c->ev_value == c->seq.dequeued);
}

/* Every field the JSON comment in result.h documents is present. */
void check_documented_fields(struct tctx *t, const char *j)
{
	static const char *const keys[] = {
		"version", "tool", "error", "exit_code", "stopped_by", "options",
		"duration_s", "wait_s", "cycle_hz", "phys_hz", "cameras",
		"devices", "initial", "series", "wait_elapsed_s",
		"run_elapsed_s", "cameras_requested", "cameras_found", "totals",
		"events_dequeued", "events_emitted", "events_dropped",
		"seq_anomalies", "key_events", "syn_dropped", "phys_reads",
		"phys_mismatches", "cycles", "opens", "disconnects",
		"reconnects", "errors", "scheduling", "cycle_ticks",
		"cycle_ticks_skipped", "phys_ticks", "phys_ticks_skipped",
		"index", "video_device", "bus_info", "card", "found",
		"present_at_end", "input_device", "input_name", "input_phys",
		"input_match", "events_value_change", "events_flags_change",
		"events_range_change", "events_other_type",
		"events_unknown_control", "controls", "class_controls",
		"used_queryctrl", "subscriptions", "subscribe_failures",
		"per_control", "id", "name", "type", "subscribed", "events",
		"key_press", "key_release", "key_repeat", "key_other_codes",
		"input_events", "phys_last_mismatch", "open_failures",
		"absent_s", "attach_s_total", "attach_s_max", "cycle_s_max",
		"input_found", "input_disconnects", "errors_unrecorded",
		"interval_s", "truncated", "input_error", "controls_untracked",
		"agent_start_s", "run_start_s", "wakeups", "cpu_user_s", "cpu_sys_s",
		"batch_s", "naps", "guest_cpu_busy_s", "hold", "hold_reason",
		"hold_streaming", "hold_starts", "hold_failures", "hold_buffers",
	};
	char v[64];
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!json_field(j, keys[i], v, sizeof(v))) {
			t->checks_failed++;
			fprintf(stderr, "    field \"%s\" missing\n", keys[i]);
		}
	}
}
