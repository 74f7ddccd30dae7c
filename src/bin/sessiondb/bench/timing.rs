//! Timing runs and their statistics: warm-up, repeated timed runs, median and percentiles.

use sessiondb::Result;
use std::hint::black_box;
use std::time::Instant;

/// How often a figure runs.
#[derive(Debug, Clone, Copy)]
pub struct RunPlan {
    /// Untimed runs first.
    pub warmup: u32,
    /// Minimum timed runs.
    pub runs: u32,
    /// Fast figures repeat until their timed runs add up to this many milliseconds...
    pub min_time_ms: f64,
    /// ...but never more than this many timed runs.
    pub max_runs: u32,
}

impl RunPlan {
    /// `runs` timed runs after one warm-up, repeated up to 50 runs / 300 ms (as bench-pi).
    pub fn fast(runs: u32) -> Self {
        RunPlan { warmup: 1, runs: runs.max(1), min_time_ms: 300.0, max_runs: 50.max(runs) }
    }

    /// Exactly `runs` timed runs, no warm-up: passes over a whole corpus.
    pub fn heavy(runs: u32) -> Self {
        RunPlan { warmup: 0, runs: runs.max(1), min_time_ms: 0.0, max_runs: runs.max(1) }
    }
}

/// Timed samples of one figure, in milliseconds.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// One duration per timed run, in run order.
    pub samples_ms: Vec<f64>,
}

impl Timing {
    fn sorted(&self) -> Vec<f64> {
        let mut s = self.samples_ms.clone();
        s.sort_by(f64::total_cmp);
        s
    }

    /// The median (mean of the middle two for an even count); 0 without samples.
    pub fn median(&self) -> f64 {
        let s = self.sorted();
        let n = s.len();
        match n {
            0 => 0.0,
            _ if n % 2 == 1 => s[n / 2],
            _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }

    /// The `p`-th percentile (nearest rank, `p` in 0..=100); 0 without samples. No figure
    /// reports one today; the tests keep its definition checked.
    #[cfg(test)]
    pub fn percentile(&self, p: f64) -> f64 {
        let s = self.sorted();
        if s.is_empty() {
            return 0.0;
        }
        let rank = ((p / 100.0) * s.len() as f64).ceil() as usize;
        s[rank.clamp(1, s.len()) - 1]
    }

    /// Number of timed runs.
    pub fn runs(&self) -> usize {
        self.samples_ms.len()
    }
}

/// Runs `f` as `plan` says and times each run; returns the timings and the last result.
pub fn measure<T>(plan: RunPlan, f: impl FnMut(u32) -> Result<T>) -> Result<(Timing, T)> {
    measure_with(plan, Ok, f)
}

/// Like [`measure`], with an untimed `setup` before each run whose output the run gets.
pub fn measure_with<S, T>(
    plan: RunPlan,
    mut setup: impl FnMut(u32) -> Result<S>,
    mut f: impl FnMut(S) -> Result<T>,
) -> Result<(Timing, T)> {
    let mut run = 0;
    while run < plan.warmup {
        let s = setup(run)?;
        black_box(f(s)?);
        run += 1;
    }
    let mut timing = Timing::default();
    let mut total = 0.0;
    loop {
        let s = setup(run)?;
        let t0 = Instant::now();
        let value = black_box(f(s)?);
        let ms = t0.elapsed().as_secs_f64() * 1000.0;
        run += 1;
        timing.samples_ms.push(ms);
        total += ms;
        let n = timing.runs() as u32;
        if n >= plan.max_runs || (n >= plan.runs && total >= plan.min_time_ms) {
            return Ok((timing, value));
        }
    }
}

/// `x` rounded to `digits` significant digits (for reports).
pub fn sig(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistics() {
        let t = Timing { samples_ms: vec![5.0, 1.0, 3.0, 2.0] };
        assert_eq!(t.median(), 2.5);
        assert_eq!(t.percentile(50.0), 2.0);
        assert_eq!(t.percentile(99.0), 5.0);
        assert_eq!(sig(1234.567, 4), 1235.0);
        assert_eq!(sig(0.0123456, 3), 0.0123);
        let (t, last) = measure(RunPlan { warmup: 1, runs: 3, min_time_ms: 0.0, max_runs: 3 }, Ok).unwrap();
        assert_eq!((t.runs(), last), (3, 3));
    }
}
