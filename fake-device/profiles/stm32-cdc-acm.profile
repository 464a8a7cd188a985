dmaharness-usb-profile 1
name stm32-cdc-acm
description "STMicroelectronics STM32 Virtual ComPort (0483:5740): full-speed CDC ACM with header, call management, ACM and union functional descriptors"
source "https://bugzilla.kernel.org/show_bug.cgi?id=212751"
source "fake-device/profiles/sources/06-stm32-virtual-com-port-cdc-acm.lsusb.txt (lsusb -v), converted by harness/devices/lsusb.py"
speed full

# Rebuilt by harness/devices/lsusb.py from fake-device/profiles/sources/06-stm32-virtual-com-port-cdc-acm.lsusb.txt; regenerate it with python3 -m harness.devices.lsusb --regenerate (edit the converter, not this file).
# lsusb cannot show every byte; this profile supplies:
#   - string 0, the LANGID list: 0x0409;
#   - the answers marked 'synthesized:', exactly the requests a capture asks (fake-device/src/plan.c), in its order.
# Target driver: cdc_acm.
# Speed full: inferred from the descriptors (lsusb -v does not print it).

# device: USB 2.00, class 0x02 (CDC) subclass 0x02 protocol 0x00, ep0 64 bytes, 0483:5740 bcdDevice 2.00, strings 1/2/3, 1 configuration
device 12 01 00 02 02 02 00 40 83 04 40 57 00 02 01 02
	03 01

# configuration 1: 2 interfaces, bmAttributes 0xc0, bMaxPower 100 mA, wTotalLength 67
# interface 0 alt 0: class 0x02 (CDC) subclass 0x02 protocol 0x01, 1 endpoint
#   CDC header, 5 bytes
#   CDC call management, 5 bytes
#   CDC ACM, 4 bytes
#   CDC union, 5 bytes
# endpoint 0x82 interrupt IN, wMaxPacketSize 8, bInterval 16
# interface 1 alt 0: class 0x0a (CDC data) subclass 0x00 protocol 0x00, 2 endpoints
# endpoint 0x01 bulk OUT, wMaxPacketSize 64, bInterval 0
# endpoint 0x81 bulk IN, wMaxPacketSize 64, bInterval 0
config 09 02 43 00 02 01 00 c0 32 09 04 00 00 01 02 02
	01 00 05 24 00 10 01 05 24 01 00 01 04 24 02 02
	05 24 06 00 01 07 05 82 03 08 00 10 09 04 01 00
	02 0a 00 00 00 07 05 01 02 40 00 00 07 05 81 02
	40 00 00

# synthesized: string 0 is 0x0409; every string below is as lsusb printed it
string 0 09 04
string 0x0409 1 "STMicroelectronics"
string 0x0409 2 "STM32 Virtual ComPort"
string 0x0409 3 "204E37773453"

# synthesized: GET_LINE_CODING of the CDC ACM interface: 115200 baud, 1 stop bit, no parity, 8 data bits
get 0xa1 0x21 0x0000 0x0000 = 00 c2 01 00 00 00 08
set 0x21 0x20 * * store 0x21
set 0x21 0x22 * * ack
set 0x21 0x23 * * ack

interrupt 0x82 pattern random
