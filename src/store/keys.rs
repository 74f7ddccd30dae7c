//! Row keys. An entry row's key packs its session's key and its line number in the file,
//! `session << 32 | seq`, so that one session's rows are one contiguous range of the table's
//! rowid, in file order. Nothing outside this module packs or unpacks a key.

/// A stored session (`sessions.sid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey(pub i64);

/// A stored entry line (`entries.key`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryKey(pub i64);

impl std::fmt::Display for SessionKey {
    /// The key as the number stored (for messages).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for EntryKey {
    /// The key as the number stored (for messages).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The key `n` lines further on: one session's lines have consecutive keys, so a run of them
/// moves to another place (a fork's copy) by one difference of keys.
impl std::ops::Add<i64> for EntryKey {
    type Output = EntryKey;
    fn add(self, n: i64) -> EntryKey {
        EntryKey(self.0 + n)
    }
}

/// The key `n` lines back.
impl std::ops::Sub<i64> for EntryKey {
    type Output = EntryKey;
    fn sub(self, n: i64) -> EntryKey {
        EntryKey(self.0 - n)
    }
}

/// How many lines (keys) apart two entries are.
impl std::ops::Sub for EntryKey {
    type Output = i64;
    fn sub(self, other: EntryKey) -> i64 {
        self.0 - other.0
    }
}

/// The last line number a session's key range has room for.
const MAX_SEQ: i64 = 0xFFFF_FFFF;

impl SessionKey {
    /// The key of the entry stored as line `seq` of this session.
    pub fn entry(self, seq: i64) -> EntryKey {
        EntryKey((self.0 << 32) | seq)
    }

    /// The first and the last key this session's lines can have.
    pub fn range(self) -> (EntryKey, EntryKey) {
        (self.entry(0), self.entry(MAX_SEQ))
    }
}

impl EntryKey {
    /// Below every key (a walk "from the first line").
    pub const MIN: EntryKey = EntryKey(i64::MIN);
    /// Above every key.
    pub const MAX: EntryKey = EntryKey(i64::MAX);

    /// The session the entry belongs to.
    pub fn session(self) -> SessionKey {
        SessionKey(self.0 >> 32)
    }

    /// The entry's line number in its session's file.
    pub fn seq(self) -> i64 {
        self.0 & MAX_SEQ
    }

    /// The session and the line number, as PostgreSQL's primary key holds them.
    pub fn parts(self) -> (i64, i64) {
        (self.session().0, self.seq())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_pack_and_unpack() {
        let s = SessionKey(7);
        assert_eq!(s.entry(3).0, (7 << 32) | 3);
        assert_eq!(s.entry(3).session(), s);
        assert_eq!(s.range(), (EntryKey(7 << 32), EntryKey((7 << 32) | 0xFFFF_FFFF)));
        assert!(s.range().1 < SessionKey(8).entry(0));
        assert_eq!(s.entry(3).seq(), 3);
        assert_eq!(s.entry(3).parts(), (7, 3));
    }

    #[test]
    fn lines_of_a_session_are_consecutive_keys() {
        let (s, t) = (SessionKey(7), SessionKey(9));
        assert_eq!(s.entry(3) + 2, s.entry(5));
        assert_eq!(s.entry(5) - 2, s.entry(3));
        assert_eq!(s.entry(5) - s.entry(3), 2);
        // A run of lines moves to another session by one difference of keys.
        let shift = t.entry(1) - s.entry(4);
        assert_eq!(s.entry(6) + shift, t.entry(3));
        assert!(EntryKey::MIN < s.entry(0) && s.range().1 < EntryKey::MAX);
        assert_eq!((s.to_string(), s.entry(1).to_string()), ("7".into(), ((7i64 << 32) | 1).to_string()));
    }
}
