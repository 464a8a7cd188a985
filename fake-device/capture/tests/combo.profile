# A HID keyboard + CDC ACM serial port composite, for the capture tests
# (tests/test_plan.c, tests/fake_test.sh).
dmaharness-usb-profile 1
name combo
description "a keyboard and a serial port"
source "fake-device/capture/tests/combo.profile (hand-written)"
speed full
device 12 01 00 02 00 00 00 40 34 12 78 56 00 01 01 02
	03 01
config 09 02 57 00 03 01 00 a0 32 09 04 00 00 01 03 01
	01 00 09 21 11 01 00 01 22 17 00 07 05 81 03 08
	00 0a 09 04 01 00 01 02 02 01 00 05 24 00 10 01
	04 24 02 02 05 24 06 01 02 07 05 82 03 10 00 10
	09 04 02 00 02 0a 00 00 00 07 05 03 02 40 00 00
	07 05 83 02 40 00 00
string 0 09 04
string 0x0409 1 "Acme"
string 0x0409 2 "Combo Keyboard"
string 0x0409 3 "0001"
get 0x81 0x06 0x2200 0x0000 = 05 01 09 06 a1 01 05 07 19 e0 29 e7 15 00 25 01
	75 01 95 08 81 02 c0
get 0xa1 0x21 0x0000 0x0001 = 80 25 00 00 00 00 08
get 0xc0 0x01 0x0000 0x0000 = 00  # vendor: hand-written, not captured
set 0x21 0x09 * * ack
set 0x21 0x0a * * ack
set 0x21 0x0b * * ack
set 0x21 0x20 * * store 0x21
set 0x21 0x22 * * ack
set 0x21 0x23 * * ack
interrupt 0x81 packet 00 00 04 00 00 00 00  # replayed: not captured
interrupt 0x82 pattern random
