# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Writers of the floating-point image formats kssim reads, for the end-to-end tests: PFM, and OpenEXR
(uncompressed scan lines, FLOAT or HALF channels), written from their specifications with NumPy and the
standard library only, so that the library-based readers are checked against an independent writer."""
import struct

import numpy as np


def pfm_bytes(image, little_endian=True, scale=1.0):
    """image: (H, W) gray or (H, W, 3) RGB float32, top row first (PFM stores bottom-up)."""
    image = np.asarray(image, np.float32)
    h, w = image.shape[:2]
    magic = b"PF" if image.ndim == 3 else b"Pf"
    header = magic + b"\n%d %d\n%s\n" % (w, h, repr(-scale if little_endian else scale).encode())
    return header + image[::-1].astype("<f4" if little_endian else ">f4").tobytes()


def _attribute(name, kind, value):
    return name.encode() + b"\0" + kind.encode() + b"\0" + struct.pack("<i", len(value)) + value


def exr_bytes(channels, half=False):
    """channels: {name: (H, W) array}; written as one uncompressed scan-line part, data window at (0, 0)."""
    names = sorted(channels)
    h, w = next(iter(channels.values())).shape
    pixel_type, dtype = (1, "<f2") if half else (2, "<f4")
    chlist = b"".join(n.encode() + b"\0" + struct.pack("<iB3xii", pixel_type, 0, 1, 1) for n in names) + b"\0"
    box = struct.pack("<4i", 0, 0, w - 1, h - 1)
    header = b"".join([
        _attribute("channels", "chlist", chlist),
        _attribute("compression", "compression", b"\0"),
        _attribute("dataWindow", "box2i", box),
        _attribute("displayWindow", "box2i", box),
        _attribute("lineOrder", "lineOrder", b"\0"),
        _attribute("pixelAspectRatio", "float", struct.pack("<f", 1.0)),
        _attribute("screenWindowCenter", "v2f", struct.pack("<2f", 0, 0)),
        _attribute("screenWindowWidth", "float", struct.pack("<f", 1.0)),
    ]) + b"\0"
    start = b"\x76\x2f\x31\x01" + struct.pack("<i", 2) + header
    lines = []
    for y in range(h):
        data = b"".join(np.asarray(channels[n][y], dtype).tobytes() for n in names)
        lines.append(struct.pack("<ii", y, len(data)) + data)
    offsets, at = [], len(start) + 8 * h
    for line in lines:
        offsets.append(at)
        at += len(line)
    return start + struct.pack("<%dQ" % h, *offsets) + b"".join(lines)
