// SPDX-License-Identifier: MIT
/* The fake camera as a usbredir usb-host, on top of libusbredirparser. */
#include "device.h"

#include <stdarg.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include <usbredirparser.h>

#define EP2I(ep) ((((ep) & 0x80) >> 3) | ((ep) & 0x0f))

static void dev_log(const struct fake_dev *d, int level, const char *fmt, ...)
{
	va_list ap;

	if (!d->cfg.log || level > d->cfg.verbose)
		return;
	fprintf(d->cfg.log, "fake-uvc: ");
	va_start(ap, fmt);
	vfprintf(d->cfg.log, fmt, ap);
	va_end(ap);
	fputc('\n', d->cfg.log);
}

/* ---- usbredirparser plumbing --------------------------------------------- */

static void cb_log(void *priv, int level, const char *msg)
{
	struct fake_dev *d = priv;
	/* usbredirparser levels: 1 error, 2 warning, 3 info, 4 debug. */
	dev_log(d, level - 1, "usbredirparser: %s", msg);
}

static int cb_read(void *priv, uint8_t *data, int count)
{
	struct fake_dev *d = priv;

	return d->io.read(d->io.ctx, data, count);
}

static int cb_write(void *priv, uint8_t *data, int count)
{
	struct fake_dev *d = priv;

	return d->io.write(d->io.ctx, data, count);
}

/* ---- What the device tells the guest ------------------------------------- */

static void send_interface_info(struct fake_dev *d)
{
	struct usb_redir_interface_info_header ii;

	memset(&ii, 0, sizeof(ii));
	if (d->use_profile) {
		ii.interface_count = (uint32_t)d->pm.n_ifaces;
		for (size_t i = 0; i < d->pm.n_ifaces; i++) {
			ii.interface[i] = d->pm.ifaces[i].number;
			ii.interface_class[i] = d->pm.ifaces[i].klass;
			ii.interface_subclass[i] = d->pm.ifaces[i].subclass;
			ii.interface_protocol[i] = d->pm.ifaces[i].protocol;
		}
	} else if (d->cam.configuration) {
		ii.interface_count = CAM_NUM_INTERFACES;
		ii.interface[0] = CAM_IF_CONTROL;
		ii.interface_class[0] = UVC_CC_VIDEO;
		ii.interface_subclass[0] = UVC_SC_VIDEOCONTROL;
		ii.interface[1] = CAM_IF_STREAMING;
		ii.interface_class[1] = UVC_CC_VIDEO;
		ii.interface_subclass[1] = UVC_SC_VIDEOSTREAMING;
	}
	usbredirparser_send_interface_info(d->parser, &ii);
}

static void send_ep_info(struct fake_dev *d)
{
	struct usb_redir_ep_info_header ep;

	memset(&ep, 0, sizeof(ep));
	memset(ep.type, usb_redir_type_invalid, sizeof(ep.type));
	ep.type[EP2I(0x00)] = usb_redir_type_control;
	ep.type[EP2I(0x80)] = usb_redir_type_control;
	ep.max_packet_size[EP2I(0x00)] = CAM_EP0_MAXPACKET;
	ep.max_packet_size[EP2I(0x80)] = CAM_EP0_MAXPACKET;
	if (d->use_profile) {
		struct pm_ep eps[PM_MAX_EPS];
		size_t n = pm_endpoints(&d->pm, eps, PM_MAX_EPS);
		static const uint8_t types[4] = {
			usb_redir_type_control, usb_redir_type_iso,
			usb_redir_type_bulk, usb_redir_type_interrupt,
		};

		ep.max_packet_size[EP2I(0x00)] = d->prof.device[7];
		ep.max_packet_size[EP2I(0x80)] = d->prof.device[7];
		for (size_t k = 0; k < n; k++) {
			int i = EP2I(eps[k].addr);

			ep.type[i] = types[eps[k].type];
			ep.interval[i] = eps[k].interval;
			ep.interface[i] = eps[k].iface;
			ep.max_packet_size[i] = eps[k].maxpacket;
		}
	} else if (d->cam.configuration) {
		int i = EP2I(CAM_EP_STATUS);

		ep.type[i] = usb_redir_type_interrupt;
		ep.interval[i] = CAM_EP_STATUS_INTERVAL;
		ep.interface[i] = CAM_IF_CONTROL;
		ep.max_packet_size[i] = CAM_EP_STATUS_MAXPACKET;

		uint8_t alt = d->cam.alt[CAM_IF_STREAMING];
		if (alt) {
			i = EP2I(CAM_EP_VIDEO);
			ep.type[i] = usb_redir_type_iso;
			ep.interval[i] = CAM_EP_VIDEO_INTERVAL;
			ep.interface[i] = CAM_IF_STREAMING;
			ep.max_packet_size[i] = cam_vs_alt_maxpacket[alt];
		}
	}
	usbredirparser_send_ep_info(d->parser, &ep);
}

static void send_connect_profile(struct fake_dev *d)
{
	static const uint8_t speeds[] = {
		[PROFILE_SPEED_LOW] = usb_redir_speed_low,
		[PROFILE_SPEED_FULL] = usb_redir_speed_full,
		[PROFILE_SPEED_HIGH] = usb_redir_speed_high,
		[PROFILE_SPEED_SUPER] = usb_redir_speed_super,
	};
	const uint8_t *dd = d->prof.device;
	struct usb_redir_device_connect_header dc = {
		.speed = speeds[d->prof.speed],
		.device_class = dd[4],
		.device_subclass = dd[5],
		.device_protocol = dd[6],
		.vendor_id = (uint16_t)(dd[8] | dd[9] << 8),
		.product_id = (uint16_t)(dd[10] | dd[11] << 8),
		.device_version_bcd = (uint16_t)(dd[12] | dd[13] << 8),
	};

	/* configured by the host side, as usbredirhost presents a device */
	pm_init(&d->pm, &d->prof);
	if (d->prof.n_configs)
		pm_set_configuration(&d->pm, d->prof.configs[0].data[5]);
	send_interface_info(d);
	send_ep_info(d);
	usbredirparser_send_device_connect(d->parser, &dc);
	d->connected = 1;
	d->c.connects++;
	if (d->cfg.hotplug_period > 0 && d->n_gens && d->gens[0].fl.first_start >= 0)
		d->next_disconnect = d->now + d->cfg.hotplug_period;
	dev_log(d, 2, "device connected (%04x:%04x, %s speed, profile %s)",
		dc.vendor_id, dc.product_id, profile_speed_name(d->prof.speed), d->prof.name);
}

static void stop_all_floods(struct fake_dev *d)
{
	flood_stop(&d->flood, d->now);
	for (size_t i = 0; i < d->n_gens; i++)
		flood_stop(&d->gens[i].fl, d->now);
}

static void send_connect(struct fake_dev *d)
{
	if (d->use_profile) {
		send_connect_profile(d);
		return;
	}
	struct usb_redir_device_connect_header dc = {
		.speed = usb_redir_speed_high,
		.device_class = d->desc.device[4],
		.device_subclass = d->desc.device[5],
		.device_protocol = d->desc.device[6],
		.vendor_id = CAM_VENDOR_ID,
		.product_id = CAM_PRODUCT_ID,
		.device_version_bcd = CAM_BCD_DEVICE,
	};

	/* A freshly plugged camera, as usbredirhost presents one: configured
	 * by the host side, every interface in alternate setting 0. */
	cam_state_init(&d->cam, &d->desc);
	cam_set_configuration(&d->cam, CAM_CONFIG_VALUE);

	/* QEMU rejects a device_connect without interface info; ep_info must
	 * be there before the guest looks at endpoints. */
	send_interface_info(d);
	send_ep_info(d);
	usbredirparser_send_device_connect(d->parser, &dc);
	d->connected = 1;
	d->c.connects++;
	/* Hotplug cycles start with the flood (see start_interrupt_receiving);
	 * after that each replug schedules the next unplug. */
	if (d->cfg.hotplug_period > 0 && d->flood.first_start >= 0)
		d->next_disconnect = d->now + d->cfg.hotplug_period;
	dev_log(d, 2, "device connected (%04x:%04x, high speed)",
		CAM_VENDOR_ID, CAM_PRODUCT_ID);
}

static void send_disconnect(struct fake_dev *d)
{
	usbredirparser_send_device_disconnect(d->parser);
	d->connected = 0;
	d->c.disconnects++;
	/* QEMU resets its endpoint state without a stop message. */
	stop_all_floods(d);
	d->n_held = 0;          /* and forgets the transfers in flight */
	d->next_disconnect = -1;
	dev_log(d, 2, "device disconnected");
}

/* ---- Messages from the usb-guest ------------------------------------------ */

static void cb_hello(void *priv, struct usb_redir_hello_header *h)
{
	struct fake_dev *d = priv;

	memcpy(d->peer_version, h->version, sizeof(h->version));
	d->peer_version[sizeof(d->peer_version) - 1] = '\0';
	d->c.hellos++;
	dev_log(d, 2, "peer hello: \"%s\"", d->peer_version);
	if (d->peer_hello)
		return;
	d->peer_hello = 1;
	send_connect(d);
}

static void cb_reset(void *priv)
{
	struct fake_dev *d = priv;

	d->c.resets++;
	if (!d->use_profile)
		cam_state_reset(&d->cam);
}

static void cb_set_configuration(void *priv, uint64_t id,
				 struct usb_redir_set_configuration_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_configuration_status_header st = { 0 };

	d->c.set_configuration++;
	if ((d->use_profile ? pm_set_configuration(&d->pm, h->configuration) :
	     cam_set_configuration(&d->cam, h->configuration)) == 0) {
		st.status = usb_redir_success;
		if (d->use_profile)
			stop_all_floods(d);
		send_interface_info(d);
		send_ep_info(d);
	} else {
		st.status = usb_redir_stall;
	}
	st.configuration = d->use_profile ? d->pm.configuration : d->cam.configuration;
	usbredirparser_send_configuration_status(d->parser, id, &st);
}

static void cb_get_configuration(void *priv, uint64_t id)
{
	struct fake_dev *d = priv;
	struct usb_redir_configuration_status_header st = {
		.status = usb_redir_success,
		.configuration = d->use_profile ? d->pm.configuration : d->cam.configuration,
	};

	usbredirparser_send_configuration_status(d->parser, id, &st);
}

static void cb_set_alt_setting(void *priv, uint64_t id,
			       struct usb_redir_set_alt_setting_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_alt_setting_status_header st = {
		.interface = h->interface,
	};

	d->c.set_interface++;
	if (d->use_profile) {
		int alt;

		st.status = pm_set_interface(&d->pm, h->interface, h->alt) == 0 ?
			    usb_redir_success : usb_redir_inval;
		if (st.status == usb_redir_success)
			send_ep_info(d);
		alt = pm_get_interface(&d->pm, h->interface);
		st.alt = alt < 0 ? 0xff : (uint8_t)alt;
		usbredirparser_send_alt_setting_status(d->parser, id, &st);
		return;
	}
	if (cam_set_interface(&d->cam, h->interface, h->alt) == 0) {
		st.status = usb_redir_success;
		send_ep_info(d);
	} else {
		st.status = usb_redir_inval;
	}
	st.alt = h->interface < CAM_NUM_INTERFACES ?
		 d->cam.alt[h->interface] : 0xff;
	usbredirparser_send_alt_setting_status(d->parser, id, &st);
}

static void cb_get_alt_setting(void *priv, uint64_t id,
			       struct usb_redir_get_alt_setting_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_alt_setting_status_header st = {
		.interface = h->interface,
	};

	if (d->use_profile && pm_get_interface(&d->pm, h->interface) >= 0) {
		st.status = usb_redir_success;
		st.alt = (uint8_t)pm_get_interface(&d->pm, h->interface);
	} else if (!d->use_profile && d->cam.configuration &&
		   h->interface < CAM_NUM_INTERFACES) {
		st.status = usb_redir_success;
		st.alt = d->cam.alt[h->interface];
	} else {
		st.status = usb_redir_inval;
		st.alt = 0xff;
	}
	usbredirparser_send_alt_setting_status(d->parser, id, &st);
}

static void cb_start_iso_stream(void *priv, uint64_t id,
				struct usb_redir_start_iso_stream_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_iso_stream_status_header st = {
		.endpoint = h->endpoint,
	};

	/* The stream is accepted but carries no video: frames are out of
	 * scope, the guest just sees an idle camera. */
	struct pm_ep e;

	if (d->use_profile ? pm_endpoint(&d->pm, h->endpoint, &e) == 0 && e.type == 1 :
	    h->endpoint == CAM_EP_VIDEO && d->cam.alt[CAM_IF_STREAMING]) {
		st.status = usb_redir_success;
	} else {
		st.status = usb_redir_inval;
		d->c.bad_endpoint++;
	}
	usbredirparser_send_iso_stream_status(d->parser, id, &st);
}

static void cb_stop_iso_stream(void *priv, uint64_t id,
			       struct usb_redir_stop_iso_stream_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_iso_stream_status_header st = {
		.status = usb_redir_success,
		.endpoint = h->endpoint,
	};

	usbredirparser_send_iso_stream_status(d->parser, id, &st);
}

static void cb_start_interrupt_receiving(void *priv, uint64_t id,
	struct usb_redir_start_interrupt_receiving_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_interrupt_receiving_status_header st = {
		.endpoint = h->endpoint,
	};

	if (d->use_profile) {
		struct pm_ep e;
		struct pm_gen *g = NULL;

		for (size_t i = 0; i < d->n_gens; i++)
			if (d->gens[i].ep == h->endpoint)
				g = &d->gens[i];
		if (d->connected && pm_endpoint(&d->pm, h->endpoint, &e) == 0 &&
		    e.type == 3 && (h->endpoint & 0x80)) {
			/* an endpoint without an `interrupt` rule is idle */
			st.status = usb_redir_success;
			if (g)
				flood_start(&g->fl, d->now);
			if (g && d->cfg.hotplug_period > 0 && d->next_disconnect < 0)
				d->next_disconnect = d->now + d->cfg.hotplug_period;
			dev_log(d, 2, "interrupt receiving started on %02x%s",
				h->endpoint, g ? "" : " (idle)");
		} else {
			st.status = usb_redir_inval;
			d->c.bad_endpoint++;
		}
		usbredirparser_send_interrupt_receiving_status(d->parser, id, &st);
		return;
	}
	if (h->endpoint == CAM_EP_STATUS && d->cam.configuration &&
	    d->connected) {
		st.status = usb_redir_success;
		flood_start(&d->flood, d->now);
		if (d->cfg.hotplug_period > 0 && d->next_disconnect < 0)
			d->next_disconnect = d->now + d->cfg.hotplug_period;
		dev_log(d, 2, "interrupt receiving started on %02x",
			h->endpoint);
	} else {
		st.status = usb_redir_inval;
		d->c.bad_endpoint++;
	}
	usbredirparser_send_interrupt_receiving_status(d->parser, id, &st);
}

static void cb_stop_interrupt_receiving(void *priv, uint64_t id,
	struct usb_redir_stop_interrupt_receiving_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_interrupt_receiving_status_header st = {
		.status = usb_redir_success,
		.endpoint = h->endpoint,
	};

	if (d->use_profile) {
		for (size_t i = 0; i < d->n_gens; i++)
			if (d->gens[i].ep == h->endpoint)
				flood_stop(&d->gens[i].fl, d->now);
		usbredirparser_send_interrupt_receiving_status(d->parser, id, &st);
		return;
	}
	if (h->endpoint == CAM_EP_STATUS) {
		flood_stop(&d->flood, d->now);
		dev_log(d, 2, "interrupt receiving stopped on %02x",
			h->endpoint);
	} else {
		st.status = usb_redir_inval;
		d->c.bad_endpoint++;
	}
	usbredirparser_send_interrupt_receiving_status(d->parser, id, &st);
}

static void cb_alloc_bulk_streams(void *priv, uint64_t id,
				  struct usb_redir_alloc_bulk_streams_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_bulk_streams_status_header st = {
		.endpoints = h->endpoints,
		.no_streams = h->no_streams,
		.status = usb_redir_inval,
	};

	d->c.unsupported++;
	usbredirparser_send_bulk_streams_status(d->parser, id, &st);
}

static void cb_free_bulk_streams(void *priv, uint64_t id,
				 struct usb_redir_free_bulk_streams_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_bulk_streams_status_header st = {
		.endpoints = h->endpoints,
		.status = usb_redir_inval,
	};

	d->c.unsupported++;
	usbredirparser_send_bulk_streams_status(d->parser, id, &st);
}

static void cb_start_bulk_receiving(void *priv, uint64_t id,
	struct usb_redir_start_bulk_receiving_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_bulk_receiving_status_header st = {
		.stream_id = h->stream_id,
		.endpoint = h->endpoint,
		.status = usb_redir_inval,
	};

	d->c.unsupported++;
	usbredirparser_send_bulk_receiving_status(d->parser, id, &st);
}

static void cb_stop_bulk_receiving(void *priv, uint64_t id,
	struct usb_redir_stop_bulk_receiving_header *h)
{
	struct fake_dev *d = priv;
	struct usb_redir_bulk_receiving_status_header st = {
		.stream_id = h->stream_id,
		.endpoint = h->endpoint,
		.status = usb_redir_inval,
	};

	d->c.unsupported++;
	usbredirparser_send_bulk_receiving_status(d->parser, id, &st);
}

static void cb_cancel_data_packet(void *priv, uint64_t id)
{
	struct fake_dev *d = priv;

	/* Every transfer is answered at once, but for the bulk IN reads a
	 * profile's device holds: those come back cancelled. */
	d->c.cancels++;
	for (size_t i = 0; i < d->n_held; i++) {
		if (d->held[i].id != id)
			continue;
		struct usb_redir_bulk_packet_header resp = d->held[i].h;

		resp.status = usb_redir_cancelled;
		resp.length = 0;
		resp.length_high = 0;
		usbredirparser_send_bulk_packet(d->parser, id, &resp, NULL, 0);
		d->held[i] = d->held[--d->n_held];
		break;
	}
}

static void cb_filter_reject(void *priv)
{
	struct fake_dev *d = priv;

	dev_log(d, 1, "peer rejected the device (filter)");
}

static void cb_filter_filter(void *priv, struct usbredirfilter_rule *rules,
			     int rules_count)
{
	struct fake_dev *d = priv;

	(void)rules_count;
	dev_log(d, 2, "peer sent %d filter rules (ignored)", rules_count);
	free(rules);
}

static void cb_device_disconnect_ack(void *priv)
{
	struct fake_dev *d = priv;

	dev_log(d, 2, "peer acknowledged disconnect");
}

static void cb_control_packet(void *priv, uint64_t id,
			      struct usb_redir_control_packet_header *h,
			      uint8_t *data, int data_len)
{
	struct fake_dev *d = priv;
	struct usb_redir_control_packet_header resp = *h;
	struct usb_setup s = {
		.bmRequestType = h->requesttype,
		.bRequest = h->request,
		.wValue = h->value,
		.wIndex = h->index,
		.wLength = h->length,
	};
	uint8_t in[4096];
	int dir_in = !!(h->requesttype & 0x80);
	struct req_result r;

	d->c.control_requests++;
	if ((h->endpoint & 0x7f) != 0 || (h->endpoint & 0x80) != (dir_in << 7)) {
		r.len = -1;
		r.kind = REQ_OTHER;
	} else {
		uint8_t old_config = d->cam.configuration;
		uint8_t old_alt = d->cam.alt[CAM_IF_STREAMING];

		if (d->use_profile) {
			uint8_t cfg = d->pm.configuration;
			uint8_t alts[PM_MAX_IFACES];

			memcpy(alts, d->pm.alt, sizeof(alts));
			r = pm_control(&d->pm, &s, dir_in ? NULL : data,
				       dir_in ? 0 : data_len, in, sizeof(in));
			if (r.len >= 0 && (cfg != d->pm.configuration ||
					   memcmp(alts, d->pm.alt, sizeof(alts)))) {
				if (cfg != d->pm.configuration)
					send_interface_info(d);
				send_ep_info(d);
			}
			goto answered;
		}
		r = cam_control(&d->cam, &s, dir_in ? NULL : data,
				dir_in ? 0 : data_len, in, sizeof(in));
		/* SET_CONFIGURATION / SET_INTERFACE normally come as usbredir
		 * messages; when sent as plain control transfers, keep the
		 * peer's endpoint view in sync all the same. */
		if (r.len >= 0 && (old_config != d->cam.configuration ||
				   old_alt != d->cam.alt[CAM_IF_STREAMING])) {
			if (old_config != d->cam.configuration)
				send_interface_info(d);
			send_ep_info(d);
		}
	}
answered:
	switch (r.kind) {
	case REQ_STANDARD:
		d->c.standard_requests++;
		break;
	case REQ_CLASS_GET:
		d->c.class_get++;
		break;
	case REQ_CLASS_SET:
		d->c.class_set++;
		break;
	default:
		d->c.other_requests++;
		break;
	}

	if (r.len < 0) {
		d->c.control_stalls++;
		resp.status = usb_redir_stall;
		resp.length = 0;
		dev_log(d, 3, "STALL %02x %02x %04x %04x %u", h->requesttype,
			h->request, h->value, h->index, h->length);
		usbredirparser_send_control_packet(d->parser, id, &resp, NULL, 0);
	} else if (dir_in) {
		resp.status = usb_redir_success;
		resp.length = (uint16_t)r.len;
		usbredirparser_send_control_packet(d->parser, id, &resp, in,
						   r.len);
	} else {
		resp.status = usb_redir_success;
		resp.length = (uint16_t)(data_len > 0 ? data_len : 0);
		usbredirparser_send_control_packet(d->parser, id, &resp, NULL, 0);
	}
	usbredirparser_free_packet_data(d->parser, data);
}

static void cb_bulk_packet(void *priv, uint64_t id,
			   struct usb_redir_bulk_packet_header *h,
			   uint8_t *data, int data_len)
{
	struct fake_dev *d = priv;
	struct usb_redir_bulk_packet_header resp = *h;
	struct pm_ep e;

	if (d->use_profile && pm_endpoint(&d->pm, h->endpoint, &e) == 0 && e.type == 2) {
		if (!(h->endpoint & 0x80)) {
			/* OUT: taken, as a sink */
			d->c.bulk_out++;
			d->c.bulk_out_bytes += (uint64_t)(data_len > 0 ? data_len : 0);
			resp.status = usb_redir_success;
			usbredirparser_send_bulk_packet(d->parser, id, &resp, NULL, 0);
			usbredirparser_free_packet_data(d->parser, data);
			return;
		}
		if (d->n_held < FAKE_MAX_HELD) {
			/* IN: a quiet device has nothing to say; the read stays
			 * in flight until the guest cancels it (--bulk-in: until
			 * the pace lets tick_profile answer it) */
			d->held[d->n_held].id = id;
			d->held[d->n_held].h = *h;
			d->n_held++;
			if (d->cfg.bulk_in && !d->bulk_fl.running && !d->bulk_fl.done)
				flood_start(&d->bulk_fl, d->now);
			else if (!d->cfg.bulk_in)
				d->c.bulk_in_held++;
			usbredirparser_free_packet_data(d->parser, data);
			return;
		}
	}
	(void)data_len;
	d->c.unsupported++;
	resp.status = usb_redir_inval;  /* no such bulk endpoint */
	resp.length = 0;
	resp.length_high = 0;
	usbredirparser_send_bulk_packet(d->parser, id, &resp, NULL, 0);
	usbredirparser_free_packet_data(d->parser, data);
}

static void cb_iso_packet(void *priv, uint64_t id,
			  struct usb_redir_iso_packet_header *h,
			  uint8_t *data, int data_len)
{
	struct fake_dev *d = priv;

	(void)id;
	(void)h;
	(void)data_len;
	d->c.unsupported++;             /* no iso OUT endpoint: drop */
	usbredirparser_free_packet_data(d->parser, data);
}

static void cb_interrupt_packet(void *priv, uint64_t id,
				struct usb_redir_interrupt_packet_header *h,
				uint8_t *data, int data_len)
{
	struct fake_dev *d = priv;
	struct usb_redir_interrupt_packet_header resp = *h;

	(void)data_len;
	d->c.unsupported++;             /* no interrupt OUT endpoint */
	resp.status = usb_redir_inval;
	resp.length = 0;
	usbredirparser_send_interrupt_packet(d->parser, id, &resp, NULL, 0);
	usbredirparser_free_packet_data(d->parser, data);
}

/* Messages only a usb-host sends; the parser in usb_host mode refuses them
 * before they get here, but every slot gets a handler all the same. */
static void cb_unexpected(struct fake_dev *d, const char *what)
{
	d->c.unexpected++;
	dev_log(d, 1, "unexpected %s from the usb-guest, ignored", what);
}

static void cb_device_connect(void *priv,
			      struct usb_redir_device_connect_header *h)
{
	(void)h;
	cb_unexpected(priv, "device_connect");
}

static void cb_device_disconnect(void *priv)
{
	cb_unexpected(priv, "device_disconnect");
}

static void cb_interface_info(void *priv,
			      struct usb_redir_interface_info_header *h)
{
	(void)h;
	cb_unexpected(priv, "interface_info");
}

static void cb_ep_info(void *priv, struct usb_redir_ep_info_header *h)
{
	(void)h;
	cb_unexpected(priv, "ep_info");
}

static void cb_configuration_status(void *priv, uint64_t id,
	struct usb_redir_configuration_status_header *h)
{
	(void)id;
	(void)h;
	cb_unexpected(priv, "configuration_status");
}

static void cb_alt_setting_status(void *priv, uint64_t id,
	struct usb_redir_alt_setting_status_header *h)
{
	(void)id;
	(void)h;
	cb_unexpected(priv, "alt_setting_status");
}

static void cb_iso_stream_status(void *priv, uint64_t id,
	struct usb_redir_iso_stream_status_header *h)
{
	(void)id;
	(void)h;
	cb_unexpected(priv, "iso_stream_status");
}

static void cb_interrupt_receiving_status(void *priv, uint64_t id,
	struct usb_redir_interrupt_receiving_status_header *h)
{
	(void)id;
	(void)h;
	cb_unexpected(priv, "interrupt_receiving_status");
}

static void cb_bulk_streams_status(void *priv, uint64_t id,
	struct usb_redir_bulk_streams_status_header *h)
{
	(void)id;
	(void)h;
	cb_unexpected(priv, "bulk_streams_status");
}

static void cb_bulk_receiving_status(void *priv, uint64_t id,
	struct usb_redir_bulk_receiving_status_header *h)
{
	(void)id;
	(void)h;
	cb_unexpected(priv, "bulk_receiving_status");
}

static void cb_buffered_bulk_packet(void *priv, uint64_t id,
	struct usb_redir_buffered_bulk_packet_header *h,
	uint8_t *data, int data_len)
{
	struct fake_dev *d = priv;

	(void)id;
	(void)h;
	(void)data_len;
	cb_unexpected(d, "buffered_bulk_packet");
	usbredirparser_free_packet_data(d->parser, data);
}

/* ---- Lifecycle -------------------------------------------------------------- */

struct fake_dev *fake_dev_new(const struct fake_cfg *cfg,
			      const struct fake_io *io, double now,
			      char *err, size_t err_size)
{
	uint32_t caps[USB_REDIR_CAPS_SIZE] = { 0 };
	struct fake_dev *d = calloc(1, sizeof(*d));
	struct usbredirparser *p;

	if (!d) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	d->cfg = *cfg;
	d->io = *io;
	d->now = now;
	d->started_at = now;
	d->next_disconnect = -1;
	d->reconnect_at = -1;
	if (cam_descriptors_build(&d->desc, cfg->serial) < 0) {
		snprintf(err, err_size, "cannot build the descriptors: serial "
			 "must be 1-%d printable ASCII characters, tables at "
			 "most %d bytes", CAM_SERIAL_MAX, CAM_CONFIG_MAX);
		free(d);
		return NULL;
	}
	if (cam_n_ctrls > CAM_MAX_CTRLS) {
		snprintf(err, err_size, "%zu controls, at most %d", cam_n_ctrls,
			 CAM_MAX_CTRLS);
		free(d);
		return NULL;
	}
	cam_state_init(&d->cam, &d->desc);
	flood_init(&d->flood, &cfg->flood,
		   flood_ceiling(CAM_EP_STATUS_INTERVAL));
	if (cfg->profile) {
		if (profile_load_file(cfg->profile, &d->prof, err, err_size) < 0) {
			free(d);
			return NULL;
		}
		d->use_profile = 1;
		pm_init(&d->pm, &d->prof);
		/* bulk IN answers: paced by --rate, for --duration, at most
		 * 1000/s for the device (a frame each): at a microframe each
		 * (8000/s) a usb-serial driver's reads kept a KASAN guest's
		 * one CPU busy in completions, and its user space (the
		 * script counting them) never ran */
		flood_init(&d->bulk_fl, &cfg->flood, 1000.0);
		d->bulk_prng = cfg->flood.seed * 2654435761u + 0x9e3779b97f4a7c15ull;
		/* an endpoint with nothing to send stays idle, as without a rule */
		for (size_t i = 0; i < d->prof.n_interrupts; i++)
			if (pm_gen_init(&d->gens[d->n_gens], &d->pm, &d->prof.interrupts[i],
					&cfg->flood) == 0)
				d->n_gens++;
	}

	p = usbredirparser_create();
	if (!p) {
		snprintf(err, err_size, "usbredirparser_create failed");
		if (d->use_profile)
			profile_free(&d->prof);
		free(d);
		return NULL;
	}
	p->priv = d;
	p->log_func = cb_log;
	p->read_func = cb_read;
	p->write_func = cb_write;
	p->hello_func = cb_hello;
	p->reset_func = cb_reset;
	p->set_configuration_func = cb_set_configuration;
	p->get_configuration_func = cb_get_configuration;
	p->set_alt_setting_func = cb_set_alt_setting;
	p->get_alt_setting_func = cb_get_alt_setting;
	p->start_iso_stream_func = cb_start_iso_stream;
	p->stop_iso_stream_func = cb_stop_iso_stream;
	p->start_interrupt_receiving_func = cb_start_interrupt_receiving;
	p->stop_interrupt_receiving_func = cb_stop_interrupt_receiving;
	p->alloc_bulk_streams_func = cb_alloc_bulk_streams;
	p->free_bulk_streams_func = cb_free_bulk_streams;
	p->start_bulk_receiving_func = cb_start_bulk_receiving;
	p->stop_bulk_receiving_func = cb_stop_bulk_receiving;
	p->cancel_data_packet_func = cb_cancel_data_packet;
	p->filter_reject_func = cb_filter_reject;
	p->filter_filter_func = cb_filter_filter;
	p->device_disconnect_ack_func = cb_device_disconnect_ack;
	p->control_packet_func = cb_control_packet;
	p->bulk_packet_func = cb_bulk_packet;
	p->iso_packet_func = cb_iso_packet;
	p->interrupt_packet_func = cb_interrupt_packet;
	p->device_connect_func = cb_device_connect;
	p->device_disconnect_func = cb_device_disconnect;
	p->interface_info_func = cb_interface_info;
	p->ep_info_func = cb_ep_info;
	p->configuration_status_func = cb_configuration_status;
	p->alt_setting_status_func = cb_alt_setting_status;
	p->iso_stream_status_func = cb_iso_stream_status;
	p->interrupt_receiving_status_func = cb_interrupt_receiving_status;
	p->bulk_streams_status_func = cb_bulk_streams_status;
	p->bulk_receiving_status_func = cb_bulk_receiving_status;
	p->buffered_bulk_packet_func = cb_buffered_bulk_packet;

	/* QEMU needs these three on an xHCI port; the rest describe what
	 * this side implements. */
	usbredirparser_caps_set_cap(caps, usb_redir_cap_connect_device_version);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_filter);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_device_disconnect_ack);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_ep_info_max_packet_size);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_64bits_ids);
	usbredirparser_caps_set_cap(caps, usb_redir_cap_32bits_bulk_length);
	usbredirparser_init(p, "fake-uvc " FAKE_UVC_VERSION, caps,
			    USB_REDIR_CAPS_SIZE, usbredirparser_fl_usb_host);
	d->parser = p;
	return d;
}

void fake_dev_free(struct fake_dev *d)
{
	if (!d)
		return;
	if (d->parser)
		usbredirparser_destroy(d->parser);
	if (d->use_profile)
		profile_free(&d->prof);
	free(d);
}

int fake_dev_read(struct fake_dev *d, double now)
{
	int r;

	d->now = now;
	r = usbredirparser_do_read(d->parser);
	if (r == usbredirparser_read_parse_error) {
		d->c.parse_errors++;
		return 0;
	}
	if (r < 0)
		return -1;      /* end of stream or socket error: caller knows */
	return 0;
}

/* --bulk-in: answer the held bulk IN reads, oldest first, as many as the
 * pace allows, each with one packet (at most the read's length and the
 * endpoint's wMaxPacketSize) of random bytes or zeros. */
static void tick_bulk_in(struct fake_dev *d, double now)
{
	unsigned n = flood_budget(&d->bulk_fl, now);

	if (n && usbredirparser_get_bufferered_output_size(d->parser) > d->cfg.max_buffered) {
		d->c.socket_throttled++;
		d->bulk_fl.tokens = 0;
		return;
	}
	for (unsigned i = 0; i < n && d->n_held; i++) {
		struct usb_redir_bulk_packet_header resp = d->held[0].h;
		uint64_t id = d->held[0].id;
		uint32_t want = resp.length | (uint32_t)resp.length_high << 16;
		uint8_t buf[1024];
		struct pm_ep e;
		uint32_t len = want < sizeof(buf) ? want : sizeof(buf);

		if (pm_endpoint(&d->pm, resp.endpoint, &e) == 0 && (e.maxpacket & 0x7ff) &&
		    len > (uint32_t)(e.maxpacket & 0x7ff))
			len = e.maxpacket & 0x7ff;
		for (uint32_t k = 0; k < len; k++) {
			if (d->cfg.bulk_in == 2) {
				buf[k] = 0;
				continue;
			}
			d->bulk_prng ^= d->bulk_prng << 13;
			d->bulk_prng ^= d->bulk_prng >> 7;
			d->bulk_prng ^= d->bulk_prng << 17;
			buf[k] = (uint8_t)(d->bulk_prng >> 24);
		}
		memmove(&d->held[0], &d->held[1], (d->n_held - 1) * sizeof(d->held[0]));
		d->n_held--;
		resp.status = usb_redir_success;
		resp.length = (uint16_t)len;
		resp.length_high = (uint16_t)(len >> 16);
		usbredirparser_send_bulk_packet(d->parser, id, &resp, buf, (int)len);
		flood_account(&d->bulk_fl, len);
		d->c.bulk_in_sent++;
		d->c.bulk_in_bytes += len;
	}
}

static void tick_profile(struct fake_dev *d, double now)
{
	if (d->cfg.bulk_in && d->n_held)
		tick_bulk_in(d, now);
	for (size_t k = 0; k < d->n_gens; k++) {
		struct pm_gen *g = &d->gens[k];
		unsigned n = flood_budget(&g->fl, now);

		if (n && usbredirparser_get_bufferered_output_size(d->parser) >
			 d->cfg.max_buffered) {
			d->c.socket_throttled++;
			g->fl.tokens = 0;
			continue;
		}
		for (unsigned i = 0; i < n; i++) {
			uint8_t buf[PM_PACKET_MAX];
			struct usb_redir_interrupt_packet_header h = {
				.endpoint = g->ep,
				.status = usb_redir_success,
			};
			size_t len = pm_gen_next(g, &d->pm, buf);

			h.length = (uint16_t)len;
			usbredirparser_send_interrupt_packet(d->parser, d->irq_id++, &h, buf,
							     (int)len);
		}
	}
}

void fake_dev_tick(struct fake_dev *d, double now)
{
	d->now = now;

	/* Hotplug: unplug every hotplug_period, plug back after hotplug_off. */
	if (d->connected && d->next_disconnect >= 0 && now >= d->next_disconnect) {
		send_disconnect(d);
		d->reconnect_at = now + d->cfg.hotplug_off;
	}
	if (!d->connected && d->peer_hello && d->reconnect_at >= 0 &&
	    now >= d->reconnect_at) {
		d->reconnect_at = -1;
		d->c.hotplug_cycles++;
		send_connect(d);
	}

	if (d->use_profile) {
		tick_profile(d, now);
		return;
	}
	unsigned n = flood_budget(&d->flood, now);
	if (n && usbredirparser_get_bufferered_output_size(d->parser) >
		 d->cfg.max_buffered) {
		/* The peer is not reading (VM paused, socket full): do not
		 * pile up packets that would all land in one burst. */
		d->c.socket_throttled++;
		d->flood.tokens = 0;
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		uint8_t buf[CAM_STATUS_MAX_LEN];
		struct usb_redir_interrupt_packet_header h = {
			.endpoint = CAM_EP_STATUS,
			.status = usb_redir_success,
		};
		size_t len = flood_next(&d->flood, &d->cam, buf);

		h.length = (uint16_t)len;
		usbredirparser_send_interrupt_packet(d->parser, d->irq_id++,
						     &h, buf, (int)len);
	}
}

int fake_dev_want_write(const struct fake_dev *d)
{
	return usbredirparser_has_data_to_write(d->parser) > 0;
}

int fake_dev_write(struct fake_dev *d)
{
	return usbredirparser_do_write(d->parser) < 0 ? -1 : 0;
}

double fake_dev_deadline(const struct fake_dev *d, double now)
{
	double t = flood_next_wakeup(&d->flood, now, d->cfg.batch);

	for (size_t i = 0; i < d->n_gens; i++) {
		double g = flood_next_wakeup(&d->gens[i].fl, now, d->cfg.batch);

		if (g >= 0 && (t < 0 || g < t))
			t = g;
	}

	if (d->cfg.bulk_in && d->n_held) {
		double b = flood_next_wakeup(&d->bulk_fl, now, d->cfg.batch);

		if (b >= 0 && (t < 0 || b < t))
			t = b;
	}
	if (d->connected && d->next_disconnect >= 0 &&
	    (t < 0 || d->next_disconnect < t))
		t = d->next_disconnect;
	if (!d->connected && d->reconnect_at >= 0 &&
	    (t < 0 || d->reconnect_at < t))
		t = d->reconnect_at;
	return t;
}

int fake_dev_done(const struct fake_dev *d)
{
	if (d->use_profile) {
		/* every endpoint the guest ever started has reached its end */
		int started = 0;

		for (size_t i = 0; i < d->n_gens; i++) {
			if (d->gens[i].fl.first_start < 0)
				continue;
			started = 1;
			if (!d->gens[i].fl.done)
				return 0;
		}
		return started;
	}
	return d->flood.done;
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

void fake_dev_json(const struct fake_dev *d, FILE *out, const char *event,
		   const char *reason, double now)
{
	const struct flood *f = &d->flood;
	const struct fake_counters *c = &d->c;
	static struct flood agg;        /* a profile's endpoints, summed */

	if (d->use_profile) {
		memset(&agg, 0, sizeof(agg));
		agg.cfg = d->cfg.flood;
		agg.first_start = -1;
		for (size_t k = 0; k < d->n_gens; k++) {
			const struct flood *g = &d->gens[k].fl;

			agg.st.sent += g->st.sent;
			agg.st.bytes += g->st.bytes;
			agg.st.starts += g->st.starts;
			agg.st.stops += g->st.stops;
			agg.st.window_full += g->st.window_full;
			agg.st.est_consumed += g->st.est_consumed;
			agg.st.est_discarded += g->st.est_discarded;
			agg.est_queue += g->est_queue;
			agg.rate += g->rate;
			agg.ceiling += g->ceiling;
			agg.guest_rate += g->guest_rate;
			agg.running |= g->running;
			if (g->first_start >= 0 &&
			    (agg.first_start < 0 || g->first_start < agg.first_start))
				agg.first_start = g->first_start;
		}
		agg.done = fake_dev_done(d);
		for (size_t k = 0; k < d->n_gens; k++) {
			const struct flood *g = &d->gens[k].fl;
			/* per-second counts from the earliest start */
			size_t shift = g->first_start < 0 ? 0 :
				       (size_t)(g->first_start - agg.first_start);

			for (size_t i = 0; i < g->st.per_s_len && i + shift < FLOOD_SERIES_MAX; i++)
				agg.st.per_s[i + shift] += g->st.per_s[i];
			if (g->st.per_s_len && g->st.per_s_len + shift > agg.st.per_s_len)
				agg.st.per_s_len = g->st.per_s_len + shift > FLOOD_SERIES_MAX ?
						   FLOOD_SERIES_MAX : g->st.per_s_len + shift;
		}
		f = &agg;
	}

	fprintf(out, "{\"version\":%d,\"tool\":\"fake-uvc\",\"event\":",
		FAKE_UVC_JSON_VERSION);
	json_string(out, event);
	fprintf(out, ",\"reason\":");
	json_string(out, reason ? reason : "");
	fprintf(out, ",\"elapsed_s\":%.3f,\"pattern\":\"%s\",\"seed\":%llu,"
		"\"rate_target\":%.0f,\"ceiling\":%.0f,\"guest_rate_model\":%.0f,"
		"\"window\":%u,\"flood_running\":%s,\"flood_done\":%s,",
		now - d->started_at, flood_pattern_names[f->cfg.pattern],
		(unsigned long long)f->cfg.seed, f->rate, f->ceiling,
		f->guest_rate, f->cfg.window, f->running ? "true" : "false",
		f->done ? "true" : "false");
	fprintf(out, "\"flood_s\":%.3f,",
		f->first_start < 0 ? 0.0 : now - f->first_start);
	fprintf(out, "\"sent\":%llu,\"sent_bytes\":%llu,\"sent_by_pattern\":{",
		(unsigned long long)f->st.sent, (unsigned long long)f->st.bytes);
	for (int i = 0; i < PATTERN_COUNT; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "",
			flood_pattern_names[i],
			(unsigned long long)f->st.by_pattern[i]);
	fprintf(out, "},\"sent_by_kind\":{");
	for (int i = 0; i < PK_COUNT; i++)
		fprintf(out, "%s\"%s\":%llu", i ? "," : "", pkt_kind_names[i],
			(unsigned long long)f->st.by_kind[i]);
	fprintf(out, "},\"interrupt_starts\":%llu,\"interrupt_stops\":%llu,"
		"\"model_drained\":%.0f,\"model_queued\":%.0f,"
		"\"model_discarded\":%.0f,\"window_full\":%llu,"
		"\"socket_throttled\":%llu,",
		(unsigned long long)f->st.starts, (unsigned long long)f->st.stops,
		f->st.est_consumed, f->est_queue, f->st.est_discarded,
		(unsigned long long)f->st.window_full,
		(unsigned long long)c->socket_throttled);
	fprintf(out, "\"control_requests\":%llu,\"control_stalls\":%llu,"
		"\"standard_requests\":%llu,\"class_get\":%llu,"
		"\"class_set\":%llu,\"other_requests\":%llu,"
		"\"set_configuration\":%llu,\"set_interface\":%llu,"
		"\"resets\":%llu,\"connects\":%llu,\"disconnects\":%llu,"
		"\"hotplug_cycles\":%llu,\"hellos\":%llu,\"parse_errors\":%llu,"
		"\"cancels\":%llu,\"unsupported\":%llu,"
		"\"unexpected\":%llu,\"bad_endpoint\":%llu,\"peer_version\":",
		(unsigned long long)c->control_requests,
		(unsigned long long)c->control_stalls,
		(unsigned long long)c->standard_requests,
		(unsigned long long)c->class_get,
		(unsigned long long)c->class_set,
		(unsigned long long)c->other_requests,
		(unsigned long long)c->set_configuration,
		(unsigned long long)c->set_interface,
		(unsigned long long)c->resets,
		(unsigned long long)c->connects,
		(unsigned long long)c->disconnects,
		(unsigned long long)c->hotplug_cycles,
		(unsigned long long)c->hellos,
		(unsigned long long)c->parse_errors,
		(unsigned long long)c->cancels,
		(unsigned long long)c->unsupported,
		(unsigned long long)c->unexpected,
		(unsigned long long)c->bad_endpoint);
	json_string(out, d->peer_version);
	if (d->use_profile) {
		fprintf(out, ",\"profile\":");
		json_string(out, d->prof.name);
		fprintf(out, ",\"bulk_out\":%llu,\"bulk_out_bytes\":%llu,\"bulk_in_held\":%llu,"
			"\"bulk_in_sent\":%llu,\"bulk_in_bytes\":%llu,"
			"\"endpoints\":[", (unsigned long long)c->bulk_out,
			(unsigned long long)c->bulk_out_bytes, (unsigned long long)c->bulk_in_held,
			(unsigned long long)c->bulk_in_sent, (unsigned long long)c->bulk_in_bytes);
		for (size_t k = 0; k < d->n_gens; k++) {
			const struct pm_gen *g = &d->gens[k];

			fprintf(out, "%s{\"endpoint\":%u,\"pattern\":\"%s\",\"sent\":%llu,"
				"\"sent_bytes\":%llu,\"starts\":%llu,\"stops\":%llu,"
				"\"ceiling\":%.0f,\"running\":%s}", k ? "," : "", g->ep,
				profile_pattern_name(g->rule->pattern),
				(unsigned long long)g->fl.st.sent,
				(unsigned long long)g->fl.st.bytes,
				(unsigned long long)g->fl.st.starts,
				(unsigned long long)g->fl.st.stops, g->fl.ceiling,
				g->fl.running ? "true" : "false");
		}
		fprintf(out, "]");
	}
	fprintf(out, ",\"sent_per_s\":[");
	for (size_t i = 0; i < f->st.per_s_len; i++)
		fprintf(out, "%s%u", i ? "," : "", f->st.per_s[i]);
	fprintf(out, "]");

	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(out, ",\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f",
			(double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			(double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	fprintf(out, "}\n");
	fflush(out);
}
