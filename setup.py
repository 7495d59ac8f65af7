# The compiled parts: the key press's listing loop (sessidx/_stamps.c) and a content index's
# token counting (sessidx/_words.c), in C. Optional: with no compiler the install goes on, and
# readers.py and content/tokens.py do the same in Python.
from setuptools import Extension, setup

setup(ext_modules=[Extension("sessidx._stamps", ["sessidx/_stamps.c"], optional=True),
                   Extension("sessidx._words", ["sessidx/_words.c"], optional=True)])
