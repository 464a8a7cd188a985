/* SPDX-License-Identifier: MIT */
/*
 * In-process usb-guest: a libusbredirparser in usb-guest mode (what QEMU's
 * usb-redir runs) wired to a fake_dev through memory pipes.
 */
#ifndef FAKE_UVC_PEER_H
#define FAKE_UVC_PEER_H

#include <stddef.h>
#include <stdint.h>

#include <usbredirparser.h>

#include "device.h"

struct pipe_buf {
	uint8_t *data;
	size_t len, cap;
	int closed;             /* reader sees end of stream when drained */
};

#define PEER_MAX_IRQ 65536

struct peer_irq {
	uint8_t ep, status;
	uint8_t len;
	uint8_t data[64];
};

struct peer {
	struct usbredirparser *parser;
	struct fake_dev *dev;
	struct pipe_buf to_dev, to_guest;
	double now;

	int hello;
	int connects, disconnects, interface_infos, ep_infos;
	struct usb_redir_device_connect_header connect;
	struct usb_redir_interface_info_header iface;
	struct usb_redir_ep_info_header ep;
	uint64_t caps_ok;
	int iface_before_connect, ep_before_connect;

	/* last status replies */
	int config_status, config_value;
	int alt_status, alt_value;
	int irq_recv_status;
	int iso_status;

	/* control replies, by the id sent */
	uint64_t ctrl_id;
	int ctrl_done;
	int ctrl_status;
	int ctrl_len;
	uint8_t ctrl_data[4096];

	/* bulk replies: how many, and the last one */
	int bulk_replies;
	uint64_t bulk_id;
	int bulk_status;
	int bulk_len;
	unsigned bulk_nonzero;        /* non-zero bytes of the last bulk data */

	/* interrupt packets received */
	size_t n_irq;
	struct peer_irq *irq;
	int other_replies;
};

struct peer *peer_new(const struct fake_cfg *cfg);
void peer_free(struct peer *p);

/* Move bytes both ways until nothing moves. */
void peer_pump(struct peer *p);

/* Advance the clock to @now, run the device's timers and pump. */
void peer_advance(struct peer *p, double now);

/* Control transfer; returns bytes of data received (IN) or sent (OUT),
 * -1 on STALL, -2 if no reply came. */
int peer_control(struct peer *p, uint8_t type, uint8_t req, uint16_t value,
		 uint16_t index, uint16_t length, const uint8_t *out,
		 uint8_t *in);

void peer_set_configuration(struct peer *p, uint8_t config);
void peer_set_alt(struct peer *p, uint8_t intf, uint8_t alt);
void peer_start_interrupt(struct peer *p, uint8_t ep);
void peer_stop_interrupt(struct peer *p, uint8_t ep);

/* Raw bytes into the device's input, as if from the peer. */
void peer_inject(struct peer *p, const void *data, size_t len);

struct fake_cfg peer_default_cfg(void);

#endif
