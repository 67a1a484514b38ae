"""Sending SIGTERM to a command run as a subprocess once it has reached a given point."""
import signal
import time


def terminate_when(proc, ready, seconds: float = 600, pause: float = 0.0) -> str:
    """Wait until ``ready()`` (the process must still run, within ``seconds``), wait
    ``pause`` seconds more, send SIGTERM and return the process's stderr once it ended;
    the process is killed if anything fails."""
    try:
        deadline = time.monotonic() + seconds
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"not ready within {seconds} s"
            time.sleep(0.2)
        time.sleep(pause)
        proc.send_signal(signal.SIGTERM)
        return proc.communicate(timeout=300)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
