"""Build the aclnn_portable Python package and its torch extension.

The extension links the C library libaclnn_portable (built and installed by CMake). Point
ACLNN_PORTABLE_PREFIX at the install prefix (the folder with include/ and lib/), e.g.

    cmake -S . -B build && cmake --build build && cmake --install build --prefix /opt/aclnn
    ACLNN_PORTABLE_PREFIX=/opt/aclnn pip install --no-build-isolation ./python

The library is copied into the package and found through an $ORIGIN rpath, so the installed
package works from any directory without LD_LIBRARY_PATH. scripts/build_python.sh does all this
for the repository's .venv.
"""
import glob
import os
import re
import shutil

from setuptools import setup

try:
    from torch.utils.cpp_extension import BuildExtension, CppExtension
except ImportError as error:  # e.g. pip's isolated build environment, which has no torch
    raise SystemExit(
        "aclnn_portable: torch is needed to build the extension, and it must be the torch you "
        "will run with: install with `pip install --no-build-isolation ./python` from an "
        f"environment that has torch ({error})")

HERE = os.path.dirname(os.path.abspath(__file__))


def _library_prefix():
    prefix = os.environ.get("ACLNN_PORTABLE_PREFIX")
    if not prefix:
        raise SystemExit(
            "aclnn_portable: set ACLNN_PORTABLE_PREFIX to the install prefix of the C library "
            "(the folder holding include/acl/acl.h and lib/libaclnn_portable.so); "
            "scripts/build_python.sh builds and installs it for you")
    prefix = os.path.abspath(prefix)
    for needed in ("include/acl/acl.h", "include/mhc/mhc.h", "lib/libaclnn_portable.so"):
        if not os.path.exists(os.path.join(prefix, needed)):
            raise SystemExit(f"aclnn_portable: {os.path.join(prefix, needed)} not found "
                             f"(ACLNN_PORTABLE_PREFIX={prefix})")
    return prefix


PREFIX = _library_prefix()
LIB_DIR = os.path.join(PREFIX, "lib")


def _runtime_library_files():
    """The file names the extension loads at run time: the SONAME (libaclnn_portable.so.0)."""
    names = [os.path.basename(p) for p in glob.glob(os.path.join(LIB_DIR, "libaclnn_portable.so.*"))]
    sonames = [n for n in names if re.fullmatch(r"libaclnn_portable\.so\.\d+", n)]
    return sonames or names or ["libaclnn_portable.so"]


class BuildWithLibrary(BuildExtension):
    """Builds the extension, then copies the C library next to it (found via $ORIGIN)."""

    def run(self):
        super().run()
        package_dir = os.path.join(self.build_lib, "aclnn_portable")
        if self.inplace:
            package_dir = os.path.join(HERE, "aclnn_portable")
        for name in _runtime_library_files():
            shutil.copyfile(os.path.realpath(os.path.join(LIB_DIR, name)),
                            os.path.join(package_dir, name))


extension = CppExtension(
    name="aclnn_portable._C",
    sources=[os.path.join("csrc", f) for f in ("library.cc", "sce.cc", "mhc.cc")],
    include_dirs=[os.path.join(PREFIX, "include")],
    library_dirs=[LIB_DIR],
    libraries=["aclnn_portable"],
    extra_compile_args=["-std=c++17", "-O2", "-g0"],
    extra_link_args=["-Wl,-rpath,$ORIGIN"],
)

setup(
    name="aclnn_portable",
    version="0.1.0",
    description="PyTorch ops (with autograd) for aclnn-portable: SoftmaxCrossEntropyWithLogits, "
                "mhc_post, mhc_pre",
    packages=["aclnn_portable"],
    ext_modules=[extension],
    cmdclass={"build_ext": BuildWithLibrary},
    python_requires=">=3.8",
    zip_safe=False,
)
