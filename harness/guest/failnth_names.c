// SPDX-License-Identifier: GPL-2.0-only
/* USB interface names (see failnth_names.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failnth_names.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Skip a run of digits; NULL when there is none. */
static const char *digits(const char *s)
{
	if (!is_digit(*s))
		return NULL;
	while (is_digit(*s))
		s++;
	return s;
}

bool fn_is_interface_name(const char *s)
{
	if (strlen(s) >= FN_IFNAME_MAX)
		return false;
	s = digits(s);			/* bus */
	if (!s || *s++ != '-')
		return false;
	s = digits(s);			/* root port */
	if (!s)
		return false;
	while (*s == '.') {		/* ports of hubs */
		s = digits(s + 1);
		if (!s)
			return false;
	}
	if (*s++ != ':')
		return false;
	s = digits(s);			/* configuration */
	if (!s || *s++ != '.')
		return false;
	s = digits(s);			/* interface */
	return s && *s == '\0';
}

/* ':' ends the device's part: 1-1:1.0 (a device) before 1-1.2:1.0 (behind its hub) */
static int rank(char c)
{
	return c == ':' ? 1 : (unsigned char)c;
}

int fn_name_cmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (is_digit(*a) && is_digit(*b)) {
			const char *ea = a, *eb = b;
			size_t la, lb;

			while (*a == '0' && is_digit(a[1]))
				a++;
			while (*b == '0' && is_digit(b[1]))
				b++;
			for (ea = a; is_digit(*ea); ea++)
				;
			for (eb = b; is_digit(*eb); eb++)
				;
			la = (size_t)(ea - a);
			lb = (size_t)(eb - b);
			if (la != lb)
				return la < lb ? -1 : 1;
			for (; a < ea; a++, b++)
				if (*a != *b)
					return *a < *b ? -1 : 1;
			continue;
		}
		if (*a != *b)
			return rank(*a) < rank(*b) ? -1 : 1;
		a++;
		b++;
	}
	return *a ? 1 : *b ? -1 : 0;
}

int fn_names_find(const struct fn_names *set, const char *name)
{
	unsigned int i;

	for (i = 0; i < set->n; i++)
		if (strcmp(set->name[i], name) == 0)
			return (int)i;
	return -1;
}

int fn_names_add(struct fn_names *set, const char *name)
{
	if (fn_names_find(set, name) >= 0)
		return 0;
	if (set->n >= FN_MAX_IFACES || strlen(name) >= FN_IFNAME_MAX)
		return -1;
	snprintf(set->name[set->n++], FN_IFNAME_MAX, "%s", name);
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	return fn_name_cmp((const char *)a, (const char *)b);
}

void fn_names_sort(struct fn_names *set)
{
	qsort(set->name, set->n, sizeof(set->name[0]), cmp_entry);
}

void fn_names_keep_first_device(struct fn_names *set)
{
	unsigned int i, k = 1;
	size_t dev;

	if (set->n == 0)
		return;
	dev = strcspn(set->name[0], ":");
	for (i = 1; i < set->n; i++) {
		if (strncmp(set->name[i], set->name[0], dev + 1) != 0)
			continue;
		if (k != i)
			memcpy(set->name[k], set->name[i], sizeof(set->name[0]));
		k++;
	}
	set->n = k;
}

void fn_mask_format(const struct fn_names *set, uint32_t mask,
		    char *out, size_t len)
{
	size_t used = 0;
	unsigned int i;

	if (len == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < set->n; i++) {
		int k;

		if (!(mask & (UINT32_C(1) << i)))
			continue;
		k = snprintf(out + used, len - used, "%s%s", used ? "," : "",
			     set->name[i]);
		if (k < 0 || (size_t)k >= len - used) {
			out[used] = '\0';	/* drop a name that does not fit */
			break;
		}
		used += (size_t)k;
	}
	if (used == 0)
		snprintf(out, len, "-");
}
