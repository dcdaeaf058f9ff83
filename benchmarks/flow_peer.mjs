// Times a Flow loader written in TypeScript (the peer named in docs/testing.md) on the
// packages benchmarks/flow_bench.py sends. argv[2]: the directory holding the peer's
// transpiled flow-loader.js (ES modules). stdin: {"groups": [{name, paths, repeats}]}.
// Each group is loaded once to warm the JIT, then `repeats` times; a pass loads every
// path in turn (a refused package counts as done: its error is the answer).
// stdout: {name: {cpu_ms, wall_ms, loaded, refused}}, each time the fastest pass.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const peer = await import(pathToFileURL(join(process.argv[2], "flow-loader.js")).href);
const { groups } = JSON.parse(readFileSync(0, "utf8"));

const pass = async (paths) => {
  let loaded = 0;
  for (const path of paths) {
    try {
      await peer.loadFlow(path);
      loaded++;
    } catch {
      // refused: the loader stops at the first problem, as it is written to
    }
  }
  return loaded;
};

const out = {};
for (const group of groups) {
  const loaded = await pass(group.paths);
  let cpu = Infinity;
  let wall = Infinity;
  for (let i = 0; i < group.repeats; i++) {
    const startCpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    await pass(group.paths);
    const used = process.cpuUsage(startCpu);
    wall = Math.min(wall, Number(process.hrtime.bigint() - start) / 1e6);
    cpu = Math.min(cpu, (used.user + used.system) / 1000);
  }
  out[group.name] = { cpu_ms: cpu, wall_ms: wall, loaded, refused: group.paths.length - loaded };
}
process.stdout.write(JSON.stringify(out));
