// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checks of the built dmaharness-failnth (tctx.failnth, argv[2]): --help,
 * usage errors, set-up errors naming the missing file, and a run on a fake
 * /sys and /proc tree (--root; regular files stand in for the kernel's, so
 * fail-nth reads back what was written: never injected).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "failnth.h"
#include "tests.h"

/* mkdir -p below root; false on failure. */
static bool mkdirs(const char *root, const char *rel)
{
	char path[PATH_MAX];
	size_t i, base = strlen(root) + 1;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (i = base; ; i++) {
		if (path[i] == '/' || path[i] == '\0') {
			char c = path[i];

			path[i] = '\0';
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				return false;
			path[i] = c;
			if (c == '\0')
				return true;
		}
	}
}

static bool touch(const char *root, const char *rel)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static bool read_file(const char *root, const char *rel, char *out, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return false;
	out[n] = '\0';
	return true;
}

#define DRV "sys/bus/usb/drivers/uvcvideo"

/* A tree with every file the tool wants; pieces left out by `omit`. */
static bool fake_tree(char *root, size_t len, const char *omit)
{
	static const char *const dirs[] = {
		"proc/thread-self", "sys/kernel/debug/failslab",
		"sys/kernel/debug/fail_page_alloc", DRV "/1-1:1.0",
		DRV "/1-1:1.1", DRV "/2-1:1.0", DRV "/module",
	};
	static const char *const files[] = {
		"proc/thread-self/fail-nth",
		"sys/kernel/debug/failslab/ignore-gfp-wait",
		"sys/kernel/debug/failslab/verbose",
		"sys/kernel/debug/fail_page_alloc/ignore-gfp-wait",
		"sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem",
		"sys/kernel/debug/fail_page_alloc/min-order",
		"sys/kernel/debug/fail_page_alloc/verbose",
		DRV "/bind", DRV "/unbind", DRV "/new_id",
	};
	size_t i;

	snprintf(root, len, "/tmp/dmaharness-failnth-test-XXXXXX");
	if (!mkdtemp(root))
		return false;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if ((!omit || !strstr(dirs[i], omit)) && !mkdirs(root, dirs[i]))
			return false;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if ((!omit || !strstr(files[i], omit)) && !touch(root, files[i]))
			return false;
	return true;
}

static void rm_tree(const char *root)
{
	char cmd[PATH_MAX + 16];

	if (strncmp(root, "/tmp/dmaharness-failnth-test-", 29) != 0)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "    could not remove %s\n", root);
}

/* The JSON of the result line, which must be the last line of stdout. */
static const char *result_json(struct tctx *t, struct cli_run *r)
{
	char *line = strstr(r->out, FAILNTH_LINE_PREFIX "{");
	char *nl;

	CHECK(t, line != NULL);
	if (!line)
		return NULL;
	nl = strchr(line, '\n');
	CHECK(t, nl && nl[1] == '\0');
	if (nl)
		*nl = '\0';
	line += strlen(FAILNTH_LINE_PREFIX);
	CHECK(t, json_valid(line));
	return line;
}

static void test_failnth_cli_help(struct tctx *t)
{
	static const char *const args[] = { "--help", NULL };
	struct cli_run *r = calloc(1, sizeof(*r));

	if (!r || !run_binary(t->failnth, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == 0);
	CHECK(t, strstr(r->out, "--paths") && strstr(r->out, "--max"));
	CHECK(t, strstr(r->out, "ignore-gfp-wait") != NULL);
	CHECK(t, strstr(r->out, "Exit status") != NULL);
	CHECK(t, strstr(r->out, FAILNTH_LINE_PREFIX "{\"") == NULL);
	free(r);
}

static void test_failnth_cli_usage(struct tctx *t)
{
	static const char *const args[] = { "--driver", "uvcvideo", "--paths",
					    "resume", NULL };
	struct cli_run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[256];

	if (!r || !run_binary(t->failnth, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_FAILNTH_USAGE);
	CHECK(t, strncmp(r->out, FAILNTH_LINE_PREFIX, strlen(FAILNTH_LINE_PREFIX)) == 0);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strncmp(v, "\"usage: --paths: unknown path 'resume'", 38) == 0);
		CHECK(t, json_field(j, "exit_code", v, sizeof(v)));
		CHECK_STR(t, v, "64");
	}
	free(r);
}

/* Run on a fake tree missing `omit`; the error must contain `want`. */
static void setup_error(struct tctx *t, const char *omit, const char *want)
{
	struct cli_run *r = calloc(1, sizeof(*r));
	char root[PATH_MAX];
	const char *args[] = { "--driver", "uvcvideo", "--root", root, NULL };
	const char *j;
	char v[1024];

	if (!r || !fake_tree(root, sizeof(root), omit) ||
	    !run_binary(t->failnth, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_FAILNTH_SETUP);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		if (!strstr(v, want)) {
			t->checks_failed++;
			fprintf(stderr, "    error %s lacks '%s'\n", v, want);
		}
		CHECK(t, strstr(j, "\"paths\":{}") != NULL);
	}
	rm_tree(root);
	free(r);
}

static void test_failnth_cli_setup_errors(struct tctx *t)
{
	setup_error(t, "proc/thread-self/fail-nth",
		    "/proc/thread-self/fail-nth: No such file or directory (the kernel needs CONFIG_FAULT_INJECTION)");
	setup_error(t, "sys/kernel/debug/failslab/ignore-gfp-wait",
		    "/sys/kernel/debug/failslab/ignore-gfp-wait: No such file or directory (the kernel needs CONFIG_FAILSLAB");
	setup_error(t, "sys/kernel/debug/fail_page_alloc/min-order",
		    "/sys/kernel/debug/fail_page_alloc/min-order: No such file or directory (the kernel needs CONFIG_FAIL_PAGE_ALLOC");
	setup_error(t, ":1.",
		    "no USB interface is bound to uvcvideo");
	setup_error(t, "sys/bus", "/sys/bus/usb/drivers/uvcvideo: No such file or directory (is the driver's module loaded?)");
}

static void test_failnth_cli_fake_tree(struct tctx *t)
{
	struct cli_run *r = calloc(1, sizeof(*r));
	char root[PATH_MAX], v[1024];
	const char *args[] = { "--driver", "uvcvideo", "--root", root,
			       "--settle-ms", "0", NULL };
	const char *j, *b, *e;

	if (!r || !fake_tree(root, sizeof(root), NULL) ||
	    !run_binary(t->failnth, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == 0);
	/* the disconnect step: begin, end, in that order */
	b = strstr(r->out, FAILNTH_STEP_PREFIX "path=disconnect n=1 pid=");
	e = b ? strstr(b, " end injected=0 errno=0 bound=1-1:1.0,1-1:1.1\n") : NULL;
	CHECK(t, b && e);
	CHECK(t, b == r->out);
	CHECK(t, b && strncmp(strchr(b, '\n') - 6, " begin", 6) == 0);
	j = result_json(t, r);
	if (j) {
		/* the first device's interfaces only */
		CHECK(t, json_field(j, "interfaces", v, sizeof(v)));
		CHECK_STR(t, v, "[\"1-1:1.0\",\"1-1:1.1\"]");
		/* regular files cannot be unbound: the probe path stops at once */
		CHECK(t, strstr(j, "\"probe\":{\"steps\":[],\"completed\":false,"
				"\"capped\":false,\"error\":\"could not unbind the "
				"interfaces without a fault: bound 1-1:1.0,1-1:1.1") != NULL);
		CHECK(t, strstr(j, "\"disconnect\":{\"steps\":[{\"n\":1,\"pid\":") != NULL);
		CHECK(t, strstr(j, "\"injected\":false,\"errno\":0,") != NULL);
		CHECK(t, strstr(j, "\"completed\":true") != NULL);
		CHECK(t, strstr(j, "}},\"error\":null,\"exit_code\":0}") != NULL);
	}
	/* the knobs as set, and the writes of the interface's name */
	CHECK(t, read_file(root, "sys/kernel/debug/failslab/ignore-gfp-wait", v, sizeof(v)));
	CHECK_STR(t, v, "N");
	CHECK(t, read_file(root, "sys/kernel/debug/fail_page_alloc/min-order", v, sizeof(v)));
	CHECK_STR(t, v, "0");
	CHECK(t, read_file(root, "sys/kernel/debug/fail_page_alloc/verbose", v, sizeof(v)));
	CHECK_STR(t, v, "2");
	CHECK(t, read_file(root, DRV "/unbind", v, sizeof(v)));
	CHECK_STR(t, v, "1-1:1.0");
	/* disarmed after the step */
	CHECK(t, read_file(root, "proc/thread-self/fail-nth", v, sizeof(v)));
	CHECK(t, v[0] == '0');
	rm_tree(root);
	free(r);
}

TEST_LIST(failnth_cli_tests,
	{ "failnth_cli_help", test_failnth_cli_help, NEEDS_FAILNTH },
	{ "failnth_cli_usage", test_failnth_cli_usage, NEEDS_FAILNTH },
	{ "failnth_cli_setup_errors", test_failnth_cli_setup_errors, NEEDS_FAILNTH },
	{ "failnth_cli_fake_tree", test_failnth_cli_fake_tree, NEEDS_FAILNTH }
)
