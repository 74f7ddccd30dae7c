//! What the operating system says about this process and the machine (Linux `/proc`): peak
//! memory, the CPU time other processes used while a figure ran, and how fast the disk
//! takes a durable sequential write.

use std::time::Instant;

/// `/proc` reports CPU time in these ticks per second (`USER_HZ`, 100 on Linux).
const TICKS_PER_S: f64 = 100.0;

fn status_kib(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

/// Peak resident memory of this process (VmHWM) in MiB, since start or the last reset.
pub fn peak_rss_mib() -> Option<f64> {
    status_kib("VmHWM:").map(|k| k / 1024.0)
}

/// Current resident memory (VmRSS) in MiB.
pub fn rss_mib() -> Option<f64> {
    status_kib("VmRSS:").map(|k| k / 1024.0)
}

/// Bytes written by [`disk_write_mib_per_s`].
const DISK_PROBE_BYTES: usize = 64 << 20;

/// How fast the disk holding `dir` takes a sequential write made durable (64 MiB, then
/// `fdatasync`), in MiB/s: the bound of every figure that must reach the disk, an import's
/// first. The probe file is removed.
pub fn disk_write_mib_per_s(dir: &std::path::Path) -> std::io::Result<f64> {
    use std::io::Write;
    let path = dir.join("disk-probe");
    let chunk = vec![0x5Au8; 1 << 20];
    let start = Instant::now();
    let result = (|| {
        let mut f = std::fs::File::create(&path)?;
        for _ in 0..DISK_PROBE_BYTES / chunk.len() {
            f.write_all(&chunk)?;
        }
        f.sync_data()
    })();
    let secs = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&path);
    result.map(|()| DISK_PROBE_BYTES as f64 / (1 << 20) as f64 / secs)
}

/// Resets the peak (VmHWM) to the current RSS by writing `5` to `/proc/self/clear_refs`,
/// after handing memory the allocator keeps but nothing uses back to the system (as bench-pi
/// runs Node's GC between figures), so that a phase's peak is its own. Returns false where
/// the reset is not allowed: the peak then covers the whole process.
pub fn reset_peak_rss() -> bool {
    release_free_memory();
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_free_memory() {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::os::raw::c_int;
    }
    // SAFETY: glibc's malloc_trim only returns free heap pages to the kernel.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

/// The higher of two peaks, either of which may be unknown.
pub fn max_peak(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// Busy CPU seconds of all CPUs, number of CPUs, and this process's own CPU seconds.
fn cpu_now() -> Option<(f64, usize, f64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let mut lines = stat.lines();
    let total: Vec<f64> = lines.next()?.split_whitespace().skip(1).filter_map(|x| x.parse().ok()).collect();
    // user nice system idle iowait irq softirq steal
    let busy = [0, 1, 2, 5, 6, 7].iter().filter_map(|&i| total.get(i)).sum::<f64>() / TICKS_PER_S;
    let cpus = lines.filter(|l| l.starts_with("cpu")).count().max(1);
    let own = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces): utime and stime are 12 and 13.
    let rest = &own[own.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let own_s = (f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / TICKS_PER_S;
    Some((busy, cpus, own_s))
}

/// A point in time to measure other processes' CPU use from.
#[derive(Debug, Clone, Copy)]
pub struct CpuSnapshot {
    at: Instant,
    cpu: Option<(f64, usize, f64)>,
}

impl CpuSnapshot {
    /// Now.
    pub fn take() -> Self {
        CpuSnapshot { at: Instant::now(), cpu: cpu_now() }
    }

    /// CPU time other processes used since the snapshot, as a share of all CPUs' time (0..1).
    pub fn other_cpu_share(&self) -> Option<f64> {
        let (busy0, cpus, own0) = self.cpu?;
        let (busy1, _, own1) = cpu_now()?;
        let wall = self.at.elapsed().as_secs_f64();
        if wall <= 0.0 {
            return None;
        }
        let other = (busy1 - busy0 - (own1 - own0)).max(0.0);
        Some((other / (wall * cpus as f64)).min(1.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_proc() {
        if !std::path::Path::new("/proc/self/status").exists() {
            return;
        }
        assert!(peak_rss_mib().is_some_and(|m| m > 0.0));
        assert!(rss_mib().is_some_and(|m| m > 0.0));
        let s = CpuSnapshot::take();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(s.other_cpu_share().is_some_and(|x| (0.0..=1.0).contains(&x)));
    }
}
