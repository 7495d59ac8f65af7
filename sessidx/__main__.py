"""`python -m sessidx`: the command line (cli.run)."""

from sessidx.cli import run

run()
