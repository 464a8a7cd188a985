// SPDX-License-Identifier: MIT
/* Loopback: a libusbredirparser in usb-guest mode (QEMU's side) drives the
 * device in-process through memory pipes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixtures.h"
#include "peer.h"
#include "tests.h"

#define EP2I(ep) ((((ep) & 0x80) >> 3) | ((ep) & 0x0f))

static struct peer *attach(const struct fake_cfg *cfg)
{
	struct peer *p = peer_new(cfg);

	assert_int_equal(p->hello, 1);
	assert_int_equal(p->connects, 1);
	return p;
}

static void test_connect_sequence(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p = attach(&cfg);

	(void)state;
	assert_true(p->caps_ok);
	/* interface and endpoint info precede the connect */
	assert_int_equal(p->iface_before_connect, 1);
	assert_int_equal(p->ep_before_connect, 1);
	assert_int_equal(p->connect.speed, usb_redir_speed_high);
	assert_int_equal(p->connect.vendor_id, CAM_VENDOR_ID);
	assert_int_equal(p->connect.product_id, CAM_PRODUCT_ID);
	assert_int_equal(p->connect.device_class, 0xef);
	assert_int_equal(p->iface.interface_count, 2);
	assert_int_equal(p->iface.interface_class[0], UVC_CC_VIDEO);
	assert_int_equal(p->iface.interface_subclass[1], UVC_SC_VIDEOSTREAMING);
	assert_int_equal(p->ep.type[0], usb_redir_type_control);
	assert_int_equal(p->ep.type[16], usb_redir_type_control);
	assert_int_equal(p->ep.type[EP2I(CAM_EP_STATUS)], usb_redir_type_interrupt);
	assert_int_equal(p->ep.interval[EP2I(CAM_EP_STATUS)], 1);
	assert_int_equal(p->ep.max_packet_size[EP2I(CAM_EP_STATUS)], 16);
	assert_int_equal(p->ep.type[EP2I(CAM_EP_VIDEO)], usb_redir_type_invalid);
	for (int i = 0; i < 32; i++)
		if (i != 0 && i != 16 && i != EP2I(CAM_EP_STATUS))
			assert_int_equal(p->ep.type[i], usb_redir_type_invalid);
	peer_free(p);
}

/* What Linux does on enumeration and uvcvideo on probe. */
static void test_enumeration_and_probe(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p = attach(&cfg);
	uint8_t in[4096], probe[34];
	int n;

	(void)state;
	assert_int_equal(peer_control(p, 0x80, 6, 0x0100, 0, 64, NULL, in), 18);
	assert_int_equal(in[1], 1);
	assert_int_equal(peer_control(p, 0x80, 6, 0x0200, 0, 9, NULL, in), 9);
	unsigned total = in[2] | in[3] << 8;
	n = peer_control(p, 0x80, 6, 0x0200, 0, (uint16_t)total, NULL, in);
	assert_int_equal(n, (int)total);
	assert_int_equal(peer_control(p, 0x80, 6, 0x0300, 0, 255, NULL, in), 4);
	assert_true(peer_control(p, 0x80, 6, 0x0302, 0x0409, 255, NULL, in) > 2);

	int eps = p->ep_infos;
	peer_set_configuration(p, 1);
	assert_int_equal(p->config_status, usb_redir_success);
	assert_int_equal(p->config_value, 1);
	assert_int_equal(p->ep_infos, eps + 1);
	peer_set_configuration(p, 5);
	assert_int_equal(p->config_status, usb_redir_stall);

	/* uvc_ctrl_init: GET_INFO on every CT/PU control */
	for (size_t i = 0; i < cam_n_ctrls; i++) {
		const struct ctrl_def *c = &cam_ctrls[i];

		if (c->unit != CAM_ENTITY_CAMERA && c->unit != CAM_ENTITY_PROCESSING)
			continue;
		n = peer_control(p, 0xa1, UVC_GET_INFO, (uint16_t)(c->selector << 8),
				 (uint16_t)(c->unit << 8), 1, NULL, in);
		assert_int_equal(n, 1);
		assert_int_equal(in[0], c->info);
	}
	/* uvc_video_init: SET_INTERFACE(1, 0), GET_DEF, SET_CUR, GET_CUR */
	peer_set_alt(p, 1, 0);
	assert_int_equal(p->alt_status, usb_redir_success);
	assert_int_equal(peer_control(p, 0xa1, UVC_GET_DEF, 0x0100, 1, 34, NULL,
				      probe), 34);
	assert_int_equal(peer_control(p, 0x21, UVC_SET_CUR, 0x0100, 1, 34, probe,
				      NULL), 34);
	assert_int_equal(peer_control(p, 0xa1, UVC_GET_CUR, 0x0100, 1, 34, NULL,
				      in), 34);
	assert_memory_equal(in, probe, 34);
	/* autosuspend resume reads the device status */
	assert_int_equal(peer_control(p, 0x80, 0, 0, 0, 2, NULL, in), 2);
	/* a STALL carries the reason in the request error code */
	assert_int_equal(peer_control(p, 0xa1, UVC_GET_CUR, 0x1f00, 0x0200, 2,
				      NULL, in), -1);
	assert_int_equal(peer_control(p, 0xa1, UVC_GET_CUR, 0x0200, 0x0000, 1,
				      NULL, in), 1);
	assert_int_equal(in[0], UVC_ERR_INVALID_CONTROL);
	assert_int_equal(p->dev->c.control_stalls, 1);
	peer_free(p);
}

static void test_every_request_is_answered(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p = attach(&cfg);
	uint8_t in[4096], out[64] = { 0 };
	uint64_t seed = 12345;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint8_t type = (uint8_t)(seed >> 56);
		uint8_t req = (uint8_t)(seed >> 48);
		uint16_t value = (uint16_t)(seed >> 32);
		uint16_t index = (uint16_t)(seed >> 16);
		uint16_t len = (uint16_t)((seed >> 8) % 64);

		if (i % 3 == 0)         /* bias towards UVC class requests */
			type = (type & 0x80) | 0x21;
		if (i % 5 == 0)
			index &= 0x07ff;
		int n = peer_control(p, type, req, value, index, len,
				     (type & 0x80) ? NULL : out, in);
		assert_int_not_equal(n, -2);    /* never silent */
		if (n >= 0 && (type & 0x80))
			assert_true(n <= len);
	}
	assert_int_equal(p->dev->c.control_requests, 3000);
	peer_free(p);
}

static void flood_for(struct peer *p, double seconds)
{
	double t0 = p->now;

	for (int ms = 1; ms <= (int)(seconds * 1000); ms++)
		peer_advance(p, t0 + ms / 1000.0);
}

static void test_flood_after_start(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p = attach(&cfg);

	(void)state;
	peer_set_configuration(p, 1);
	flood_for(p, 0.05);
	assert_int_equal(p->n_irq, 0);          /* nothing before the start */

	peer_start_interrupt(p, CAM_EP_VIDEO);
	assert_int_equal(p->irq_recv_status, usb_redir_inval);
	peer_start_interrupt(p, CAM_EP_STATUS);
	assert_int_equal(p->irq_recv_status, usb_redir_success);
	flood_for(p, 0.1);
	assert_true(p->n_irq >= 790 && p->n_irq <= 801);
	for (size_t i = 0; i < p->n_irq; i++) {
		const struct peer_irq *q = &p->irq[i];

		assert_int_equal(q->ep, CAM_EP_STATUS);
		assert_int_equal(q->status, usb_redir_success);
		assert_true(q->len >= 6 && q->len < CAM_EP_STATUS_MAXPACKET);
		assert_int_equal(q->data[0], 1);
		assert_non_null(cam_find_ctrl(q->data[1], q->data[3]));
	}
	assert_int_equal(p->dev->flood.st.sent, p->n_irq);

	/* GET_CUR agrees with the last value event of that control */
	const struct peer_irq *last = &p->irq[p->n_irq - 1];
	const struct ctrl_def *c = cam_find_ctrl(last->data[1], last->data[3]);
	uint8_t in[16];
	if (c->info & 1) {
		assert_int_equal(peer_control(p, 0xa1, UVC_GET_CUR,
				 (uint16_t)(c->selector << 8),
				 (uint16_t)(c->unit << 8), c->len, NULL, in),
				 c->len);
		assert_memory_equal(in, &last->data[5], c->len);
	}

	peer_stop_interrupt(p, CAM_EP_STATUS);
	assert_int_equal(p->irq_recv_status, usb_redir_success);
	size_t n = p->n_irq;
	flood_for(p, 0.05);
	assert_int_equal(p->n_irq, n);
	peer_free(p);
}

static void test_count_limit(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p;

	(void)state;
	cfg.flood.pattern = PATTERN_MIXED;
	cfg.flood.count = 123;
	p = attach(&cfg);
	peer_start_interrupt(p, CAM_EP_STATUS);
	flood_for(p, 0.1);
	assert_int_equal(p->n_irq, 123);
	assert_true(fake_dev_done(p->dev));
	peer_free(p);
}

static void test_hotplug_under_flood(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p;

	(void)state;
	cfg.hotplug_period = 1.0;
	cfg.hotplug_off = 0.3;
	p = attach(&cfg);
	/* no cycles before the guest first starts the status endpoint */
	flood_for(p, 1.5);
	assert_int_equal(p->disconnects, 0);
	peer_start_interrupt(p, CAM_EP_STATUS);
	flood_for(p, 0.5);
	size_t before = p->n_irq;
	assert_true(before > 3000);
	flood_for(p, 0.6);                      /* crosses t = 1.0 */
	assert_int_equal(p->disconnects, 1);
	assert_int_equal(p->connects, 1);
	size_t at_disconnect = p->n_irq;
	flood_for(p, 0.15);                     /* still unplugged */
	assert_int_equal(p->n_irq, at_disconnect);
	int infos = p->interface_infos;
	flood_for(p, 0.1);                      /* plugged back */
	assert_int_equal(p->connects, 2);
	assert_int_equal(p->interface_infos, infos + 1);
	/* a new guest-side start is needed after a replug */
	flood_for(p, 0.1);
	assert_int_equal(p->n_irq, at_disconnect);
	peer_start_interrupt(p, CAM_EP_STATUS);
	flood_for(p, 0.1);
	assert_true(p->n_irq > at_disconnect + 700);
	flood_for(p, 2.0);
	assert_true(p->disconnects >= 2);
	assert_int_equal(p->dev->c.hotplug_cycles, p->connects - 1);
	peer_free(p);
}

static void test_alt_settings_and_refusals(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p = attach(&cfg);
	struct usb_redir_bulk_packet_header bh = { .endpoint = 0x82, .length = 4 };
	struct usb_redir_interrupt_packet_header ih = { .endpoint = 0x02,
							.length = 4 };
	uint8_t data[4] = { 1, 2, 3, 4 };

	(void)state;
	peer_set_alt(p, CAM_IF_STREAMING, 2);
	assert_int_equal(p->alt_status, usb_redir_success);
	assert_int_equal(p->ep.type[EP2I(CAM_EP_VIDEO)], usb_redir_type_iso);
	assert_int_equal(p->ep.max_packet_size[EP2I(CAM_EP_VIDEO)], 512);
	/* the interval QEMU is told is the descriptor's */
	assert_int_equal(p->ep.interval[EP2I(CAM_EP_VIDEO)], CAM_EP_VIDEO_INTERVAL);
	peer_set_alt(p, CAM_IF_STREAMING, 9);
	assert_int_equal(p->alt_status, usb_redir_inval);
	assert_int_equal(p->alt_value, 2);

	struct usb_redir_start_iso_stream_header is = { CAM_EP_VIDEO, 8, 4 };
	usbredirparser_send_start_iso_stream(p->parser, 0, &is);
	peer_pump(p);
	assert_int_equal(p->iso_status, usb_redir_success);

	/* a bulk IN and an interrupt OUT transfer on endpoints the camera
	 * does not have: refused with a status, not dropped */
	int other = p->other_replies;
	size_t irqs = p->n_irq;
	usbredirparser_send_bulk_packet(p->parser, 5, &bh, NULL, 0);
	usbredirparser_send_interrupt_packet(p->parser, 6, &ih, data, 4);
	usbredirparser_send_cancel_data_packet(p->parser, 7);
	peer_pump(p);
	assert_int_equal(p->other_replies, other + 1);
	assert_int_equal(p->n_irq, irqs + 1);
	assert_int_equal(p->irq[irqs].ep, 0x02);
	assert_int_equal(p->irq[irqs].status, usb_redir_inval);
	assert_int_equal(p->dev->c.cancels, 1);
	assert_int_equal(p->dev->c.unsupported, 2);
	peer_free(p);
}

static void test_garbage_then_recovery(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p = attach(&cfg);
	/* type 999, 64-bit id, 4 bytes of payload: skipped by the parser */
	const uint8_t junk[] = { 0xe7, 0x03, 0, 0, 4, 0, 0, 0,
				 1, 0, 0, 0, 0, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef };
	/* a control packet whose header length is too short */
	const uint8_t bad_ctrl[] = { 100, 0, 0, 0, 2, 0, 0, 0,
				     2, 0, 0, 0, 0, 0, 0, 0, 0x80, 6 };
	uint8_t in[64];

	(void)state;
	peer_inject(p, junk, sizeof(junk));
	peer_inject(p, bad_ctrl, sizeof(bad_ctrl));
	assert_true(p->dev->c.parse_errors >= 1);
	assert_int_equal(peer_control(p, 0x80, 6, 0x0100, 0, 18, NULL, in), 18);
	peer_free(p);
}

static void test_peer_close_is_reported(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p = attach(&cfg);

	(void)state;
	p->to_dev.closed = 1;
	assert_int_equal(fake_dev_read(p->dev, p->now), -1);
	peer_free(p);
}

static void test_json_line(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	struct peer *p;
	char *buf = NULL;
	size_t size = 0;
	FILE *m;

	(void)state;
	cfg.flood.pattern = PATTERN_BUTTON;
	p = attach(&cfg);
	peer_start_interrupt(p, CAM_EP_STATUS);
	flood_for(p, 0.01);
	size_t sent = p->n_irq;
	m = open_memstream(&buf, &size);
	assert_non_null(m);
	fake_dev_json(p->dev, m, "exit", "sigterm", p->now);
	fclose(m);
	char expect[64];
	snprintf(expect, sizeof(expect), "\"sent\":%zu,", sent);
	assert_non_null(strstr(buf, "{\"version\":1,"));
	assert_non_null(strstr(buf, expect));
	assert_non_null(strstr(buf, "\"reason\":\"sigterm\""));
	assert_non_null(strstr(buf, "\"pattern\":\"button\""));
	assert_non_null(strstr(buf, "\"peer_version\":\"test usb-guest\""));
	/* exactly one line */
	assert_ptr_equal(strchr(buf, '\n'), buf + size - 1);
	free(buf);
	peer_free(p);
}

/* ---- --profile: the device a profile describes ------------------------------ */

struct pdev {
	char *path;
	struct profile prof;            /* the same profile, parsed here */
	struct peer *p;
};

static void pdev_attach(struct pdev *x, const char *text)
{
	struct fake_cfg cfg = peer_default_cfg();

	x->path = fx_tempfile(text);
	fx_parse(text, &x->prof);
	cfg.profile = x->path;
	x->p = attach(&cfg);
	assert_true(x->p->dev->use_profile);
}

static void pdev_free(struct pdev *x)
{
	peer_free(x->p);
	profile_free(&x->prof);
	unlink(x->path);
	free(x->path);
}

static void test_profile_connect_and_enumerate(void **state)
{
	struct pdev x;
	struct peer *p;
	uint8_t in[4096];

	(void)state;
	pdev_attach(&x, fx_loop);
	p = x.p;
	/* the profile's speed and identity, interface and endpoint info first */
	assert_true(p->caps_ok);
	assert_int_equal(p->iface_before_connect, 1);
	assert_int_equal(p->ep_before_connect, 1);
	assert_int_equal(p->connect.speed, usb_redir_speed_full);
	assert_int_equal(p->connect.vendor_id, 0x046d);
	assert_int_equal(p->connect.product_id, 0xc03c);
	assert_int_equal(p->connect.device_version_bcd, 0x0210);
	assert_int_equal(p->connect.device_class, 0);
	assert_int_equal(p->iface.interface_count, 2);
	assert_int_equal(p->iface.interface[0], 0);
	assert_int_equal(p->iface.interface_class[0], 0x03);
	assert_int_equal(p->iface.interface_subclass[0], 0x01);
	assert_int_equal(p->iface.interface_protocol[0], 0x02);
	assert_int_equal(p->iface.interface_class[1], 0xff);
	assert_int_equal(p->ep.max_packet_size[EP2I(0x00)], 8);
	assert_int_equal(p->ep.type[EP2I(0x81)], usb_redir_type_interrupt);
	assert_int_equal(p->ep.interval[EP2I(0x81)], 10);
	assert_int_equal(p->ep.max_packet_size[EP2I(0x81)], 8);
	assert_int_equal(p->ep.interface[EP2I(0x81)], 0);
	assert_int_equal(p->ep.type[EP2I(0x82)], usb_redir_type_bulk);
	assert_int_equal(p->ep.type[EP2I(0x02)], usb_redir_type_bulk);
	assert_int_equal(p->ep.interface[EP2I(0x02)], 1);
	assert_int_equal(p->ep.max_packet_size[EP2I(0x02)], 64);
	assert_int_equal(p->ep.type[EP2I(0x83)], usb_redir_type_invalid);

	/* GET_DESCRIPTOR over usbredir, from the profile */
	assert_int_equal(peer_control(p, 0x80, 6, 0x0100, 0, 64, NULL, in), 18);
	assert_memory_equal(in, x.prof.device, 18);
	assert_int_equal(peer_control(p, 0x80, 6, 0x0200, 0, 9, NULL, in), 9);
	assert_int_equal(peer_control(p, 0x80, 6, 0x0200, 0, 0x39, NULL, in), 0x39);
	assert_memory_equal(in, x.prof.configs[0].data, 0x39);
	assert_int_equal(peer_control(p, 0x80, 6, 0x0302, 0x0409, 255, NULL, in), 22);
	assert_memory_equal(in + 2, "L\0o\0o\0p\0 \0M\0", 12);
	assert_int_equal(peer_control(p, 0x80, 6, 0x0600, 0, 10, NULL, in), -1);
	assert_int_equal(peer_control(p, 0x81, 6, 0x2200, 0, 0x40, NULL, in), 4);
	assert_memory_equal(in, "\x05\x01\x09\x02", 4);

	/* SET_CONFIGURATION as a usbredir message */
	int eps = p->ep_infos;
	peer_set_configuration(p, 1);
	assert_int_equal(p->config_status, usb_redir_success);
	assert_int_equal(p->config_value, 1);
	assert_int_equal(p->ep_infos, eps + 1);
	peer_set_configuration(p, 2);
	assert_int_equal(p->config_status, usb_redir_stall);
	assert_int_equal(p->config_value, 1);
	/* class requests from the rules: SET_IDLE acknowledged, others stall */
	assert_int_equal(peer_control(p, 0x21, 0x0a, 0, 0, 0, NULL, NULL), 0);
	assert_int_equal(peer_control(p, 0xa1, 0x01, 0x0100, 0, 8, NULL, in), -1);
	peer_set_alt(p, 0, 1);
	assert_int_equal(p->alt_status, usb_redir_inval);
	peer_set_alt(p, 1, 0);
	assert_int_equal(p->alt_status, usb_redir_success);
	assert_int_equal(p->dev->c.class_set, 1);
	assert_int_equal(p->dev->c.control_stalls, 2);
	pdev_free(&x);
}

static void test_profile_interrupt_replay(void **state)
{
	struct pdev x;
	struct peer *p;
	const struct profile_interrupt *in;

	(void)state;
	pdev_attach(&x, fx_loop);
	p = x.p;
	in = &x.prof.interrupts[0];
	assert_int_equal(in->n_packets, 3);
	peer_set_configuration(p, 1);
	flood_for(p, 0.05);
	assert_int_equal(p->n_irq, 0);                  /* nothing before the start */

	/* an endpoint the profile lacks, a bulk one: refused */
	peer_start_interrupt(p, 0x83);
	assert_int_equal(p->irq_recv_status, usb_redir_inval);
	peer_start_interrupt(p, 0x82);
	assert_int_equal(p->irq_recv_status, usb_redir_inval);
	assert_int_equal(p->dev->c.bad_endpoint, 2);
	peer_start_interrupt(p, 0x81);
	assert_int_equal(p->irq_recv_status, usb_redir_success);
	/* full speed, bInterval 10: 100 packets/s */
	flood_for(p, 0.2);
	assert_true(p->n_irq >= 18 && p->n_irq <= 21);
	for (size_t i = 0; i < p->n_irq; i++) {
		const struct peer_irq *q = &p->irq[i];
		const struct profile_blob *b = &in->packets[i % 3];

		assert_int_equal(q->ep, 0x81);
		assert_int_equal(q->status, usb_redir_success);
		assert_int_equal(q->len, b->len);
		assert_memory_equal(q->data, b->data, b->len);
	}
	assert_int_equal(p->dev->gens[0].fl.st.sent, p->n_irq);

	peer_stop_interrupt(p, 0x81);
	assert_int_equal(p->irq_recv_status, usb_redir_success);
	size_t n = p->n_irq;
	flood_for(p, 0.1);
	assert_int_equal(p->n_irq, n);
	pdev_free(&x);
}

static void test_profile_bulk_hold_and_cancel(void **state)
{
	struct usb_redir_bulk_packet_header in_h = { .endpoint = 0x82, .length = 64 };
	struct usb_redir_bulk_packet_header out_h = { .endpoint = 0x02, .length = 4 };
	struct usb_redir_bulk_packet_header bad_h = { .endpoint = 0x83, .length = 8 };
	uint8_t data[4] = { 1, 2, 3, 4 };
	struct pdev x;
	struct peer *p;

	(void)state;
	pdev_attach(&x, fx_loop);
	p = x.p;
	/* a bulk IN read is held: no answer */
	usbredirparser_send_bulk_packet(p->parser, 500, &in_h, NULL, 0);
	usbredirparser_send_bulk_packet(p->parser, 501, &in_h, NULL, 0);
	peer_pump(p);
	assert_int_equal(p->bulk_replies, 0);
	assert_int_equal(p->dev->c.bulk_in_held, 2);
	assert_int_equal(p->dev->n_held, 2);
	/* bulk OUT data is taken at once */
	usbredirparser_send_bulk_packet(p->parser, 502, &out_h, data, 4);
	peer_pump(p);
	assert_int_equal(p->bulk_replies, 1);
	assert_int_equal(p->bulk_id, 502);
	assert_int_equal(p->bulk_status, usb_redir_success);
	assert_int_equal(p->dev->c.bulk_out, 1);
	assert_int_equal(p->dev->c.bulk_out_bytes, 4);
	/* an endpoint the profile lacks: refused */
	usbredirparser_send_bulk_packet(p->parser, 503, &bad_h, NULL, 0);
	peer_pump(p);
	assert_int_equal(p->bulk_replies, 2);
	assert_int_equal(p->bulk_id, 503);
	assert_int_equal(p->bulk_status, usb_redir_inval);
	/* the held read comes back cancelled, once */
	usbredirparser_send_cancel_data_packet(p->parser, 500);
	peer_pump(p);
	assert_int_equal(p->bulk_replies, 3);
	assert_int_equal(p->bulk_id, 500);
	assert_int_equal(p->bulk_status, usb_redir_cancelled);
	assert_int_equal(p->bulk_len, 0);
	assert_int_equal(p->dev->n_held, 1);
	usbredirparser_send_cancel_data_packet(p->parser, 500);
	peer_pump(p);
	assert_int_equal(p->bulk_replies, 3);
	assert_int_equal(p->dev->c.cancels, 2);
	usbredirparser_send_cancel_data_packet(p->parser, 501);
	peer_pump(p);
	assert_int_equal(p->bulk_replies, 4);
	assert_int_equal(p->bulk_id, 501);
	assert_int_equal(p->bulk_status, usb_redir_cancelled);
	assert_int_equal(p->dev->n_held, 0);
	pdev_free(&x);
}

/* --bulk-in: the held reads are answered, oldest first, one packet each
 * (at most the endpoint's wMaxPacketSize), random bytes or zeros */
static void bulk_flood(int mode)
{
	struct usb_redir_bulk_packet_header in_h = { .endpoint = 0x82, .length = 64 };
	struct usb_redir_bulk_packet_header big_h = { .endpoint = 0x82, .length = 4096 };
	struct fake_cfg cfg = peer_default_cfg();
	struct pdev x;
	struct peer *p;

	x.path = fx_tempfile(fx_loop);
	fx_parse(fx_loop, &x.prof);
	cfg.profile = x.path;
	cfg.bulk_in = mode;
	x.p = p = attach(&cfg);
	usbredirparser_send_bulk_packet(p->parser, 600, &in_h, NULL, 0);
	usbredirparser_send_bulk_packet(p->parser, 601, &big_h, NULL, 0);
	peer_pump(p);
	flood_for(p, 0.01);
	assert_int_equal(p->bulk_replies, 2);
	assert_int_equal(p->bulk_id, 601);                 /* the oldest first */
	assert_int_equal(p->bulk_status, usb_redir_success);
	assert_int_equal(p->bulk_len, 64);                 /* wMaxPacketSize, not 4096 */
	if (mode == 1)
		assert_true(p->bulk_nonzero > 48);
	else
		assert_int_equal(p->bulk_nonzero, 0);
	assert_int_equal(p->dev->c.bulk_in_sent, 2);
	assert_int_equal(p->dev->c.bulk_in_bytes, 128);
	assert_int_equal(p->dev->n_held, 0);
	/* a read the guest cancels before its answer comes back cancelled */
	usbredirparser_send_bulk_packet(p->parser, 602, &in_h, NULL, 0);
	usbredirparser_send_cancel_data_packet(p->parser, 602);
	peer_pump(p);
	flood_for(p, 0.01);
	assert_int_equal(p->bulk_replies, 3);
	assert_int_equal(p->bulk_status, usb_redir_cancelled);
	assert_int_equal(p->dev->c.bulk_in_sent, 2);
	pdev_free(&x);
}

static void test_profile_bulk_in_random(void **state)
{
	(void)state;
	bulk_flood(1);
}

static void test_profile_bulk_in_zero(void **state)
{
	(void)state;
	bulk_flood(2);
}

static void test_profile_json(void **state)
{
	struct usb_redir_bulk_packet_header in_h = { .endpoint = 0x82, .length = 64 };
	struct pdev x;
	struct peer *p;
	char *buf = NULL, expect[256];
	size_t size = 0;
	FILE *m;

	(void)state;
	pdev_attach(&x, fx_loop);
	p = x.p;
	peer_start_interrupt(p, 0x81);
	flood_for(p, 0.1);
	assert_true(p->n_irq > 0);
	usbredirparser_send_bulk_packet(p->parser, 9, &in_h, NULL, 0);
	peer_pump(p);
	m = open_memstream(&buf, &size);
	assert_non_null(m);
	fake_dev_json(p->dev, m, "exit", "sigterm", p->now);
	fclose(m);
	assert_non_null(strstr(buf, "\"profile\":\"loop-hid\""));
	assert_non_null(strstr(buf, "\"bulk_in_held\":1,"));
	snprintf(expect, sizeof(expect), "\"endpoints\":[{\"endpoint\":129,\"pattern\":"
		 "\"packet\",\"sent\":%zu,", p->n_irq);
	if (!strstr(buf, expect))
		fail_msg("no '%s' in %s", expect, buf);
	assert_non_null(strstr(buf, "\"ceiling\":100,\"running\":true}]"));
	snprintf(expect, sizeof(expect), "\"sent\":%zu,\"sent_bytes\"", p->n_irq);
	assert_non_null(strstr(buf, expect));
	assert_ptr_equal(strchr(buf, '\n'), buf + size - 1);
	free(buf);
	pdev_free(&x);
}

/* The K120 profile (pattern hid): whole input reports over usbredir, the
 * boot keyboard's 8 bytes as full-size packets, each followed by its
 * all-zero release. */
static void test_profile_hid_reports(void **state)
{
	struct fake_cfg cfg = peer_default_cfg();
	char *path = fx_path("profiles/logitech-k120.profile");
	struct peer *p;
	size_t n81 = 0, n82 = 0;

	(void)state;
	cfg.profile = path;
	p = attach(&cfg);
	assert_true(p->dev->use_profile);
	assert_int_equal(p->dev->n_gens, 2);
	peer_set_configuration(p, 1);
	peer_start_interrupt(p, 0x81);
	assert_int_equal(p->irq_recv_status, usb_redir_success);
	peer_start_interrupt(p, 0x82);
	assert_int_equal(p->irq_recv_status, usb_redir_success);
	/* low speed: bInterval 10 (100/s) and 255 (about 4/s) */
	flood_for(p, 0.6);
	for (size_t i = 0; i < p->n_irq; i++) {
		const struct peer_irq *q = &p->irq[i];

		assert_int_equal(q->status, usb_redir_success);
		if (q->ep == 0x81) {
			assert_int_equal(q->len, 8);
			if (n81++ % 2)
				assert_memory_equal(q->data, "\0\0\0\0\0\0\0\0", 8);
		} else {
			static const uint8_t lens[] = { 4, 2, 3, 4 };

			assert_int_equal(q->ep, 0x82);
			assert_int_equal(q->data[0], n82 / 2 % 4 + 1);
			assert_int_equal(q->len, lens[n82 / 2 % 4]);
			n82++;
		}
	}
	assert_true(n81 >= 50);
	assert_true(n82 >= 2);
	peer_free(p);
	free(path);
}

static int no_read(void *ctx, uint8_t *data, int count)
{
	(void)ctx;
	(void)data;
	(void)count;
	return 0;
}

static int no_write(void *ctx, uint8_t *data, int count)
{
	(void)ctx;
	(void)data;
	return count;
}

static void test_profile_bad_file(void **state)
{
	/* line 5: a wValue out of range */
	static const char bad[] =
		"dmaharness-usb-profile 1\n"
		"name bad\n"
		"speed full\n"
		"# a comment\n"
		"get 0xa1 0x01 0x12345 0 = 00\n";
	struct fake_cfg cfg = peer_default_cfg();
	struct fake_io io = { NULL, no_read, no_write };
	char err[512], want[300];
	char *path = fx_tempfile(bad);

	(void)state;
	cfg.profile = path;
	assert_null(fake_dev_new(&cfg, &io, 0, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:5: get", path);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("error '%s' does not start with '%s'", err, want);
	unlink(path);
	/* a missing file: named, and why */
	assert_null(fake_dev_new(&cfg, &io, 0, err, sizeof(err)));
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "No such file"));
	free(path);
}

TEST_LIST(loopback_tests,
	cmocka_unit_test(test_connect_sequence),
	cmocka_unit_test(test_enumeration_and_probe),
	cmocka_unit_test(test_every_request_is_answered),
	cmocka_unit_test(test_flood_after_start),
	cmocka_unit_test(test_count_limit),
	cmocka_unit_test(test_hotplug_under_flood),
	cmocka_unit_test(test_alt_settings_and_refusals),
	cmocka_unit_test(test_garbage_then_recovery),
	cmocka_unit_test(test_peer_close_is_reported),
	cmocka_unit_test(test_json_line),
	cmocka_unit_test(test_profile_connect_and_enumerate),
	cmocka_unit_test(test_profile_interrupt_replay),
	cmocka_unit_test(test_profile_bulk_hold_and_cancel),
	cmocka_unit_test(test_profile_bulk_in_random),
	cmocka_unit_test(test_profile_bulk_in_zero),
	cmocka_unit_test(test_profile_json),
	cmocka_unit_test(test_profile_hid_reports),
	cmocka_unit_test(test_profile_bad_file),
)
