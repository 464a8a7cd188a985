// SPDX-License-Identifier: GPL-2.0-only
/* The status hold and its auto decision (see hold.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "agent.h"
#include "hold.h"
#include "protocol.h"
#include "video.h"

/*
 * Is this kallsyms name sym?  Also with a compiler's suffix (".llvm.123",
 * ".isra.0", ".cold"), which a clang LTO or gcc IPA build adds.
 */
static bool is_sym(const char *name, size_t n, const char *sym)
{
	size_t k = strlen(sym);

	return n >= k && memcmp(name, sym, k) == 0 && (n == k || name[k] == '.');
}

enum hold_mode hold_auto(const char *path, char *why, size_t len)
{
	bool pm_get = false, uvc = false;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		snprintf(why, len,
			 "auto: cannot read %s (%s), so this kernel's uvcvideo is unknown: none, the open video node holds the status URB as up to 6.12",
			 path, strerror(errno));
		return HOLD_NONE;
	}
	/* "ffffffffa00adfc9 t uvc_v4l2_open\t[uvcvideo]" */
	while (!pm_get && getline(&line, &cap, f) > 0) {
		char *p = line;
		size_t n;
		int field;

		for (field = 0; field < 2; field++) {
			p += strcspn(p, " \t\n");
			p += strspn(p, " \t");
		}
		n = strcspn(p, " \t\n");
		if (n < 4 || memcmp(p, "uvc_", 4) != 0)
			continue;
		if (is_sym(p, n, "uvc_pm_get"))
			pm_get = true;
		else if (is_sym(p, n, "uvc_v4l2_open") ||
			 is_sym(p, n, "uvc_status_init"))
			uvc = true;
	}
	free(line);
	fclose(f);
	if (pm_get) {
		snprintf(why, len,
			 "auto: %s has uvc_pm_get, uvcvideo's power management after 6.12, whose open() starts no status URB: one streaming fd per camera holds it",
			 path);
		return HOLD_STREAM;
	}
	if (uvc)
		snprintf(why, len,
			 "auto: %s has uvcvideo (uvc_v4l2_open) without uvc_pm_get: its open() starts the status URB, the open video node holds it",
			 path);
	else
		snprintf(why, len,
			 "auto: %s has no uvcvideo symbol (uvc_v4l2_open, uvc_pm_get), so this kernel's uvcvideo is unknown: none, the open video node holds the status URB as up to 6.12",
			 path);
	return HOLD_NONE;
}

void hold_choose(struct agent *a)
{
	if (a->opt.hold == HOLD_AUTO) {
		a->hold = hold_auto(a->opt.kallsyms, a->hold_reason,
				    sizeof(a->hold_reason));
	} else {
		a->hold = a->opt.hold;
		snprintf(a->hold_reason, sizeof(a->hold_reason),
			 "--hold %s given", hold_mode_name(a->hold));
	}
	fprintf(stderr, AGENT_NAME ": status hold %s (%s)\n",
		hold_mode_name(a->hold), a->hold_reason);
}

bool hold_start(struct agent *a, struct camera *c)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	struct v4l2_requestbuffers rb;
	struct v4l2_capability cap;
	enum probe_result r;
	const char *op = "";
	int fd, err = 0;
	uint32_t i;

	if (a->hold != HOLD_STREAM)
		return true;
	if (c->hold_fd >= 0)
		hold_stop(a, c, true);	/* the device it streamed is gone */
	r = video_probe(c->video_path, &fd, &cap, &err, &op);
	if (r == PROBE_OK &&
	    strncmp((const char *)cap.bus_info, c->bus_info,
		    sizeof(cap.bus_info)) != 0) {
		close(fd);
		r = PROBE_ERRNO;
		err = ENODEV;	/* another camera took the node number */
		op = "open";
	}
	if (r == PROBE_NOT_UVC) {
		r = PROBE_ERRNO;
		err = ENODEV;
		op = "VIDIOC_QUERYCAP";
	}
	if (r != PROBE_OK)
		goto failed;

	memset(&rb, 0, sizeof(rb));
	rb.count = HOLD_BUFFERS;
	rb.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
	rb.memory = V4L2_MEMORY_MMAP;
	op = "VIDIOC_REQBUFS";
	if (ioctl(fd, VIDIOC_REQBUFS, &rb) < 0)
		goto failed_fd;
	if (rb.count == 0) {
		errno = ENOMEM;
		goto failed_fd;
	}
	op = "VIDIOC_QBUF";
	for (i = 0; i < rb.count; i++) {
		struct v4l2_buffer b;

		memset(&b, 0, sizeof(b));
		b.index = i;
		b.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
		b.memory = V4L2_MEMORY_MMAP;
		if (ioctl(fd, VIDIOC_QBUF, &b) < 0)
			goto failed_fd;
	}
	op = "VIDIOC_STREAMON";
	if (ioctl(fd, VIDIOC_STREAMON, &type) < 0)
		goto failed_fd;
	c->hold_fd = fd;
	c->hold_streaming = true;
	c->hold_starts++;
	c->hold_buffers = rb.count;
	return true;

failed_fd:
	err = errno;
	close(fd);
failed:
	c->hold_failures++;
	agent_err(a, op, err, "camera %u %s status hold", c->index,
		  c->video_path);
	return false;
}

void hold_stop(struct agent *a, struct camera *c, bool gone)
{
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	if (c->hold_fd < 0)
		return;
	/* close() would stop it too; STREAMOFF says when that fails */
	if (!gone && c->hold_streaming &&
	    ioctl(c->hold_fd, VIDIOC_STREAMOFF, &type) < 0 &&
	    !is_gone_errno(errno))
		agent_err(a, "VIDIOC_STREAMOFF", errno,
			  "camera %u %s status hold", c->index, c->video_path);
	close(c->hold_fd);
	c->hold_fd = -1;
	c->hold_streaming = false;
}
