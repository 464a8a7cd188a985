// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: arbitrary bytes as a profile file.  The parser must
 * never crash or read out of bounds; whenever it accepts the input, the
 * canonical text of the result must parse back to the same profile and be
 * written again byte for byte (write(parse(x)) is a fixed point).  The
 * checks, the lookups, the store rules and the HID report descriptor
 * parser (on every `get` answer) run on every accepted profile.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

static char *write_text(const struct profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	if (profile_write(f, p))
		abort();
	if (fclose(f))
		abort();
	return buf;
}

static void exercise(struct profile *p)
{
	uint8_t buf[256];
	char err[256];

	profile_validate(p, err, sizeof(err));
	for (size_t i = 0; i < p->n_strings && i < 8; i++) {
		int n = profile_string_descriptor(p, p->strings[i].langid,
						  p->strings[i].index, buf, sizeof(buf));

		if (n < 2 || n > 254 || buf[0] != n || buf[1] != 3)
			abort();
	}
	profile_string_descriptor(p, 0, 0, buf, sizeof(buf));
	for (size_t i = 0; i < p->n_interrupts; i++) {
		struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];
		unsigned mps = profile_interrupt_maxpacket(p, p->interrupts[i].ep, NULL);
		size_t n;

		profile_find_endpoint(p, p->interrupts[i].ep, NULL, NULL, NULL);
		/* pattern hid sends whole reports that fit the endpoint */
		n = profile_hid_reports(p, p->interrupts[i].ep, r);
		for (size_t k = 0; k < n; k++)
			if (!r[k].len || r[k].len > mps)
				abort();
	}
	/* every answer, read as a HID report descriptor */
	for (size_t i = 0; i < p->n_gets && i < 16; i++) {
		struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];
		size_t bad = 0;
		int n = profile_hid_input_reports(p->gets[i].data, p->gets[i].len, r, &bad);

		if (n > PROFILE_HID_MAX_REPORTS || (n < 0 && bad >= p->gets[i].len))
			abort();
	}
	/* A store makes the request read back what was stored. */
	for (size_t i = 0; i < p->n_sets && i < 4; i++) {
		struct profile_set s = p->sets[i];
		uint16_t value = s.value == PROFILE_ANY ? 0x1234 : (uint16_t)s.value;
		uint16_t index = s.index == PROFILE_ANY ? 0x0001 : (uint16_t)s.index;
		const uint8_t data[3] = { (uint8_t)i, 0x5a, 0xa5 };
		const struct profile_get *g;

		if (!s.store)
			continue;
		if (profile_set_store(p, &s, value, index, data, sizeof(data)))
			continue;       /* the rule limit */
		g = profile_find_get(p, s.type | 0x80, s.store_req, value, index);
		if (!g || g->stall || g->len != sizeof(data) ||
		    memcmp(g->data, data, sizeof(data)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile a, b;
	char err[256];
	char *t1, *t2;
	size_t n1, n2;

	if (profile_parse((const char *)data, size, "fuzz.profile", &a, err, sizeof(err))) {
		if (strncmp(err, "fuzz.profile", 12) != 0)
			abort();
		return 0;
	}
	t1 = write_text(&a, &n1);
	if (profile_parse(t1, n1, "canonical", &b, err, sizeof(err))) {
		fprintf(stderr, "canonical text does not parse: %s\n%s", err, t1);
		abort();
	}
	if (!profile_equal(&a, &b)) {
		fprintf(stderr, "canonical text parses to another profile:\n%s", t1);
		abort();
	}
	t2 = write_text(&b, &n2);
	if (n1 != n2 || memcmp(t1, t2, n1)) {
		fprintf(stderr, "canonical text is not a fixed point:\n%s\n----\n%s", t1, t2);
		abort();
	}
	exercise(&a);
	free(t1);
	free(t2);
	profile_free(&a);
	profile_free(&b);
	return 0;
}
