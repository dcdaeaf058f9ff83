import { readFile } from "node:fs/promises";
import { join } from "node:path";
const pkg = JSON.parse(await readFile(join(process.cwd(), "package.json"), "utf8"));
const ok = /^\d+\.\d+\.\d+$/.test(pkg.version);
console.log(ok ? `version ${pkg.version} is a release version` : `version ${pkg.version} is not x.y.z`);
process.exit(ok ? 0 : 1);
