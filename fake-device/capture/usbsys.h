/* SPDX-License-Identifier: MIT */
/*
 * Finding a USB device: its sysfs directory (/sys/bus/usb/devices/N-P...)
 * by VID:PID or bus/address, its usbfs node, and its speed.  The sysfs
 * root is $DMAHARNESS_SYSFS_ROOT (default /sys) so that the tests can use
 * a fake tree.  Nothing here needs libusb.
 */
#ifndef CAPTURE_USBSYS_H
#define CAPTURE_USBSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#define CAP_USBFS_ROOT   "/dev/bus/usb"
#define CAP_USB_MAJOR    189    /* usbfs device nodes (USB_DEVICE_MAJOR) */
#define CAP_MAX_DEVICES  128

struct cap_usbdev {
	char sysname[256];              /* "1-1.2"; "" when sysfs had nothing */
	unsigned bus, address;
	uint16_t vid, pid;
	char speed[16];                 /* sysfs `speed`: "480", "1.5"; "" */
	char manufacturer[128], product[128];      /* sysfs strings; "" */
};

/* $DMAHARNESS_SYSFS_ROOT, or "/sys". */
const char *cap_sysfs_root(void);

/* Every USB device sysfs lists (interfaces left out), sorted by bus and
 * address, at most @max into @out.  Returns how many, or -1 with errno
 * when ROOT/bus/usb/devices cannot be read. */
int cap_sysfs_list(struct cap_usbdev *out, size_t max);

/* The device at @bus/@address from sysfs; 0, or -1 when sysfs does not
 * have it (or is not there). */
int cap_sysfs_find(unsigned bus, unsigned address, struct cap_usbdev *out);

/* The devices of @devs with @vid:@pid: their positions into @which (at
 * most @max); returns how many matched. */
size_t cap_match_vidpid(const struct cap_usbdev *devs, size_t n, uint16_t vid,
			uint16_t pid, size_t *which, size_t max);

/* "1d6b:0002 (bus 1 address 1, Linux Foundation 2.0 root hub), ..." for
 * messages, in @out. */
void cap_list_devices(const struct cap_usbdev *devs, size_t n, const size_t *which,
		      size_t n_which, char *out, size_t size);

/* /dev/bus/usb/BBB/DDD. */
void cap_node_path(unsigned bus, unsigned address, char *out, size_t size);

/* Bus and address of a usbfs node: from its device number when @st is a
 * character device of major 189 (minor = (bus - 1) * 128 + address - 1),
 * else from a path of the form .../BBB/DDD.  0 or -1. */
int cap_node_busaddr(const char *path, const struct stat *st, unsigned *bus,
		     unsigned *address);

/* enum profile_speed from sysfs `speed` ("1.5", "12", "480", "5000",
 * "10000", "20000"), or from USBDEVFS_GET_SPEED's answer (enum
 * usb_device_speed); -1 when unknown. */
int cap_speed_from_sysfs(const char *s);
int cap_speed_from_usbfs(int v);

#endif
