"""sessidx: pick any coding-agent session on this machine and resume it in its folder."""

__version__ = "0.1.0"
