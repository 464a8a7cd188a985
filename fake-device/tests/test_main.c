// SPDX-License-Identifier: MIT
/* Runs every C test in one cmocka group and prints "N passed, N failed". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

int main(void)
{
	const struct CMUnitTest *(*lists[])(size_t *) = {
		desc_tests, camera_tests, flood_tests, loopback_tests,
		profile_tests, pmodel_tests, plan_tests,
	};
	struct CMUnitTest all[256];
	size_t total = 0;
	int failed;

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		size_t n;
		const struct CMUnitTest *t = lists[i](&n);

		if (total + n > sizeof(all) / sizeof(all[0])) {
			fprintf(stderr, "too many tests\n");
			return 2;
		}
		memcpy(&all[total], t, n * sizeof(*t));
		total += n;
	}
	failed = _cmocka_run_group_tests("fake-uvc", all, total, NULL, NULL);
	printf("%zu passed, %d failed\n", total - (size_t)failed, failed);
	fflush(stdout);
	return failed ? 1 : 0;
}
