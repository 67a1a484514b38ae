"""Starting or joining Ray for a study (docs/scale.md): a cluster that does not answer
is given up after a timeout with one line, and SIGTERM keeps the command's own handler.

Ray is an optional extra: it is imported by :func:`import_ray` only, never at module top.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import threading

CONNECT_TIMEOUT = 15.0       # seconds to wait for the cluster of --address


class ClusterUnreachable(ConnectionError, ValueError):
    """No Ray cluster answered at the address: a ConnectionError, and a ValueError so that
    commands that report bad input in one line (exit 2) report this one the same way."""


def import_ray():
    """The ray module; ImportError saying how to install it."""
    try:
        import ray                   # inside: ray is an optional extra
    except ImportError:
        raise ImportError("backend='ray' needs Ray: pip install 'caledonia-env[ray]'") from None
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of ``host:port`` or ``ray://host:port``; None for 'auto' and the like."""
    rest = address.removeprefix("ray://")
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def probe(address: str, timeout: float) -> None:
    """ClusterUnreachable at once if nothing listens at ``address`` (a TCP connection within
    ``timeout`` seconds); an address without a port ('auto') is left to Ray."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        socket.create_connection(hp, timeout=timeout).close()
    except OSError as e:
        reason = e.strerror or str(e) or type(e).__name__
        raise ClusterUnreachable(f"cannot reach the Ray cluster at {address}: {reason} "
                              f"(waited up to {timeout:g} s, --connect-timeout)") from None


class _Quiet(logging.Filter):
    """Drops Ray's notes while it connects: its progress (INFO) and that it set no SIGTERM
    handler from a helper thread (we want none); a failure is reported in one line."""

    def filter(self, record):
        return (record.levelno > logging.INFO
                and "SIGTERM handler is not set" not in record.getMessage())


def _init_within(ray, address: str, timeout: float) -> None:
    """``ray.init(address)`` in a helper thread; ClusterUnreachable if it fails or has not
    finished within ``timeout`` seconds (Ray itself retries for minutes)."""
    box: dict = {}

    def target():
        try:
            ray.init(address=address, log_to_driver=False)
        except BaseException as e:   # handed to the main thread below
            box["error"] = e

    logs = [logging.getLogger(name) for name in ("ray._private.worker", "ray.client_builder")]
    quiet = _Quiet()
    for log in logs:
        log.addFilter(quiet)
    try:
        th = threading.Thread(target=target, name="ray-connect", daemon=True)
        th.start()
        th.join(timeout)
    finally:
        for log in logs:
            log.removeFilter(quiet)
    if th.is_alive():
        raise ClusterUnreachable(f"no Ray cluster answered at {address} within {timeout:g} s "
                              f"(--connect-timeout); is it running, and is the address right?")
    if "error" in box:
        first = (str(box["error"]).strip().splitlines() or [type(box["error"]).__name__])[0]
        raise ClusterUnreachable(f"cannot connect to the Ray cluster at {address}: {first}")


def connect(ray, address: str | None, workers: int | None, timeout: float) -> bool:
    """Start a local Ray (``address`` None, ``workers`` CPUs) or join the cluster at
    ``address``; True if this call did it (then :func:`disconnect` after), False if Ray was
    already initialized. The SIGTERM handler in place before is put back (``ray.init``
    installs one that exits at once, skipping the caller's clean-up)."""
    if ray.is_initialized():
        return False
    main = threading.current_thread() is threading.main_thread()
    old = signal.getsignal(signal.SIGTERM) if main else None
    try:
        if address is None:
            root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
            ray.init(address="local", num_cpus=workers, include_dashboard=False,
                     log_to_driver=False, _node_ip_address="127.0.0.1",
                     runtime_env={"env_vars": {"PYTHONPATH": root}})
        else:
            probe(address, timeout)
            _init_within(ray, address, timeout)
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
    return True


def disconnect(ray) -> None:
    """Stop the local Ray, or leave the cluster, that :func:`connect` started."""
    ray.shutdown()
