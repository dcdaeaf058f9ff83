// Runs one script of the working directory's package.json, if it defines it.
import { spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";

const name = process.argv[2];
let scripts = {};
try {
  scripts = JSON.parse(await readFile(join(process.cwd(), "package.json"), "utf8")).scripts ?? {};
} catch {
  console.log(`no package.json in ${process.cwd()}: nothing to run for "${name}"`);
  process.exit(0);
}
if (!(name in scripts)) {
  console.log(`package.json defines no "${name}" script`);
  process.exit(0);
}
const run = spawnSync("npm", ["run", "--silent", name], { encoding: "utf8" });
process.stdout.write(run.stdout ?? "");
process.stderr.write(run.stderr ?? "");
process.exit(run.status ?? 1);
