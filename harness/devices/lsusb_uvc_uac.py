"""The class-specific descriptors of UVC (VideoControl, VideoStreaming) and
USB Audio 1 (AudioControl, AudioStreaming), rebuilt from their printed
fields, one decoder a block (harness/devices/lsusb.py).
"""

from __future__ import annotations

from .lsusb_listing import Reader, _finish


def _vc(r: Reader) -> tuple[bytes, int]:
    r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # header
        r.bcd("bcdUVC")
        r.u16("wTotalLength")
        r.clock("dwClockFrequency")
        n = r.u8("bInCollection")
        for i in range(n):
            r.u8(f"baInterfaceNr({i})")
    elif sub == 0x02:                                        # input terminal
        r.u8("bTerminalID")
        ttype = r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.string("iTerminal")
        if ttype == 0x0201:                                  # camera
            r.u16("wObjectiveFocalLengthMin")
            r.u16("wObjectiveFocalLengthMax")
            r.u16("wOcularFocalLength")
            n = r.u8("bControlSize")
            r.control_bits(n, "bmControls")
    elif sub == 0x03:                                        # output terminal
        r.u8("bTerminalID")
        r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.u8("bSourceID")
        r.string("iTerminal")
    elif sub == 0x04:                                        # selector unit
        r.u8("bUnitID")
        p = r.u8("bNrInPins")
        for i in range(p):
            r.u8(f"baSource({i})", f"baSourceID({i})")
        r.string("iSelector")
    elif sub == 0x05:                                        # processing unit
        r.u8("bUnitID")
        r.u8("bSourceID")
        r.u16("wMaxMultiplier")
        n = r.u8("bControlSize")
        r.control_bits(n, "bmControls")
        r.string("iProcessing")
        if r.has("bmVideoStandards"):
            r.u8("bmVideoStandards")
    elif sub == 0x06:                                        # extension unit
        r.u8("bUnitID")
        r.guid("guidExtensionCode")
        r.u8("bNumControls", "bNumControl")
        p = r.u8("bNrInPins", "bNrPins")
        for i in range(p):
            r.u8(f"baSourceID({i})", f"baSource({i})")
        n = r.u8("bControlSize")
        for i in range(n):
            r.u8(f"bmControls({i})")
        r.string("iExtension")
    else:
        raise r.err(r.last_line, f"VideoControl descriptor subtype {sub}: not supported")
    return _finish(r), sub


def _frame_intervals(r: Reader) -> None:
    t = r.u8("bFrameIntervalType")
    if t == 0:
        r.u32("dwMinFrameInterval")
        r.u32("dwMaxFrameInterval")
        r.u32("dwFrameIntervalStep")
    for i in range(t):
        r.u32(f"dwFrameInterval({i})")


def _vs(r: Reader) -> tuple[bytes, int]:
    r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # input header
        p = r.u8("bNumFormats")
        r.u16("wTotalLength")
        r.u8("bEndpointAddress", "bEndPointAddress")
        r.u8("bmInfo")
        r.u8("bTerminalLink")
        r.u8("bStillCaptureMethod")
        r.u8("bTriggerSupport")
        r.u8("bTriggerUsage")
        n = r.u8("bControlSize")
        for i in range(p):
            r.int(n, f"bmaControls({i})")
    elif sub == 0x03:                                        # still image frame
        r.u8("bEndpointAddress", "bEndPointAddress")
        n = r.u8("bNumImageSizePatterns")
        for i in range(n):
            r.u16(f"wWidth({i})")
            r.u16(f"wHeight({i})")
        c = r.u8("bNumCompressionPatterns")
        for i in range(c):
            r.u8(f"bCompression({i})")
    elif sub == 0x04:                                        # uncompressed format
        r.u8("bFormatIndex")
        r.u8("bNumFrameDescriptors")
        r.guid("guidFormat")
        r.u8("bBitsPerPixel")
        r.u8("bDefaultFrameIndex")
        r.u8("bAspectRatioX")
        r.u8("bAspectRatioY")
        r.u8("bmInterlaceFlags")
        r.u8("bCopyProtect")
    elif sub in (0x05, 0x07):                                # uncompressed / MJPEG frame
        r.u8("bFrameIndex")
        r.u8("bmCapabilities")
        r.u16("wWidth")
        r.u16("wHeight")
        r.u32("dwMinBitRate")
        r.u32("dwMaxBitRate")
        r.u32("dwMaxVideoFrameBufferSize")
        r.u32("dwDefaultFrameInterval")
        _frame_intervals(r)
    elif sub == 0x06:                                        # MJPEG format
        r.u8("bFormatIndex")
        r.u8("bNumFrameDescriptors")
        r.u8("bFlags")
        r.u8("bDefaultFrameIndex")
        r.u8("bAspectRatioX")
        r.u8("bAspectRatioY")
        r.u8("bmInterlaceFlags")
        r.u8("bCopyProtect")
    elif sub == 0x0d:                                        # color matching
        r.u8("bColorPrimaries")
        r.u8("bTransferCharacteristics")
        r.u8("bMatrixCoefficients")
    else:
        raise r.err(r.last_line, f"VideoStreaming descriptor subtype {sub}: not supported")
    return _finish(r), sub


def _ac(r: Reader) -> bytes:
    blen = r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # header (UAC 1)
        r.bcd("bcdADC")
        r.u16("wTotalLength")
        n = r.u8("bInCollection")
        for i in range(n):
            r.u8(f"baInterfaceNr({i})")
    elif sub == 0x02:                                        # input terminal
        r.u8("bTerminalID")
        r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.u8("bNrChannels")
        r.u16("wChannelConfig")
        r.string("iChannelNames")
        r.string("iTerminal")
    elif sub == 0x03:                                        # output terminal
        r.u8("bTerminalID")
        r.u16("wTerminalType")
        r.u8("bAssocTerminal")
        r.u8("bSourceID")
        r.string("iTerminal")
    elif sub == 0x06:                                        # feature unit
        r.u8("bUnitID")
        r.u8("bSourceID")
        n = r.u8("bControlSize")
        if n == 0 or blen < 7 or (blen - 7) % n:
            raise r.err(r.last_line, f"feature unit: bControlSize {n} does not divide bLength {blen} - 7")
        count = (blen - 7) // n
        got = r.all_named("bmaControls")
        if len(got) == count:                                # one line per control
            for name, v, ln in got:
                r.put(name, r.number(name, v, ln), n, ln)
        elif len(got) == count * n:                          # old lsusb: one line per byte
            for name, v, ln in got:
                r.put(name, r.number(name, v, ln), 1, ln)
        else:
            raise r.err(r.last_line, f"feature unit: {len(got)} bmaControls lines for {count} "
                        f"controls of {n} bytes")
        r.string("iFeature")
    else:
        raise r.err(r.last_line, f"AudioControl descriptor subtype {sub}: not supported")
    return _finish(r)


def _as(r: Reader) -> bytes:
    r.u8("bLength")
    r.u8("bDescriptorType", expect=0x24)
    sub = r.u8("bDescriptorSubtype")
    if sub == 0x01:                                          # AS_GENERAL
        r.u8("bTerminalLink")
        r.u8("bDelay")
        r.u16("wFormatTag")
    elif sub == 0x02:                                        # FORMAT_TYPE
        ftype = r.u8("bFormatType")
        if ftype != 1:
            raise r.err(r.last_line, f"audio format type {ftype}: not supported")
        r.u8("bNrChannels")
        r.u8("bSubframeSize")
        r.u8("bBitResolution")
        n = r.u8("bSamFreqType")
        if n == 0:
            r.u24("tLowerSamFreq")
            r.u24("tUpperSamFreq")
        for i in range(n):
            r.u24(f"tSamFreq[{i}]")
    else:
        raise r.err(r.last_line, f"AudioStreaming descriptor subtype {sub}: not supported")
    return _finish(r)
