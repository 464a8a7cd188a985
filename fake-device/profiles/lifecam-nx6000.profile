dmaharness-usb-profile 1
name lifecam-nx6000
description "Microsoft LifeCam NX-6000 (045e:00f8): UVC 1.00 + USB audio, a selector unit, an 8-byte status endpoint, a VideoStreaming header total that leaves out its color-matching descriptor; uvcvideo applies UVC_QUIRK_PROBE_MINMAX"
source "video4linux-list mail, Gregor Jasny, 2008-06-26, Message-ID <20080626194804.GB18818@vidsoft.de> (no web address known)"
source "fake-device/profiles/sources/04-microsoft-lifecam-nx6000.lsusb.txt (lsusb -v), converted by harness/devices/lsusb.py"
speed high

# Rebuilt by harness/devices/lsusb.py from fake-device/profiles/sources/04-microsoft-lifecam-nx6000.lsusb.txt; regenerate it with python3 -m harness.devices.lsusb --regenerate (edit the converter, not this file).
# lsusb cannot show every byte; this profile supplies:
#   - string 0, the LANGID list: 0x0409;
#   - the 5-byte class-specific VideoControl interrupt endpoint descriptor (the configuration's notes say which value);
#   - the answers marked 'synthesized:', exactly the requests a capture asks (fake-device/src/plan.c), in its order.
# Target driver: uvcvideo (interfaces 0-1; the audio interfaces 2-3 are snd-usb-audio's, no UAC answers).
# Speed high: inferred from the descriptors (lsusb -v does not print it).

# device: USB 2.00, class 0xef (miscellaneous) subclass 0x02 protocol 0x01, ep0 64 bytes, 045e:00f8 bcdDevice 1.00, strings 1/2/0, 1 configuration
device 12 01 00 02 ef 02 01 40 5e 04 f8 00 00 01 01 02
	00 01
qualifier 0a 06 00 02 ef 02 01 08 01 00

# configuration 1: 4 interfaces, bmAttributes 0x80, bMaxPower 500 mA, wTotalLength 555
# interface association: interfaces 0-1, class 0x0e (video) subclass 0x03 protocol 0x00
# interface 0 alt 0: class 0x0e (video) subclass 0x01 protocol 0x00, 1 endpoint, iInterface 2
#   VC header, 13 bytes
#   VC input terminal 1, 17 bytes
#   VC output terminal 3, 9 bytes
#   VC selector unit 4, 7 bytes
#   VC processing unit 5, 11 bytes
# endpoint 0x83 interrupt IN, wMaxPacketSize 8, bInterval 16
#   class-specific endpoint descriptor, subtype 0x03, 5 bytes
# interface 1 alt 0: class 0x0e (video) subclass 0x02 protocol 0x00, 0 endpoints
#   VS input header, 14 bytes
#   VS MJPEG format, 11 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS MJPEG frame, 30 bytes
#   VS color matching, 6 bytes
# interface 1 alt 1: class 0x0e (video) subclass 0x02 protocol 0x00, 1 endpoint
# endpoint 0x81 isochronous IN, wMaxPacketSize 1020 x3, bInterval 1
# interface association: interfaces 2-3, class 0x01 (audio) subclass 0x01 protocol 0x00
# interface 2 alt 0: class 0x01 (audio) subclass 0x01 protocol 0x00, 0 endpoints
#   class-specific interface descriptor, subtype 0x01, 9 bytes
#   class-specific interface descriptor, subtype 0x02, 12 bytes
#   class-specific interface descriptor, subtype 0x03, 9 bytes
#   class-specific interface descriptor, subtype 0x06, 11 bytes
# interface 3 alt 0: class 0x01 (audio) subclass 0x02 protocol 0x00, 0 endpoints
# interface 3 alt 1: class 0x01 (audio) subclass 0x02 protocol 0x00, 1 endpoint
#   class-specific interface descriptor, subtype 0x01, 7 bytes
#   class-specific interface descriptor, subtype 0x02, 35 bytes
# endpoint 0x84 isochronous IN, wMaxPacketSize 128, bInterval 4
#   class-specific endpoint descriptor, subtype 0x01, 7 bytes
# note: processing unit 5 has bLength 11 (UVC 1.0, no bmVideoStandards); the bmVideoStandards line lsusb printed after 'Warning: Descriptor too short' is not part of it
# note: the class-specific VideoControl interrupt endpoint descriptor after endpoint 0x83 (05 25 03 08 00) is not in the listing (lsusb does not print it); its wMaxTransferSize is set to the endpoint's wMaxPacketSize, 8
# note: kept as the device has it: the VideoStreaming input header says wTotalLength 295 but its class-specific descriptors add up to 301
config 09 02 2b 02 04 01 00 80 fa 08 0b 00 02 0e 03 00
	02 09 04 00 00 01 0e 01 00 02 0d 24 01 00 01 39
	00 80 c3 c9 01 01 01 11 24 02 01 01 02 00 00 00
	00 00 00 00 00 02 00 0a 09 24 03 03 01 01 00 05
	00 07 24 04 04 01 01 00 0b 24 05 05 04 00 00 02
	7f 55 00 07 05 83 03 08 00 10 05 25 03 08 00 09
	04 01 00 00 0e 02 00 00 0e 24 01 01 27 01 81 00
	03 00 00 00 01 0b 0b 24 06 01 09 01 01 00 00 00
	00 1e 24 07 01 00 60 01 20 01 00 80 e6 02 00 80
	e6 02 00 18 03 00 15 16 05 00 01 15 16 05 00 1e
	24 07 02 00 40 06 b0 04 00 a0 bb 0d 00 a0 bb 0d
	00 98 3a 00 55 58 14 00 01 55 58 14 00 1e 24 07
	03 00 00 05 00 04 00 00 60 09 00 00 60 09 00 00
	28 00 55 58 14 00 01 55 58 14 00 1e 24 07 04 00
	00 04 00 03 00 00 a0 05 00 00 a0 05 00 00 18 00
	55 58 14 00 01 55 58 14 00 1e 24 07 05 00 20 03
	58 02 00 a0 bb 0d 00 a0 bb 0d 00 a6 0e 00 15 16
	05 00 01 15 16 05 00 1e 24 07 06 00 80 02 e0 01
	00 00 ca 08 00 00 ca 08 00 60 09 00 15 16 05 00
	01 15 16 05 00 1e 24 07 07 00 40 01 f0 00 00 80
	32 02 00 80 32 02 00 58 02 00 15 16 05 00 01 15
	16 05 00 1e 24 07 08 00 b0 00 90 00 00 a0 b9 00
	00 a0 b9 00 00 c6 00 00 15 16 05 00 01 15 16 05
	00 1e 24 07 09 00 a0 00 78 00 00 a0 8c 00 00 a0
	8c 00 00 96 00 00 15 16 05 00 01 15 16 05 00 06
	24 0d 01 01 04 09 04 01 01 01 0e 02 00 00 07 05
	81 05 fc 13 01 08 0b 02 02 01 01 00 00 09 04 02
	00 00 01 01 00 00 09 24 01 00 01 29 00 01 03 0c
	24 02 01 01 02 00 01 00 00 00 00 09 24 03 02 01
	01 00 03 00 0b 24 06 03 01 02 00 00 43 00 00 09
	04 03 00 00 01 02 00 00 09 04 03 01 01 01 02 00
	00 07 24 01 02 01 01 00 23 24 02 01 01 02 18 09
	80 bb 00 44 ac 00 00 7d 00 c0 5d 00 22 56 00 80
	3e 00 e0 2e 00 11 2b 00 40 1f 00 09 05 84 05 80
	00 04 00 00 07 25 01 01 00 00 00

# synthesized: string 0 is 0x0409; every string below is as lsusb printed it
string 0 09 04
string 0x0409 1 ""
string 0x0409 2 "Microsoft® LifeCam NX-6000"

# synthesized: camera terminal 1 zoom (absolute) (selector 0x0b, 2 bytes): GET_INFO 0x03, 100..500, default 100
get 0xa1 0x86 0x0b00 0x0100 = 03
get 0xa1 0x85 0x0b00 0x0100 = 02 00
get 0xa1 0x81 0x0b00 0x0100 = 64 00
get 0xa1 0x82 0x0b00 0x0100 = 64 00
get 0xa1 0x83 0x0b00 0x0100 = f4 01
get 0xa1 0x84 0x0b00 0x0100 = 01 00
get 0xa1 0x87 0x0b00 0x0100 = 64 00
# synthesized: camera terminal 1 pan/tilt (absolute) (selector 0x0d, 8 bytes): GET_INFO 0x03, pan and tilt -36000..36000 step 3600 (arc second), default 0
get 0xa1 0x86 0x0d00 0x0100 = 03
get 0xa1 0x85 0x0d00 0x0100 = 08 00
get 0xa1 0x81 0x0d00 0x0100 = 00 00 00 00 00 00 00 00
get 0xa1 0x82 0x0d00 0x0100 = 60 73 ff ff 60 73 ff ff
get 0xa1 0x83 0x0d00 0x0100 = a0 8c 00 00 a0 8c 00 00
get 0xa1 0x84 0x0d00 0x0100 = 10 0e 00 00 10 0e 00 00
get 0xa1 0x87 0x0d00 0x0100 = 00 00 00 00 00 00 00 00
# synthesized: processing unit 5 brightness (selector 0x02, 2 bytes): GET_INFO 0x03, -64..64, default 0
get 0xa1 0x86 0x0200 0x0500 = 03
get 0xa1 0x85 0x0200 0x0500 = 02 00
get 0xa1 0x81 0x0200 0x0500 = 00 00
get 0xa1 0x82 0x0200 0x0500 = c0 ff
get 0xa1 0x83 0x0200 0x0500 = 40 00
get 0xa1 0x84 0x0200 0x0500 = 01 00
get 0xa1 0x87 0x0200 0x0500 = 00 00
# synthesized: processing unit 5 contrast (selector 0x03, 2 bytes): GET_INFO 0x03, 0..64, default 32
get 0xa1 0x86 0x0300 0x0500 = 03
get 0xa1 0x85 0x0300 0x0500 = 02 00
get 0xa1 0x81 0x0300 0x0500 = 20 00
get 0xa1 0x82 0x0300 0x0500 = 00 00
get 0xa1 0x83 0x0300 0x0500 = 40 00
get 0xa1 0x84 0x0300 0x0500 = 01 00
get 0xa1 0x87 0x0300 0x0500 = 20 00
# synthesized: processing unit 5 hue (selector 0x06, 2 bytes): GET_INFO 0x03, -40..40, default 0
get 0xa1 0x86 0x0600 0x0500 = 03
get 0xa1 0x85 0x0600 0x0500 = 02 00
get 0xa1 0x81 0x0600 0x0500 = 00 00
get 0xa1 0x82 0x0600 0x0500 = d8 ff
get 0xa1 0x83 0x0600 0x0500 = 28 00
get 0xa1 0x84 0x0600 0x0500 = 01 00
get 0xa1 0x87 0x0600 0x0500 = 00 00
# synthesized: processing unit 5 saturation (selector 0x07, 2 bytes): GET_INFO 0x03, 0..128, default 64
get 0xa1 0x86 0x0700 0x0500 = 03
get 0xa1 0x85 0x0700 0x0500 = 02 00
get 0xa1 0x81 0x0700 0x0500 = 40 00
get 0xa1 0x82 0x0700 0x0500 = 00 00
get 0xa1 0x83 0x0700 0x0500 = 80 00
get 0xa1 0x84 0x0700 0x0500 = 01 00
get 0xa1 0x87 0x0700 0x0500 = 40 00
# synthesized: processing unit 5 sharpness (selector 0x08, 2 bytes): GET_INFO 0x03, 0..7, default 3
get 0xa1 0x86 0x0800 0x0500 = 03
get 0xa1 0x85 0x0800 0x0500 = 02 00
get 0xa1 0x81 0x0800 0x0500 = 03 00
get 0xa1 0x82 0x0800 0x0500 = 00 00
get 0xa1 0x83 0x0800 0x0500 = 07 00
get 0xa1 0x84 0x0800 0x0500 = 01 00
get 0xa1 0x87 0x0800 0x0500 = 03 00
# synthesized: processing unit 5 gamma (selector 0x09, 2 bytes): GET_INFO 0x03, 72..500, default 100
get 0xa1 0x86 0x0900 0x0500 = 03
get 0xa1 0x85 0x0900 0x0500 = 02 00
get 0xa1 0x81 0x0900 0x0500 = 64 00
get 0xa1 0x82 0x0900 0x0500 = 48 00
get 0xa1 0x83 0x0900 0x0500 = f4 01
get 0xa1 0x84 0x0900 0x0500 = 01 00
get 0xa1 0x87 0x0900 0x0500 = 64 00
# synthesized: processing unit 5 white balance temperature (selector 0x0a, 2 bytes): GET_INFO 0x0b, 2800..6500 K, default 4600
get 0xa1 0x86 0x0a00 0x0500 = 0b
get 0xa1 0x85 0x0a00 0x0500 = 02 00
get 0xa1 0x81 0x0a00 0x0500 = f8 11
get 0xa1 0x82 0x0a00 0x0500 = f0 0a
get 0xa1 0x83 0x0a00 0x0500 = 64 19
get 0xa1 0x84 0x0a00 0x0500 = 01 00
get 0xa1 0x87 0x0a00 0x0500 = f8 11
# synthesized: processing unit 5 backlight compensation (selector 0x01, 2 bytes): GET_INFO 0x03, 0..1, default 0
get 0xa1 0x86 0x0100 0x0500 = 03
get 0xa1 0x85 0x0100 0x0500 = 02 00
get 0xa1 0x81 0x0100 0x0500 = 00 00
get 0xa1 0x82 0x0100 0x0500 = 00 00
get 0xa1 0x83 0x0100 0x0500 = 01 00
get 0xa1 0x84 0x0100 0x0500 = 01 00
get 0xa1 0x87 0x0100 0x0500 = 00 00
# synthesized: processing unit 5 power line frequency (selector 0x05, 1 byte): GET_INFO 0x03, 0..2, default 1 (50 Hz)
get 0xa1 0x86 0x0500 0x0500 = 03
get 0xa1 0x85 0x0500 0x0500 = 01 00
get 0xa1 0x81 0x0500 0x0500 = 01
get 0xa1 0x82 0x0500 0x0500 = 00
get 0xa1 0x83 0x0500 0x0500 = 02
get 0xa1 0x84 0x0500 0x0500 = 01
get 0xa1 0x87 0x0500 0x0500 = 01
# synthesized: processing unit 5 white balance temperature, auto (selector 0x0b, 1 byte): GET_INFO 0x03, 0..1, default 1
get 0xa1 0x86 0x0b00 0x0500 = 03
get 0xa1 0x85 0x0b00 0x0500 = 01 00
get 0xa1 0x81 0x0b00 0x0500 = 01
get 0xa1 0x82 0x0b00 0x0500 = 00
get 0xa1 0x83 0x0b00 0x0500 = 01
get 0xa1 0x84 0x0b00 0x0500 = 01
get 0xa1 0x87 0x0b00 0x0500 = 01
# synthesized: processing unit 5 digital multiplier (selector 0x0e, 2 bytes): GET_INFO 0x03, 100..400, default 100
get 0xa1 0x86 0x0e00 0x0500 = 03
get 0xa1 0x85 0x0e00 0x0500 = 02 00
get 0xa1 0x81 0x0e00 0x0500 = 64 00
get 0xa1 0x82 0x0e00 0x0500 = 64 00
get 0xa1 0x83 0x0e00 0x0500 = 90 01
get 0xa1 0x84 0x0e00 0x0500 = 01 00
get 0xa1 0x87 0x0e00 0x0500 = 64 00
# synthesized: video probe control of interface 1 (26 bytes, the length for UVC 1.00): format 1, frame 1 (352x288), interval 333333, dwMaxVideoFrameSize 202752, dwMaxPayloadTransferSize 3060 (the largest isochronous packet), wDelay 50; GET_MIN and GET_MAX carry the shortest (333333) and longest (333333) interval
get 0xa1 0x81 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 18 03 00 f4 0b 00 00
get 0xa1 0x82 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 18 03 00 f4 0b 00 00
get 0xa1 0x83 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 18 03 00 f4 0b 00 00
get 0xa1 0x87 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 18 03 00 f4 0b 00 00
set 0x21 0x01 * * store 0x81

interrupt 0x83 pattern uvc-control
