dmaharness-usb-profile 1
name smsusb-0-bulk
description "generated for smsusb from usb:v2013p0257d*dc*dsc*dp*ic*isc*ip*in*"
source "dmaharness usbgen: modules.alias entry usb:v2013p0257d*dc*dsc*dp*ic*isc*ip*in* smsusb, layout bulk"
speed high

# device: USB 2.00, class 0x00 (per interface) subclass 0x00 protocol 0x00, ep0 64 bytes, 2013:0257 bcdDevice 1.00, strings 1/2/3, 1 configuration
device 12 01 00 02 00 00 00 40 13 20 57 02 00 01 01 02
	03 01

# configuration 1: 1 interface, bmAttributes 0x80, bMaxPower 100 mA, wTotalLength 32
# interface 0 alt 0: class 0xff (vendor specific) subclass 0x00 protocol 0x00, 2 endpoints
# endpoint 0x81 bulk IN, wMaxPacketSize 512, bInterval 0
# endpoint 0x02 bulk OUT, wMaxPacketSize 512, bInterval 0
config 09 02 20 00 01 01 00 80 32 09 04 00 00 02 ff 00
	00 00 07 05 81 02 00 02 00 07 05 02 02 00 02 00

string 0 09 04
string 0x0409 1 "dmaharness"
string 0x0409 2 "smsusb (bulk)"
string 0x0409 3 "00000000"
