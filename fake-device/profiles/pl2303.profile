dmaharness-usb-profile 1
name pl2303
description "Prolific PL2303 USB-serial adapter (067b:2303, bcdDevice 3.00: pl2303 detects a PL2303TA): full speed, one vendor-class interface; pl2303's vendor register reads answered by hand"
source "https://lore.kernel.org/linux-usb/CADuz4ON8Jj5unz_eeD--7n5kp2uQmqeyM_2-DTrTFKFwFtoudw@mail.gmail.com/"
source "fake-device/profiles/sources/08-prolific-pl2303.lsusb.txt (lsusb -v), converted by harness/devices/lsusb.py"
speed full

# Rebuilt by harness/devices/lsusb.py from fake-device/profiles/sources/08-prolific-pl2303.lsusb.txt; regenerate it with python3 -m harness.devices.lsusb --regenerate (edit the converter, not this file).
# lsusb cannot show every byte; this profile supplies:
#   - string 0, the LANGID list: 0x0409;
# Lines marked 'hand-written:' answer requests a capture never sends (FORMAT.md); a capture of the replay does not give them back.
# Target driver: pl2303 (usb-serial).
# Speed full: inferred from the descriptors (lsusb -v does not print it).

# device: USB 2.00, class 0x00 (per interface) subclass 0x00 protocol 0x00, ep0 64 bytes, 067b:2303 bcdDevice 3.00, strings 1/2/0, 1 configuration
device 12 01 00 02 00 00 00 40 7b 06 03 23 00 03 01 02
	00 01

# configuration 1: 1 interface, bmAttributes 0xa0, bMaxPower 100 mA, wTotalLength 39
# interface 0 alt 0: class 0xff (vendor specific) subclass 0x00 protocol 0x00, 3 endpoints
# endpoint 0x81 interrupt IN, wMaxPacketSize 10, bInterval 1
# endpoint 0x02 bulk OUT, wMaxPacketSize 64, bInterval 0
# endpoint 0x83 bulk IN, wMaxPacketSize 64, bInterval 0
config 09 02 27 00 01 01 00 a0 32 09 04 00 00 03 ff 00
	00 00 07 05 81 03 0a 00 01 07 05 02 02 40 00 00
	07 05 83 02 40 00 00

# synthesized: string 0 is 0x0409; every string below is as lsusb printed it
string 0 09 04
string 0x0409 1 "Prolific Technology Inc."
string 0x0409 2 "USB-Serial Controller"

# hand-written, drivers/usb/serial/pl2303.c (Linux 6.1 and 6.12, same line numbers): pl2303_detect_type() (line 403) sees bDeviceClass 0, bMaxPacketSize0 64, bcdUSB 2.00, bcdDevice 3.00 and asks pl2303_supports_hx_status() (line 391) for register 0x8080: an answer makes it a TA (a stall, a GT of the HXN family)
get 0xc0 0x01 0x8080 0x0000 = 00
# hand-written: pl2303_startup() (line 472) reads 0x8484 and 0x8383 through pl2303_vendor_read() (line 243, one byte, dev_err unless exactly one) and only logs them (dev_dbg)
get 0xc0 0x01 0x8484 0x0000 = 00
get 0xc0 0x01 0x8383 0x0000 = 00
# hand-written: opening the port, pl2303_set_termios() (line 794) reads the line settings (pl2303_get_line_request(), line 727: 7 bytes or dev_err): 9600 8N1 until a SET_LINE_REQUEST stores others (set below)
get 0xa1 0x21 0x0000 0x0000 = 80 25 00 00 00 00 08
# hand-written: ... and pl2303_update_reg() (line 299) reads flow-control register 0 as 0x0080 (line 930) before writing it
get 0xc0 0x01 0x0080 0x0000 = 00
# hand-written: pl2303_vendor_write() (line 273; 0x40 0x01, dev_err unless accepted): startup writes 0x0404, 0x0000, 0x0001, 0x0002; open writes 8 and 9 (line 977) and the flow-control register
set 0x40 0x01 * * ack
# hand-written: class requests on the vendor interface when the port opens: SET_LINE_REQUEST (line 750, kept for the GET above), SET_CONTROL_REQUEST (line 555, DTR/RTS), BREAK_REQUEST (line 1066, on close)
set 0x21 0x20 * * store 0x21
set 0x21 0x22 * * ack
set 0x21 0x23 * * ack

interrupt 0x81 pattern random
