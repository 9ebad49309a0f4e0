"""Measurement parsers on recorded output (iperf3 3.12 recorded here; perftest and
nccl-tests shaped per shared/reference/node-probing.md §3, §5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.cluster.measure import parsers

DATA = Path(__file__).parent / "data"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_iperf3_bits_per_second_is_sum_received():
    bps = parsers.iperf3_bits_per_second(read("iperf3_client.json"))
    assert bps == pytest.approx(16802531619.227776)  # bit/s, not Mbit/s
    assert parsers.iperf3_mean_rtt_us(read("iperf3_client.json")) is not None


def test_iperf3_error_key_is_the_reason():
    with pytest.raises(parsers.MeasureError, match="Connection refused"):
        parsers.iperf3_bits_per_second(read("iperf3_refused.json"))


@pytest.mark.parametrize("text", ["", "iperf3: error - unable to connect", "[]", '{"end": {}}'])
def test_iperf3_unusable_output(text):
    with pytest.raises(parsers.MeasureError):
        parsers.iperf3_bits_per_second(text)


def test_ib_write_bw_average_column_in_gbits():
    assert parsers.ib_write_bw_gbits(read("ib_write_bw_gbits.txt")) == pytest.approx(385.31)


def test_ib_write_bw_mib_is_converted():
    # 45933.12 MiB/s * 2^20 * 8 / 1e9 = 385.31 Gb/s
    assert parsers.ib_write_bw_gbits(read("ib_write_bw_mib.txt")) == pytest.approx(385.31, rel=1e-3)


def test_ib_write_bw_failure_reason():
    with pytest.raises(parsers.MeasureError, match="Couldn't connect"):
        parsers.ib_write_bw_gbits(read("ib_write_bw_refused.txt"))


def test_nccl_gates_on_largest_size_not_average():
    r = parsers.nccl_busbw(read("nccl_all_reduce.txt"))
    assert r == {
        "size": 17179869184,
        "busbw_gbs": 370.98,
        "wrong": 0,
    }  # not "Avg bus bandwidth" 365.2


def test_nccl_older_header_without_root():
    r = parsers.nccl_busbw(read("nccl_all_reduce_old.txt"))
    assert r["size"] == 8589934592 and r["busbw_gbs"] == 289.02


def test_nccl_wrong_values_and_empty_output():
    bad = read("nccl_all_reduce.txt").replace("370.98      0", "370.98      7")
    with pytest.raises(parsers.MeasureError, match="7 wrong"):
        parsers.nccl_busbw(bad)
    with pytest.raises(parsers.MeasureError):
        parsers.nccl_busbw("NCCL WARN Connect to 10.0.0.2 failed\n")


def test_ping_average_and_loss():
    assert parsers.ping_avg_ms(read("ping_ok.txt")) == pytest.approx(0.110)
    with pytest.raises(parsers.MeasureError, match="100% packet loss"):
        parsers.ping_avg_ms(read("ping_loss.txt"))
    assert parsers.ping_avg_ms("round-trip min/avg/max = 0.1/0.2/0.3 ms") == pytest.approx(0.2)
