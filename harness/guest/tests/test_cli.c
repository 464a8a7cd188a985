// SPDX-License-Identifier: GPL-2.0-only
/* Command-line checks of the built binary (tctx.agent, argv[1]). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocol.h"
#include "tests.h"
#include "timing.h"

/* Run a binary with args; send SIGTERM after term_ms (0: never). */
bool run_binary(const char *agent, const char *const *args, int term_ms,
		struct cli_run *r)
{
	const char *argv[32];
	int pfd[2], st, i, n = 0;
	uint64_t start = now_ns();
	size_t len = 0;
	pid_t pid;

	argv[n++] = agent;
	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe(pfd) < 0)
		return false;
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(pfd[1], STDOUT_FILENO);
		if (devnull >= 0)
			dup2(devnull, STDERR_FILENO);
		close(pfd[0]);
		execv(agent, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	if (term_ms > 0) {
		struct timespec ts = { term_ms / 1000,
				       (long)(term_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		kill(pid, SIGTERM);
	}
	for (;;) {
		ssize_t k = read(pfd[0], r->out + len, sizeof(r->out) - 1 - len);

		if (k <= 0)
			break;
		len += (size_t)k;
	}
	r->out[len] = '\0';
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0)
		return false;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->secs = (double)(now_ns() - start) / 1e9;
	return true;
}

/* The JSON of the single result line, or NULL. */
static const char *result_json(struct tctx *t, struct cli_run *r)
{
	char *line = strstr(r->out, AGENT_LINE_PREFIX);
	char *nl;

	CHECK(t, line == r->out);	/* nothing else on stdout before */
	if (!line)
		return NULL;
	nl = strchr(line, '\n');
	CHECK(t, nl && nl[1] == '\0');	/* exactly one line */
	if (nl)
		*nl = '\0';
	line += strlen(AGENT_LINE_PREFIX);
	CHECK(t, json_valid(line));
	return line;
}

static void test_cli_help(struct tctx *t)
{
	static const char *const args[] = { "--help", NULL };
	struct cli_run *r = calloc(1, sizeof(*r));

	if (!r || !run_binary(t->agent, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == 0);
	CHECK(t, strstr(r->out, "--cycle-hz") && strstr(r->out, "--phys-hz"));
	CHECK(t, strstr(r->out, "--hold MODE") && strstr(r->out, "--kallsyms"));
	CHECK(t, strstr(r->out, "Exit status") != NULL);
	/* no result line (the text mentions the prefix mid-line only) */
	CHECK(t, strncmp(r->out, AGENT_LINE_PREFIX, 17) != 0);
	CHECK(t, strstr(r->out, "\n" AGENT_LINE_PREFIX) == NULL);
	free(r);
}

/* A bad value: exit 64, and a result line naming it, with nothing decided */
static void test_cli_usage_error(struct tctx *t)
{
	static const char *const duration[] = { "--duration", "soon", NULL };
	static const char *const hold[] = { "--hold", "always", NULL };
	static const struct {
		const char *const *args;
		const char *error;	/* how the JSON error string starts */
	} cases[] = {
		{ duration, "\"usage: --duration" },
		{ hold, "\"usage: --hold: 'always' is not" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_run *r = calloc(1, sizeof(*r));
		const char *j;
		char v[256];

		if (!r || !run_binary(t->agent, cases[i].args, 0, r)) {
			t->checks_failed++;
			free(r);
			return;
		}
		CHECK(t, r->status == EXIT_AGENT_USAGE);
		j = result_json(t, r);
		if (j) {
			CHECK(t, json_field(j, "version", v, sizeof(v)));
			CHECK_STR(t, v, "1");
			CHECK(t, json_field(j, "error", v, sizeof(v)));
			CHECK(t, strncmp(v, cases[i].error, strlen(cases[i].error)) == 0);
			CHECK(t, json_field(j, "exit_code", v, sizeof(v)));
			CHECK_STR(t, v, "64");
			/* nothing was decided: the hold is null */
			CHECK(t, strstr(j, "\"hold\":null,\"hold_reason\":null") != NULL);
		}
		free(r);
	}
}

static void test_cli_no_camera(struct tctx *t)
{
	static const char *const args[] = { "--device", "/nonexistent/video9",
					    "--wait", "0.3", "--series", NULL };
	struct cli_run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[512];

	if (!r || !run_binary(t->agent, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	CHECK(t, r->secs >= 0.25 && r->secs < 5.0);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strstr(v, "no uvcvideo camera appeared within 0.3 s"));
		CHECK(t, strstr(v, "/nonexistent/video9: open: No such file"));
		CHECK(t, json_field(j, "stopped_by", v, sizeof(v)));
		CHECK_STR(t, v, "\"wait-timeout\"");
		CHECK(t, json_field(j, "cameras_found", v, sizeof(v)));
		CHECK_STR(t, v, "0");
	}
	free(r);
}

static void test_cli_not_v4l2(struct tctx *t)
{
	static const char *const args[] = { "--device", "/dev/null",
					    "--wait", "0", NULL };
	struct cli_run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[512];

	if (!r || !run_binary(t->agent, args, 0, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strstr(v, "/dev/null: VIDIOC_QUERYCAP") != NULL);
	}
	free(r);
}

static void test_cli_output_file(struct tctx *t)
{
	char path[] = "/tmp/dmaharness-agent-test-XXXXXX";
	const char *args[] = { "--device", "/nonexistent/video9", "--wait",
			       "0", "--output", path, NULL };
	struct cli_run *r = calloc(1, sizeof(*r));
	char file[65536];
	ssize_t n;
	int fd;

	fd = mkstemp(path);
	if (!r || fd < 0 || !run_binary(t->agent, args, 0, r)) {
		t->checks_failed++;
		free(r);
		if (fd >= 0)
			close(fd);
		return;
	}
	n = read(fd, file, sizeof(file) - 1);
	close(fd);
	unlink(path);
	CHECK(t, n > 0);
	if (n > 0) {
		file[n] = '\0';
		/* the same single line as on stdout */
		CHECK_STR(t, file, r->out);
		CHECK(t, strncmp(file, AGENT_LINE_PREFIX, 17) == 0);
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	free(r);
}

static void test_cli_sigterm(struct tctx *t)
{
	static const char *const args[] = { "--device", "/nonexistent/video9",
					    "--wait", "30", NULL };
	struct cli_run *r = calloc(1, sizeof(*r));
	const char *j;
	char v[512];

	if (!r || !run_binary(t->agent, args, 300, r)) {
		t->checks_failed++;
		free(r);
		return;
	}
	CHECK(t, r->status == EXIT_AGENT_NO_CAMERA);
	CHECK(t, r->secs < 5.0);
	j = result_json(t, r);
	if (j) {
		CHECK(t, json_field(j, "stopped_by", v, sizeof(v)));
		CHECK_STR(t, v, "\"signal:SIGTERM\"");
		CHECK(t, json_field(j, "error", v, sizeof(v)));
		CHECK(t, strstr(v, "before any camera appeared") != NULL);
	}
	free(r);
}

/* --check: the verdict on a command line, and nothing run or written */
static void test_cli_check(struct tctx *t)
{
	static const char *const good[] = { "--check", "--duration", "20s",
					    "--cameras", "2", "--set-async",
					    "--output", "/nonexistent/never-written",
					    NULL };
	static const char *const bad[] = { "--check", "--output",
					   "dmaharness-check-never-written",
					   "--cameras", "9", NULL };
	static const char *const help[] = { "--check", "--help", NULL };
	static const struct {
		const char *const *args;
		int status;
	} cases[] = {
		{ good, 0 },
		{ bad, EXIT_AGENT_USAGE },
		{ help, EXIT_AGENT_USAGE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cli_run *r = calloc(1, sizeof(*r));

		if (!r || !run_binary(t->agent, cases[i].args, 0, r)) {
			t->checks_failed++;
			free(r);
			return;
		}
		CHECK(t, r->status == cases[i].status);
		CHECK(t, r->out[0] == '\0');	/* no result line, no help */
		CHECK(t, r->secs < 5.0);
		free(r);
	}
	CHECK(t, access("dmaharness-check-never-written", F_OK) != 0);
}

TEST_LIST(cli_tests,
	{ "cli_help", test_cli_help, true },
	{ "cli_check", test_cli_check, true },
	{ "cli_usage_error", test_cli_usage_error, true },
	{ "cli_no_camera", test_cli_no_camera, true },
	{ "cli_not_v4l2", test_cli_not_v4l2, true },
	{ "cli_sigterm", test_cli_sigterm, true },
	{ "cli_output_file", test_cli_output_file, true }
)
