// pi's tree selector under sessiondb-pi. pi's TreeList (modes/interactive/components/
// tree-selector.js) reads the content and stopReason of every assistant message while it builds
// its rows (flattenTree: tool calls for the rows of their results; applyFilter: which assistants
// are hidden), which would parse every assistant of a long session. While those two run (and no
// search is typed: a search reads every row's text), a lazy tree's assistants answer from a
// native scan of their lines instead (tree.cjs, withStandIns); the rows drawn read the entries.
import tree from "../tree.cjs";

const PATCHED = Symbol.for("sessiondb.treeListPatched");

/** Patches pi's TreeList class once; returns it. */
export function patch(TreeList) {
	const proto = TreeList?.prototype;
	if (!proto || proto[PATCHED] || typeof proto.flattenTree !== "function" || typeof proto.applyFilter !== "function") return TreeList;
	const flattenTree = proto.flattenTree;
	const applyFilter = proto.applyFilter;
	proto.flattenTree = function (roots) {
		return tree.withStandIns("flatten", () => flattenTree.call(this, roots));
	};
	proto.applyFilter = function () {
		// pi's own test for a search (getSearchableText reads every row's text then).
		const searching = String(this.searchQuery ?? "").toLowerCase().split(/\s+/).filter(Boolean).length > 0;
		if (searching) return applyFilter.call(this);
		return tree.withStandIns("filter", () => applyFilter.call(this));
	};
	Object.defineProperty(proto, PATCHED, { value: true });
	return TreeList;
}
