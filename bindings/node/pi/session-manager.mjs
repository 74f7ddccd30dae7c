// What pi's modules get for SessionManager under sessiondb-pi (see launcher.mjs).
import binding from "../index.cjs";

export const SessionManager = binding.SessionManager;
