// SPDX-License-Identifier: GPL-2.0-only
/* The camera's V4L2 video node (see video.h). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/videodev2.h>

#include "agent.h"
#include "video.h"

/*
 * Open path and check it is a uvcvideo video-capture node.  On PROBE_OK the
 * open fd is returned in *fdp and the capability in *cap; on PROBE_ERRNO
 * *errp holds the errno and *opp the failing operation.
 */
enum probe_result video_probe(const char *path, int *fdp,
			      struct v4l2_capability *cap, int *errp,
			      const char **opp)
{
	uint32_t caps;
	int fd;

	*fdp = -1;
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		*errp = errno;
		*opp = "open";
		return PROBE_ERRNO;
	}
	memset(cap, 0, sizeof(*cap));
	if (ioctl(fd, VIDIOC_QUERYCAP, cap) < 0) {
		*errp = errno;
		*opp = "VIDIOC_QUERYCAP";
		close(fd);
		return PROBE_ERRNO;
	}
	caps = (cap->capabilities & V4L2_CAP_DEVICE_CAPS) ?
	       cap->device_caps : cap->capabilities;
	if (strncmp((const char *)cap->driver, "uvcvideo",
		    sizeof(cap->driver)) != 0 ||
	    !(caps & V4L2_CAP_VIDEO_CAPTURE)) {
		close(fd);
		return PROBE_NOT_UVC;
	}
	*fdp = fd;
	return PROBE_OK;
}

void copy_cstr(char *dst, size_t len, const void *src, size_t srclen)
{
	size_t n = strnlen(src, srclen);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Enumerate controls into the camera's table. */
void video_enum_controls(struct agent *a, struct camera *c)
{
	const uint32_t next = V4L2_CTRL_FLAG_NEXT_CTRL |
			      V4L2_CTRL_FLAG_NEXT_COMPOUND;
	uint32_t id = next;
	bool ext = true;
	unsigned int guard;

	c->class_controls = 0;
	c->ctrls.overflow = 0;	/* counts the latest enumeration */
	for (guard = 0; guard < 4 * MAX_CTRLS; guard++) {
		uint32_t got_id, type, flags;
		char name[32];
		int r;

		if (ext) {
			struct v4l2_query_ext_ctrl q;

			memset(&q, 0, sizeof(q));
			q.id = id;
			r = ioctl(c->fd, VIDIOC_QUERY_EXT_CTRL, &q);
			if (r < 0 && errno == ENOTTY && guard == 0) {
				ext = false;
				c->used_queryctrl = true;
				id = V4L2_CTRL_FLAG_NEXT_CTRL;
				continue;
			}
			got_id = q.id;
			type = q.type;
			flags = q.flags;
			copy_cstr(name, sizeof(name), q.name, sizeof(q.name));
		} else {
			struct v4l2_queryctrl q;

			memset(&q, 0, sizeof(q));
			q.id = id;
			r = ioctl(c->fd, VIDIOC_QUERYCTRL, &q);
			got_id = q.id;
			type = q.type;
			flags = q.flags;
			copy_cstr(name, sizeof(name), q.name, sizeof(q.name));
		}
		if (r < 0) {
			if (errno != EINVAL)
				agent_err(a, ext ? "VIDIOC_QUERY_EXT_CTRL" :
					  "VIDIOC_QUERYCTRL", errno,
					  "camera %u %s enumerating controls",
					  c->index, c->video_path);
			return;	/* EINVAL: no more controls */
		}
		if ((got_id & V4L2_CTRL_ID_MASK) <= (id & V4L2_CTRL_ID_MASK) &&
		    guard > 0) {
			agent_err(a, "control enumeration", EPROTO,
				  "camera %u %s: id 0x%08x did not advance",
				  c->index, c->video_path, got_id);
			return;
		}
		if (type == V4L2_CTRL_TYPE_CTRL_CLASS)
			c->class_controls++;
		else
			ctrltab_add(&c->ctrls, got_id, type, flags, name);
		id = (got_id & V4L2_CTRL_ID_MASK) | (ext ? next :
						     V4L2_CTRL_FLAG_NEXT_CTRL);
	}
	agent_err(a, "control enumeration", E2BIG,
		  "camera %u %s: more than %d controls", c->index,
		  c->video_path, 4 * MAX_CTRLS);
}

/* Subscribe to control events for every control; returns false if gone. */
bool video_subscribe(struct agent *a, struct camera *c)
{
	size_t i;

	for (i = 0; i < c->ctrls.n; i++) {
		struct v4l2_event_subscription sub;

		c->ctrls.c[i].subscribed = false;
		memset(&sub, 0, sizeof(sub));
		sub.type = V4L2_EVENT_CTRL;
		sub.id = c->ctrls.c[i].id;
		sub.flags = a->opt.initial ? V4L2_EVENT_SUB_FL_SEND_INITIAL : 0;
		if (ioctl(c->fd, VIDIOC_SUBSCRIBE_EVENT, &sub) < 0) {
			int err = errno;

			c->subscribe_failed++;
			agent_err(a, "VIDIOC_SUBSCRIBE_EVENT", err,
				  "camera %u %s control 0x%08x", c->index,
				  c->video_path, sub.id);
			if (is_gone_errno(err))
				return false;
			continue;
		}
		c->ctrls.c[i].subscribed = true;
		c->subscribed++;
	}
	return true;
}

/*
 * --set-async: turn autofocus off, then set Focus (absolute) to the end of
 * its range it is not at.
 * A camera without the control is no error (nothing is counted).  Returns
 * false when the device is gone.
 */
bool video_set_async(struct agent *a, struct camera *c)
{
	struct v4l2_queryctrl q;
	struct v4l2_control ctl;
	int err;

	if (!ctrltab_find(&c->ctrls, V4L2_CID_FOCUS_ABSOLUTE))
		return true;
	if (ctrltab_find(&c->ctrls, V4L2_CID_FOCUS_AUTO)) {
		/*
		 * Focus (absolute) is writable only with autofocus off
		 * (uvcvideo's master control: EACCES otherwise), and the
		 * flood's control changes turn it back on now and then.
		 */
		memset(&ctl, 0, sizeof(ctl));
		ctl.id = V4L2_CID_FOCUS_AUTO;
		if (ioctl(c->fd, VIDIOC_S_CTRL, &ctl) < 0 && is_gone_errno(errno))
			return false;
	}
	memset(&q, 0, sizeof(q));
	q.id = V4L2_CID_FOCUS_ABSOLUTE;
	memset(&ctl, 0, sizeof(ctl));
	ctl.id = V4L2_CID_FOCUS_ABSOLUTE;
	if (ioctl(c->fd, VIDIOC_QUERYCTRL, &q) == 0 &&
	    ioctl(c->fd, VIDIOC_G_CTRL, &ctl) == 0) {
		ctl.value = ctl.value == q.maximum ? q.minimum : q.maximum;
		if (ioctl(c->fd, VIDIOC_S_CTRL, &ctl) == 0) {
			c->async_sets++;
			return true;
		}
	}
	err = errno;
	c->async_set_failures++;
	agent_err(a, "VIDIOC_S_CTRL", err, "camera %u %s focus (absolute)",
		  c->index, c->video_path);
	return !is_gone_errno(err);
}

/*
 * Dequeue pending events (at most max).  Returns false when the device is
 * gone (the caller marks it absent).
 */
bool video_drain(struct agent *a, struct camera *c, uint64_t now,
		 unsigned int max)
{
	unsigned int i;

	for (i = 0; i < max; i++) {
		struct v4l2_event ev;
		struct seq_delta d;
		struct bucket *b;

		memset(&ev, 0, sizeof(ev));
		if (ioctl(c->fd, VIDIOC_DQEVENT, &ev) < 0) {
			int err = errno;

			if (err == ENOENT)
				return true;
			if (err == EINTR)
				continue;
			agent_err(a, "VIDIOC_DQEVENT", err, "camera %u %s",
				  c->index, c->video_path);
			return !is_gone_errno(err);
		}
		d = seqtrack_feed(&c->seq, ev.sequence);
		b = series_at(&a->series, now);
		b->dequeued++;
		b->emitted += d.emitted;
		b->dropped += d.dropped;
		if (ev.type == V4L2_EVENT_CTRL) {
			ctrltab_count(&c->ctrls, ev.id);
			if (ev.u.ctrl.changes & V4L2_EVENT_CTRL_CH_VALUE)
				c->ev_value++;
			if (ev.u.ctrl.changes & V4L2_EVENT_CTRL_CH_FLAGS)
				c->ev_flags++;
			if (ev.u.ctrl.changes & V4L2_EVENT_CTRL_CH_RANGE)
				c->ev_range++;
		} else {
			c->ev_other_type++;
		}
		if (ev.pending == 0)
			return true;
	}
	return true;
}

void video_close(struct agent *a, struct camera *c, uint64_t now)
{
	if (c->fd < 0)
		return;
	/* Count what is still queued before the file handle goes away. */
	video_drain(a, c, now, 1u << 16);
	if (close(c->fd) < 0)
		agent_err(a, "close", errno, "camera %u %s", c->index,
			  c->video_path);
	c->fd = -1;
}
