const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const text = Buffer.concat(chunks).toString("utf8");
const { note } = JSON.parse(text || "{}");
console.log(note ? `note of ${note.length} characters` : "no note given");
