// pi's footer under sessiondb-pi. pi's FooterComponent (modes/interactive/components/footer.js)
// sums the usage of every entry of the session whenever the session, leaf or entry count
// changes (getSessionStats): on a long session, a walk of every lazy entry. Its walk runs
// through the manager's usage walk (index.cjs, [USAGE_WALK]): the one getEntries() it reads gives
// plain objects holding what the totals read where the store's usage rows give it, and the lazy
// entries elsewhere. pi's own code still does every sum, its caching and its context usage.

const PATCHED = Symbol.for("sessiondb.footerPatched");
const USAGE_WALK = Symbol.for("sessiondb.usageWalk");

/**
 * Whether `method` is pi 1.6's getSessionStats as this patch knows it: one getEntries() call,
 * read by a loop summing usages, and nothing else of the entries.
 */
function knownShape(method) {
	const source = Function.prototype.toString.call(method);
	return source.split("getEntries()").length === 2 && source.includes("addUsageToTotals(");
}

/** Patches pi's FooterComponent class once; returns it. */
export function patch(FooterComponent) {
	const proto = FooterComponent?.prototype;
	if (!proto || proto[PATCHED] || typeof proto.getSessionStats !== "function" || !knownShape(proto.getSessionStats)) return FooterComponent;
	const getSessionStats = proto.getSessionStats;
	proto.getSessionStats = function () {
		const manager = this.session?.sessionManager;
		if (typeof manager?.[USAGE_WALK] !== "function") return getSessionStats.call(this);
		return manager[USAGE_WALK](() => getSessionStats.call(this));
	};
	Object.defineProperty(proto, PATCHED, { value: true });
	return FooterComponent;
}
