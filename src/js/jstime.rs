//! JavaScript `Date` conversions that pi's behaviour depends on: `Date.parse` of ISO strings
//! (entry timestamps), `new Date(value).getTime()` and `toISOString()`.

use crate::js::json::Value;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};

/// Largest absolute time value a JavaScript `Date` holds (ms).
const MAX_TIME: f64 = 8.64e15;

/// `Date.parse(s)`: Unix milliseconds, or `None` for NaN. Accepts the ECMAScript date-time
/// string format (date-only forms and forms without an offset are read as UTC, as pi's
/// goldens run with `TZ=UTC`) and, like V8's fallback, RFC 2822 dates.
pub fn parse_ms(s: &str) -> Option<i64> {
    parse_iso(s).or_else(|| DateTime::parse_from_rfc2822(s.trim()).ok().map(|d| d.timestamp_millis()))
}

fn parse_iso(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let mut i = 0;
    let num = |i: &mut usize, n: usize| -> Option<i64> {
        let part = b.get(*i..*i + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        *i += n;
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let year = match b.first()? {
        b'+' | b'-' => {
            let neg = b[0] == b'-';
            i = 1;
            let y = num(&mut i, 6)?;
            if neg && y == 0 {
                return None;
            }
            if neg {
                -y
            } else {
                y
            }
        }
        _ => num(&mut i, 4)?,
    };
    let (mut month, mut day) = (1, 1);
    if b.get(i) == Some(&b'-') {
        i += 1;
        month = num(&mut i, 2)?;
        if b.get(i) == Some(&b'-') {
            i += 1;
            day = num(&mut i, 2)?;
        }
    }
    let (mut h, mut m, mut sec, mut ms) = (0, 0, 0, 0);
    let mut offset_min = 0;
    if i < b.len() {
        if b[i] != b'T' && b[i] != b't' {
            return None;
        }
        i += 1;
        h = num(&mut i, 2)?;
        if b.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        m = num(&mut i, 2)?;
        if b.get(i) == Some(&b':') {
            i += 1;
            sec = num(&mut i, 2)?;
            if b.get(i) == Some(&b'.') {
                i += 1;
                let start = i;
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
                if i == start {
                    return None;
                }
                let digits = &s[start..i.min(start + 3)];
                ms = digits.parse::<i64>().ok()? * 10_i64.pow(3 - digits.len() as u32);
            }
        }
        match b.get(i) {
            None => {}
            Some(b'Z' | b'z') => i += 1,
            Some(&sign @ (b'+' | b'-')) => {
                i += 1;
                let oh = num(&mut i, 2)?;
                if b.get(i) != Some(&b':') {
                    return None;
                }
                i += 1;
                let om = num(&mut i, 2)?;
                if oh > 23 || om > 59 {
                    return None;
                }
                offset_min = (oh * 60 + om) * if sign == b'+' { 1 } else { -1 };
            }
            _ => return None,
        }
        if i != b.len() {
            return None;
        }
    }
    if !(1..=12).contains(&month) || h > 24 || m > 59 || sec > 59 || (h == 24 && (m, sec, ms) != (0, 0, 0)) {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month as u32, 1)?;
    // Days beyond the month's length are invalid, as in V8.
    let days_in_month = date.checked_add_months(chrono::Months::new(1))?.signed_duration_since(date).num_days();
    if day < 1 || day > days_in_month {
        return None;
    }
    let days = date.signed_duration_since(NaiveDate::from_ymd_opt(1970, 1, 1)?).num_days() + day - 1;
    let t = days * 86_400_000 + h * 3_600_000 + m * 60_000 + sec * 1000 + ms - offset_min * 60_000;
    if (t as f64).abs() > MAX_TIME {
        return None;
    }
    Some(t)
}

/// `new Date(value).getTime()` for a JSON value (`None` is NaN; a missing value is NaN too).
pub fn date_value_ms(value: Option<&Value>) -> Option<i64> {
    let t = match value? {
        Value::String(s) => return parse_ms(&s.to_str()),
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => *n,
        Value::Array(_) | Value::Object(_) | Value::Raw(_) => return None,
    };
    if !t.is_finite() || t.abs() > MAX_TIME {
        return None;
    }
    Some(t.trunc() as i64)
}

/// `new Date(ms).toISOString()`.
pub fn iso_from_ms(ms: i64) -> String {
    match Utc.timestamp_millis_opt(ms).single() {
        Some(d) => {
            let year = chrono::Datelike::year(&d);
            if (0..=9999).contains(&year) {
                d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
            } else {
                let sign = if year < 0 { '-' } else { '+' };
                format!("{sign}{:06}{}", year.abs(), d.format("-%m-%dT%H:%M:%S%.3fZ"))
            }
        }
        None => "Invalid Date".into(),
    }
}

/// Now as `new Date().toISOString()`.
pub fn now_iso() -> String {
    iso_from_ms(Utc::now().timestamp_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_v8() {
        assert_eq!(parse_ms("2025-02-01T00:00:00.000Z"), Some(1_738_368_000_000));
        assert_eq!(parse_ms("2025-02-01T00:00:03+02:00"), Some(1_738_368_003_000 - 7_200_000));
        assert_eq!(parse_ms("2025-02-01T00:00:01Z"), Some(1_738_368_001_000));
        assert_eq!(parse_ms("2025-02-01"), Some(1_738_368_000_000));
        assert_eq!(parse_ms("2025-02-01T00:00:00.1234Z"), Some(1_738_368_000_123));
        assert_eq!(parse_ms("not a date"), None);
        assert_eq!(parse_ms(""), None);
        assert_eq!(parse_ms("2025-02-30"), None);
        assert_eq!(iso_from_ms(1_738_368_000_123), "2025-02-01T00:00:00.123Z");
        assert_eq!(date_value_ms(Some(&Value::Null)), Some(0));
        assert_eq!(date_value_ms(None), None);
    }
}
