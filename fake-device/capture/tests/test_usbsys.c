// SPDX-License-Identifier: MIT
/* Finding devices in a fake sysfs tree (usbsys.c). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "profile.h"
#include "tests.h"
#include "usbsys.h"

static char root[64];

static void put(const char *dev, const char *attr, const char *value)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bus/usb/devices/%s", root, dev);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bus/usb/devices/%s/%s", root, dev, attr);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", value);
	fclose(f);
}

static void device(const char *dev, const char *vid, const char *pid, const char *bus,
		   const char *addr, const char *speed, const char *product)
{
	put(dev, "idVendor", vid);
	put(dev, "idProduct", pid);
	put(dev, "busnum", bus);
	put(dev, "devnum", addr);
	if (speed)
		put(dev, "speed", speed);
	if (product)
		put(dev, "product", product);
}

/* A machine with two root hubs, two identical webcams and a keyboard. */
static int setup(void **state)
{
	char path[512];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/capture-sysfs-XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(path, sizeof(path), "%s/bus", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bus/usb", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/bus/usb/devices", root);
	mkdir(path, 0755);
	device("usb2", "1d6b", "0003", "2", "1", "5000", "xHCI Host Controller");
	device("usb1", "1d6b", "0002", "1", "1", "480", "xHCI Host Controller");
	device("1-2", "046d", "0825", "1", "7", "480", "C270 HD WEBCAM");
	put("1-2", "manufacturer", "Logitech");
	device("1-1.4", "046d", "0825", "1", "12", "480", NULL);
	device("1-3", "046d", "c31c", "1", "3", "1.5", "USB Keyboard");
	/* an interface directory has no ids and a colon in its name */
	put("1-2:1.0", "bInterfaceClass", "0e");
	/* a half-written device is skipped */
	put("1-9", "idVendor", "abcd");
	setenv("DMAHARNESS_SYSFS_ROOT", root, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	unsetenv("DMAHARNESS_SYSFS_ROOT");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_list(void **state)
{
	struct cap_usbdev d[CAP_MAX_DEVICES];
	int n;

	(void)state;
	assert_string_equal(cap_sysfs_root(), root);
	n = cap_sysfs_list(d, CAP_MAX_DEVICES);
	assert_int_equal(n, 5);
	/* sorted by bus and address */
	assert_int_equal(d[0].bus, 1);
	assert_int_equal(d[0].address, 1);
	assert_int_equal(d[1].address, 3);
	assert_string_equal(d[1].sysname, "1-3");
	assert_string_equal(d[1].speed, "1.5");
	assert_int_equal(d[2].address, 7);
	assert_int_equal(d[2].vid, 0x046d);
	assert_int_equal(d[2].pid, 0x0825);
	assert_string_equal(d[2].manufacturer, "Logitech");
	assert_string_equal(d[2].product, "C270 HD WEBCAM");
	assert_int_equal(d[3].address, 12);
	assert_string_equal(d[3].product, "");
	assert_int_equal(d[4].bus, 2);
	assert_string_equal(d[4].speed, "5000");
	assert_int_equal(cap_sysfs_list(d, 2), 2);
}

static void test_match(void **state)
{
	struct cap_usbdev d[CAP_MAX_DEVICES];
	size_t which[4];
	char msg[1024];
	int n;

	(void)state;
	n = cap_sysfs_list(d, CAP_MAX_DEVICES);
	assert_int_equal(cap_match_vidpid(d, (size_t)n, 0x046d, 0xc31c, which, 4), 1);
	assert_string_equal(d[which[0]].sysname, "1-3");
	assert_int_equal(cap_match_vidpid(d, (size_t)n, 0x046d, 0x0825, which, 4), 2);
	cap_list_devices(d, (size_t)n, which, 2, msg, sizeof(msg));
	assert_string_equal(msg, "046d:0825 (bus 1 address 7, Logitech C270 HD WEBCAM), "
			    "046d:0825 (bus 1 address 12)");
	assert_int_equal(cap_match_vidpid(d, (size_t)n, 0x1234, 0x5678, which, 4), 0);
	cap_list_devices(d, (size_t)n, NULL, 0, msg, sizeof(msg));
	assert_non_null(strstr(msg, "1d6b:0002 (bus 1 address 1, xHCI Host Controller)"));
	assert_non_null(strstr(msg, "046d:c31c (bus 1 address 3, USB Keyboard)"));
	cap_list_devices(d, 0, NULL, 0, msg, sizeof(msg));
	assert_string_equal(msg, "none");
	cap_list_devices(d, (size_t)n, NULL, 0, msg, 20);   /* cut short, still a string */
	assert_int_equal(strlen(msg), 19);
}

static void test_find(void **state)
{
	struct cap_usbdev d;

	(void)state;
	assert_int_equal(cap_sysfs_find(1, 7, &d), 0);
	assert_string_equal(d.sysname, "1-2");
	assert_int_equal(cap_sysfs_find(2, 1, &d), 0);
	assert_int_equal(d.pid, 0x0003);
	assert_int_equal(cap_sysfs_find(1, 99, &d), -1);
	/* no sysfs at all (a guest without it mounted) */
	setenv("DMAHARNESS_SYSFS_ROOT", "/nonexistent-capture-sysfs", 1);
	assert_int_equal(cap_sysfs_find(1, 7, &d), -1);
	assert_int_equal(cap_sysfs_list(&d, 1), -1);
	setenv("DMAHARNESS_SYSFS_ROOT", root, 1);
}

static void test_node(void **state)
{
	struct stat st;
	unsigned bus = 0, addr = 0;
	char path[64];

	(void)state;
	cap_node_path(1, 4, path, sizeof(path));
	assert_string_equal(path, "/dev/bus/usb/001/004");
	cap_node_path(12, 127, path, sizeof(path));
	assert_string_equal(path, "/dev/bus/usb/012/127");

	/* from the device number: minor (bus - 1) * 128 + address - 1 */
	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFCHR | 0664;
	st.st_rdev = makedev(189, 128 + 4);
	assert_int_equal(cap_node_busaddr("/anything", &st, &bus, &addr), 0);
	assert_int_equal(bus, 2);
	assert_int_equal(addr, 5);
	/* from the path when the node is not usbfs's (a copy, a test) */
	st.st_rdev = makedev(1, 3);
	assert_int_equal(cap_node_busaddr("/dev/bus/usb/003/009", &st, &bus, &addr), 0);
	assert_int_equal(bus, 3);
	assert_int_equal(addr, 9);
	assert_int_equal(cap_node_busaddr("001/002", NULL, &bus, &addr), 0);
	assert_int_equal(bus, 1);
	assert_int_equal(addr, 2);
	assert_int_equal(cap_node_busaddr("/dev/null", NULL, &bus, &addr), -1);
	assert_int_equal(cap_node_busaddr("/dev/bus/usb/001/0045", NULL, &bus, &addr), -1);
	assert_int_equal(cap_node_busaddr("/dev/bus/usb/001/000", NULL, &bus, &addr), -1);
	assert_int_equal(cap_node_busaddr("node", NULL, &bus, &addr), -1);
}

static void test_speed(void **state)
{
	(void)state;
	assert_int_equal(cap_speed_from_sysfs("1.5"), PROFILE_SPEED_LOW);
	assert_int_equal(cap_speed_from_sysfs("12"), PROFILE_SPEED_FULL);
	assert_int_equal(cap_speed_from_sysfs("480"), PROFILE_SPEED_HIGH);
	assert_int_equal(cap_speed_from_sysfs("5000"), PROFILE_SPEED_SUPER);
	assert_int_equal(cap_speed_from_sysfs("10000"), PROFILE_SPEED_SUPER);
	assert_int_equal(cap_speed_from_sysfs("20000"), PROFILE_SPEED_SUPER);
	assert_int_equal(cap_speed_from_sysfs(""), -1);
	assert_int_equal(cap_speed_from_sysfs("53.3"), -1);
	assert_int_equal(cap_speed_from_sysfs(NULL), -1);
	assert_int_equal(cap_speed_from_usbfs(1), PROFILE_SPEED_LOW);
	assert_int_equal(cap_speed_from_usbfs(2), PROFILE_SPEED_FULL);
	assert_int_equal(cap_speed_from_usbfs(3), PROFILE_SPEED_HIGH);
	assert_int_equal(cap_speed_from_usbfs(5), PROFILE_SPEED_SUPER);
	assert_int_equal(cap_speed_from_usbfs(6), PROFILE_SPEED_SUPER);
	assert_int_equal(cap_speed_from_usbfs(0), -1);
	assert_int_equal(cap_speed_from_usbfs(-1), -1);
}

static const struct CMUnitTest tests[] = {
	cmocka_unit_test_setup_teardown(test_list, setup, teardown),
	cmocka_unit_test_setup_teardown(test_match, setup, teardown),
	cmocka_unit_test_setup_teardown(test_find, setup, teardown),
	cmocka_unit_test(test_node),
	cmocka_unit_test(test_speed),
};

const struct CMUnitTest *usbsys_tests(size_t *n)
{
	*n = sizeof(tests) / sizeof(tests[0]);
	return tests;
}
