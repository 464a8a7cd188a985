// SPDX-License-Identifier: GPL-2.0-only
/* The camera's evdev input device (see input.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/input.h>

#include "agent.h"
#include "input.h"
#include "protocol.h"

#define INPUT_GRACE_NS		(2 * NSEC_PER_SEC)

/* "usb-0000:00:04.0-1" -> "usb-0000:00:04.0-1/button" (uvc_input_init). */
void expected_input_phys(const char *bus_info, char *out, size_t len)
{
	snprintf(out, len, "%s/button", bus_info);
}

void input_close(struct camera *c)
{
	if (c->input_fd >= 0)
		close(c->input_fd);
	c->input_fd = -1;
}

/* Is phys the input phys of another camera we drive? */
static bool phys_of_other_camera(const struct agent *a, const struct camera *c,
				 const char *phys)
{
	char other[80];
	unsigned int i;

	for (i = 0; i < a->ncam; i++) {
		if (&a->cam[i] == c || !a->cam[i].bus_info[0])
			continue;
		expected_input_phys(a->cam[i].bus_info, other, sizeof(other));
		if (strcmp(other, phys) == 0)
			return true;
	}
	return false;
}

/* Open the next /dev/input/eventN of @d (path in @path); -1 at the end. */
static int input_next(DIR *d, char *path, size_t len)
{
	struct dirent *de;
	int fd;

	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "event", 5) != 0)
			continue;
		snprintf(path, len, "/dev/input/%.40s", de->d_name);
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			return fd;	/* else gone or not ours: nothing to say */
	}
	return -1;
}

/*
 * Find the camera's /dev/input/eventN: the one whose phys is
 * "<bus_info>/button" (uvc_input_init), else one with the camera's name and
 * a USB phys that is not another camera's ("input_match": "name").
 */
void input_find(struct agent *a, struct camera *c)
{
	char want[80], name_path[64] = "";
	int name_fd = -1;
	DIR *d;

	if (!c->bus_info[0])
		return;
	expected_input_phys(c->bus_info, want, sizeof(want));
	d = opendir("/dev/input");
	if (!d) {
		int err = errno;

		if (err != ENOENT)
			agent_err(a, "opendir", err, "/dev/input");
		snprintf(c->input_error, sizeof(c->input_error),
			 "/dev/input: %s", strerror(err));
		return;
	}
	for (;;) {
		char path[64], phys[80] = "", name[80] = "";
		int fd = input_next(d, path, sizeof(path));

		if (fd < 0)
			break;
		if (ioctl(fd, EVIOCGPHYS(sizeof(phys) - 1), phys) < 0)
			phys[0] = '\0';
		if (ioctl(fd, EVIOCGNAME(sizeof(name) - 1), name) < 0)
			name[0] = '\0';
		if (strcmp(phys, want) == 0) {
			if (name_fd >= 0)
				close(name_fd);
			name_fd = -1;
			input_close(c);
			c->input_fd = fd;
			snprintf(c->input_path, sizeof(c->input_path), "%s", path);
			snprintf(c->input_phys, sizeof(c->input_phys), "%s", phys);
			snprintf(c->input_name, sizeof(c->input_name), "%s", name);
			snprintf(c->input_match, sizeof(c->input_match), "phys");
			c->input_found++;
			break;
		}
		if (name_fd < 0 && c->card[0] && strcmp(name, c->card) == 0 &&
		    strncmp(phys, "usb-", 4) == 0 &&
		    !phys_of_other_camera(a, c, phys)) {
			name_fd = fd;
			snprintf(name_path, sizeof(name_path), "%s", path);
			continue;
		}
		close(fd);
	}
	closedir(d);
	if (name_fd >= 0) {
		char phys[80] = "", name[80] = "";

		if (ioctl(name_fd, EVIOCGPHYS(sizeof(phys) - 1), phys) < 0)
			phys[0] = '\0';
		if (ioctl(name_fd, EVIOCGNAME(sizeof(name) - 1), name) < 0)
			name[0] = '\0';
		input_close(c);
		c->input_fd = name_fd;
		snprintf(c->input_path, sizeof(c->input_path), "%s", name_path);
		snprintf(c->input_phys, sizeof(c->input_phys), "%s", phys);
		snprintf(c->input_name, sizeof(c->input_name), "%s", name);
		snprintf(c->input_match, sizeof(c->input_match), "name");
		c->input_found++;
	}
	if (c->input_fd >= 0)
		c->input_error[0] = '\0';
	else
		input_note_missing(c, false);
}

/*
 * Explain a missing input device, once (uvc_probe registers the video node
 * before the input device, so give it INPUT_GRACE_NS after an attach).
 */
void input_note_missing(struct camera *c, bool now_or_never)
{
	char want[80];

	if (c->input_fd >= 0 || c->input_error[0] || !c->bus_info[0])
		return;
	if (!now_or_never && now_ns() - c->attached_ns < INPUT_GRACE_NS)
		return;
	expected_input_phys(c->bus_info, want, sizeof(want));
	c->input_error_ns = now_ns();
	snprintf(c->input_error, sizeof(c->input_error),
		 "no /dev/input/event* with phys %s or name '%.40s' (uvcvideo registers one only with CONFIG_USB_VIDEO_CLASS_INPUT_EVDEV and, in newer kernels such as 6.12, bTriggerSupport=bTriggerUsage=1)",
		 want, c->card);
	fprintf(stderr, AGENT_NAME ": camera %u: %s%s\n", c->index,
		c->input_error, now_or_never ? "" : "; still looking");
}

void input_lost(struct agent *a, struct camera *c)
{
	(void)a;
	input_close(c);
	c->input_disconnects++;
}

void input_read(struct agent *a, struct camera *c, uint64_t now)
{
	struct input_event ev[64];
	unsigned int round;

	for (round = 0; round < 16; round++) {
		ssize_t n = read(c->input_fd, ev, sizeof(ev));
		size_t i, cnt;

		if (n < 0) {
			int err = errno;

			if (err == EAGAIN || err == EINTR)
				return;
			agent_err(a, "read", err, "camera %u input %s",
				  c->index, c->input_path);
			if (is_gone_errno(err))
				input_lost(a, c);
			return;
		}
		if (n == 0) {
			input_lost(a, c);
			return;
		}
		cnt = (size_t)n / sizeof(ev[0]);
		for (i = 0; i < cnt; i++) {
			c->input_events++;
			if (ev[i].type == EV_SYN && ev[i].code == SYN_DROPPED) {
				c->syn_dropped++;
			} else if (ev[i].type == EV_KEY) {
				if (ev[i].code != KEY_CAMERA)
					c->key_other_codes++;
				if (ev[i].value == 1)
					c->key_press++;
				else if (ev[i].value == 0)
					c->key_release++;
				else
					c->key_repeat++;
				if (ev[i].value == 0 || ev[i].value == 1)
					series_at(&a->series, now)->keys++;
			}
		}
		if ((size_t)n < sizeof(ev))
			return;
	}
}

void input_read_phys(struct agent *a, struct camera *c, uint64_t now)
{
	char phys[80];

	memset(phys, 0, sizeof(phys));
	if (ioctl(c->input_fd, EVIOCGPHYS(sizeof(phys) - 1), phys) < 0) {
		int err = errno;

		agent_err(a, "EVIOCGPHYS", err, "camera %u input %s", c->index,
			  c->input_path);
		if (is_gone_errno(err))
			input_lost(a, c);
		return;
	}
	c->phys_reads++;
	series_at(&a->series, now)->phys_reads++;
	if (strcmp(phys, c->input_phys) != 0) {
		c->phys_mismatches++;
		snprintf(c->phys_bad, sizeof(c->phys_bad), "%s", phys);
	}
}

/* Is there an input device whose phys is the camera's "<bus_info>/button"? */
bool input_present(const char *bus_info)
{
	char want[80], path[64];
	bool found = false;
	DIR *d;
	int fd;

	expected_input_phys(bus_info, want, sizeof(want));
	d = opendir("/dev/input");
	if (!d)
		return false;
	while (!found && (fd = input_next(d, path, sizeof(path))) >= 0) {
		char phys[80] = "";

		if (ioctl(fd, EVIOCGPHYS(sizeof(phys) - 1), phys) >= 0)
			found = strcmp(phys, want) == 0;
		close(fd);
	}
	closedir(d);
	return found;
}
