"""The pixel size of a PNG or JPEG file, read from its header (no image library, no decoding).

A vision processor sizes an image from its width and height alone, so that is all trio-local
reads: the PNG IHDR chunk, or the JPEG start-of-frame segment. Anything else in the file is the
stand-in encoder's business (engine/images.py).
"""

from __future__ import annotations

import struct

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
JPEG_SOI = b"\xff\xd8"
# Start-of-frame markers (SOF0..SOF15) carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share
# the range but are not frames.
_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers without a length field: TEM and the restart markers RST0..RST7.
_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})


class ImageHeaderError(ValueError):
    """The bytes are not a PNG/JPEG file whose size can be read; the message says why."""


def image_size(data: bytes, image_format: str) -> tuple[int, int]:
    """(width, height) of a PNG or JPEG file."""
    if image_format == "png":
        return _png_size(data)
    if image_format == "jpeg":
        return _jpeg_size(data)
    raise ImageHeaderError(f"format '{image_format}' is not one of 'png', 'jpeg'")


def _png_size(data: bytes) -> tuple[int, int]:
    if not data.startswith(PNG_SIGNATURE):
        raise ImageHeaderError("the data does not start with the PNG signature")
    # The first chunk must be IHDR: length (4), type (4), width (4), height (4), ...
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise ImageHeaderError("the PNG has no IHDR chunk after its signature")
    width, height = struct.unpack(">II", data[16:24])
    return _positive(width, height, "PNG")


def _jpeg_size(data: bytes) -> tuple[int, int]:
    if not data.startswith(JPEG_SOI):
        raise ImageHeaderError("the data does not start with the JPEG start-of-image marker")
    offset = 2
    while offset < len(data):
        if data[offset] != 0xFF:
            raise ImageHeaderError(f"expected a JPEG marker at byte {offset}")
        while offset < len(data) and data[offset] == 0xFF:  # fill bytes before a marker
            offset += 1
        if offset >= len(data):
            break
        marker = data[offset]
        offset += 1
        if marker in _STANDALONE:
            continue
        if marker in (0xD9, 0xDA):  # end of image, or start of scan before any frame
            break
        if offset + 2 > len(data):
            break
        (length,) = struct.unpack(">H", data[offset : offset + 2])
        if length < 2:
            raise ImageHeaderError(f"a JPEG segment at byte {offset} has length {length}")
        if marker in _SOF_MARKERS:
            if offset + 7 > len(data):
                break
            height, width = struct.unpack(">HH", data[offset + 3 : offset + 7])
            return _positive(width, height, "JPEG")
        offset += length
    raise ImageHeaderError("the JPEG has no start-of-frame segment before its image data")


def _positive(width: int, height: int, kind: str) -> tuple[int, int]:
    if width <= 0 or height <= 0:
        raise ImageHeaderError(f"the {kind} header says {width}x{height} pixels")
    return width, height
