"""`.py` / `.pyi`: one unit, the file itself; fixes keep the encoding and BOM."""

from __future__ import annotations

import io
import tokenize
from dataclasses import dataclass

from trio_lint.lint.parse import decode
from trio_lint.sources.base import Document, Unit


@dataclass
class PythonDocument(Document):
    bom: bool = False
    encoding: str = "utf-8"

    @classmethod
    def load(cls, data: bytes) -> PythonDocument:
        text, bom = decode(data)
        encoding = "utf-8"
        if not bom:
            try:
                encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            except SyntaxError:
                encoding = "utf-8"
        return cls(kind="python", units=[Unit(text)], bom=bom, encoding=encoding)

    def rebuild(self, codes: list[str]) -> bytes:
        body = codes[0].encode("utf-8" if self.encoding == "utf-8-sig" else self.encoding)
        return (b"\xef\xbb\xbf" if self.bom else b"") + body
