"""The shipped profiles (fake-device/profiles): where they and their
listings live, and what the converter adds to each by hand
(harness/devices/lsusb.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .lsusb_answers import Get, Set


REPO = Path(__file__).resolve().parents[2]
PROFILES_DIR = REPO / "fake-device" / "profiles"
SOURCES_DIR = PROFILES_DIR / "sources"
REGENERATE = "python3 -m harness.devices.lsusb --regenerate"


# ---- The shipped profiles ------------------------------------------------------------

@dataclass(frozen=True)
class Shipped:
    listing: str
    description: str
    source: str
    driver: str
    speed: str | None = None                 # None: inferred
    hid: dict = field(default_factory=dict)  # iface -> HID_REPORTS key
    vendor_gets: tuple = ()                  # (comment lines, Get...) hand-written
    vendor_sets: tuple = ()
    notes: tuple = ()                        # extra lines for the profile's summary
    string_notes: tuple = ()


_PL2303 = "drivers/usb/serial/pl2303.c (Linux 6.1 and 6.12, same line numbers)"

SHIPPED: dict[str, Shipped] = {
    "logitech-c922": Shipped(
        "01-logitech-c922.lsusb.txt",
        "Logitech C922 Pro Stream Webcam (046d:085c): UVC 1.00 + USB audio, six Logitech "
        "extension units, an 11-byte UVC 1.0 processing unit; uvcvideo applies "
        "UVC_QUIRK_INVALID_DEVICE_SOF",
        "https://lore.kernel.org/all/20220920-resend-hwtimestamp-v1-4-e9c14b258404@chromium.org/",
        "uvcvideo (interfaces 0-1; the audio interfaces 2-3 are snd-usb-audio's, no UAC answers)"),
    "sunplusit-hd-uvc15": Shipped(
        "02-sunplusit-hd-camera-uvc15.lsusb.txt",
        "SunplusIT HD Camera (2b7e:b752): UVC 1.50 (interface protocol 1, 48-byte probe "
        "control), two extension units, region-of-interest control, a DFU interface, "
        "BOS with a platform capability",
        "https://lore.kernel.org/linux-media/20231028-uvc-power-v1-1-fa5c376abe78@chromium.org/",
        "uvcvideo (interfaces 0-1; the DFU interface 2 has no driver)"),
    "sonix-0c45-6353": Shipped(
        "03-sonix-film-scanner-0c45-6353.lsusb.txt",
        "Sonix USB film scanner (0c45:6353, Ion Slides Forever): UVC 1.00 with the output "
        "terminal and extension unit before the input terminal, still-image method 2 and "
        "a hardware trigger button (uvcvideo registers an input device)",
        "https://lore.kernel.org/linux-media/687d087b-ae4c-6242-2991-800876d74cc4@sorcerersisle.com/",
        "uvcvideo"),
    "lifecam-nx6000": Shipped(
        "04-microsoft-lifecam-nx6000.lsusb.txt",
        "Microsoft LifeCam NX-6000 (045e:00f8): UVC 1.00 + USB audio, a selector unit, an "
        "8-byte status endpoint, a VideoStreaming header total that leaves out its "
        "color-matching descriptor; uvcvideo applies UVC_QUIRK_PROBE_MINMAX",
        "video4linux-list mail, Gregor Jasny, 2008-06-26, Message-ID "
        "<20080626194804.GB18818@vidsoft.de> (no web address known)",
        "uvcvideo (interfaces 0-1; the audio interfaces 2-3 are snd-usb-audio's, no UAC answers)"),
    "logitech-k120": Shipped(
        "05-logitech-k120-keyboard.lsusb.txt",
        "Logitech Keyboard K120 (046d:c31c): low-speed HID, a boot keyboard (interface 0) and "
        "consumer/system controls (interface 1); the report descriptors are reconstructions "
        "of the listing's lengths (lsusb showed them UNAVAILABLE)",
        "https://mailman.alsa-project.org/hyperkitty/list/alsa-devel@alsa-project.org/message/"
        "QOQNQN4WL2I2PP2U7FFNRJAS5H6HDHGN/",
        "usbhid (hid-generic)", speed="low",
        hid={0: "boot-keyboard-65", 1: "consumer-system-159"}),
    "stm32-cdc-acm": Shipped(
        "06-stm32-virtual-com-port-cdc-acm.lsusb.txt",
        "STMicroelectronics STM32 Virtual ComPort (0483:5740): full-speed CDC ACM with header, "
        "call management, ACM and union functional descriptors",
        "https://bugzilla.kernel.org/show_bug.cgi?id=212751",
        "cdc_acm"),
    "rtl8153": Shipped(
        "07-realtek-rtl8153-ethernet.lsusb.txt",
        "Realtek RTL8153 Gigabit Ethernet (0bda:8153): SuperSpeed, configuration 1 vendor "
        "(r8152), configuration 2 CDC ECM; replayed as an ECM device: r8152's vendor register "
        "reads stall, so Linux keeps configuration 2 and an ECM driver binds",
        "blog post by Bart Prokop, \"Saturday, 19th October 2024\" (a Markdown file in a public "
        "GitHub repository; no web address known)",
        "r8153_ecm (configuration 2, CDC ECM through cdc_ether's usbnet_cdc_bind); cdc_ether "
        "itself on 6.1 built without r8152",
        vendor_gets=((
            ["hand-written: r8152's version read (drivers/net/usb/r8152.c __rtl_get_hw_ver: "
             "RTL8152_REQ_GET_REGS, PLA_TCR0 0xe610, MCU_TYPE_PLA 0x0100) stalls, as an "
             "ECM-only RTL8153 would: r8152-cfgselector (6.1 and 6.12) then leaves the device "
             "in its CDC configuration and r8153_ecm's probe goes on (each logs \"Unknown "
             "version 0x0000\", KERN_INFO); r8152 itself needs the vendor configuration"],
            Get(0xc0, 0x05, 0xe610, 0x0100, None)),),
        notes=("Linux picks configuration 2 (CDC ECM): usb_choose_configuration() prefers the "
               "first configuration whose first interface is not vendor-specific, and "
               "r8152-cfgselector does not switch to configuration 1 when the version read "
               "fails; with CONFIG_USB_RTL8152 set, cdc_ether leaves 0bda:8153 to r8153_ecm "
               "(CONFIG_USB_RTL8153_ECM)",),
        string_notes=("string 3 is the CDC Ethernet iMACAddress: usbnet_cdc_bind() needs it "
                      "(usbnet_get_ethernet_addr: 12 hex digits)",)),
    "pl2303": Shipped(
        "08-prolific-pl2303.lsusb.txt",
        "Prolific PL2303 USB-serial adapter (067b:2303, bcdDevice 3.00: pl2303 detects a "
        "PL2303TA): full speed, one vendor-class interface; pl2303's vendor register reads "
        "answered by hand",
        "https://lore.kernel.org/linux-usb/"
        "CADuz4ON8Jj5unz_eeD--7n5kp2uQmqeyM_2-DTrTFKFwFtoudw@mail.gmail.com/",
        "pl2303 (usb-serial)",
        vendor_gets=(
            ([f"hand-written, {_PL2303}: pl2303_detect_type() (line 403) sees bDeviceClass 0, "
              "bMaxPacketSize0 64, bcdUSB 2.00, bcdDevice 3.00 and asks "
              "pl2303_supports_hx_status() (line 391) for register 0x8080: an answer makes it "
              "a TA (a stall, a GT of the HXN family)"],
             Get(0xc0, 0x01, 0x8080, 0x0000, b"\x00")),
            (["hand-written: pl2303_startup() (line 472) reads 0x8484 and 0x8383 through "
              "pl2303_vendor_read() (line 243, one byte, dev_err unless exactly one) and "
              "only logs them (dev_dbg)"],
             Get(0xc0, 0x01, 0x8484, 0x0000, b"\x00")),
            ([], Get(0xc0, 0x01, 0x8383, 0x0000, b"\x00")),
            (["hand-written: opening the port, pl2303_set_termios() (line 794) reads the line "
              "settings (pl2303_get_line_request(), line 727: 7 bytes or dev_err): 9600 8N1 "
              "until a SET_LINE_REQUEST stores others (set below)"],
             Get(0xa1, 0x21, 0x0000, 0x0000, bytes.fromhex("80 25 00 00 00 00 08"))),
            (["hand-written: ... and pl2303_update_reg() (line 299) reads flow-control "
              "register 0 as 0x0080 (line 930) before writing it"],
             Get(0xc0, 0x01, 0x0080, 0x0000, b"\x00")),
        ),
        vendor_sets=(
            (["hand-written: pl2303_vendor_write() (line 273; 0x40 0x01, dev_err unless "
              "accepted): startup writes 0x0404, 0x0000, 0x0001, 0x0002; open writes 8 and 9 "
              "(line 977) and the flow-control register"],
             Set(0x40, 0x01, None, None, None)),
            (["hand-written: class requests on the vendor interface when the port opens: "
              "SET_LINE_REQUEST (line 750, kept for the GET above), SET_CONTROL_REQUEST "
              "(line 555, DTR/RTS), BREAK_REQUEST (line 1066, on close)"],
             Set(0x21, 0x20, None, None, 0x21)),
            ([], Set(0x21, 0x22, None, None, None)),
            ([], Set(0x21, 0x23, None, None, None)),
        )),
}


def _rel(path: str) -> str:
    p = Path(path).resolve()
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return path


def shipped_paths() -> dict[str, tuple[Path, Path]]:
    """name -> (listing, profile) of every shipped profile."""
    return {n: (SOURCES_DIR / s.listing, PROFILES_DIR / f"{n}.profile") for n, s in SHIPPED.items()}
