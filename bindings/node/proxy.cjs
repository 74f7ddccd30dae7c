"use strict";
// The traps of a lazy proxy that hand every question but `get` to the object it stands for:
// pi's code spreads, copies and serialises entries, and each of those asks `has`, `ownKeys` or a
// descriptor. `of(target)` parses (or finds) that object.

/** Proxy traps forwarding `has`, `ownKeys`, descriptors and `set` to `of(target)`. */
function forwarding(of) {
	return {
		has: (t, prop) => prop in of(t),
		ownKeys: (t) => Reflect.ownKeys(of(t)),
		getOwnPropertyDescriptor(t, prop) {
			const d = Reflect.getOwnPropertyDescriptor(of(t), prop);
			// The proxy's target is not the object: a descriptor it lacks must be configurable.
			if (d) d.configurable = true;
			return d;
		},
		set(t, prop, value) {
			of(t)[prop] = value;
			return true;
		},
	};
}

module.exports = { forwarding };
