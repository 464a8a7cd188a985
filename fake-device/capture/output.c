// SPDX-License-Identifier: MIT
/* The profile's identity and writing it out (output.h). */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cap_fill_identity(const struct cap_opts *o, struct profile *p, time_t now)
{
	uint16_t vid = (uint16_t)(p->device[8] | p->device[9] << 8);
	uint16_t pid = (uint16_t)(p->device[10] | p->device[11] << 8);
	const char *mfr = cap_profile_string(p, p->device[14]);
	const char *prod = cap_profile_string(p, p->device[15]);

	if (o->name)
		snprintf(p->name, sizeof(p->name), "%s", o->name);
	else
		cap_default_name(prod, vid, pid, p->name);
	p->description = o->description ? strdup(o->description) :
			 cap_default_description(mfr, prod, vid, pid);
	p->sources[0].text = o->source ? strdup(o->source) :
			     cap_default_source(vid, pid, now);
	p->n_sources = p->sources[0].text != NULL;
	return p->description && p->n_sources ? 0 : -1;
}

static void say(char *s, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* snprintf, where a long path may cut the message short */
static void say(char *s, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, size, fmt, ap);
	va_end(ap);
}

int cap_write_profile(const char *path, const struct profile *p, char *err, size_t errsize)
{
	char tmp[PATH_MAX];
	struct stat st;
	mode_t mask;
	FILE *f;
	int fd;

	if (!path) {
		if (profile_write(stdout, p) || fflush(stdout) == EOF) {
			say(err, errsize, "writing to stdout: %s", strerror(errno));
			return -1;
		}
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a pipe (/dev/stdout): no renaming over that */
		f = fopen(path, "w");
		if (!f || profile_write(f, p) || fclose(f) == EOF) {
			say(err, errsize, "writing %s: %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", path) >= sizeof(tmp)) {
		say(err, errsize, "%s: name too long", path);
		return -1;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		say(err, errsize, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) || !(f = fdopen(fd, "w"))) {
		say(err, errsize, "%s: %s", tmp, strerror(errno));
		close(fd);
		unlink(tmp);
		return -1;
	}
	errno = 0;
	if (profile_write(f, p) || fflush(f) == EOF || fsync(fileno(f))) {
		say(err, errsize, "writing %s: %s", tmp, strerror(errno ? errno : EIO));
		fclose(f);
		unlink(tmp);
		return -1;
	}
	if (fclose(f) == EOF) {
		say(err, errsize, "writing %s: %s", tmp, strerror(errno));
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path)) {
		say(err, errsize, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

