// SPDX-License-Identifier: MIT
/* The device a profile describes: state, control requests, interrupt packets. */
#include "pmodel.h"

#include <string.h>

#define USB_REQ_GET_STATUS        0x00
#define USB_REQ_CLEAR_FEATURE     0x01
#define USB_REQ_SET_FEATURE       0x03
#define USB_REQ_GET_DESCRIPTOR    0x06
#define USB_REQ_GET_CONFIGURATION 0x08
#define USB_REQ_SET_CONFIGURATION 0x09
#define USB_REQ_GET_INTERFACE     0x0a
#define USB_REQ_SET_INTERFACE     0x0b

#define UVC_STATUS_VC  0x01
#define UVC_STATUS_VS  0x02

void pm_init(struct pmodel *m, struct profile *p)
{
	memset(m, 0, sizeof(*m));
	m->p = p;
	m->cfg_index = -1;
}

static int find_config(const struct profile *p, uint8_t value)
{
	for (size_t i = 0; i < p->n_configs; i++)
		if (p->configs[i].len >= 9 && p->configs[i].data[5] == value)
			return (int)i;
	return -1;
}

static int iface_pos(const struct pmodel *m, uint8_t number)
{
	for (size_t i = 0; i < m->n_ifaces; i++)
		if (m->ifaces[i].number == number)
			return (int)i;
	return -1;
}

int pm_set_configuration(struct pmodel *m, uint8_t value)
{
	struct profile_desc_iter it;
	const struct profile_blob *b;
	const uint8_t *d;
	int c;

	if (value == 0) {
		m->configuration = 0;
		m->cfg_index = -1;
		m->n_ifaces = 0;
		return 0;
	}
	c = find_config(m->p, value);
	if (c < 0)
		return -1;
	m->configuration = value;
	m->cfg_index = c;
	m->n_ifaces = 0;
	memset(m->alt, 0, sizeof(m->alt));
	b = &m->p->configs[c];
	profile_desc_iter_init(&it, b->data, b->len);
	while (profile_desc_next(&it, &d) > 0) {
		if (d[1] != 0x04 || d[0] < 9 || iface_pos(m, d[2]) >= 0 ||
		    m->n_ifaces == PM_MAX_IFACES)
			continue;
		m->ifaces[m->n_ifaces++] = (struct pm_iface){ d[2], d[5], d[6], d[7] };
	}
	return 0;
}

static int has_alt(const struct pmodel *m, uint8_t iface, uint8_t alt)
{
	const struct profile_blob *b;
	struct profile_desc_iter it;
	const uint8_t *d;

	if (m->cfg_index < 0)
		return 0;
	b = &m->p->configs[m->cfg_index];
	profile_desc_iter_init(&it, b->data, b->len);
	while (profile_desc_next(&it, &d) > 0)
		if (d[1] == 0x04 && d[0] >= 9 && d[2] == iface && d[3] == alt)
			return 1;
	return 0;
}

int pm_set_interface(struct pmodel *m, uint8_t iface, uint8_t alt)
{
	int i = iface_pos(m, iface);

	if (i < 0 || !has_alt(m, iface, alt))
		return -1;
	m->alt[i] = alt;
	return 0;
}

int pm_get_interface(const struct pmodel *m, uint8_t iface)
{
	int i = iface_pos(m, iface);

	return i < 0 ? -1 : m->alt[i];
}

size_t pm_endpoints(const struct pmodel *m, struct pm_ep *out, size_t max)
{
	const struct profile_blob *b;
	struct profile_desc_iter it;
	const uint8_t *d;
	size_t n = 0;
	int current = 0;

	if (m->cfg_index < 0)
		return 0;
	b = &m->p->configs[m->cfg_index];
	profile_desc_iter_init(&it, b->data, b->len);
	while (profile_desc_next(&it, &d) > 0) {
		if (d[1] == 0x04 && d[0] >= 9) {
			current = pm_get_interface(m, d[2]) == d[3];
			continue;
		}
		if (d[1] != 0x05 || d[0] < 7 || !current || n == max)
			continue;
		out[n++] = (struct pm_ep){
			.addr = d[2], .type = d[3] & 3, .interval = d[6],
			.iface = (uint8_t)it.iface,
			.maxpacket = (uint16_t)(d[4] | d[5] << 8),
		};
	}
	return n;
}

int pm_endpoint(const struct pmodel *m, uint8_t addr, struct pm_ep *out)
{
	struct pm_ep eps[PM_MAX_EPS];
	size_t n = pm_endpoints(m, eps, PM_MAX_EPS);

	for (size_t i = 0; i < n; i++) {
		if (eps[i].addr == addr) {
			*out = eps[i];
			return 0;
		}
	}
	return -1;
}

/* ---- Control requests ------------------------------------------------------ */

static int answer(uint8_t *in, size_t in_size, uint16_t wlength, const uint8_t *data,
		  size_t len)
{
	size_t n = len;

	if (n > wlength)
		n = wlength;
	if (n > in_size)
		n = in_size;
	if (n)
		memcpy(in, data, n);
	return (int)n;
}

static int get_descriptor(struct pmodel *m, const struct usb_setup *s, uint8_t *in,
			  size_t in_size)
{
	const struct profile *p = m->p;
	uint8_t type = s->wValue >> 8, index = s->wValue & 0xff;
	uint8_t buf[256];
	int n;

	switch (type) {
	case 0x01:
		return answer(in, in_size, s->wLength, p->device, sizeof(p->device));
	case 0x02:
	case 0x07:              /* other speed: the one configuration we have */
		if (index >= p->n_configs || (type == 0x07 && !p->has_qualifier))
			return -1;
		n = answer(in, in_size, s->wLength, p->configs[index].data,
			   p->configs[index].len);
		if (type == 0x07 && n >= 2)
			in[1] = 0x07;
		return n;
	case 0x03:
		if (index == 0) {
			if (!p->has_string0)
				return -1;
			buf[0] = (uint8_t)(2 + p->string0_len);
			buf[1] = 0x03;
			memcpy(buf + 2, p->string0, p->string0_len);
			return answer(in, in_size, s->wLength, buf, buf[0]);
		}
		n = profile_string_descriptor(p, s->wIndex, index, buf, sizeof(buf));
		return n < 0 ? -1 : answer(in, in_size, s->wLength, buf, (size_t)n);
	case 0x06:
		if (!p->has_qualifier)
			return -1;
		return answer(in, in_size, s->wLength, p->qualifier, sizeof(p->qualifier));
	case 0x0f:
		if (!p->has_bos)
			return -1;
		return answer(in, in_size, s->wLength, p->bos.data, p->bos.len);
	default:
		return -1;
	}
}

static int standard_device(struct pmodel *m, const struct usb_setup *s, uint8_t *in,
			   size_t in_size)
{
	uint8_t b[2] = { 0, 0 };
	int dir_in = !!(s->bmRequestType & 0x80);
	int recip = s->bmRequestType & 0x1f;

	switch (s->bRequest) {
	case USB_REQ_GET_STATUS:
		if (!dir_in)
			return -1;
		if (recip == 0 && m->cfg_index >= 0 &&
		    (m->p->configs[m->cfg_index].data[7] & 0x40))
			b[0] = 1;       /* self powered */
		return answer(in, in_size, s->wLength, b, 2);
	case USB_REQ_CLEAR_FEATURE:
	case USB_REQ_SET_FEATURE:
		return dir_in ? -1 : 0;
	case USB_REQ_GET_DESCRIPTOR:
		return dir_in && recip == 0 ? get_descriptor(m, s, in, in_size) : -2;
	case USB_REQ_GET_CONFIGURATION:
		if (!dir_in || recip != 0)
			return -1;
		b[0] = m->configuration;
		return answer(in, in_size, s->wLength, b, 1);
	case USB_REQ_SET_CONFIGURATION:
		if (dir_in || recip != 0)
			return -1;
		return pm_set_configuration(m, (uint8_t)s->wValue) ? -1 : 0;
	case USB_REQ_GET_INTERFACE: {
		int alt = pm_get_interface(m, (uint8_t)s->wIndex);

		if (!dir_in || recip != 1 || alt < 0)
			return -1;
		b[0] = (uint8_t)alt;
		return answer(in, in_size, s->wLength, b, 1);
	}
	case USB_REQ_SET_INTERFACE:
		if (dir_in || recip != 1)
			return -1;
		return pm_set_interface(m, (uint8_t)s->wIndex, (uint8_t)s->wValue) ? -1 : 0;
	default:
		return -2;      /* not ours: the rules may know it */
	}
}

struct req_result pm_control(struct pmodel *m, const struct usb_setup *s,
			     const uint8_t *out, int out_len,
			     uint8_t *in, size_t in_size)
{
	struct req_result r = { -1, REQ_OTHER };
	int dir_in = !!(s->bmRequestType & 0x80);

	if ((s->bmRequestType & 0x60) == 0) {
		r.kind = REQ_STANDARD;
		r.len = standard_device(m, s, in, in_size);
		if (r.len != -2)
			return r;
		r.len = -1;
	} else if ((s->bmRequestType & 0x60) == 0x60) {
		return r;       /* reserved type */
	} else {
		r.kind = dir_in ? REQ_CLASS_GET : REQ_CLASS_SET;
	}
	if (dir_in) {
		const struct profile_get *g = profile_find_get(m->p, s->bmRequestType,
							       s->bRequest, s->wValue,
							       s->wIndex);

		if (g && !g->stall)
			r.len = answer(in, in_size, s->wLength, g->data, g->len);
	} else {
		const struct profile_set *st = profile_find_set(m->p, s->bmRequestType,
								s->bRequest, s->wValue,
								s->wIndex);

		if (st) {
			r.len = 0;
			if (st->store && profile_set_store(m->p, st, s->wValue, s->wIndex, out,
							   out_len > 0 ? (size_t)out_len : 0))
				r.len = -1;
		}
	}
	return r;
}

/* ---- Interrupt packets ----------------------------------------------------- */

double pm_ceiling(enum profile_speed speed, uint8_t interval)
{
	if (interval < 1)
		interval = 1;
	if (speed == PROFILE_SPEED_HIGH || speed == PROFILE_SPEED_SUPER)
		return flood_ceiling(interval);
	return 1000.0 / interval;       /* low and full speed: milliseconds */
}

static uint64_t next_rand(uint64_t *s)
{
	/* xorshift64* */
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

int pm_gen_init(struct pm_gen *g, const struct pmodel *m,
		const struct profile_interrupt *rule, const struct flood_cfg *cfg)
{
	uint8_t interval = 1;
	uint16_t maxpacket;

	memset(g, 0, sizeof(*g));
	g->ep = rule->ep;
	g->rule = rule;
	/* the smallest wMaxPacketSize counts (FORMAT.md): packets must fit
	 * whichever configuration or alternate setting the guest selects */
	maxpacket = (uint16_t)profile_interrupt_maxpacket(m->p, rule->ep, &interval);
	g->maxpacket = maxpacket ? maxpacket : 8;
	g->prng = cfg->seed * 0x9e3779b97f4a7c15ull + rule->ep;
	flood_init(&g->fl, cfg, pm_ceiling(m->p->speed, interval));
	if (rule->pattern == PROFILE_PATTERN_HID) {
		struct profile_hid_report r[PROFILE_HID_MAX_REPORTS];
		size_t n = profile_hid_reports(m->p, rule->ep, r);

		/* they fit in wMaxPacketSize; and in the buffer */
		for (size_t i = 0; i < n; i++)
			if (r[i].len <= PM_PACKET_MAX) {
				struct pm_hid_report *h = &g->hid[g->n_hid++];

				h->id = r[i].id;
				h->len = (uint16_t)r[i].len;
				h->n_keys = (uint8_t)r[i].n_keys;
				memcpy(h->keys, r[i].keys, sizeof(h->keys));
			}
		if (!g->n_hid)
			return -1;
	}
	return 0;
}

/* The VideoStreaming interface's number: a button's originator. */
static uint8_t vs_interface(const struct pmodel *m)
{
	for (size_t i = 0; i < m->n_ifaces; i++)
		if (m->ifaces[i].klass == 0x0e && m->ifaces[i].subclass == 0x02)
			return m->ifaces[i].number;
	return 1;
}

/* A control change event for the next GET_CUR answer of a unit or
 * terminal (wIndex's high byte): what uvcvideo's status handler reads. */
static size_t uvc_control(struct pm_gen *g, const struct pmodel *m, uint8_t *buf, size_t cap)
{
	const struct profile *p = m->p;

	if (cap < 6)
		return 0;
	for (size_t k = 0; k < p->n_gets; k++) {
		const struct profile_get *r = &p->gets[(g->ctrl_cursor + k) % p->n_gets];
		size_t n;

		if (r->type != 0xa1 || r->req != 0x81 || r->stall || !r->len ||
		    r->value < 0 || r->index < 0 || ((r->index >> 8) & 0xff) == 0)
			continue;
		g->ctrl_cursor = (g->ctrl_cursor + k + 1) % p->n_gets;
		buf[0] = UVC_STATUS_VC;
		buf[1] = (uint8_t)(r->index >> 8);      /* bOriginator: the entity */
		buf[2] = 0x00;                          /* bEvent: control change */
		buf[3] = (uint8_t)(r->value >> 8);      /* bSelector */
		buf[4] = 0x00;                          /* bAttribute: value */
		n = r->len < cap - 5 ? r->len : cap - 5;
		memcpy(buf + 5, r->data, n);
		return 5 + n;
	}
	return 0;
}

static size_t uvc_button(struct pm_gen *g, const struct pmodel *m, uint8_t *buf)
{
	buf[0] = UVC_STATUS_VS;
	buf[1] = vs_interface(m);
	buf[2] = 0x00;                  /* button press event */
	buf[3] = (uint8_t)(g->button++ % 2 == 0);   /* pressed, released, ... */
	return 4;
}

static size_t uvc_malformed(struct pm_gen *g, const struct pmodel *m, uint8_t *buf,
			    size_t cap)
{
	size_t n = uvc_control(g, m, buf, cap);

	if (n < 5) {
		memset(buf, 0, 5);
		buf[0] = UVC_STATUS_VC;
		n = 5;
	}
	switch (g->step++ % 7) {
	case 0: return 1;                               /* shorter than a header */
	case 1: buf[0] = 0x0f; return n;                /* unknown bStatusType */
	case 2: buf[1] = 0xff; return n;                /* no such entity */
	case 3: buf[3] = 0xfe; return n;                /* no such selector */
	case 4: buf[4] = 0x03; return n;                /* bAttribute past "max change" */
	case 5: buf[2] = 0x01; return n;                /* bEvent != 0 */
	default: return 0;                              /* zero-length */
	}
}

static size_t random_bytes(struct pm_gen *g, uint8_t *buf, size_t cap)
{
	size_t n = 1 + next_rand(&g->prng) % cap;

	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)next_rand(&g->prng);
	return n;
}

static void put_bits(uint8_t *p, uint32_t bit, uint32_t size, uint32_t v)
{
	for (uint32_t k = 0; k < size; k++, bit++) {
		if (v >> k & 1)
			p[bit / 8] |= (uint8_t)(1u << (bit % 8));
		else
			p[bit / 8] &= (uint8_t)~(1u << (bit % 8));
	}
}

/* Keyboard fields type harmless keys only: letters, digits, Enter, Esc,
 * Backspace, Tab, Space and punctuation (usages 0x04 to 0x38).  Never a
 * modifier, a function key, ScrollLock or Delete: the guest's VT acts on
 * Ctrl-Alt-Del (restarts the machine), Ctrl/Shift/AltGr-ScrollLock (dumps
 * tasks, memory, registers) and Alt-Fn (switches consoles). */
static void hid_safe_keys(struct pm_gen *g, const struct pm_hid_report *r, uint8_t *payload,
			  uint32_t payload_bits)
{
	for (size_t f = 0; f < r->n_keys; f++) {
		const struct profile_hid_keys *k = &r->keys[f];

		for (uint32_t j = 0; j < k->count; j++) {
			uint64_t at = (uint64_t)k->bit + (uint64_t)j * k->size;
			uint32_t v = 0;

			if (at + k->size > payload_bits)
				break;
			if (k->array) {
				if (k->size >= 6)       /* a letter: a to z */
					v = 0x04 + (uint32_t)(next_rand(&g->prng) % 26);
			} else if (k->usage_min + j >= 0x04 && k->usage_min + j <= 0x38) {
				v = (uint32_t)next_rand(&g->prng) & 1u;   /* up or down */
			}
			put_bits(payload, (uint32_t)at, k->size, v);
		}
	}
}

/* Input reports in turn, each first with random payload and then all zero
 * (a key release, a button let go), Report ID byte set.  Keyboard fields
 * get harmless keys (hid_safe_keys). */
static size_t hid_report(struct pm_gen *g, uint8_t *buf)
{
	const struct pm_hid_report *r;
	size_t off;

	if (!g->n_hid)
		return 0;
	r = &g->hid[g->next_hid % g->n_hid];
	off = r->id ? 1 : 0;
	if (off)
		buf[0] = r->id;
	if (g->hid_release) {
		memset(buf + off, 0, r->len - off);
		g->next_hid = (g->next_hid + 1) % g->n_hid;
	} else {
		for (size_t i = off; i < r->len; i++)
			buf[i] = (uint8_t)next_rand(&g->prng);
		hid_safe_keys(g, r, buf + off, (uint32_t)(r->len - off) * 8);
	}
	g->hid_release = !g->hid_release;
	return r->len;
}

size_t pm_gen_next(struct pm_gen *g, const struct pmodel *m, uint8_t *buf)
{
	/* full: up to wMaxPacketSize (replayed packets, whole HID reports);
	 * cap: shorter than wMaxPacketSize (the other patterns); both within
	 * the buffer */
	size_t full = g->maxpacket;
	size_t cap = g->maxpacket > 1 ? (size_t)g->maxpacket - 1 : 1;
	size_t n = 0;

	if (full > PM_PACKET_MAX)
		full = PM_PACKET_MAX;
	if (cap > PM_PACKET_MAX)
		cap = PM_PACKET_MAX;
	switch (g->rule->pattern) {
	case PROFILE_PATTERN_PACKETS:
		if (g->rule->n_packets) {
			const struct profile_blob *b = &g->rule->packets[g->next_packet];

			g->next_packet = (g->next_packet + 1) % g->rule->n_packets;
			n = b->len < full ? b->len : full;
			memcpy(buf, b->data, n);
		}
		cap = full;
		break;
	case PROFILE_PATTERN_HID:
		n = hid_report(g, buf);
		cap = full;
		break;
	case PROFILE_PATTERN_UVC_CONTROL:
		n = uvc_control(g, m, buf, cap);
		if (n == 0)
			n = uvc_button(g, m, buf);
		break;
	case PROFILE_PATTERN_UVC_BUTTON:
		n = uvc_button(g, m, buf);
		break;
	case PROFILE_PATTERN_UVC_MIXED:
		n = g->step++ % 2 ? uvc_button(g, m, buf) : uvc_control(g, m, buf, cap);
		if (n == 0)
			n = uvc_button(g, m, buf);
		break;
	case PROFILE_PATTERN_UVC_MALFORMED:
		n = uvc_malformed(g, m, buf, cap);
		break;
	case PROFILE_PATTERN_UVC_RANDOM:
	case PROFILE_PATTERN_RANDOM:
		n = random_bytes(g, buf, cap);
		break;
	case PROFILE_PATTERN_ZERO:
	default:
		n = cap;
		memset(buf, 0, n);
		break;
	}
	if (n > cap)
		n = cap;
	flood_account(&g->fl, n);
	return n;
}
