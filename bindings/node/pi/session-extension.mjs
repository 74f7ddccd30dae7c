// What sessiondb-pi adds to pi's interactive TUI, as a hidden extension pi's `main` is given
// (see launcher.mjs): the one line saying that a session another process writes was continued
// in a fork (shown as a warning; it may come before the TUI is up, so it waits for the next
// session_start), and which session is current, for the resume line printed on exit.
import fs from "node:fs";

/** The state the launcher reads: the current session's manager, lines waiting to be shown. */
export function tuiState() {
	return { current: null, ui: null, pending: [] };
}

/** Shows `line` in the TUI now, or at the next session_start. */
export function show(state, line) {
	if (state.ui) state.ui.notify(line, "warning");
	else state.pending.push(line);
}

/** The extension (a factory, as pi's `main` takes them). */
export function extension(state) {
	return (pi) => {
		pi.on("session_start", (_event, ctx) => {
			state.current = ctx.sessionManager;
			state.ui = ctx.hasUI ? ctx.ui : null;
			if (!state.ui) return;
			for (const line of state.pending.splice(0)) state.ui.notify(line, "warning");
		});
		pi.on("session_shutdown", (_event, ctx) => {
			state.current = ctx.sessionManager;
			state.ui = null;
		});
	};
}

const quote = (v) => (v.length > 0 && !/[^a-zA-Z0-9_\-./~:@=]/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);

/**
 * The line saying how to resume the current session: `sessiondb-pi --session <id>`, and plain
 * pi's `pi --session <file>` when the file exists; null for a session not saved.
 */
export function resumeLine(state, dbArg) {
	const sm = state.current;
	if (!sm || typeof sm.isSaved !== "function" || !sm.isSaved()) return null;
	const args = ["sessiondb-pi"];
	if (dbArg !== undefined) args.push("--db", quote(dbArg));
	if (!sm.usesDefaultSessionDir()) args.push("--session-dir", quote(sm.getSessionDir()));
	args.push("--session", sm.getSessionId());
	const file = sm.getSessionFile();
	const plain = file && fs.existsSync(file) ? `  (plain pi: pi --session ${quote(file)})` : "";
	return `Resume this session: ${args.join(" ")}${plain}`;
}
