"""Builds the simdbpe Python package: a C extension over the library's public API.

The extension links the static library libsimdbpe.a (objects built with -fPIC)
made by the project's CMake build. By default this script runs CMake itself on
the checkout this folder is in (python/..) into python/build/lib-cmake; with
SIMDBPE_BUILD_DIR set to an existing build directory that has libsimdbpe.a, it
links that one instead (tools/dev.sh and the tests do this so the library is
built once). Needs cmake, ninja or make, a C compiler, pkg-config and the
Debian packages listed in tools/dev.sh; nothing is downloaded.

    pip install --no-build-isolation ./python
"""
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def pkg_config(*names):
    """Compiler and linker flags of system libraries, from pkg-config."""
    out = subprocess.run(["pkg-config", "--cflags", "--libs", *names], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


class BuildWithLibrary(build_ext):
    """Builds (or finds) libsimdbpe.a before compiling the extension."""

    def library_dir(self):
        given = os.environ.get("SIMDBPE_BUILD_DIR")
        if given:
            if not os.path.exists(os.path.join(given, "libsimdbpe.a")):
                raise RuntimeError(f"SIMDBPE_BUILD_DIR={given} has no libsimdbpe.a")
            return given
        out = os.path.join(HERE, "build", "lib-cmake")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", ROOT, "-B", out, *generator,
                        "-DCMAKE_BUILD_TYPE=Release", "-DSIMDBPE_BUILD_TESTS=OFF",
                        "-DSIMDBPE_BUILD_BENCH=OFF"], check=True)
        subprocess.run(["cmake", "--build", out, "--target", "simdbpe"], check=True)
        return out

    def build_extensions(self):
        lib_dir = self.library_dir()
        # The dataset engine (simdbpe_dataset.h) reads .zst and .gz inputs.
        flags = pkg_config("jansson", "libxxhash", "libutf8proc", "libzstd", "zlib")
        for ext in self.extensions:
            ext.extra_objects = [os.path.join(lib_dir, "libsimdbpe.a")]
            # Relinked when the library changes, not only its own source (a
            # stale extension kept the library it was first linked with).
            ext.depends = ext.depends + ext.extra_objects
            ext.extra_compile_args += [f for f in flags if f.startswith("-I")]
            ext.extra_link_args += [f for f in flags if not f.startswith("-I")]
            ext.extra_link_args += ["-pthread", "-lm"]
        super().build_extensions()


setup(
    name="simdbpe",
    version="0.1.0",
    description="Exact, fast byte-level BPE (GPT-2) tokenizer with a tiktoken-shaped API",
    packages=["simdbpe"],
    ext_modules=[Extension("simdbpe._simdbpe", sources=["simdbpe/_simdbpe.c"],
                           include_dirs=[os.path.join(ROOT, "include")],
                           extra_compile_args=["-std=c11", "-O2"])],
    cmdclass={"build_ext": BuildWithLibrary},
    python_requires=">=3.10",
    zip_safe=False,
)
