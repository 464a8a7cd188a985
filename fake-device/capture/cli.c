// SPDX-License-Identifier: MIT
/* dmaharness-capture's command line and text helpers (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cap_usage(FILE *f)
{
	fputs(
"Usage: dmaharness-capture DEVICE [-o FILE] [--name NAME] [--description TEXT]\n"
"                          [--source TEXT] [--speed SPEED] [--detach]\n"
"                          [--request-timeout MS] [--json] [-v]\n"
"\n"
"Read a USB device's descriptors and class GET answers and write them as a\n"
"dmaharness USB device profile (fake-device/profiles/FORMAT.md), which\n"
"`fake-uvc --profile FILE` then serves to a guest.\n"
"\n"
"DEVICE is one of:\n"
"  --device VID:PID          the device with this vendor and product id (hex,\n"
"                            as lsusb shows them: --device 046d:0825); when\n"
"                            several are plugged in, use --bus/--address\n"
"  --bus N --address N       the device at this bus number and address\n"
"                            (decimal, lsusb's \"Bus 001 Device 004\")\n"
"  --node PATH               this usbfs node, /dev/bus/usb/BBB/DDD; needs no\n"
"                            sysfs (inside a minimal guest, say)\n"
"\n"
"Options:\n"
"  -o, --output FILE         write the profile to FILE (replaced atomically: a\n"
"                            temporary file renamed over it; on failure FILE\n"
"                            is left as it was); default or `-`: stdout\n"
"  --name NAME               the profile's name ([a-z0-9][a-z0-9-]*, 40 chars\n"
"                            at most); default: the product string lowercased,\n"
"                            other characters made `-` (\"HD Pro Webcam C920\"\n"
"                            -> hd-pro-webcam-c920), or usb-VVVV-PPPP\n"
"  --description TEXT        default: \"<manufacturer> <product> (vvvv:pppp)\"\n"
"  --source TEXT             default: \"capture of vvvv:pppp on YYYY-MM-DD\"\n"
"                            (UTC); give it to make the output reproducible\n"
"  --speed SPEED             low, full, high or super: the speed to record;\n"
"                            default: sysfs `speed`, else usbfs's answer\n"
"  --detach                  detach kernel drivers from the interfaces whose\n"
"                            class requests are asked, claim them, and give\n"
"                            them back to their drivers at exit; without it a\n"
"                            driver's interface is left alone and its requests\n"
"                            are reported as not read\n"
"  --request-timeout MS      per USB request, 1 to 60000 (default 1000)\n"
"                            (old spelling: --timeout, kept for a release)\n"
"  --json                    print one JSON object (counts, failures, output\n"
"                            file) instead of the summary: on stdout when the\n"
"                            profile goes to a file, on stderr when the profile\n"
"                            goes to stdout\n"
"  -v, --verbose             print each request and its result on stderr\n"
"                            (LIBUSB_DEBUG=4 also shows libusb's own log)\n"
"  -h, --help                this text\n"
"\n"
"What it sends: only reads.  Standard GET_DESCRIPTOR requests (device,\n"
"qualifier, every configuration, BOS, every string in every language) and\n"
"the class GET requests profiles hold (UVC GET_INFO/LEN/CUR/MIN/MAX/RES/DEF\n"
"of every announced control and the probe control, HID report descriptors,\n"
"CDC ACM GET_LINE_CODING, CDC NCM GET_NTB_PARAMETERS).  Never a SET request,\n"
"never a vendor request: the transfer function refuses them.  (libusb itself\n"
"asks GET_CONFIGURATION once when it opens the node.)  A configuration\n"
"longer than 4096 bytes, which libusb cannot ask for, is taken from the\n"
"kernel's copy that usbfs holds.\n"
"\n"
"Permissions: the node must be opened read-write (usbfs needs it for any\n"
"control request): run as root or add a udev rule giving your group access.\n"
"\n"
"Output: the profile; on stderr a summary (requests asked, answered, stalled,\n"
"failed) and one line per request that failed, with why: a timeout, an\n"
"interface a kernel driver holds (use --detach), the device gone.  A stall is\n"
"an answer: the profile records it (`get ... stall`).\n"
"\n"
"Exit status:\n"
"  0  the profile was written and every request was answered or stalled\n"
"  1  nothing was written: no such device, several match, permission denied,\n"
"     the device descriptor could not be read, the output could not be\n"
"     written, or the capture was interrupted\n"
"  2  usage error (nothing was done)\n"
"  3  the profile was written, but some requests failed (listed on stderr)\n"
"     or it does not pass the checks fake-uvc makes when it loads a profile\n"
"\n"
"Environment: DMAHARNESS_SYSFS_ROOT (default /sys) is where the devices are\n"
"looked up, for tests.\n", f);
}

static int errf(char *err, size_t errsize, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int errf(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_hex16(const char *s, size_t n, uint16_t *out)
{
	unsigned v = 0;

	if (n == 0 || n > 4)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -1;
		v = v * 16 + (unsigned)(isdigit((unsigned char)s[i]) ? s[i] - '0' :
					tolower((unsigned char)s[i]) - 'a' + 10);
	}
	*out = (uint16_t)v;
	return 0;
}

int cap_parse_vidpid(const char *s, uint16_t *vid, uint16_t *pid)
{
	const char *colon = strchr(s, ':');

	if (!colon)
		return -1;
	if (parse_hex16(s, (size_t)(colon - s), vid) ||
	    parse_hex16(colon + 1, strlen(colon + 1), pid))
		return -1;
	return 0;
}

bool cap_name_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > PROFILE_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && i > 0)))
			return false;
	}
	return true;
}

bool cap_utf8_valid(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		unsigned need;
		uint32_t c;

		if (*u < 0x80) {
			u++;
			continue;
		} else if ((*u & 0xe0) == 0xc0) {
			need = 1;
			c = *u & 0x1f;
		} else if ((*u & 0xf0) == 0xe0) {
			need = 2;
			c = *u & 0x0f;
		} else if ((*u & 0xf8) == 0xf0) {
			need = 3;
			c = *u & 0x07;
		} else {
			return false;
		}
		u++;
		for (unsigned k = 0; k < need; k++, u++) {
			if ((*u & 0xc0) != 0x80)
				return false;
			c = c << 6 | (*u & 0x3f);
		}
		if ((need == 1 && c < 0x80) || (need == 2 && c < 0x800) ||
		    (need == 3 && c < 0x10000) || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			return false;
	}
	return true;
}

void cap_default_name(const char *product, uint16_t vid, uint16_t pid, char *out)
{
	const char *s = product ? product : "";
	size_t n = 0;
	bool dash = false;

	for (; *s && n < PROFILE_NAME_MAX; s++) {
		char c = (char)tolower((unsigned char)*s);

		if ((unsigned char)*s < 0x80 && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			if (dash && n > 0 && n + 1 < PROFILE_NAME_MAX)
				out[n++] = '-';
			else if (dash && n > 0)
				break;          /* no room for the dash and a character */
			dash = false;
			out[n++] = c;
		} else {
			dash = true;
		}
	}
	out[n] = '\0';
	/* cut in the middle of a word: end at the word before, if any */
	if (n == PROFILE_NAME_MAX && isalnum((unsigned char)*s) && (unsigned char)*s < 0x80 &&
	    strchr(out, '-')) {
		n = (size_t)(strrchr(out, '-') - out);
		out[n] = '\0';
	}
	if (n == 0)
		snprintf(out, PROFILE_NAME_MAX + 1, "usb-%04x-%04x", vid, pid);
}

char *cap_default_description(const char *manufacturer, const char *product,
			      uint16_t vid, uint16_t pid)
{
	const char *m = manufacturer && *manufacturer ? manufacturer : NULL;
	const char *p = product && *product ? product : NULL;
	char *s = NULL;
	int r;

	if (m && p)
		r = asprintf(&s, "%s %s (%04x:%04x)", m, p, vid, pid);
	else if (m || p)
		r = asprintf(&s, "%s (%04x:%04x)", m ? m : p, vid, pid);
	else
		r = asprintf(&s, "USB device (%04x:%04x)", vid, pid);
	return r < 0 ? NULL : s;
}

char *cap_default_source(uint16_t vid, uint16_t pid, time_t now)
{
	struct tm tm;
	char *s = NULL;

	if (!gmtime_r(&now, &tm))
		return NULL;
	if (asprintf(&s, "capture of %04x:%04x on %04d-%02d-%02d", vid, pid,
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday) < 0)
		return NULL;
	return s;
}

const char *cap_profile_string(const struct profile *p, uint8_t index)
{
	uint16_t lang;

	if (!index || !p->has_string0 || p->string0_len < 2)
		return NULL;
	lang = (uint16_t)(p->string0[0] | p->string0[1] << 8);
	for (size_t l = 0; l + 1 < p->string0_len; l += 2)
		if ((p->string0[l] | p->string0[l + 1] << 8) == 0x0409)
			lang = 0x0409;
	for (size_t i = 0; i < p->n_strings; i++)
		if (p->strings[i].langid == lang && p->strings[i].index == index)
			return p->strings[i].text;
	return NULL;
}

void cap_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *u = (const unsigned char *)(s ? s : ""); *u; u++) {
		if (*u == '"' || *u == '\\')
			fprintf(f, "\\%c", *u);
		else if (*u == '\n')
			fputs("\\n", f);
		else if (*u < 0x20 || *u == 0x7f)
			fprintf(f, "\\u%04x", *u);
		else
			fputc(*u, f);
	}
	fputc('"', f);
}

/* ---- argv ------------------------------------------------------------------ */

/* The value of option @name: "--name=VALUE" or "--name VALUE" (@i moves). */
static const char *value_of(int argc, char *const argv[], int *i, const char *arg,
			    const char *name, char *err, size_t errsize)
{
	size_t n = strlen(name);

	if (arg[n] == '=')
		return arg + n + 1;
	if (*i + 1 >= argc) {
		errf(err, errsize, "%s needs a value", name);
		return NULL;
	}
	return argv[++*i];
}

static bool is_opt(const char *arg, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

int cap_parse_args(int argc, char *const argv[], struct cap_opts *o, char *err, size_t errsize)
{
	bool have_device = false, have_bus = false, have_address = false, have_node = false;
	const char *v;

	memset(o, 0, sizeof(*o));
	o->speed = -1;
	o->timeout_ms = CAP_TIMEOUT_DEFAULT;
	if (err && errsize)
		err[0] = '\0';
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

#define VALUE(name) do { \
		v = value_of(argc, argv, &i, a, name, err, errsize); \
		if (!v) \
			return -1; \
	} while (0)
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			o->help = true;
		} else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
			o->verbose++;
		} else if (!strcmp(a, "--detach")) {
			o->detach = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (is_opt(a, "--device")) {
			VALUE("--device");
			if (have_device)
				return errf(err, errsize, "--device given twice");
			if (cap_parse_vidpid(v, &o->vid, &o->pid))
				return errf(err, errsize, "--device %s: expected VID:PID in hex, "
					    "like 046d:0825", v);
			have_device = true;
		} else if (is_opt(a, "--bus")) {
			VALUE("--bus");
			if (parse_uint(v, 1, 999, &o->bus))
				return errf(err, errsize, "--bus %s: expected a bus number, "
					    "1 to 999", v);
			have_bus = true;
		} else if (is_opt(a, "--address")) {
			VALUE("--address");
			if (parse_uint(v, 1, 127, &o->address))
				return errf(err, errsize, "--address %s: expected a device "
					    "address, 1 to 127", v);
			have_address = true;
		} else if (is_opt(a, "--node")) {
			VALUE("--node");
			if (!*v)
				return errf(err, errsize, "--node needs a path");
			o->node = v;
			have_node = true;
		} else if (!strcmp(a, "-o") || is_opt(a, "--output")) {
			VALUE(a[1] == 'o' ? "-o" : "--output");
			if (!*v)
				return errf(err, errsize, "%s needs a file name", a);
			o->output = strcmp(v, "-") ? v : NULL;
		} else if (!strncmp(a, "-o", 2) && a[2]) {
			o->output = strcmp(a + 2, "-") ? a + 2 : NULL;
		} else if (is_opt(a, "--name")) {
			VALUE("--name");
			if (!cap_name_valid(v))
				return errf(err, errsize, "--name %s: a name is [a-z0-9][a-z0-9-]*, "
					    "at most %d characters", v, PROFILE_NAME_MAX);
			o->name = v;
		} else if (is_opt(a, "--description")) {
			VALUE("--description");
			if (!cap_utf8_valid(v))
				return errf(err, errsize, "--description: not valid UTF-8");
			o->description = v;
		} else if (is_opt(a, "--source")) {
			VALUE("--source");
			if (!cap_utf8_valid(v))
				return errf(err, errsize, "--source: not valid UTF-8");
			o->source = v;
		} else if (is_opt(a, "--speed")) {
			VALUE("--speed");
			o->speed = -1;
			for (int s = PROFILE_SPEED_LOW; s <= PROFILE_SPEED_SUPER; s++)
				if (!strcmp(v, profile_speed_name((enum profile_speed)s)))
					o->speed = s;
			if (o->speed < 0)
				return errf(err, errsize, "--speed %s: expected low, full, high "
					    "or super", v);
		} else if (is_opt(a, "--request-timeout") || is_opt(a, "--timeout")) {
			/* --timeout: the old spelling, kept for a release */
			const char *name = is_opt(a, "--timeout") ? "--timeout" : "--request-timeout";

			VALUE(name);
			if (parse_uint(v, 1, CAP_TIMEOUT_MAX, &o->timeout_ms))
				return errf(err, errsize, "%s %s: expected milliseconds, "
					    "1 to %d", name, v, CAP_TIMEOUT_MAX);
		} else if (a[0] == '-' && a[1]) {
			return errf(err, errsize, "unknown option %s", a);
		} else {
			return errf(err, errsize, "unexpected argument %s (the device is chosen "
				    "with --device, --bus/--address or --node)", a);
		}
#undef VALUE
	}
	if (o->help)
		return 0;
	if (have_bus != have_address)
		return errf(err, errsize, "--bus and --address go together");
	if (have_device + have_bus + have_node > 1)
		return errf(err, errsize, "choose the device one way: --device, "
			    "--bus/--address or --node");
	if (have_device)
		o->sel = CAP_SEL_DEVICE;
	else if (have_bus)
		o->sel = CAP_SEL_BUSADDR;
	else if (have_node)
		o->sel = CAP_SEL_NODE;
	else
		return errf(err, errsize, "no device chosen: give --device VID:PID, "
			    "--bus N --address N or --node /dev/bus/usb/BBB/DDD");
	return 0;
}
