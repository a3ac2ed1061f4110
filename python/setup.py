"""Builds the simdbpe Python package: a C extension over the library's public API.

The extension links the static library libsimdbpe.a (objects built with -fPIC)
made by the project's CMake build, with the flags that build writes into its
simdbpe-uninstalled.pc (the libraries simdbpe uses: pkg-config reads them
from there, so they are listed once, in CMakeLists.txt). By default this
script runs CMake itself on the checkout this folder is in (python/..) into
python/build/lib-cmake; with SIMDBPE_BUILD_DIR set to an existing build
directory, it links that one instead (tools/dev.sh and the tests do this so
the library is built once). The version is the library's (include/simdbpe.h).
Needs cmake, ninja or make, a C compiler, pkg-config and the Debian packages
listed in tools/dev.sh; nothing is downloaded.

    pip install --no-build-isolation ./python

The package's metadata is in pyproject.toml.
"""
import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def library_version():
    """SIMDBPE_VERSION_MAJOR.MINOR.PATCH from include/simdbpe.h."""
    with open(os.path.join(ROOT, "include", "simdbpe.h"), encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(rf"^#define SIMDBPE_VERSION_{p} +(\d+)$", text, re.M) for p in
             ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        raise RuntimeError("include/simdbpe.h does not define SIMDBPE_VERSION_MAJOR/MINOR/PATCH")
    return ".".join(m.group(1) for m in parts)


def build_flags(build_dir):
    """Compiler and linker flags of the library in build_dir, static, from its
    simdbpe-uninstalled.pc: -lsimdbpe becomes the path of libsimdbpe.a (the
    directory may hold libsimdbpe.so too, which -l would prefer)."""
    env = dict(os.environ, PKG_CONFIG_PATH=build_dir)
    env.pop("PKG_CONFIG_DISABLE_UNINSTALLED", None)
    out = subprocess.run(["pkg-config", "--static", "--cflags", "--libs", "simdbpe"], check=True,
                         capture_output=True, text=True, env=env).stdout.split()
    archive = os.path.join(build_dir, "libsimdbpe.a")
    return ([f for f in out if f.startswith("-I")],
            [archive if f == "-lsimdbpe" else f for f in out if not f.startswith("-I")])


class BuildWithLibrary(build_ext):
    """Builds (or finds) libsimdbpe.a before compiling the extension."""

    def library_dir(self):
        given = os.environ.get("SIMDBPE_BUILD_DIR")
        if given:
            for need in ("libsimdbpe.a", "simdbpe-uninstalled.pc"):
                if not os.path.exists(os.path.join(given, need)):
                    raise RuntimeError(f"SIMDBPE_BUILD_DIR={given} has no {need}")
            return given
        out = os.path.join(HERE, "build", "lib-cmake")
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(["cmake", "-S", ROOT, "-B", out, *generator,
                        "-DCMAKE_BUILD_TYPE=Release", "-DSIMDBPE_BUILD_TESTS=OFF",
                        "-DSIMDBPE_BUILD_BENCH=OFF", "-DSIMDBPE_BUILD_CLI=OFF",
                        "-DSIMDBPE_BUILD_SHARED=OFF", "-DSIMDBPE_INSTALL=OFF"], check=True)
        subprocess.run(["cmake", "--build", out, "--target", "simdbpe"], check=True)
        return out

    def build_extensions(self):
        lib_dir = self.library_dir()
        cflags, libs = build_flags(lib_dir)
        for ext in self.extensions:
            ext.extra_compile_args += cflags
            ext.extra_link_args += libs
            # Relinked when the library changes, not only its own source (a
            # stale extension kept the library it was first linked with).
            ext.depends = ext.depends + [os.path.join(lib_dir, "libsimdbpe.a")]
        super().build_extensions()


setup(
    version=library_version(),
    ext_modules=[Extension("simdbpe._simdbpe", sources=["simdbpe/_simdbpe.c"],
                           extra_compile_args=["-std=c11", "-O2"])],
    cmdclass={"build_ext": BuildWithLibrary},
)
