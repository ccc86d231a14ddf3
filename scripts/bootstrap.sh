#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian 12 machine: installs what is missing, touches nothing else.
# Called by `make demo` and `make test`. Set PLAIT_NO_BOOTSTRAP=1 to skip it entirely.
set -euo pipefail
[ "${PLAIT_NO_BOOTSTRAP:-0}" = "1" ] && exit 0

need_pkgs=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

for p in cmake ninja-build g++ gcc gfortran-12 make pkg-config clang-16 libclang-rt-16-dev libomp-16-dev flang-16 libtbb-dev libgtest-dev \
         libbenchmark-dev libhwloc-dev valgrind python3 python3-venv openmpi-bin libopenmpi-dev; do
  have_pkg "$p" || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need_pkgs[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# uv manages the Python side (python/pyproject.toml + uv.lock).
if ! have_cmd uv; then
  echo "bootstrap: installing uv"
  if python3 -m pip --version >/dev/null 2>&1; then
    python3 -m pip install -q --user uv 2>/dev/null || python3 -m pip install -q --break-system-packages --user uv
  else
    python3 -m venv "$HOME/.local/uv-venv" && "$HOME/.local/uv-venv/bin/pip" install -q uv
    mkdir -p "$HOME/.local/bin" && ln -sf "$HOME/.local/uv-venv/bin/uv" "$HOME/.local/bin/uv"
  fi
fi
if [ -f python/pyproject.toml ]; then
  export PATH="$HOME/.local/bin:$PATH"
  (cd python && uv sync --frozen --quiet)
fi
exit 0
