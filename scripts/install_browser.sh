#!/bin/sh
# Install Debian's chromium for the browser tests of `caledonia serve` (tests/web/test_web_browser.py).
# Idempotent: does nothing when a chromium binary is already there. Needs root (or sudo) on Debian.
set -eu
for bin in /usr/bin/chromium /usr/bin/chromium-browser; do
    if [ -x "$bin" ]; then
        echo "install_browser: $bin is already installed ($("$bin" --version 2>/dev/null || echo 'version unknown')); nothing to do"
        exit 0
    fi
done
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_browser: apt-get not found; install Chromium with your package manager" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install_browser: run as root (or install sudo) to apt-get install chromium" >&2
        exit 1
    fi
fi
echo "install_browser: running: $SUDO apt-get update"
$SUDO apt-get update
echo "install_browser: running: $SUDO apt-get install -y --no-install-recommends chromium"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends chromium
echo "install_browser: installed $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
