dmaharness-usb-profile 1
name logitech-k120
description "Logitech Keyboard K120 (046d:c31c): low-speed HID, a boot keyboard (interface 0) and consumer/system controls (interface 1); the report descriptors are reconstructions of the listing's lengths (lsusb showed them UNAVAILABLE)"
source "https://mailman.alsa-project.org/hyperkitty/list/alsa-devel@alsa-project.org/message/QOQNQN4WL2I2PP2U7FFNRJAS5H6HDHGN/"
source "fake-device/profiles/sources/05-logitech-k120-keyboard.lsusb.txt (lsusb -v), converted by harness/devices/lsusb.py"
speed low

# Rebuilt by harness/devices/lsusb.py from fake-device/profiles/sources/05-logitech-k120-keyboard.lsusb.txt; regenerate it with python3 -m harness.devices.lsusb --regenerate (edit the converter, not this file).
# lsusb cannot show every byte; this profile supplies:
#   - string 0, the LANGID list: 0x0409;
#   - the answers marked 'synthesized:', exactly the requests a capture asks (fake-device/src/plan.c), in its order.
# Target driver: usbhid (hid-generic).

# device: USB 1.10, class 0x00 (per interface) subclass 0x00 protocol 0x00, ep0 8 bytes, 046d:c31c bcdDevice 64.00, strings 1/2/0, 1 configuration
device 12 01 10 01 00 00 00 08 6d 04 1c c3 00 64 01 02
	00 01

# configuration 1: 2 interfaces, bmAttributes 0xa0, bMaxPower 90 mA, wTotalLength 59, iConfiguration 3
# interface 0 alt 0: class 0x03 (HID) subclass 0x01 protocol 0x01, 1 endpoint, iInterface 2
#   HID descriptor, 9 bytes
# endpoint 0x81 interrupt IN, wMaxPacketSize 8, bInterval 10
# interface 1 alt 0: class 0x03 (HID) subclass 0x00 protocol 0x00, 1 endpoint, iInterface 2
#   HID descriptor, 9 bytes
# endpoint 0x82 interrupt IN, wMaxPacketSize 4, bInterval 255
config 09 02 3b 00 02 01 03 a0 2d 09 04 00 00 01 03 01
	01 02 09 21 10 01 00 01 22 41 00 07 05 81 03 08
	00 0a 09 04 01 00 01 03 00 00 02 09 21 10 01 00
	01 22 9f 00 07 05 82 03 04 00 ff

# synthesized: string 0 is 0x0409; every string below is as lsusb printed it
string 0 09 04
string 0x0409 1 "Logitech"
string 0x0409 2 "USB Keyboard"
string 0x0409 3 "U64.00_B0001"

# synthesized: the report descriptor of HID interface 0 (65 bytes, the listing's wDescriptorLength; lsusb showed it UNAVAILABLE): the standard boot keyboard report descriptor (HID 1.11 appendix B.1 layout with key codes 0..255): 8 modifier bits, a reserved byte, 5 LED outputs, 6 key codes
get 0x81 0x06 0x2200 0x0000 = 05 01 09 06 a1 01 05 07 19 e0 29 e7 15 00 25 01
	75 01 95 08 81 02 95 01 75 08 81 01 95 05 75 01
	05 08 19 01 29 05 91 02 95 01 75 03 91 01 95 06
	75 08 15 00 26 ff 00 05 07 19 00 2a ff 00 81 00
	c0
# synthesized: the report descriptor of HID interface 1 (159 bytes, the listing's wDescriptorLength; lsusb showed it UNAVAILABLE): not the K120's own bytes (never published): report 1, 24 consumer keys as bits; report 2, system power down/sleep/wake up; report 3, one 16-bit consumer usage; report 4, vendor page 0xff00 (3 bytes in and out); inputs fit the endpoint's 4 bytes
get 0x81 0x06 0x2200 0x0001 = 05 0c 09 01 a1 01 85 01 15 00 25 01 75 01 95 18
	09 e2 09 e9 09 ea 09 cd 09 b7 09 b6 09 b5 09 b8
	09 b3 09 b4 09 30 0a 83 01 0a 8a 01 0a 92 01 0a
	94 01 0a 96 01 0a a7 01 0a 21 02 0a 23 02 0a 24
	02 0a 25 02 0a 26 02 0a 27 02 0a 2a 02 81 02 c0
	05 01 09 80 a1 01 85 02 19 81 29 83 15 00 25 01
	75 01 95 03 81 02 95 05 81 01 c0 05 0c 09 01 a1
	01 85 03 19 00 2a 3c 02 15 00 26 3c 02 95 01 75
	10 81 00 c0 06 00 ff 09 01 a1 01 85 04 15 00 26
	ff 00 75 08 95 03 09 01 81 02 09 01 91 02 c0
set 0x21 0x09 * * ack
set 0x21 0x0a * * ack
set 0x21 0x0b * * ack

interrupt 0x81 pattern hid
interrupt 0x82 pattern hid
