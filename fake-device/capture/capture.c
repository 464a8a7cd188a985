// SPDX-License-Identifier: MIT
/*
 * dmaharness-capture: read a USB device's descriptors and class GET
 * answers through libusb on usbfs and write them as a profile
 * (fake-device/profiles/FORMAT.md).  README.md says how to use it; --help
 * too.
 *
 * libusb runs without device discovery (LIBUSB_OPTION_NO_DEVICE_DISCOVERY):
 * the device is found in sysfs (or given as its usbfs node), opened here
 * and handed to libusb with libusb_wrap_sys_device().  So libusb never
 * touches udev, which lets the binary be linked static (udev_stub.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <libusb.h>
#include <limits.h>
#include <linux/usbdevice_fs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "plan.h"
#include "profile.h"
#include "usbsys.h"
#include "xfer.h"

#define PROG "dmaharness-capture"
#define LIBUSB_CTRL_MAX 4096    /* libusb's linux backend: MAX_CTRL_BUFFER_LENGTH */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

/* ---- The device, through libusb ----------------------------------------- */

struct usbdev {
	libusb_device_handle *h;
	int fd;                         /* the usbfs node, ours to close */
	unsigned from_kernel;           /* configurations read from usbfs's copy */
};

/* Configuration @index as the kernel read it at enumeration: usbfs's read()
 * gives the device descriptor then every configuration, wTotalLength
 * bytes each.  Bytes copied (at most @len), or LIBUSB_ERROR_*. */
static int kernel_config(int fd, unsigned index, uint8_t *buf, uint16_t len)
{
	uint8_t *all = NULL;
	size_t size = 0, cap = 0, off = 18;
	ssize_t n;
	int r = LIBUSB_ERROR_NOT_FOUND;

	do {
		uint8_t *more;

		if (cap - size < 4096) {
			cap = cap ? cap * 2 : 65536;
			more = realloc(all, cap);
			if (!more) {
				free(all);
				return LIBUSB_ERROR_NO_MEM;
			}
			all = more;
		}
		n = pread(fd, all + size, cap - size, (off_t)size);
		if (n > 0)
			size += (size_t)n;
	} while (n > 0);
	if (n < 0) {
		free(all);
		return LIBUSB_ERROR_IO;
	}
	for (unsigned c = 0; off + 9 <= size; c++) {
		size_t total = (size_t)(all[off + 2] | all[off + 3] << 8);

		if (total < 9 || off + total > size)
			break;
		if (c == index) {
			r = total < len ? (int)total : len;
			memcpy(buf, all + off, (size_t)r);
			break;
		}
		off += total;
	}
	free(all);
	return r;
}

static int dev_control(void *dev, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		       uint8_t *buf, uint16_t len, unsigned timeout_ms)
{
	struct usbdev *d = dev;

	if (len > LIBUSB_CTRL_MAX && type == 0x80 && req == 0x06 && value >> 8 == 0x02) {
		int r = kernel_config(d->fd, value & 0xff, buf, len);

		if (r >= 0)
			d->from_kernel++;
		return r;
	}
	if (len > LIBUSB_CTRL_MAX)
		return LIBUSB_ERROR_NOT_SUPPORTED;  /* libusb refuses > 4096 bytes */
	return libusb_control_transfer(d->h, type, req, value, index, buf, len, timeout_ms);
}

static int dev_driver_active(void *dev, uint8_t iface)
{
	return libusb_kernel_driver_active(((struct usbdev *)dev)->h, iface);
}

static int dev_driver_name(void *dev, uint8_t iface, char *name, size_t size)
{
	struct usbdevfs_getdriver gd;

	memset(&gd, 0, sizeof(gd));
	gd.interface = iface;
	if (ioctl(((struct usbdev *)dev)->fd, USBDEVFS_GETDRIVER, &gd) < 0)
		return -1;
	gd.driver[sizeof(gd.driver) - 1] = '\0';
	snprintf(name, size, "%s", gd.driver);
	return 0;
}

static int dev_detach(void *dev, uint8_t iface)
{
	return libusb_detach_kernel_driver(((struct usbdev *)dev)->h, iface);
}

static int dev_attach(void *dev, uint8_t iface)
{
	return libusb_attach_kernel_driver(((struct usbdev *)dev)->h, iface);
}

static int dev_claim(void *dev, uint8_t iface)
{
	return libusb_claim_interface(((struct usbdev *)dev)->h, iface);
}

static int dev_release(void *dev, uint8_t iface)
{
	return libusb_release_interface(((struct usbdev *)dev)->h, iface);
}

static const struct cap_ops libusb_ops = {
	dev_control, dev_driver_active, dev_driver_name, dev_detach, dev_attach,
	dev_claim, dev_release,
};

/* ---- Choosing the device -------------------------------------------------- */

struct target {
	char node[PATH_MAX];
	unsigned bus, address;
	struct cap_usbdev sys;          /* sysname "" when sysfs does not have it */
};

static int fatal_json;                  /* --json: errors go in the JSON object */
static FILE *json_out;

/* The fields every dmaharness --json object starts with (docs/json.md),
 * up to the value of "ok". */
#define JSON_ENVELOPE "\"version\":1,\"command\":\"capture\",\"ok\":"

static int fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Report an error that leaves nothing written; returns CAP_EXIT_FATAL. */
static int fatal(const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (fatal_json) {
		fputs("{" JSON_ENVELOPE "false,\"result\":\"error\",\"exit\":1,\"error\":",
		      json_out);
		cap_json_string(json_out, msg);
		fputs("}\n", json_out);
	} else {
		fprintf(stderr, PROG ": %s\n", msg);
	}
	return CAP_EXIT_FATAL;
}

static int choose(const struct cap_opts *o, struct target *t)
{
	static struct cap_usbdev devs[CAP_MAX_DEVICES];
	char list[4096];
	size_t which[CAP_MAX_DEVICES];
	int n;

	memset(t, 0, sizeof(*t));
	switch (o->sel) {
	case CAP_SEL_DEVICE: {
		size_t k;

		n = cap_sysfs_list(devs, CAP_MAX_DEVICES);
		if (n < 0)
			return fatal("cannot list USB devices in %s/bus/usb/devices: %s "
				     "(use --node /dev/bus/usb/BBB/DDD)", cap_sysfs_root(),
				     strerror(errno));
		k = cap_match_vidpid(devs, (size_t)n, o->vid, o->pid, which, CAP_MAX_DEVICES);
		if (k == 0) {
			cap_list_devices(devs, (size_t)n, NULL, 0, list, sizeof(list));
			return fatal("no USB device %04x:%04x is plugged in; present: %s",
				     o->vid, o->pid, list);
		}
		if (k > 1) {
			cap_list_devices(devs, (size_t)n, which, k, list, sizeof(list));
			return fatal("%zu devices are %04x:%04x: %s; choose one with "
				     "--bus N --address N", k, o->vid, o->pid, list);
		}
		t->sys = devs[which[0]];
		t->bus = t->sys.bus;
		t->address = t->sys.address;
		cap_node_path(t->bus, t->address, t->node, sizeof(t->node));
		return 0;
	}
	case CAP_SEL_BUSADDR:
		t->bus = o->bus;
		t->address = o->address;
		cap_node_path(t->bus, t->address, t->node, sizeof(t->node));
		if (cap_sysfs_find(t->bus, t->address, &t->sys)) {
			struct stat st;

			memset(&t->sys, 0, sizeof(t->sys));
			if (stat(t->node, &st) && errno == ENOENT) {
				n = cap_sysfs_list(devs, CAP_MAX_DEVICES);
				if (n < 0)
					return fatal("no USB device at bus %u address %u (no %s)",
						     t->bus, t->address, t->node);
				cap_list_devices(devs, (size_t)n, NULL, 0, list, sizeof(list));
				return fatal("no USB device at bus %u address %u; present: %s",
					     t->bus, t->address, list);
			}
		}
		return 0;
	case CAP_SEL_NODE: {
		struct stat st;

		snprintf(t->node, sizeof(t->node), "%s", o->node);
		if (stat(t->node, &st))
			return fatal("%s: %s", t->node, strerror(errno));
		if (cap_node_busaddr(t->node, &st, &t->bus, &t->address) ||
		    !S_ISCHR(st.st_mode) || major(st.st_rdev) != CAP_USB_MAJOR)
			return fatal("%s is not a usbfs device node (a character device "
				     "%d:N, like /dev/bus/usb/001/004)", t->node, CAP_USB_MAJOR);
		if (cap_sysfs_find(t->bus, t->address, &t->sys))
			memset(&t->sys, 0, sizeof(t->sys));
		return 0;
	}
	case CAP_SEL_NONE:
		break;
	}
	return fatal("no device chosen");
}

static int open_node(const struct target *t)
{
	struct stat st;
	int fd;

	if (stat(t->node, &st) == 0 &&
	    (!S_ISCHR(st.st_mode) || major(st.st_rdev) != CAP_USB_MAJOR)) {
		fatal("%s is not a usbfs device node", t->node);
		return -1;
	}
	fd = open(t->node, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	if (errno == EACCES || errno == EPERM) {
		if (t->sys.sysname[0])
			fatal("permission denied opening %s read-write (usbfs needs write "
			      "access for any control request): run as root, or add a udev "
			      "rule such as SUBSYSTEM==\"usb\", ATTR{idVendor}==\"%04x\", "
			      "ATTR{idProduct}==\"%04x\", MODE=\"0660\", GROUP=\"plugdev\" "
			      "in /etc/udev/rules.d/", t->node, t->sys.vid, t->sys.pid);
		else
			fatal("permission denied opening %s read-write (usbfs needs write "
			      "access for any control request): run as root, or add a udev "
			      "rule giving your group access to it", t->node);
	} else if (errno == ENOENT || errno == ENODEV || errno == ENXIO) {
		fatal("no USB device at bus %u address %u: %s: %s", t->bus, t->address,
		      t->node, strerror(errno));
	} else {
		fatal("cannot open %s: %s", t->node, strerror(errno));
	}
	return -1;
}

/* ---- Reporting -------------------------------------------------------------- */

struct outcome {
	const struct target *t;
	const struct profile *p;
	const struct plan_report *rep;
	const struct cap_xfer *x;
	const char *output;
	const char *invalid;            /* profile_validate's complaint, or NULL */
	const char *notes;              /* lines: re-attach problems, remarks */
	int exit_code;
};

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void print_lines(const char *prefix, const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "\n");

		fprintf(stderr, "%s%.*s\n", prefix, (int)n, s);
		s += n + (s[n] == '\n');
	}
}

static void report_text(const struct outcome *o)
{
	const struct plan_report *r = o->rep;
	size_t listed = count_lines(r->failures);

	fprintf(stderr, PROG ": %s (bus %u address %u, %04x:%04x): %zu requests asked, "
		"%zu answered, %zu stalled, %zu failed\n", o->t->node, o->t->bus,
		o->t->address, (unsigned)(o->p->device[8] | o->p->device[9] << 8),
		(unsigned)(o->p->device[10] | o->p->device[11] << 8), r->asked, r->answered,
		r->stalled, r->failed);
	print_lines("  failed: ", r->failures);
	if (r->failed > listed)
		fprintf(stderr, "  ... and %zu more failures not listed\n", r->failed - listed);
	print_lines("  stalled: ", o->x->stalls);
	listed = count_lines(o->x->stalls);
	if (o->x->n_stalls > listed)
		fprintf(stderr, "  ... and %zu more stalls not listed\n", o->x->n_stalls - listed);
	for (unsigned n = 0; n < 256; n++) {
		const struct cap_iface *in = &o->x->ifaces[n];

		if (in->not_sent)
			fprintf(stderr, PROG ": %u request%s to interface %u not sent: %s\n",
				in->not_sent, in->not_sent == 1 ? "" : "s", n, in->reason);
	}
	if (o->notes[0])
		fprintf(stderr, "%s", o->notes);
	if (o->invalid)
		fprintf(stderr, PROG ": the profile does not pass fake-uvc's checks, so "
			"fake-uvc will refuse it until it is fixed by hand: %s\n", o->invalid);
	fprintf(stderr, PROG ": profile %s written to %s\n", o->p->name,
		o->output ? o->output : "stdout");
}

static void json_lines(FILE *f, const char *key, const char *lines)
{
	const char *s = lines;
	bool first = true;

	fprintf(f, ",\"%s\":[", key);
	while (*s) {
		size_t n = strcspn(s, "\n");
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		if (!first)
			fputc(',', f);
		cap_json_string(f, line);
		first = false;
		s += n + (s[n] == '\n');
	}
	fputc(']', f);
}

static void report_json(FILE *f, const struct outcome *o)
{
	const struct plan_report *r = o->rep;
	char buf[32];
	bool first = true;

	fprintf(f, "{" JSON_ENVELOPE "%s,\"result\":\"%s\",\"exit\":%d",
		o->exit_code ? "false" : "true", o->exit_code ? "partial" : "captured",
		o->exit_code);
	fputs(",\"node\":", f);
	cap_json_string(f, o->t->node);
	fprintf(f, ",\"bus\":%u,\"address\":%u", o->t->bus, o->t->address);
	snprintf(buf, sizeof(buf), "%04x:%04x",
		 (unsigned)(o->p->device[8] | o->p->device[9] << 8),
		 (unsigned)(o->p->device[10] | o->p->device[11] << 8));
	fputs(",\"device\":", f);
	cap_json_string(f, buf);
	fputs(",\"name\":", f);
	cap_json_string(f, o->p->name);
	fputs(",\"output\":", f);
	if (o->output)
		cap_json_string(f, o->output);
	else
		fputs("null", f);
	fprintf(f, ",\"asked\":%zu,\"answered\":%zu,\"stalled\":%zu,\"failed\":%zu",
		r->asked, r->answered, r->stalled, r->failed);
	json_lines(f, "failures", r->failures);
	json_lines(f, "stalls", o->x->stalls);
	fputs(",\"interfaces\":[", f);
	for (unsigned n = 0; n < 256; n++) {
		const struct cap_iface *in = &o->x->ifaces[n];

		if (in->state == CAP_IF_UNTOUCHED && !in->not_sent && !in->driver[0])
			continue;
		fprintf(f, "%s{\"interface\":%u,\"driver\":", first ? "" : ",", n);
		if (in->driver[0])
			cap_json_string(f, in->driver);
		else
			fputs("null", f);
		fprintf(f, ",\"not_sent\":%u,\"reason\":", in->not_sent);
		if (in->not_sent)
			cap_json_string(f, in->reason);
		else
			fputs("null", f);
		fputc('}', f);
		first = false;
	}
	fputc(']', f);
	json_lines(f, "notes", o->notes);
	fputs(",\"invalid\":", f);
	if (o->invalid)
		cap_json_string(f, o->invalid);
	else
		fputs("null", f);
	fputs("}\n", f);
	fflush(f);
}

/* ---- main ------------------------------------------------------------------ */

static int speed_of(const struct cap_opts *o, const struct target *t, int fd)
{
	int s;

	if (o->speed >= 0)
		return o->speed;
	s = cap_speed_from_sysfs(t->sys.speed);
	if (s >= 0)
		return s;
	return cap_speed_from_usbfs(ioctl(fd, USBDEVFS_GET_SPEED));
}

int main(int argc, char **argv)
{
	static struct profile p;
	static struct plan_report rep;
	static struct cap_xfer x;
	static char notes[8192];
	char err[4096], invalid[1024];
	struct cap_opts o;
	struct target t;
	struct usbdev d = { NULL, -1, 0 };
	libusb_context *ctx = NULL;
	struct sigaction sa;
	int r, speed, rc;

	if (cap_parse_args(argc, argv, &o, err, sizeof(err))) {
		fprintf(stderr, PROG ": %s\nTry `" PROG " --help'.\n", err);
		return CAP_EXIT_USAGE;
	}
	if (o.help) {
		cap_usage(stdout);
		return CAP_EXIT_OK;
	}
	fatal_json = o.json;
	json_out = o.output ? stdout : stderr;

	rc = choose(&o, &t);
	if (rc)
		return rc;
	d.fd = open_node(&t);
	if (d.fd < 0)
		return CAP_EXIT_FATAL;
	speed = speed_of(&o, &t, d.fd);
	if (speed < 0) {
		close(d.fd);
		return fatal("cannot tell the speed of %s (sysfs does not say, usbfs's "
			     "USBDEVFS_GET_SPEED neither): give --speed", t.node);
	}

	/* No discovery: libusb starts neither udev nor a scan of the buses. */
	r = libusb_set_option(NULL, LIBUSB_OPTION_NO_DEVICE_DISCOVERY);
	if (r == LIBUSB_SUCCESS)
		r = libusb_init(&ctx);
	if (r == LIBUSB_SUCCESS)
		r = libusb_wrap_sys_device(ctx, (intptr_t)d.fd, &d.h);
	if (r != LIBUSB_SUCCESS) {
		if (ctx)
			libusb_exit(ctx);
		close(d.fd);
		return fatal("libusb cannot use %s: %s (%s)", t.node, cap_error_text(r),
			     libusb_error_name(r));
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	cap_xfer_init(&x, &libusb_ops, &d, o.timeout_ms, o.detach);
	x.verbose = o.verbose;
	x.log = stderr;
	x.stop = &stop_signal;
	p.speed = (enum profile_speed)speed;
	r = plan_capture(&p, cap_xfer_fn, &x, &rep, err, sizeof(err));
	/* interfaces back to their drivers before anything else can fail */
	cap_xfer_finish(&x, notes, sizeof(notes));
	if (r == 0) {
		struct libusb_config_descriptor *cfg;

		if (p.n_configs && p.configs[0].len >= 9 &&
		    libusb_get_active_config_descriptor(libusb_get_device(d.h),
								       &cfg) == 0) {
			if (cfg->bConfigurationValue != p.configs[0].data[5]) {
				size_t len = strlen(notes);

				snprintf(notes + len, sizeof(notes) - len, "note: configuration %u "
					 "is active, but the class requests were planned from the "
					 "first one (%u)\n", cfg->bConfigurationValue,
					 p.configs[0].data[5]);
			}
			libusb_free_config_descriptor(cfg);
		}
		if (d.from_kernel) {
			size_t len = strlen(notes);

			snprintf(notes + len, sizeof(notes) - len, "note: %u configuration%s longer "
				 "than libusb's 4096-byte limit read from the kernel's copy "
				 "(usbfs)\n", d.from_kernel, d.from_kernel == 1 ? "" : "s");
		}
	}
	libusb_close(d.h);
	libusb_exit(ctx);
	close(d.fd);
	if (notes[0] && r != 0)
		fprintf(stderr, "%s", notes);

	if (stop_signal) {
		profile_free(&p);
		return fatal("interrupted by signal %d: nothing written", (int)stop_signal);
	}
	if (r) {
		const char *why = rep.failures[0] ? rep.failures : "";
		size_t n = strcspn(why, "\n");

		profile_free(&p);
		return fatal("%s: %s%s%.*s", t.node, err, n ? ": " : "", (int)n, why);
	}
	if (cap_fill_identity(&o, &p, time(NULL))) {
		profile_free(&p);
		return fatal("out of memory");
	}
	if (x.refused) {
		size_t len = strlen(notes);

		snprintf(notes + len, sizeof(notes) - len, "bug: the plan asked %zu request%s "
			 "that capture does not send (not a read it allows): fix fake-device/src/plan.c\n",
			 x.refused, x.refused == 1 ? "" : "s");
	}
	rc = rep.failed || x.refused ? CAP_EXIT_PARTIAL : CAP_EXIT_OK;
	if (profile_validate(&p, invalid, sizeof(invalid)))
		rc = CAP_EXIT_PARTIAL;
	else
		invalid[0] = '\0';
	if (cap_write_profile(o.output, &p, err, sizeof(err))) {
		profile_free(&p);
		return fatal("nothing written: %s", err);
	}

	struct outcome out = { &t, &p, &rep, &x, o.output, invalid[0] ? invalid : NULL,
			       notes, rc };
	if (o.json)
		report_json(json_out, &out);
	else
		report_text(&out);
	profile_free(&p);
	return rc;
}
