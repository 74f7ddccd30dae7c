// Drives pi's CLI in --mode rpc (docs/rpc.md): one command at a time, each answered by its
// response; a prompt also waits for `agent_settled`. Records are split on LF only.
import { spawn } from "node:child_process";

export class Rpc {
	#child;
	#buffer = "";
	#waiting = new Map(); // id -> resolve
	#settled = [];
	#next = 0;
	stderr = "";
	exited;

	constructor(argv, { cwd, env }) {
		this.#child = spawn(process.execPath, [...argv, "--mode", "rpc"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
		this.#child.stdout.setEncoding("utf8");
		this.#child.stdout.on("data", (d) => this.#data(d));
		this.#child.stderr.setEncoding("utf8");
		this.#child.stderr.on("data", (d) => (this.stderr += d));
		this.exited = new Promise((resolve) => this.#child.on("exit", (code, signal) => resolve({ code, signal })));
	}

	get pid() {
		return this.#child.pid;
	}

	#data(d) {
		this.#buffer += d;
		for (let nl = this.#buffer.indexOf("\n"); nl !== -1; nl = this.#buffer.indexOf("\n")) {
			const line = this.#buffer.slice(0, nl).replace(/\r$/, "");
			this.#buffer = this.#buffer.slice(nl + 1);
			if (!line.trim()) continue;
			const record = JSON.parse(line);
			if (record.type === "response" && this.#waiting.has(record.id)) {
				const resolve = this.#waiting.get(record.id);
				this.#waiting.delete(record.id);
				resolve(record);
			} else if (record.type === "agent_settled") {
				const w = this.#settled.shift();
				w?.();
			}
		}
	}

	/** Sends one command; resolves with its response record. */
	send(command, timeout = 60_000) {
		const id = `c${this.#next++}`;
		return new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error(`no response to ${JSON.stringify(command)}; stderr: ${this.stderr}`)), timeout);
			this.#waiting.set(id, (r) => {
				clearTimeout(timer);
				resolve(r);
			});
			this.#child.stdin.write(`${JSON.stringify({ ...command, id })}\n`);
		});
	}

	/** A prompt, answered and settled. */
	async prompt(message) {
		const settled = new Promise((resolve) => this.#settled.push(resolve));
		const r = await this.send({ type: "prompt", message });
		if (r.success && r.data?.disposition !== "handled") await settled;
		return r;
	}

	/** Closes stdin (pi's orderly shutdown) and waits for the exit. */
	async close() {
		this.#child.stdin.end();
		return this.exited;
	}

	kill(signal) {
		this.#child.kill(signal);
	}
}
