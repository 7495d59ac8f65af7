from sessidx.cli import run

run()
