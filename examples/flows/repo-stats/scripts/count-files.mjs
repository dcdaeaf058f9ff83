// Counts regular files under the working directory (the business project), by extension.
import { readdir } from "node:fs/promises";
import { extname, join } from "node:path";

const skip = new Set([".git"]);
const at = process.argv.indexOf("--skip");
if (at !== -1 && process.argv[at + 1]) skip.add(process.argv[at + 1]);

const counts = {};
async function walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    if (entry.isDirectory()) await walk(join(dir, entry.name));
    else if (entry.isFile()) {
      const ext = extname(entry.name) || "(none)";
      counts[ext] = (counts[ext] ?? 0) + 1;
    }
  }
}
await walk(process.cwd());
process.stdout.write(JSON.stringify(counts));
