// SPDX-License-Identifier: MIT
/* What a capture asks (plan.c), the built-in camera as a profile
 * (builtin.c), and the round trips: text, the shipped builtin-uvc.profile,
 * and capture(replay(P)) == P through pmodel in-process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "fixtures.h"
#include "plan.h"
#include "pmodel.h"
#include "tests.h"

static struct plan_req reqs[PLAN_MAX];

static void builtin(struct profile *p)
{
	struct plan_report rep;
	char err[256];

	if (builtin_profile(p, NULL, &rep, err, sizeof(err)))
		fail_msg("builtin_profile: %s", err);
	assert_int_equal(rep.failed, 0);
	assert_string_equal(rep.failures, "");
}

static unsigned popcount_bits(const uint8_t *bm, size_t len, unsigned max_bit,
			      unsigned skip_a, unsigned skip_b)
{
	unsigned n = 0;

	for (unsigned b = 0; b < len * 8; b++)
		if ((bm[b / 8] >> (b % 8) & 1) && b <= max_bit && b != skip_a && b != skip_b)
			n++;
	return n;
}

/* The UVC facts of configuration 0, read here without plan.c. */
struct uvc_entity {
	uint8_t id;
	unsigned controls;              /* bits set in bmControls */
	int xu;
};

struct uvc_facts {
	int vc, vs;                     /* interface numbers; -1 */
	unsigned bcd;
	unsigned n_entities;
	struct uvc_entity e[16];
};

static void walk_uvc(const struct profile *p, struct uvc_facts *f)
{
	const uint8_t *c = p->configs[0].data;
	size_t len = p->configs[0].len, off = 0;
	int cls = -1, sub = -1, alt = -1, iface = -1;

	memset(f, 0, sizeof(*f));
	f->vc = f->vs = -1;
	while (off + 2 <= len && c[off] >= 2 && off + c[off] <= len) {
		const uint8_t *d = c + off;

		off += d[0];
		if (d[1] == 0x04) {
			iface = d[2], alt = d[3], cls = d[5], sub = d[6];
			if (alt == 0 && cls == 0x0e && sub == 0x01)
				f->vc = iface;
			if (alt == 0 && cls == 0x0e && sub == 0x02)
				f->vs = iface;
			continue;
		}
		if (cls != 0x0e || sub != 0x01 || alt != 0 || d[1] != 0x24)
			continue;
		if (d[2] == 0x01) {
			f->bcd = (unsigned)(d[3] | d[4] << 8);
		} else if (d[2] == 0x02 && (d[4] | d[5] << 8) == 0x0201) {
			/* camera terminal: D15, D16 reserved, D21 the last */
			f->e[f->n_entities++] = (struct uvc_entity){
				d[3], popcount_bits(d + 15, d[14], 21, 15, 16), 0 };
		} else if (d[2] == 0x05) {
			/* processing unit: D0..D18 */
			f->e[f->n_entities++] = (struct uvc_entity){
				d[3], popcount_bits(d + 8, d[7], 18, 99, 99), 0 };
		} else if (d[2] == 0x06) {
			unsigned p_ = d[21], size = d[22 + p_];

			f->e[f->n_entities++] = (struct uvc_entity){
				d[3], popcount_bits(d + 23 + p_, size, 255, 999, 999), 1 };
		}
	}
}

static void test_plan_builtin_camera(void **state)
{
	static const uint8_t gets[] = { 0x81, 0x82, 0x83, 0x84, 0x87 };
	static const uint8_t probe[] = { 0x81, 0x82, 0x83, 0x87 };
	struct uvc_facts f;
	struct profile p;
	unsigned controls = 0;
	size_t n, i = 0;

	(void)state;
	builtin(&p);
	walk_uvc(&p, &f);
	assert_int_equal(f.vc, 0);
	assert_int_equal(f.vs, 1);
	assert_int_equal(f.bcd, 0x0110);
	assert_int_equal(f.n_entities, 3);              /* CT, PU, XU */
	for (unsigned k = 0; k < f.n_entities; k++) {
		assert_true(f.e[k].controls > 0);
		controls += f.e[k].controls;
	}

	n = plan_requests(&p, reqs, PLAN_MAX);
	/* seven requests per announced control, four for the probe */
	assert_int_equal(n, 7 * controls + 4);
	for (unsigned k = 0; k < f.n_entities; k++) {
		uint16_t index = (uint16_t)(f.e[k].id << 8 | f.vc);
		uint8_t seen[256] = { 0 };

		for (unsigned c = 0; c < f.e[k].controls; c++, i += 7) {
			const struct plan_req *r = &reqs[i];

			/* GET_INFO (1 byte), GET_LEN (2), then CUR MIN MAX RES
			 * DEF with the control's size (0 for an extension unit:
			 * GET_LEN says) */
			assert_int_equal(r[0].type, 0xa1);
			assert_int_equal(r[0].req, 0x86);
			assert_int_equal(r[0].index, index);
			assert_int_equal(r[0].length, 1);
			assert_int_equal(r[0].value & 0xff, 0);
			assert_false(seen[r[0].value >> 8]);    /* a new selector */
			seen[r[0].value >> 8] = 1;
			assert_int_equal(r[1].req, 0x85);
			assert_int_equal(r[1].length, 2);
			for (unsigned g = 0; g < 5; g++) {
				assert_int_equal(r[2 + g].type, 0xa1);
				assert_int_equal(r[2 + g].req, gets[g]);
				assert_int_equal(r[2 + g].value, r[0].value);
				assert_int_equal(r[2 + g].index, index);
				if (f.e[k].xu)
					assert_int_equal(r[2 + g].length, 0);
				else
					assert_true(r[2 + g].length > 0);
				assert_non_null(r[2 + g].what);
			}
			assert_int_equal(r[1].value, r[0].value);
			assert_int_equal(r[1].index, index);
		}
	}
	/* the probe control, 34 bytes in UVC 1.1 */
	for (unsigned k = 0; k < 4; k++, i++) {
		assert_int_equal(reqs[i].type, 0xa1);
		assert_int_equal(reqs[i].req, probe[k]);
		assert_int_equal(reqs[i].value, 0x0100);
		assert_int_equal(reqs[i].index, f.vs);
		assert_int_equal(reqs[i].length, 34);
	}
	assert_int_equal(i, n);
	/* @max bounds what is written */
	assert_int_equal(plan_requests(&p, reqs, 5), 5);
	profile_free(&p);
}

static void test_plan_hid_cdc(void **state)
{
	struct profile p;
	size_t n;

	(void)state;
	/* HID: the report descriptor, as long as the HID descriptor says */
	fx_parse(fx_hid, &p);
	n = plan_requests(&p, reqs, PLAN_MAX);
	assert_int_equal(n, 1);
	assert_int_equal(reqs[0].type, 0x81);
	assert_int_equal(reqs[0].req, 0x06);
	assert_int_equal(reqs[0].value, 0x2200);
	assert_int_equal(reqs[0].index, 0);
	assert_int_equal(reqs[0].length, 4);
	profile_free(&p);

	/* interface 3's report descriptor is 5 bytes; the VideoStreaming
	 * interface without a VC header is UVC 1.0 (26-byte probe); the
	 * VideoControl interface announces no controls; configuration 2
	 * is not asked */
	fx_parse(fx_multi, &p);
	n = plan_requests(&p, reqs, PLAN_MAX);
	assert_int_equal(n, 5);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(reqs[i].index, 2);
		assert_int_equal(reqs[i].value, 0x0100);
		assert_int_equal(reqs[i].length, 26);
	}
	assert_int_equal(reqs[4].type, 0x81);
	assert_int_equal(reqs[4].value, 0x2200);
	assert_int_equal(reqs[4].index, 3);
	assert_int_equal(reqs[4].length, 5);
	profile_free(&p);

	/* CDC ACM: GET_LINE_CODING to the communication interface */
	fx_parse(fx_cdc, &p);
	n = plan_requests(&p, reqs, PLAN_MAX);
	assert_int_equal(n, 1);
	assert_int_equal(reqs[0].type, 0xa1);
	assert_int_equal(reqs[0].req, 0x21);
	assert_int_equal(reqs[0].value, 0);
	assert_int_equal(reqs[0].index, 0);
	assert_int_equal(reqs[0].length, 7);
	profile_free(&p);
}

static void drop_defaults(struct profile *p)
{
	for (size_t i = 0; i < p->n_interrupts; i++) {
		for (size_t k = 0; k < p->interrupts[i].n_packets; k++)
			free(p->interrupts[i].packets[k].data);
		free(p->interrupts[i].packets);
	}
	free(p->interrupts);
	p->interrupts = NULL;
	p->n_interrupts = 0;
	free(p->sets);
	p->sets = NULL;
	p->n_sets = 0;
}

/* Interrupt IN endpoints (distinct addresses) of every configuration. */
static size_t count_interrupt_in(const struct profile *p, uint8_t *eps)
{
	size_t n = 0;

	for (size_t c = 0; c < p->n_configs; c++) {
		const uint8_t *d = p->configs[c].data;

		for (size_t off = 0; off + 2 <= p->configs[c].len; off += d[off]) {
			const uint8_t *e = d + off;
			size_t k;

			if (e[1] != 0x05 || !(e[2] & 0x80) || (e[3] & 3) != 3)
				continue;
			for (k = 0; k < n && eps[k] != e[2]; k++)
				;
			if (k == n)
				eps[n++] = e[2];
		}
	}
	return n;
}

static void test_plan_defaults(void **state)
{
	struct profile p, q;
	uint8_t eps[32];
	size_t n;

	(void)state;
	/* fx_cdc is written the way a capture writes it */
	fx_parse(fx_cdc, &p);
	fx_parse(fx_cdc, &q);
	drop_defaults(&p);
	assert_int_equal(plan_defaults(&p), 0);
	assert_true(profile_equal(&p, &q));
	assert_int_equal(p.sets[0].req, 0x20);                  /* SET_LINE_CODING */
	assert_true(p.sets[0].store);
	assert_int_equal(p.sets[0].store_req, 0x21);            /* GET_LINE_CODING */
	assert_int_equal(p.sets[0].value, PROFILE_ANY);
	/* twice: nothing added */
	assert_int_equal(plan_defaults(&p), 0);
	assert_true(profile_equal(&p, &q));
	profile_free(&p);
	profile_free(&q);

	/* UVC, HID and a vendor interface: SET_CUR stores GET_CUR, the HID
	 * SETs are acknowledged; one interrupt rule per interrupt IN
	 * endpoint, uvc-control on the VideoControl one */
	fx_parse(fx_multi, &p);
	drop_defaults(&p);
	assert_int_equal(plan_defaults(&p), 0);
	assert_int_equal(p.n_sets, 4);
	assert_int_equal(p.sets[0].type, 0x21);
	assert_int_equal(p.sets[0].req, 0x01);
	assert_true(p.sets[0].store);
	assert_int_equal(p.sets[0].store_req, 0x81);
	for (size_t i = 1; i < 4; i++) {
		assert_int_equal(p.sets[i].type, 0x21);
		assert_int_equal(p.sets[i].req, 0x08 + i);      /* 09 0a 0b */
		assert_false(p.sets[i].store);
		assert_int_equal(p.sets[i].value, PROFILE_ANY);
		assert_int_equal(p.sets[i].index, PROFILE_ANY);
	}
	n = count_interrupt_in(&p, eps);
	assert_int_equal(n, 3);
	assert_int_equal(p.n_interrupts, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(p.interrupts[i].ep, eps[i]);
		assert_int_equal(p.interrupts[i].pattern, eps[i] == 0x83 ?
				 PROFILE_PATTERN_UVC_CONTROL : PROFILE_PATTERN_RANDOM);
	}
	{
		char err[256];

		if (profile_validate(&p, err, sizeof(err)))
			fail_msg("defaults do not validate: %s", err);
	}
	profile_free(&p);

	/* HID: hid where the profile holds the interface's report descriptor
	 * and it declares an input report that fits (the K120's two
	 * interfaces), random where it does not (fx_multi's 0x84 above: no
	 * Input item) */
	{
		char *path = fx_path("profiles/logitech-k120.profile");
		char err[512];

		if (profile_load_file(path, &p, err, sizeof(err)))
			fail_msg("%s", err);
		free(path);
		drop_defaults(&p);
		assert_int_equal(plan_defaults(&p), 0);
		assert_int_equal(p.n_interrupts, 2);
		assert_int_equal(p.interrupts[0].ep, 0x81);
		assert_int_equal(p.interrupts[0].pattern, PROFILE_PATTERN_HID);
		assert_int_equal(p.interrupts[1].ep, 0x82);
		assert_int_equal(p.interrupts[1].pattern, PROFILE_PATTERN_HID);
		if (profile_validate(&p, err, sizeof(err)))
			fail_msg("defaults do not validate: %s", err);
		/* interface 1's report descriptor stalls: random there */
		drop_defaults(&p);
		p.gets[1].stall = true;
		assert_int_equal(plan_defaults(&p), 0);
		assert_int_equal(p.interrupts[0].pattern, PROFILE_PATTERN_HID);
		assert_int_equal(p.interrupts[1].pattern, PROFILE_PATTERN_RANDOM);
		/* no report descriptor at all (a capture's plan_defaults sees
		 * only what it read): random */
		drop_defaults(&p);
		p.gets[0].stall = true;
		assert_int_equal(plan_defaults(&p), 0);
		assert_int_equal(p.interrupts[0].pattern, PROFILE_PATTERN_RANDOM);
		assert_int_equal(p.interrupts[1].pattern, PROFILE_PATTERN_RANDOM);
		profile_free(&p);
	}
}

/* ---- plan_capture through a fake device ----------------------------------- */

struct asked {
	uint8_t type, req;
	uint16_t value, index, len;
};

struct fake {
	struct pmodel m;
	struct asked log[1024];
	size_t n_log;
	int faults;                     /* apply the faults below */
};

/* The served device answers from pmodel; PLAN_STALL when it stalls. */
static int fake_xfer(void *ctx, uint8_t type, uint8_t req, uint16_t value, uint16_t index,
		     uint8_t *buf, uint16_t len, char *why, size_t why_size)
{
	struct fake *f = ctx;
	struct usb_setup s = { type, req, value, index, len };
	struct req_result r;

	if (f->n_log < 1024)
		f->log[f->n_log++] = (struct asked){ type, req, value, index, len };
	if (f->faults) {
		/* PU (2) brightness GET_RES stalls; PU contrast GET_MAX times
		 * out; XU (3) selector 2's GET_LEN stalls; XU selector 3's
		 * GET_INFO is refused; string 3 cannot be read */
		if (type == 0xa1 && req == 0x84 && value == 0x0200 && index == 0x0200)
			return PLAN_STALL;
		if (type == 0xa1 && req == 0x83 && value == 0x0300 && index == 0x0200) {
			snprintf(why, why_size, "timeout (test)");
			return PLAN_ERROR;
		}
		if (type == 0xa1 && req == 0x85 && value == 0x0200 && index == 0x0300)
			return PLAN_STALL;
		if (type == 0xa1 && req == 0x86 && value == 0x0300 && index == 0x0300) {
			snprintf(why, why_size, "interface claimed (test)");
			return PLAN_ERROR;
		}
		if (type == 0x80 && req == 0x06 && value == 0x0303) {
			snprintf(why, why_size, "pipe error (test)");
			return PLAN_ERROR;
		}
	}
	r = pm_control(&f->m, &s, NULL, 0, buf, len);
	return r.len < 0 ? PLAN_STALL : r.len;
}

static const struct profile_get *find_exact(const struct profile *p, uint8_t type, uint8_t req,
					    uint16_t value, uint16_t index)
{
	for (size_t i = 0; i < p->n_gets; i++) {
		const struct profile_get *g = &p->gets[i];

		if (g->type == type && g->req == req && g->value == value && g->index == index)
			return g;
	}
	return NULL;
}

static size_t count_asked(const struct fake *f, uint8_t type, uint8_t req, uint16_t value,
			  uint16_t index)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n_log; i++)
		if (f->log[i].type == type && f->log[i].req == req &&
		    f->log[i].value == value && f->log[i].index == index)
			n++;
	return n;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* @c: what plan_capture reads from @p served by pmodel. */
static int capture_of(struct profile *p, struct fake *f, struct profile *c,
		      struct plan_report *rep, char *err, size_t errsize)
{
	pm_init(&f->m, p);
	/* configured, as usbredirhost presents a device */
	pm_set_configuration(&f->m, p->configs[0].data[5]);
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", p->name);
	if (p->description)
		c->description = strdup(p->description);
	c->speed = p->speed;
	return plan_capture(c, fake_xfer, f, rep, err, errsize);
}

static void test_capture_faults(void **state)
{
	static const uint8_t five[] = { 0x81, 0x82, 0x83, 0x84, 0x87 };
	static struct fake f;
	struct plan_report rep;
	struct profile p, c;
	const struct profile_get *g;
	char err[256];

	(void)state;
	builtin(&p);
	memset(&f, 0, sizeof(f));
	f.faults = 1;
	assert_int_equal(capture_of(&p, &f, &c, &rep, err, sizeof(err)), 0);

	/* the failures are listed, one line each, with their reason */
	assert_int_equal(rep.failed, 3);
	assert_int_equal(count_lines(rep.failures), 3);
	assert_non_null(strstr(rep.failures, "(0xa1 0x83 0x0300 0x0200, 2 bytes): timeout (test)"));
	assert_non_null(strstr(rep.failures, "0x0300 0x0300, 1 bytes): interface claimed (test)"));
	assert_non_null(strstr(rep.failures, "0x0303 0x0409, 255 bytes): pipe error (test)"));
	assert_int_equal(rep.asked, f.n_log);
	assert_int_equal(rep.asked, rep.answered + rep.stalled + rep.failed);
	assert_int_equal(rep.stalled, 2);

	/* a stall is recorded as a `stall` get */
	g = find_exact(&c, 0xa1, 0x84, 0x0200, 0x0200);
	assert_non_null(g);
	assert_true(g->stall);
	assert_int_equal(g->len, 0);
	/* a failure is left out, and the rest of that control is there */
	assert_null(find_exact(&c, 0xa1, 0x83, 0x0300, 0x0200));
	assert_non_null(find_exact(&c, 0xa1, 0x81, 0x0300, 0x0200));
	assert_null(find_exact(&c, 0xa1, 0x86, 0x0300, 0x0300));
	assert_non_null(find_exact(&c, 0xa1, 0x81, 0x0300, 0x0300));
	/* the extension unit control whose GET_LEN stalled: not asked further */
	g = find_exact(&c, 0xa1, 0x85, 0x0200, 0x0300);
	assert_non_null(g);
	assert_true(g->stall);
	for (size_t k = 0; k < 5; k++) {
		assert_int_equal(count_asked(&f, 0xa1, five[k], 0x0200, 0x0300), 0);
		assert_null(find_exact(&c, 0xa1, five[k], 0x0200, 0x0300));
	}
	assert_int_equal(count_asked(&f, 0xa1, 0x86, 0x0200, 0x0300), 1);
	/* the other extension unit controls are asked with GET_LEN's length */
	for (size_t i = 0; i < f.n_log; i++) {
		const struct asked *a = &f.log[i];

		if (a->type == 0xa1 && (a->index >> 8) == 3 && a->req != 0x85 &&
		    a->req != 0x86) {
			const struct profile_get *len = find_exact(&p, 0xa1, 0x85, a->value,
								   a->index);

			assert_non_null(len);
			assert_int_equal(a->len, len->data[0] | len->data[1] << 8);
		}
	}
	/* the unreadable string is missing, the others are there */
	assert_int_equal(c.n_strings, p.n_strings - 1);
	/* everything else as the device answered it */
	assert_int_equal(c.n_gets, p.n_gets - 1 - 5 - 1);
	for (size_t i = 0; i < c.n_gets; i++) {
		const struct profile_get *x = &c.gets[i];
		const struct profile_get *y = find_exact(&p, x->type, x->req, (uint16_t)x->value,
							 (uint16_t)x->index);

		assert_non_null(y);
		if (x->stall != y->stall) {
			assert_true(x->stall);
			continue;
		}
		assert_int_equal(x->len, y->len);
		assert_memory_equal(x->data, y->data, x->len);
	}
	profile_free(&c);

	/* not even the device descriptor: an error, and nothing to free */
	{
		struct profile none;

		f.faults = 0;
		memset(&f, 0, sizeof(f));
		pm_init(&f.m, &p);
		p.device[0] = 9;        /* the served device answers a bad one */
		memset(&none, 0, sizeof(none));
		assert_int_equal(plan_capture(&none, fake_xfer, &f, &rep, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "device descriptor"));
		profile_free(&none);
	}
	profile_free(&p);
}

/* ---- Round trips ------------------------------------------------------------ */

static char *text_of(const struct profile *p, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	assert_int_equal(profile_write(f, p), 0);
	assert_int_equal(fclose(f), 0);
	*len = n;
	return buf;
}

static void test_builtin_text_roundtrip(void **state)
{
	struct profile p, q;
	char err[256], *text;
	size_t len;

	(void)state;
	builtin(&p);
	if (profile_validate(&p, err, sizeof(err)))
		fail_msg("the built-in profile does not validate: %s", err);
	text = text_of(&p, &len);
	if (profile_parse(text, len, "dump", &q, err, sizeof(err)))
		fail_msg("parse of the written built-in profile: %s", err);
	assert_true(profile_equal(&p, &q));
	/* and the comparison is not vacuous */
	q.gets[q.n_gets - 1].data[0] ^= 1;
	assert_false(profile_equal(&p, &q));
	free(text);
	profile_free(&p);
	profile_free(&q);
}

static void test_shipped_builtin_profile(void **state)
{
	char *path = fx_path("profiles/builtin-uvc.profile");
	struct profile p, shipped;
	char err[512];

	(void)state;
	builtin(&p);
	if (profile_load_file(path, &shipped, err, sizeof(err)))
		fail_msg("%s", err);
	if (!profile_equal(&p, &shipped)) {
		fprintf(stderr, "%s differs from the built-in camera; regenerate it with\n"
			"  cd fake-device && make && build/fake-uvc --dump-profile > "
			"profiles/builtin-uvc.profile\n", path);
		fail();
	}
	profile_free(&shipped);
	profile_free(&p);
	free(path);
}

/* Take out of @p what a capture cannot read (vendor gets, sources, the
 * endpoints with replayed packets), and those endpoints out of @c. */
static void comparable(struct profile *p, struct profile *c)
{
	for (size_t i = 0; i < p->n_gets;) {
		if ((p->gets[i].type & 0x60) == 0x40) {
			free(p->gets[i].data);
			memmove(&p->gets[i], &p->gets[i + 1],
				(p->n_gets - i - 1) * sizeof(p->gets[0]));
			p->n_gets--;
		} else {
			i++;
		}
	}
	for (struct profile *x = p; x; x = x == p ? c : NULL) {
		for (size_t i = 0; i < x->n_sources; i++)
			free(x->sources[i].text);
		x->n_sources = 0;
	}
	for (size_t i = 0; i < p->n_interrupts;) {
		struct profile_interrupt *in = &p->interrupts[i];
		uint8_t ep = in->ep;

		if (in->pattern != PROFILE_PATTERN_PACKETS) {
			i++;
			continue;
		}
		for (struct profile *x = p; x; x = x == p ? c : NULL) {
			for (size_t k = 0; k < x->n_interrupts; k++) {
				struct profile_interrupt *y = &x->interrupts[k];

				if (y->ep != ep)
					continue;
				for (size_t j = 0; j < y->n_packets; j++)
					free(y->packets[j].data);
				free(y->packets);
				memmove(y, y + 1, (x->n_interrupts - k - 1) * sizeof(*y));
				x->n_interrupts--;
				break;
			}
		}
	}
}

static void check_replay_capture(const char *what, struct profile *p)
{
	static struct fake f;
	struct plan_report rep;
	struct profile c;
	char err[256];

	memset(&f, 0, sizeof(f));
	if (capture_of(p, &f, &c, &rep, err, sizeof(err)))
		fail_msg("%s: capture: %s", what, err);
	if (rep.failed)
		fail_msg("%s: %s", what, rep.failures);
	if (profile_validate(&c, err, sizeof(err)))
		fail_msg("%s: the capture does not validate: %s", what, err);
	comparable(p, &c);
	if (!profile_equal(p, &c)) {
		fprintf(stderr, "%s: capture(replay(P)) != P\n--- P\n", what);
		profile_write(stderr, p);
		fprintf(stderr, "--- capture\n");
		profile_write(stderr, &c);
		fail();
	}
	profile_free(&c);
}

static void test_capture_of_replay(void **state)
{
	char *path = fx_path("profiles/builtin-uvc.profile");
	struct profile p;
	char err[512];

	(void)state;
	if (profile_load_file(path, &p, err, sizeof(err)))
		fail_msg("%s", err);
	check_replay_capture("builtin-uvc.profile", &p);
	profile_free(&p);
	free(path);

	fx_parse(fx_hid, &p);
	assert_int_equal(p.n_gets, 2);
	assert_true(p.has_bos);
	check_replay_capture("HID", &p);
	assert_int_equal(p.n_gets, 1);          /* the vendor get was left out */
	assert_int_equal(p.n_interrupts, 0);    /* and the replayed packets */
	profile_free(&p);

	fx_parse(fx_cdc, &p);
	check_replay_capture("CDC ACM", &p);
	assert_int_equal(p.n_interrupts, 1);
	profile_free(&p);

	/* the K120: its report descriptors come back, and with them hid */
	path = fx_path("profiles/logitech-k120.profile");
	if (profile_load_file(path, &p, err, sizeof(err)))
		fail_msg("%s", err);
	free(path);
	check_replay_capture("logitech-k120.profile", &p);
	assert_int_equal(p.n_interrupts, 2);
	assert_int_equal(p.interrupts[1].pattern, PROFILE_PATTERN_HID);
	profile_free(&p);

	/* a device that answers differently is told apart */
	fx_parse(fx_cdc, &p);
	{
		static struct fake f;
		struct plan_report rep;
		struct profile c, q;

		fx_parse(fx_cdc, &q);
		q.gets[0].data[1] = 0x96;       /* served: 9600 baud, not 115200 */
		memset(&f, 0, sizeof(f));
		assert_int_equal(capture_of(&q, &f, &c, &rep, err, sizeof(err)), 0);
		comparable(&p, &c);
		assert_false(profile_equal(&p, &c));
		profile_free(&c);
		profile_free(&q);
	}
	profile_free(&p);
}

TEST_LIST(plan_tests,
	cmocka_unit_test(test_plan_builtin_camera),
	cmocka_unit_test(test_plan_hid_cdc),
	cmocka_unit_test(test_plan_defaults),
	cmocka_unit_test(test_capture_faults),
	cmocka_unit_test(test_builtin_text_roundtrip),
	cmocka_unit_test(test_shipped_builtin_profile),
	cmocka_unit_test(test_capture_of_replay),
)
