// pi's HTML export under sessiondb-pi. pi's exporter reads the session from the manager but
// first checks that its file exists; with SESSIONDB_PI_FILES=off a session has no file, so its
// JSONL (`sessiondb export`'s bytes) is written to a temporary folder under the same name for
// the exporter, and removed afterwards. With files, pi's functions run unchanged.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import binding from "../index.cjs";

const { SessionManager } = binding;

/** pi's export functions `pi`, made to work on a session kept in the database only. */
export function wrap(pi) {
	return { exportSessionToHtml: (sm, state, options) => exportSessionToHtml(pi, sm, state, options), exportFromFile: (inputPath, options) => exportFromFile(pi, inputPath, options) };
}

async function exportSessionToHtml(pi, sm, state, options) {
	const file = sm.getSessionFile?.();
	if (!file || fs.existsSync(file) || SessionManager.usesFiles() || typeof sm.writeSessionFile !== "function" || !sm.isSaved?.()) {
		return pi.exportSessionToHtml(sm, state, options);
	}
	const opts = typeof options === "string" ? { outputPath: options } : { ...(options || {}) };
	opts.outputPath ??= `pi-session-${path.basename(file, ".jsonl")}.html`;
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-pi-export-"));
	try {
		const tmp = path.join(dir, path.basename(file));
		sm.writeSessionFile(tmp);
		const view = new Proxy(sm, {
			get(target, prop) {
				if (prop === "getSessionFile") return () => tmp;
				const v = Reflect.get(target, prop, target);
				return typeof v === "function" ? v.bind(target) : v;
			},
		});
		return await pi.exportSessionToHtml(view, state, opts);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}

async function exportFromFile(pi, inputPath, options) {
	const resolved = path.resolve(inputPath);
	if (fs.existsSync(resolved) || SessionManager.usesFiles()) return pi.exportFromFile(inputPath, options);
	// A session kept in the database only: exported from there under its own name.
	const sm = SessionManager.open(resolved);
	if (!sm.isSaved()) return pi.exportFromFile(inputPath, options); // pi's "File not found"
	const opts = typeof options === "string" ? { outputPath: options } : { ...(options || {}) };
	opts.outputPath ??= `pi-session-${path.basename(resolved, ".jsonl")}.html`;
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sessiondb-pi-export-"));
	try {
		const tmp = path.join(dir, path.basename(resolved));
		sm.writeSessionFile(tmp);
		return await pi.exportFromFile(tmp, opts);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
}
