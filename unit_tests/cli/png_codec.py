# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A small PNG encoder and decoder for the kssim CLI tests (numpy + zlib + struct only).

encode_png writes any color type (0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA) at bit depths 1-16, with
unfiltered rows; decode_png reads non-interlaced 8- and 16-bit files with any filter (what libpng writes).
"""
import struct
import zlib

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(samples, bit_depth=8, color_type=None, palette=None, extra_chunks=()):
    """samples: (H, W) or (H, W, C) unsigned integers. color_type defaults from C (1, 2, 3, 4 channels)."""
    samples = np.asarray(samples)
    if samples.ndim == 2:
        samples = samples[..., None]
    height, width, channels = samples.shape
    if color_type is None:
        color_type = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    assert CHANNELS[color_type] == channels
    rows = []
    for y in range(height):
        row = samples[y].reshape(-1).astype(np.uint32)
        if bit_depth == 16:
            data = row.astype(">u2").tobytes()
        elif bit_depth == 8:
            data = row.astype(np.uint8).tobytes()
        else:  # pack 1, 2 or 4-bit samples, most significant first
            per_byte = 8 // bit_depth
            padded = np.zeros(-(-len(row) // per_byte) * per_byte, dtype=np.uint32)
            padded[: len(row)] = row
            packed = np.zeros(len(padded) // per_byte, dtype=np.uint32)
            for k in range(per_byte):
                packed |= padded[k::per_byte] << (8 - bit_depth * (k + 1))
            data = packed.astype(np.uint8).tobytes()
        rows.append(b"\x00" + data)
    out = SIGNATURE + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0))
    if palette is not None:
        out += chunk(b"PLTE", np.asarray(palette, dtype=np.uint8).tobytes())
    for kind, data in extra_chunks:
        out += chunk(kind, data)
    out += chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")
    return out


def read_chunks(data):
    assert data[:8] == SIGNATURE, "not a PNG"
    pos, chunks = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, "bad CRC"
        chunks.append((kind, body))
        pos += 12 + length
    return chunks


def decode_png(data):
    """Returns (samples (H, W, C) uint16, bit_depth, color_type, text dict)."""
    chunks = read_chunks(data)
    width, height, depth, color_type, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert depth in (8, 16) and interlace == 0 and color_type != 3
    channels = CHANNELS[color_type]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    text = {}
    for kind, body in chunks:
        if kind == b"tEXt":
            key, _, value = body.partition(b"\x00")
            text[key.decode("latin-1")] = value.decode("latin-1")
    bpp = channels * depth // 8
    stride = width * bpp
    out = np.zeros((height, stride), dtype=np.int64)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int64)
        if ftype == 0:
            cur = line.copy()
        elif ftype == 1:  # Sub: a running sum per byte lane
            lanes = np.zeros(-(-stride // bpp) * bpp, dtype=np.int64)
            lanes[:stride] = line
            cur = (np.cumsum(lanes.reshape(-1, bpp), axis=0).reshape(-1)[:stride]) & 0xFF
        elif ftype == 2:  # Up
            cur = (line + prev) & 0xFF
        else:
            cur = np.zeros(stride, dtype=np.int64)
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                if ftype == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[i] = (line[i] + pred) & 0xFF
        out[y] = cur
        prev = cur
    if depth == 16:
        out = out[:, 0::2] * 256 + out[:, 1::2]
    return out.reshape(height, width, channels).astype(np.uint16), depth, color_type, text
