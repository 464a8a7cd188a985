// SPDX-License-Identifier: MIT
/* The device a profile describes (pmodel.c): configuration and alternate
 * settings, control requests answered from descriptors and rules, and the
 * packets of its interrupt IN endpoints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "pmodel.h"
#include "tests.h"

struct ctl {
	int len;
	enum req_kind kind;
	uint8_t in[4096];
};

static struct ctl ctl(struct pmodel *m, uint8_t type, uint8_t req, uint16_t value,
		      uint16_t index, uint16_t length, const uint8_t *out)
{
	struct usb_setup s = { type, req, value, index, length };
	struct ctl c;
	struct req_result r;

	memset(c.in, 0x5a, sizeof(c.in));
	r = pm_control(m, &s, out, out ? length : 0, c.in, sizeof(c.in));
	c.len = r.len;
	c.kind = r.kind;
	return c;
}

static const struct pm_ep *find_ep(const struct pm_ep *eps, size_t n, uint8_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (eps[i].addr == addr)
			return &eps[i];
	return NULL;
}

static void test_state(void **state)
{
	struct profile p;
	struct pmodel m;
	struct pm_ep eps[PM_MAX_EPS], e;
	const struct pm_ep *x;
	size_t n;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	/* address state: nothing configured */
	assert_int_equal(m.configuration, 0);
	assert_int_equal(pm_endpoints(&m, eps, PM_MAX_EPS), 0);
	assert_int_equal(pm_get_interface(&m, 0), -1);
	assert_int_equal(pm_set_interface(&m, 0, 0), -1);

	/* a configuration value the profile lacks changes nothing */
	assert_int_equal(pm_set_configuration(&m, 3), -1);
	assert_int_equal(m.configuration, 0);
	assert_int_equal(pm_endpoints(&m, eps, PM_MAX_EPS), 0);

	assert_int_equal(pm_set_configuration(&m, 1), 0);
	assert_int_equal(m.configuration, 1);
	assert_int_equal(m.n_ifaces, 4);
	static const uint8_t nums[] = { 0, 2, 3, 4 }, cls[] = { 0x0e, 0x0e, 0x03, 0xff };
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(m.ifaces[i].number, nums[i]);
		assert_int_equal(m.ifaces[i].klass, cls[i]);
		assert_int_equal(pm_get_interface(&m, nums[i]), 0);
	}
	assert_int_equal(m.ifaces[1].subclass, 0x02);
	assert_int_equal(pm_get_interface(&m, 1), -1);

	/* alternate settings 0 only: no iso 0x81, no bulk 0x82/0x02 */
	n = pm_endpoints(&m, eps, PM_MAX_EPS);
	assert_int_equal(n, 3);
	x = find_ep(eps, n, 0x83);
	assert_non_null(x);
	assert_int_equal(x->type, 3);
	assert_int_equal(x->interval, 4);
	assert_int_equal(x->iface, 0);
	assert_int_equal(x->maxpacket, 16);
	x = find_ep(eps, n, 0x84);
	assert_non_null(x);
	assert_int_equal(x->iface, 3);
	assert_int_equal(x->maxpacket, 8);
	assert_int_equal(x->interval, 10);
	x = find_ep(eps, n, 0x85);
	assert_non_null(x);
	assert_int_equal(x->maxpacket, 32);
	assert_null(find_ep(eps, n, 0x81));
	assert_null(find_ep(eps, n, 0x82));
	assert_int_equal(pm_endpoints(&m, eps, 1), 1);

	/* bad alternate setting, bad interface: refused, nothing changes */
	assert_int_equal(pm_set_interface(&m, 2, 2), -1);
	assert_int_equal(pm_get_interface(&m, 2), 0);
	assert_int_equal(pm_set_interface(&m, 1, 0), -1);

	assert_int_equal(pm_set_interface(&m, 2, 1), 0);
	assert_int_equal(pm_get_interface(&m, 2), 1);
	n = pm_endpoints(&m, eps, PM_MAX_EPS);
	assert_int_equal(n, 4);
	x = find_ep(eps, n, 0x81);
	assert_non_null(x);
	assert_int_equal(x->type, 1);
	assert_int_equal(x->iface, 2);
	assert_int_equal(x->maxpacket, 512);

	/* interface 4 alt 1: the bulk pair, and 0x85 with its smaller size */
	assert_int_equal(pm_set_interface(&m, 4, 1), 0);
	n = pm_endpoints(&m, eps, PM_MAX_EPS);
	assert_int_equal(n, 6);
	assert_int_equal(find_ep(eps, n, 0x82)->type, 2);
	assert_int_equal(find_ep(eps, n, 0x02)->type, 2);
	assert_int_equal(find_ep(eps, n, 0x02)->iface, 4);
	assert_int_equal(pm_endpoint(&m, 0x85, &e), 0);
	assert_int_equal(e.maxpacket, 6);
	assert_int_equal(pm_endpoint(&m, 0x86, &e), -1);
	assert_int_equal(pm_set_interface(&m, 4, 0), 0);
	assert_int_equal(pm_endpoint(&m, 0x82, &e), -1);
	assert_int_equal(pm_endpoint(&m, 0x85, &e), 0);
	assert_int_equal(e.maxpacket, 32);

	/* SET_CONFIGURATION again resets every alternate setting */
	assert_int_equal(pm_set_configuration(&m, 1), 0);
	assert_int_equal(pm_get_interface(&m, 2), 0);

	assert_int_equal(pm_set_configuration(&m, 2), 0);
	assert_int_equal(m.n_ifaces, 1);
	assert_int_equal(pm_get_interface(&m, 3), -1);
	assert_int_equal(pm_endpoints(&m, eps, PM_MAX_EPS), 0);
	assert_int_equal(pm_set_configuration(&m, 0), 0);
	assert_int_equal(m.configuration, 0);
	assert_int_equal(pm_get_interface(&m, 0), -1);
	profile_free(&p);
}

static void test_descriptors(void **state)
{
	struct profile p, q;
	struct pmodel m;
	struct ctl c;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);

	c = ctl(&m, 0x80, 0x06, 0x0100, 0, 64, NULL);
	assert_int_equal(c.len, 18);
	assert_int_equal(c.kind, REQ_STANDARD);
	assert_memory_equal(c.in, p.device, 18);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0100, 0, 8, NULL).len, 8);

	/* configuration: the header first, then wTotalLength; a wLength
	 * shorter than the descriptor truncates it */
	c = ctl(&m, 0x80, 0x06, 0x0200, 0, 9, NULL);
	assert_int_equal(c.len, 9);
	assert_memory_equal(c.in, p.configs[0].data, 9);
	assert_int_equal(c.in[9], 0x5a);
	c = ctl(&m, 0x80, 0x06, 0x0200, 0, 0xffff, NULL);
	assert_int_equal(c.len, 0x79);
	assert_memory_equal(c.in, p.configs[0].data, 0x79);
	c = ctl(&m, 0x80, 0x06, 0x0201, 0, 0xffff, NULL);
	assert_int_equal(c.len, 0x12);
	assert_int_equal(c.in[5], 2);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0202, 0, 0xffff, NULL).len, -1);

	/* strings: the LANGID list, each language's text, absent ones stall */
	c = ctl(&m, 0x80, 0x06, 0x0300, 0, 255, NULL);
	assert_int_equal(c.len, 6);
	assert_memory_equal(c.in, "\x06\x03\x09\x04\x07\x04", 6);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0300, 0, 2, NULL).len, 2);
	c = ctl(&m, 0x80, 0x06, 0x0302, 0x0407, 255, NULL);
	assert_int_equal(c.len, 20);
	assert_memory_equal(c.in, "\x14\x03T\0e\0s\0t\0g\0e\0r\0\xe4\0t\0", 20);
	c = ctl(&m, 0x80, 0x06, 0x0302, 0x0409, 255, NULL);
	assert_int_equal(c.len, 2 + 2 * 11);
	assert_memory_equal(c.in + 2, "T\0e\0s\0t\0 \0D\0", 12);
	c = ctl(&m, 0x80, 0x06, 0x0302, 0x0409, 4, NULL);
	assert_int_equal(c.len, 4);
	assert_int_equal(c.in[0], 24);                  /* bLength of the whole */
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0304, 0x0409, 255, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0301, 0x040c, 255, NULL).len, -1);

	/* qualifier, BOS, other-speed configuration */
	c = ctl(&m, 0x80, 0x06, 0x0600, 0, 10, NULL);
	assert_int_equal(c.len, 10);
	assert_memory_equal(c.in, p.qualifier, 10);
	c = ctl(&m, 0x80, 0x06, 0x0f00, 0, 255, NULL);
	assert_int_equal(c.len, 12);
	assert_memory_equal(c.in, p.bos.data, 12);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0f00, 0, 5, NULL).len, 5);
	c = ctl(&m, 0x80, 0x06, 0x0700, 0, 0xffff, NULL);
	assert_int_equal(c.len, 0x79);
	assert_int_equal(c.in[1], 0x07);
	assert_memory_equal(c.in + 2, p.configs[0].data + 2, 0x79 - 2);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0705, 0, 0xffff, NULL).len, -1);
	/* an unknown descriptor type; a class descriptor to the device */
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0b00, 0, 64, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x2200, 3, 64, NULL).len, -1);

	/* the answer never exceeds the caller's buffer */
	{
		struct usb_setup s = { 0x80, 0x06, 0x0100, 0, 64 };
		uint8_t small[4];

		assert_int_equal(pm_control(&m, &s, NULL, 0, small, sizeof(small)).len, 4);
	}
	profile_free(&p);

	/* without qualifier and BOS, those and other-speed stall */
	fx_parse(fx_loop, &q);
	pm_init(&m, &q);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0600, 0, 10, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0700, 0, 255, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0f00, 0, 255, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x80, 0x06, 0x0200, 0, 255, NULL).len, 0x39);
	profile_free(&q);
}

static void test_standard_state_requests(void **state)
{
	struct profile p;
	struct pmodel m;
	struct ctl c;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);

	c = ctl(&m, 0x80, 0x00, 0, 0, 2, NULL);         /* GET_STATUS */
	assert_int_equal(c.len, 2);
	assert_memory_equal(c.in, "\0\0", 2);
	c = ctl(&m, 0x80, 0x08, 0, 0, 1, NULL);         /* GET_CONFIGURATION */
	assert_int_equal(c.len, 1);
	assert_int_equal(c.in[0], 0);

	/* SET_CONFIGURATION as a control transfer */
	c = ctl(&m, 0x00, 0x09, 1, 0, 0, NULL);
	assert_int_equal(c.len, 0);
	assert_int_equal(c.kind, REQ_STANDARD);
	assert_int_equal(m.configuration, 1);
	assert_int_equal(ctl(&m, 0x80, 0x08, 0, 0, 1, NULL).in[0], 1);
	/* configuration 1 is self powered (bmAttributes 0xc0) */
	c = ctl(&m, 0x80, 0x00, 0, 0, 2, NULL);
	assert_int_equal(c.len, 2);
	assert_memory_equal(c.in, "\x01\x00", 2);
	c = ctl(&m, 0x81, 0x00, 0, 3, 2, NULL);         /* interface status */
	assert_int_equal(c.len, 2);
	assert_memory_equal(c.in, "\0\0", 2);
	assert_int_equal(ctl(&m, 0x80, 0x00, 0, 0, 1, NULL).len, 1);
	assert_int_equal(ctl(&m, 0x00, 0x00, 0, 0, 0, NULL).len, -1);

	/* GET/SET_INTERFACE as control transfers */
	assert_int_equal(ctl(&m, 0x01, 0x0b, 1, 2, 0, NULL).len, 0);
	c = ctl(&m, 0x81, 0x0a, 0, 2, 1, NULL);
	assert_int_equal(c.len, 1);
	assert_int_equal(c.in[0], 1);
	assert_int_equal(ctl(&m, 0x01, 0x0b, 7, 2, 0, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x81, 0x0a, 0, 2, 1, NULL).in[0], 1);
	assert_int_equal(ctl(&m, 0x81, 0x0a, 0, 1, 1, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x01, 0x0b, 0, 9, 0, NULL).len, -1);

	/* SET/CLEAR_FEATURE are accepted */
	assert_int_equal(ctl(&m, 0x00, 0x03, 1, 0, 0, NULL).len, 0);
	assert_int_equal(ctl(&m, 0x02, 0x01, 0, 0x83, 0, NULL).len, 0);

	/* a bad configuration stalls and keeps the current one */
	assert_int_equal(ctl(&m, 0x00, 0x09, 9, 0, 0, NULL).len, -1);
	assert_int_equal(m.configuration, 1);
	assert_int_equal(ctl(&m, 0x00, 0x09, 2, 0, 0, NULL).len, 0);
	assert_memory_equal(ctl(&m, 0x80, 0x00, 0, 0, 2, NULL).in, "\0\0", 2);
	assert_int_equal(ctl(&m, 0x00, 0x09, 0, 0, 0, NULL).len, 0);
	assert_int_equal(m.configuration, 0);
	profile_free(&p);
}

static void test_rules(void **state)
{
	static const uint8_t v3[3] = { 0x0a, 0x0b, 0x0c }, v2[2] = { 0x56, 0x78 };
	struct profile p;
	struct pmodel m;
	struct ctl c;
	size_t n_gets;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	assert_int_equal(pm_set_configuration(&m, 1), 0);

	/* a class GET from its rule, cut to wLength */
	c = ctl(&m, 0xa1, 0x81, 0x0200, 0x0100, 2, NULL);
	assert_int_equal(c.len, 2);
	assert_int_equal(c.kind, REQ_CLASS_GET);
	assert_memory_equal(c.in, "\x34\x12", 2);
	c = ctl(&m, 0xa1, 0x81, 0x0200, 0x0100, 1, NULL);
	assert_int_equal(c.len, 1);
	assert_int_equal(c.in[1], 0x5a);
	assert_int_equal(ctl(&m, 0xa1, 0x81, 0x0200, 0x0100, 0, NULL).len, 0);
	/* a `stall` rule; an unknown class request */
	assert_int_equal(ctl(&m, 0xa1, 0x81, 0x0400, 0x0100, 2, NULL).len, -1);
	assert_int_equal(ctl(&m, 0xa1, 0x86, 0x0200, 0x0100, 1, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x21, 0x02, 0x0200, 0x0100, 0, NULL).len, -1);
	/* wildcards: `* 0x0100`, `* *`, and a `* *` stall */
	c = ctl(&m, 0xa1, 0x87, 0x1234, 0x0100, 8, NULL);
	assert_int_equal(c.len, 2);
	assert_memory_equal(c.in, "\xaa\xbb", 2);
	assert_int_equal(ctl(&m, 0xa1, 0x87, 0x1234, 0x0200, 8, NULL).len, -1);
	c = ctl(&m, 0xa1, 0x84, 0xbeef, 0x0305, 8, NULL);
	assert_int_equal(c.len, 1);
	assert_int_equal(c.in[0], 0x0f);
	assert_int_equal(ctl(&m, 0xa1, 0x82, 0x0200, 0x0100, 2, NULL).len, -1);
	/* vendor requests; the reserved type stalls */
	c = ctl(&m, 0xc0, 0x05, 0, 1, 64, NULL);
	assert_int_equal(c.len, 4);
	assert_memory_equal(c.in, "\xde\xad\xbe\xef", 4);
	assert_int_equal(ctl(&m, 0xc0, 0x05, 0, 2, 64, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x40, 0x07, 0x1111, 0x2222, 0, NULL).len, 0);
	assert_int_equal(ctl(&m, 0x40, 0x08, 0, 0, 0, NULL).len, -1);
	assert_int_equal(ctl(&m, 0xe0, 0x05, 0, 1, 64, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x60, 0x07, 0, 0, 0, NULL).len, -1);

	/* `set ... store`: SET_CUR's data is what GET_CUR answers next */
	n_gets = p.n_gets;
	c = ctl(&m, 0x21, 0x01, 0x0500, 0x0100, 3, v3);
	assert_int_equal(c.len, 0);
	assert_int_equal(c.kind, REQ_CLASS_SET);
	c = ctl(&m, 0xa1, 0x81, 0x0500, 0x0100, 8, NULL);
	assert_int_equal(c.len, 3);
	assert_memory_equal(c.in, v3, 3);
	assert_int_equal(p.n_gets, n_gets + 1);
	/* ... replacing an answer the profile had */
	assert_int_equal(ctl(&m, 0x21, 0x01, 0x0200, 0x0100, 2, v2).len, 0);
	c = ctl(&m, 0xa1, 0x81, 0x0200, 0x0100, 2, NULL);
	assert_memory_equal(c.in, v2, 2);
	assert_int_equal(p.n_gets, n_gets + 1);
	/* ... and answering one that stalled */
	assert_int_equal(ctl(&m, 0x21, 0x01, 0x0400, 0x0100, 2, v2).len, 0);
	c = ctl(&m, 0xa1, 0x81, 0x0400, 0x0100, 2, NULL);
	assert_int_equal(c.len, 2);
	assert_memory_equal(c.in, v2, 2);

	/* `set ... ack`: accepted, nothing stored */
	n_gets = p.n_gets;
	c = ctl(&m, 0x21, 0x0a, 0x0000, 0x0003, 2, v2);
	assert_int_equal(c.len, 0);
	assert_int_equal(p.n_gets, n_gets);
	assert_int_equal(ctl(&m, 0xa1, 0x0a, 0x0000, 0x0003, 2, NULL).len, -1);

	/* a HID report descriptor: GET_DESCRIPTOR to an interface */
	c = ctl(&m, 0x81, 0x06, 0x2200, 3, 0x45, NULL);
	assert_int_equal(c.len, 5);
	assert_memory_equal(c.in, "\x05\x01\x09\x02\xa1", 5);
	assert_int_equal(ctl(&m, 0x81, 0x06, 0x2200, 0, 0x45, NULL).len, -1);
	assert_int_equal(ctl(&m, 0x81, 0x06, 0x2100, 3, 9, NULL).len, -1);
	profile_free(&p);
}

/* ---- Interrupt packets ------------------------------------------------------ */

static struct flood_cfg gen_cfg(uint64_t seed)
{
	struct flood_cfg c;

	memset(&c, 0, sizeof(c));
	c.seed = seed;
	c.window = 256;
	return c;
}

static void test_gen_packets(void **state)
{
	static const struct { size_t len; const char *data; } want[] = {
		{ 3, "\x01\x02\x03" }, { 1, "\x04" }, { 7, "\x05\x06\x07\x08\x09\x0a\x0b" },
	};
	struct flood_cfg cfg = gen_cfg(1);
	struct profile p;
	struct pmodel m;
	struct pm_gen g;
	uint8_t buf[PM_PACKET_MAX];
	uint64_t bytes = 0;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);
	assert_int_equal(p.interrupts[1].ep, 0x84);
	pm_gen_init(&g, &m, &p.interrupts[1], &cfg);
	assert_int_equal(g.maxpacket, 8);
	/* in file order, then again from the first */
	for (size_t i = 0; i < 10; i++) {
		size_t n = pm_gen_next(&g, &m, buf);

		assert_int_equal(n, want[i % 3].len);
		assert_memory_equal(buf, want[i % 3].data, n);
		bytes += n;
	}
	assert_int_equal(g.fl.st.sent, 10);
	assert_int_equal(g.fl.st.bytes, bytes);
	profile_free(&p);
}

/* @n packets of @pattern on @ep: every length within [lo, hi], and the
 * extremes seen; returns a checksum of the bytes. */
static uint64_t gen_lengths(const struct pmodel *m, uint8_t ep, enum profile_pattern pat,
			    uint64_t seed, int n, size_t lo, size_t hi)
{
	struct profile_interrupt rule = { .ep = ep, .pattern = pat };
	struct flood_cfg cfg = gen_cfg(seed);
	struct pm_gen g;
	uint8_t buf[PM_PACKET_MAX];
	size_t min = (size_t)-1, max = 0;
	uint64_t sum = 0;

	pm_gen_init(&g, m, &rule, &cfg);
	for (int i = 0; i < n; i++) {
		size_t len = pm_gen_next(&g, m, buf);

		if (len < lo || len > hi)
			fail_msg("%s on 0x%02x: packet %d is %zu bytes, not %zu..%zu",
				 profile_pattern_name(pat), ep, i, len, lo, hi);
		min = len < min ? len : min;
		max = len > max ? len : max;
		for (size_t k = 0; k < len; k++)
			sum = sum * 31 + buf[k];
	}
	assert_int_equal(min, lo);
	assert_int_equal(max, hi);
	return sum;
}

static void test_gen_random_and_zero(void **state)
{
	struct profile p;
	struct pmodel m;
	struct pm_gen g;
	struct profile_interrupt zero = { .ep = 0x84, .pattern = PROFILE_PATTERN_ZERO };
	struct flood_cfg cfg = gen_cfg(1);
	uint8_t buf[PM_PACKET_MAX];
	uint64_t a, b;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);
	/* 1 to wMaxPacketSize-1 bytes, all of them */
	a = gen_lengths(&m, 0x84, PROFILE_PATTERN_RANDOM, 1, 2000, 1, 7);
	gen_lengths(&m, 0x83, PROFILE_PATTERN_RANDOM, 1, 2000, 1, 15);
	gen_lengths(&m, 0x83, PROFILE_PATTERN_UVC_RANDOM, 1, 2000, 1, 15);
	/* 0x85 has wMaxPacketSize 32 in alt 0 and 6 in alt 1: the smallest
	 * counts (FORMAT.md), whatever the alternate setting */
	gen_lengths(&m, 0x85, PROFILE_PATTERN_RANDOM, 1, 2000, 1, 5);
	pm_set_interface(&m, 4, 1);
	gen_lengths(&m, 0x85, PROFILE_PATTERN_RANDOM, 1, 2000, 1, 5);
	/* reproducible from the seed, and the seed matters */
	b = gen_lengths(&m, 0x84, PROFILE_PATTERN_RANDOM, 1, 2000, 1, 7);
	assert_true(a == b);
	b = gen_lengths(&m, 0x84, PROFILE_PATTERN_RANDOM, 2, 2000, 1, 7);
	assert_true(a != b);

	pm_gen_init(&g, &m, &zero, &cfg);
	for (int i = 0; i < 3; i++) {
		memset(buf, 0xff, sizeof(buf));
		assert_int_equal(pm_gen_next(&g, &m, buf), 7);
		assert_memory_equal(buf, "\0\0\0\0\0\0\0", 7);
	}
	profile_free(&p);
}

/* The GET_CUR answers of units and terminals, in profile order: what
 * uvc-control reports, worked out here from the rules. */
struct cur { uint8_t entity, selector; const uint8_t *data; size_t len; };

static size_t get_curs(const struct profile *p, struct cur *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_gets && n < max; i++) {
		const struct profile_get *g = &p->gets[i];

		if (g->type == 0xa1 && g->req == 0x81 && !g->stall && g->len &&
		    g->value >= 0 && g->index >= 0 && (g->index >> 8) != 0)
			out[n++] = (struct cur){ (uint8_t)(g->index >> 8),
						 (uint8_t)(g->value >> 8), g->data, g->len };
	}
	return n;
}

static void assert_control_event(const uint8_t *buf, size_t n, const struct cur *c)
{
	assert_int_equal(n, 5 + c->len);
	assert_int_equal(buf[0], 0x01);
	assert_int_equal(buf[1], c->entity);
	assert_int_equal(buf[2], 0x00);
	assert_int_equal(buf[3], c->selector);
	assert_int_equal(buf[4], 0x00);
	assert_memory_equal(buf + 5, c->data, c->len);
}

static void test_gen_uvc_control(void **state)
{
	struct profile p, q;
	struct pmodel m;
	struct pm_gen g;
	struct profile_interrupt rule = { .ep = 0x83, .pattern = PROFILE_PATTERN_UVC_CONTROL };
	struct flood_cfg cfg = gen_cfg(1);
	uint8_t buf[PM_PACKET_MAX];
	struct cur cur[8];
	size_t n_cur, n;
	int seen = 0;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);
	n_cur = get_curs(&p, cur, 8);
	/* (1, 2) = 34 12 and (2, 3) = 07; the stalled one, the probe (entity
	 * 0) and the wildcard rules are not events */
	assert_int_equal(n_cur, 2);
	pm_gen_init(&g, &m, &p.interrupts[0], &cfg);
	assert_int_equal(p.interrupts[0].pattern, PROFILE_PATTERN_UVC_CONTROL);
	for (size_t i = 0; i < 6; i++) {
		n = pm_gen_next(&g, &m, buf);
		assert_control_event(buf, n, &cur[i % n_cur]);
	}
	/* a stored SET_CUR becomes a GET_CUR answer, and so an event */
	{
		struct usb_setup s = { 0x21, 0x01, 0x0600, 0x0200, 1 };
		uint8_t in[8];

		assert_int_equal(pm_control(&m, &s, (const uint8_t *)"\x09", 1, in,
					    sizeof(in)).len, 0);
	}
	for (size_t i = 0; i < 3; i++) {
		n = pm_gen_next(&g, &m, buf);
		assert_int_equal(buf[0], 0x01);
		if (buf[1] == 2 && buf[3] == 6) {
			assert_int_equal(n, 6);
			assert_int_equal(buf[5], 0x09);
			seen = 1;
		}
	}
	assert_true(seen);
	profile_free(&p);

	/* no GET_CUR answers at all: button events instead */
	fx_parse(fx_cdc, &q);
	pm_init(&m, &q);
	pm_set_configuration(&m, 1);
	rule.ep = 0x82;
	pm_gen_init(&g, &m, &rule, &cfg);
	n = pm_gen_next(&g, &m, buf);
	assert_int_equal(n, 4);
	assert_int_equal(buf[0], 0x02);
	profile_free(&q);
}

static void test_gen_uvc_button_and_mixed(void **state)
{
	struct profile p;
	struct pmodel m;
	struct pm_gen g;
	struct profile_interrupt button = { .ep = 0x83, .pattern = PROFILE_PATTERN_UVC_BUTTON };
	struct profile_interrupt mixed = { .ep = 0x83, .pattern = PROFILE_PATTERN_UVC_MIXED };
	struct flood_cfg cfg = gen_cfg(1);
	uint8_t buf[PM_PACKET_MAX];
	struct cur cur[8];
	size_t n, n_cur, k = 0;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);
	/* the VideoStreaming interface is 2 here: the button's originator */
	pm_gen_init(&g, &m, &button, &cfg);
	for (int i = 0; i < 6; i++) {
		n = pm_gen_next(&g, &m, buf);
		assert_int_equal(n, 4);
		assert_int_equal(buf[0], 0x02);
		assert_int_equal(buf[1], 2);
		assert_int_equal(buf[2], 0x00);
		assert_int_equal(buf[3], i % 2 == 0 ? 1 : 0);   /* press, release */
	}

	n_cur = get_curs(&p, cur, 8);
	pm_gen_init(&g, &m, &mixed, &cfg);
	for (int i = 0; i < 8; i++) {
		n = pm_gen_next(&g, &m, buf);
		if (i % 2 == 0) {
			assert_control_event(buf, n, &cur[k++ % n_cur]);
		} else {
			assert_int_equal(n, 4);
			assert_int_equal(buf[0], 0x02);
			assert_int_equal(buf[1], 2);
		}
	}
	profile_free(&p);
}

static void test_gen_uvc_malformed(void **state)
{
	struct profile p;
	struct pmodel m;
	struct pm_gen g;
	struct profile_interrupt rule = { .ep = 0x83, .pattern = PROFILE_PATTERN_UVC_MALFORMED };
	struct flood_cfg cfg = gen_cfg(1);
	uint8_t buf[PM_PACKET_MAX];
	size_t n;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);
	pm_gen_init(&g, &m, &rule, &cfg);
	for (int round = 0; round < 3; round++) {
		/* too short for a header */
		assert_int_equal(pm_gen_next(&g, &m, buf), 1);
		/* an unknown bStatusType */
		n = pm_gen_next(&g, &m, buf);
		assert_true(n >= 5 && n <= 15);
		assert_int_equal(buf[0], 0x0f);
		/* no such entity */
		n = pm_gen_next(&g, &m, buf);
		assert_true(n >= 5 && n <= 15);
		assert_int_equal(buf[0], 0x01);
		assert_int_equal(buf[1], 0xff);
		/* no such selector */
		n = pm_gen_next(&g, &m, buf);
		assert_true(n >= 5 && n <= 15);
		assert_int_equal(buf[3], 0xfe);
		/* bAttribute past "max change" */
		n = pm_gen_next(&g, &m, buf);
		assert_true(n >= 5 && n <= 15);
		assert_int_equal(buf[4], 0x03);
		/* bEvent != 0 */
		n = pm_gen_next(&g, &m, buf);
		assert_true(n >= 5 && n <= 15);
		assert_int_equal(buf[2], 0x01);
		/* zero-length */
		assert_int_equal(pm_gen_next(&g, &m, buf), 0);
	}
	/* never wMaxPacketSize or longer, even on a small endpoint */
	rule.ep = 0x85;                 /* smallest wMaxPacketSize 6 */
	pm_gen_init(&g, &m, &rule, &cfg);
	for (int i = 0; i < 70; i++)
		assert_true(pm_gen_next(&g, &m, buf) <= 5);
	rule.ep = 0x84;
	pm_gen_init(&g, &m, &rule, &cfg);
	for (int i = 0; i < 70; i++)
		assert_true(pm_gen_next(&g, &m, buf) <= 7);
	profile_free(&p);
}

/* @n packets of pattern hid on @ep, into @out (@n x PM_PACKET_MAX) and
 * @lens. */
static void gen_hid(const struct pmodel *m, uint8_t ep, uint64_t seed, int n,
		    uint8_t (*out)[PM_PACKET_MAX], size_t *lens)
{
	struct profile_interrupt rule = { .ep = ep, .pattern = PROFILE_PATTERN_HID };
	struct flood_cfg cfg = gen_cfg(seed);
	struct pm_gen g;

	assert_int_equal(pm_gen_init(&g, m, &rule, &cfg), 0);
	for (int i = 0; i < n; i++)
		lens[i] = pm_gen_next(&g, m, out[i]);
	assert_int_equal(g.fl.st.sent, n);
}

static void test_gen_hid(void **state)
{
	/* 0x82's reports in turn: ID 1 of 4 bytes, 2 of 2, 3 of 3, 4 of 4 */
	static const uint8_t ids[] = { 1, 2, 3, 4 };
	static const size_t lens82[] = { 4, 2, 3, 4 };
	static uint8_t a[40][PM_PACKET_MAX], b[40][PM_PACKET_MAX];
	size_t la[40], lb[40];
	char *path = fx_path("profiles/logitech-k120.profile");
	struct profile_interrupt rule = { .pattern = PROFILE_PATTERN_HID };
	struct flood_cfg cfg = gen_cfg(1);
	struct profile p;
	struct pmodel m;
	struct pm_gen g;
	char err[512];
	int nonzero = 0;

	(void)state;
	if (profile_load_file(path, &p, err, sizeof(err)))
		fail_msg("%s", err);
	free(path);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);

	/* the boot keyboard (0x81, wMaxPacketSize 8): whole 8-byte reports,
	 * full-size packets, without a Report ID; each with random keys,
	 * then all zero (the keys released) */
	gen_hid(&m, 0x81, 1, 40, a, la);
	for (int i = 0; i < 40; i++) {
		assert_int_equal(la[i], 8);
		if (i % 2) {
			assert_memory_equal(a[i], "\0\0\0\0\0\0\0\0", 8);
		} else {
			for (int k = 0; k < 8; k++)
				nonzero += a[i][k] != 0;
		}
	}
	assert_true(nonzero > 40);

	/* only harmless keys: never a modifier (Ctrl-Alt-Del restarts the
	 * guest), key codes only letters; 1000 presses */
	{
		static uint8_t many[2000][PM_PACKET_MAX];
		static size_t lm[2000];
		int letters[26] = { 0 }, seen = 0;

		gen_hid(&m, 0x81, 7, 2000, many, lm);
		for (int i = 0; i < 2000; i += 2) {
			assert_int_equal(many[i][0], 0);
			for (int k = 2; k < 8; k++) {
				assert_in_range(many[i][k], 0x04, 0x1d);
				letters[many[i][k] - 0x04]++;
			}
		}
		for (int k = 0; k < 26; k++)
			seen += letters[k] > 0;
		assert_int_equal(seen, 26);
	}

	/* consumer/system controls (0x82, wMaxPacketSize 4): IDs 1 to 4 in
	 * turn, each whole (4 bytes fill a packet: usbhid's URB is 4 bytes),
	 * twice: random, then zero after the ID */
	gen_hid(&m, 0x82, 1, 40, a, la);
	nonzero = 0;
	for (int i = 0; i < 40; i++) {
		size_t r = (size_t)(i / 2) % 4;

		assert_int_equal(la[i], lens82[r]);
		assert_int_equal(a[i][0], ids[r]);
		for (size_t k = 1; k < la[i]; k++) {
			if (i % 2)
				assert_int_equal(a[i][k], 0);
			else
				nonzero += a[i][k] != 0;
		}
	}
	assert_true(nonzero > 10);

	/* reproducible from the seed, and the seed matters */
	gen_hid(&m, 0x82, 1, 40, b, lb);
	assert_memory_equal(la, lb, sizeof(la));
	for (int i = 0; i < 40; i++)
		assert_memory_equal(a[i], b[i], la[i]);
	gen_hid(&m, 0x82, 2, 40, b, lb);
	assert_memory_equal(la, lb, sizeof(la));
	nonzero = 0;
	for (int i = 0; i < 40; i += 2)
		nonzero += memcmp(a[i], b[i], la[i]) != 0;
	assert_true(nonzero > 0);
	profile_free(&p);

	/* nothing to send (no input report; not a HID interface): the
	 * endpoint is left idle */
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);
	rule.ep = 0x84;
	assert_int_equal(pm_gen_init(&g, &m, &rule, &cfg), -1);
	assert_int_equal(pm_gen_next(&g, &m, a[0]), 0);
	rule.ep = 0x85;
	assert_int_equal(pm_gen_init(&g, &m, &rule, &cfg), -1);
	/* the other patterns always have something */
	rule.pattern = PROFILE_PATTERN_RANDOM;
	assert_int_equal(pm_gen_init(&g, &m, &rule, &cfg), 0);
	profile_free(&p);
}

/* Replayed packets are sent as written, a full-size one too. */
static void test_gen_full_size_packet(void **state)
{
	uint8_t full[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct profile_blob blob = { full, sizeof(full), 1 };
	struct profile_interrupt rule = { .ep = 0x84, .packets = &blob, .n_packets = 1 };
	struct flood_cfg cfg = gen_cfg(1);
	uint8_t buf[PM_PACKET_MAX];
	struct profile p;
	struct pmodel m;
	struct pm_gen g;

	(void)state;
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_set_configuration(&m, 1);
	assert_int_equal(pm_gen_init(&g, &m, &rule, &cfg), 0);
	assert_int_equal(g.maxpacket, 8);
	assert_int_equal(pm_gen_next(&g, &m, buf), 8);
	assert_memory_equal(buf, full, 8);
	/* longer (the checker refuses it): cut at wMaxPacketSize */
	rule.ep = 0x85;                 /* smallest wMaxPacketSize 6 */
	pm_gen_init(&g, &m, &rule, &cfg);
	assert_int_equal(pm_gen_next(&g, &m, buf), 6);
	profile_free(&p);
}

static void test_ceiling(void **state)
{
	struct profile p, q;
	struct pmodel m;
	struct pm_gen g;
	struct flood_cfg cfg = gen_cfg(1);

	(void)state;
	/* high speed: 2^(bInterval-1) microframes; full and low: bInterval ms */
	assert_true(pm_ceiling(PROFILE_SPEED_HIGH, 1) == 8000.0);
	assert_true(pm_ceiling(PROFILE_SPEED_HIGH, 4) == 1000.0);
	assert_true(pm_ceiling(PROFILE_SPEED_SUPER, 4) == 1000.0);
	assert_true(pm_ceiling(PROFILE_SPEED_FULL, 1) == 1000.0);
	assert_true(pm_ceiling(PROFILE_SPEED_FULL, 10) == 100.0);
	assert_true(pm_ceiling(PROFILE_SPEED_LOW, 10) == 100.0);
	assert_true(pm_ceiling(PROFILE_SPEED_FULL, 0) == 1000.0);
	assert_true(pm_ceiling(PROFILE_SPEED_HIGH, 0) == 8000.0);

	/* a generator paces at its endpoint's ceiling */
	fx_parse(fx_multi, &p);
	pm_init(&m, &p);
	pm_gen_init(&g, &m, &p.interrupts[0], &cfg);    /* 0x83, bInterval 4 */
	assert_true(g.fl.ceiling == 1000.0);
	pm_gen_init(&g, &m, &p.interrupts[1], &cfg);    /* 0x84, bInterval 10 */
	assert_true(g.fl.ceiling == 8000.0 / 512);
	profile_free(&p);
	fx_parse(fx_loop, &q);
	pm_init(&m, &q);
	pm_gen_init(&g, &m, &q.interrupts[0], &cfg);    /* full speed, 10 ms */
	assert_true(g.fl.ceiling == 100.0);
	profile_free(&q);
}

TEST_LIST(pmodel_tests,
	cmocka_unit_test(test_state),
	cmocka_unit_test(test_descriptors),
	cmocka_unit_test(test_standard_state_requests),
	cmocka_unit_test(test_rules),
	cmocka_unit_test(test_gen_packets),
	cmocka_unit_test(test_gen_random_and_zero),
	cmocka_unit_test(test_gen_uvc_control),
	cmocka_unit_test(test_gen_uvc_button_and_mixed),
	cmocka_unit_test(test_gen_uvc_malformed),
	cmocka_unit_test(test_gen_hid),
	cmocka_unit_test(test_gen_full_size_packet),
	cmocka_unit_test(test_ceiling),
)
