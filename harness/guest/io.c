// SPDX-License-Identifier: GPL-2.0-only
/* Helpers shared by the guest tools (see io.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io.h"

int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t r = write(fd, s, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += r;
		n -= (size_t)r;
	}
	return 0;
}

int split_option(const char *arg, char *name, size_t namelen, const char **val)
{
	const char *eq = strchr(arg, '=');
	size_t n = eq ? (size_t)(eq - arg) : strlen(arg);

	if (n >= namelen)
		return -1;
	memcpy(name, arg, n);
	name[n] = '\0';
	*val = eq ? eq + 1 : NULL;
	return 0;
}

int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}
