// SPDX-License-Identifier: GPL-2.0-only
/*
 * dmaharness-failnth: fail the Nth allocation of a USB driver's probe and
 * disconnect, N = 1, 2, ... (the layout of its files: failnth.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "failnth.h"
#include "failnth_names.h"
#include "failnth_options.h"
#include "failnth_result.h"
#include "failnth_steps.h"
#include "failnth_sys.h"

static int finish(struct fn_state *s, int code)
{
	s->exit_code = code;
	if (s->error[0])
		fprintf(stderr, FAILNTH_NAME ": %s\n", s->error);
	if (fn_emit_result(STDOUT_FILENO, s) < 0 && code == EXIT_FAILNTH_OK)
		code = EXIT_FAILNTH_SETUP;
	fn_state_free(s);
	return code;
}

int main(int argc, char **argv)
{
	static struct fn_state s;
	struct fn_ops ops;
	struct fn_sys y;

	fn_options_default(&s.opt);
	if (fn_parse_args(argc, argv, &s.opt, s.error, sizeof(s.error)) < 0) {
		char msg[sizeof(s.error)];

		snprintf(msg, sizeof(msg), "%s", s.error);
		fn_fmt(s.error, sizeof(s.error), "usage: %s", msg);
		return finish(&s, EXIT_FAILNTH_USAGE);
	}
	if (s.opt.help) {
		fputs(failnth_usage, stdout);
		return EXIT_FAILNTH_OK;
	}
	fn_sys_init(&y, &s.opt, STDOUT_FILENO);
	if (fn_sys_setup_faults(&y, s.error, sizeof(s.error)) < 0)
		return finish(&s, EXIT_FAILNTH_SETUP);
	if (fn_sys_list(&y, &s.set, s.error, sizeof(s.error)) < 0)
		return finish(&s, EXIT_FAILNTH_SETUP);
	if (s.set.n == 0) {
		fn_fmt(s.error, sizeof(s.error), "no USB interface is bound to %s (%s)",
		       s.opt.driver, y.drvdir);
		return finish(&s, EXIT_FAILNTH_SETUP);
	}
	fn_names_keep_first_device(&s.set);

	fn_sys_ops(&y, &ops);
	fn_run_paths(&s, &ops);
	return finish(&s, EXIT_FAILNTH_OK);
}
