// SPDX-License-Identifier: GPL-2.0-only
/* A camera's life: scan, attach, cycle, disconnect (see camera.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "agent.h"
#include "camera.h"
#include "hold.h"
#include "input.h"
#include "video.h"

void camera_mark_absent(struct agent *a, struct camera *c,
			uint64_t now)
{
	bool was_open = c->fd >= 0;

	hold_stop(a, c, true);
	if (was_open) {
		close(c->fd);	/* drained already or device gone */
		c->fd = -1;
	}
	if (!c->absent) {
		c->absent = true;
		c->absent_since_ns = now;
		if (was_open || c->opens > 0) {
			c->disconnects++;
			series_at(&a->series, now)->disconnects++;
		}
	}
}

/* Start a session on an open fd: controls (when asked), subscriptions. */
static bool camera_start_session(struct agent *a, struct camera *c,
				 bool enumerate)
{
	c->opens++;
	seqtrack_new_session(&c->seq);
	if (enumerate)
		video_enum_controls(a, c);
	if (!video_subscribe(a, c))
		return false;
	return !a->opt.set_async || video_set_async(a, c);
}

/* Take an fd for a camera that (re)appeared and start driving it. */
void camera_attach(struct agent *a, struct camera *c, int fd,
		   const char *path, uint64_t now)
{
	uint64_t start = now_ns(), took;

	c->fd = fd;
	if (path != c->video_path)	/* no overlapping snprintf */
		snprintf(c->video_path, sizeof(c->video_path), "%s", path);
	if (c->absent) {
		c->absent = false;
		if (c->opens > 0)
			c->reconnects++;
		c->absent_ns += now - c->absent_since_ns;
	}
	/*
	 * The hold first: on a kernel that needs it, a SEND_INITIAL
	 * subscription (--initial) would otherwise start and stop the status
	 * URB itself, and events would flow only from the hold on.
	 */
	hold_start(a, c);
	if (!camera_start_session(a, c, true)) {
		camera_mark_absent(a, c, now);
		return;
	}
	/* The old input device, if still open, belongs to the old device. */
	input_close(c);
	c->attached_ns = start;
	input_find(a, c);
	took = now_ns() - start;
	c->attach_ns_total += took;
	if (took > c->attach_ns_max)
		c->attach_ns_max = took;
}

/* Reopen the same node (close/open cycle). */
void camera_cycle(struct agent *a, struct camera *c, uint64_t now)
{
	struct v4l2_capability cap;
	enum probe_result r;
	uint64_t start = now_ns();
	const char *op = "";
	int fd, err = 0;

	video_close(a, c, now);
	c->cycles++;
	series_at(&a->series, now)->cycles++;
	r = video_probe(c->video_path, &fd, &cap, &err, &op);
	if (r == PROBE_OK &&
	    strncmp((const char *)cap.bus_info, c->bus_info,
		    sizeof(cap.bus_info)) == 0) {
		uint64_t took;

		c->fd = fd;
		if (!camera_start_session(a, c, false))
			camera_mark_absent(a, c, now);
		took = now_ns() - start;
		if (took > c->cycle_ns_max)
			c->cycle_ns_max = took;
		return;
	}
	if (r == PROBE_OK)
		close(fd);	/* another camera took the node number */
	c->open_failures++;
	if (r == PROBE_ERRNO) {
		agent_err(a, op, err, "camera %u %s reopen", c->index,
			  c->video_path);
		if (!is_gone_errno(err))
			return;	/* retry at the next cycle */
	}
	camera_mark_absent(a, c, now);
}

static int cmp_video_names(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;
	long na = strtol(a + 5, NULL, 10), nb = strtol(b + 5, NULL, 10);

	return na < nb ? -1 : na > nb;
}

static bool path_in_use(const struct agent *a, const char *path)
{
	unsigned int i;

	for (i = 0; i < MAX_CAMERAS; i++)
		if (a->cam[i].fd >= 0 && strcmp(a->cam[i].video_path, path) == 0)
			return true;
	return false;
}

/*
 * Look at one candidate node.  In the wait phase (!a->running) a new camera
 * is bound (identity recorded) and its fd closed again; during the run an
 * absent camera whose identity matches is reattached.
 */
static void scan_one(struct agent *a, const char *path, int slot_hint,
		     uint64_t now)
{
	struct v4l2_capability cap;
	struct camera *c = NULL;
	enum probe_result r;
	const char *op = "";
	char bus[48];
	unsigned int i;
	int fd, err = 0;

	if (path_in_use(a, path))
		return;
	r = video_probe(path, &fd, &cap, &err, &op);
	if (r == PROBE_ERRNO) {
		snprintf(a->last_scan_note, sizeof(a->last_scan_note),
			 "%s: %s: %s", path, op, strerror(err));
		return;
	}
	if (r == PROBE_NOT_UVC) {
		snprintf(a->last_scan_note, sizeof(a->last_scan_note),
			 "%s: not a uvcvideo video-capture node", path);
		return;
	}
	copy_cstr(bus, sizeof(bus), cap.bus_info, sizeof(cap.bus_info));

	if (slot_hint >= 0) {
		c = &a->cam[slot_hint];
	} else {
		/* a known camera coming back */
		for (i = 0; i < a->ncam && !c; i++)
			if (a->cam[i].found && a->cam[i].fd < 0 &&
			    strcmp(a->cam[i].bus_info, bus) == 0)
				c = &a->cam[i];
		/* a new camera, when slots are free and it is not bound */
		if (!c && a->ncam < a->opt.cameras) {
			for (i = 0; i < a->ncam; i++)
				if (strcmp(a->cam[i].bus_info, bus) == 0)
					break;
			if (i == a->ncam)
				c = &a->cam[a->ncam];
		}
	}
	if (!c || (c->fd >= 0)) {
		close(fd);
		return;
	}
	if (!c->found) {
		c->found = true;
		snprintf(c->bus_info, sizeof(c->bus_info), "%s", bus);
		copy_cstr(c->card, sizeof(c->card), cap.card, sizeof(cap.card));
		snprintf(c->video_path, sizeof(c->video_path), "%s", path);
		if (slot_hint < 0)
			a->ncam++;
	} else if (strcmp(c->bus_info, bus) != 0) {
		/* --device path now holds another camera: follow it */
		snprintf(c->bus_info, sizeof(c->bus_info), "%s", bus);
		copy_cstr(c->card, sizeof(c->card), cap.card, sizeof(cap.card));
	}
	if (!a->running) {
		close(fd);
		return;
	}
	camera_attach(a, c, fd, path, now);
}

/* Scan /dev/video* (or the --device paths) for cameras to bind/reattach. */
void scan_cameras(struct agent *a, uint64_t now)
{
	char *names[256];
	size_t n = 0, i;
	struct dirent *de;
	DIR *d;

	if (a->opt.ndevices > 0) {
		for (i = 0; i < a->opt.ndevices; i++)
			if (a->cam[i].fd < 0)
				scan_one(a, a->opt.devices[i], (int)i, now);
		return;
	}

	d = opendir("/dev");
	if (!d) {
		agent_err(a, "opendir", errno, "/dev");
		return;
	}
	while ((de = readdir(d)) != NULL && n < 256) {
		const char *p = de->d_name;

		if (strncmp(p, "video", 5) != 0 || p[5] < '0' || p[5] > '9' ||
		    strspn(p + 5, "0123456789") != strlen(p + 5))
			continue;
		names[n] = strdup(p);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n == 0)
		snprintf(a->last_scan_note, sizeof(a->last_scan_note),
			 "no /dev/video* node");
	qsort(names, n, sizeof(names[0]), cmp_video_names);
	for (i = 0; i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/dev/%.50s", names[i]);
		scan_one(a, path, -1, now);
		free(names[i]);
	}
}

bool any_absent(const struct agent *a)
{
	unsigned int i;

	if (a->ncam < a->opt.cameras)
		return true;
	for (i = 0; i < a->ncam; i++)
		if (a->cam[i].fd < 0)
			return true;
	return false;
}
