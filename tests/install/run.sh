#!/usr/bin/env bash
# run.sh BUILD_DIR WORK_DIR VERSION - what other projects do with simdbpe:
# installs BUILD_DIR into a fresh prefix (cmake --install), then builds and
# runs consumer/consumer.c against it
#   - with find_package(simdbpe VERSION EXACT): the shared and the static
#     library (consumer/CMakeLists.txt);
#   - with pkg-config: `pkg-config --cflags --libs simdbpe`, and the static
#     library with `--static` (Requires.private brings its dependencies);
# and checks what was installed: the CLI runs, the shared library exports
# exactly the functions the installed headers declare (no internal
# simdbpe__ symbol, none missing). Last, a project that adds the source
# tree with add_subdirectory (subproject/) is configured: it gets the
# library and its consumer, and no tests, benchmarks or CLI.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
version=$3
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
fail() { echo "install/run.sh: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install failed"; }
libdir=$(dirname "$(find "$prefix" -name 'libsimdbpe.so' | head -1)")
[ -f "$libdir/libsimdbpe.a" ] || fail "no libsimdbpe.a installed beside $libdir/libsimdbpe.so"
for h in simdbpe.h simdbpe_batch.h simdbpe_dataset.h simdbpe_train.h; do
  [ -f "$prefix/include/$h" ] || fail "$h not installed"
done

# The CLI, from the prefix.
echo "Hello world" >"$work/hello.txt"
[ "$("$prefix/bin/simdbpe" encode "$work/hello.txt" -q)" = "15496 995 198" ] ||
  fail "the installed simdbpe does not encode hello.txt as 15496 995 198"

# needed BINARY: the libsimdbpe soname it needs, if any.
needed() { readelf -d "$1" | sed -n 's/.*Shared library: \[\(libsimdbpe[^]]*\)\].*/\1/p'; }

# find_package.
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here/consumer" -B "$work/cmake" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DWANT_VERSION="$version" >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; fail "find_package(simdbpe $version EXACT) failed"; }
cmake --build "$work/cmake" >"$work/cmake-build.log" 2>&1 ||
  { cat "$work/cmake-build.log"; fail "the find_package consumer does not build"; }
"$work/cmake/consumer_shared"
"$work/cmake/consumer_static"
[ -n "$(needed "$work/cmake/consumer_shared")" ] || fail "simdbpe::simdbpe is not the shared library"
[ -z "$(needed "$work/cmake/consumer_static")" ] || fail "simdbpe::simdbpe_static needs a shared library"

# pkg-config (only the prefix's .pc: not this build's uninstalled one).
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_DISABLE_UNINSTALLED=1
[ "$(pkg-config --modversion simdbpe)" = "$version" ] ||
  fail "pkg-config --modversion simdbpe is not $version"
# shellcheck disable=SC2046 # the flags are words
"$cc" -o "$work/pc_shared" "$here/consumer/consumer.c" $(pkg-config --cflags --libs simdbpe)
LD_LIBRARY_PATH=$libdir "$work/pc_shared"
[ -n "$(needed "$work/pc_shared")" ] || fail "pkg-config --libs did not link the shared library"
# shellcheck disable=SC2046
"$cc" -o "$work/pc_static" "$here/consumer/consumer.c" $(pkg-config --cflags simdbpe) \
  $(pkg-config --static --libs simdbpe | sed 's/-lsimdbpe\b/-l:libsimdbpe.a/')
"$work/pc_static"

# The shared library's symbols: exactly the functions the headers declare.
nm -D --defined-only "$libdir/libsimdbpe.so" | awk '{print $3}' | grep -v '^_' | sort -u \
  >"$work/exported"
sed -n 's/^SIMDBPE_API [^(]*[ *]\(simdbpe_[a-z0-9_]*\)(.*/\1/p' "$prefix"/include/simdbpe*.h |
  sort -u >"$work/declared"
[ -s "$work/declared" ] || fail "no SIMDBPE_API function found in the installed headers"
if ! diff "$work/declared" "$work/exported" >"$work/symbols.diff"; then
  echo "< declared by the headers only, > exported only:" >&2
  cat "$work/symbols.diff" >&2
  fail "libsimdbpe.so's symbols differ from the headers' functions"
fi
# add_subdirectory: the targets it would build.
cmake -S "$here/subproject" -B "$work/sub" -G Ninja -DSIMDBPE_SOURCE_DIR="$here/../.." \
  >"$work/sub.log" 2>&1 || { cat "$work/sub.log"; fail "add_subdirectory(simdbpe) failed"; }
ninja -C "$work/sub" -t targets all | sed -n 's/^\([^:]*\): .*/\1/p' >"$work/sub.targets"
grep -q '^consumer$' "$work/sub.targets" || fail "add_subdirectory: no consumer target"
grep -q '^simdbpe/libsimdbpe\.a$' "$work/sub.targets" || fail "add_subdirectory: no libsimdbpe.a"
if grep -E '(^|/)(test_|bench_|fuzz_)|simdbpe/simdbpe$|libsimdbpe\.so' "$work/sub.targets" >&2; then
  fail "add_subdirectory builds more than the library (above)"
fi
echo "install/run.sh: $(wc -l <"$work/exported") functions exported, consumers built and run"
