# The two commands of the README: `make run` (the server with the demo on an
# embedded SQLite file) and `make test` (the whole suite: Swift tests on SQLite
# and PostgreSQL, then published Python clients (Vonage SDK, pyotp) against trifactord over TLS).
.PHONY: run test build bench fuzz clean cluster chaos docs deb package-test image

DATA ?= data

run:
	@scripts/install-deps.sh build
	swift build -c release --product trifactord
	swift build -c release --product trifactor-bank
	@scripts/run-demo.sh

test:
	@scripts/install-deps.sh test
	python3 scripts/check-floors.py
	swift format lint --strict --recursive --parallel Sources Tests fuzz Package.swift
	swift build --build-tests
	scripts/docs.sh
	scripts/with-postgres.sh sh -c 'timeout 900 swift test --skip-build && scripts/client-tests.sh'

build:
	@scripts/install-deps.sh build
	swift build

# The Debian package (trifactor_VERSION_ARCH.deb in .build/deb): static release builds, dpkg-deb.
deb:
	@scripts/install-deps.sh package
	scripts/build-deb.sh

# An OCI image of trifactord built from scratch with buildah; checked under chroot (IMAGE_TEST=1 by default).
image:
	@scripts/install-deps.sh image
	IMAGE_TEST=$${IMAGE_TEST:-1} scripts/build-image.sh

# Builds the package, installs it on this machine (root), checks it, and purges it again: not in `make test`.
package-test:
	@scripts/install-deps.sh package
	scripts/package-test.sh

# The DocC archives of API and TrifactorKit in .build/docs/ (the test command builds them too, warnings failing it).
docs:
	@scripts/install-deps.sh build
	scripts/docs.sh

# Coverage-guided fuzzing of the parsers of attacker bytes, FUZZ_SECONDS per harness.
fuzz:
	@scripts/install-deps.sh build
	fuzz/run.sh $${FUZZ_SECONDS:-60}

# Two trifactord instances on one throwaway PostgreSQL behind nginx, and the bank; Ctrl-C stops all.
cluster:
	@scripts/install-deps.sh bench
	@scripts/install-deps.sh test
	swift build -c release --product trifactord
	swift build -c release --product trifactor-bank
	scripts/cluster.sh

# The cluster's fault scenarios in rounds, with long load phases (CHAOS_ROUNDS, CHAOS_SECONDS).
chaos:
	@scripts/install-deps.sh test
	@scripts/install-deps.sh bench
	swift build --product trifactord
	scripts/chaos.sh

bench:
	@scripts/install-deps.sh bench
	swift build -c release --product trifactord
	bench/run.sh
	bench/topologies.sh
	bench/oidc.sh
	bench/dpop.sh
	bench/probes.py

clean:
	rm -rf .build
