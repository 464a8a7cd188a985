"""The boot stage: an initramfs, QEMU, and a console watched to its end.

Takes built artifacts (harness.kernel) and run settings; gives a
``qemu.BootResult``: the console log, how the guest ended (ok, panic,
silence, timeout, no end marker) and the guest's status.

Open first: ``settings`` (every run setting: one table of defaults, one
precedence rule: defaults < a case's [run] < flags).  Then ``initramfs``
(busybox, the guest agent, modules), ``qemu`` (the command line, the
watch loop), ``bootlog`` (where the boot got to), ``kunit`` (KTAP
results) and ``insnprof`` (where the guest's instructions went).

Imports harness.kernel, harness.devices and the shared leaves.
"""
