dmaharness-usb-profile 1
name viperboard-0-int-bulk
description "generated for viperboard from usb:v2058p1005d*dc*dsc*dp*ic*isc*ip*in*"
source "dmaharness usbgen: modules.alias entry usb:v2058p1005d*dc*dsc*dp*ic*isc*ip*in* viperboard, layout int-bulk"
speed high

# device: USB 2.00, class 0x00 (per interface) subclass 0x00 protocol 0x00, ep0 64 bytes, 2058:1005 bcdDevice 1.00, strings 1/2/3, 1 configuration
device 12 01 00 02 00 00 00 40 58 20 05 10 00 01 01 02
	03 01

# configuration 1: 1 interface, bmAttributes 0x80, bMaxPower 100 mA, wTotalLength 39
# interface 0 alt 0: class 0xff (vendor specific) subclass 0x00 protocol 0x00, 3 endpoints
# endpoint 0x81 interrupt IN, wMaxPacketSize 64, bInterval 4
# endpoint 0x82 bulk IN, wMaxPacketSize 512, bInterval 0
# endpoint 0x03 bulk OUT, wMaxPacketSize 512, bInterval 0
config 09 02 27 00 01 01 00 80 32 09 04 00 00 03 ff 00
	00 00 07 05 81 03 40 00 04 07 05 82 02 00 02 00
	07 05 03 02 00 02 00

string 0 09 04
string 0x0409 1 "dmaharness"
string 0x0409 2 "viperboard (int-bulk)"
string 0x0409 3 "00000000"

interrupt 0x81 pattern random
