// pi's tree selector rows (TreeList in pi 1.6.0's modes/interactive/components/tree-selector.js)
// built over the links of a tree that getTree() built from them (tree.cjs), by line index in typed
// arrays instead of pi's maps keyed by id over entry objects: pi's passes over a long session's
// 100,000 nodes (flattenTree, buildActivePath, applyFilter, recalculateVisualStructure,
// findNearestVisibleIndex) cost more than the rest of /tree together. Each function does what
// pi's method of the same name does to the list, field for field (pi/tree-selector.mjs calls it
// in the method's place); it returns false, doing nothing, where the tree is not one of ours or
// holds what the links do not answer (an id, type or role that is not a string, an assistant
// whose row pi's reads need its line for): pi's own method runs then.
"use strict";

const parses = require("./parse-count.cjs");
const { skeletonOf } = require("./tree.cjs");

// What pi's default filter hides as settings and bookkeeping.
const SETTINGS = new Set(["label", "context_edit", "custom", "model_change", "thinking_level_change", "session_info"]);

/**
 * Each list's rows over the links: `{ sk, flat, line, inFlat, facts, filtered, lines, pos,
 * flatAt }`: the tree's links, the rows and the line of each, whether a line has a row, the
 * assistants' facts, the filtered rows with their lines and each line's last place among them,
 * and (after pi's own filter) each row's line.
 */
const states = new WeakMap();

/** A list's state when its rows are still the ones built here. */
function stateOf(list) {
	const st = states.get(list);
	return st !== undefined && st.flat === list.flatNodes ? st : undefined;
}

/**
 * What pi's passes read of assistant line `i`: `{ hasText, stopReason, calls, i }`, each call
 * `[id, name, index in content, arguments?]` (the index -1 and the arguments given when read
 * from the entry; else the arguments only when they are not an object), from the stored row of
 * an unparsed line, else from the entry as pi reads it. Undefined when the entry is not what
 * pi's reads expect.
 */
function assistantFacts(sk, list, i) {
	const parsed = sk.entryAt(i);
	const row = parsed === undefined ? sk.rowOf(i) : undefined;
	if (row) return { hasText: row[0], stopReason: row[1], calls: row[2], i };
	const entry = parsed ?? sk.parse(i);
	const message = entry?.message;
	if (typeof message !== "object" || message === null) return undefined;
	const calls = [];
	const content = message.content;
	if (Array.isArray(content)) {
		for (const block of content) {
			if (typeof block === "object" && block !== null && "type" in block && block.type === "toolCall") {
				calls.push([block.id, block.name, -1, block.arguments]);
			}
		}
	}
	try {
		return { hasText: list.hasTextContent(content), stopReason: message.stopReason, calls, i };
	} catch {
		return undefined; // pi's own filter throws where it reads this (or skips the current leaf)
	}
}

/**
 * The stack of pi's row walks (flattenTree, recalculateVisualStructure), a field an array: a
 * line, its indent, its flags (1 justBranched, 2 showConnector, 4 isLast, 8 isVirtualRootChild)
 * and its gutters.
 */
class Stack {
	node = [];
	indent = [];
	flags = [];
	gutters = [];
	/** The roots, last first, as pi lays them out under a virtual root when there are several. */
	pushRoots(roots, multipleRoots) {
		for (let r = roots.length - 1; r >= 0; r--) {
			this.#push(roots[r], multipleRoots ? 1 : 0, (multipleRoots ? 1 | 2 | 8 : 0) | (r === roots.length - 1 ? 4 : 0), []);
		}
	}
	/** The children of a row (`indent`, `flags`, `gutters`), last first, by pi's layout rules. */
	pushChildren(children, multipleRoots, indent, flags, gutters) {
		const multipleChildren = children.length > 1;
		// A branch point's children, and the first generation after a branch, shift right.
		const childIndent = multipleChildren || ((flags & 1) !== 0 && indent > 0) ? indent + 1 : indent;
		const connectorDisplayed = (flags & 2) !== 0 && (flags & 8) === 0;
		const currentDisplayIndent = multipleRoots ? Math.max(0, indent - 1) : indent;
		const connectorPosition = Math.max(0, currentDisplayIndent - 1);
		const childGutters = connectorDisplayed ? [...gutters, { position: connectorPosition, show: (flags & 4) === 0 }] : gutters;
		for (let c = children.length - 1; c >= 0; c--) {
			const childIsLast = c === children.length - 1;
			this.#push(children[c], childIndent, multipleChildren ? 1 | 2 | (childIsLast ? 4 : 0) : childIsLast ? 4 : 0, childGutters);
		}
	}
	#push(node, indent, flags, gutters) {
		this.node.push(node);
		this.indent.push(indent);
		this.flags.push(flags);
		this.gutters.push(gutters);
	}
}

/** pi's flattenTree(roots) when `roots` came from tree.cjs: the rows, else null. */
function flatten(list, roots) {
	const sk = skeletonOf(roots);
	if (sk === undefined) return null;
	const { n, nodes, rootLines, kidLines, ids, types, roles } = sk;
	// Whether every node is answered by the links.
	const facts = new Array(n);
	for (let i = 0; i < n; i++) {
		if (ids[i] === null || types[i] === null || (types[i] === "message" && roles[i] === null)) return null;
		if (types[i] === "message" && roles[i] === "assistant") {
			facts[i] = assistantFacts(sk, list, i);
			if (facts[i] === undefined) return null;
		}
	}
	const none = [];
	const kidsOf = (i) => kidLines[i] ?? none;
	// Which subtrees hold the current leaf (post-order over the pre-order list, as pi does).
	const leafId = list.currentLeafId;
	const contains = new Uint8Array(n);
	const order = [];
	const pre = rootLines.slice();
	while (pre.length > 0) {
		const i = pre.pop();
		order.push(i);
		const kids = kidsOf(i);
		for (let k = kids.length - 1; k >= 0; k--) pre.push(kids[k]);
		if (order.length > 16 * n) return null; // repeated ids made a loop: pi's own code runs
	}
	for (let k = order.length - 1; k >= 0; k--) {
		const i = order[k];
		let has = leafId !== null && ids[i] === leafId;
		for (const c of kidsOf(i)) if (contains[c]) has = true;
		contains[i] = has ? 1 : 0;
	}
	list.toolCallMap.clear();
	const result = [];
	const line = [];
	const inFlat = new Uint8Array(n);
	const stack = new Stack();
	stack.pushRoots(
		rootLines.slice().sort((a, b) => contains[b] - contains[a]),
		rootLines.length > 1,
	);
	const prioritized = [];
	const rest = [];
	while (stack.node.length > 0) {
		const i = stack.node.pop();
		const indent = stack.indent.pop();
		const flags = stack.flags.pop();
		const gutters = stack.gutters.pop();
		const f = facts[i];
		if (f !== undefined) {
			for (const c of f.calls) {
				list.toolCallMap.set(c[0], { name: c[1], arguments: c[2] < 0 || c.length > 3 ? c[3] : sk.argumentsOf(f.i, c[2]) });
			}
		}
		const showConnector = (flags & 2) !== 0;
		const isLast = (flags & 4) !== 0;
		const isVirtualRootChild = (flags & 8) !== 0;
		result.push({ node: nodes[i], indent, showConnector, isLast, gutters, isVirtualRootChild });
		line.push(i);
		inFlat[i] = 1;
		if (result.length > 16 * n) return null;
		// The branch holding the current leaf first.
		let kids = kidsOf(i);
		if (kids.length > 1) {
			prioritized.length = 0;
			rest.length = 0;
			for (const c of kids) (contains[c] ? prioritized : rest).push(c);
			kids = prioritized.concat(rest);
		}
		stack.pushChildren(kids, list.multipleRoots, indent, flags, gutters);
	}
	parses.count("treeLists", 1);
	states.set(list, { sk, flat: result, line: Int32Array.from(line), inFlat, facts, filtered: null, lines: null, pos: null, flatAt: null });
	return result;
}

/** pi's buildActivePath(): the ids from the current leaf up to its root. */
function buildActivePath(list) {
	const st = stateOf(list);
	if (st === undefined) return false;
	const { sk, inFlat } = st;
	list.activePathIds.clear();
	if (!list.currentLeafId) return true;
	let currentId = list.currentLeafId;
	while (currentId) {
		list.activePathIds.add(currentId);
		const i = sk.winner.get(currentId);
		if (i === undefined || !inFlat[i]) break;
		currentId = sk.parentOf(i) ?? null;
	}
	return true;
}

/** pi's applyFilter() without a search (a search reads every row's text: pi's own runs then). */
function applyFilter(list) {
	const st = stateOf(list);
	if (st === undefined) return false;
	const { sk, flat, line, facts } = st;
	const { ids, types, roles } = sk;
	if (list.filteredNodes.length > 0) {
		list.lastSelectedId = list.filteredNodes[list.selectedIndex]?.node.entry.id ?? list.lastSelectedId;
	}
	const mode = list.filterMode;
	const leafId = list.currentLeafId;
	const filtered = [];
	const kept = [];
	for (let k = 0; k < flat.length; k++) {
		const i = line[k];
		const type = types[i];
		if (type === "usage") continue;
		const message = type === "message";
		if (message && roles[i] === "assistant" && ids[i] !== leafId) {
			const { hasText, stopReason } = facts[i];
			const isErrorOrAborted = stopReason && stopReason !== "stop" && stopReason !== "toolUse";
			if (!hasText && !isErrorOrAborted) continue;
		}
		const isSettingsEntry = SETTINGS.has(type);
		let passesFilter;
		switch (mode) {
			case "user-only":
				passesFilter = message && roles[i] === "user";
				break;
			case "no-tools":
				passesFilter = !isSettingsEntry && !(message && roles[i] === "toolResult");
				break;
			case "labeled-only":
				passesFilter = flat[k].node.label !== undefined;
				break;
			case "all":
				passesFilter = true;
				break;
			default:
				passesFilter = !isSettingsEntry;
				break;
		}
		if (passesFilter) {
			filtered.push(flat[k]);
			kept.push(i);
		}
	}
	let rows = filtered;
	let lines = kept;
	if (list.foldedNodes.size > 0) {
		const skip = new Set();
		for (let k = 0; k < flat.length; k++) {
			const i = line[k];
			const parentId = sk.parentOf(i);
			if (parentId != null && (list.foldedNodes.has(parentId) || skip.has(parentId))) skip.add(ids[i]);
		}
		rows = [];
		lines = [];
		for (let k = 0; k < filtered.length; k++) {
			if (skip.has(ids[kept[k]])) continue;
			rows.push(filtered[k]);
			lines.push(kept[k]);
		}
	}
	list.filteredNodes = rows;
	rowsAre(st, rows, lines);
	list.recalculateVisualStructure();
	if (list.lastSelectedId) {
		list.selectedIndex = list.findNearestVisibleIndex(list.lastSelectedId);
	} else if (list.selectedIndex >= list.filteredNodes.length) {
		list.selectedIndex = Math.max(0, list.filteredNodes.length - 1);
	}
	if (list.filteredNodes.length > 0) {
		list.lastSelectedId = list.filteredNodes[list.selectedIndex]?.node.entry.id ?? list.lastSelectedId;
	}
	return true;
}

/** Notes `lines` as the lines of `rows`, the list's filtered rows. */
function rowsAre(st, rows, lines) {
	const pos = new Int32Array(st.sk.n).fill(-1);
	for (let k = 0; k < lines.length; k++) pos[lines[k]] = k;
	st.filtered = rows;
	st.lines = lines;
	st.pos = pos;
}

/**
 * The state with the lines of the list's filtered rows and each line's last place among them
 * (-1: none); null when a row is not one built here.
 */
function filteredLines(st, list) {
	const rows = list.filteredNodes;
	if (st.filtered !== rows) {
		// Filtered by pi's own applyFilter (a search).
		if (st.flatAt === null) {
			st.flatAt = new Map();
			for (let k = 0; k < st.flat.length; k++) st.flatAt.set(st.flat[k], st.line[k]);
		}
		const lines = [];
		for (const row of rows) {
			const i = st.flatAt.get(row);
			if (i === undefined) return null;
			lines.push(i);
		}
		rowsAre(st, rows, lines);
	}
	return st;
}

/** The nearest visible ancestor line of line `i` (pi's findVisibleAncestor), -1 for none. */
function visibleAncestor(sk, inFlat, pos, i) {
	let j = sk.parentAt[i];
	// A parentId that is not a string, or names no line, ends the walk as pi's lookups do.
	if (typeof sk.parentOf(i) !== "string") return -1;
	while (j >= 0) {
		if (pos[j] >= 0) return j;
		if (!inFlat[j] || typeof sk.parentOf(j) !== "string") return -1;
		j = sk.parentAt[j];
	}
	return -1;
}

/** pi's recalculateVisualStructure(): indents, connectors and gutters of the visible rows. */
function recalculateVisualStructure(list) {
	const st0 = stateOf(list);
	if (st0 === undefined) return false;
	if (list.filteredNodes.length === 0) return true;
	const st = filteredLines(st0, list);
	if (st === null) return false;
	const { sk, inFlat, lines, pos } = st;
	const { ids } = sk;
	const rows = list.filteredNodes;
	const none = [];
	// The visible tree by line: each visible row's nearest visible ancestor (-1: a root), each
	// ancestor's visible children (the roots' last), the ancestors in the order first met.
	const anc = new Int32Array(sk.n);
	const kids = new Array(sk.n + 1);
	kids[sk.n] = [];
	const ancestors = [];
	for (let k = 0; k < rows.length; k++) {
		const i = lines[k];
		const a = visibleAncestor(sk, inFlat, pos, i);
		anc[i] = a;
		const at = a < 0 ? sk.n : a;
		if (kids[at] === undefined) {
			kids[at] = [];
			ancestors.push(a);
		}
		kids[at].push(i);
	}
	const rootLines = kids[sk.n];
	list.multipleRoots = rootLines.length > 1;
	const stack = new Stack();
	stack.pushRoots(rootLines, list.multipleRoots);
	while (stack.node.length > 0) {
		const i = stack.node.pop();
		const indent = stack.indent.pop();
		const flags = stack.flags.pop();
		const gutters = stack.gutters.pop();
		// pi's filteredNodeMap keeps the last row of an id.
		const flatNode = rows[pos[i]];
		const showConnector = (flags & 2) !== 0;
		const isLast = (flags & 4) !== 0;
		const isVirtualRootChild = (flags & 8) !== 0;
		flatNode.indent = indent;
		flatNode.showConnector = showConnector;
		flatNode.isLast = isLast;
		flatNode.gutters = gutters;
		flatNode.isVirtualRootChild = isVirtualRootChild;
		stack.pushChildren(kids[i] ?? none, list.multipleRoots, indent, flags, gutters);
	}
	// pi's maps of the visible tree by id, answered from the lines (filled as pi fills them when
	// read whole: render asks a few rows, a key press a path).
	const idsOf = new Array(sk.n + 1);
	const childIds = (at) => (idsOf[at] ??= kids[at].map((j) => ids[j]));
	const visibleLine = (id) => {
		const i = sk.winner.get(id);
		return i !== undefined && pos[i] >= 0 ? i : -1;
	};
	list.visibleParentMap = new LazyMap(
		(id) => {
			const i = visibleLine(id);
			return i < 0 ? undefined : { value: anc[i] < 0 ? null : ids[anc[i]] };
		},
		(set) => {
			for (const i of lines) set(ids[i], anc[i] < 0 ? null : ids[anc[i]]);
		},
	);
	list.visibleChildrenMap = new LazyMap(
		(id) => {
			if (id === null) return { value: childIds(sk.n) };
			const i = sk.winner.get(id);
			return i === undefined || kids[i] === undefined ? undefined : { value: childIds(i) };
		},
		(set) => {
			set(null, childIds(sk.n));
			for (const a of ancestors) if (a >= 0) set(ids[a], childIds(a));
		},
	);
	return true;
}

/**
 * A Map whose `get` and `has` are answered by `lookup(key)` (`{ value }`, or undefined for a key
 * it lacks) until it is used otherwise (size, iteration, a change): then `fill(set)` puts every
 * entry in it, in the order pi's own map holds them, and it is a plain Map.
 */
class LazyMap extends Map {
	#lookup;
	#fill;
	constructor(lookup, fill) {
		super();
		this.#lookup = lookup;
		this.#fill = fill;
	}
	#whole() {
		const fill = this.#fill;
		if (fill !== null) {
			this.#fill = null;
			this.#lookup = null;
			fill((k, v) => super.set(k, v));
		}
	}
	get(key) {
		return this.#fill === null ? super.get(key) : this.#lookup(key)?.value;
	}
	has(key) {
		return this.#fill === null ? super.has(key) : this.#lookup(key) !== undefined;
	}
	get size() {
		this.#whole();
		return super.size;
	}
	set(key, value) {
		this.#whole();
		return super.set(key, value);
	}
	delete(key) {
		this.#whole();
		return super.delete(key);
	}
	clear() {
		this.#fill = null;
		this.#lookup = null;
		super.clear();
	}
	forEach(fn, thisArg) {
		this.#whole();
		super.forEach(fn, thisArg);
	}
	entries() {
		this.#whole();
		return super.entries();
	}
	keys() {
		this.#whole();
		return super.keys();
	}
	values() {
		this.#whole();
		return super.values();
	}
	[Symbol.iterator]() {
		this.#whole();
		return super[Symbol.iterator]();
	}
}

/** pi's findNearestVisibleIndex(entryId); undefined where pi's own must answer. */
function findNearestVisibleIndex(list, entryId) {
	const st0 = stateOf(list);
	if (st0 === undefined) return undefined;
	if (list.filteredNodes.length === 0) return 0;
	const st = filteredLines(st0, list);
	if (st === null) return undefined;
	const { sk, inFlat, pos } = st;
	let currentId = entryId;
	while (currentId !== null) {
		const i = sk.winner.get(currentId);
		if (i === undefined) break;
		if (pos[i] >= 0) return pos[i];
		if (!inFlat[i]) break;
		currentId = sk.parentOf(i) ?? null;
	}
	return list.filteredNodes.length - 1;
}

module.exports = { flatten, buildActivePath, applyFilter, recalculateVisualStructure, findNearestVisibleIndex };
