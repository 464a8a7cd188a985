// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmaharness-failnth's logic without a kernel: options, interface names,
 * markers, the result line, and the probe and disconnect paths run against
 * a modelled driver (struct model below, behind struct fn_ops).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "failnth.h"
#include "io.h"
#include "failnth_names.h"
#include "failnth_options.h"
#include "failnth_result.h"
#include "failnth_steps.h"
#include "tests.h"

/* ---- options ---- */

static int parse(struct fn_options *o, char *err, size_t len, const char *a1,
		 const char *a2, const char *a3, const char *a4)
{
	char *argv[6] = { (char *)"failnth", (char *)a1, (char *)a2, (char *)a3,
			  (char *)a4, NULL };
	int argc = 1;

	while (argc < 5 && argv[argc])
		argc++;
	fn_options_default(o);
	err[0] = '\0';
	return fn_parse_args(argc, argv, o, err, len);
}

static void test_failnth_options(struct tctx *t)
{
	struct fn_options o;
	char err[256];

	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", NULL, NULL) == 0);
	CHECK_STR(t, o.driver, "uvcvideo");
	CHECK(t, o.npaths == 2 && o.paths[0] == FN_PROBE && o.paths[1] == FN_DISCONNECT);
	CHECK(t, o.max == 500 && o.settle_ms == 200);
	CHECK(t, o.step_timeout_s == 120.0);
	CHECK_STR(t, o.root, "");

	CHECK(t, parse(&o, err, sizeof(err), "--driver=uvcvideo", "--paths",
		       "disconnect, probe", NULL) == 0);
	CHECK(t, o.npaths == 2 && o.paths[0] == FN_DISCONNECT && o.paths[1] == FN_PROBE);
	CHECK(t, parse(&o, err, sizeof(err), "--driver=uvcvideo", "--paths=disconnect",
		       "--max=7", NULL) == 0);
	CHECK(t, o.npaths == 1 && o.paths[0] == FN_DISCONNECT && o.max == 7);
	CHECK(t, parse(&o, err, sizeof(err), "--driver=x", "--settle-ms=0",
		       "--step-timeout", "2.5") == 0);
	CHECK(t, o.settle_ms == 0 && o.step_timeout_s == 2.5);

	CHECK(t, parse(&o, err, sizeof(err), "--paths", "probe", NULL, NULL) < 0);
	CHECK(t, strstr(err, "--driver is required") != NULL);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--paths", "probe probe") < 0);
	CHECK(t, strstr(err, "given twice") != NULL);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--paths", "suspend") < 0);
	CHECK(t, strstr(err, "unknown path 'suspend'") != NULL);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--paths", " , ") < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--max", "0") < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--max", "12x") < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--max", "1000001") < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--step-timeout", "0") < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "../x", NULL, NULL) < 0);
	CHECK(t, strstr(err, "not a driver name") != NULL);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "..", NULL, NULL) < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--bogus", NULL) < 0);
	CHECK(t, strstr(err, "unknown option '--bogus'") != NULL);
	CHECK(t, parse(&o, err, sizeof(err), "--driver", "uvcvideo", "--max", NULL) < 0);
	CHECK(t, strstr(err, "--max needs a value") != NULL);
	CHECK(t, parse(&o, err, sizeof(err), "uvcvideo", NULL, NULL, NULL) < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--max", "0", "--help", NULL) < 0);
	CHECK(t, parse(&o, err, sizeof(err), "--help", "--max", "0", NULL) == 0 && o.help);
}

/* ---- names ---- */

static void test_failnth_names(struct tctx *t)
{
	static const char *const good[] = { "1-1:1.0", "1-1:1.1", "3-1.4.2:1.10",
					    "10-12:2.3" };
	static const char *const bad[] = { "usb1", "1-1", "1-1:1", "1-1:1.0x",
					   "bind", "unbind", "module", "new_id",
					   "1-:1.0", "-1:1.0", "1-1.:1.0", "1-1:.0",
					   "1-1:1.", "", ".", "1-1:1.0:1.0" };
	struct fn_names set;
	char out[256];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(t, fn_is_interface_name(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (fn_is_interface_name(bad[i])) {
			t->checks_failed++;
			fprintf(stderr, "    '%s' taken for an interface\n", bad[i]);
		}

	CHECK(t, fn_name_cmp("1-1:1.2", "1-1:1.10") < 0);
	CHECK(t, fn_name_cmp("1-1:1.10", "1-1:1.2") > 0);
	CHECK(t, fn_name_cmp("2-1:1.0", "10-1:1.0") < 0);
	CHECK(t, fn_name_cmp("1-1:1.0", "1-1.2:1.0") < 0);
	CHECK(t, fn_name_cmp("1-1:1.0", "1-1:1.0") == 0);
	CHECK(t, fn_name_cmp("1-01:1.0", "1-1:1.0") == 0);

	memset(&set, 0, sizeof(set));
	CHECK(t, fn_names_add(&set, "2-1:1.0") == 0);
	CHECK(t, fn_names_add(&set, "1-1:1.10") == 0);
	CHECK(t, fn_names_add(&set, "1-1:1.2") == 0);
	CHECK(t, fn_names_add(&set, "1-1:1.0") == 0);
	CHECK(t, fn_names_add(&set, "1-1:1.0") == 0);	/* once */
	CHECK(t, fn_names_add(&set, "1-10:1.0") == 0);
	CHECK(t, set.n == 5);
	fn_names_sort(&set);
	CHECK_STR(t, set.name[0], "1-1:1.0");
	CHECK_STR(t, set.name[1], "1-1:1.2");
	CHECK_STR(t, set.name[2], "1-1:1.10");
	CHECK_STR(t, set.name[3], "1-10:1.0");
	CHECK_STR(t, set.name[4], "2-1:1.0");
	CHECK(t, fn_names_find(&set, "1-10:1.0") == 3);
	CHECK(t, fn_names_find(&set, "1-1:1.1") == -1);

	fn_mask_format(&set, 0x5, out, sizeof(out));
	CHECK_STR(t, out, "1-1:1.0,1-1:1.10");
	fn_mask_format(&set, 0, out, sizeof(out));
	CHECK_STR(t, out, "-");
	fn_mask_format(&set, 0x3, out, 12);	/* a name that does not fit is left out */
	CHECK_STR(t, out, "1-1:1.0");

	/* 1-10 shares the characters of 1-1 but is another device */
	fn_names_keep_first_device(&set);
	CHECK(t, set.n == 3);
	CHECK_STR(t, set.name[2], "1-1:1.10");

	memset(&set, 0, sizeof(set));
	for (i = 0; i < FN_MAX_IFACES; i++) {
		char name[32];

		snprintf(name, sizeof(name), "1-1:1.%zu", i);
		CHECK(t, fn_names_add(&set, name) == 0);
	}
	CHECK(t, fn_names_add(&set, "1-2:1.0") == -1);
}

/* ---- a modelled driver behind fn_ops ---- */

struct model {
	struct fn_names set;
	uint32_t bound;
	unsigned int probe_calls;	/* injectable calls of a probe */
	unsigned int disconnect_calls;
	unsigned int tolerate_n;	/* this N's probe succeeds anyway */
	unsigned int claim_left_n;	/* this N's failed probe leaves [1] bound */
	unsigned int hang_n;		/* this N's write hangs */
	unsigned int die_n;		/* this N's task is killed */
	unsigned int rebind_fails_after; /* binds without fault fail after this many */
	int pid;
	unsigned int plain_binds;
	unsigned int faulted_writes;
	int out_fd;
	int broken_list;
};

static uint32_t all_bits(const struct fn_names *set)
{
	return (UINT32_C(1) << set->n) - 1;
}

static int model_bound(void *ctx, const struct fn_names *set, uint32_t *mask,
		       char *err, size_t errlen)
{
	struct model *m = ctx;

	(void)set;
	if (m->broken_list) {
		snprintf(err, errlen, "cannot list");
		return -1;
	}
	*mask = m->bound;
	return 0;
}

static int model_write(void *ctx, const char *attr, const char *intf,
		       unsigned int n, enum fn_path p, struct fn_write *w)
{
	struct model *m = ctx;
	int i = fn_names_find(&m->set, intf);
	bool bind = strcmp(attr, "bind") == 0;

	memset(w, 0, sizeof(*w));
	w->pid = ++m->pid;
	if (n > 0) {
		char line[256];

		m->faulted_writes++;
		(void)write_all(m->out_fd, line,
				   fn_format_begin(line, sizeof(line), p, n, w->pid));
	}
	if (n > 0 && n == m->hang_n) {
		w->hung = true;
		snprintf(w->died, sizeof(w->died), "timeout");
		return -1;
	}
	if (n > 0 && n == m->die_n) {
		snprintf(w->died, sizeof(w->died), "signal-9");
		return -1;
	}
	if (i < 0) {
		w->err = ENODEV;
		return 0;
	}
	if (bind) {
		if (m->bound & (UINT32_C(1) << i)) {
			w->err = EBUSY;
			return 0;
		}
		if (n == 0 && ++m->plain_binds > m->rebind_fails_after) {
			w->err = EIO;
			return 0;
		}
		if (i == 0 && n > 0 && n <= m->probe_calls) {
			w->injected = 1;
			if (n == m->tolerate_n) {
				m->bound = all_bits(&m->set);
				return 0;
			}
			w->err = ENOMEM;
			if (n == m->claim_left_n)
				m->bound |= 2;
			return 0;
		}
		m->bound |= i == 0 ? all_bits(&m->set) : UINT32_C(1) << i;
		return 0;
	}
	/* unbind: disconnect cannot fail; the control interface releases all */
	if (!(m->bound & (UINT32_C(1) << i))) {
		w->err = ENODEV;
		return 0;
	}
	if (i == 0 && n > 0 && n <= m->disconnect_calls)
		w->injected = 1;
	m->bound &= i == 0 ? 0 : ~(UINT32_C(1) << i);
	return 0;
}

static void model_settle(void *ctx, unsigned int ms)
{
	(void)ctx;
	(void)ms;
}

struct run {
	struct model m;
	struct fn_state s;
	struct fn_ops ops;
	FILE *out;
	char text[65536];
};

static void run_init(struct tctx *t, struct run *r, unsigned int max,
		     const char *paths)
{
	char err[128];

	memset(r, 0, sizeof(*r));
	fn_options_default(&r->s.opt);
	r->s.opt.driver = "uvcvideo";
	r->s.opt.max = max;
	CHECK(t, fn_parse_paths(paths, &r->s.opt, err, sizeof(err)) == 0);
	fn_names_add(&r->m.set, "1-1:1.0");
	fn_names_add(&r->m.set, "1-1:1.1");
	fn_names_add(&r->m.set, "1-1:1.2");
	r->s.set = r->m.set;
	r->m.bound = all_bits(&r->m.set);
	r->m.rebind_fails_after = UINT32_MAX;
	r->m.pid = 90;
	r->out = tmpfile();
	r->m.out_fd = r->out ? fileno(r->out) : -1;
	r->ops.ctx = &r->m;
	r->ops.out_fd = r->m.out_fd;
	r->ops.bound = model_bound;
	r->ops.write = model_write;
	r->ops.settle = model_settle;
}

/* Run the paths; the markers printed end up in r->text. */
static void run_go(struct run *r)
{
	size_t n;

	fn_run_paths(&r->s, &r->ops);
	if (!r->out)
		return;
	rewind(r->out);
	n = fread(r->text, 1, sizeof(r->text) - 1, r->out);
	r->text[n] = '\0';
	fclose(r->out);
	r->out = NULL;
}

static unsigned int count_lines(const char *text, const char *needle)
{
	unsigned int n = 0;
	const char *p = text;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

static void test_failnth_probe_completes(struct tctx *t)
{
	struct run *r = calloc(1, sizeof(*r));
	const struct fn_path_run *pr;
	unsigned int i;

	if (!r) {
		t->checks_failed++;
		return;
	}
	run_init(t, r, 500, "probe");
	r->m.probe_calls = 7;
	r->m.tolerate_n = 5;
	r->m.claim_left_n = 3;
	run_go(r);
	pr = &r->s.path[FN_PROBE];
	CHECK(t, pr->ran && !r->s.path[FN_DISCONNECT].ran);
	CHECK(t, pr->nsteps == 8);
	CHECK(t, pr->completed && !pr->capped);
	CHECK_STR(t, pr->error, "");
	for (i = 0; i < pr->nsteps && i < 8; i++) {
		const struct fn_step *st = &pr->steps[i];

		CHECK(t, st->n == i + 1);
		CHECK(t, st->injected == (i < 7));
		if (i + 1 == 5 || i == 7)
			CHECK(t, st->err == 0 && st->bound_after == 7);
		else if (i + 1 == 3)
			CHECK(t, st->err == ENOMEM && st->bound_after == 2);
		else
			CHECK(t, st->err == ENOMEM && st->bound_after == 0);
	}
	CHECK(t, pr->bound_at_end == 7);
	CHECK(t, r->m.bound == 7);
	/* pids: each step's task is a new one, the plain writes between too */
	CHECK(t, pr->nsteps == 8 && pr->steps[0].pid != pr->steps[1].pid);
	CHECK(t, count_lines(r->text, " begin\n") == 8);
	CHECK(t, count_lines(r->text, " end injected=") == 8);
	CHECK(t, strstr(r->text, "DMAHARNESS-FAILNTH step path=probe n=3 pid=") != NULL);
	CHECK(t, strstr(r->text, " end injected=1 errno=12 bound=1-1:1.1\n") != NULL);
	CHECK(t, strstr(r->text, "n=8 pid=") != NULL);
	CHECK(t, strstr(r->text, " end injected=0 errno=0 bound=1-1:1.0,1-1:1.1,1-1:1.2\n") != NULL);
	CHECK(t, strstr(r->text, " end injected=1 errno=12 bound=-\n") != NULL);
	/* every begin line comes before its end line, one step at a time */
	{
		const char *b = strstr(r->text, "path=probe n=2 pid=");
		const char *e = b ? strstr(b, " end ") : NULL;
		const char *b3 = strstr(r->text, "path=probe n=3 pid=");

		CHECK(t, b && e && b3 && e < b3);
		CHECK(t, b && strncmp(strchr(b, '\n') - 5, "begin", 5) == 0);
	}
	fn_state_free(&r->s);
	free(r);
}

static void test_failnth_cap_and_disconnect(struct tctx *t)
{
	struct run *r = calloc(1, sizeof(*r));
	const struct fn_path_run *pr, *dr;
	unsigned int i;

	if (!r) {
		t->checks_failed++;
		return;
	}
	run_init(t, r, 3, "probe disconnect");
	r->m.probe_calls = 7;
	r->m.disconnect_calls = 2;
	run_go(r);
	pr = &r->s.path[FN_PROBE];
	dr = &r->s.path[FN_DISCONNECT];
	CHECK(t, pr->nsteps == 3 && pr->capped && !pr->completed);
	CHECK(t, pr->bound_at_end == 7);	/* bound again after the cap */
	CHECK(t, dr->nsteps == 3 && dr->completed && !dr->capped);
	for (i = 0; i < dr->nsteps && i < 3; i++) {
		CHECK(t, dr->steps[i].injected == (i < 2));
		CHECK(t, dr->steps[i].err == 0 && dr->steps[i].bound_after == 0);
	}
	CHECK(t, dr->bound_at_end == 7);
	CHECK(t, count_lines(r->text, "path=disconnect n=") == 6);
	CHECK(t, r->m.faulted_writes == 6);
	fn_state_free(&r->s);
	free(r);
}

static void test_failnth_hang_stops_everything(struct tctx *t)
{
	struct run *r = calloc(1, sizeof(*r));
	const struct fn_path_run *pr, *dr;

	if (!r) {
		t->checks_failed++;
		return;
	}
	run_init(t, r, 500, "probe,disconnect");
	r->m.probe_calls = 7;
	r->m.hang_n = 2;
	run_go(r);
	pr = &r->s.path[FN_PROBE];
	dr = &r->s.path[FN_DISCONNECT];
	CHECK(t, pr->nsteps == 2 && !pr->completed && !pr->capped);
	CHECK(t, pr->nsteps == 2 && pr->steps[1].injected == -1);
	CHECK_STR(t, pr->nsteps == 2 ? pr->steps[1].died : "", "timeout");
	CHECK(t, strstr(pr->error, "n=2: the task writing 1-1:1.0 to bind did not return") != NULL);
	CHECK(t, dr->ran && dr->nsteps == 0);
	CHECK(t, strstr(dr->error, "not run") != NULL);
	CHECK(t, strstr(r->text, "n=2 pid=93 end injected=? errno=0 bound=- died=timeout\n") != NULL);
	/* nothing written after the hang: no rebind */
	CHECK(t, r->m.bound == 0);
	fn_state_free(&r->s);
	free(r);
}

static void test_failnth_death_and_rebind_failure(struct tctx *t)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r) {
		t->checks_failed++;
		return;
	}
	run_init(t, r, 500, "probe disconnect");
	r->m.probe_calls = 7;
	r->m.die_n = 4;
	run_go(r);
	/* a killed task ends its path; the next path still runs */
	CHECK(t, r->s.path[FN_PROBE].nsteps == 4);
	CHECK(t, strstr(r->s.path[FN_PROBE].error, "ended without reporting back (signal-9)") != NULL);
	CHECK(t, r->s.path[FN_DISCONNECT].completed);
	fn_state_free(&r->s);
	free(r);

	r = calloc(1, sizeof(*r));
	if (!r) {
		t->checks_failed++;
		return;
	}
	run_init(t, r, 500, "probe");
	r->m.probe_calls = 7;
	r->m.claim_left_n = 7;		/* the last failing N leaves [1] bound */
	r->m.rebind_fails_after = 0;
	run_go(r);
	/*
	 * what step 7 left bound is unbound before step 8, whose probe binds
	 * everything: no bind without a fault is needed (they would fail)
	 */
	CHECK(t, r->s.path[FN_PROBE].completed);
	CHECK(t, r->s.path[FN_PROBE].nsteps == 8);
	CHECK(t, r->s.path[FN_PROBE].steps[6].bound_after == 2);
	CHECK_STR(t, r->s.path[FN_PROBE].error, "");
	CHECK(t, r->s.path[FN_PROBE].bound_at_end == 7);
	fn_state_free(&r->s);
	free(r);

	r = calloc(1, sizeof(*r));
	if (!r) {
		t->checks_failed++;
		return;
	}
	run_init(t, r, 2, "disconnect");
	r->m.disconnect_calls = 7;
	r->m.rebind_fails_after = 0;	/* rebinding before step 2 fails */
	run_go(r);
	CHECK(t, r->s.path[FN_DISCONNECT].nsteps == 1);
	CHECK(t, strstr(r->s.path[FN_DISCONNECT].error,
			"could not bind the interfaces without a fault: bound - (last errno 5)") != NULL);
	CHECK(t, r->s.path[FN_DISCONNECT].bound_at_end == 0);
	fn_state_free(&r->s);
	free(r);
}

static void test_failnth_result_json(struct tctx *t)
{
	struct run *r = calloc(1, sizeof(*r));
	struct jw w;
	char v[512];

	if (!r) {
		t->checks_failed++;
		return;
	}
	run_init(t, r, 500, "disconnect probe");
	r->m.probe_calls = 2;
	r->m.disconnect_calls = 1;
	run_go(r);
	jw_init(&w);
	fn_result_json(&w, &r->s);
	CHECK(t, jw_done(&w));
	CHECK(t, w.buf && json_valid(w.buf));
	if (w.buf) {
		CHECK(t, json_field(w.buf, "version", v, sizeof(v)));
		CHECK_STR(t, v, "1");
		CHECK(t, json_field(w.buf, "interfaces", v, sizeof(v)));
		CHECK_STR(t, v, "[\"1-1:1.0\",\"1-1:1.1\",\"1-1:1.2\"]");
		/* the paths in the order run */
		CHECK(t, json_field(w.buf, "paths", v, sizeof(v)));
		CHECK(t, strncmp(v, "{\"disconnect\":{\"steps\":[{\"n\":1,", 31) == 0);
		CHECK(t, strstr(w.buf, "{\"n\":3,\"pid\":") != NULL);
		CHECK(t, strstr(w.buf, "\"injected\":false,\"errno\":0,\"bound_after\":"
				"[\"1-1:1.0\",\"1-1:1.1\",\"1-1:1.2\"],\"died\":null}],"
				"\"completed\":true,\"capped\":false,\"error\":null,"
				"\"bound_at_end\":[\"1-1:1.0\",\"1-1:1.1\",\"1-1:1.2\"]}}") != NULL);
		CHECK(t, strstr(w.buf, "\"errno\":12,\"bound_after\":[],") != NULL);
		CHECK(t, json_field(w.buf, "error", v, sizeof(v)));
		CHECK_STR(t, v, "null");
		CHECK(t, json_field(w.buf, "exit_code", v, sizeof(v)));
		CHECK_STR(t, v, "0");
	}
	jw_free(&w);
	fn_state_free(&r->s);
	free(r);

	/* a set-up failure: no paths, the error */
	{
		struct fn_state s;
		int pfd[2];
		char line[1024];
		ssize_t n;

		memset(&s, 0, sizeof(s));
		fn_options_default(&s.opt);
		s.opt.driver = "uvc\"video";
		snprintf(s.error, sizeof(s.error), "/sys/kernel/debug/failslab/ignore-gfp-wait: No such file");
		s.exit_code = EXIT_FAILNTH_SETUP;
		CHECK(t, pipe(pfd) == 0);
		CHECK(t, fn_emit_result(pfd[1], &s) == 0);
		close(pfd[1]);
		n = read(pfd[0], line, sizeof(line) - 1);
		close(pfd[0]);
		CHECK(t, n > 0);
		line[n > 0 ? n : 0] = '\0';
		CHECK(t, strncmp(line, FAILNTH_LINE_PREFIX "{", 20) == 0);
		CHECK(t, n > 0 && line[n - 1] == '\n' && strchr(line, '\n') == line + n - 1);
		if (n > 0)
			line[n - 1] = '\0';
		CHECK(t, json_valid(line + strlen(FAILNTH_LINE_PREFIX)));
		CHECK(t, strstr(line, "\"driver\":\"uvc\\\"video\"") != NULL);
		CHECK(t, strstr(line, "\"paths\":{}") != NULL);
		CHECK(t, strstr(line, "\"exit_code\":5}") != NULL);
	}
}

static void test_failnth_markers(struct tctx *t)
{
	struct fn_names set;
	struct fn_step st;
	char line[512];
	size_t n;

	memset(&set, 0, sizeof(set));
	fn_names_add(&set, "1-1:1.0");
	fn_names_add(&set, "1-1:1.1");
	n = fn_format_begin(line, sizeof(line), FN_PROBE, 3, 93);
	CHECK_STR(t, line, "DMAHARNESS-FAILNTH step path=probe n=3 pid=93 begin\n");
	CHECK(t, n == strlen(line));
	memset(&st, 0, sizeof(st));
	st.n = 3;
	st.pid = 93;
	st.injected = 1;
	st.err = 12;
	st.bound_after = 3;
	n = fn_format_end(line, sizeof(line), &set, FN_PROBE, &st);
	CHECK_STR(t, line, "DMAHARNESS-FAILNTH step path=probe n=3 pid=93 end injected=1 errno=12 bound=1-1:1.0,1-1:1.1\n");
	CHECK(t, n == strlen(line));
	st.injected = -1;
	st.bound_after = 0;
	snprintf(st.died, sizeof(st.died), "signal-9");
	fn_format_end(line, sizeof(line), &set, FN_DISCONNECT, &st);
	CHECK_STR(t, line, "DMAHARNESS-FAILNTH step path=disconnect n=3 pid=93 end injected=? errno=12 bound=- died=signal-9\n");
	/* a short buffer: cut, still terminated, length within */
	n = fn_format_end(line, 20, &set, FN_PROBE, &st);
	CHECK(t, n == 19 && strlen(line) == 19);
}

TEST_LIST(failnth_tests,
	{ "failnth_options", test_failnth_options, false },
	{ "failnth_names", test_failnth_names, false },
	{ "failnth_markers", test_failnth_markers, false },
	{ "failnth_probe_completes", test_failnth_probe_completes, false },
	{ "failnth_cap_and_disconnect", test_failnth_cap_and_disconnect, false },
	{ "failnth_hang_stops_everything", test_failnth_hang_stops_everything, false },
	{ "failnth_death_and_rebind_failure", test_failnth_death_and_rebind_failure, false },
	{ "failnth_result_json", test_failnth_result_json, false }
)
