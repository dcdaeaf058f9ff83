import { spawnSync } from "node:child_process";
const run = spawnSync("npm", ["test", "--silent"], { cwd: process.cwd(), encoding: "utf8" });
process.stdout.write(run.stdout ?? "");
process.stderr.write(run.stderr ?? "");
process.exit(run.status ?? 1);
