"""Parsers for the measuring tools' machine-readable output (pure functions, no I/O).

Each returns a number in one stated unit or raises ``MeasureError`` with a reason a
person can act on; the unit traps are the ones in shared/reference/node-probing.md §3, §5:

* iperf3 ``-J``: ``end.sum_received.bits_per_second`` is **bit/s** (delivered data, as the
  receiver counted it); a top-level ``"error"`` string means the test failed.
* ``ib_write_bw --report_gbits``: the result row's 4th column is the *average* BW in
  Gb/s (1e9 bit/s); without ``--report_gbits`` it is MiB/s (2^20 bytes).
* nccl-tests ``all_reduce_perf``: per-size rows with busbw in GB/s (1e9 bytes/s). The
  ``# Avg bus bandwidth`` line averages over all sizes, so we gate on the largest size.
* ``ping -q``: ``rtt min/avg/max/mdev = a/b/c/d ms``; we take the average.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from validator.report.model import JSONValue


class MeasureError(Exception):
    """A measurement that gave no number, with the reason."""


_LINE_START_BRACE = re.compile(r"(?m)^[ \t\r]*\{")


def json_object(text: str, accept: Callable[[dict[str, JSONValue]], bool] | None = None) -> dict[str, JSONValue]:
    """The JSON object in ``text``, tolerating noise around it.

    Over ssh a login banner or motd can precede a command's output, and over a
    pseudo-terminal stderr lines can surround it. The whole text is tried first, then a
    decoder from every line that starts with ``{`` (first to last); the first object that
    ``accept(obj)`` takes (any object without ``accept``) wins, else the last object
    found. Raises ``json.JSONDecodeError`` from the whole-text attempt when nothing
    parses, so the caller's message names the real problem.
    """
    try:
        return json.loads(text)  # the whole output, whatever it is: the caller validates it
    except json.JSONDecodeError as exc:
        first_error = exc
    decoder = json.JSONDecoder()
    fallback: dict[str, JSONValue] | None = None
    for m in _LINE_START_BRACE.finditer(text):
        try:
            obj, _end = decoder.raw_decode(text, m.end() - 1)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            if accept is None or accept(obj):
                return obj
            fallback = obj
    if fallback is not None:  # an object, but not the expected one: the caller says why
        return fallback
    raise first_error


def iperf3_bits_per_second(text: str) -> float:
    """Delivered TCP throughput in bit/s from ``iperf3 -c ... -J`` output."""
    # over a pseudo-terminal stderr lines may surround the JSON
    try:
        data = json_object(text)
    except json.JSONDecodeError:
        first = text.strip().splitlines()[:1]
        raise MeasureError(
            f"iperf3 output is not JSON: {first[0][:200] if first else 'empty'}"
        ) from None
    if not isinstance(data, dict):
        raise MeasureError("iperf3 output is not a JSON object")
    if isinstance(data.get("error"), str):
        raise MeasureError(f"iperf3: {data['error']}")
    end = data.get("end") or {}
    summary = end.get("sum_received") or end.get("sum")
    bps = summary.get("bits_per_second") if isinstance(summary, dict) else None
    if not isinstance(bps, (int, float)) or isinstance(bps, bool):
        raise MeasureError("iperf3 JSON has no end.sum_received.bits_per_second")
    return float(bps)


def iperf3_mean_rtt_us(text: str) -> float | None:
    """The sender's mean TCP RTT (us, Linux only), a by-product kept as evidence."""
    try:
        streams = json_object(text)["end"]["streams"]
        rtts = [s["sender"]["mean_rtt"] for s in streams if "mean_rtt" in s.get("sender", {})]
    except (ValueError, KeyError, TypeError):
        return None
    return sum(rtts) / len(rtts) if rtts else None


_MIB_TO_GBIT = 2**20 * 8 / 1e9


def ib_write_bw_gbits(text: str) -> float:
    """Average bandwidth in Gb/s from ``ib_write_bw`` text output (the client's)."""
    header_seen = False
    gbits = True
    for line in text.splitlines():
        if "#bytes" in line and "BW average" in line:
            header_seen = True
            gbits = "Gb/sec" in line
            continue
        if header_seen:
            parts = line.split()
            if len(parts) >= 4 and parts[0].isdigit():
                try:
                    avg = float(parts[3])
                except ValueError:
                    continue
                return avg if gbits else avg * _MIB_TO_GBIT
    for line in text.splitlines():
        if re.search(r"(?i)(couldn't|unable|failed|error)", line):
            raise MeasureError(f"ib_write_bw: {line.strip()[:200]}")
    raise MeasureError(
        "ib_write_bw printed no result row (expected a '#bytes ... BW average' table)"
    )


def ib_write_lat_us(text: str) -> float:
    """Typical (median) one-way latency in microseconds from ``ib_write_lat`` text output.

    perftest's latency tests time a ping-pong and report half of each round trip; the table
    is ``#bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] ...``, and
    warnings ("Conflicting CPU frequency values detected") may sit between header and row."""
    header: list[str] | None = None
    for line in text.splitlines():
        if "#bytes" in line and "t_typical" in line:
            header = line.replace("99% percentile", "p99").replace("99.9% percentile", "p999").split()
            continue
        if header is not None:
            parts = line.split()
            if len(parts) >= 5 and parts[0].isdigit() and parts[1].isdigit():
                col = next(i for i, h in enumerate(header) if h.startswith("t_typical"))
                try:
                    return float(parts[col])
                except (ValueError, IndexError):
                    raise MeasureError(f"ib_write_lat: unreadable result row: {line.strip()[:200]}") from None
    for line in text.splitlines():
        if re.search(r"(?i)(couldn't|unable|failed|error)", line):
            raise MeasureError(f"ib_write_lat: {line.strip()[:200]}")
    raise MeasureError("ib_write_lat printed no result row (expected a '#bytes ... t_typical' table)")


def nccl_busbw(text: str) -> dict[str, JSONValue]:
    """Bus bandwidth at the largest message size of an nccl-tests run.

    Returns ``{"size": bytes, "busbw_gbs": GB/s (out-of-place), "wrong": int|None}``.
    Columns are found from the header row, so versions with and without ``root`` work.
    """
    columns: list[str] | None = None
    best: dict[str, JSONValue] | None = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#"):
            toks = s.lstrip("#").split()
            if "size" in toks and "busbw" in toks:
                columns = toks
            continue
        toks = s.split()
        if columns is None or not toks or not toks[0].isdigit() or len(toks) < len(columns) - 4:
            continue
        try:
            size = int(toks[columns.index("size")])
            busbw = float(toks[columns.index("busbw")])
        except (ValueError, IndexError):
            continue
        wrong_i = columns.index("#wrong") if "#wrong" in columns else None
        wrong = toks[wrong_i] if wrong_i is not None and wrong_i < len(toks) else None
        if best is None or size >= best["size"]:
            best = {
                "size": size,
                "busbw_gbs": busbw,
                "wrong": int(wrong) if wrong and wrong.isdigit() else None,
            }
    if best is None:
        m = re.search(r"(?m)^.*(NCCL|error|Error|failed).*$", text)
        raise MeasureError(
            f"nccl-tests printed no result rows{': ' + m.group(0).strip()[:200] if m else ''}"
        )
    if best["wrong"]:
        raise MeasureError(f"nccl-tests: {best['wrong']} wrong values at {best['size']} bytes")
    return best


_RTT = re.compile(r"(?:rtt|round-trip) min/avg/max(?:/mdev)? = ([\d.]+)/([\d.]+)/([\d.]+)")


def ping_avg_ms(text: str) -> float:
    """Average round-trip time in ms from ``ping -q`` output."""
    m = _RTT.search(text)
    if m:
        return float(m.group(2))
    loss = re.search(r"(?<![\d.])(\d{1,12}(?:\.\d{1,12})?)% packet loss", text)  # bounded: no re-scan per digit
    if loss:
        raise MeasureError(f"ping: {loss.group(1)}% packet loss, no round trip measured")
    last = [ln for ln in text.strip().splitlines() if ln.strip()][-1:] or ["no output"]
    raise MeasureError(f"ping: {last[0].strip()[:200]}")


TORCH_MARK = "SPEC_CHECK_ALLREDUCE "


def torch_allreduce(text: str) -> dict[str, JSONValue]:
    """``{"size": bytes, "busbw_gbs": GB/s, "world": ranks}`` from the torch.distributed
    fallback's rank-0 line (``SPEC_CHECK_ALLREDUCE {json}``); busbw as nccl-tests defines it
    for all_reduce: algbw x 2(n-1)/n, from the slowest rank's time."""
    for line in reversed(text.splitlines()):
        i = line.find(TORCH_MARK)
        if i < 0:
            continue
        try:
            data = json.loads(line[i + len(TORCH_MARK) :])
            return {"size": int(data["size"]), "busbw_gbs": float(data["busbw_gbs"])}
        except (ValueError, KeyError, TypeError):
            raise MeasureError(f"torch.distributed: unreadable result line: {line.strip()[:200]}") from None
    m = re.findall(r"(?m)^.*(?:Error|error|failed|NCCL).*$", text)
    raise MeasureError(
        "torch.distributed all_reduce printed no result" + (f": {m[-1].strip()[:200]}" if m else "")
    )
