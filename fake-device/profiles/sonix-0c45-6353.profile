dmaharness-usb-profile 1
name sonix-0c45-6353
description "Sonix USB film scanner (0c45:6353, Ion Slides Forever): UVC 1.00 with the output terminal and extension unit before the input terminal, still-image method 2 and a hardware trigger button (uvcvideo registers an input device)"
source "https://lore.kernel.org/linux-media/687d087b-ae4c-6242-2991-800876d74cc4@sorcerersisle.com/"
source "fake-device/profiles/sources/03-sonix-film-scanner-0c45-6353.lsusb.txt (lsusb -v), converted by harness/devices/lsusb.py"
speed high

# Rebuilt by harness/devices/lsusb.py from fake-device/profiles/sources/03-sonix-film-scanner-0c45-6353.lsusb.txt; regenerate it with python3 -m harness.devices.lsusb --regenerate (edit the converter, not this file).
# lsusb cannot show every byte; this profile supplies:
#   - string 0, the LANGID list: 0x0409;
#   - the 5-byte class-specific VideoControl interrupt endpoint descriptor (the configuration's notes say which value);
#   - the answers marked 'synthesized:', exactly the requests a capture asks (fake-device/src/plan.c), in its order.
# Extension unit controls: their lengths and meanings are the vendor's; each answers GET_LEN 4 and zero values (uvcvideo asks them only when a control is used).
# Target driver: uvcvideo.
# Speed high: inferred from the descriptors (lsusb -v does not print it).

# device: USB 2.00, class 0xef (miscellaneous) subclass 0x02 protocol 0x01, ep0 64 bytes, 0c45:6353 bcdDevice 1.50, strings 2/1/0, 1 configuration
device 12 01 00 02 ef 02 01 40 45 0c 53 63 50 01 02 01
	00 01
qualifier 0a 06 00 02 ef 02 01 40 01 00

# configuration 1: 2 interfaces, bmAttributes 0x80, bMaxPower 500 mA, wTotalLength 337
# interface association: interfaces 0-1, class 0x0e (video) subclass 0x03 protocol 0x00
# interface 0 alt 0: class 0x0e (video) subclass 0x01 protocol 0x00, 1 endpoint, iInterface 5
#   VC header, 13 bytes
#   VC output terminal 2, 9 bytes
#   VC extension unit 4, 26 bytes
#   VC input terminal 1, 18 bytes
#   VC processing unit 3, 11 bytes
# endpoint 0x83 interrupt IN, wMaxPacketSize 16, bInterval 6
#   class-specific endpoint descriptor, subtype 0x03, 5 bytes
# interface 1 alt 0: class 0x0e (video) subclass 0x02 protocol 0x00, 0 endpoints, iInterface 5
#   VS input header, 14 bytes
#   VS uncompressed format, 27 bytes
#   VS uncompressed frame, 30 bytes
#   VS uncompressed frame, 30 bytes
#   VS still image frame, 10 bytes
#   VS color matching, 6 bytes
# interface 1 alt 1: class 0x0e (video) subclass 0x02 protocol 0x00, 1 endpoint
# endpoint 0x81 isochronous IN, wMaxPacketSize 128, bInterval 1
# interface 1 alt 2: class 0x0e (video) subclass 0x02 protocol 0x00, 1 endpoint
# endpoint 0x81 isochronous IN, wMaxPacketSize 256, bInterval 1
# interface 1 alt 3: class 0x0e (video) subclass 0x02 protocol 0x00, 1 endpoint
# endpoint 0x81 isochronous IN, wMaxPacketSize 800, bInterval 1
# interface 1 alt 4: class 0x0e (video) subclass 0x02 protocol 0x00, 1 endpoint
# endpoint 0x81 isochronous IN, wMaxPacketSize 800 x2, bInterval 1
# interface 1 alt 5: class 0x0e (video) subclass 0x02 protocol 0x00, 1 endpoint
# endpoint 0x81 isochronous IN, wMaxPacketSize 800 x3, bInterval 1
# interface 1 alt 6: class 0x0e (video) subclass 0x02 protocol 0x00, 1 endpoint
# endpoint 0x81 isochronous IN, wMaxPacketSize 1024 x3, bInterval 1
# note: processing unit 3 has bLength 11 (UVC 1.0, no bmVideoStandards); the bmVideoStandards line lsusb printed after 'Warning: Descriptor too short' is not part of it
# note: the class-specific VideoControl interrupt endpoint descriptor after endpoint 0x83 (05 25 03 10 00) is not in the listing (lsusb does not print it); its wMaxTransferSize is set to the endpoint's wMaxPacketSize, 16
config 09 02 51 01 02 01 00 80 fa 08 0b 00 02 0e 03 00
	05 09 04 00 00 01 0e 01 00 05 0d 24 01 00 01 4d
	00 c0 e1 e4 00 01 01 09 24 03 02 01 01 00 04 00
	1a 24 06 04 70 33 f0 28 11 63 2e 4a ba 2c 68 90
	eb 33 40 16 08 01 03 01 0f 00 12 24 02 01 01 02
	00 00 00 00 00 00 00 00 03 0e 00 00 0b 24 05 03
	01 00 00 02 3f 05 00 07 05 83 03 10 00 06 05 25
	03 10 00 09 04 01 00 00 0e 02 00 05 0e 24 01 01
	75 00 81 00 02 02 01 01 01 00 1b 24 04 01 02 59
	55 59 32 00 00 10 00 80 00 00 aa 00 38 9b 71 10
	01 00 00 00 00 1e 24 05 01 00 50 02 88 01 00 40
	6d 07 00 40 6d 07 00 ec 07 00 15 16 05 00 01 15
	16 05 00 1e 24 05 02 00 a0 04 28 06 00 00 e7 09
	00 00 e7 09 00 60 3f 00 80 84 1e 00 01 80 84 1e
	00 0a 24 03 00 01 a0 04 28 06 00 06 24 0d 01 01
	04 09 04 01 01 01 0e 02 00 00 07 05 81 05 80 00
	01 09 04 01 02 01 0e 02 00 00 07 05 81 05 00 01
	01 09 04 01 03 01 0e 02 00 00 07 05 81 05 20 03
	01 09 04 01 04 01 0e 02 00 00 07 05 81 05 20 0b
	01 09 04 01 05 01 0e 02 00 00 07 05 81 05 20 13
	01 09 04 01 06 01 0e 02 00 00 07 05 81 05 00 14
	01

# synthesized: string 0 is 0x0409; every string below is as lsusb printed it
string 0 09 04
string 0x0409 2 "Sonix Technology Co., Ltd."
string 0x0409 1 "USB film scanner "
string 0x0409 5 "USB film scanner "

# synthesized: extension unit 4 control 1: GET_INFO 0x03, GET_LEN 4, values 0
get 0xa1 0x86 0x0100 0x0400 = 03
get 0xa1 0x85 0x0100 0x0400 = 04 00
get 0xa1 0x81 0x0100 0x0400 = 00 00 00 00
get 0xa1 0x82 0x0100 0x0400 = 00 00 00 00
get 0xa1 0x83 0x0100 0x0400 = 00 00 00 00
get 0xa1 0x84 0x0100 0x0400 = 00 00 00 00
get 0xa1 0x87 0x0100 0x0400 = 00 00 00 00
# synthesized: extension unit 4 control 2: GET_INFO 0x03, GET_LEN 4, values 0
get 0xa1 0x86 0x0200 0x0400 = 03
get 0xa1 0x85 0x0200 0x0400 = 04 00
get 0xa1 0x81 0x0200 0x0400 = 00 00 00 00
get 0xa1 0x82 0x0200 0x0400 = 00 00 00 00
get 0xa1 0x83 0x0200 0x0400 = 00 00 00 00
get 0xa1 0x84 0x0200 0x0400 = 00 00 00 00
get 0xa1 0x87 0x0200 0x0400 = 00 00 00 00
# synthesized: extension unit 4 control 3: GET_INFO 0x03, GET_LEN 4, values 0
get 0xa1 0x86 0x0300 0x0400 = 03
get 0xa1 0x85 0x0300 0x0400 = 04 00
get 0xa1 0x81 0x0300 0x0400 = 00 00 00 00
get 0xa1 0x82 0x0300 0x0400 = 00 00 00 00
get 0xa1 0x83 0x0300 0x0400 = 00 00 00 00
get 0xa1 0x84 0x0300 0x0400 = 00 00 00 00
get 0xa1 0x87 0x0300 0x0400 = 00 00 00 00
# synthesized: extension unit 4 control 4: GET_INFO 0x03, GET_LEN 4, values 0
get 0xa1 0x86 0x0400 0x0400 = 03
get 0xa1 0x85 0x0400 0x0400 = 04 00
get 0xa1 0x81 0x0400 0x0400 = 00 00 00 00
get 0xa1 0x82 0x0400 0x0400 = 00 00 00 00
get 0xa1 0x83 0x0400 0x0400 = 00 00 00 00
get 0xa1 0x84 0x0400 0x0400 = 00 00 00 00
get 0xa1 0x87 0x0400 0x0400 = 00 00 00 00
# synthesized: camera terminal 1 auto-exposure mode (selector 0x02, 1 byte): GET_INFO 0x03, bitmap, GET_RES 0x09 (manual, aperture priority), default 0x08
get 0xa1 0x86 0x0200 0x0100 = 03
get 0xa1 0x85 0x0200 0x0100 = 01 00
get 0xa1 0x81 0x0200 0x0100 = 08
get 0xa1 0x82 0x0200 0x0100 = 01
get 0xa1 0x83 0x0200 0x0100 = 08
get 0xa1 0x84 0x0200 0x0100 = 09
get 0xa1 0x87 0x0200 0x0100 = 08
# synthesized: camera terminal 1 auto-exposure priority (selector 0x03, 1 byte): GET_INFO 0x03, 0..1, default 0
get 0xa1 0x86 0x0300 0x0100 = 03
get 0xa1 0x85 0x0300 0x0100 = 01 00
get 0xa1 0x81 0x0300 0x0100 = 00
get 0xa1 0x82 0x0300 0x0100 = 00
get 0xa1 0x83 0x0300 0x0100 = 01
get 0xa1 0x84 0x0300 0x0100 = 01
get 0xa1 0x87 0x0300 0x0100 = 00
# synthesized: camera terminal 1 exposure time (absolute) (selector 0x04, 4 bytes): GET_INFO 0x0b, 3..2047 (100 us), default 250
get 0xa1 0x86 0x0400 0x0100 = 0b
get 0xa1 0x85 0x0400 0x0100 = 04 00
get 0xa1 0x81 0x0400 0x0100 = fa 00 00 00
get 0xa1 0x82 0x0400 0x0100 = 03 00 00 00
get 0xa1 0x83 0x0400 0x0100 = ff 07 00 00
get 0xa1 0x84 0x0400 0x0100 = 01 00 00 00
get 0xa1 0x87 0x0400 0x0100 = fa 00 00 00
# synthesized: processing unit 3 brightness (selector 0x02, 2 bytes): GET_INFO 0x03, -64..64, default 0
get 0xa1 0x86 0x0200 0x0300 = 03
get 0xa1 0x85 0x0200 0x0300 = 02 00
get 0xa1 0x81 0x0200 0x0300 = 00 00
get 0xa1 0x82 0x0200 0x0300 = c0 ff
get 0xa1 0x83 0x0200 0x0300 = 40 00
get 0xa1 0x84 0x0200 0x0300 = 01 00
get 0xa1 0x87 0x0200 0x0300 = 00 00
# synthesized: processing unit 3 contrast (selector 0x03, 2 bytes): GET_INFO 0x03, 0..64, default 32
get 0xa1 0x86 0x0300 0x0300 = 03
get 0xa1 0x85 0x0300 0x0300 = 02 00
get 0xa1 0x81 0x0300 0x0300 = 20 00
get 0xa1 0x82 0x0300 0x0300 = 00 00
get 0xa1 0x83 0x0300 0x0300 = 40 00
get 0xa1 0x84 0x0300 0x0300 = 01 00
get 0xa1 0x87 0x0300 0x0300 = 20 00
# synthesized: processing unit 3 hue (selector 0x06, 2 bytes): GET_INFO 0x03, -40..40, default 0
get 0xa1 0x86 0x0600 0x0300 = 03
get 0xa1 0x85 0x0600 0x0300 = 02 00
get 0xa1 0x81 0x0600 0x0300 = 00 00
get 0xa1 0x82 0x0600 0x0300 = d8 ff
get 0xa1 0x83 0x0600 0x0300 = 28 00
get 0xa1 0x84 0x0600 0x0300 = 01 00
get 0xa1 0x87 0x0600 0x0300 = 00 00
# synthesized: processing unit 3 saturation (selector 0x07, 2 bytes): GET_INFO 0x03, 0..128, default 64
get 0xa1 0x86 0x0700 0x0300 = 03
get 0xa1 0x85 0x0700 0x0300 = 02 00
get 0xa1 0x81 0x0700 0x0300 = 40 00
get 0xa1 0x82 0x0700 0x0300 = 00 00
get 0xa1 0x83 0x0700 0x0300 = 80 00
get 0xa1 0x84 0x0700 0x0300 = 01 00
get 0xa1 0x87 0x0700 0x0300 = 40 00
# synthesized: processing unit 3 sharpness (selector 0x08, 2 bytes): GET_INFO 0x03, 0..7, default 3
get 0xa1 0x86 0x0800 0x0300 = 03
get 0xa1 0x85 0x0800 0x0300 = 02 00
get 0xa1 0x81 0x0800 0x0300 = 03 00
get 0xa1 0x82 0x0800 0x0300 = 00 00
get 0xa1 0x83 0x0800 0x0300 = 07 00
get 0xa1 0x84 0x0800 0x0300 = 01 00
get 0xa1 0x87 0x0800 0x0300 = 03 00
# synthesized: processing unit 3 gamma (selector 0x09, 2 bytes): GET_INFO 0x03, 72..500, default 100
get 0xa1 0x86 0x0900 0x0300 = 03
get 0xa1 0x85 0x0900 0x0300 = 02 00
get 0xa1 0x81 0x0900 0x0300 = 64 00
get 0xa1 0x82 0x0900 0x0300 = 48 00
get 0xa1 0x83 0x0900 0x0300 = f4 01
get 0xa1 0x84 0x0900 0x0300 = 01 00
get 0xa1 0x87 0x0900 0x0300 = 64 00
# synthesized: processing unit 3 backlight compensation (selector 0x01, 2 bytes): GET_INFO 0x03, 0..1, default 0
get 0xa1 0x86 0x0100 0x0300 = 03
get 0xa1 0x85 0x0100 0x0300 = 02 00
get 0xa1 0x81 0x0100 0x0300 = 00 00
get 0xa1 0x82 0x0100 0x0300 = 00 00
get 0xa1 0x83 0x0100 0x0300 = 01 00
get 0xa1 0x84 0x0100 0x0300 = 01 00
get 0xa1 0x87 0x0100 0x0300 = 00 00
# synthesized: processing unit 3 power line frequency (selector 0x05, 1 byte): GET_INFO 0x03, 0..2, default 1 (50 Hz)
get 0xa1 0x86 0x0500 0x0300 = 03
get 0xa1 0x85 0x0500 0x0300 = 01 00
get 0xa1 0x81 0x0500 0x0300 = 01
get 0xa1 0x82 0x0500 0x0300 = 00
get 0xa1 0x83 0x0500 0x0300 = 02
get 0xa1 0x84 0x0500 0x0300 = 01
get 0xa1 0x87 0x0500 0x0300 = 01
# synthesized: video probe control of interface 1 (26 bytes, the length for UVC 1.00): format 1, frame 1 (592x392), interval 333333, dwMaxVideoFrameSize 519168, dwMaxPayloadTransferSize 3072 (the largest isochronous packet), wDelay 50; GET_MIN and GET_MAX carry the shortest (333333) and longest (333333) interval
get 0xa1 0x81 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 ec 07 00 00 0c 00 00
get 0xa1 0x82 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 ec 07 00 00 0c 00 00
get 0xa1 0x83 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 ec 07 00 00 0c 00 00
get 0xa1 0x87 0x0100 0x0001 = 00 00 01 01 15 16 05 00 00 00 00 00 00 00 00 00
	32 00 00 ec 07 00 00 0c 00 00
set 0x21 0x01 * * store 0x81

interrupt 0x83 pattern uvc-control
