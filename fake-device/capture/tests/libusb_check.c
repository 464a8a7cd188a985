// SPDX-License-Identifier: MIT
/*
 * Linked like dmaharness-capture (static libusb + udev_stub.o): libusb
 * starts and stops without device discovery, and refuses a node that is
 * not usbfs, without reaching a udev stub (which would abort).  Prints
 * "N passed, N failed".
 *
 * `libusb-check --list` calls libusb_get_device_list(), which reaches
 * udev_monitor_receive_device() through the backend's hotplug_poll even
 * without discovery (libusb 1.0.26 core.c): the stub must abort loudly.
 * dmaharness-capture never calls it (static_check.sh greps for it).
 */
#include <fcntl.h>
#include <libusb.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	libusb_context *ctx = NULL;
	libusb_device_handle *h = NULL;
	int pass = 0, fail = 0, r, fd;

#define CHECK(cond, what) do { \
		if (cond) { pass++; printf("ok - %s\n", what); } \
		else { fail++; printf("not ok - %s (%d)\n", what, r); } \
	} while (0)
	r = libusb_set_option(NULL, LIBUSB_OPTION_NO_DEVICE_DISCOVERY);
	CHECK(r == LIBUSB_SUCCESS, "libusb_set_option(NO_DEVICE_DISCOVERY)");
	r = libusb_init(&ctx);
	CHECK(r == LIBUSB_SUCCESS, "libusb_init without discovery, no udev");
	if (r == LIBUSB_SUCCESS && argc > 1 && argv[1][0] == '-') {
		libusb_device **list;

		fflush(stdout);
		libusb_get_device_list(ctx, &list);     /* aborts in udev_stub.c */
		return 0;
	}
	if (r == LIBUSB_SUCCESS) {
		fd = open("/dev/null", O_RDWR);
		r = libusb_wrap_sys_device(ctx, (intptr_t)fd, &h);
		CHECK(r < 0 && !h, "libusb_wrap_sys_device refuses /dev/null");
		close(fd);
		libusb_exit(ctx);
		pass++;
		printf("ok - libusb_exit\n");
	}
	printf("%d passed, %d failed\n", pass, fail);
	return fail != 0;
}
