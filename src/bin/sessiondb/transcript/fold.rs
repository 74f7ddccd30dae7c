//! Folding: a message longer than a screen (over [`BYTES`] bytes or [`LINES`] lines, its
//! texts together) shows its first part; the rest is one step away. One budget per entry,
//! spent by its texts in order.

use std::cell::Cell;

/// Bytes of an entry's texts shown before it is folded.
pub const BYTES: usize = 4096;

/// Lines of an entry's texts shown before it is folded.
pub const LINES: usize = 60;

/// What happens to the part of an entry past the budget.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Left out of the page, which links to the entry in full (serve: the page stays small
    /// whatever the session holds).
    Out,
    /// Kept in the page, closed under a `<details>` (an exported file, read offline).
    Closed,
    /// No folding (the page of one entry in full).
    None,
}

/// An entry's budget.
pub struct Budget {
    pub mode: Mode,
    bytes: Cell<usize>,
    lines: Cell<usize>,
    folded: Cell<usize>,
}

impl Budget {
    pub fn new(mode: Mode) -> Budget {
        Budget { mode, bytes: Cell::new(BYTES), lines: Cell::new(LINES), folded: Cell::new(0) }
    }

    /// `t` split into the part shown and the part folded, the budget spent by the first.
    pub fn split<'t>(&self, t: &'t str) -> (&'t str, &'t str) {
        if self.mode == Mode::None {
            return (t, "");
        }
        let (bytes, lines) = (self.bytes.get(), self.lines.get());
        // The end of the last line that fits, then back to a character boundary.
        let mut end = t.len().min(bytes);
        if let Some((i, _)) = t.bytes().enumerate().filter(|(_, b)| *b == b'\n').nth(lines.saturating_sub(1)) {
            end = end.min(i + 1);
        }
        if lines == 0 {
            end = 0;
        }
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        let (shown, rest) = t.split_at(end);
        if rest.is_empty() {
            self.bytes.set(bytes - shown.len());
            self.lines.set(lines.saturating_sub(shown.matches('\n').count() + 1));
        } else {
            self.bytes.set(0);
            self.lines.set(0);
            self.folded.set(self.folded.get() + rest.len());
        }
        (shown, rest)
    }

    /// Bytes folded so far.
    pub fn folded(&self) -> usize {
        self.folded.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_at_the_budget_and_later_texts_fold_whole() {
        let b = Budget::new(Mode::Out);
        let long = "é".repeat(3000);
        let (shown, rest) = b.split(&long);
        assert_eq!(shown.len(), BYTES);
        assert_eq!(shown.len() + rest.len(), long.len());
        assert_eq!(b.split("after"), ("", "after"));
        assert_eq!(b.folded(), long.len() - BYTES + 5);
        let lines = "x\n".repeat(100);
        let b = Budget::new(Mode::Closed);
        let (shown, _) = b.split(&lines);
        assert_eq!(shown.matches('\n').count(), LINES);
        let b = Budget::new(Mode::None);
        assert_eq!(b.split(&long), (long.as_str(), ""));
        // Short texts share the budget.
        let b = Budget::new(Mode::Out);
        assert_eq!(b.split("a\nb"), ("a\nb", ""));
        assert_eq!(b.folded(), 0);
    }
}
