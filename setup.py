"""Only what pyproject.toml cannot say: the cffi extension of the native core."""

from setuptools import setup

setup(cffi_modules=["ccgformat/_native/build.py:ffibuilder"])
