// SPDX-License-Identifier: MIT
/* In-process usb-guest peer for the loopback tests. */
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void buf_put(struct pipe_buf *b, const uint8_t *data, size_t len)
{
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + len)
			cap *= 2;
		b->data = realloc(b->data, cap);
		if (!b->data)
			abort();
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

static int buf_get(struct pipe_buf *b, uint8_t *data, int count)
{
	size_t n = b->len < (size_t)count ? b->len : (size_t)count;

	if (n == 0)
		return b->closed ? -1 : 0;
	memcpy(data, b->data, n);
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
	return (int)n;
}

/* Device side of the pipes. */
static int dev_read(void *ctx, uint8_t *data, int count)
{
	struct peer *p = ctx;

	return buf_get(&p->to_dev, data, count);
}

static int dev_write(void *ctx, uint8_t *data, int count)
{
	struct peer *p = ctx;

	buf_put(&p->to_guest, data, (size_t)count);
	return count;
}

/* Guest side. */
static int g_read(void *priv, uint8_t *data, int count)
{
	struct peer *p = priv;

	return buf_get(&p->to_guest, data, count);
}

static int g_write(void *priv, uint8_t *data, int count)
{
	struct peer *p = priv;

	buf_put(&p->to_dev, data, (size_t)count);
	return count;
}

static void g_log(void *priv, int level, const char *msg)
{
	(void)priv;
	if (getenv("PEER_LOG"))
		fprintf(stderr, "peer usbredirparser[%d]: %s\n", level, msg);
}

static void g_hello(void *priv, struct usb_redir_hello_header *h)
{
	struct peer *p = priv;

	(void)h;
	p->hello++;
}

static void g_connect(void *priv, struct usb_redir_device_connect_header *h)
{
	struct peer *p = priv;

	p->connects++;
	p->connect = *h;
	p->iface_before_connect = p->interface_infos;
	p->ep_before_connect = p->ep_infos;
	/* What QEMU checks before attaching to an xHCI port. */
	p->caps_ok =
		usbredirparser_peer_has_cap(p->parser,
					    usb_redir_cap_ep_info_max_packet_size) &&
		usbredirparser_peer_has_cap(p->parser,
					    usb_redir_cap_32bits_bulk_length) &&
		usbredirparser_peer_has_cap(p->parser, usb_redir_cap_64bits_ids);
}

static void g_disconnect(void *priv)
{
	struct peer *p = priv;

	p->disconnects++;
}

static void g_interface_info(void *priv,
			     struct usb_redir_interface_info_header *h)
{
	struct peer *p = priv;

	p->interface_infos++;
	p->iface = *h;
}

static void g_ep_info(void *priv, struct usb_redir_ep_info_header *h)
{
	struct peer *p = priv;

	p->ep_infos++;
	p->ep = *h;
}

static void g_config_status(void *priv, uint64_t id,
			    struct usb_redir_configuration_status_header *h)
{
	struct peer *p = priv;

	(void)id;
	p->config_status = h->status;
	p->config_value = h->configuration;
}

static void g_alt_status(void *priv, uint64_t id,
			 struct usb_redir_alt_setting_status_header *h)
{
	struct peer *p = priv;

	(void)id;
	p->alt_status = h->status;
	p->alt_value = h->alt;
}

static void g_iso_status(void *priv, uint64_t id,
			 struct usb_redir_iso_stream_status_header *h)
{
	struct peer *p = priv;

	(void)id;
	p->iso_status = h->status;
}

static void g_irq_status(void *priv, uint64_t id,
			 struct usb_redir_interrupt_receiving_status_header *h)
{
	struct peer *p = priv;

	(void)id;
	p->irq_recv_status = h->status;
}

static void g_bulk_streams_status(void *priv, uint64_t id,
				  struct usb_redir_bulk_streams_status_header *h)
{
	struct peer *p = priv;

	(void)id;
	(void)h;
	p->other_replies++;
}

static void g_bulk_receiving_status(void *priv, uint64_t id,
	struct usb_redir_bulk_receiving_status_header *h)
{
	struct peer *p = priv;

	(void)id;
	(void)h;
	p->other_replies++;
}

static void g_control(void *priv, uint64_t id,
		      struct usb_redir_control_packet_header *h,
		      uint8_t *data, int data_len)
{
	struct peer *p = priv;

	if (id == p->ctrl_id) {
		p->ctrl_done = 1;
		p->ctrl_status = h->status;
		p->ctrl_len = h->length;
		if (data_len > 0)
			memcpy(p->ctrl_data, data,
			       data_len > 4096 ? 4096 : (size_t)data_len);
	}
	usbredirparser_free_packet_data(p->parser, data);
}

static void g_bulk(void *priv, uint64_t id,
		   struct usb_redir_bulk_packet_header *h,
		   uint8_t *data, int data_len)
{
	struct peer *p = priv;

	p->other_replies++;
	p->bulk_replies++;
	p->bulk_id = id;
	p->bulk_status = h->status;
	p->bulk_len = data_len;
	p->bulk_nonzero = 0;
	for (int i = 0; i < data_len; i++)
		p->bulk_nonzero += data[i] != 0;
	usbredirparser_free_packet_data(p->parser, data);
}

static void g_iso(void *priv, uint64_t id,
		  struct usb_redir_iso_packet_header *h,
		  uint8_t *data, int data_len)
{
	struct peer *p = priv;

	(void)id;
	(void)h;
	(void)data_len;
	p->other_replies++;
	usbredirparser_free_packet_data(p->parser, data);
}

static void g_interrupt(void *priv, uint64_t id,
			struct usb_redir_interrupt_packet_header *h,
			uint8_t *data, int data_len)
{
	struct peer *p = priv;

	(void)id;
	if (p->n_irq < PEER_MAX_IRQ) {
		struct peer_irq *q = &p->irq[p->n_irq++];

		q->ep = h->endpoint;
		q->status = h->status;
		q->len = (uint8_t)(data_len > 64 ? 64 : data_len);
		if (data_len > 0)
			memcpy(q->data, data, q->len);
	}
	usbredirparser_free_packet_data(p->parser, data);
}

struct fake_cfg peer_default_cfg(void)
{
	struct fake_cfg c;

	memset(&c, 0, sizeof(c));
	c.flood.pattern = PATTERN_CONTROL;
	c.flood.seed = 1;
	c.flood.window = 256;
	c.hotplug_off = 0.5;
	c.batch = 0.001;
	c.max_buffered = 1u << 20;
	c.verbose = 0;
	c.log = NULL;
	return c;
}

struct peer *peer_new(const struct fake_cfg *cfg)
{
	uint32_t caps[USB_REDIR_CAPS_SIZE] = { 0 };
	struct peer *p = calloc(1, sizeof(*p));
	struct fake_io io;
	char err[128];

	if (!p)
		abort();
	p->irq = calloc(PEER_MAX_IRQ, sizeof(*p->irq));
	if (!p->irq)
		abort();
	p->now = 1000.0;
	p->config_status = p->alt_status = p->irq_recv_status = -1;
	p->iso_status = -1;
	io.ctx = p;
	io.read = dev_read;
	io.write = dev_write;
	p->dev = fake_dev_new(cfg, &io, p->now, err, sizeof(err));
	if (!p->dev)
		abort();

	p->parser = usbredirparser_create();
	p->parser->priv = p;
	p->parser->log_func = g_log;
	p->parser->read_func = g_read;
	p->parser->write_func = g_write;
	p->parser->hello_func = g_hello;
	p->parser->device_connect_func = g_connect;
	p->parser->device_disconnect_func = g_disconnect;
	p->parser->interface_info_func = g_interface_info;
	p->parser->ep_info_func = g_ep_info;
	p->parser->configuration_status_func = g_config_status;
	p->parser->alt_setting_status_func = g_alt_status;
	p->parser->iso_stream_status_func = g_iso_status;
	p->parser->interrupt_receiving_status_func = g_irq_status;
	p->parser->bulk_streams_status_func = g_bulk_streams_status;
	p->parser->bulk_receiving_status_func = g_bulk_receiving_status;
	p->parser->control_packet_func = g_control;
	p->parser->bulk_packet_func = g_bulk;
	p->parser->iso_packet_func = g_iso;
	p->parser->interrupt_packet_func = g_interrupt;
	/* The caps QEMU 7.2 announces. */
	usbredirparser_caps_set_cap(caps, usb_redir_cap_connect_device_version);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_filter);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_ep_info_max_packet_size);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_64bits_ids);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_32bits_bulk_length);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_bulk_receiving);
	usbredirparser_init(p->parser, "test usb-guest", caps,
			    USB_REDIR_CAPS_SIZE, 0);
	peer_pump(p);
	return p;
}

void peer_free(struct peer *p)
{
	fake_dev_free(p->dev);
	usbredirparser_destroy(p->parser);
	free(p->to_dev.data);
	free(p->to_guest.data);
	free(p->irq);
	free(p);
}

void peer_pump(struct peer *p)
{
	for (int round = 0; round < 1000; round++) {
		size_t before = p->to_dev.len + p->to_guest.len;
		int moved = 0;

		if (usbredirparser_has_data_to_write(p->parser)) {
			usbredirparser_do_write(p->parser);
			moved = 1;
		}
		if (fake_dev_want_write(p->dev)) {
			fake_dev_write(p->dev);
			moved = 1;
		}
		if (p->to_guest.len) {
			usbredirparser_do_read(p->parser);
			moved = 1;
		}
		if (p->to_dev.len) {
			fake_dev_read(p->dev, p->now);
			moved = 1;
		}
		if (!moved && before == p->to_dev.len + p->to_guest.len)
			return;
	}
}

void peer_advance(struct peer *p, double now)
{
	p->now = now;
	fake_dev_tick(p->dev, now);
	peer_pump(p);
}

int peer_control(struct peer *p, uint8_t type, uint8_t req, uint16_t value,
		 uint16_t index, uint16_t length, const uint8_t *out,
		 uint8_t *in)
{
	struct usb_redir_control_packet_header h = {
		.endpoint = type & 0x80,
		.request = req,
		.requesttype = type,
		.value = value,
		.index = index,
		.length = length,
	};

	p->ctrl_id++;
	p->ctrl_done = 0;
	if (type & 0x80)
		usbredirparser_send_control_packet(p->parser, p->ctrl_id, &h,
						   NULL, 0);
	else
		usbredirparser_send_control_packet(p->parser, p->ctrl_id, &h,
						   (uint8_t *)out, length);
	peer_pump(p);
	if (!p->ctrl_done)
		return -2;
	if (p->ctrl_status != usb_redir_success)
		return -1;
	if (in && (type & 0x80))
		memcpy(in, p->ctrl_data, (size_t)p->ctrl_len);
	return p->ctrl_len;
}

void peer_set_configuration(struct peer *p, uint8_t config)
{
	struct usb_redir_set_configuration_header h = { config };

	p->config_status = -1;
	usbredirparser_send_set_configuration(p->parser, 77, &h);
	peer_pump(p);
}

void peer_set_alt(struct peer *p, uint8_t intf, uint8_t alt)
{
	struct usb_redir_set_alt_setting_header h = { intf, alt };

	p->alt_status = -1;
	usbredirparser_send_set_alt_setting(p->parser, 78, &h);
	peer_pump(p);
}

void peer_start_interrupt(struct peer *p, uint8_t ep)
{
	struct usb_redir_start_interrupt_receiving_header h = { ep };

	p->irq_recv_status = -1;
	usbredirparser_send_start_interrupt_receiving(p->parser, 0, &h);
	peer_pump(p);
}

void peer_stop_interrupt(struct peer *p, uint8_t ep)
{
	struct usb_redir_stop_interrupt_receiving_header h = { ep };

	p->irq_recv_status = -1;
	usbredirparser_send_stop_interrupt_receiving(p->parser, 0, &h);
	peer_pump(p);
}

void peer_inject(struct peer *p, const void *data, size_t len)
{
	buf_put(&p->to_dev, data, len);
	peer_pump(p);
}
