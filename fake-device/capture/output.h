/* SPDX-License-Identifier: MIT */
/*
 * After the capture: the profile's name, description and source (from
 * the command line or the defaults of cli.h), and writing it out.
 */
#ifndef CAPTURE_OUTPUT_H
#define CAPTURE_OUTPUT_H

#include <stddef.h>
#include <time.h>

#include "cli.h"
#include "profile.h"

/* Name, description and one source for @p, whose descriptors and strings
 * are captured: --name/--description/--source, else the defaults (the
 * source's date is @now's).  0, or -1 when out of memory. */
int cap_fill_identity(const struct cap_opts *o, struct profile *p, time_t now);

/* profile_write() to @path, or to stdout when @path is NULL.  A path is
 * replaced atomically: the profile goes to PATH.tmp-XXXXXX, is synced and
 * renamed over PATH; on any failure the temporary file is removed and PATH
 * is as it was.  (A PATH that exists and is not a regular file, like
 * /dev/stdout, is written directly.)  0, or -1 with @err. */
int cap_write_profile(const char *path, const struct profile *p, char *err, size_t errsize);

#endif
