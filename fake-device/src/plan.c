// SPDX-License-Identifier: MIT
/* What a capture asks, and the class defaults it writes. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#define CS_INTERFACE 0x24

/* UVC 1.5, table A-... : selectors by bmControls bit, and the length of
 * each standard control (what GET_CUR returns), 0 where the bit is
 * reserved.  The same mapping as uvcvideo's uvc_ctrls[] (index/selector). */
struct uvc_bit {
	uint8_t selector, size;
	const char *name;
};

static const struct uvc_bit ct_bits[] = {
	{ 0x01, 1, "scanning mode" }, { 0x02, 1, "AE mode" }, { 0x03, 1, "AE priority" },
	{ 0x04, 4, "exposure time (absolute)" }, { 0x05, 1, "exposure time (relative)" },
	{ 0x06, 2, "focus (absolute)" }, { 0x07, 2, "focus (relative)" },
	{ 0x09, 2, "iris (absolute)" }, { 0x0a, 1, "iris (relative)" },
	{ 0x0b, 2, "zoom (absolute)" }, { 0x0c, 3, "zoom (relative)" },
	{ 0x0d, 8, "pan/tilt (absolute)" }, { 0x0e, 4, "pan/tilt (relative)" },
	{ 0x0f, 2, "roll (absolute)" }, { 0x10, 2, "roll (relative)" },
	{ 0, 0, NULL }, { 0, 0, NULL },
	{ 0x08, 1, "focus, auto" }, { 0x11, 1, "privacy" }, { 0x12, 1, "focus, simple" },
	{ 0x13, 12, "window" }, { 0x14, 10, "region of interest" },
};

static const struct uvc_bit pu_bits[] = {
	{ 0x02, 2, "brightness" }, { 0x03, 2, "contrast" }, { 0x06, 2, "hue" },
	{ 0x07, 2, "saturation" }, { 0x08, 2, "sharpness" }, { 0x09, 2, "gamma" },
	{ 0x0a, 2, "white balance temperature" }, { 0x0c, 4, "white balance component" },
	{ 0x01, 2, "backlight compensation" }, { 0x04, 2, "gain" },
	{ 0x05, 1, "power line frequency" }, { 0x10, 1, "hue, auto" },
	{ 0x0b, 1, "white balance temperature, auto" },
	{ 0x0d, 1, "white balance component, auto" }, { 0x0e, 2, "digital multiplier" },
	{ 0x0f, 2, "digital multiplier limit" }, { 0x11, 1, "analog video standard" },
	{ 0x12, 1, "analog video lock status" }, { 0x13, 1, "contrast, auto" },
};

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

static const uint8_t uvc_gets[] = { 0x81, 0x82, 0x83, 0x84, 0x87 };

struct planner {
	struct plan_req *out;
	size_t max, n;
};

static void add(struct planner *pl, uint8_t type, uint8_t req, uint16_t value,
		uint16_t index, uint16_t length, const char *what)
{
	if (pl->n < pl->max)
		pl->out[pl->n] = (struct plan_req){ type, req, value, index, length, what };
	pl->n++;
}

/* Every control of one entity: GET_INFO, GET_LEN, then the five GETs with
 * the length GET_LEN will say (extension units: their length is only
 * known from GET_LEN, so the capture re-plans with the answer; here the
 * standard size, or 0 for "ask GET_LEN first"). */
static void uvc_entity(struct planner *pl, uint8_t vc, uint8_t id, const uint8_t *bm,
		       size_t bm_len, const struct uvc_bit *bits, size_t n_bits)
{
	for (size_t b = 0; b < bm_len * 8; b++) {
		uint8_t sel, size;
		const char *name;

		if (!(bm[b / 8] & (1u << (b % 8))))
			continue;
		if (bits) {
			if (b >= n_bits || !bits[b].selector)
				continue;
			sel = bits[b].selector;
			size = bits[b].size;
			name = bits[b].name;
		} else {
			sel = (uint8_t)(b + 1);
			size = 0;
			name = "extension unit control";
		}
		uint16_t value = (uint16_t)(sel << 8), index = (uint16_t)(id << 8 | vc);

		add(pl, 0xa1, 0x86, value, index, 1, name);
		add(pl, 0xa1, 0x85, value, index, 2, name);
		for (size_t k = 0; k < N_ELEM(uvc_gets); k++)
			add(pl, 0xa1, uvc_gets[k], value, index, size, name);
	}
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

size_t plan_requests(const struct profile *p, struct plan_req *out, size_t max)
{
	struct planner pl = { out, max, 0 };
	struct profile_desc_iter it;
	const uint8_t *d;
	int cls = -1, sub = -1, iface = -1, alt = -1;
	uint16_t bcd_uvc = 0x0100;

	if (!p->n_configs)
		return 0;
	/* The first configuration's interfaces (the active one: capture never
	 * sends SET_CONFIGURATION), alternate setting 0. */
	profile_desc_iter_init(&it, p->configs[0].data, p->configs[0].len);
	while (profile_desc_next(&it, &d) > 0) {
		if (d[1] == 0x04 && d[0] >= 9) {
			iface = d[2];
			alt = d[3];
			cls = d[5];
			sub = d[6];
			if (alt != 0)
				continue;
			if (cls == 0x02 && sub == 0x02)         /* CDC ACM */
				add(&pl, 0xa1, 0x21, 0, (uint16_t)iface, 7, "GET_LINE_CODING");
			else if (cls == 0x02 && sub == 0x0d)    /* CDC NCM */
				add(&pl, 0xa1, 0x80, 0, (uint16_t)iface, 28, "GET_NTB_PARAMETERS");
			else if (cls == 0x0e && sub == 0x02) {  /* UVC streaming: probe */
				uint16_t len = bcd_uvc >= 0x0150 ? 48 : bcd_uvc >= 0x0110 ? 34 : 26;
				static const uint8_t probe_gets[] = { 0x81, 0x82, 0x83, 0x87 };

				for (size_t k = 0; k < sizeof(probe_gets); k++)
					add(&pl, 0xa1, probe_gets[k], 0x0100, (uint16_t)iface, len,
					    "probe control");
			}
			continue;
		}
		if (alt != 0)
			continue;
		if (cls == 0x03 && d[1] == 0x21 && d[0] >= 9) {
			/* HID: its report descriptors (GET_DESCRIPTOR to the
			 * interface), numbered among the report descriptors only */
			unsigned nr = 0;

			for (unsigned k = 0; k < d[5] && 6 + 3 * k + 2 < d[0]; k++) {
				const uint8_t *e = d + 6 + 3 * k;

				if (e[0] == 0x22)
					add(&pl, 0x81, 0x06, (uint16_t)(0x2200 | nr++), (uint16_t)iface,
					    le16(e + 1), "HID report descriptor");
			}
			continue;
		}
		if (cls != 0x0e || sub != 0x01 || d[1] != CS_INTERFACE || d[0] < 3)
			continue;
		/* UVC VideoControl: the header's version, then every entity */
		switch (d[2]) {
		case 0x01:              /* header */
			if (d[0] >= 5)
				bcd_uvc = le16(d + 3);
			break;
		case 0x02:              /* input terminal: a camera has controls */
			if (d[0] >= 15 && le16(d + 4) == 0x0201 && d[14] && 15 + d[14] <= d[0])
				uvc_entity(&pl, (uint8_t)iface, d[3], d + 15, d[14], ct_bits,
					   N_ELEM(ct_bits));
			break;
		case 0x05:              /* processing unit */
			if (d[0] >= 8 && d[7] && 8 + d[7] <= d[0])
				uvc_entity(&pl, (uint8_t)iface, d[3], d + 8, d[7], pu_bits,
					   N_ELEM(pu_bits));
			break;
		case 0x06: {            /* extension unit */
			unsigned pins = d[0] >= 22 ? d[21] : 0;
			unsigned at = 22 + pins;

			if (d[0] > at && d[at] && at + 1 + d[at] <= d[0])
				uvc_entity(&pl, (uint8_t)iface, d[3], d + at + 1, d[at], NULL, 0);
			break;
		}
		default:
			break;
		}
	}
	return pl.n < max ? pl.n : max;
}

uint16_t plan_length(const struct profile *p, const struct plan_req *r)
{
	if (r->length)
		return r->length;
	for (size_t i = p->n_gets; i-- > 0;) {
		const struct profile_get *g = &p->gets[i];

		if (g->type == r->type && g->req == 0x85 && g->value == r->value &&
		    g->index == r->index)
			return !g->stall && g->len >= 2 ? le16(g->data) : 0;
	}
	return 0;
}

int plan_record(struct profile *p, const struct plan_req *r, const uint8_t *data, size_t len)
{
	struct profile_get *g;

	if (p->n_gets >= PROFILE_MAX_RULES)
		return -1;
	g = realloc(p->gets, (p->n_gets + 1) * sizeof(*g));
	if (!g)
		return -1;
	p->gets = g;
	g = &p->gets[p->n_gets];
	memset(g, 0, sizeof(*g));
	g->type = r->type;
	g->req = r->req;
	g->value = r->value;
	g->index = r->index;
	g->stall = data == NULL;
	if (data && len) {
		g->data = malloc(len);
		if (!g->data)
			return -1;
		memcpy(g->data, data, len);
		g->len = len;
	}
	p->n_gets++;
	return 0;
}

static int add_set(struct profile *p, uint8_t req, int store, uint8_t store_req)
{
	struct profile_set *s;

	for (size_t i = 0; i < p->n_sets; i++)
		if (p->sets[i].type == 0x21 && p->sets[i].req == req)
			return 0;       /* there already */
	if (p->n_sets >= PROFILE_MAX_RULES)
		return -1;
	s = realloc(p->sets, (p->n_sets + 1) * sizeof(*s));
	if (!s)
		return -1;
	p->sets = s;
	p->sets[p->n_sets++] = (struct profile_set){
		.type = 0x21, .req = req, .value = PROFILE_ANY, .index = PROFILE_ANY,
		.store = store != 0, .store_req = store_req,
	};
	return 0;
}

static int add_interrupt(struct profile *p, uint8_t ep, enum profile_pattern pat)
{
	struct profile_interrupt *in;

	for (size_t i = 0; i < p->n_interrupts; i++)
		if (p->interrupts[i].ep == ep)
			return 0;
	if (p->n_interrupts >= PROFILE_MAX_INTERRUPTS)
		return -1;
	in = realloc(p->interrupts, (p->n_interrupts + 1) * sizeof(*in));
	if (!in)
		return -1;
	p->interrupts = in;
	p->interrupts[p->n_interrupts++] = (struct profile_interrupt){ .ep = ep, .pattern = pat };
	return 0;
}

int plan_defaults(struct profile *p)
{
	static const uint8_t ecm_ncm_sets[] = {
		0x40, 0x41, 0x42, 0x43, 0x44,   /* ECM: multicast filters, PM, packet filter */
		0x84, 0x86, 0x88, 0x8a,         /* NCM: format, input size, datagram, CRC */
	};
	struct profile_hid_report hid[PROFILE_HID_MAX_REPORTS];
	enum profile_pattern pat;
	int rc = 0;

	for (size_t c = 0; c < p->n_configs; c++) {
		struct profile_desc_iter it;
		const uint8_t *d;
		int cls = -1, sub = -1;

		profile_desc_iter_init(&it, p->configs[c].data, p->configs[c].len);
		while (profile_desc_next(&it, &d) > 0) {
			if (d[1] == 0x04 && d[0] >= 9) {
				cls = d[5];
				sub = d[6];
				if (cls == 0x0e)
					rc |= add_set(p, 0x01, 1, 0x81);        /* SET_CUR */
				else if (cls == 0x03) {
					rc |= add_set(p, 0x09, 0, 0);           /* SET_REPORT */
					rc |= add_set(p, 0x0a, 0, 0);           /* SET_IDLE */
					rc |= add_set(p, 0x0b, 0, 0);           /* SET_PROTOCOL */
				} else if (cls == 0x02 && sub == 0x02) {
					rc |= add_set(p, 0x20, 1, 0x21);        /* SET_LINE_CODING */
					rc |= add_set(p, 0x22, 0, 0);           /* SET_CONTROL_LINE_STATE */
					rc |= add_set(p, 0x23, 0, 0);           /* SEND_BREAK */
				} else if (cls == 0x02 && (sub == 0x06 || sub == 0x0d)) {
					for (size_t k = 0; k < sizeof(ecm_ncm_sets); k++)
						rc |= add_set(p, ecm_ncm_sets[k], 0, 0);
				}
				continue;
			}
			if (d[1] != 0x05 || d[0] < 7 || !(d[2] & 0x80) || (d[3] & 3) != 3 ||
			    (le16(d + 4) & 0x7ff) < 2)
				continue;
			if (cls == 0x0e && sub == 0x01)
				pat = PROFILE_PATTERN_UVC_CONTROL;
			else if (cls == 0x03 && profile_hid_reports(p, d[2], hid))
				pat = PROFILE_PATTERN_HID;      /* what the checker accepts */
			else
				pat = PROFILE_PATTERN_RANDOM;
			rc |= add_interrupt(p, d[2], pat);
		}
	}
	return rc ? -1 : 0;
}

/* ---- The capture itself ------------------------------------------------------ */

#include <stdarg.h>
#include <stdio.h>

static void failure(struct plan_report *rep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void failure(struct plan_report *rep, const char *fmt, ...)
{
	size_t n = strlen(rep->failures);
	va_list ap;

	rep->failed++;
	if (n + 2 >= sizeof(rep->failures))
		return;
	va_start(ap, fmt);
	vsnprintf(rep->failures + n, sizeof(rep->failures) - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(rep->failures);
	rep->failures[n] = '\n';
	rep->failures[n + 1] = '\0';
}

static int ask(plan_xfer_fn fn, void *ctx, struct plan_report *rep, uint8_t type,
	       uint8_t req, uint16_t value, uint16_t index, uint8_t *buf, uint16_t len,
	       const char *what)
{
	char why[160] = "";
	int n;

	rep->asked++;
	n = fn(ctx, type, req, value, index, buf, len, why, sizeof(why));
	if (n == PLAN_STALL) {
		rep->stalled++;
	} else if (n < 0) {
		failure(rep, "%s (0x%02x 0x%02x 0x%04x 0x%04x, %u bytes): %s", what, type, req,
			value, index, len, why[0] ? why : "failed");
		n = PLAN_ERROR;
	} else {
		rep->answered++;
	}
	return n;
}

static void *dup_bytes(const uint8_t *b, size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p && n)
		memcpy(p, b, n);
	return p;
}

/* A string descriptor's UTF-16LE as UTF-8 (NUL-terminated, no NUL inside:
 * a NUL unit ends the text); NULL when it is not valid UTF-16. */
static char *utf16_to_utf8(const uint8_t *d, size_t units)
{
	char *s = malloc(units * 3 + 1), *o = s;

	if (!s)
		return NULL;
	for (size_t i = 0; i < units; i++) {
		uint32_t c = le16(d + 2 * i);

		if (c == 0)
			break;
		if (c >= 0xd800 && c < 0xdc00) {
			uint32_t lo = i + 1 < units ? le16(d + 2 * i + 2) : 0;

			if (lo < 0xdc00 || lo >= 0xe000)
				goto bad;
			c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
			i++;
		} else if (c >= 0xdc00 && c < 0xe000) {
			goto bad;
		}
		if (c < 0x80) {
			*o++ = (char)c;
		} else if (c < 0x800) {
			*o++ = (char)(0xc0 | c >> 6);
			*o++ = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			*o++ = (char)(0xe0 | c >> 12);
			*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		} else {
			*o++ = (char)(0xf0 | c >> 18);
			*o++ = (char)(0x80 | ((c >> 12) & 0x3f));
			*o++ = (char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (char)(0x80 | (c & 0x3f));
		}
	}
	*o = '\0';
	return s;
bad:
	free(s);
	return NULL;
}

static int add_string(struct profile *p, uint16_t langid, uint8_t index, char *text)
{
	struct profile_string *s;

	for (size_t i = 0; i < p->n_strings; i++) {
		if (p->strings[i].langid == langid && p->strings[i].index == index) {
			free(text);
			return 0;
		}
	}
	s = realloc(p->strings, (p->n_strings + 1) * sizeof(*s));
	if (!s) {
		free(text);
		return -1;
	}
	p->strings = s;
	p->strings[p->n_strings++] = (struct profile_string){ langid, index, text, 0 };
	return 0;
}

/* The string indexes the standard descriptors name, in order, once each. */
static size_t string_indexes(const struct profile *p, uint8_t *out)
{
	uint8_t seen[256] = { 0 };
	size_t n = 0;

#define NOTE(i) do { if ((i) && !seen[(i)]) { seen[(i)] = 1; out[n++] = (i); } } while (0)
	NOTE(p->device[14]);
	NOTE(p->device[15]);
	NOTE(p->device[16]);
	for (size_t c = 0; c < p->n_configs; c++) {
		struct profile_desc_iter it;
		const uint8_t *d;

		profile_desc_iter_init(&it, p->configs[c].data, p->configs[c].len);
		while (profile_desc_next(&it, &d) > 0) {
			if (d[1] == 0x02 && d[0] >= 9)
				NOTE(d[6]);
			else if (d[1] == 0x04 && d[0] >= 9)
				NOTE(d[8]);
			else if (d[1] == 0x0b && d[0] >= 8)
				NOTE(d[7]);
			else if (d[1] == 0x24 && d[0] >= 13 && d[2] == 0x0f)
				NOTE(d[3]);     /* CDC Ethernet: iMACAddress (cdc_ether reads it) */
		}
	}
#undef NOTE
	return n;
}

int plan_capture(struct profile *p, plan_xfer_fn fn, void *ctx, struct plan_report *rep,
		 char *err, size_t errsize)
{
	static uint8_t buf[65535];
	static struct plan_req reqs[PLAN_MAX];
	uint8_t idx[256];
	size_t n_reqs, n_idx;
	int n;

	memset(rep, 0, sizeof(*rep));
	n = ask(fn, ctx, rep, 0x80, 0x06, 0x0100, 0, buf, 18, "device descriptor");
	if (n != 18 || buf[0] != 18 || buf[1] != 0x01) {
		snprintf(err, errsize, "cannot read the device descriptor (%s)",
			 n == PLAN_STALL ? "stalled" : n < 0 ? "failed" : "short or malformed");
		return -1;
	}
	memcpy(p->device, buf, 18);
	if (le16(p->device + 2) >= 0x0200 && p->speed == PROFILE_SPEED_HIGH) {
		n = ask(fn, ctx, rep, 0x80, 0x06, 0x0600, 0, buf, 10, "device qualifier");
		if (n == 10 && buf[0] == 10 && buf[1] == 0x06) {
			memcpy(p->qualifier, buf, 10);
			p->has_qualifier = true;
		}
	}
	for (unsigned c = 0; c < p->device[17] && c < PROFILE_MAX_CONFIGS; c++) {
		uint16_t total;

		n = ask(fn, ctx, rep, 0x80, 0x06, (uint16_t)(0x0200 | c), 0, buf, 9,
			"configuration descriptor (header)");
		if (n < 9 || buf[1] != 0x02) {
			if (n >= 0)     /* a stall or an error is counted already */
				failure(rep, "configuration %u: a short or malformed header", c);
			continue;
		}
		total = le16(buf + 2);
		n = ask(fn, ctx, rep, 0x80, 0x06, (uint16_t)(0x0200 | c), 0, buf, total,
			"configuration descriptor");
		if (n != total) {
			if (n >= 0)
				failure(rep, "configuration %u: %d of its %u bytes", c, n, total);
			continue;
		}
		p->configs[p->n_configs].data = dup_bytes(buf, total);
		p->configs[p->n_configs].len = total;
		if (!p->configs[p->n_configs].data)
			return snprintf(err, errsize, "out of memory"), -1;
		p->n_configs++;
	}
	if (le16(p->device + 2) >= 0x0201) {
		n = ask(fn, ctx, rep, 0x80, 0x06, 0x0f00, 0, buf, 5, "BOS descriptor (header)");
		if (n == 5 && buf[1] == 0x0f) {
			uint16_t total = le16(buf + 2);

			n = ask(fn, ctx, rep, 0x80, 0x06, 0x0f00, 0, buf, total, "BOS descriptor");
			if (n == total) {
				p->bos.data = dup_bytes(buf, total);
				p->bos.len = total;
				p->has_bos = p->bos.data != NULL;
			}
		}
	}
	n_idx = string_indexes(p, idx);
	if (n_idx) {
		n = ask(fn, ctx, rep, 0x80, 0x06, 0x0300, 0, buf, 255, "string 0 (languages)");
		if (n >= 4 && buf[1] == 0x03 && buf[0] <= n && !(buf[0] & 1)) {
			p->string0_len = (size_t)buf[0] - 2;
			if (p->string0_len > PROFILE_STRING0_MAX)
				p->string0_len = PROFILE_STRING0_MAX;
			memcpy(p->string0, buf + 2, p->string0_len);
			p->has_string0 = true;
		}
	}
	for (size_t l = 0; p->has_string0 && l + 1 < p->string0_len; l += 2) {
		uint16_t lang = le16(p->string0 + l);

		for (size_t i = 0; i < n_idx; i++) {
			char *text;

			n = ask(fn, ctx, rep, 0x80, 0x06, (uint16_t)(0x0300 | idx[i]), lang, buf,
				255, "string");
			if (n < 2 || buf[1] != 0x03 || buf[0] > n || buf[0] < 2) {
				if (n >= 0)
					failure(rep, "string %u (language 0x%04x): no descriptor",
						idx[i], lang);
				continue;
			}
			text = utf16_to_utf8(buf + 2, (size_t)(buf[0] - 2) / 2);
			if (!text) {
				failure(rep, "string %u (language 0x%04x): not UTF-16", idx[i], lang);
				continue;
			}
			if (add_string(p, lang, idx[i], text))
				return snprintf(err, errsize, "out of memory"), -1;
		}
	}
	n_reqs = plan_requests(p, reqs, PLAN_MAX);
	for (size_t i = 0; i < n_reqs; i++) {
		uint16_t len = plan_length(p, &reqs[i]);

		if (!len)
			continue;
		n = ask(fn, ctx, rep, reqs[i].type, reqs[i].req, reqs[i].value, reqs[i].index,
			buf, len, reqs[i].what);
		if (n == PLAN_ERROR)
			continue;
		if (plan_record(p, &reqs[i], n == PLAN_STALL ? NULL : buf,
				n == PLAN_STALL ? 0 : (size_t)n))
			return snprintf(err, errsize, "out of memory"), -1;
	}
	if (plan_defaults(p))
		return snprintf(err, errsize, "out of memory"), -1;
	return 0;
}

/* ---- Comparing a capture with its profile -------------------------------- */

/* What a capture can give back: the gets the plan asks and the sets the
 * class defaults write, nothing hand-written (vendor requests, requests on
 * a vendor interface, other sets), no source, no recorded packets. */
int plan_comparable(struct profile *p, const struct profile *orig)
{
	static struct plan_req plan[PLAN_MAX];
	size_t n_plan = plan_requests(orig, plan, PLAN_MAX);
	struct profile d;
	size_t k = 0;

	memset(&d, 0, sizeof(d));
	memcpy(d.configs, orig->configs, sizeof(d.configs));
	d.n_configs = orig->n_configs;
	if (plan_defaults(&d)) {
		free(d.sets);
		free(d.interrupts);
		return -1;
	}

	for (size_t i = 0; i < p->n_sources; i++)
		free(p->sources[i].text);
	p->n_sources = 0;
	for (size_t i = 0; i < p->n_gets; i++) {
		const struct profile_get *g = &p->gets[i];
		bool planned = false;

		for (size_t j = 0; j < n_plan && !planned; j++)
			planned = plan[j].type == g->type && plan[j].req == g->req &&
				  plan[j].value == g->value && plan[j].index == g->index;
		/* an answer a `set ... store` rule may replace is state, not
		 * identity: a driver's SET_LINE_CODING or SET_CUR at probe
		 * changes what a later capture reads */
		for (size_t j = 0; j < orig->n_sets && planned; j++) {
			const struct profile_set *s = &orig->sets[j];

			if (s->store && (s->type | 0x80) == g->type && s->store_req == g->req &&
			    (s->value == PROFILE_ANY || s->value == g->value) &&
			    (s->index == PROFILE_ANY || s->index == g->index))
				planned = false;
		}
		if (planned)
			p->gets[k++] = p->gets[i];
		else
			free(p->gets[i].data);
	}
	p->n_gets = k;
	k = 0;
	for (size_t i = 0; i < p->n_sets; i++) {
		const struct profile_set *s = &p->sets[i];
		bool def = false;

		for (size_t j = 0; j < d.n_sets && !def; j++)
			def = d.sets[j].type == s->type && d.sets[j].req == s->req &&
			      d.sets[j].value == s->value && d.sets[j].index == s->index &&
			      d.sets[j].store == s->store && d.sets[j].store_req == s->store_req;
		if (def)
			p->sets[k++] = p->sets[i];
	}
	p->n_sets = k;
	free(d.sets);
	free(d.interrupts);
	k = 0;
	for (size_t i = 0; i < p->n_interrupts; i++) {
		bool packets = false;

		for (size_t j = 0; j < orig->n_interrupts; j++)
			if (orig->interrupts[j].ep == p->interrupts[i].ep &&
			    orig->interrupts[j].pattern == PROFILE_PATTERN_PACKETS)
				packets = true;
		if (packets) {
			for (size_t n = 0; n < p->interrupts[i].n_packets; n++)
				free(p->interrupts[i].packets[n].data);
			free(p->interrupts[i].packets);
		} else {
			p->interrupts[k++] = p->interrupts[i];
		}
	}
	p->n_interrupts = k;
	return 0;
}
