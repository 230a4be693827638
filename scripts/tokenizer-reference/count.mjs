// Counts, with Hugging Face tokenizers itself, the prompts of requests loadcurve wrote or sent:
// a JSONL file of requests ({"prompt": …} or {"messages": […]} a line, as `loadcurve workload
// --out` writes them, or request bodies as a capture server logs them), each line's prompt (or
// its messages' contents, summed) counted without special tokens. Prints the count of every
// line, then a summary; with --want N, exits 1 unless every line counts N.
// Usage: node count.mjs TOKENIZER.json REQUESTS.jsonl [--want N]
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("tokenizers");
const [file, requests, flag, want] = process.argv.slice(2);
const tk = Tokenizer.fromFile(file);
const n = async (s) => (await tk.encode(s, null, { addSpecialTokens: false })).getIds().length;

const counts = [];
for (const line of readFileSync(requests, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const r = JSON.parse(line);
  let c = 0;
  if (r.messages) for (const m of r.messages) c += await n(m.content);
  else c = await n(r.prompt);
  counts.push(c);
}
console.log(counts.join(" "));
const min = Math.min(...counts), max = Math.max(...counts);
console.log(`${counts.length} prompts, ${min}..${max} tokens by Hugging Face tokenizers`);
if (flag === "--want" && (min !== Number(want) || max !== Number(want))) process.exit(1);
