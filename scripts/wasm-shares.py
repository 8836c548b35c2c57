#!/usr/bin/env python3
"""What the page's wasm is made of: its code by crate, and its data.

    cargo build --profile wasm-release --target wasm32-unknown-unknown -p opal-web
    python3 scripts/wasm-shares.py target/wasm32-unknown-unknown/wasm-release/opal-web.wasm

Reads the wasm before wasm-bindgen and wasm-opt (the build keeps function names there), gives
each function body to the crate its name starts with (a trait impl to its type's crate, so a
component's render code is the app's, and yew's code instantiated for it is yew's), and
gzips each crate's bodies together. The shipped wasm is smaller (wasm-opt) and gzips across
crates, so the shares, not the sums, carry over.
"""
import collections
import gzip
import re
import sys

GROUPS = {
    "engine": "engine (the simulation)",
    "opal": "opal (documents, Opal import, presets, sweeps, races)",
    "opal_web": "opal_web (the app's components and state)",
    "yew": "yew (instantiated per component)",
    "core": "Rust's core, alloc and std (formatting, collections, floats)",
    "alloc": "Rust's core, alloc and std (formatting, collections, floats)",
    "std": "Rust's core, alloc and std (formatting, collections, floats)",
    "dlmalloc": "Rust's core, alloc and std (formatting, collections, floats)",
    "serde": "serde and serde_json",
    "serde_core": "serde and serde_json",
    "serde_json": "serde and serde_json",
}


def leb(b, i):
    result = shift = 0
    while True:
        x = b[i]
        i += 1
        result |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return result, i


def sections(data):
    i = 8
    while i < len(data):
        sid = data[i]
        size, i = leb(data, i + 1)
        yield sid, i, size
        i += size


def imported_functions(data, off):
    n, j = leb(data, off)
    count = 0
    for _ in range(n):
        for _ in range(2):  # module and field names
            length, j = leb(data, j)
            j += length
        kind = data[j]
        j += 1
        if kind == 0:
            _, j = leb(data, j)
            count += 1
        elif kind == 1:  # table: element type, limits
            flags, j = leb(data, j + 1)
            _, j = leb(data, j)
            if flags & 1:
                _, j = leb(data, j)
        elif kind == 2:  # memory: limits
            flags, j = leb(data, j)
            _, j = leb(data, j)
            if flags & 1:
                _, j = leb(data, j)
        elif kind == 3:  # global: type, mutability
            j += 2
    return count


def crate(name):
    """The crate a (legacy- or v0-mangled) function name belongs to."""
    m = re.match(r"_ZN(\d+)(.*)", name)
    if m:
        first = m.group(2)[: int(m.group(1))].lstrip("_")
        while first.startswith("$LT$"):
            first = first[4:].lstrip("_").replace("$RF$", "").replace("mut$u20$", "")
        return re.split(r"\.\.|\$", first)[0]
    m = re.match(r"_R.*?C[a-zA-Z0-9_]*?_?(\d+)([a-z_][a-z0-9_]*)", name)
    if m:
        return m.group(2)[: int(m.group(1))]
    return "?"


def main(path):
    data = open(path, "rb").read()
    imports, bodies, names, data_bytes = 0, [], {}, b""
    for sid, off, size in sections(data):
        if sid == 2:
            imports = imported_functions(data, off)
        elif sid == 10:
            n, j = leb(data, off)
            for _ in range(n):
                size_k, j = leb(data, j)
                bodies.append(data[j : j + size_k])
                j += size_k
        elif sid == 11:
            data_bytes = data[off : off + size]
        elif sid == 0:
            n, j = leb(data, off)
            if data[j : j + n] != b"name":
                continue
            j, end = j + n, off + size
            while j < end:
                sub = data[j]
                sub_size, j = leb(data, j + 1)
                if sub == 1:
                    count, k = leb(data, j)
                    for _ in range(count):
                        idx, k = leb(data, k)
                        length, k = leb(data, k)
                        names[idx] = data[k : k + length].decode("utf8", "replace")
                        k += length
                j += sub_size
    if not names:
        sys.exit(f"{path} has no function names: read the wasm cargo built, before wasm-opt")
    code = collections.defaultdict(bytearray)
    for k, body in enumerate(bodies):
        code[GROUPS.get(crate(names.get(imports + k, "?")), "other crates (wasm-bindgen, js-sys, web-sys, hashbrown, miniz_oxide, …)")] += body
    rows = [(g, len(b), len(gzip.compress(bytes(b), 9))) for g, b in code.items()]
    rows.append(("data: text and tables", len(data_bytes), len(gzip.compress(data_bytes, 9))))
    total_gz = sum(r[2] for r in rows)
    print(f"{'part':62s} {'raw':>9s} {'gzip':>8s} {'share':>6s}")
    for g, raw, gz in sorted(rows, key=lambda r: -r[2]):
        print(f"{g:62s} {raw:9d} {gz:8d} {100 * gz / total_gz:5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])
