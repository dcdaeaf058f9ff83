// stdin: the change description and the three branches' full results {result, content}.
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { tests, lint, audit } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const line = (label, r) => `${label}: ${r.content.status} (exit ${r.content.exitCode})`;
console.log([line("tests", tests), line("lint", lint), line("audit", audit)].join("\n"));
