# Attention Lab: `make lab` to study, `make test` to check everything.
# Each target sets up what it needs on a fresh machine (python3 with venv and make).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PORT   ?= 8888
INLINE := module://matplotlib_inline.backend_inline  # kernels draw figures as stored PNGs
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
NB ?= $(sort $(wildcard notebooks/*.ipynb notebooks/solutions/*.ipynb))

.PHONY: setup setup-compat setup-site lab restart check test test-portable test-compat lint bench notebooks kernel e2e site test-site clean

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

# The Korean edition: make lab LANG=ko (a Korean locale, LANG=ko_KR.UTF-8, opens it too).
KOREAN := $(if $(filter ko%,$(LANG)),ko/)

# A learner works in my-work/ (git-ignored): `workspace.py sync` copies the notebooks it lacks,
# never overwrites one, and names the chapters the series has a newer version of.
WORKSPACE := $(BIN)/python scripts/workspace.py

lab: $(STAMP)
	@$(WORKSPACE) sync --edition $(if $(KOREAN),ko,en)
	$(if $(filter ko,$(LANG)),env -u LANG) $(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(PORT) \
		--notebook-dir=my-work $(ROOT_FLAG) --LabApp.default_url=/lab/tree/$(KOREAN)00_start_here.ipynb

# A fresh copy of one notebook in my-work/, the old one kept under a dated name:
# make restart NB=03 (NB=ko/03 for the Korean edition, NB=solutions/03 for a solution).
restart: $(STAMP)
	@test "$(origin NB)" = "command line" || { echo "say which notebook: make restart NB=03"; exit 2; }
	@$(WORKSPACE) restart $(NB)

# Two workers, one file each at a time (a notebook's cells must stay in one kernel);
# one thread per worker so the two do not fight over the two cores. No test asserts a time
# (speed is `make bench`); the cell timeout only catches a hang (the slowest cell takes 12 s).
test: $(STAMP) lint
	MPLBACKEND=$(INLINE) OMP_NUM_THREADS=1 $(BIN)/python -m pytest tests notebooks --nbval \
		--nbval-current-env --nbval-cell-timeout=300 \
		--nbval-sanitize-with tests/nbval_sanitize.cfg -n 2 --dist loadfile

# Everything a contributor runs before committing: the tests, then the portable check.
check: test test-portable

# nbval on the English notebooks under other CPU kernels, ISAs and thread counts, each with every
# inexact PyTorch result nudged by a few ulps: a stored output must read the same on any learner's
# CPU (the Korean twins print the same floats from the same code: tests/test_korean.py).
# make test-portable ONLY=avx2 runs one of the settings (scripts/portable_check.py --list).
test-portable: $(STAMP)
	$(BIN)/python scripts/portable_check.py $(ONLY)

# The unit and explorer tests (Korean ones included), then nbval on the English notebooks, in a second
# environment holding exactly the oldest versions pyproject.toml supports (requirements-compat.txt:
# ipywidgets 7.7, numpy 1.26, ...): a stored output must read the same under every supported version
# (the Korean twins print the same floats from the same code, as for test-portable).
COMPAT       := .venv-compat
COMPAT_STAMP := $(COMPAT)/.installed

$(COMPAT_STAMP): requirements-compat.txt pyproject.toml
	@test -x $(COMPAT)/bin/python || $(PYTHON) -m venv $(COMPAT)
	$(COMPAT)/bin/python -m pip install --quiet --upgrade pip
	$(COMPAT)/bin/python -m pip install --quiet -r requirements-compat.txt
	@touch $(COMPAT_STAMP)

setup-compat: $(COMPAT_STAMP)

test-compat: $(COMPAT_STAMP)
	@$(COMPAT)/bin/python -c "import ipywidgets, matplotlib, numpy, pandas, seaborn, torch; \
		print('test-compat: ipywidgets', ipywidgets.__version__, '| numpy', numpy.__version__, \
		'| matplotlib', matplotlib.__version__, '| seaborn', seaborn.__version__, '| pandas', pandas.__version__, \
		'| torch', torch.__version__)"
	MPLBACKEND=Agg OMP_NUM_THREADS=1 $(COMPAT)/bin/python -m pytest tests -n 2 --dist loadfile
	MPLBACKEND=$(INLINE) OMP_NUM_THREADS=1 $(COMPAT)/bin/python -m pytest notebooks --ignore=notebooks/ko \
		--nbval --nbval-current-env --nbval-cell-timeout=300 \
		--nbval-sanitize-with tests/nbval_sanitize.cfg -n 2 --dist loadfile

lint: $(STAMP)
	$(BIN)/ruff check .

# Speed, measured and printed, never asserted in a test (a busy machine would fail it): every
# explorer's update per control, notebook 03's explorer against seaborn (the one bound, a ratio
# from the same run), the training loops' step rates, every explorer's controls moved in JupyterLab
# and timed in the page (headless Chromium, as for `make e2e`), and the site's latency when
# build/site exists. The table is saved as build/bench.json.
bench: $(STAMP)
	MPLBACKEND=Agg $(BIN)/python benchmarks/bench.py

# Re-execute every notebook in place so its stored outputs are current, both editions: the
# English ones, then `translations.py build` writes the Korean twins' sources, then the Korean
# ones run as themselves (one or a few: make notebooks NB="notebooks/03_scaling_sqrt_dk.ipynb").
# A twin whose translation is missing or stale is not built: the build says which cells.
EXECUTE := MPLBACKEND=$(INLINE) $(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	--ExecutePreprocessor.timeout=300 --ExecutePreprocessor.store_widget_state=False
NB_EN = $(filter-out notebooks/ko/%,$(NB))

notebooks: $(STAMP)
	$(if $(NB_EN),$(EXECUTE) $(NB_EN))
	@twins=$$($(BIN)/python scripts/translations.py build --only $(NB)); status=$$?; \
		if [ -n "$$twins" ]; then echo "executing the Korean edition: $$twins" | tr '\n' ' '; echo; \
		$(EXECUTE) $$twins || exit 1; fi; exit $$status

# Register this environment as a Jupyter kernel for a Jupyter installed elsewhere.
kernel: $(STAMP)
	$(BIN)/python -m ipykernel install --user --name attention-lab --display-name "Attention Lab (.venv)"

# Real-browser tests, not part of `make test`: each widget notebook in JupyterLab (a throw-away
# copy) driven from the keyboard in Debian's headless Chromium via Playwright, plus the
# slider-to-picture latency. Installs chromium (apt) and playwright (pip) when missing;
# never `playwright install`. Screenshots and latency.json go to build/e2e/. The latency test
# runs alone (a second browser beside it would be in its measurement); the others run two at a
# time, each worker with its own JupyterLab (they wait on the browser and kernel more than compute).
CHROMIUM   ?= /usr/bin/chromium
PLAYWRIGHT := playwright==1.65.2

e2e: $(STAMP)
	@test -x $(CHROMIUM) || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); export DEBIAN_FRONTEND=noninteractive; \
		$$SUDO apt-get install -y chromium || { $$SUDO apt-get update && $$SUDO apt-get install -y chromium; }; }
	@$(BIN)/python -c "import playwright" 2>/dev/null || $(BIN)/python -m pip install --quiet $(PLAYWRIGHT)
	E2E_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest e2e/test_latency.py -v
	E2E_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest e2e -v -rP -n 2 --dist load \
		--ignore=e2e/test_site.py --ignore=e2e/test_latency.py

# The static site (both editions, explorers live, no server): build/site/. The toolchain
# (requirements-site.txt, PyPI only) goes into .venv; pictures and Sphinx's state are cached in
# build/site-cache/, so a rebuild redraws and re-reads only what changed. SITE_REPOSITORY is the
# one repository URL the pages' "Open in Colab" and clone commands are built from; unset, it is
# this clone's GitHub `origin` remote, and with neither the pages say they have no address.
SITE_STAMP      := $(VENV)/.site-installed
SITE_REPOSITORY ?=

$(SITE_STAMP): $(STAMP) requirements-site.txt
	$(BIN)/python -m pip install --quiet -r requirements-site.txt
	@touch $(SITE_STAMP)

setup-site: $(SITE_STAMP)

site: $(SITE_STAMP)
	SITE_REPOSITORY=$(SITE_REPOSITORY) OMP_NUM_THREADS=1 MPLBACKEND=Agg $(BIN)/python -m website.build

# Every page of both editions in headless Chromium (served from 127.0.0.1): no console error,
# no failed or outside request, maths typeset, 0 axe-core (WCAG 2.1 A/AA) violations, every control of every explorer moves the picture
# and readouts, latency measured with the picture decoded ahead and cold (alone, then the rest two at a time); screenshots and results in build/site-e2e/.
# fonts-nanum: a Hangul font, so the Korean pages' screenshots are legible (readers have their own).
# axe-core, the accessibility checker test-site runs on every page (WCAG 2.1 A and AA), pinned and
# checked: the npm registry's tarball of this version, its SHA-256 below.
AXE_VERSION := 4.14.1
AXE_SHA256  := e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745
AXE         := build/axe/axe.min.js

$(AXE):
	mkdir -p build/axe
	cd build/axe && npm pack --silent axe-core@$(AXE_VERSION) >/dev/null \
		&& echo "$(AXE_SHA256)  axe-core-$(AXE_VERSION).tgz" | sha256sum -c --quiet - \
		&& tar xzf axe-core-$(AXE_VERSION).tgz package/axe.min.js && mv package/axe.min.js axe.min.js && rmdir package

test-site: site $(AXE)
	@{ test -x $(CHROMIUM) && fc-list 2>/dev/null | grep -qi nanum; } || { SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		export DEBIAN_FRONTEND=noninteractive; PKGS="$$(test -x $(CHROMIUM) || echo chromium) fonts-nanum"; \
		$$SUDO apt-get install -y $$PKGS || { $$SUDO apt-get update && $$SUDO apt-get install -y $$PKGS; }; }
	@$(BIN)/python -c "import playwright" 2>/dev/null || $(BIN)/python -m pip install --quiet $(PLAYWRIGHT)
	E2E_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest e2e/test_site.py -v -k latency
	E2E_CHROMIUM=$(CHROMIUM) $(BIN)/python -m pytest e2e/test_site.py -v -n 2 --dist load -k "not latency"

clean:
	rm -rf $(VENV) $(COMPAT) build .pytest_cache .ruff_cache
