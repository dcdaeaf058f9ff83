const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { unit, lint } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
console.log(`unit ${unit.content.status}, lint ${lint.content.status}`);
