//! The snippet of a search hit: the text around its matches, every term marked in `[` `]`.
//!
//! One match of each term is chosen so that together they span as little text as possible
//! (the query "retry backoff" shows a place where both words are, not the first "retry" of a
//! long text). When those matches are close, one window holds them all; when they are far
//! apart, each gets a short fragment of its own and the fragments are joined with ` … `.
//! Inside what is shown, every occurrence of every term is marked.

/// Context around a lone match (a one-term query, or terms next to each other).
const AROUND: usize = 60;
/// Context on each side of a match shown in a fragment of its own.
const FRAGMENT_AROUND: usize = 30;
/// Chosen matches spanning at most this many characters are shown in one window.
const ONE_WINDOW: usize = 2 * AROUND;
/// Matches of one term considered when choosing (a term in every line of a huge tool
/// result need not be looked at everywhere).
const MAX_OCCURRENCES: usize = 2000;

/// The snippet of `text` for the folded `terms` (`folded` is `text` folded, one character for
/// each character); `None` when the first term does not occur.
pub(crate) fn snippet(text: &str, folded: &str, terms: &[String]) -> Option<String> {
    let terms: Vec<&str> = terms.iter().map(String::as_str).filter(|t| !t.is_empty()).collect();
    folded.find(terms.first()?)?;
    let chars: Vec<char> = text.chars().collect();
    let fchars: Vec<char> = folded.chars().collect();
    let len = chars.len().min(fchars.len());
    // The chosen matches, in characters (folding keeps positions in characters).
    let mut chosen: Vec<(usize, usize)> = closest(folded, &terms)
        .into_iter()
        .map(|(t, b)| {
            let at = folded[..b].chars().count();
            (at, (at + terms[t].chars().count()).min(len))
        })
        .collect();
    chosen.sort_unstable();
    let first = chosen.first()?.0;
    let last = chosen.iter().map(|&(_, e)| e).max()?;
    let windows: Vec<(usize, usize)> = if last - first <= ONE_WINDOW {
        // A lone match gets AROUND either side; matches apart share it.
        let extra = (last - first).saturating_sub(chosen[0].1 - chosen[0].0);
        let around = AROUND.saturating_sub(extra / 2).max(FRAGMENT_AROUND);
        vec![(first.saturating_sub(around), (last + around).min(len))]
    } else {
        let mut w: Vec<(usize, usize)> = Vec::new();
        for &(a, b) in &chosen {
            let (a, b) = (a.saturating_sub(FRAGMENT_AROUND), (b + FRAGMENT_AROUND).min(len));
            match w.last_mut() {
                Some(prev) if a <= prev.1 => prev.1 = prev.1.max(b),
                _ => w.push((a, b)),
            }
        }
        w
    };
    let marks = marks(&fchars[..len], &terms, &chosen, &windows);
    let mut out = String::new();
    for (i, &(start, end)) in windows.iter().enumerate() {
        out.push_str(match (i, start) {
            (0, 0) => "",
            (0, _) => "…",
            _ => " … ",
        });
        let mut pos = start;
        for &(a, b) in marks.iter().filter(|&&(a, _)| a >= start && a < end) {
            out.extend(&chars[pos..a]);
            out.push('[');
            out.extend(&chars[a..b]);
            out.push(']');
            pos = b;
        }
        out.extend(&chars[pos..end.max(pos)]);
    }
    if windows.last().is_some_and(|&(_, end)| end < chars.len()) {
        out.push('…');
    }
    Some(out)
}

/// One match of each term (its index and byte offset in `folded`): the first ones when they
/// are close together, else the ones spanning as little text as possible (the earliest such
/// set). Terms that do not occur are left out.
fn closest(folded: &str, terms: &[&str]) -> Vec<(usize, usize)> {
    // Most often the first matches are close already (always, for one term): no need to
    // look at every match of a long text.
    let firsts: Vec<(usize, usize)> =
        terms.iter().enumerate().filter_map(|(t, term)| folded.find(term).map(|b| (t, b))).collect();
    let lo = firsts.iter().map(|&(_, b)| b).min().unwrap_or(0);
    let hi = firsts.iter().map(|&(t, b)| b + terms[t].len()).max().unwrap_or(0);
    if hi - lo <= ONE_WINDOW {
        return firsts;
    }
    let mut all: Vec<(usize, usize)> = Vec::new(); // (byte offset, term)
    for (t, term) in terms.iter().enumerate() {
        all.extend(folded.match_indices(term).take(MAX_OCCURRENCES).map(|(b, _)| (b, t)));
    }
    all.sort_unstable();
    let wanted = terms.iter().enumerate().filter(|(_, term)| folded.contains(**term)).count();
    // The shortest run of `all` holding every term (a sliding window), measured from its first
    // match's start to its farthest match's end.
    let mut count = vec![0usize; terms.len()];
    let (mut have, mut lo) = (0, 0);
    let mut best: Option<(usize, usize, usize)> = None; // (span, lo, hi)
    for hi in 0..all.len() {
        if count[all[hi].1] == 0 {
            have += 1;
        }
        count[all[hi].1] += 1;
        while have == wanted {
            let span = (all[hi].0 + terms[all[hi].1].len()).saturating_sub(all[lo].0);
            if best.is_none_or(|(s, _, _)| span < s) {
                best = Some((span, lo, hi));
            }
            count[all[lo].1] -= 1;
            if count[all[lo].1] == 0 {
                have -= 1;
            }
            lo += 1;
        }
    }
    let Some((_, lo, hi)) = best else { return Vec::new() };
    // The first match of each term in that run.
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &(b, t) in &all[lo..=hi] {
        if !out.iter().any(|&(u, _)| u == t) {
            out.push((t, b));
        }
    }
    out
}

/// The marks, in order and not overlapping: the chosen matches first (overlapping ones, as
/// "back" inside "backoff", become one mark), then every other occurrence of a term inside
/// the windows that overlaps no mark.
fn marks(
    fchars: &[char],
    terms: &[&str],
    chosen: &[(usize, usize)],
    windows: &[(usize, usize)],
) -> Vec<(usize, usize)> {
    let mut marks: Vec<(usize, usize)> = Vec::new();
    for &(a, b) in chosen {
        match marks.last_mut() {
            Some(prev) if a < prev.1 => prev.1 = prev.1.max(b),
            _ => marks.push((a, b)),
        }
    }
    let overlaps = |marks: &[(usize, usize)], a: usize, b: usize| marks.iter().any(|&(x, y)| a < y && x < b);
    for term in terms {
        let t: Vec<char> = term.chars().collect();
        for &(start, end) in windows {
            let mut i = start;
            while i + t.len() <= end {
                if fchars[i..i + t.len()] == t[..] && !overlaps(&marks, i, i + t.len()) {
                    marks.push((i, i + t.len()));
                    i += t.len();
                } else {
                    i += 1;
                }
            }
        }
    }
    marks.sort_unstable();
    marks
}

#[cfg(test)]
mod tests {
    use super::snippet;

    fn snip(text: &str, terms: &[&str]) -> String {
        let folded = crate::store::tokens::fold_str(text);
        let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
        snippet(text, &folded, &terms).expect("a match")
    }

    #[test]
    fn one_term_is_shown_with_sixty_characters_either_side() {
        let text = format!("{}needle{}", "a".repeat(100), "b".repeat(100));
        assert_eq!(snip(&text, &["needle"]), format!("…{}[needle]{}…", "a".repeat(60), "b".repeat(60)));
        assert_eq!(snip("a Needle and a needle", &["needle"]), "a [Needle] and a [needle]");
    }

    #[test]
    fn every_term_is_marked_even_far_from_the_first() {
        let text = format!("retry {} then backoff {}", "x ".repeat(200), "y ".repeat(50));
        let s = snip(&text, &["retry", "backoff"]);
        assert!(s.starts_with("[retry] x x"), "{s}");
        assert!(s.contains(" … "), "{s}");
        assert!(s.contains("then [backoff] y"), "{s}");
        assert!(s.ends_with('…'), "{s}");
        assert!(s.chars().count() < 200, "{s}");
    }

    #[test]
    fn the_closest_matches_are_chosen_and_shown_in_one_window() {
        // The first "retry" is far from "backoff"; the second is next to it.
        let text = format!("retry once. {} We chose retry with backoff here. {}", "z".repeat(300), "w".repeat(300));
        let s = snip(&text, &["backoff", "retry"]);
        assert!(!s.contains(" … "), "{s}");
        assert!(s.contains("We chose [retry] with [backoff] here."), "{s}");
        assert!(!s.contains("once"), "{s}");
    }

    #[test]
    fn overlapping_terms_make_one_mark_and_case_is_kept() {
        assert_eq!(snip("Exponential BACKOFF", &["back", "backoff"]), "Exponential [BACKOFF]");
        assert_eq!(snip("Grüße aus Köln, grüße", &["grüße", "köln"]), "[Grüße] aus [Köln], [grüße]");
    }

    #[test]
    fn a_phrase_is_one_term() {
        let text = format!("{} the lock file {} lock", "q".repeat(80), "r".repeat(80));
        let s = snip(&text, &["lock file", "lock"]);
        assert!(s.contains("[lock file]"), "{s}");
        assert!(s.contains("[lock]") || !s.contains(" lock"), "{s}");
    }
}
