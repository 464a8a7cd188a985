dmaharness-usb-profile 1
name rtl8153
description "Realtek RTL8153 Gigabit Ethernet (0bda:8153): SuperSpeed, configuration 1 vendor (r8152), configuration 2 CDC ECM; replayed as an ECM device: r8152's vendor register reads stall, so Linux keeps configuration 2 and an ECM driver binds"
source "blog post by Bart Prokop, \"Saturday, 19th October 2024\" (a Markdown file in a public GitHub repository; no web address known)"
source "fake-device/profiles/sources/07-realtek-rtl8153-ethernet.lsusb.txt (lsusb -v), converted by harness/devices/lsusb.py"
speed super

# Rebuilt by harness/devices/lsusb.py from fake-device/profiles/sources/07-realtek-rtl8153-ethernet.lsusb.txt; regenerate it with python3 -m harness.devices.lsusb --regenerate (edit the converter, not this file).
# lsusb cannot show every byte; this profile supplies:
#   - string 0, the LANGID list: 0x0409;
#   - the SuperSpeed endpoint companions' bmAttributes and wBytesPerInterval (the configurations' notes);
# Lines marked 'hand-written:' answer requests a capture never sends (FORMAT.md); a capture of the replay does not give them back.
# Target driver: r8153_ecm (configuration 2, CDC ECM through cdc_ether's usbnet_cdc_bind); cdc_ether itself on 6.1 built without r8152.
# Linux picks configuration 2 (CDC ECM): usb_choose_configuration() prefers the first configuration whose first interface is not vendor-specific, and r8152-cfgselector does not switch to configuration 1 when the version read fails; with CONFIG_USB_RTL8152 set, cdc_ether leaves 0bda:8153 to r8153_ecm (CONFIG_USB_RTL8153_ECM)
# Speed super: inferred from the descriptors (lsusb -v does not print it).

# device: USB 3.00, class 0x00 (per interface) subclass 0x00 protocol 0x00, ep0 9 bytes, 0bda:8153 bcdDevice 30.00, strings 1/2/6, 2 configurations
device 12 01 00 03 00 00 00 09 da 0b 53 81 00 30 01 02
	06 02

# configuration 1: 1 interface, bmAttributes 0xa0, bMaxPower 288 mA, wTotalLength 57
# interface 0 alt 0: class 0xff (vendor specific) subclass 0xff protocol 0x00, 3 endpoints
# endpoint 0x81 bulk IN, wMaxPacketSize 1024, bInterval 0
# descriptor type 0x30, 6 bytes
# endpoint 0x02 bulk OUT, wMaxPacketSize 1024, bInterval 0
# descriptor type 0x30, 6 bytes
# endpoint 0x83 interrupt IN, wMaxPacketSize 2, bInterval 8
# descriptor type 0x30, 6 bytes
# note: endpoint 0x81: SuperSpeed companion 06 30 03 00 00 00 (lsusb printed bMaxBurst 3 only: bmAttributes 0, wBytesPerInterval 0)
# note: endpoint 0x02: SuperSpeed companion 06 30 03 00 00 00 (lsusb printed bMaxBurst 3 only: bmAttributes 0, wBytesPerInterval 0)
# note: endpoint 0x83: SuperSpeed companion 06 30 00 00 02 00 (lsusb printed bMaxBurst 0 only: bmAttributes 0, wBytesPerInterval 2)
config 09 02 39 00 01 01 00 a0 24 09 04 00 00 03 ff ff
	00 00 07 05 81 02 00 04 00 06 30 03 00 00 00 07
	05 02 02 00 04 00 06 30 03 00 00 00 07 05 83 03
	02 00 08 06 30 00 00 02 00

# configuration 2: 2 interfaces, bmAttributes 0xa0, bMaxPower 288 mA, wTotalLength 98
# interface 0 alt 0: class 0x02 (CDC) subclass 0x06 protocol 0x00, 1 endpoint, iInterface 5
#   CDC header, 5 bytes
#   CDC union, 5 bytes
#   CDC ethernet networking, 13 bytes
# endpoint 0x83 interrupt IN, wMaxPacketSize 16, bInterval 8
# descriptor type 0x30, 6 bytes
# interface 1 alt 0: class 0x0a (CDC data) subclass 0x00 protocol 0x00, 0 endpoints
# interface 1 alt 1: class 0x0a (CDC data) subclass 0x00 protocol 0x00, 2 endpoints, iInterface 4
# endpoint 0x81 bulk IN, wMaxPacketSize 1024, bInterval 0
# descriptor type 0x30, 6 bytes
# endpoint 0x02 bulk OUT, wMaxPacketSize 1024, bInterval 0
# descriptor type 0x30, 6 bytes
# note: endpoint 0x83: SuperSpeed companion 06 30 00 00 10 00 (lsusb printed bMaxBurst 0 only: bmAttributes 0, wBytesPerInterval 16)
# note: endpoint 0x81: SuperSpeed companion 06 30 03 00 00 00 (lsusb printed bMaxBurst 3 only: bmAttributes 0, wBytesPerInterval 0)
# note: endpoint 0x02: SuperSpeed companion 06 30 03 00 00 00 (lsusb printed bMaxBurst 3 only: bmAttributes 0, wBytesPerInterval 0)
config 09 02 62 00 02 02 00 a0 24 09 04 00 00 01 02 06
	00 05 05 24 00 10 01 05 24 06 00 01 0d 24 0f 03
	00 00 00 00 ea 05 00 00 00 07 05 83 03 10 00 08
	06 30 00 00 10 00 09 04 01 00 00 0a 00 00 00 09
	04 01 01 02 0a 00 00 04 07 05 81 02 00 04 00 06
	30 03 00 00 00 07 05 02 02 00 04 00 06 30 03 00
	00 00

# BOS: 2 capabilities, wTotalLength 22
#   device capability 0x02 (USB 2.0 extension), 7 bytes
#   device capability 0x03 (SuperSpeed), 10 bytes
bos 05 0f 16 00 02 07 10 02 02 00 00 00 0a 10 03 02
	0e 00 02 0a ff 07

# synthesized: string 0 is 0x0409; every string below is as lsusb printed it
# string 3 is the CDC Ethernet iMACAddress: usbnet_cdc_bind() needs it (usbnet_get_ethernet_addr: 12 hex digits)
string 0 09 04
string 0x0409 1 "Realtek"
string 0x0409 2 "USB 10/100/1000 LAN"
string 0x0409 6 "000001"
string 0x0409 5 "CDC Communications Control"
string 0x0409 3 "00E04C6B1289"
string 0x0409 4 "Ethernet Data"

# hand-written: r8152's version read (drivers/net/usb/r8152.c __rtl_get_hw_ver: RTL8152_REQ_GET_REGS, PLA_TCR0 0xe610, MCU_TYPE_PLA 0x0100) stalls, as an ECM-only RTL8153 would: r8152-cfgselector (6.1 and 6.12) then leaves the device in its CDC configuration and r8153_ecm's probe goes on (each logs "Unknown version 0x0000", KERN_INFO); r8152 itself needs the vendor configuration
get 0xc0 0x05 0xe610 0x0100 stall
set 0x21 0x40 * * ack
set 0x21 0x41 * * ack
set 0x21 0x42 * * ack
set 0x21 0x43 * * ack
set 0x21 0x44 * * ack
set 0x21 0x84 * * ack
set 0x21 0x86 * * ack
set 0x21 0x88 * * ack
set 0x21 0x8a * * ack

interrupt 0x83 pattern random
