"""Loads the compiled extension, which registers the torch.ops.aclnn_portable operators.

The extension is a plain shared library (no Python module init): torch.ops.load_library loads
it, and its static TORCH_LIBRARY blocks register the ops. It finds libaclnn_portable, copied
next to it at install time, through an $ORIGIN rpath.
"""
import importlib.machinery
import os

import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
_loaded_path = None


def library_path():
    """Path of the compiled extension inside the package."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = os.path.join(_HERE, "_C" + suffix)
        if os.path.exists(candidate):
            return candidate
    raise ImportError(
        f"aclnn_portable: compiled extension _C{importlib.machinery.EXTENSION_SUFFIXES[0]} not "
        f"found in {_HERE}; install the package (scripts/build_python.sh, or "
        f"ACLNN_PORTABLE_PREFIX=<prefix> pip install --no-build-isolation ./python)")


def load():
    global _loaded_path
    if _loaded_path is None:
        path = library_path()
        torch.ops.load_library(path)
        _loaded_path = path
    return _loaded_path
