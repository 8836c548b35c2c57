# The two commands a newcomer needs; both install what is missing first.

.PHONY: serve test

## Build the app and serve it on http://127.0.0.1:8080
serve:
	@scripts/serve.sh

## Run every test: lints, engine, SimPy conformance, wasm build, browser
test:
	@scripts/test.sh
