/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest agent's unit tests: the check macros, the test tables of each
 * file (test_main.c runs them in order), the strict JSON validator
 * (jsoncheck.c) and the helpers that run the agent against the simulated
 * camera (sim_run.c, fake_v4l2.h).
 */
#ifndef DMAHARNESS_AGENT_TESTS_H
#define DMAHARNESS_AGENT_TESTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "json.h"

#include "fake_v4l2.h"

struct tctx {
	int checks_failed;
	const char *agent;	/* the built binary (argv[1]), or NULL */
	const char *failnth;	/* build/dmaharness-failnth (argv[2]), or NULL */
};

#define CHECK(t, cond)							\
	do {								\
		if (!(cond)) {						\
			(t)->checks_failed++;				\
			fprintf(stderr, "    %s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
		}							\
	} while (0)

#define CHECK_STR(t, got, want)						\
	do {								\
		const char *g_ = (got), *w_ = (want);			\
		if (!g_ || strcmp(g_, w_) != 0) {			\
			(t)->checks_failed++;				\
			fprintf(stderr, "    %s:%d: got '%s', want '%s'\n", \
				__FILE__, __LINE__, g_ ? g_ : "(null)", w_); \
		}							\
	} while (0)

struct test {
	const char *name;
	void (*fn)(struct tctx *t);
	unsigned int needs;	/* NEEDS_AGENT (true), NEEDS_FAILNTH: runs it */
};

#define NEEDS_AGENT		1u	/* the built agent, argv[1] */
#define NEEDS_FAILNTH		2u	/* build/dmaharness-failnth, argv[2] */

#define TEST_LIST(name, ...)						\
	const struct test *name(size_t *n)				\
	{								\
		static const struct test t[] = { __VA_ARGS__ };		\
		*n = sizeof(t) / sizeof(t[0]);				\
		return t;						\
	}

const struct test *json_tests(size_t *n);
const struct test *options_tests(size_t *n);
const struct test *counters_tests(size_t *n);
const struct test *sim_tests(size_t *n);
const struct test *sim_cameras_tests(size_t *n);
const struct test *hold_tests(size_t *n);
const struct test *cli_tests(size_t *n);
const struct test *failnth_tests(size_t *n);
const struct test *failnth_cli_tests(size_t *n);

/* test_cli.c: run a built binary, its stdout in out */
struct cli_run {
	int status;		/* exit code, or 128 + signal */
	char out[65536];
	double secs;
};
bool run_binary(const char *path, const char *const *args, int term_ms,
		struct cli_run *r);

/* jsoncheck.c */
bool json_valid(const char *s);
bool json_field(const char *s, const char *key, char *out, size_t len);

/* sim_run.c: the agent against the model, in virtual time */
#define SIM_NO_KALLSYMS	"/nonexistent/dmaharness-test-kallsyms"
struct agent *sim_agent(void);
bool sim_run(struct agent *a);
void sim_json(struct tctx *t, struct agent *a, int code, struct jw *w);
void sim_free(struct agent *a);
uint64_t series_sum(const struct series *s, size_t off);
#define SERIES_SUM(s, f) series_sum((s), offsetof(struct bucket, f))
void check_truth(struct tctx *t, const struct camera *c,
		 const struct sim_cam *sc);
void check_documented_fields(struct tctx *t, const char *j);

#endif
