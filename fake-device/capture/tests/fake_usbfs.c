// SPDX-License-Identifier: MIT
/*
 * A fake usbfs node for running dmaharness-capture (capture.c and the real
 * libusb) on a machine without USB devices.  Linked into build/capture-fake
 * with -Wl,--wrap= for open, stat, read, pread, lseek, ioctl and close:
 * opening $FAKE_USBFS_NODE gives a descriptor (an eventfd, always
 * writable, which is what libusb polls usbfs for) whose ioctls answer like
 * the kernel's usbfs for a device replaying the profile $FAKE_USBFS_PROFILE
 * (control requests answered as fake-uvc does; interfaces, claims and
 * kernel drivers kept as the kernel does).  Every other file goes to libc.
 *
 * Environment:
 *   FAKE_USBFS_NODE     the node path (stat says: char device 189:N)
 *   FAKE_USBFS_PROFILE  the device
 *   FAKE_USBFS_DRIVERS  "0:uvcvideo,1:uvcvideo": kernel drivers bound
 *   FAKE_USBFS_HANG     "TT:RR:VVVV": that request never completes
 *   FAKE_USBFS_GONE     N: the device goes away after N control requests
 *   FAKE_USBFS_LOG      a file: one line per setup packet and per driver,
 *                       claim and release operation; "final ..." at close
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/usbdevice_fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "profile.h"

int __real_open(const char *path, int flags, ...);
int __real_stat(const char *path, struct stat *st);
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
off_t __real_lseek(int fd, off_t off, int whence);
int __real_ioctl(int fd, unsigned long req, ...);
int __real_close(int fd);

int __wrap_open(const char *path, int flags, ...);
int __wrap_stat(const char *path, struct stat *st);
ssize_t __wrap_read(int fd, void *buf, size_t n);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
off_t __wrap_lseek(int fd, off_t off, int whence);
int __wrap_ioctl(int fd, unsigned long req, ...);
int __wrap_close(int fd);

#define MAX_URBS 64

static struct {
	int fd;                         /* -1: not open */
	struct profile p;
	uint8_t *raw;                   /* what read() gives: device + configs */
	size_t raw_len;
	off_t pos;
	char driver[32][32];            /* bound kernel driver, "" */
	char unbound[32][32];           /* detached driver, for CONNECT */
	bool claimed[32];
	bool exists[32];                /* interface of the first config */
	struct usbdevfs_urb *done[MAX_URBS], *pending[MAX_URBS];
	size_t n_done, n_pending;
	unsigned controls, gone_after;
	bool gone;
	int hang_type, hang_req, hang_value;
	FILE *log;
} fk = { .fd = -1 };

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void logf_(const char *fmt, ...)
{
	va_list ap;

	if (!fk.log)
		return;
	va_start(ap, fmt);
	vfprintf(fk.log, fmt, ap);
	va_end(ap);
	fflush(fk.log);
}

static bool is_node(const char *path)
{
	const char *node = getenv("FAKE_USBFS_NODE");

	return node && path && !strcmp(path, node);
}

static int setup_device(void)
{
	const char *path = getenv("FAKE_USBFS_PROFILE"), *s;
	char err[512];

	if (!path || profile_load_file(path, &fk.p, err, sizeof(err))) {
		fprintf(stderr, "fake usbfs: %s\n", path ? err : "no FAKE_USBFS_PROFILE");
		return -1;
	}
	fk.raw_len = 18;
	for (size_t i = 0; i < fk.p.n_configs; i++)
		fk.raw_len += fk.p.configs[i].len;
	fk.raw = malloc(fk.raw_len);
	memcpy(fk.raw, fk.p.device, 18);
	for (size_t i = 0, off = 18; i < fk.p.n_configs; off += fk.p.configs[i++].len)
		memcpy(fk.raw + off, fk.p.configs[i].data, fk.p.configs[i].len);
	if (fk.p.n_configs) {
		struct profile_desc_iter it;
		const uint8_t *d;

		profile_desc_iter_init(&it, fk.p.configs[0].data, fk.p.configs[0].len);
		while (profile_desc_next(&it, &d) > 0)
			if (d[1] == 0x04 && d[0] >= 9 && d[2] < 32)
				fk.exists[d[2]] = true;
	}
	for (s = getenv("FAKE_USBFS_DRIVERS"); s && *s;) {
		unsigned n;
		int used;
		char name[32];

		if (sscanf(s, "%u:%31[^,]%n", &n, name, &used) < 2 || n >= 32)
			break;
		snprintf(fk.driver[n], sizeof(fk.driver[n]), "%s", name);
		s += used;
		if (*s == ',')
			s++;
	}
	fk.hang_type = fk.hang_req = fk.hang_value = -1;
	if ((s = getenv("FAKE_USBFS_HANG")))
		sscanf(s, "%x:%x:%x", &fk.hang_type, &fk.hang_req, &fk.hang_value);
	fk.gone_after = (s = getenv("FAKE_USBFS_GONE")) ? (unsigned)atoi(s) : 0;
	if ((s = getenv("FAKE_USBFS_LOG")))
		fk.log = fopen(s, "a");
	return 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	if (is_node(path)) {
		if (fk.fd >= 0 || setup_device())
			return errno = EBUSY, -1;
		fk.fd = eventfd(0, EFD_CLOEXEC);
		fk.pos = 0;
		return fk.fd;
	}
	if (!(flags & (O_CREAT | O_TMPFILE)))
		return __real_open(path, flags);
	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	return __real_open(path, flags, mode);
}

int __wrap_stat(const char *path, struct stat *st)
{
	if (is_node(path)) {
		memset(st, 0, sizeof(*st));
		st->st_mode = S_IFCHR | 0664;
		st->st_rdev = makedev(189, 1);  /* bus 1 address 2 */
		return 0;
	}
	return __real_stat(path, st);
}

static ssize_t raw_read(void *buf, size_t n, off_t off)
{
	if (off < 0 || (size_t)off >= fk.raw_len)
		return 0;
	if (n > fk.raw_len - (size_t)off)
		n = fk.raw_len - (size_t)off;
	memcpy(buf, fk.raw + off, n);
	return (ssize_t)n;
}

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	ssize_t r;

	if (fd != fk.fd || fd < 0)
		return __real_read(fd, buf, n);
	r = raw_read(buf, n, fk.pos);
	fk.pos += r;
	return r;
}

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	if (fd != fk.fd || fd < 0)
		return __real_pread(fd, buf, n, off);
	return raw_read(buf, n, off);
}

off_t __wrap_lseek(int fd, off_t off, int whence)
{
	if (fd != fk.fd || fd < 0)
		return __real_lseek(fd, off, whence);
	fk.pos = whence == SEEK_SET ? off : whence == SEEK_CUR ? fk.pos + off : (off_t)fk.raw_len + off;
	return fk.pos;
}

static int copy(uint8_t *buf, unsigned len, const uint8_t *data, size_t n)
{
	size_t k = n < len ? n : len;

	memcpy(buf, data, k);
	return (int)k;
}

/* One control request: bytes answered, or -EPIPE (stall). */
static int answer(uint8_t type, uint8_t req, uint16_t value, uint16_t index, uint8_t *buf,
		  unsigned len)
{
	const struct profile *p = &fk.p;
	const struct profile_get *g;
	int n;

	if (type == 0x80 && req == 0x08 && len >= 1 && p->n_configs) {
		buf[0] = p->configs[0].data[5];         /* GET_CONFIGURATION */
		return 1;
	}
	if (type == 0x80 && req == 0x06) {
		unsigned i = value & 0xff;

		switch (value >> 8) {
		case 1:
			return copy(buf, len, p->device, 18);
		case 2:
			return i < p->n_configs ? copy(buf, len, p->configs[i].data,
						       p->configs[i].len) : -EPIPE;
		case 3:
			n = profile_string_descriptor(p, index, (uint8_t)i, buf, len);
			return n < 0 ? -EPIPE : n;
		case 6:
			return p->has_qualifier ? copy(buf, len, p->qualifier, 10) : -EPIPE;
		case 0x0f:
			return p->has_bos ? copy(buf, len, p->bos.data, p->bos.len) : -EPIPE;
		default:
			return -EPIPE;
		}
	}
	if (!(type & 0x80) || ((type & 0x60) == 0 && req != 0x06))
		return -EPIPE;          /* a class descriptor (HID report) is a get */
	g = profile_find_get(p, type, req, value, index);
	if (!g || g->stall)
		return -EPIPE;
	return copy(buf, len, g->data, g->len);
}

/* usbfs's check before a control request to an interface. */
static int check_recipient(uint8_t type, uint16_t index)
{
	unsigned n = index & 0xff;

	if ((type & 0x60) == 0x40 || (type & 0x1f) != 1)
		return 0;
	if (n >= 32 || !fk.exists[n])
		return -ENOENT;
	if (fk.claimed[n])
		return 0;
	if (fk.driver[n][0])
		return -EBUSY;
	fk.claimed[n] = true;                   /* usbfs claims it for the caller */
	logf_("autoclaim %u\n", n);
	return 0;
}

static int do_control(uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		      uint8_t *data, unsigned len, bool *hang)
{
	int r;

	logf_("setup %02x %02x %04x %04x %u\n", type, req, value, index, len);
	if (fk.gone || (fk.gone_after && fk.controls >= fk.gone_after)) {
		fk.gone = true;
		return -ENODEV;
	}
	fk.controls++;
	r = check_recipient(type, index);
	if (r)
		return r;
	*hang = type == fk.hang_type && req == fk.hang_req && value == fk.hang_value;
	return answer(type, req, value, index, data, len);
}

static void log_final(void)
{
	for (unsigned n = 0; n < 32; n++)
		if (fk.exists[n])
			logf_("final %u %s%s\n", n, fk.driver[n][0] ? fk.driver[n] : "-",
			      fk.claimed[n] ? " claimed" : "");
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fk.fd || fd < 0)
		return __real_ioctl(fd, req, arg);

	switch (req) {
	case USBDEVFS_GET_CAPABILITIES:
		*(uint32_t *)arg = 0;
		return 0;
	case USBDEVFS_GET_SPEED: {
		static const int speeds[] = { 1, 2, 3, 5 };

		return speeds[fk.p.speed];
	}
	case USBDEVFS_CONNECTINFO: {
		struct usbdevfs_connectinfo *ci = arg;

		ci->devnum = 2;
		ci->slow = fk.p.speed == PROFILE_SPEED_LOW;
		return 0;
	}
	case USBDEVFS_CONTROL: {
		struct usbdevfs_ctrltransfer *c = arg;
		bool hang = false;
		int r;

		r = do_control(c->bRequestType, c->bRequest, c->wValue, c->wIndex, c->data,
			       c->wLength, &hang);
		if (hang)
			return errno = ETIMEDOUT, -1;
		return r < 0 ? (errno = -r, -1) : r;
	}
	case USBDEVFS_SUBMITURB: {
		struct usbdevfs_urb *u = arg;
		uint8_t *s = u->buffer;
		bool hang = false;
		int r;

		if (u->type != USBDEVFS_URB_TYPE_CONTROL || u->buffer_length < 8)
			return errno = EINVAL, -1;
		r = do_control(s[0], s[1], (uint16_t)(s[2] | s[3] << 8),
			       (uint16_t)(s[4] | s[5] << 8), s + 8,
			       (unsigned)(s[6] | s[7] << 8), &hang);
		if (r == -ENODEV || r == -EBUSY || r == -ENOENT)
			return errno = -r, -1;
		u->status = r < 0 ? r : 0;
		u->actual_length = r < 0 ? 0 : r;
		if (hang)
			fk.pending[fk.n_pending++] = u;
		else
			fk.done[fk.n_done++] = u;
		return 0;
	}
	case USBDEVFS_REAPURBNDELAY:
		if (!fk.n_done)
			return errno = fk.gone ? ENODEV : EAGAIN, -1;
		*(void **)arg = fk.done[0];
		memmove(fk.done, fk.done + 1, --fk.n_done * sizeof(fk.done[0]));
		return 0;
	case USBDEVFS_DISCARDURB:
		for (size_t i = 0; i < fk.n_pending; i++) {
			if (fk.pending[i] == arg) {
				fk.pending[i]->status = -ENOENT;
				fk.pending[i]->actual_length = 0;
				fk.done[fk.n_done++] = fk.pending[i];
				fk.pending[i] = fk.pending[--fk.n_pending];
				return 0;
			}
		}
		return errno = EINVAL, -1;
	case USBDEVFS_GETDRIVER: {
		struct usbdevfs_getdriver *gd = arg;

		if (gd->interface >= 32 || !fk.exists[gd->interface])
			return errno = ENODATA, -1;
		if (fk.driver[gd->interface][0])
			snprintf(gd->driver, sizeof(gd->driver), "%s", fk.driver[gd->interface]);
		else if (fk.claimed[gd->interface])
			snprintf(gd->driver, sizeof(gd->driver), "usbfs");
		else
			return errno = ENODATA, -1;
		return 0;
	}
	case USBDEVFS_CLAIMINTERFACE: {
		unsigned n = *(unsigned *)arg;

		if (n >= 32 || !fk.exists[n])
			return errno = ENOENT, -1;
		if (fk.driver[n][0])
			return errno = EBUSY, -1;
		fk.claimed[n] = true;
		logf_("claim %u\n", n);
		return 0;
	}
	case USBDEVFS_RELEASEINTERFACE: {
		unsigned n = *(unsigned *)arg;

		if (n >= 32 || !fk.claimed[n])
			return errno = EINVAL, -1;
		fk.claimed[n] = false;
		logf_("release %u\n", n);
		return 0;
	}
	case USBDEVFS_DISCONNECT_CLAIM:
		return errno = ENOTTY, -1;
	case USBDEVFS_IOCTL: {
		struct usbdevfs_ioctl *c = arg;
		unsigned n = (unsigned)c->ifno;

		if (n >= 32 || !fk.exists[n])
			return errno = EINVAL, -1;
		if (c->ioctl_code == (int)USBDEVFS_DISCONNECT) {
			if (!fk.driver[n][0])
				return errno = ENODATA, -1;
			logf_("disconnect %u %s\n", n, fk.driver[n]);
			memcpy(fk.unbound[n], fk.driver[n], sizeof(fk.unbound[n]));
			fk.driver[n][0] = '\0';
			return 0;
		}
		if (c->ioctl_code == (int)USBDEVFS_CONNECT) {
			if (fk.driver[n][0] || fk.claimed[n])
				return errno = EBUSY, -1;
			if (!fk.unbound[n][0])
				return 0;               /* no driver wants it */
			memcpy(fk.driver[n], fk.unbound[n], sizeof(fk.driver[n]));
			fk.unbound[n][0] = '\0';
			logf_("connect %u %s\n", n, fk.driver[n]);
			return 1;
		}
		return errno = ENOTTY, -1;
	}
	default:
		logf_("ioctl 0x%lx not faked\n", req);
		return errno = ENOTTY, -1;
	}
}

int __wrap_close(int fd)
{
	if (fd == fk.fd && fd >= 0) {
		/* the kernel releases what the file had claimed (drivers stay
		 * unbound) */
		for (unsigned n = 0; n < 32; n++)
			fk.claimed[n] = false;
		log_final();
		fk.fd = -1;
		if (fk.log)
			fclose(fk.log);
		fk.log = NULL;
	}
	return __real_close(fd);
}
