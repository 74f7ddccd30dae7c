// pi's getTree() built from the session's links (native `treeLinks`: ids, parentIds, types, roles,
// the times pi sorts siblings by, the labels) instead of every entry's line. A node's entry is the
// parsed entry when there is one, else a proxy answering `id`, `parentId`, `type` and its
// message's `role` from the links; any other property parses the line. pi's /tree reads the
// text of the rows on screen, so the rest of the session is never parsed.
"use strict";

const { forwarding } = require("./proxy.cjs");

/** The links behind each tree buildTree returned (its roots array): see `skeletonOf`. */
const skeletons = new WeakMap();

/**
 * pi's `SessionManager.getTree()` (core/session-manager.js), the same steps over `links` (the
 * parsed native answer); `entryAt(i)` is the parsed entry of link `i` (file order) when one is
 * held, else undefined; `parse(i)` parses it; `rowOf(i)` is what pi's tree selector reads of an
 * unparsed assistant (see withStandIns).
 */
function buildTree(links, entryAt, parse, rowOf) {
	const { ids, parents, types, roles, times } = links;
	const n = links.keys.length;
	const source = { ids, parents, types, roles, parse, entryAt, rowOf, messages: new Array(n), calls: new Array(n) };
	const entries = new Array(n);
	for (let i = 0; i < n; i++) entries[i] = entryAt(i) ?? new Proxy(new Slot(source, i, false), entryHandler);
	// A column is null where the line's value is not a string: the entry itself answers then.
	const idOf = (i) => (ids[i] !== null ? ids[i] : entries[i].id);
	const parentOf = (i) => (parents[i] !== null ? parents[i] : entries[i].parentId);
	const labels = new Map();
	const labelTimes = new Map();
	for (const l of links.labels) {
		labels.set(l[0], l[1]);
		labelTimes.set(l[0], l.length > 2 ? l[2] : undefined);
	}
	// pi's nodeMap (id -> node, the later line of a repeated id winning) as id -> line; the tree
	// is built over lines (a node in it is its id's winner line), then its nodes' children filled.
	const winner = new Map();
	const nodes = new Array(n);
	for (let i = 0; i < n; i++) {
		const id = idOf(i);
		nodes[i] = { entry: entries[i], children: [], label: labels.get(id), labelTimestamp: labelTimes.get(id) };
		winner.set(id, i);
	}
	const rootLines = [];
	const kidLines = new Array(n);
	for (let i = 0; i < n; i++) {
		const id = idOf(i);
		const parentId = parentOf(i);
		const w = winner.get(id);
		const parent = parentId === null || parentId === id ? undefined : winner.get(parentId);
		if (parent === undefined) rootLines.push(w);
		else (kidLines[parent] ??= []).push(w);
	}
	// new Date(entry.timestamp).getTime() of line i's entry.
	const time = (i) => {
		const t = times[i];
		if (t === false) return new Date(entries[i].timestamp).getTime(); // not read: not expected
		return t === null ? Number.NaN : t;
	};
	// pi sorts each node's children as its walk from the roots reaches the node.
	const stack = [...rootLines];
	while (stack.length > 0) {
		const kids = kidLines[stack.pop()];
		if (kids === undefined) continue;
		kids.sort((a, b) => time(a) - time(b));
		stack.push(...kids);
	}
	for (let i = 0; i < n; i++) {
		const kids = kidLines[i];
		if (kids !== undefined) for (const j of kids) nodes[i].children.push(nodes[j]);
	}
	const roots = rootLines.map((i) => nodes[i]);
	skeletons.set(roots, { n, nodes, rootLines, kidLines, winner, idOf, parentOf, parentAt: links.parentAt, types, roles, ids, entryAt, parse, rowOf, argumentsOf: (i, k) => argumentsOf(source, i, k) });
	return roots;
}

/**
 * The links behind `roots` when buildTree returned them (pi's tree selector then builds its rows
 * from them: tree-list.cjs), else undefined: `{ n, nodes, rootLines, kidLines, winner, idOf,
 * parentOf, parentAt, types, roles, ids, entryAt, parse, rowOf, argumentsOf }`, where `nodes[i]`
 * is line i's node, `rootLines` and `kidLines[i]` (undefined: none) the lines of the roots' and
 * of line i's node's children, `winner` an id's node's line, `parentAt[i]` the line of the node
 * line i's parentId names (< 0: none names it, or it is not a string).
 */
function skeletonOf(roots) {
	return skeletons.get(roots);
}

/** A proxy's target: the links and the entry's place in them. */
class Slot {
	constructor(source, index, message) {
		this.source = source;
		this.index = index;
		this.message = message;
	}
}

const parsedOf = (t) => {
	const e = t.source.entryAt(t.index) ?? t.source.parse(t.index);
	return Object(t.message ? e?.message : e);
};
const forward = forwarding(parsedOf);
const entryHandler = {
	...forward,
	get(t, prop) {
		const { source: s, index: i } = t;
		const parsed = s.entryAt(i);
		if (parsed !== undefined) return parsed[prop];
		if (prop === "id" && s.ids[i] !== null) return s.ids[i];
		if (prop === "parentId" && s.parents[i] !== null) return s.parents[i];
		if (prop === "type" && s.types[i] !== null) return s.types[i];
		if (prop === "message" && s.roles[i] !== null) {
			return (s.messages[i] ??= new Proxy(new Slot(s, i, true), messageHandler));
		}
		return s.parse(i)?.[prop];
	},
};
const messageHandler = {
	...forward,
	get(t, prop) {
		const { source: s, index: i } = t;
		const parsed = s.entryAt(i);
		if (parsed === undefined && prop === "role") return s.roles[i];
		if (parsed === undefined && standIn !== null && (prop === "content" || prop === "stopReason") && s.roles[i] === "assistant") {
			const row = s.rowOf(i);
			if (row) {
				if (prop === "stopReason") return row[1];
				if (standIn === "filter") return row[0] ? "x" : "";
				return (s.calls[i] ??= row[2].map((c) => ({ type: "toolCall", id: c[0], name: c[1], arguments: c.length > 3 ? c[3] : argumentsOf(s, i, c[2]) })));
			}
		}
		return (parsed ?? s.parse(i))?.message?.[prop];
	},
};

/**
 * What pi's tree selector reads of every assistant message while it builds its rows
 * (pi/tree-selector.mjs sets it around TreeList's flattenTree and applyFilter): in "flatten",
 * an unparsed assistant's `content` is its tool calls alone (the blocks flattenTree keeps, their
 * arguments read from the entry when a row shows them); in "filter", a string with text exactly
 * when pi's hasTextContent holds; `stopReason` stands for itself. Rows come from the native scan
 * of the lines (src/tree_rows.rs); an entry it cannot answer is parsed.
 */
let standIn = null;
function withStandIns(mode, fn) {
	const was = standIn;
	standIn = mode;
	try {
		return fn();
	} finally {
		standIn = was;
	}
}

/** A tool call's arguments object, read from the entry (content block `k`) when first looked at. */
function argumentsOf(s, i, k) {
	const real = () => Object((s.entryAt(i) ?? s.parse(i))?.message?.content?.[k]?.arguments);
	return new Proxy(
		{},
		{
			get: (_, prop) => real()[prop],
			has: (_, prop) => prop in real(),
			ownKeys: () => Reflect.ownKeys(real()),
			getOwnPropertyDescriptor(_, prop) {
				const d = Reflect.getOwnPropertyDescriptor(real(), prop);
				if (d) d.configurable = true;
				return d;
			},
		},
	);
}

module.exports = { buildTree, skeletonOf, withStandIns };
