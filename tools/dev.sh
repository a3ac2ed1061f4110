#!/usr/bin/env bash
# dev.sh - set up a fresh Debian machine, build simdbpe, and run it or its tests.
#
#   tools/dev.sh demo   install what is missing, build, encode a sample text with
#                       the embedded GPT-2 model (ids + a one-line summary)
#   tools/dev.sh test   install what is missing, build, run every test (ctest),
#                       then the sanitizer build and the fuzz corpora replay
#   tools/dev.sh build  install what is missing and build (into build/)
#
# Needs Debian/Ubuntu with apt; installs packages as root (or with sudo).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${SIMDBPE_BUILD_DIR:-$here/build}

# Build tools and the libraries simdbpe uses (all from Debian).
packages=(
  gcc make cmake ninja-build pkg-config
  libjansson-dev libxxhash-dev libzstd-dev zlib1g-dev libssl-dev libutf8proc-dev libpcre2-dev
  libonig-dev
  libsimde-dev libcriterion-dev
  clang libclang-rt-14-dev python3 python3-distributed zstd valgrind
  python3-dev python3-setuptools python3-venv python3-pip python3-wheel python3-pytest python3-numpy
)

install_packages() {
  local missing=()
  # The checks against HF tokenizers and tiktoken (tests/hf) run them with
  # node: Debian's, unless the machine has a node already.
  command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "dev.sh: installing ${missing[*]}" >&2
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

build() {
  cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$build_dir" >/dev/null
  # The Python package's extension, in place in python/simdbpe/, linked
  # against the library just built (ctest's "python" test installs it into
  # a virtual environment of its own).
  (cd "$here/python" && SIMDBPE_BUILD_DIR=$build_dir python3 setup.py -q build_ext \
    --inplace --build-temp "$build_dir/python-ext" >/dev/null)
}

case "${1:-}" in
  demo)
    install_packages
    build
    echo "--- $here/tools/sample.txt"
    cat "$here/tools/sample.txt"
    echo "--- GPT-2 token ids (one line per document):"
    "$build_dir/simdbpe" encode "$here/tools/sample.txt"
    ;;
  test)
    install_packages
    build
    (cd "$build_dir" && ctest --output-on-failure -j2)
    if [ -x "$here/tests/ci_sanitize.sh" ]; then
      "$here/tests/ci_sanitize.sh"
    fi
    ;;
  build)
    install_packages
    build
    ;;
  *)
    sed -n '2,10p' "$0" >&2
    exit 2
    ;;
esac
