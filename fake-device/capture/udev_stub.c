// SPDX-License-Identifier: MIT
/*
 * The libudev functions Debian's static libusb-1.0.a refers to (its
 * linux_udev.o: the hot-plug monitor and the device scan), for linking
 * dmaharness-capture static: there is no libudev.a.
 *
 * They are never called.  capture.c sets LIBUSB_OPTION_NO_DEVICE_DISCOVERY
 * before libusb_init(), and libusb's linux backend then returns from
 * op_init() before it starts the udev monitor or scans for devices (and
 * op_exit() before it stops them); the device is opened by capture.c and
 * given to libusb_wrap_sys_device(), which uses only usbfs.  Should one be
 * called anyway, it says so and aborts rather than pretend to work.
 *
 * One libusb call would reach them even so: libusb_get_device_list() polls
 * the hot-plug monitor (udev_monitor_receive_device) whatever the option.
 * The capture never calls it (tests/static_check.sh checks the sources, and
 * that a stub reached this way aborts with the message below).
 *
 * The list is exactly `nm -u` of linux_udev.o in the archive, udev_*
 * symbols only; `make check-stubs` (part of `make test`) compares them.
 * The prototypes are not libudev's: only the names matter to the linker,
 * and no caller ever reaches these.
 */
#include <stdio.h>
#include <stdlib.h>

static void __attribute__((noreturn)) udev_called(const char *name)
{
	fprintf(stderr, "dmaharness-capture: internal error: libusb called %s(), which "
		"this static build does not have (libudev is left out: device discovery "
		"must stay off)\n", name);
	abort();
}

#define UDEV_STUB(name) \
	void name(void); \
	void name(void) { udev_called(#name); }

UDEV_STUB(udev_device_get_action)
UDEV_STUB(udev_device_get_devnode)
UDEV_STUB(udev_device_get_sysname)
UDEV_STUB(udev_device_new_from_syspath)
UDEV_STUB(udev_device_unref)
UDEV_STUB(udev_enumerate_add_match_property)
UDEV_STUB(udev_enumerate_add_match_subsystem)
UDEV_STUB(udev_enumerate_get_list_entry)
UDEV_STUB(udev_enumerate_new)
UDEV_STUB(udev_enumerate_scan_devices)
UDEV_STUB(udev_enumerate_unref)
UDEV_STUB(udev_list_entry_get_name)
UDEV_STUB(udev_list_entry_get_next)
UDEV_STUB(udev_monitor_enable_receiving)
UDEV_STUB(udev_monitor_filter_add_match_subsystem_devtype)
UDEV_STUB(udev_monitor_get_fd)
UDEV_STUB(udev_monitor_new_from_netlink)
UDEV_STUB(udev_monitor_receive_device)
UDEV_STUB(udev_monitor_unref)
UDEV_STUB(udev_new)
UDEV_STUB(udev_unref)
