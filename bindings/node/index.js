// ESM entry: the implementation is index.cjs (one class for both module systems).
import cjs from "./index.cjs";

export const SessionManager = cjs.SessionManager;
export default SessionManager;
