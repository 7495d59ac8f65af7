# make run: the picker (or the list, without a terminal); make test: the whole suite.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
# pytest-xdist workers, a test file each (their tmux sockets, sshd ports and homes are their own);
# the tests mostly wait on shells, fzf and sshd, so more workers than cores
JOBS ?= 4
XDIST := -n $(JOBS) --dist loadfile

.PHONY: run test itest unit lint bench conformance demo clean

$(BIN)/.installed: pyproject.toml setup.py sessidx/_stamps.c sessidx/_words.c  # the C parts are built in place
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[dev]' --config-settings editable_mode=compat
	$(BIN)/python -m compileall -q sessidx  # bytecode even where PYTHONDONTWRITEBYTECODE is set
	touch $@

run: $(BIN)/.installed
	$(BIN)/sessidx || [ $$? -eq 130 ]  # Esc or Ctrl-C in the picker is no failure

test: $(BIN)/.installed
	$(BIN)/pytest $(XDIST)

unit: $(BIN)/.installed
	$(BIN)/pytest $(XDIST) -m 'not shell and not slow'

itest: $(BIN)/.installed
	$(BIN)/pytest $(XDIST) -m shell

lint: $(BIN)/.installed
	$(BIN)/ruff check sessidx tests fixtures
	$(BIN)/mypy
	shellcheck -s bash shell/sessidx.bash
	zsh -n shell/sessidx.zsh
	fish --no-execute shell/sessidx.fish

bench: $(BIN)/.installed
	$(BIN)/python -m compileall -q sessidx
	$(BIN)/python fixtures/bench.py

# Not part of test: installs the pinned agent CLIs from npm and drives them for minutes.
# `make conformance LATEST=1`: the newest versions on the registries instead, each one's help diffed against its pin's.
conformance: $(BIN)/.installed
	# every part runs, and the target fails if any did
	rc=0; \
	$(BIN)/python fixtures/conformance.py || rc=1; \
	$(BIN)/python fixtures/conformance_more.py || rc=1; \
	$(BIN)/python fixtures/conformance_login.py || rc=1; \
	$(BIN)/python fixtures/conformance_tui.py || rc=1; \
	$(BIN)/python fixtures/conformance_mcp.py || rc=1; \
	$(BIN)/python fixtures/conformance_kimicode.py || rc=1; \
	exit $$rc

demo: $(BIN)/.installed
	$(BIN)/python fixtures/make_demo.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis build sessidx/*.so
