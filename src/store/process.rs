//! Processes as a lease names them: this process (pid, host, start time), and whether a
//! process of this host still runs with the start time a lease recorded. Linux tells both
//! from `/proc`; elsewhere the start time is unknown (`""`) and leases go by their renewals.

use crate::store::interface::lease::Claimant;
use std::sync::OnceLock;

/// This process.
pub fn me() -> &'static Claimant {
    static ME: OnceLock<Claimant> = OnceLock::new();
    ME.get_or_init(|| {
        let pid = std::process::id();
        Claimant { pid: i64::from(pid), host: host_name(), start: start_of(i64::from(pid)).unwrap_or_default() }
    })
}

/// This host's name (`""` when it has none to tell).
fn host_name() -> String {
    let from_kernel = std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    let from_env = || std::env::var("HOSTNAME").or_else(|_| std::env::var("COMPUTERNAME")).ok();
    from_kernel.or_else(from_env).map(|h| h.trim().to_owned()).unwrap_or_default()
}

/// The start time of process `pid` on this host, as `<boot id>:<clock ticks since boot>`
/// (the boot id tells a pid and start time of an earlier boot apart); `None` when no such
/// process runs, or this host cannot tell.
pub fn start_of(pid: i64) -> Option<String> {
    if pid <= 0 {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or ')': fields are
    // counted after its last ')'. starttime is field 22, the 20th after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let ticks = rest.split_whitespace().nth(19)?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    Some(format!("{}:{ticks}", boot.trim()))
}

/// Whether this host can tell which processes run (Linux's `/proc`).
pub fn can_probe() -> bool {
    std::path::Path::new("/proc/self/stat").exists()
}
