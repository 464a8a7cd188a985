/* SPDX-License-Identifier: MIT */
/*
 * USB device profiles, format 1 (profiles/FORMAT.md): the parser, the
 * checks made when a profile is loaded, the canonical writer and the
 * lookups the fake device answers control requests with.
 *
 * A parsed profile owns heap memory; release it with profile_free().  All
 * sizes are bounded (PROFILE_MAX_*); exceeding a bound is a parse error.
 */
#ifndef FAKE_UVC_PROFILE_H
#define FAKE_UVC_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PROFILE_VERSION        1
#define PROFILE_MAX_INPUT      (1u << 20)   /* bytes of a profile file */
#define PROFILE_MAX_LINE       65536        /* bytes of one line */
#define PROFILE_MAX_BLOB       65535        /* bytes of one hex field */
#define PROFILE_MAX_CONFIGS    8
#define PROFILE_MAX_SOURCES    64
#define PROFILE_MAX_RULES      4096         /* each of: strings, gets, sets, packets */
#define PROFILE_MAX_INTERRUPTS 32           /* endpoints with `interrupt` lines */
#define PROFILE_NAME_MAX       40
#define PROFILE_STRING0_MAX    252          /* 126 LANGIDs */
#define PROFILE_STRING_UNITS   126          /* UTF-16 units of one string */

/* VALUE or INDEX of a get/set rule given as `*`. */
#define PROFILE_ANY            (-1)

enum profile_speed {
	PROFILE_SPEED_LOW,
	PROFILE_SPEED_FULL,
	PROFILE_SPEED_HIGH,
	PROFILE_SPEED_SUPER,
};

enum profile_pattern {
	PROFILE_PATTERN_PACKETS,        /* replay the `packet` lines */
	PROFILE_PATTERN_UVC_CONTROL,
	PROFILE_PATTERN_UVC_BUTTON,
	PROFILE_PATTERN_UVC_MIXED,
	PROFILE_PATTERN_UVC_MALFORMED,
	PROFILE_PATTERN_UVC_RANDOM,
	PROFILE_PATTERN_RANDOM,
	PROFILE_PATTERN_ZERO,
	PROFILE_PATTERN_HID,            /* whole input reports of the report descriptor */
	PROFILE_PATTERN_COUNT,
};

/* Every item remembers the line of its statement, for error messages; line
 * numbers are not part of a profile's value (profile_equal ignores them). */
struct profile_blob {
	uint8_t *data;                  /* NULL when len == 0 */
	size_t len;
	unsigned line;
};

struct profile_text {
	char *text;                     /* UTF-8, NUL-terminated, no NUL inside */
	unsigned line;
};

struct profile_string {
	uint16_t langid;
	uint8_t index;                  /* 1..255 */
	char *text;                     /* at most PROFILE_STRING_UNITS UTF-16 units */
	unsigned line;
};

struct profile_get {
	uint8_t type, req;              /* bmRequestType (bit 7 set), bRequest */
	int32_t value, index;           /* 0..0xffff or PROFILE_ANY */
	bool stall;
	uint8_t *data;                  /* the answer (unless stall); may be empty */
	size_t len;
	unsigned line;
};

struct profile_set {
	uint8_t type, req;              /* bmRequestType (bit 7 clear), bRequest */
	int32_t value, index;           /* 0..0xffff or PROFILE_ANY */
	bool store;                     /* else ack */
	uint8_t store_req;              /* REQ2 of `store REQ2` */
	unsigned line;
};

struct profile_interrupt {
	uint8_t ep;                     /* bEndpointAddress, IN */
	enum profile_pattern pattern;
	struct profile_blob *packets;   /* PROFILE_PATTERN_PACKETS: 1 or more */
	size_t n_packets;
	unsigned line;                  /* the endpoint's first statement */
};

struct profile {
	char *filename;                 /* for messages; NULL: "<profile>" */
	unsigned header_line;
	char name[PROFILE_NAME_MAX + 1];
	unsigned name_line;
	char *description;              /* NULL: none */
	unsigned description_line;
	struct profile_text sources[PROFILE_MAX_SOURCES];
	size_t n_sources;
	enum profile_speed speed;
	unsigned speed_line;
	uint8_t device[18];
	unsigned device_line;
	bool has_qualifier;
	uint8_t qualifier[10];
	unsigned qualifier_line;
	struct profile_blob configs[PROFILE_MAX_CONFIGS];
	size_t n_configs;
	bool has_bos;
	struct profile_blob bos;
	bool has_string0;
	uint8_t string0[PROFILE_STRING0_MAX]; /* LANGIDs, little-endian */
	size_t string0_len;
	unsigned string0_line;
	struct profile_string *strings;
	size_t n_strings;
	struct profile_get *gets;
	size_t n_gets;
	struct profile_set *sets;
	size_t n_sets;
	struct profile_interrupt *interrupts;
	size_t n_interrupts;
};

/* Parse @len bytes of @text (need not be NUL-terminated) into @out, which
 * is overwritten.  Returns 0, or -1 with "FILE:LINE: statement: what is
 * wrong" in @err (@filename NULL: "<profile>"); on error @out holds nothing
 * to free.  This checks the syntax, each statement's fields, repeats and
 * the required statements; profile_validate() checks the rest. */
int profile_parse(const char *text, size_t len, const char *filename,
		  struct profile *out, char *err, size_t errsize);

/* The checks of FORMAT.md's "Checks when a profile is loaded"; returns 0, or
 * -1 with "FILE:LINE: statement: what is wrong" in @err (":LINE" is left out
 * for items with line 0, as in a profile built in memory). */
int profile_validate(const struct profile *p, char *err, size_t errsize);

/* Read, parse and validate @path; returns 0 or -1 with a message in @err. */
int profile_load_file(const char *path, struct profile *out,
		      char *err, size_t errsize);

void profile_free(struct profile *p);

/* Canonical text of @p, with `#` comments describing its descriptors.
 * Returns 0, or -1 if writing failed. */
int profile_write(FILE *f, const struct profile *p);

/* 1 if @a and @b hold the same profile (line numbers are ignored). */
int profile_equal(const struct profile *a, const struct profile *b);

/* The first get (or set) rule, in file order, that matches the request;
 * NULL if none.  profile_set_store() may move the rules: do not keep the
 * pointers across it. */
const struct profile_get *profile_find_get(const struct profile *p, uint8_t type,
					   uint8_t req, uint16_t value, uint16_t index);
const struct profile_set *profile_find_set(const struct profile *p, uint8_t type,
					   uint8_t req, uint16_t value, uint16_t index);

/* Apply store rule @s to a request with @value and @index whose data stage
 * was @data: afterwards profile_find_get(p, s->type | 0x80, s->store_req,
 * value, index) answers @data.  The first get matching that request is
 * replaced when it names VALUE and INDEX exactly; otherwise a new exact get
 * is inserted just before it (or appended if none matches).  Returns 0, or
 * -1 if @s is not a store rule, @len exceeds PROFILE_MAX_BLOB, there are
 * already PROFILE_MAX_RULES gets or memory runs out (@p is unchanged). */
int profile_set_store(struct profile *p, const struct profile_set *s,
		      uint16_t value, uint16_t index,
		      const uint8_t *data, size_t len);

/* String descriptor @index in language @langid (index 0: the LANGID list,
 * whatever @langid), as the device sends it: bLength, bDescriptorType 3,
 * then UTF-16LE text.  Writes min(@size, bLength) bytes to @buf and returns
 * that count; -1 if there is no such string. */
int profile_string_descriptor(const struct profile *p, uint16_t langid,
			      uint8_t index, uint8_t *buf, size_t size);

/* Walking the descriptors of a configuration blob. */
struct profile_desc_iter {
	const uint8_t *cfg;
	size_t len, off;
	int iface, alt;                 /* of the last interface descriptor; -1 */
};

void profile_desc_iter_init(struct profile_desc_iter *it, const uint8_t *cfg,
			    size_t len);
/* Next descriptor: 1 with *@desc (its bLength bytes lie within the blob),
 * 0 at the end, -1 if a descriptor has bLength < 2 or runs past the end
 * (it->off is then its offset). */
int profile_desc_next(struct profile_desc_iter *it, const uint8_t **desc);

/* The first endpoint descriptor with bEndpointAddress @ep in the configs, in
 * file order: its transfer type (bmAttributes & 3), wMaxPacketSize (as
 * written, with the high-bandwidth bits) and bInterval; any pointer may be
 * NULL.  Returns 0, or -1 if no config has that endpoint. */
int profile_find_endpoint(const struct profile *p, uint8_t ep, uint8_t *type,
			  uint16_t *maxpacket, uint8_t *interval);

/* ---- HID report descriptors (pattern hid) ---- */

/* Report IDs 1 to 255, and 0: the items before any Report ID. */
#define PROFILE_HID_MAX_REPORTS 256

/* A non-constant Input field on the Keyboard/Keypad usage page (0x07).
 * The guest's VT acts on some keys (Ctrl-Alt-Del restarts the machine,
 * Ctrl-ScrollLock dumps every task): pattern hid types only harmless ones
 * into such fields. */
#define PROFILE_HID_MAX_KEYS 4

struct profile_hid_keys {
	uint32_t bit;                   /* offset after the ID byte, in bits */
	uint32_t size;                  /* Report Size, bits */
	uint32_t count;                 /* Report Count */
	uint32_t usage_min;             /* a variable field's first usage */
	bool array;                     /* an array: each element is a key code */
};

struct profile_hid_report {
	uint8_t id;                     /* Report ID; 0: the report has no ID byte */
	size_t len;                     /* bytes on the wire: the ID byte (if any),
					 * then the Input bits rounded up to bytes */
	size_t n_keys;                  /* keyboard fields (the first few) */
	struct profile_hid_keys keys[PROFILE_HID_MAX_KEYS];
};

/* The input reports HID report descriptor @desc declares, in the order of
 * their first Input item, into @out (PROFILE_HID_MAX_REPORTS entries).
 * Short items are parsed for Report Size, Report Count, Report ID,
 * Push/Pop and Input (Output and Feature items do not count); long items
 * are skipped.  Returns how many, or -1 when the descriptor is malformed
 * the way Linux's parser refuses (an item that runs past the end, a Report
 * ID of 0 or above 255, a Push or Pop beyond the stack of 4), with the
 * item's offset in *@bad (may be NULL). */
int profile_hid_input_reports(const uint8_t *desc, size_t len,
			      struct profile_hid_report *out, size_t *bad);

/* Keep in @r (@n reports) those pattern hid sends on an endpoint of
 * @maxpacket bytes, in order; returns how many.  A report of 1 to
 * @maxpacket - 1 bytes is sent whole in one short packet.  One of exactly
 * @maxpacket bytes (a full-size packet) only when no input report is
 * longer: the driver's URB (usbhid's is the longest input report) is then
 * one packet long and the full packet completes it, where a longer URB
 * would take the next packet in too.  Longer reports would span packets. */
size_t profile_hid_fitting(struct profile_hid_report *r, size_t n, unsigned maxpacket);

/* The interface of interrupt IN endpoint @ep (the first endpoint descriptor
 * with that address in the configs, in file order): its bInterfaceNumber,
 * or -1 when no config has it; its bInterfaceClass in *@klass (may be
 * NULL). */
int profile_interrupt_interface(const struct profile *p, uint8_t ep, uint8_t *klass);

/* The smallest wMaxPacketSize (without the high-bandwidth bits) of the
 * interrupt endpoints @ep of every configuration and alternate setting;
 * 0 when there is none.  Packets must fit whichever the guest selects.
 * That descriptor's bInterval in *@interval (may be NULL; left alone when
 * there is none). */
unsigned profile_interrupt_maxpacket(const struct profile *p, uint8_t ep, uint8_t *interval);

/* The report descriptor of interface @iface: the get rule that answers
 * GET_DESCRIPTOR (report, index 0) to it, as usbhid asks; NULL when none
 * does, or it stalls or is empty. */
const struct profile_get *profile_hid_report_rule(const struct profile *p, uint8_t iface);

/* What pattern hid sends on interrupt IN endpoint @ep: the input reports
 * of its interface's report descriptor that fit (profile_hid_fitting, at
 * the endpoint's smallest wMaxPacketSize), into @out
 * (PROFILE_HID_MAX_REPORTS entries).  Returns how many; 0 when the
 * interface is not HID, has no report descriptor, or none fits. */
size_t profile_hid_reports(const struct profile *p, uint8_t ep,
			   struct profile_hid_report *out);

const char *profile_speed_name(enum profile_speed s);
const char *profile_pattern_name(enum profile_pattern pat);

#endif
