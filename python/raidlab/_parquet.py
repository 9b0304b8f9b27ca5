"""A small Parquet writer for the result tables of a run: flat tables of 64-bit integers,
64-bit floats and text, written without pyarrow.

Why: importing ``pyarrow.parquet`` takes longer than a short simulation does, and a run's
tables are simple, so ``raidlab run`` writes them itself and only the readers
(``raidlab.load_result``, plots) load pyarrow. The files follow the Parquet format
specification (``parquet.thrift`` of Apache Parquet), in its plainest form:

* one row group; every column ``REQUIRED`` (no nulls: a missing float is NaN), or, with
  ``nullable=True`` (a sweep's summary table), every column ``OPTIONAL``, ``None`` written
  as null through definition levels in RLE runs;
* ``PLAIN`` encoding, no compression, data pages (version 1) of at most
  :data:`VALUES_PER_PAGE` values, so no page reaches the format's 2 GiB limit;
* ``INT64`` for integers, ``DOUBLE`` for floats, ``BYTE_ARRAY`` annotated ``UTF8`` for text,
  ``BOOLEAN`` (nullable tables only) for truth values;
* each page's CRC-32 in its header (``crc``: of the page's bytes as written, after the
  header), which the readers verify, so that a damaged file is an error and not wrong values;
* the file metadata in Thrift's compact protocol.

Uncompressed files are larger than pyarrow's (whose default is Snappy); a run's tables are
a few hundred KiB at most unless ``metrics.record_responses`` is on. The tests read every
file written here back with pyarrow and compare it value by value.
"""

from __future__ import annotations

import array
import os
import struct
import sys
import zlib
from typing import Any, List, Mapping, Sequence, Tuple, Union

__all__ = ["write_table", "VALUES_PER_PAGE"]

#: Values per data page: 8 MiB of numbers, well below the 2 GiB a page may hold.
VALUES_PER_PAGE = 1 << 20

_MAGIC = b"PAR1"

# Parquet's enums (parquet.thrift).
_TYPE_BOOLEAN, _TYPE_INT64, _TYPE_DOUBLE, _TYPE_BYTE_ARRAY = 0, 2, 5, 6
_REQUIRED, _OPTIONAL = 0, 1
_CONVERTED_UTF8 = 0
_ENCODING_PLAIN, _ENCODING_RLE = 0, 3
_CODEC_UNCOMPRESSED = 0
_PAGE_DATA = 0

# Thrift compact protocol field types.
_T_BOOL_TRUE, _T_I32, _T_I64, _T_BINARY, _T_LIST, _T_STRUCT = 1, 5, 6, 8, 9, 12


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _zigzag(value: int) -> int:
    return (value << 1) ^ (value >> 63)


class _Struct:
    """A Thrift struct being written in the compact protocol (fields in increasing id)."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.last_id = 0

    def _header(self, field_id: int, kind: int) -> None:
        delta = field_id - self.last_id
        if 0 < delta <= 15:
            self.out.append((delta << 4) | kind)
        else:
            self.out.append(kind)
            self.out += _varint(_zigzag(field_id))
        self.last_id = field_id

    def i32(self, field_id: int, value: int) -> "_Struct":
        self._header(field_id, _T_I32)
        self.out += _varint(_zigzag(value))
        return self

    def i64(self, field_id: int, value: int) -> "_Struct":
        self._header(field_id, _T_I64)
        self.out += _varint(_zigzag(value))
        return self

    def binary(self, field_id: int, value: Union[str, bytes]) -> "_Struct":
        data = value.encode("utf-8") if isinstance(value, str) else value
        self._header(field_id, _T_BINARY)
        self.out += _varint(len(data)) + data
        return self

    def struct(self, field_id: int, value: "_Struct") -> "_Struct":
        self._header(field_id, _T_STRUCT)
        self.out += value.end()
        return self

    def list(self, field_id: int, kind: int, items: Sequence[bytes]) -> "_Struct":
        """A list of already encoded items of Thrift type ``kind``."""
        self._header(field_id, _T_LIST)
        self.out += bytes([(len(items) << 4) | kind]) if len(items) < 15 else bytes([0xF0 | kind]) + _varint(len(items))
        for item in items:
            self.out += item
        return self

    def end(self) -> bytes:
        return bytes(self.out) + b"\x00"


def _i32_item(value: int) -> bytes:
    return _varint(_zigzag(value))


def _binary_item(value: str) -> bytes:
    data = value.encode("utf-8")
    return _varint(len(data)) + data


def _column_values(values: Any) -> Tuple[int, Any, int]:
    """(Parquet type, the values, count) of a column: a NumPy array of integers or floats, a
    ``memoryview`` of format ``"q"`` or ``"d"`` (as ``raidlab._core.run`` hands numbers over),
    or a sequence of text."""
    if isinstance(values, memoryview) and values.format in ("q", "d"):
        kind = _TYPE_INT64 if values.format == "q" else _TYPE_DOUBLE
        if sys.byteorder != "little":  # Parquet stores numbers little-endian
            swapped = array.array(values.format, values)
            swapped.byteswap()
            values = memoryview(swapped)
        return kind, values, len(values)
    dtype = getattr(values, "dtype", None)
    if dtype is not None and dtype.kind in "iub":
        return _TYPE_INT64, values.astype("<i8", copy=False), len(values)
    if dtype is not None and dtype.kind == "f":
        return _TYPE_DOUBLE, values.astype("<f8", copy=False), len(values)
    items = list(values)
    if all(isinstance(item, str) for item in items):
        return _TYPE_BYTE_ARRAY, items, len(items)
    if all(isinstance(item, bool) or isinstance(item, int) for item in items) and items:
        return _TYPE_INT64, items, len(items)
    if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in items) and items:
        return _TYPE_DOUBLE, [float(item) for item in items], len(items)
    raise TypeError("a column holds integers, floats or text, one kind throughout")


def _nullable_column_values(name: str, values: Any) -> Tuple[int, Any, int]:
    """(Parquet type, the values with ``None`` for nulls, count) of a nullable column: its
    type from the values that are not ``None`` (text, truth values, integers, or numbers
    with a float among them); a column of nulls only is text."""
    items = list(values)
    present = [item for item in items if item is not None]
    if all(isinstance(item, str) for item in present):
        return _TYPE_BYTE_ARRAY, items, len(items)
    if all(isinstance(item, bool) for item in present):
        return _TYPE_BOOLEAN, items, len(items)
    if all(isinstance(item, int) and not isinstance(item, bool) for item in present):
        return _TYPE_INT64, items, len(items)
    if all(isinstance(item, (int, float)) and not isinstance(item, bool) for item in present):
        return _TYPE_DOUBLE, [None if item is None else float(item) for item in items], len(items)
    raise TypeError(f"column {name!r} mixes kinds of values: text, truth values and numbers apart")


def _definition_levels(chunk: Sequence[Any]) -> bytes:
    """The definition levels of a nullable page (1 for a value, 0 for a null), as Parquet's
    RLE/bit-packed hybrid in RLE runs only (bit width 1: one byte per run's value), with the
    4-byte length a version-1 data page puts before them."""
    out = bytearray()
    index = 0
    while index < len(chunk):
        level = chunk[index] is not None
        end = index
        while end < len(chunk) and (chunk[end] is not None) == level:
            end += 1
        out += _varint((end - index) << 1) + bytes([int(level)])
        index = end
    return struct.pack("<I", len(out)) + bytes(out)


def _page_data(kind: int, values: Any, start: int, stop: int, nullable: bool = False) -> bytes:
    chunk = values[start:stop]
    if nullable:
        present = [item for item in chunk if item is not None]
        if kind == _TYPE_BOOLEAN:  # PLAIN booleans: bit-packed, the first value in the lowest bit
            packed = bytearray((len(present) + 7) // 8)
            for index, flag in enumerate(present):
                if flag:
                    packed[index // 8] |= 1 << (index % 8)
            return _definition_levels(chunk) + bytes(packed)
        return _definition_levels(chunk) + _page_data(kind, present, 0, len(present))
    if kind == _TYPE_BYTE_ARRAY:
        out = bytearray()
        for text in chunk:
            data = text.encode("utf-8")
            out += struct.pack("<I", len(data)) + data
        return bytes(out)
    if hasattr(chunk, "tobytes"):
        return chunk.tobytes()
    return struct.pack(f"<{len(chunk)}{'q' if kind == _TYPE_INT64 else 'd'}", *chunk)


def _signed_i32(value: int) -> int:
    """``value`` (0 to 2^32 - 1) as the signed 32-bit integer with the same bits (Thrift's i32)."""
    return value - (1 << 32) if value >= 1 << 31 else value


def write_table(path: Union[str, "os.PathLike[str]"], columns: Mapping[str, Any], *, nullable: bool = False) -> None:
    """Write ``columns`` (name → NumPy array, ``memoryview`` of format ``"q"`` or ``"d"``, or
    sequence of text, all of one length) as a Parquet file at ``path``. With ``nullable``,
    each column is a sequence of text, truth values or numbers, ``None`` for a null, and
    every column is ``OPTIONAL``."""
    described: List[Tuple[str, int, Any, int]] = [
        (name, *(_nullable_column_values(name, values) if nullable else _column_values(values)))
        for name, values in columns.items()]
    rows = {count for _, _, _, count in described}
    if len(rows) > 1:
        raise ValueError(f"columns of different lengths: {sorted(rows)}")
    num_rows = rows.pop() if rows else 0
    body = bytearray(_MAGIC)
    chunks: List[bytes] = []
    total_bytes = 0
    for name, kind, values, count in described:
        first_page = len(body)
        for start in range(0, max(count, 1), VALUES_PER_PAGE):
            stop = min(start + VALUES_PER_PAGE, count)
            data = _page_data(kind, values, start, stop, nullable)
            page = (
                _Struct()
                .i32(1, _PAGE_DATA)
                .i32(2, len(data))
                .i32(3, len(data))
                .i32(4, _signed_i32(zlib.crc32(data)))
                .struct(5, _Struct().i32(1, stop - start).i32(2, _ENCODING_PLAIN)
                        .i32(3, _ENCODING_RLE).i32(4, _ENCODING_RLE))
                .end()
            )
            body += page + data
        size = len(body) - first_page
        total_bytes += size
        meta = (
            _Struct()
            .i32(1, kind)
            .list(2, _T_I32, [_i32_item(_ENCODING_PLAIN), _i32_item(_ENCODING_RLE)])
            .list(3, _T_BINARY, [_binary_item(name)])
            .i32(4, _CODEC_UNCOMPRESSED)
            .i64(5, count)
            .i64(6, size)
            .i64(7, size)
            .i64(9, first_page)
        )
        chunks.append(_Struct().i64(2, first_page).struct(3, meta).end())
    schema = [_Struct().binary(4, "schema").i32(5, len(described)).end()]
    for name, kind, _, _ in described:
        element = _Struct().i32(1, kind).i32(3, _OPTIONAL if nullable else _REQUIRED).binary(4, name)
        if kind == _TYPE_BYTE_ARRAY:
            element.i32(6, _CONVERTED_UTF8)
        schema.append(element.end())
    row_group = _Struct().list(1, _T_STRUCT, chunks).i64(2, total_bytes).i64(3, num_rows).end()
    footer = (
        _Struct()
        .i32(1, 1)
        .list(2, _T_STRUCT, schema)
        .i64(3, num_rows)
        .list(4, _T_STRUCT, [row_group])
        .binary(6, "raidlab")
        .end()
    )
    body += footer + struct.pack("<I", len(footer)) + _MAGIC
    with open(path, "wb") as file:
        file.write(body)
