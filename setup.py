# The one compiled part: the key press's listing loop in C (sessidx/_stamps.c). Optional: with
# no compiler the install goes on, and readers.py lists in Python.
from setuptools import Extension, setup

setup(ext_modules=[Extension("sessidx._stamps", ["sessidx/_stamps.c"], optional=True)])
