// SPDX-License-Identifier: GPL-2.0-only
/* The agent's state as a whole (see agent.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "protocol.h"

/* Fresh state (a is zeroed by the caller). */
void agent_init(struct agent *a)
{
	unsigned int i;

	a->t0_ns = now_ns();
	for (i = 0; i < MAX_CAMERAS; i++) {
		a->cam[i].index = i;
		a->cam[i].fd = -1;
		a->cam[i].input_fd = -1;
		a->cam[i].hold_fd = -1;
	}
	options_default(&a->opt);
}

/* After option parsing: --device slots exist from the start. */
void agent_apply_options(struct agent *a)
{
	unsigned int i;

	a->ncam = a->opt.ndevices;
	for (i = 0; i < a->opt.ndevices; i++)
		snprintf(a->cam[i].video_path, sizeof(a->cam[i].video_path),
			 "%s", a->opt.devices[i]);
}

/* The wait phase found nothing: say why. */
void agent_wait_failed(struct agent *a)
{
	if (!a->stopped_by) {
		snprintf(a->error, sizeof(a->error),
			 "no uvcvideo camera appeared within %.1f s (%s)",
			 a->opt.wait_s, a->last_scan_note[0] ?
			 a->last_scan_note : "nothing scanned");
		a->stopped_by = "wait-timeout";
	} else {
		snprintf(a->error, sizeof(a->error),
			 "stopped by %s before any camera appeared",
			 a->stopped_by);
	}
}

/* Exit code after a run; sets the error string for failures. */
int agent_final_code(struct agent *a)
{
	if (a->stopped_by && strcmp(a->stopped_by, "error") == 0)
		return EXIT_AGENT_RUNTIME;
	if (cameras_found(a) < a->opt.cameras) {
		snprintf(a->error, sizeof(a->error),
			 "only %u of %u cameras appeared", cameras_found(a),
			 a->opt.cameras);
		return EXIT_AGENT_FEWER;
	}
	if (SUM(a, opens) == 0) {
		snprintf(a->error, sizeof(a->error),
			 "camera found but never opened (%s)",
			 a->errs.n ? a->errs.e[0].first_ctx : "see errors");
		return EXIT_AGENT_RUNTIME;
	}
	return EXIT_AGENT_OK;
}

void agent_err(struct agent *a, const char *op, int err,
	       const char *fmt, ...)
{
	char ctx[96], nb[16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	if (errtab_add(&a->errs, op, err, ctx, secs_since(a->t0_ns, now_ns())))
		fprintf(stderr, AGENT_NAME ": %s: %s: %s (%s)%s\n", ctx, op,
			strerror(err), errno_name(err, nb, sizeof(nb)),
			" [further errors of this kind are only counted]");
}

bool is_gone_errno(int err)
{
	return err == ENODEV || err == ENOENT || err == ENXIO || err == EIO ||
	       err == ESHUTDOWN;
}

unsigned int cameras_found(const struct agent *a)
{
	unsigned int i, n = 0;

	for (i = 0; i < a->ncam; i++)
		n += a->cam[i].found;
	return n;
}

uint64_t sum_cam(const struct agent *a, size_t off)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < a->ncam; i++)
		s += *(const uint64_t *)((const char *)&a->cam[i] + off);
	return s;
}
