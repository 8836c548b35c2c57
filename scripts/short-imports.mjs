// Renames the wasm's imports from wasm-bindgen's JS glue, `__wbg_<name>_<16 hex digits>`, to
// short names (`w0`, `w1`, ...), in the wasm's import section and in the glue's imports object
// alike. Each long name is in both files, and its hash digits do not compress: 4.0 KB of the
// wasm and 2.8 KB of the glue, gzipped. Other imports keep their names. Refuses (changes
// nothing) unless every renamed name occurs exactly once in the glue.
// usage: node scripts/short-imports.mjs APP_bg.wasm APP.js
import fs from 'node:fs';

const [wasmFile, jsFile] = process.argv.slice(2);
const wasm = fs.readFileSync(wasmFile);
let js = fs.readFileSync(jsFile, 'utf8');

function leb(at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = wasm[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (byte < 0x80) return [value, at];
  }
}
function uleb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
}
// Skips a limits field (flags, min, and max when flag bit 0 is set).
function limits(at) {
  const [flags, next] = leb(at);
  at = leb(next)[1];
  return flags & 1 ? leb(at)[1] : at;
}

const parts = [wasm.subarray(0, 8)];
let at = 8;
let renamed = 0;
while (at < wasm.length) {
  const id = wasm[at];
  const [size, bodyAt] = leb(at + 1);
  const end = bodyAt + size;
  if (id !== 2) {
    parts.push(wasm.subarray(at, end));
    at = end;
    continue;
  }
  let [count, p] = leb(bodyAt);
  const body = [uleb(count)];
  while (count--) {
    const [moduleLen, moduleAt] = leb(p);
    const module = wasm.subarray(moduleAt, moduleAt + moduleLen);
    const [nameLen, nameAt] = leb(moduleAt + moduleLen);
    let name = wasm.subarray(nameAt, nameAt + nameLen).toString('utf8');
    const kindAt = nameAt + nameLen;
    const kind = wasm[kindAt];
    let q = kindAt + 1;
    if (kind === 0) q = leb(q)[1]; // function: type index
    else if (kind === 1) q = limits(q + 1); // table: element type, limits
    else if (kind === 2) q = limits(q); // memory: limits
    else if (kind === 3) q += 2; // global: value type, mutability
    else if (kind === 4) q = leb(q + 1)[1]; // tag: attribute, type index
    else throw new Error(`short-imports: unknown import kind ${kind}`);
    if (/^__wbg_\w+$/.test(name)) {
      const uses = js.split(name).length - 1;
      if (uses !== 1) {
        console.error(`short-imports: left ${wasmFile} as it is (${name} is in the glue ${uses} times)`);
        process.exit(0);
      }
      const short = `w${(renamed++).toString(36)}`;
      js = js.replace(name, short);
      name = short;
    }
    const nameBytes = Buffer.from(name, 'utf8');
    body.push(uleb(moduleLen), module, uleb(nameBytes.length), nameBytes, wasm.subarray(kindAt, q));
    p = q;
  }
  if (p !== end) throw new Error('short-imports: the import section did not parse');
  const section = Buffer.concat(body);
  parts.push(Buffer.from([2]), uleb(section.length), section);
  at = end;
}
fs.writeFileSync(wasmFile, Buffer.concat(parts));
fs.writeFileSync(jsFile, js);
