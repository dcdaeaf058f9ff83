const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { unit, lint } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
// unit and lint are full results: { result: "已执行", content: { status, exitCode, stdout, stderr } }
const line = (label, r) => `${label}: ${r.content.status} (exit ${r.content.exitCode})`;
console.log([line("unit", unit), line("lint", lint)].join("\n"));
