// A hostile corpus: session files whose content tries to run code in the page (planted markup
// sets window.__pwned), plus a 10 MB line, invalid UTF-8 and a 10,000-deep tree.
import fs from "node:fs";
import path from "node:path";

const PWN = (n) => `window.__pwned=${n}`;

function header(id, cwd) {
  return JSON.stringify({ type: "session", version: 3, id, timestamp: "2026-01-01T00:00:00.000Z", cwd });
}

function entry(id, parentId, i, rest) {
  const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  return JSON.stringify({ type: "message", id, parentId, timestamp: ts, ...rest });
}

function user(id, parentId, i, content) {
  return entry(id, parentId, i, { message: { role: "user", content, timestamp: 1767225600000 + i } });
}

function assistant(id, parentId, i, content) {
  return entry(id, parentId, i, {
    message: { role: "assistant", content, provider: "p<script>", model: `m"><img src=x onerror=${PWN(9)}>`, usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { total: 0.5 } }, stopReason: "stop", timestamp: 1767225600000 + i },
  });
}

/** Writes the hostile sessions below `dir`; returns their ids. */
export function writeHostile(dir) {
  const folder = path.join(dir, "--hostile--");
  fs.mkdirSync(folder, { recursive: true });
  const write = (name, lines) => fs.writeFileSync(path.join(folder, name), Buffer.concat(lines.map((l) => Buffer.concat([Buffer.isBuffer(l) ? l : Buffer.from(l), Buffer.from("\n")]))));
  const cwd = `/h/"><script>${PWN(1)}</script>`;
  write("2026-01-01T00-00-00-000Z_hostile-markup.jsonl", [
    header("hostile-markup", cwd),
    user("u1", null, 1, `<img src=x onerror="${PWN(2)}"> and <script>${PWN(3)}</script>`),
    assistant("a1", "u1", 2, [
      { type: "text", text: `[click me](javascript:${PWN(4)}) <a href="javascript:${PWN(5)}">link</a> <iframe src="javascript:${PWN(6)}"></iframe>` },
      { type: "thinking", thinking: `<svg onload="${PWN(7)}"></svg>` },
      { type: "toolCall", id: "c1", name: `<b onmouseover=${PWN(8)}>bash</b>`, arguments: { command: `echo '<script>${PWN(10)}</script>'` } },
      { type: "image", mimeType: "image/svg+xml", data: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" onload="${PWN(11)}"/>`).toString("base64") },
      { type: "image", mimeType: "image/png", data: `x" onerror="${PWN(12)}` },
    ]),
    entry("r1", "a1", 3, { message: { role: "toolResult", toolCallId: "c1", toolName: "bash", content: [{ type: "text", text: `<style>body{display:none}</style><script>${PWN(13)}</script>` }], isError: false, timestamp: 1767225603000 } }),
    JSON.stringify({ type: "label", id: "l1", parentId: "r1", timestamp: "2026-01-01T00:00:04.000Z", targetId: "a1", label: `<img src=x onerror=${PWN(14)}>` }),
    JSON.stringify({ type: "session_info", id: "s1", parentId: "l1", timestamp: "2026-01-01T00:00:05.000Z", name: `<script>${PWN(15)}</script>name` }),
    JSON.stringify({ type: "custom_message", id: "cm1", parentId: "s1", timestamp: "2026-01-01T00:00:06.000Z", customType: "<x>", content: `<img src=x onerror=${PWN(16)}>`, display: true }),
  ]);
  // One 10 MB line.
  write("2026-01-01T00-00-01-000Z_hostile-huge-line.jsonl", [
    header("hostile-huge-line", "/h/big"),
    user("u1", null, 1, "start " + "x".repeat(10 * 1024 * 1024) + ` <script>${PWN(17)}</script>`),
    assistant("a1", "u1", 2, [{ type: "text", text: "after the huge line" }]),
  ]);
  // Invalid UTF-8 inside a message.
  const bad = Buffer.concat([Buffer.from(user("u1", null, 1, "bad bytes: ").slice(0, -"\"},\"timestamp\":1767225601000}}".length - 2)), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from("\",\"timestamp\":1767225601000}}")]);
  write("2026-01-01T00-00-02-000Z_hostile-utf8.jsonl", [header("hostile-utf8", "/h/utf8"), bad, assistant("a1", "u1", 2, [{ type: "text", text: "after bad bytes" }])]);
  // A tree 10,000 entries deep, with a side branch every 1,000 entries.
  const deep = [header("hostile-deep", "/h/deep")];
  let parent = null;
  for (let i = 0; i < 10000; i++) {
    const id = `d${i}`;
    deep.push(i % 2 ? assistant(id, parent, i, [{ type: "text", text: `step ${i}` }]) : user(id, parent, i, `step ${i}`));
    if (i % 1000 === 999) deep.push(user(`side${i}`, parent, i, `side branch at ${i}`));
    parent = id;
  }
  write("2026-01-01T00-00-03-000Z_hostile-deep.jsonl", deep);
  // 25,000 lines: its page comes without the tree, which the page's script fetches after.
  const long = [header("hostile-long", "/h/long")];
  parent = null;
  for (let i = 0; i < 25000; i++) {
    long.push(user(`n${i}`, parent, i, i % 5000 === 0 ? `<img src=x onerror=${PWN(18)}> ${i}` : `line ${i}`));
    parent = `n${i}`;
  }
  write("2026-01-01T00-00-04-000Z_hostile-long.jsonl", long);
  return ["hostile-markup", "hostile-huge-line", "hostile-utf8", "hostile-deep", "hostile-long"];
}
