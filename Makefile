# The commands a newcomer needs; each installs what is missing first.

.PHONY: serve test bench

## Build the app and serve it on http://127.0.0.1:8080
serve:
	@scripts/serve.sh

## Run every test: lints, engine, SimPy conformance, wasm build, browser
test:
	@scripts/test.sh

## Run the benchmarks and print their figures: engine benches, peers, a sweep in Chromium, memory
bench:
	@scripts/bench.sh
