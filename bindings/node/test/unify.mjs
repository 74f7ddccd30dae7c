// Compares a text pi produced with the binding's counterpart, modulo what cannot be equal:
// entry ids, session ids and the faux provider's random ids (one consistent bijection for a whole test), and times (ISO
// timestamps, file-name timestamps, millisecond clocks), which must be times in both at the
// same place; durations are left out. Everything else must be equal character for character (key order included).
const TOKEN =
	/(?:tool|faux):\d+:[0-9a-z]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z|\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z|(?<![0-9A-Za-z])[0-9a-f]{8}(?![0-9A-Za-z])|(?<![0-9])1[6-9]\d{11}(?![0-9])/g;

function kind(t) {
	if (t.startsWith("tool:") || t.startsWith("faux:")) return "faux id";
	if (t.length === 36) return "session id";
	if (t.length === 8) return "entry id";
	if (t.length === 13) return "clock";
	return t[13] === ":" ? "time" : "file time";
}

function tokens(text) {
	const out = [];
	let last = 0;
	for (const m of text.matchAll(TOKEN)) {
		out.push({ literal: text.slice(last, m.index), token: m[0], at: m.index });
		last = m.index + m[0].length;
	}
	out.push({ literal: text.slice(last), token: null, at: text.length });
	return out;
}

export class Unifier {
	ids = new Map(); // pi's -> ours
	back = new Map(); // ours -> pi's

	/** Returns null when `ours` stands for `pi`, else a description of the first difference. */
	compare(pi, ours) {
		// pi-ai times a response only when the scripted message was made after its stream started
		// (same millisecond or later): whether durationMs is there at all is a race in pi itself.
		const untimed = (s) => s.replace(/,"durationMs":\d+/g, "");
		pi = untimed(pi);
		ours = untimed(ours);
		const a = tokens(pi);
		const b = tokens(ours);
		for (let i = 0; i < Math.max(a.length, b.length); i++) {
			const x = a[i];
			const y = b[i];
			const where = () => `at pi ${x?.at ?? "end"}: pi …${pi.slice(Math.max(0, (x?.at ?? pi.length) - 120), (x?.at ?? pi.length) + 80)}… ours …${ours.slice(Math.max(0, (y?.at ?? ours.length) - 120), (y?.at ?? ours.length) + 80)}…`;
			if (!x || !y) return `different shapes ${where()}`;
			if (x.literal !== y.literal) return `different text ${where()}`;
			if (x.token === null || y.token === null) {
				if (x.token !== y.token) return `token vs end ${where()}`;
				continue;
			}
			const k = kind(x.token);
			if (k !== kind(y.token)) return `${k} vs ${kind(y.token)} ${where()}`;
			if (k === "session id" || k === "entry id" || k === "faux id") {
				const mapped = this.ids.get(x.token);
				const from = this.back.get(y.token);
				if (mapped === undefined && from === undefined) {
					this.ids.set(x.token, y.token);
					this.back.set(y.token, x.token);
				} else if (mapped !== y.token || from !== x.token) {
					return `${k} ${x.token} was ours ${mapped}, now ${y.token} (which stood for ${from}) ${where()}`;
				}
			}
		}
		return null;
	}
}
