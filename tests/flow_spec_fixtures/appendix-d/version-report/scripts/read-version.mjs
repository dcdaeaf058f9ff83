import { readFile } from "node:fs/promises";
import { join } from "node:path";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString("utf8"));
// The business project is the process cwd, never the package directory.
const pkg = JSON.parse(await readFile(join(process.cwd(), "package.json"), "utf8"));
process.stdout.write(JSON.stringify({ task: request.task, version: pkg.version }));
