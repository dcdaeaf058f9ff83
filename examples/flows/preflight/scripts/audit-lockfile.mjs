// Flags dependencies pinned to pre-release versions in the working directory's package.json.
import { readFile } from "node:fs/promises";
import { join } from "node:path";

let manifest = {};
try {
  manifest = JSON.parse(await readFile(join(process.cwd(), "package.json"), "utf8"));
} catch {
  process.stdout.write(JSON.stringify({ checked: 0, prerelease: [] }));
  process.exit(0);
}
const all = { ...manifest.dependencies, ...manifest.devDependencies };
const prerelease = Object.entries(all)
  .filter(([, range]) => /-(alpha|beta|rc|next)/.test(String(range)))
  .map(([name, range]) => `${name}@${range}`);
process.stdout.write(JSON.stringify({ checked: Object.keys(all).length, prerelease }));
process.exit(prerelease.length ? 1 : 0);
