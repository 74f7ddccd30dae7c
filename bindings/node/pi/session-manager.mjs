import binding from "../index.cjs";
const C = binding.SessionManager;
if (process.env.SM_TRACE) {
  for (const name of Object.getOwnPropertyNames(C.prototype)) {
    const f = C.prototype[name]; if (typeof f !== "function" || name === "constructor") continue;
    C.prototype[name] = function (...a) { const t = performance.now(); const r = f.apply(this, a); process.stderr.write(`TRACE ${name} ${(performance.now()-t).toFixed(1)}ms${Array.isArray(r)?` len=${r.length}`:""}\n`); return r; };
  }
  for (const name of ["open","create","continueRecent","findById","list","listAll","inMemory","forkFrom"]) {
    const f = C[name]; C[name] = function (...a) { const t = performance.now(); const r = f.apply(this, a); process.stderr.write(`TRACE static ${name} ${(performance.now()-t).toFixed(1)}ms\n`); return r; };
  }
}
export const SessionManager = C;
