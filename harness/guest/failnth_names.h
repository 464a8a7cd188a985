/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * USB interface names as sysfs spells them, "<bus>-<port>[.<port>...]:
 * <config>.<interface>" (1-1:1.0, 3-1.4.2:1.1): which folder entries are
 * interfaces, their numeric order, sets of them and masks over a set.
 * No I/O.
 */
#ifndef DMAHARNESS_FAILNTH_NAMES_H
#define DMAHARNESS_FAILNTH_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "failnth.h"

bool fn_is_interface_name(const char *s);
/* Numeric order: digit runs compare as numbers (1-1:1.2 < 1-1:1.10). */
int fn_name_cmp(const char *a, const char *b);
/* Add a name (if not there); -1 when the set is full or the name too long. */
int fn_names_add(struct fn_names *set, const char *name);
void fn_names_sort(struct fn_names *set);
/* Index of name in set, or -1. */
int fn_names_find(const struct fn_names *set, const char *name);
/* Keep only the interfaces of the device of the first name (1-1 of 1-1:1.0). */
void fn_names_keep_first_device(struct fn_names *set);
/* The names of mask's bits, comma-separated, or "-" when none. */
void fn_mask_format(const struct fn_names *set, uint32_t mask,
		    char *out, size_t len);

#endif
