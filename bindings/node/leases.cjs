// One writer per session, on the Node side: the native manager takes the lease on the session
// it writes (and continues in a fork of a session another live process writes); this file
// renews the leases this process holds on a timer that does not keep the process alive,
// releases them when the process exits, and passes on the one line saying a session was
// forked because another process writes it (to stderr, or to the handler the host gave).
"use strict";

/** Natives that may hold a lease (weakly: a manager dropped by its host lets go of its own). */
const holders = new Set();
const refs = new WeakMap(); // native -> its WeakRef in holders
let timer = null;
let hooked = false;
let onNotice = (notice) => process.stderr.write(`sessiondb: ${notice.message}\n`);

function each(f) {
	for (const ref of holders) {
		const n = ref.deref();
		if (n === undefined) holders.delete(ref);
		else {
			try {
				f(n);
			} catch {
				// the next renewal tries again; a lease not released expires
			}
		}
	}
}

/** Releases every lease this process holds (on exit, or a signal the host catches). */
function releaseAll() {
	each((n) => n.releaseLease());
}

/**
 * After `n` (a native manager) opened or switched sessions: renews its lease from now on, and
 * reports a fork made because another process writes the session asked for.
 */
function track(native, n) {
	const text = n.leaseNotice();
	if (!refs.has(n)) {
		const ref = new WeakRef(n);
		refs.set(n, ref);
		holders.add(ref);
	}
	if (timer === null) {
		timer = setInterval(() => each((x) => x.renewLease()), native.leaseRenewMs());
		timer.unref();
	}
	if (!hooked) {
		hooked = true;
		process.once("exit", releaseAll);
	}
	if (text) onNotice(JSON.parse(text));
}

/** Who hears the line saying a session was forked: `handler(notice)` (default: stderr). */
function setNoticeHandler(handler) {
	onNotice = handler;
}

module.exports = { track, releaseAll, setNoticeHandler };
