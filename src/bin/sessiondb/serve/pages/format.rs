//! Numbers, times and text as pages show them (the transcript's rules, shared with the
//! exports), and the days a usage filter names.

pub use crate::transcript::format::*;

/// A cost in dollars, four decimals (as `sessiondb stats`).
pub fn cost(c: f64) -> String {
    format!("${c:.4}")
}

/// A time as an ISO string (for `datetime` attributes).
pub fn iso(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis).map_or_else(String::new, |t| t.to_rfc3339())
}

/// A date given as `YYYY-MM-DD` (or an age like `7d`) as ms: the start of that day (UTC).
pub fn parse_day(s: &str) -> Option<i64> {
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        return Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis());
    }
    let (n, unit) = s.split_at(s.len().checked_sub(1)?);
    let n: i64 = n.parse().ok()?;
    let ms = match unit {
        "d" => 86_400_000,
        "h" => 3_600_000,
        "m" => 60_000,
        _ => return None,
    };
    Some(chrono::Utc::now().timestamp_millis() - n.checked_mul(ms)?)
}

/// The day after `YYYY-MM-DD` (an "until" day is included).
pub fn parse_day_end(s: &str) -> Option<i64> {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .map_or_else(|| parse_day(s), |d| Some(d.succ_opt()?.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn days() {
        assert_eq!(super::parse_day("1970-01-02"), Some(86_400_000));
        assert_eq!(super::parse_day_end("1970-01-01"), Some(86_400_000));
    }
}
