#!/usr/bin/env node
// The `sessiondb` command of the npm package: runs this platform's executable (platform.cjs), as
// esbuild's shim runs its binary. The child shares our stdin, stdout and stderr (a closed pipe is
// the child's to see), signals sent to this process are passed on, and we end as the child ended:
// with its exit status, or killed by the same signal.
"use strict";
const { spawn } = require("node:child_process");
const platform = require("../platform.cjs");

const exe = platform.executablePath();
if (!exe) {
	process.stderr.write(`${platform.missingMessage("sessiondb executable")}\n`);
	process.exit(1);
}

const child = spawn(exe, process.argv.slice(2), { stdio: "inherit", windowsHide: false });

// A terminal's Ctrl-C reaches the whole process group, the child included; a signal sent to
// this process alone (kill PID, a supervisor) is forwarded so the child never outlives us.
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2", "SIGWINCH"];
const forward = (signal) => {
	try {
		child.kill(signal);
	} catch {
		// the child is already gone
	}
};
for (const s of FORWARDED) {
	try {
		process.on(s, forward);
	} catch {
		// not a signal on this platform (Windows)
	}
}

child.on("error", (e) => {
	process.stderr.write(`sessiondb: cannot run ${exe} (${e.message})\n`);
	process.exit(1);
});
child.on("exit", (code, signal) => {
	for (const s of FORWARDED) process.removeAllListeners(s);
	if (signal) {
		// End the same way, so a shell sees 128+N and a parent sees the signal.
		process.kill(process.pid, signal);
		return;
	}
	process.exit(code ?? 1);
});
