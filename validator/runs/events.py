"""TensorBoard event files, read near the floor: TFRecord framing with ``struct``, the masked
CRC-32C from a C library (``google-crc32c``), the ``Event`` message parsed by ``protobuf``.

The format, as every writer (TensorFlow's, tensorboard's stub, torch's and tensorboardX's
``SummaryWriter``) writes it: each record is

    uint64 length | uint32 masked_crc32c(length) | data[length] | uint32 masked_crc32c(data)

little-endian, the mask being ``((crc >> 15 | crc << 17) + 0xa282ead8) mod 2**32``
(TensorFlow's ``tensorflow/core/lib/hash/crc32c.h`` ``Mask``); ``data`` is one ``Event``.

The messages are declared here from their published field numbers (tensorflow/tensorboard,
``tensorboard/compat/proto/event.proto`` at 0034239, ``summary.proto`` at 00bd827,
``tensor.proto`` at 2013f36, ``tensor_shape.proto`` at 4dd3eab), only the fields this reader
uses plus the other members of each ``oneof`` (as ``bytes``, so that which one is set stays
protobuf's decision without parsing images or graphs); the rest are unknown fields protobuf
passes over. They live in a pool of their own, so tensorboard's generated classes, where
installed, never clash with them.

What is trusted and what is not:

* a length whose CRC fails, a data CRC that fails, or data that is no ``Event`` is
  corruption: ``RunFileError`` naming the file, the record (1-based) and its byte offset;
* a length over ``MAX_RECORD`` (2 GiB, the most protobuf parses as one message) is
  corruption wherever it stands, and is never read (a length of 2**62 is an error, not a
  ``MemoryError``);
* a record over ``BIG_RECORD`` (64 MiB: a TF1 graph) has its CRC computed a chunk at a
  time, and is read whole again only when its Event is not a graph, a meta-graph or run
  metadata, so memory stays bounded whatever the graph's size;
* a record that runs past the end of the file is a half-written tail (a writer mid-flush)
  only when no whole record follows its header; when one does, the length is corrupt and
  the records after it would be lost, so it is an error too.
"""

from __future__ import annotations

import functools
import os
import re
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from validator.runs.cadence import RESTART_MARK
from validator.runs.readers import RunFileError, Scalar, Tail

MAX_RECORD = (1 << 31) - 1  # protobuf refuses to parse a message of 2 GiB or more
SCAN_CHUNK = 1 << 20  # the bytes after a cut record are looked through this many at a time
BIG_RECORD = 64 << 20  # a record longer is CRC-checked a chunk at a time (TF1 graphs can be this big)
_HEAD = struct.Struct("<QI")
_CRC = struct.Struct("<I")
_F32, _F64 = struct.Struct("<f"), struct.Struct("<d")
_DT_FLOAT, _DT_DOUBLE = 1, 2  # tensorboard/compat/proto/types.proto DataType
_SESSION_START = 1  # event.proto SessionLog.SessionStatus START
# where a record's header may start: a length under 2**31 (bytes 4-7 zero, byte 3 under 0x80)
# that is not zero (every Event a writer writes has a wall time)
_HEADER_AT = re.compile(rb"(?=(?!\x00\x00\x00\x00)[\x00-\xff]{3}[\x00-\x7f]\x00\x00\x00\x00)")


def _crc32c() -> Callable[[bytes], int]:
    """google_crc32c.value (its C extension)."""
    import google_crc32c

    return google_crc32c.value


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C of ``data``."""
    crc = _crc32c()(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@functools.lru_cache(maxsize=1)
def event_class() -> Any:  # Any: a protobuf message class made at run time (no stubs)
    """The ``Event`` message class, built once from its descriptor."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    pkg = "spec_check.tensorboard"
    fd = descriptor_pb2.FileDescriptorProto(name="spec_check/tensorboard_event.proto", package=pkg,
                                            syntax="proto3")

    def message(name: str, fields: list[tuple[str, int, int, str, str]], oneof: str = "") -> None:
        """A message: (field, number, type, message type, oneof member), optional or repeated."""
        m = fd.message_type.add(name=name)
        if oneof:
            m.oneof_decl.add(name=oneof)
        for fname, number, ftype, mtype, member in fields:
            f = m.field.add(name=fname, number=number, type=ftype, label=F.LABEL_OPTIONAL)
            if (name, fname) in repeated:
                f.label = F.LABEL_REPEATED
            if mtype:
                f.type_name = f".{pkg}.{mtype}"
            if member:
                f.oneof_index = 0

    msg, b = F.TYPE_MESSAGE, F.TYPE_BYTES
    repeated = {("TensorShapeProto", "dim"), ("TensorProto", "float_val"), ("TensorProto", "double_val"),
                ("Summary", "value")}
    message("TensorShapeDim", [("size", 1, F.TYPE_INT64, "", "")])
    message("TensorShapeProto", [("dim", 2, msg, "TensorShapeDim", "")])
    message("TensorProto", [("dtype", 1, F.TYPE_INT32, "", ""),  # enum DataType: the same varint
                            ("tensor_shape", 2, msg, "TensorShapeProto", ""),
                            ("tensor_content", 4, b, "", ""),
                            ("float_val", 5, F.TYPE_FLOAT, "", ""),
                            ("double_val", 6, F.TYPE_DOUBLE, "", "")])
    message("SummaryValue", [("tag", 1, F.TYPE_STRING, "", ""),
                             ("simple_value", 2, F.TYPE_FLOAT, "", "value"),
                             ("obsolete_old_style_histogram", 3, b, "", "value"),
                             ("image", 4, b, "", "value"), ("histo", 5, b, "", "value"),
                             ("audio", 6, b, "", "value"), ("tensor", 8, msg, "TensorProto", "value")], "value")
    message("Summary", [("value", 1, msg, "SummaryValue", "")])
    message("SessionLog", [("status", 1, F.TYPE_INT32, "", "")])  # enum SessionStatus
    message("Event", [("wall_time", 1, F.TYPE_DOUBLE, "", ""), ("step", 2, F.TYPE_INT64, "", ""),
                      ("file_version", 3, F.TYPE_STRING, "", "what"), ("graph_def", 4, b, "", "what"),
                      ("summary", 5, msg, "Summary", "what"), ("log_message", 6, b, "", "what"),
                      ("session_log", 7, msg, "SessionLog", "what"),
                      ("tagged_run_metadata", 8, b, "", "what"), ("meta_graph_def", 9, b, "", "what")], "what")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{pkg}.Event"))


def _corrupt(path: Path, n: int, offset: int, what: str) -> RunFileError:
    return RunFileError(str(path), None, f"record {n} at byte {offset}: {what}")


def _whole_record_after(f: BinaryIO, start: int, size: int) -> int | None:
    """The offset of the first whole record (both CRCs check) from ``start`` to the end of
    the file, looked for ``SCAN_CHUNK`` bytes at a time; None when there is none."""
    crc = _crc32c()
    pos = start
    while pos < size - 16:
        f.seek(pos)
        buf = f.read(SCAN_CHUNK + 11)
        for m in _HEADER_AT.finditer(buf, 0, min(SCAN_CHUNK, len(buf) - 11)):
            i = m.start()
            length, hcrc = _HEAD.unpack_from(buf, i)
            c = crc(buf[i:i + 8])
            if hcrc != (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF or pos + i + 16 + length > size:
                continue
            f.seek(pos + i + 12)
            data = f.read(length + 4)
            if len(data) == length + 4 and _CRC.unpack_from(data, length)[0] == masked_crc32c(data[:length]):
                return pos + i
        pos += SCAN_CHUNK
    return None


def _what_field(head: bytes) -> int | None:
    """The number of the first Event field after ``wall_time`` and ``step`` in a record's
    first bytes (the ``what`` a writer sets), or None where the head does not say."""
    i = 0
    while i < len(head):
        key, shift = 0, 0
        while i < len(head) and head[i] & 0x80:
            key |= (head[i] & 0x7F) << shift
            shift += 7
            i += 1
        if i >= len(head):
            return None
        key |= head[i] << shift
        i += 1
        number, wire = key >> 3, key & 7
        if number == 1 and wire == 1:  # wall_time, a double
            i += 8
        elif number == 2 and wire == 0:  # step, a varint
            while i < len(head) and head[i] & 0x80:
                i += 1
            i += 1
        else:
            return number
    return None


def _big_record(f: BinaryIO, length: int) -> tuple[bool, bytes | None]:
    """(CRC checks, the data where it may hold scalars) of a record over ``BIG_RECORD``:
    its CRC computed a chunk at a time; the data is read whole again only when the Event
    is not a graph, a meta-graph or run metadata (fields 4, 8, 9), which hold no scalar."""
    import google_crc32c

    start = f.tell()
    c, left = 0, length
    head = b""
    while left:
        chunk = f.read(min(left, SCAN_CHUNK))
        if not chunk:
            return False, None
        head = head or chunk[:64]
        c = google_crc32c.extend(c, chunk)
        left -= len(chunk)
    want = f.read(4)
    if len(want) < 4 or _CRC.unpack(want)[0] != (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF:
        return False, None
    if _what_field(head) in (4, 8, 9):
        return True, None
    f.seek(start)
    data = f.read(length)
    f.seek(start + length + 4)
    return True, data


def records(path: Path, tail: Tail) -> Iterator[tuple[int, int, bytes]]:
    """(record number, byte offset, data) of each whole record, both CRCs checked."""
    crc = _crc32c()
    unpack_head, unpack_crc = _HEAD.unpack, _CRC.unpack_from
    with open(path, "rb") as f:
        read = f.read
        size = os.fstat(f.fileno()).st_size
        offset, n = 0, 0
        while True:
            head = read(12)
            if len(head) < 12:
                if head:  # a header cut short: nothing can follow it
                    tail.bytes, tail.what = len(head), f"record {n + 1} (half-written)"
                return
            n += 1
            length, hcrc = unpack_head(head)
            c = crc(head[:8])
            if hcrc != (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF:
                raise _corrupt(path, n, offset, "its length fails its CRC-32C (a corrupt record)")
            if length > MAX_RECORD:
                raise _corrupt(path, n, offset, f"a length of {length:,} bytes, over the 2 GiB an Event can "
                                                "have (a corrupt record)")
            end = offset + 16 + length
            if end > size:
                size = os.fstat(f.fileno()).st_size  # the writer may have added to it
            if end > size:
                after = _whole_record_after(f, offset + 12, size)
                if after is not None:
                    raise _corrupt(path, n, offset, f"a length of {length:,} bytes runs past the end of the "
                                                    f"file ({size:,} bytes), and a whole record follows at "
                                                    f"byte {after} (a corrupt record)")
                tail.bytes, tail.what = size - offset, f"record {n} (half-written)"
                return
            if length > BIG_RECORD:  # a graph or meta-graph: checked a chunk at a time, not held
                ok, kept = _big_record(f, length)
                if not ok:
                    raise _corrupt(path, n, offset, "its data fails its CRC-32C (a corrupt record)")
                if kept is not None:
                    yield n, offset, kept
                offset = end
                continue
            data = read(length + 4)
            if len(data) < length + 4:  # the file was cut while it was read
                tail.bytes, tail.what = 12 + len(data), f"record {n} (half-written)"
                return
            c = crc(data[:length])
            if unpack_crc(data, length)[0] != (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF:
                raise _corrupt(path, n, offset, "its data fails its CRC-32C (a corrupt record)")
            yield n, offset, data[:length]
            offset = end


def _tensor_scalar(t: Any) -> float | None:  # Any: the TensorProto above
    """A TF2 ``tf.summary.scalar`` value: a rank-0 float or double tensor."""
    if t.tensor_shape.dim:
        return None
    if t.dtype == _DT_FLOAT:
        if t.float_val:
            return float(t.float_val[0])
        if len(t.tensor_content) == 4:
            return float(_F32.unpack(t.tensor_content)[0])
    elif t.dtype == _DT_DOUBLE:
        if t.double_val:
            return float(t.double_val[0])
        if len(t.tensor_content) == 8:
            return float(_F64.unpack(t.tensor_content)[0])
    return None


def event_file(path: Path, tail: Tail) -> Iterator[Scalar]:
    """The scalars of one TensorBoard event file, in record order: ``simple_value`` and
    rank-0 float/double ``tensor`` values; a SessionLog START is ``RESTART_MARK``."""
    parse = event_class().FromString
    for n, offset, data in records(path, tail):
        try:
            ev = parse(data)
        except Exception as exc:  # protobuf's DecodeError: a record that passed its CRC
            raise _corrupt(path, n, offset, f"not an Event ({type(exc).__name__})") from None
        values = ev.summary.value
        if not values:
            if ev.HasField("session_log") and ev.session_log.status == _SESSION_START:
                yield RESTART_MARK, ev.step, ev.wall_time, 0.0  # a writer resumed at purge_step
            continue
        wall, step = ev.wall_time, ev.step
        for v in values:
            which = v.WhichOneof("value")
            if which == "simple_value":
                yield v.tag, step, wall, v.simple_value
            elif which == "tensor":
                x = _tensor_scalar(v.tensor)
                if x is not None:
                    yield v.tag, step, wall, x


def event_files(paths: list[Path], tails: dict[str, Tail], errors: list[RunFileError]) -> Iterator[Scalar]:
    """A folder's event files in order; a file that cannot be read to the end is an error
    of its own, and the next file is still read (a restart's new file is the evidence)."""
    for p in paths:
        tails[str(p)] = t = Tail()
        try:
            yield from event_file(p, t)
        except RunFileError as exc:
            errors.append(exc)
        except OSError as exc:
            errors.append(RunFileError(str(p), None, f"cannot be read ({exc.strerror or exc})"))
