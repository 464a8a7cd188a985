// SPDX-License-Identifier: MIT
/* Finding a USB device in sysfs and usbfs (usbsys.h). */
#include "usbsys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "profile.h"

const char *cap_sysfs_root(void)
{
	const char *r = getenv("DMAHARNESS_SYSFS_ROOT");

	return r && *r ? r : "/sys";
}

/* One attribute's first line, without the newline; 0, or -1. */
static int read_attr(const char *dir, const char *attr, char *out, size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	out[0] = '\0';
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, attr) >= sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, out, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

static int read_hex16(const char *dir, const char *attr, uint16_t *v)
{
	char buf[32], *end;
	unsigned long x;

	if (read_attr(dir, attr, buf, sizeof(buf)) || !buf[0])
		return -1;
	x = strtoul(buf, &end, 16);
	if (*end || x > 0xffff)
		return -1;
	*v = (uint16_t)x;
	return 0;
}

static int read_dec(const char *dir, const char *attr, unsigned *v)
{
	char buf[32], *end;
	unsigned long x;

	if (read_attr(dir, attr, buf, sizeof(buf)) || !buf[0])
		return -1;
	x = strtoul(buf, &end, 10);
	if (*end || x > 0xffff)
		return -1;
	*v = (unsigned)x;
	return 0;
}

/* A device directory: 0, or -1 when it is not a USB device (no ids). */
static int read_device(const char *devices, const char *name, struct cap_usbdev *d)
{
	char dir[512];

	memset(d, 0, sizeof(*d));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", devices, name) >= sizeof(dir))
		return -1;
	if (read_hex16(dir, "idVendor", &d->vid) || read_hex16(dir, "idProduct", &d->pid) ||
	    read_dec(dir, "busnum", &d->bus) || read_dec(dir, "devnum", &d->address))
		return -1;
	snprintf(d->sysname, sizeof(d->sysname), "%s", name);
	read_attr(dir, "speed", d->speed, sizeof(d->speed));
	read_attr(dir, "manufacturer", d->manufacturer, sizeof(d->manufacturer));
	read_attr(dir, "product", d->product, sizeof(d->product));
	return 0;
}

static int by_busaddr(const void *a, const void *b)
{
	const struct cap_usbdev *x = a, *y = b;

	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	return x->address < y->address ? -1 : x->address > y->address;
}

int cap_sysfs_list(struct cap_usbdev *out, size_t max)
{
	char devices[512];
	struct dirent *e;
	size_t n = 0;
	DIR *dir;

	snprintf(devices, sizeof(devices), "%s/bus/usb/devices", cap_sysfs_root());
	dir = opendir(devices);
	if (!dir)
		return -1;
	while ((e = readdir(dir)) && n < max) {
		/* devices are "usbN" (root hubs) and "B-P.P..."; interfaces
		 * ("1-1:1.0") have a colon */
		if (e->d_name[0] == '.' || strchr(e->d_name, ':'))
			continue;
		if (read_device(devices, e->d_name, &out[n]) == 0)
			n++;
	}
	closedir(dir);
	qsort(out, n, sizeof(*out), by_busaddr);
	return (int)n;
}

int cap_sysfs_find(unsigned bus, unsigned address, struct cap_usbdev *out)
{
	static struct cap_usbdev devs[CAP_MAX_DEVICES];
	int n = cap_sysfs_list(devs, CAP_MAX_DEVICES);

	for (int i = 0; i < n; i++) {
		if (devs[i].bus == bus && devs[i].address == address) {
			*out = devs[i];
			return 0;
		}
	}
	return -1;
}

size_t cap_match_vidpid(const struct cap_usbdev *devs, size_t n, uint16_t vid, uint16_t pid,
			size_t *which, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (devs[i].vid == vid && devs[i].pid == pid) {
			if (k < max)
				which[k] = i;
			k++;
		}
	}
	return k;
}

void cap_list_devices(const struct cap_usbdev *devs, size_t n, const size_t *which,
		      size_t n_which, char *out, size_t size)
{
	size_t len = 0, count = which ? n_which : n;

	out[0] = '\0';
	if (count == 0) {
		snprintf(out, size, "none");
		return;
	}
	for (size_t k = 0; k < count && len + 1 < size; k++) {
		const struct cap_usbdev *d = &devs[which ? which[k] : k];
		char what[260] = "";
		int r;

		if (d->manufacturer[0] || d->product[0])
			snprintf(what, sizeof(what), ", %s%s%s", d->manufacturer,
				 d->manufacturer[0] && d->product[0] ? " " : "", d->product);
		r = snprintf(out + len, size - len, "%s%04x:%04x (bus %u address %u%s)",
			     k ? ", " : "", d->vid, d->pid, d->bus, d->address, what);
		if (r < 0)
			break;
		len += (size_t)r;
	}
	if (len >= size && size > 4)
		memcpy(out + size - 4, "...", 4);
}

void cap_node_path(unsigned bus, unsigned address, char *out, size_t size)
{
	snprintf(out, size, CAP_USBFS_ROOT "/%03u/%03u", bus, address);
}

int cap_node_busaddr(const char *path, const struct stat *st, unsigned *bus, unsigned *address)
{
	const char *slash, *prev;
	unsigned b, a;
	char tail[16];

	if (st && S_ISCHR(st->st_mode) && major(st->st_rdev) == CAP_USB_MAJOR) {
		unsigned minor_ = minor(st->st_rdev);

		*bus = minor_ / 128 + 1;
		*address = minor_ % 128 + 1;
		return 0;
	}
	slash = strrchr(path, '/');
	if (!slash || slash == path)
		return -1;
	for (prev = slash - 1; prev > path && *prev != '/'; prev--)
		;
	if (*prev == '/')
		prev++;
	if (sscanf(prev, "%3u/%3u%15s", &b, &a, tail) != 2 || b < 1 || a < 1 || a > 127)
		return -1;
	*bus = b;
	*address = a;
	return 0;
}

int cap_speed_from_sysfs(const char *s)
{
	static const struct { const char *mbps; int speed; } tab[] = {
		{ "1.5", PROFILE_SPEED_LOW }, { "12", PROFILE_SPEED_FULL },
		{ "480", PROFILE_SPEED_HIGH }, { "5000", PROFILE_SPEED_SUPER },
		{ "10000", PROFILE_SPEED_SUPER }, { "20000", PROFILE_SPEED_SUPER },
	};

	for (size_t i = 0; s && i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(s, tab[i].mbps))
			return tab[i].speed;
	return -1;
}

int cap_speed_from_usbfs(int v)
{
	switch (v) {
	case 1: return PROFILE_SPEED_LOW;       /* USB_SPEED_LOW */
	case 2: return PROFILE_SPEED_FULL;      /* USB_SPEED_FULL */
	case 3:                                 /* USB_SPEED_HIGH */
	case 4: return PROFILE_SPEED_HIGH;      /* USB_SPEED_WIRELESS */
	case 5:                                 /* USB_SPEED_SUPER */
	case 6: return PROFILE_SPEED_SUPER;     /* USB_SPEED_SUPER_PLUS */
	default: return -1;
	}
}
