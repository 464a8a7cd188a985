/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small helpers both guest tools (the agent and dmaharness-failnth) use:
 * a write that finishes or fails, and a bounded unsigned number parser.
 */
#ifndef DMAHARNESS_GUEST_IO_H
#define DMAHARNESS_GUEST_IO_H

#include <stddef.h>

/* Write all n bytes (retrying short writes and EINTR); 0, or -1 with errno. */
int write_all(int fd, const char *s, size_t n);

/* A decimal number in [lo, hi], nothing before or after it; 0 or -1. */
int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *out);

#endif
