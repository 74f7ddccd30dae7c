// sessiondb serve in a real browser: headless Debian chromium driven by playwright-core.
// On the oracle corpus: the sessions page, a filter, a search and its hit, another leaf of a
// branched session, usage by model and by day, with the numbers and transcripts compared to
// the CLI (`stats --json`, `branch --json`, `context --json`). On a hostile corpus: nothing
// planted runs, nothing hangs. Every response carries the CSP. Screenshots go to
// docs/screenshots/ (README shows them).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { writeHostile } from "./hostile.mjs";

const root = path.resolve(import.meta.dirname, "../..");
const bin = process.env.SESSIONDB_BIN || path.join(root, "target/release/sessiondb");
const shots = path.join(root, "docs/screenshots");
// A fixed folder: the session page shows its file's path, and the screenshots stay the same
// from one run to the next.
const tmp = path.join(os.tmpdir(), "sessiondb-browser");
fs.rmSync(tmp, { recursive: true, force: true });
fs.mkdirSync(tmp);

function cli(db, ...args) {
  return execFileSync(bin, ["--db", db, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
}

function json(db, ...args) {
  return JSON.parse(cli(db, ...args, "--json"));
}

/** Imports `dir` into a new database (exit 1 = some files refused, which the corpora hold). */
function importInto(name, dir) {
  const db = path.join(tmp, `${name}.sqlite`);
  try {
    execFileSync(bin, ["--db", db, "import", dir], { stdio: "ignore" });
  } catch (e) {
    if (e.status !== 1) throw e;
  }
  return db;
}

/** Starts `sessiondb serve` on a free port; resolves to its base URL. */
function serve(db) {
  const child = spawn(bin, ["--db", db, "serve", "--listen", "127.0.0.1:0"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/at (http:\/\/\S+\/)/);
      if (m) resolve({ url: m[1], child });
    });
    child.on("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
}

let browser, oracle, hostile, oracleDb, hostileDb;
const responses = [];

before(async () => {
  const corpus = path.join(tmp, "oracle");
  fs.mkdirSync(corpus);
  execFileSync("tar", ["-xJf", path.join(root, "tests/fixtures/oracle.tar.xz"), "-C", corpus]);
  oracleDb = importInto("oracle", path.join(corpus, "corpus/sessions"));
  writeHostile(path.join(tmp, "hostile"));
  hostileDb = importInto("hostile", path.join(tmp, "hostile"));
  oracle = await serve(oracleDb);
  hostile = await serve(hostileDb);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    // playwright-core gives the browser a fresh temporary --user-data-dir of its own.
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  fs.mkdirSync(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
  oracle?.child.kill();
  hostile?.child.kill();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A page that records every response and fails on a dialog (planted code calling alert). */
async function newPage() {
  const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.on("response", (r) => responses.push({ url: r.url(), csp: r.headers()["content-security-policy"], status: r.status() }));
  page.on("dialog", (d) => {
    responses.push({ url: "dialog", dialog: d.message() });
    d.dismiss();
  });
  return page;
}

/** Text as an HTML parser hands it to the DOM: CR LF and lone CR become LF, NUL is dropped. */
const html = (s) => s.replace(/\r\n?/g, "\n").replace(/\0/g, "");

const numbers = (s) => Number(s.replace(/[,$]/g, ""));

test("sessions page: every session, newest first, filtered by project", async () => {
  const page = await newPage();
  await page.goto(oracle.url);
  const listed = json(oracleDb, "list");
  const ids = await page.$$eval("#sessions tbody tr", (rows) => rows.map((r) => r.dataset.sessionId));
  assert.deepEqual(ids, listed.slice(0, 50).map((s) => s.id));
  await page.screenshot({ path: path.join(shots, "sessions.png") });
  // Filter by project through the form.
  const project = "/home/u/proj-a";
  await page.selectOption("#filters select[name=project]", project);
  await Promise.all([page.waitForURL(/project=/), page.click("#filters button[type=submit]")]);
  const filtered = await page.$$eval("#sessions tbody tr", (rows) => rows.map((r) => r.dataset.sessionId));
  assert.deepEqual(filtered, listed.filter((s) => s.cwd === project).map((s) => s.id));
  // The name filter: sessions whose name or first message holds the text.
  await page.fill("#filters input[name=name]", "emoji");
  await Promise.all([page.waitForURL(/name=emoji/), page.click("#filters button[type=submit]")]);
  const named = await page.$$eval("#sessions tbody tr", (rows) => rows.map((r) => r.dataset.sessionId));
  assert.deepEqual(named, listed.filter((s) => s.cwd === project && ((s.name || "").toLowerCase().includes("emoji") || s.firstMessage.toLowerCase().includes("emoji"))).map((s) => s.id));
  assert.ok(named.length > 0 && named.length < filtered.length);
  await page.close();
});

test("search: hits with snippets; a hit opens its entry", async () => {
  const page = await newPage();
  await page.goto(oracle.url);
  await page.fill("header form.search input[name=q]", "refactor");
  await Promise.all([page.waitForURL(/q=refactor/), page.press("header form.search input[name=q]", "Enter")]);
  const hits = await page.$$eval("#hits li.hit", (li) => li.map((h) => ({ href: h.querySelector("a.snippet")?.getAttribute("href"), text: h.querySelector(".snippet").textContent })));
  const want = json(oracleDb, "search", "refactor", "--limit", "50");
  assert.equal(hits.length, want.length);
  for (const [i, h] of hits.entries()) {
    assert.equal(h.text, html(want[i].snippet.replace(/\[|\]/g, "")));
    assert.ok(h.text.toLowerCase().includes("refactor"));
  }
  const target = want.findIndex((h) => h.entryId);
  const entryId = want[target].entryId;
  // By ids: /s/<session id>?leaf=<entry id>#<entry id>.
  await Promise.all([page.waitForURL((u) => u.hash === `#${encodeURIComponent(entryId)}`), page.click(`#hits li.hit:nth-child(${target + 1}) a.snippet`)]);
  const url = new URL(page.url());
  assert.equal(decodeURIComponent(url.pathname), `/s/${want[target].sessionId}`);
  assert.equal(url.searchParams.get("leaf"), entryId);
  const article = page.locator(`article[data-entry-id="${entryId}"]`);
  await article.waitFor();
  assert.ok((await article.getAttribute("class")).includes("target"), "the entry is highlighted");
  assert.ok((await article.innerText()).toLowerCase().includes("refactor"));
  await page.close();
});

test("a branched session: another leaf's branch equals branch --json and context --json", async () => {
  // The session with the most leaves whose branches fit one screen.
  const page = await newPage();
  const listed = json(oracleDb, "list");
  let best;
  for (const s of listed) {
    const nodes = json(oracleDb, "tree", s.id);
    const leaves = nodes.filter((n) => n.childCount === 0).map((n) => n.entry.id);
    if (leaves.length > 1 && nodes.length < 300 && (!best || leaves.length > best.leaves.length)) best = { s, leaves };
  }
  assert.ok(best, "the oracle corpus has a branched session");
  await page.goto(oracle.url);
  await Promise.all([page.waitForURL((u) => decodeURIComponent(u.pathname) === `/s/${best.s.id}`), page.click(`#sessions tr[data-session-id="${best.s.id}"] td.title a`)]);
  await page.screenshot({ path: path.join(shots, "session.png"), fullPage: false });
  const active = await page.getAttribute("#transcript", "data-leaf");
  const other = best.leaves.find((l) => l !== active);
  await Promise.all([page.waitForURL(/leaf=/), page.click(`#tree li[data-entry-id="${other}"] a`)]);
  assert.equal(await page.getAttribute("#transcript", "data-leaf"), other);
  assert.ok(await page.locator(`#tree li.active[data-entry-id="${other}"]`).count() === 1);
  const shown = await page.$$eval("#transcript article.entry", (a) => a.map((e) => e.dataset.entryId));
  const branch = json(oracleDb, "branch", best.s.id, "--from", other);
  assert.deepEqual(shown, branch.map((e) => e.id));
  // What the model sees at that leaf: each message's text as shown on the page.
  const context = json(oracleDb, "context", best.s.id, "--leaf", other);
  let compared = 0;
  for (const c of context.entries) {
    const e = c.sourceEntry;
    const m = e.type === "message" ? e.message : null;
    if (!m || !["user", "assistant"].includes(m.role)) continue;
    const texts = typeof m.content === "string" ? [m.content] : (m.content || []).filter((b) => b.type === "text").map((b) => b.text);
    const article = page.locator(`article[data-entry-id="${e.id}"]`);
    const got = await article.locator(":scope > div.text").allTextContents();
    if (await article.locator("p.fold").count()) {
      // Folded (over 4 KB or 60 lines): what is shown is the start of the texts.
      assert.ok(texts.map(html).join("").startsWith(got.join("")), `entry ${e.id}`);
    } else {
      assert.deepEqual(got, texts.map(html), `entry ${e.id}`);
    }
    compared += 1;
  }
  assert.ok(compared > 0);
  await page.close();
});

test("usage by model and by day: the numbers of stats --json", async () => {
  const page = await newPage();
  await page.goto(oracle.url);
  await Promise.all([page.waitForURL(/\/usage/), page.click("header nav a[href='/usage']")]);
  for (const by of ["model", "day"]) {
    await Promise.all([page.waitForURL(new RegExp(`by=${by}`)), page.click(`nav.groups a:text-is("${by}")`)]);
    const rows = await page.$$eval("#usage tbody tr, #usage tfoot tr", (trs) =>
      trs.map((tr) => ({ group: tr.dataset.group, cost: Number(tr.dataset.cost), cells: Object.fromEntries([...tr.querySelectorAll("td[data-k]")].map((td) => [td.dataset.k, td.textContent])) })));
    const stats = json(oracleDb, "stats", "--by", by);
    const want = [...stats.groups, stats.total];
    assert.equal(rows.length, want.length);
    for (const [i, w] of want.entries()) {
      const r = rows[i];
      assert.equal(r.group, w.group);
      for (const k of ["entries", "input", "output", "cacheRead", "cacheWrite", "totalTokens", "invalidUsageValues"]) {
        assert.equal(numbers(r.cells[k]), w[k], `${by} ${w.group} ${k}`);
      }
      assert.equal(r.cost, w.cost);
      assert.equal(r.cells.cost, `$${w.cost.toFixed(4)}`);
    }
    assert.ok(await page.locator("figure.chart svg rect.bar").count() > 0);
    if (by === "day") await page.screenshot({ path: path.join(shots, "usage.png") });
  }
  await page.close();
});

test("hostile corpus: nothing planted runs, nothing hangs", async () => {
  const page = await newPage();
  page.setDefaultTimeout(30000);
  await page.goto(hostile.url);
  const links = await page.$$eval("#sessions td.title a", (a) => a.map((x) => x.getAttribute("href")));
  assert.equal(links.length, 5);
  const visit = async (url) => {
    const started = Date.now();
    await page.goto(new URL(url, hostile.url).href, { waitUntil: "load" });
    // Open every collapsed block, hover the planted tool name: nothing may run.
    await page.$$eval("details", (d) => d.forEach((x) => { x.open = true; }));
    assert.equal(await page.evaluate(() => window.__pwned), undefined, url);
    assert.equal(await page.locator("a[href^='javascript:'], iframe, script:not([src='/assets/app.js']), img:not(.shot)").count(), 0, url);
    return Date.now() - started;
  };
  for (const href of links) await visit(href);
  await visit(`${links.find((l) => l)}`);
  // The 10 MB message is folded: the page stays small, the whole message one link away.
  await page.goto(hostile.url);
  const huge = await page.$eval('#sessions tr[data-session-id="hostile-huge-line"] td.title a', (a) => a.getAttribute("href"));
  assert.equal(huge, "/s/hostile-huge-line");
  const hugePage = await page.request.get(new URL(`${huge}?leaf=u1`, hostile.url).href);
  assert.ok((await hugePage.body()).length < 100_000, `${(await hugePage.body()).length} bytes`);
  await visit(`${huge}?leaf=u1`);
  assert.equal(await page.locator("p.fold").count(), 1);
  assert.match(await page.locator("p.fold").innerText(), /^Folded: 10,481,705 more bytes\. Show all of it$/);
  // SESSIONDB_SHOTS=DIR keeps a screenshot of the folded message (to look at).
  if (process.env.SESSIONDB_SHOTS) await page.screenshot({ path: path.join(process.env.SESSIONDB_SHOTS, "folded.png") });
  await Promise.all([page.waitForURL(/\/full\?id=u1/), page.click("p.fold a.unfold")]);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.ok((await page.locator("#transcript div.text").innerText()).length > 10 * 1024 * 1024);
  // The old address by key leads to the address by id.
  await page.goto(new URL("/s/1", hostile.url).href);
  assert.match(decodeURIComponent(new URL(page.url()).pathname), /^\/s\/hostile-/);
  // Invalid UTF-8 shows as U+FFFD.
  const utf8 = await page.goto(hostile.url).then(() => page.$eval('#sessions tr[data-session-id="hostile-utf8"] td.title a', (a) => a.getAttribute("href")));
  await visit(utf8);
  assert.ok((await page.locator("#transcript").innerText()).includes("\uFFFD"));
  // The 10,000-deep tree: the tail first, earlier entries on demand, a side branch selectable.
  await page.goto(hostile.url);
  const deep = await page.$eval('#sessions tr[data-session-id="hostile-deep"] td.title a', (a) => a.getAttribute("href"));
  await visit(deep);
  assert.equal(await page.locator("#transcript article.entry").count(), 100);
  await Promise.all([page.waitForURL(/before=/), page.click("#earlier")]);
  assert.equal(await page.locator("#transcript article.entry").count(), 100);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await visit(`${deep}?leaf=side4999`);
  assert.equal(await page.getAttribute("#transcript", "data-leaf"), "side4999");
  // A session of 25,000 lines: the first screen comes first, the tree is fetched after it.
  await page.goto(hostile.url);
  const long = await page.$eval('#sessions tr[data-session-id="hostile-long"] td.title a', (a) => a.getAttribute("href"));
  await visit(long);
  await page.locator("#tree ol.outline li.active").waitFor();
  assert.equal(await page.locator("#tree-lazy").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // Search and usage over the hostile corpus.
  await visit("/?q=script");
  await visit("/usage?by=model");
  assert.ok(!responses.some((r) => r.dialog), "no dialog opened");
  await page.close();
});

test("HTML exports of the hostile corpus, opened offline: planted text as text, nothing runs or loads", async () => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const requests = [];
  const problems = [];
  // Every request but the file itself is refused.
  await context.route("**/*", (route) => (route.request().url().startsWith("file:") ? route.continue() : route.abort()));
  for (const id of ["hostile-markup", "hostile-huge-line", "hostile-utf8"]) {
    const file = path.join(tmp, `${id}.html`);
    cli(hostileDb, "export", id, "--format", "html", "--thinking", "-o", file);
    const page = await context.newPage();
    const fileUrl = `file://${file}`;
    page.on("request", (r) => { if (r.url() !== fileUrl) requests.push(r.url()); });
    page.on("dialog", (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
    page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
    await page.goto(fileUrl, { waitUntil: "load" });
    await page.$$eval("details", (d) => d.forEach((x) => { x.open = true; }));
    await page.hover("article.entry summary").catch(() => {});
    assert.equal(await page.evaluate(() => window.__pwned), undefined, id);
    assert.equal(await page.locator("script, iframe, a[href^='javascript:'], img, link, object, embed").count(), 0, id);
    const shown = await page.locator("#transcript").innerText();
    if (id === "hostile-markup") {
      for (const planted of ["<script>window.__pwned=3</script>", "[click me](javascript:window.__pwned=4)", '<a href="javascript:window.__pwned=5">link</a>', "<svg onload=\"window.__pwned=7\"></svg>", "<style>body{display:none}</style>"]) {
        assert.ok(shown.includes(planted), `${id}: ${planted}`);
      }
      assert.ok((await page.locator("h1").innerText()).includes("<script>window.__pwned=15</script>name"));
      await page.screenshot({ path: path.join(shots, "export.png") });
    }
    if (id === "hostile-huge-line") assert.ok(shown.length > 10 * 1024 * 1024 && shown.includes("<script>window.__pwned=17</script>"));
    if (id === "hostile-utf8") assert.ok(shown.includes("\uFFFD"));
    await page.close();
  }
  await context.close();
  assert.deepEqual(requests, [], "no request but the file");
  assert.deepEqual(problems, []);
});

test("every response carries the Content-Security-Policy", () => {
  const ours = responses.filter((r) => r.url.startsWith(oracle.url) || r.url.startsWith(hostile.url));
  assert.ok(ours.length > 20, `${ours.length} responses`);
  for (const r of ours) {
    assert.match(r.csp || "", /default-src 'none'; script-src 'self'; style-src 'self'/, r.url);
    assert.ok(!/unsafe-inline|unsafe-eval|https?:/.test(r.csp), r.csp);
  }
});
