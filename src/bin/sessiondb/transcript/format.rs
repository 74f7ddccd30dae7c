//! Numbers, times and text as transcripts and pages show them (serve's pages and the HTML and
//! Markdown exports).

/// `1234567` as `1,234,567`.
pub fn int(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

/// A time (ms since the epoch) as `2026-11-30 18:00` UTC.
pub fn time(ms: Option<i64>) -> String {
    ms.and_then(chrono::DateTime::from_timestamp_millis)
        .map_or_else(|| "—".to_string(), |t| t.format("%Y-%m-%d %H:%M").to_string())
}

/// The first `max` characters of `s`.
pub fn head(s: &str, max: usize) -> &str {
    s.char_indices().nth(max).map_or(s, |(i, _)| &s[..i])
}

/// At most `max` characters of `s`, with `…` when cut, on one line.
pub fn short(s: &str, max: usize) -> String {
    // Only the start is read: a 10 MB first message costs what 120 characters cost.
    let one_line: String = head(s, max.saturating_mul(4)).split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut out: String = one_line.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn numbers_and_text() {
        assert_eq!(super::int(1234567), "1,234,567");
        assert_eq!(super::int(-1000), "-1,000");
        assert_eq!(super::int(12), "12");
        assert_eq!(super::short("a\n b  c", 10), "a b c");
    }
}
