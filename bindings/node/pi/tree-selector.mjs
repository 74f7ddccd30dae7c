// pi's tree selector under sessiondb-pi. pi's TreeList (modes/interactive/components/
// tree-selector.js) builds its rows in passes over every node of the tree, keyed by id, and reads
// the content and stopReason of every assistant message (flattenTree: tool calls for the rows of
// their results; applyFilter: which assistants are hidden): on a long session, most of /tree's
// time. Over a tree getTree() built from the links, those passes run by line index
// (tree-list.cjs), the assistants answered from their stored rows; the rows drawn read the
// entries. On any other tree, and where the links cannot answer, pi's own passes run, the
// assistants answered from a native scan of their lines while no search is typed (tree.cjs,
// withStandIns: a search reads every row's text).
import tree from "../tree.cjs";
import rows from "../tree-list.cjs";

const PATCHED = Symbol.for("sessiondb.treeListPatched");
const METHODS = ["flattenTree", "applyFilter", "buildActivePath", "recalculateVisualStructure", "findNearestVisibleIndex"];

/** Patches pi's TreeList class once; returns it. */
export function patch(TreeList) {
	const proto = TreeList?.prototype;
	if (!proto || proto[PATCHED] || METHODS.some((m) => typeof proto[m] !== "function")) return TreeList;
	const pi = Object.fromEntries(METHODS.map((m) => [m, proto[m]]));
	proto.flattenTree = function (roots) {
		return rows.flatten(this, roots) ?? tree.withStandIns("flatten", () => pi.flattenTree.call(this, roots));
	};
	proto.buildActivePath = function () {
		if (!rows.buildActivePath(this)) pi.buildActivePath.call(this);
	};
	proto.applyFilter = function () {
		// pi's own test for a search (getSearchableText reads every row's text then).
		const searching = String(this.searchQuery ?? "").toLowerCase().split(/\s+/).filter(Boolean).length > 0;
		if (searching) return pi.applyFilter.call(this);
		if (!rows.applyFilter(this)) tree.withStandIns("filter", () => pi.applyFilter.call(this));
	};
	proto.recalculateVisualStructure = function () {
		if (!rows.recalculateVisualStructure(this)) pi.recalculateVisualStructure.call(this);
	};
	proto.findNearestVisibleIndex = function (entryId) {
		return rows.findNearestVisibleIndex(this, entryId) ?? pi.findNearestVisibleIndex.call(this, entryId);
	};
	Object.defineProperty(proto, PATCHED, { value: true });
	return TreeList;
}
