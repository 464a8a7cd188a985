// SPDX-License-Identifier: GPL-2.0-only
/*
 * A simulated uvcvideo camera for the agent's unit tests, linked into
 * their binary (tests/fake_v4l2.h).  The test binary is linked with -Wl,--wrap for open, close,
 * read, ioctl, ppoll, opendir, readdir, closedir and clock_gettime; while
 * sim.active is set those calls reach this model instead of the kernel, and
 * time is virtual (it advances only inside ppoll), so runs are deterministic
 * and fast.
 *
 * The model follows what Linux 6.1 does (drivers/media/usb/uvc and
 * drivers/media/v4l2-core/v4l2-event.c):
 * - the status "URB" (here: event emission) runs only while at least one
 *   video file handle of the camera is open, or with pm_granular (7.x)
 *   only while one streams (STREAMON after REQBUFS and QBUF);
 * - each file handle numbers its queued events 0, 1, 2, ... and each control
 *   subscription holds one event: a newer event for the same control
 *   replaces the queued one, which is then lost (a sequence gap);
 * - DQEVENT returns events in sequence order, ENOENT when none, ENODEV once
 *   the device is gone; poll reports POLLPRI for pending events and
 *   POLLERR|POLLHUP|POLLPRI after unregistration;
 * - the metadata node answers QUERYCAP with driver "uvcvideo" but without
 *   the video-capture capability;
 * - the input device has phys "<bus_info>/button" and emits EV_KEY
 *   KEY_CAMERA press/release followed by SYN_REPORT.
 *
 * This is test code: the wrappers have no context argument, so the model
 * lives in one global variable, `sim`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <linux/input.h>
#include <linux/videodev2.h>

#include "run.h"
#include "timing.h"

#include "fake_v4l2.h"

int __real_open(const char *path, int flags, ...);
int __real_close(int fd);
ssize_t __real_read(int fd, void *buf, size_t n);
int __real_ioctl(int fd, unsigned long req, ...);
int __real_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask);
DIR *__real_opendir(const char *name);
struct dirent *__real_readdir(DIR *d);
int __real_closedir(DIR *d);
int __real_clock_gettime(clockid_t clk, struct timespec *ts);

struct sim sim;

static const struct {
	uint32_t id;
	const char *name;
} sim_ctrls[SIM_NCTRL] = {
	{ 0x00980900, "Brightness" },
	{ 0x00980901, "Contrast" },
	{ 0x00980902, "Saturation" },
	{ 0x00980903, "Hue" },
	{ 0x009a090a, "Focus, Absolute" },	/* --set-async sets it */
};
#define SIM_CLASS_ID	0x00980001	/* V4L2_CID_USER_CLASS */

void sim_reset(void)
{
	memset(&sim, 0, sizeof(sim));
	sim.now = 1000 * NSEC_PER_SEC;
}

struct sim_cam *sim_add_cam(const char *bus, int video, int meta, int input)
{
	struct sim_cam *c = &sim.cam[sim.ncam++];

	snprintf(c->bus_info, sizeof(c->bus_info), "%s", bus);
	snprintf(c->card, sizeof(c->card), "Fake UVC Camera");
	c->video_num = video;
	c->meta_num = meta;
	c->input_num = input;
	c->plugged = true;
	c->emit_period_ns = NSEC_PER_SEC / 1000;
	c->next_emit = sim.now + c->emit_period_ns;
	return c;
}

static struct sim_fh *sim_fh_of(int fd)
{
	int i = fd - SIM_FD_BASE;

	if (i < 0 || i >= SIM_MAX_FH || !sim.fh[i].used)
		return NULL;
	return &sim.fh[i];
}

/* Account a video handle's events in the truth counters. */
static void sim_fh_retire(struct sim_fh *f)
{
	struct sim_cam *c = &sim.cam[f->cam];

	if (f->kind != SIM_VIDEO)
		return;
	if (f->have_dq)
		c->emitted_seen += (uint64_t)f->last_dq + 1;
	c->dequeued += f->dequeued;
}

/* Does the camera's status URB run? */
static bool sim_status_on(const struct sim_cam *c)
{
	return c->plugged && (c->pm_granular ? c->streamers > 0 : c->users > 0);
}

/* STREAMOFF, and what close() does to a streaming or owning handle. */
static void sim_release_queue(struct sim_fh *f)
{
	struct sim_cam *c = &sim.cam[f->cam];

	if (f->streaming && !f->dead)
		c->streamers--;
	f->streaming = false;
	if (f->owner)
		c->queue_owned = false;
	f->owner = false;
	f->nbufs = f->queued = 0;
}

static void sim_unplug(int ci)
{
	struct sim_cam *c = &sim.cam[ci];
	int i;

	c->plugged = false;
	c->users = 0;
	c->streamers = 0;
	c->queue_owned = false;
	for (i = 0; i < SIM_MAX_FH; i++)
		if (sim.fh[i].used && sim.fh[i].cam == ci &&
		    sim.fh[i].kind != SIM_OTHER_INPUT)
			sim.fh[i].dead = true;
}

static void sim_input_push(struct sim_fh *f, uint16_t type, uint16_t code,
			   int32_t value)
{
	struct input_event *e;

	if (f->qn >= SIM_INPUT_Q)
		return;		/* the test sizes runs to stay below this */
	e = &f->q[(f->qh + f->qn) % SIM_INPUT_Q];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->code = code;
	e->value = value;
	f->qn++;
}

/* One status interrupt: control events and every other tick a key. */
static void sim_emit(int ci)
{
	struct sim_cam *c = &sim.cam[ci];
	unsigned int k = (unsigned int)(c->tick % SIM_NCTRL);
	int reps = c->tick % 5 == 0 ? 2 : 1;	/* 2: first is replaced */
	int i, r;

	for (r = 0; r < reps; r++) {
		for (i = 0; i < SIM_MAX_FH; i++) {
			struct sim_fh *f = &sim.fh[i];

			if (!f->used || f->dead || f->cam != ci ||
			    f->kind != SIM_VIDEO || !f->sub[k])
				continue;
			f->sequence++;
			f->pend[k] = true;
			f->pend_seq[k] = f->sequence;
		}
	}
	if (c->tick % 2 == 0) {
		c->key_down = !c->key_down;
		if (c->key_down)
			c->key_press++;
		else
			c->key_release++;
		for (i = 0; i < SIM_MAX_FH; i++) {
			struct sim_fh *f = &sim.fh[i];

			if (!f->used || f->dead || f->cam != ci ||
			    f->kind != SIM_INPUT)
				continue;
			sim_input_push(f, EV_KEY, KEY_CAMERA, c->key_down);
			sim_input_push(f, EV_SYN, SYN_REPORT, 0);
		}
	}
	c->tick++;
}

static uint64_t sim_next_time(void)
{
	uint64_t t = UINT64_MAX;
	int i;

	for (i = 0; i < sim.ncam; i++) {
		struct sim_cam *c = &sim.cam[i];

		if (sim_status_on(c) && c->next_emit < t)
			t = c->next_emit;
		if (c->plug_at && c->plug_at < t)
			t = c->plug_at;
		if (c->unplug_at && c->unplug_at < t)
			t = c->unplug_at;
		if (c->replug_at && c->replug_at < t)
			t = c->replug_at;
	}
	return t;
}

static void sim_advance(uint64_t t)
{
	int i;

	sim.now = t;
	for (i = 0; i < sim.ncam; i++) {
		struct sim_cam *c = &sim.cam[i];

		if (c->plug_at && c->plug_at <= t) {
			c->plug_at = 0;
			c->plugged = true;
		}
		if (c->unplug_at && c->unplug_at <= t) {
			c->unplug_at = 0;
			sim_unplug(i);
		}
		if (c->replug_at && c->replug_at <= t) {
			c->replug_at = 0;
			c->plugged = true;
			c->video_num = c->replug_video_num;
			c->meta_num = c->replug_meta_num;
			c->input_num = c->replug_input_num;
		}
		while (c->next_emit <= t) {
			if (sim_status_on(c))
				sim_emit(i);
			c->next_emit += c->emit_period_ns;
		}
	}
}

static short sim_revents(const struct pollfd *p)
{
	struct sim_fh *f = sim_fh_of(p->fd);
	short re = 0;
	int k;

	if (!f) {
		sim.stray_fds++;
		return POLLNVAL;
	}
	if (f->kind == SIM_VIDEO || f->kind == SIM_META) {
		if (f->dead)
			return (POLLERR | POLLHUP | POLLPRI) &
			       (p->events | POLLERR | POLLHUP);
		for (k = 0; k < SIM_NCTRL; k++)
			if (f->pend[k])
				re |= POLLPRI;
		return re & p->events;
	}
	if (f->qn)
		re |= POLLIN;
	if (f->dead)
		re |= POLLERR | POLLHUP;
	return re & (p->events | POLLERR | POLLHUP);
}

int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask);
int __wrap_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask)
{
	uint64_t deadline;

	if (!sim.active)
		return __real_ppoll(fds, n, ts, mask);
	deadline = ts ? sim.now + (uint64_t)ts->tv_sec * NSEC_PER_SEC +
			(uint64_t)ts->tv_nsec : UINT64_MAX;
	for (;;) {
		int ready = 0;
		uint64_t next;
		nfds_t i;

		if (sim.sigterm_at && sim.now >= sim.sigterm_at) {
			sim.sigterm_at = 0;
			on_signal(SIGTERM);	/* as if the signal came */
			errno = EINTR;
			return -1;
		}

		for (i = 0; i < n; i++) {
			fds[i].revents = sim_revents(&fds[i]);
			ready += fds[i].revents != 0;
		}
		if (ready)
			return ready;
		next = sim_next_time();
		if (sim.sigterm_at && sim.sigterm_at < next)
			next = sim.sigterm_at;
		if (next > deadline) {
			if (deadline == UINT64_MAX) {
				errno = EINVAL;	/* would block forever */
				return -1;
			}
			sim_advance(deadline);
			return 0;
		}
		sim_advance(next);
	}
}

int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (!sim.active || clk != CLOCK_MONOTONIC)
		return __real_clock_gettime(clk, ts);
	ts->tv_sec = (time_t)(sim.now / NSEC_PER_SEC);
	ts->tv_nsec = (long)(sim.now % NSEC_PER_SEC);
	return 0;
}

static int sim_alloc_fh(enum sim_kind kind, int cam)
{
	int i;

	for (i = 0; i < SIM_MAX_FH; i++) {
		if (!sim.fh[i].used) {
			memset(&sim.fh[i], 0, sizeof(sim.fh[i]));
			sim.fh[i].used = true;
			sim.fh[i].kind = kind;
			sim.fh[i].cam = cam;
			sim.fh[i].sequence = UINT32_MAX;	/* v4l2_fh_init */
			return SIM_FD_BASE + i;
		}
	}
	errno = EMFILE;
	return -1;
}

int __wrap_open(const char *path, int flags, ...);
int __wrap_open(const char *path, int flags, ...)
{
	int num, i;

	if (!sim.active) {
		va_list ap;
		int mode;

		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
		return __real_open(path, flags, mode);
	}
	if (sscanf(path, "/dev/video%d", &num) == 1 &&
	    strspn(path + 10, "0123456789") == strlen(path + 10)) {
		for (i = 0; i < sim.ncam; i++) {
			struct sim_cam *c = &sim.cam[i];
			int fd;

			if (!c->plugged)
				continue;
			if (num == c->video_num) {
				fd = sim_alloc_fh(SIM_VIDEO, i);
				if (fd >= 0) {
					c->users++;
					c->video_opens++;
				}
				return fd;
			}
			if (num == c->meta_num)
				return sim_alloc_fh(SIM_META, i);
		}
	} else if (sscanf(path, "/dev/input/event%d", &num) == 1) {
		if (num == 9)
			return sim_alloc_fh(SIM_OTHER_INPUT, 0);
		for (i = 0; i < sim.ncam; i++)
			if (sim.cam[i].plugged && !sim.cam[i].no_input &&
			    sim.cam[i].input_num == num)
				return sim_alloc_fh(SIM_INPUT, i);
	}
	errno = ENOENT;
	return -1;
}

int __wrap_close(int fd);
int __wrap_close(int fd)
{
	struct sim_fh *f;

	if (!sim.active || fd < SIM_FD_BASE)
		return __real_close(fd);
	f = sim_fh_of(fd);
	if (!f) {
		errno = EBADF;
		return -1;
	}
	sim_fh_retire(f);
	if (f->kind == SIM_VIDEO) {
		sim_release_queue(f);
		if (!f->dead)
			sim.cam[f->cam].users--;
	}
	f->used = false;
	return 0;
}

ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	struct input_event *out = buf;
	struct sim_fh *f;
	size_t k = 0;

	if (!sim.active || fd < SIM_FD_BASE)
		return __real_read(fd, buf, n);
	f = sim_fh_of(fd);
	if (!f || (f->kind != SIM_INPUT && f->kind != SIM_OTHER_INPUT)) {
		errno = EINVAL;
		return -1;
	}
	if (f->dead && !f->qn) {
		errno = ENODEV;
		return -1;
	}
	if (!f->qn) {
		errno = EAGAIN;
		return -1;
	}
	while (f->qn && (k + 1) * sizeof(*out) <= n) {
		out[k++] = f->q[f->qh];
		f->qh = (f->qh + 1) % SIM_INPUT_Q;
		f->qn--;
	}
	return (ssize_t)(k * sizeof(*out));
}

/* str_to_user() of drivers/input/evdev.c */
static int sim_str_to_user(const char *s, unsigned long req, void *arg)
{
	size_t len = strlen(s) + 1, max = _IOC_SIZE(req);

	if (len > max)
		len = max;
	memcpy(arg, s, len);
	return (int)len;
}

static int sim_ioctl_input(struct sim_fh *f, unsigned long req, void *arg)
{
	struct sim_cam *c = &sim.cam[f->cam];
	char phys[64];

	if (f->dead) {
		errno = ENODEV;
		return -1;
	}
	if (f->kind == SIM_OTHER_INPUT) {
		if (req == (unsigned long)EVIOCGPHYS(_IOC_SIZE(req)))
			return sim_str_to_user("isa0060/serio0/input0", req, arg);
		if (req == (unsigned long)EVIOCGNAME(_IOC_SIZE(req)))
			return sim_str_to_user("AT keyboard", req, arg);
		errno = EINVAL;
		return -1;
	}
	if (req == (unsigned long)EVIOCGPHYS(_IOC_SIZE(req))) {
		c->phys_ioctls++;
		if (c->phys_ioctls == c->corrupt_phys_on)
			snprintf(phys, sizeof(phys), "%s/bu\x7ftton", c->bus_info);
		else
			snprintf(phys, sizeof(phys), "%s%s", c->bus_info,
				 c->phys_suffix ? c->phys_suffix : "/button");
		return sim_str_to_user(phys, req, arg);
	}
	if (req == (unsigned long)EVIOCGNAME(_IOC_SIZE(req)))
		return sim_str_to_user(c->card, req, arg);
	errno = EINVAL;
	return -1;
}

static int sim_find_ctrl(uint32_t id)
{
	int k;

	for (k = 0; k < SIM_NCTRL; k++)
		if (sim_ctrls[k].id == id)
			return k;
	return -1;
}

static int sim_ioctl_video(struct sim_fh *f, unsigned long req, void *arg)
{
	struct sim_cam *c = &sim.cam[f->cam];

	if (f->dead) {
		errno = ENODEV;
		return -1;
	}
	if (req == VIDIOC_QUERYCAP) {
		struct v4l2_capability *cap = arg;

		memset(cap, 0, sizeof(*cap));
		snprintf((char *)cap->driver, sizeof(cap->driver), "uvcvideo");
		snprintf((char *)cap->card, sizeof(cap->card), "%s", c->card);
		snprintf((char *)cap->bus_info, sizeof(cap->bus_info), "%s",
			 c->bus_info);
		cap->capabilities = V4L2_CAP_DEVICE_CAPS | V4L2_CAP_STREAMING |
				    V4L2_CAP_VIDEO_CAPTURE |
				    V4L2_CAP_META_CAPTURE;
		cap->device_caps = V4L2_CAP_STREAMING |
				   (f->kind == SIM_VIDEO ?
				    V4L2_CAP_VIDEO_CAPTURE :
				    V4L2_CAP_META_CAPTURE);
		return 0;
	}
	if (f->kind != SIM_VIDEO) {
		errno = ENOTTY;
		return -1;
	}
	if (req == VIDIOC_QUERY_EXT_CTRL && c->no_ext_ctrl) {
		errno = ENOTTY;
		return -1;
	}
	if (req == VIDIOC_QUERY_EXT_CTRL || req == VIDIOC_QUERYCTRL) {
		uint32_t *idp = req == VIDIOC_QUERYCTRL ?
				&((struct v4l2_queryctrl *)arg)->id :
				&((struct v4l2_query_ext_ctrl *)arg)->id;
		uint32_t want = *idp & V4L2_CTRL_ID_MASK, id = 0, type = 0;
		const char *name = NULL;
		int k;

		if (!(*idp & V4L2_CTRL_FLAG_NEXT_CTRL)) {
			/* one control by id: VIDIOC_QUERYCTRL only */
			struct v4l2_queryctrl *q = arg;

			k = sim_find_ctrl(*idp);
			if (req != VIDIOC_QUERYCTRL || k < 0) {
				errno = EINVAL;
				return -1;
			}
			memset(q, 0, sizeof(*q));
			q->id = sim_ctrls[k].id;
			q->type = V4L2_CTRL_TYPE_INTEGER;
			q->maximum = 255;
			q->step = 1;
			snprintf((char *)q->name, sizeof(q->name), "%s",
				 sim_ctrls[k].name);
			return 0;
		}
		if (want < SIM_CLASS_ID) {
			id = SIM_CLASS_ID;
			type = V4L2_CTRL_TYPE_CTRL_CLASS;
			name = "User Controls";
		}
		for (k = 0; k < SIM_NCTRL && !name; k++) {
			if (sim_ctrls[k].id > want) {
				id = sim_ctrls[k].id;
				type = V4L2_CTRL_TYPE_INTEGER;
				name = sim_ctrls[k].name;
			}
		}
		if (!name) {
			errno = EINVAL;
			return -1;
		}
		if (req == VIDIOC_QUERYCTRL) {
			struct v4l2_queryctrl *q = arg;

			memset(q, 0, sizeof(*q));
			q->id = id;
			q->type = type;
			snprintf((char *)q->name, sizeof(q->name), "%s", name);
		} else {
			struct v4l2_query_ext_ctrl *q = arg;

			memset(q, 0, sizeof(*q));
			q->id = id;
			q->type = type;
			snprintf(q->name, sizeof(q->name), "%s", name);
		}
		return 0;
	}
	if (req == VIDIOC_G_CTRL || req == VIDIOC_S_CTRL) {
		struct v4l2_control *ctl = arg;
		int k = sim_find_ctrl(ctl->id);

		if (k < 0 || (req == VIDIOC_S_CTRL &&
			      (ctl->value < 0 || ctl->value > 255))) {
			errno = EINVAL;
			return -1;
		}
		if (req == VIDIOC_G_CTRL) {
			ctl->value = c->value[k];
			return 0;
		}
		c->value[k] = ctl->value;
		c->s_ctrl_ok++;
		return 0;
	}
	if (req == VIDIOC_SUBSCRIBE_EVENT) {
		struct v4l2_event_subscription *s = arg;
		int k = sim_find_ctrl(s->id);

		if (s->type != V4L2_EVENT_CTRL) {
			errno = EINVAL;
			return -1;
		}
		if (s->id == SIM_CLASS_ID)
			return 0;
		if (k < 0) {
			errno = EINVAL;
			return -1;
		}
		f->sub[k] = true;
		c->subscribe_ok++;
		return 0;
	}
	if (req == VIDIOC_REQBUFS) {
		struct v4l2_requestbuffers *rb = arg;

		if (rb->type != V4L2_BUF_TYPE_VIDEO_CAPTURE ||
		    rb->memory != V4L2_MEMORY_MMAP) {
			errno = EINVAL;
			return -1;
		}
		if ((c->queue_owned && !f->owner) || f->streaming) {
			errno = EBUSY;
			return -1;
		}
		if (c->refuse_reqbufs) {
			errno = ENOMEM;
			return -1;
		}
		if (rb->count > 32)
			rb->count = 32;
		f->nbufs = rb->count;
		f->queued = 0;
		f->owner = rb->count > 0;
		c->queue_owned = f->owner;
		return 0;
	}
	if (req == VIDIOC_QBUF) {
		struct v4l2_buffer *b = arg;

		if (!f->owner) {
			errno = EBUSY;
			return -1;
		}
		if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE ||
		    b->memory != V4L2_MEMORY_MMAP || b->index >= f->nbufs ||
		    f->queued >= f->nbufs) {
			errno = EINVAL;
			return -1;
		}
		f->queued++;
		return 0;
	}
	if (req == VIDIOC_STREAMON || req == VIDIOC_STREAMOFF) {
		const int *type = arg;

		if (*type != V4L2_BUF_TYPE_VIDEO_CAPTURE) {
			errno = EINVAL;
			return -1;
		}
		if (!f->owner) {
			errno = EBUSY;
			return -1;
		}
		if (req == VIDIOC_STREAMOFF) {
			if (f->streaming)
				c->streamers--;
			f->streaming = false;
			f->queued = 0;	/* buffers return to userspace */
			return 0;
		}
		if (f->streaming)
			return 0;
		if (f->queued == 0) {
			errno = EINVAL;	/* stricter than vb2: buffers first */
			return -1;
		}
		f->streaming = true;
		c->streamers++;
		c->streamons++;
		return 0;
	}
	if (req == VIDIOC_DQEVENT) {
		struct v4l2_event *ev = arg;
		int k, best = -1;
		uint32_t pending = 0;

		for (k = 0; k < SIM_NCTRL; k++) {
			if (!f->pend[k])
				continue;
			pending++;
			if (best < 0 || f->pend_seq[k] < f->pend_seq[best])
				best = k;
		}
		if (best < 0) {
			errno = ENOENT;
			return -1;
		}
		memset(ev, 0, sizeof(*ev));
		ev->type = V4L2_EVENT_CTRL;
		ev->id = sim_ctrls[best].id;
		ev->sequence = f->pend_seq[best];
		ev->pending = pending - 1;
		ev->u.ctrl.changes = V4L2_EVENT_CTRL_CH_VALUE;
		f->pend[best] = false;
		f->have_dq = true;
		f->last_dq = ev->sequence;
		f->dequeued++;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}

int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_ioctl(int fd, unsigned long req, ...)
{
	struct sim_fh *f;
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!sim.active || fd < SIM_FD_BASE)
		return __real_ioctl(fd, req, arg);
	f = sim_fh_of(fd);
	if (!f) {
		errno = EBADF;
		return -1;
	}
	if (f->kind == SIM_INPUT || f->kind == SIM_OTHER_INPUT)
		return sim_ioctl_input(f, req, arg);
	return sim_ioctl_video(f, req, arg);
}

DIR *__wrap_opendir(const char *name);
DIR *__wrap_opendir(const char *name)
{
	int i;

	if (!sim.active)
		return __real_opendir(name);
	if (sim.dir_open) {
		errno = EMFILE;
		return NULL;
	}
	sim.nnames = 0;
	sim.pos = 0;
	if (strcmp(name, "/dev") == 0) {
		static const char *const extra[] = { "null", "video", "videoX",
						     "vhci" };

		for (i = 0; i < 4; i++)
			snprintf(sim.names[sim.nnames++], 32, "%s", extra[i]);
		/* reverse order: the agent must sort numerically */
		for (i = sim.ncam - 1; i >= 0; i--) {
			if (!sim.cam[i].plugged)
				continue;
			snprintf(sim.names[sim.nnames++], 32, "video%d",
				 sim.cam[i].meta_num);
			snprintf(sim.names[sim.nnames++], 32, "video%d",
				 sim.cam[i].video_num);
		}
	} else if (strcmp(name, "/dev/input") == 0) {
		snprintf(sim.names[sim.nnames++], 32, "mice");
		snprintf(sim.names[sim.nnames++], 32, "event9");
		for (i = sim.ncam - 1; i >= 0; i--)	/* highest first */
			if (sim.cam[i].plugged && !sim.cam[i].no_input)
				snprintf(sim.names[sim.nnames++], 32, "event%d",
					 sim.cam[i].input_num);
	} else {
		errno = ENOENT;
		return NULL;
	}
	sim.dir_open = true;
	return (DIR *)&sim.dir_token;
}

struct dirent *__wrap_readdir(DIR *d);
struct dirent *__wrap_readdir(DIR *d)
{
	if (!sim.active)
		return __real_readdir(d);
	if (sim.pos >= sim.nnames)
		return NULL;
	memset(&sim.de, 0, sizeof(sim.de));
	snprintf(sim.de.d_name, sizeof(sim.de.d_name), "%s",
		 sim.names[sim.pos++]);
	return &sim.de;
}

int __wrap_closedir(DIR *d);
int __wrap_closedir(DIR *d)
{
	if (!sim.active)
		return __real_closedir(d);
	sim.dir_open = false;
	return 0;
}

int sim_open_handles(void)
{
	int i, n = 0;

	for (i = 0; i < SIM_MAX_FH; i++)
		n += sim.fh[i].used;
	return n;
}
