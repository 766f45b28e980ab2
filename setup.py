"""The Python module `termalign` and the `termalign` command, built by the project's CMake.

`pip install --no-build-isolation .` configures the build folder when it has no build files yet (new, or after a
failed configure), builds only the module and the CLI in it, and installs the module into site-packages and the CLI
into the environment's bin/. Environment variables:
  TERMALIGN_PIP_BUILD_DIR  the CMake build folder (default build/pip), kept so that the next install rebuilds only
                           what changed; an already configured folder (such as build/) is used with its own options
  TERMALIGN_CMAKE_ARGS     CMake arguments over the defaults (Release, no tests, TERMALIGN_NATIVE=ON: this machine's
                           instruction set), e.g. "-DTERMALIGN_NATIVE=OFF" for a module that runs on other machines
  CMAKE_CXX_COMPILER_LAUNCHER, CMAKE_BUILD_PARALLEL_LEVEL  read by CMake (e.g. ccache; jobs, default: every core)
"""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# setuptools has no build_scripts of its own; distutils' is the one setuptools supplies, once imported.
from distutils.command.build_scripts import build_scripts

ROOT = pathlib.Path(__file__).resolve().parent
BUILD = (ROOT / (os.environ.get("TERMALIGN_PIP_BUILD_DIR") or "build/pip")).resolve()  # relative: to ROOT
VERSION = re.search(r"project\(termalign VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)
CLI = BUILD / "termalign"


def configure_arguments(build, extra, python):
    """The CMake arguments with which to configure `build` before building, [] when it needs no configure.

    A folder without generated build files (Makefile or build.ninja) is configured with the defaults, then `extra`
    (TERMALIGN_CMAKE_ARGS): a new folder, or one whose configure failed (which leaves CMakeCache.txt, not the build
    files). A configured folder keeps its options, gets `extra`, and the module when configured without it.
    """
    build = pathlib.Path(build)
    if not (build / "Makefile").exists() and not (build / "build.ninja").exists():
        return ["-DCMAKE_BUILD_TYPE=Release", "-DTERMALIGN_BUILD_TESTS=OFF", "-DTERMALIGN_PYTHON=ON",
                f"-DPython_EXECUTABLE={python}", *extra]
    cache = build / "CMakeCache.txt"
    if not cache.exists() or "TERMALIGN_PYTHON:BOOL=ON" not in cache.read_text():
        return [*extra, "-DTERMALIGN_PYTHON=ON"]
    return list(extra)


class CMakeBuild(build_ext):
    """Configures the build folder (when it has no build files, or with TERMALIGN_CMAKE_ARGS) and builds the module
    and the CLI."""

    def build_extension(self, ext):
        # The interpreter itself, not a virtual environment's link to it, which may be deleted before the folder's
        # next configure.
        configure = configure_arguments(BUILD, shlex.split(os.environ.get("TERMALIGN_CMAKE_ARGS", "")),
                                        os.path.realpath(sys.executable))
        if configure:
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(BUILD), *configure], check=True)
        jobs = [] if "CMAKE_BUILD_PARALLEL_LEVEL" in os.environ else ["-j", str(os.cpu_count() or 1)]
        subprocess.run(["cmake", "--build", str(BUILD), *jobs, "--target", "termalign_python", "termalign"],
                       check=True)
        module = BUILD / "python" / ("termalign" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not module.exists():
            sys.exit(f"{BUILD} holds no module for this Python ({module.name}): it was configured for another "
                     "one; set TERMALIGN_PIP_BUILD_DIR to a new folder.")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(module, target)


class CopyCli(build_scripts):
    """The CLI is a program, copied as it is (build_scripts would read a script's first line as Python text)."""

    def copy_scripts(self):
        self.mkpath(self.build_dir)
        target = os.path.join(self.build_dir, CLI.name)
        self.copy_file(str(CLI), target)
        return [target], [target]


if __name__ == "__main__":  # as pip and `python setup.py` run it; a test imports configure_arguments alone
    BUILD.mkdir(parents=True, exist_ok=True)
    setup(
        version=VERSION,
        ext_modules=[Extension("termalign", sources=[])],
        # The CLI, built by build_ext before build_scripts (CopyCli) copies it; setuptools takes relative paths only.
        scripts=[os.path.relpath(CLI, ROOT)],
        cmdclass={"build_ext": CMakeBuild, "build_scripts": CopyCli},
        # setuptools' own files beside the CMake build, not in the source tree.
        options={"build": {"build_base": str(BUILD / "setuptools")}, "egg_info": {"egg_base": str(BUILD)}},
    )
