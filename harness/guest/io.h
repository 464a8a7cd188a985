/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small helpers both guest tools (the agent and dmaharness-failnth) use:
 * a write that finishes or fails, the --name[=value] split of an argument,
 * and a bounded unsigned number parser.
 */
#ifndef DMAHARNESS_GUEST_IO_H
#define DMAHARNESS_GUEST_IO_H

#include <stddef.h>

/* Write all n bytes (retrying short writes and EINTR); 0, or -1 with errno. */
int write_all(int fd, const char *s, size_t n);

/*
 * Split a "--name" or "--name=value" argument: name (NUL-terminated, at
 * most namelen - 1 bytes) and *val (the text after '=', else NULL).
 * -1 when the name does not fit (no option is that long).
 */
int split_option(const char *arg, char *name, size_t namelen, const char **val);

/* A decimal number in [lo, hi], nothing before or after it; 0 or -1. */
int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *out);

#endif
