"""The device side: what a run attaches to the guest, and what it says back.

Takes names (a fake camera's flood, a USB device profile, a host device,
a sweep catalogue entry); gives the processes, QEMU arguments and guest
scripts that attach them, and parses their lines back into results.

Open first: ``camera`` (the fake UVC cameras over usb-redir and their
flood).  Then ``usbdevices`` (profiles under fake-device/profiles and the
guest script that drives them), ``usbhost`` (a real device passed
through), ``lsusb`` (lsusb -v listings to profiles), ``usbgen`` (a
profile per USB/HID driver, from modules.alias), ``catalogue`` (the
sweep's QEMU device models) and ``agentresult`` (the guest agent's JSON
line).

Imports the kernel stage and the shared leaves only.
"""
