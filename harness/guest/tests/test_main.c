// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the pure logic of the guest agent (JSON writer, argument
 * parsing, sequence-gap counting, rate scheduling, per-second series, error
 * and control tables), runs against a simulated camera, and command-line
 * checks of the built binary (argv[1]).  The test binary links the agent's
 * objects (all but main.o); the last line printed is "N passed, N failed".
 */
#include <stdio.h>

#include "tests.h"

int main(int argc, char **argv)
{
	const struct test *(*const lists[])(size_t *) = {
		json_tests, options_tests, counters_tests, sim_tests,
		sim_cameras_tests, cli_tests,
	};
	const char *agent = argc > 1 ? argv[1] : NULL;
	unsigned int passed = 0, failed = 0;
	size_t l, i, n;

	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		const struct test *tests = lists[l](&n);

		for (i = 0; i < n; i++) {
			struct tctx t = { 0, agent };

			if (tests[i].needs_agent && !agent) {
				printf("FAIL %s (no agent binary given as argv[1])\n",
				       tests[i].name);
				failed++;
				continue;
			}
			tests[i].fn(&t);
			printf("%s %s\n", t.checks_failed ? "FAIL" : "ok  ",
			       tests[i].name);
			fflush(stdout);
			if (t.checks_failed)
				failed++;
			else
				passed++;
		}
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}
