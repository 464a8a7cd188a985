// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the pure logic of the guest agent (JSON writer, argument
 * parsing, sequence-gap counting, rate scheduling, per-second series, error
 * and control tables), runs against a simulated camera, and command-line
 * checks of the built binary (argv[1]); then dmaharness-failnth's logic
 * against a modelled driver and checks of its binary (argv[2]).  The test
 * binary links the objects of both (all but main.o and failnth_main.o); the
 * last line printed is "N passed, N failed".
 */
#include <stdio.h>

#include "tests.h"

int main(int argc, char **argv)
{
	const struct test *(*const lists[])(size_t *) = {
		json_tests, options_tests, counters_tests, sim_tests,
		sim_cameras_tests, hold_tests, cli_tests, failnth_tests,
		failnth_cli_tests,
	};
	const char *agent = argc > 1 ? argv[1] : NULL;
	const char *failnth = argc > 2 ? argv[2] : NULL;
	unsigned int passed = 0, failed = 0;
	size_t l, i, n;

	for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		const struct test *tests = lists[l](&n);

		for (i = 0; i < n; i++) {
			struct tctx t = { 0, agent, failnth };

			if ((tests[i].needs & NEEDS_AGENT) && !agent) {
				printf("FAIL %s (no agent binary given as argv[1])\n",
				       tests[i].name);
				failed++;
				continue;
			}
			if ((tests[i].needs & NEEDS_FAILNTH) && !failnth) {
				printf("FAIL %s (no dmaharness-failnth given as argv[2])\n",
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
