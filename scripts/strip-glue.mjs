// Trunk's JS minifier cannot parse wasm-bindgen's glue (`export { .., __wbg_init as default }`)
// and ships it as written, as it copies web/worker.js. This drops what the browser does not
// need from either: indentation, whole-line comments and blank lines. Line breaks stay, so
// automatic semicolon insertion reads the code as before. Where that could change the code
// (a template literal or a string spanning lines, a comment block with code after it), it
// leaves the file as it is.
// usage: node scripts/strip-glue.mjs FILE.js
import fs from 'node:fs';

const file = process.argv[2];
const lines = fs.readFileSync(file, 'utf8').split('\n');
const unsafe = lines.find((l) => (l.split('`').length - 1) % 2 !== 0 || l.endsWith('\\'));
if (unsafe !== undefined) {
  console.error(`strip-glue: left ${file} as it is (a literal may span lines: ${unsafe.trim()})`);
  process.exit(0);
}
const out = [];
let inDoc = false;
for (const line of lines) {
  const l = line.trim();
  if (inDoc || l.startsWith('/*')) {
    const end = l.indexOf('*/');
    if (end >= 0 && end + 2 !== l.length) {
      console.error(`strip-glue: left ${file} as it is (code after a comment: ${l})`);
      process.exit(0);
    }
    inDoc = end < 0;
    continue;
  }
  if (l === '' || l.startsWith('//')) continue;
  out.push(l);
}
fs.writeFileSync(file, `${out.join('\n')}\n`);
