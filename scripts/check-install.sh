#!/usr/bin/env bash
# Checks that Plait is consumable three ways: cmake --install + find_package(plait), pkg-config,
# and FetchContent. Builds and runs the examples each way. Used by `make test`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/gcc-release}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "install-check: cmake --install -> $tmp/prefix"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null

echo "install-check: find_package(plait)"
cmake -S "$root/examples" -B "$tmp/ex" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/ex" >/dev/null
"$tmp/ex/example_fib" 20 | grep -q "fib(20) = 6765"
"$tmp/ex/example_task_group" >/dev/null

echo "install-check: libomp's soname beside libplait-omp"
compat=$(find "$tmp/prefix" -path '*/plait-omp-compat/libomp.so.5' | head -1)
[[ -n "$compat" && "$(readlink -f "$compat")" == "$(readlink -f "$(dirname "$compat")/../libplait-omp.so.1")" ]] || {
  echo "install-check: plait-omp-compat/libomp.so.5 missing or not libplait-omp" >&2; exit 1; }

echo "install-check: pkg-config"
pc=$(dirname "$(find "$tmp/prefix" -name plait.pc | head -1)")
# shellcheck disable=SC2046
g++ $(PKG_CONFIG_PATH="$pc" pkg-config --cflags plait) "$root/examples/fib.cpp" -o "$tmp/fib-pc" \
    $(PKG_CONFIG_PATH="$pc" pkg-config --libs plait)
"$tmp/fib-pc" 15 | grep -q "fib(15) = 610"

echo "install-check: FetchContent"
mkdir -p "$tmp/fc"
cat > "$tmp/fc/CMakeLists.txt" <<CML
cmake_minimum_required(VERSION 3.22)
project(fc CXX)
include(FetchContent)
FetchContent_Declare(plait SOURCE_DIR "$root")
FetchContent_MakeAvailable(plait)
add_executable(fc_fib "$root/examples/fib.cpp")
target_link_libraries(fc_fib PRIVATE plait::plait)
CML
cmake -S "$tmp/fc" -B "$tmp/fc/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/fc/build" >/dev/null
"$tmp/fc/build/fc_fib" 18 | grep -q "fib(18) = 2584"
echo "install-check: 3 passed, 0 failed"
