//! A session's links (each entry's key, id, parentId, type and role, without its line) held as
//! columns: the strings of all rows in one text, types and roles as codes into a small table.
//! A long session's links are read whole at every resume, and a `String` per field was most of
//! that read (four allocations and frees a row, 100,000 rows on HUGE).

use crate::hash::FxHashMap;
use crate::store::keys::EntryKey;

/// A string of a row: where it lies in [`Links`]' text; `len == NULL` for null (a stored
/// value is under SQLite's 2 GiB limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    len: u32,
}

const NULL: u32 = u32::MAX;

/// Every entry's linking columns, in the order pushed (file order where a store reads them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Links {
    keys: Vec<EntryKey>,
    ids: Vec<Span>,
    parents: Vec<Span>,
    /// Codes into `names`: 0 for null, else 1 + the index.
    kinds: Vec<u32>,
    roles: Vec<u32>,
    names: Vec<String>,
    /// `names` past the first FEW, by value.
    more: FxHashMap<String, usize>,
    text: String,
}

const FEW: usize = 16;

/// One row of [`Links`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkRef<'a> {
    /// Storage key.
    pub key: EntryKey,
    /// `id` when a string.
    pub id: Option<&'a str>,
    /// `parentId` when a string.
    pub parent_id: Option<&'a str>,
    /// Entry type.
    pub kind: Option<&'a str>,
    /// Message role.
    pub role: Option<&'a str>,
}

impl Links {
    /// Room for `n` rows.
    pub fn with_capacity(n: usize) -> Self {
        Links {
            keys: Vec::with_capacity(n),
            ids: Vec::with_capacity(n),
            parents: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            roles: Vec::with_capacity(n),
            names: Vec::new(),
            more: FxHashMap::default(),
            text: String::with_capacity(n * 18),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: LinkRef<'_>) {
        self.keys.push(row.key);
        let id = self.span(row.id);
        self.ids.push(id);
        // On a path, an entry's parentId is the id just pushed: its text is not stored twice.
        let parent = match (row.parent_id, self.ids.len().checked_sub(2).map(|i| self.ids[i])) {
            (Some(p), Some(prev)) if self.str_at(prev) == Some(p) => prev,
            (p, _) => self.span(p),
        };
        self.parents.push(parent);
        let kind = self.code(row.kind);
        self.kinds.push(kind);
        let role = self.code(row.role);
        self.roles.push(role);
    }

    fn span(&mut self, s: Option<&str>) -> Span {
        let start = self.text.len();
        // A value of NULL bytes or more cannot come from a store; it would read as null.
        match s.and_then(|s| u32::try_from(s.len()).ok().filter(|&n| n != NULL).map(|n| (s, n))) {
            Some((s, len)) => {
                self.text.push_str(s);
                Span { start, len }
            }
            None => Span { start, len: NULL },
        }
    }

    fn str_at(&self, s: Span) -> Option<&str> {
        if s.len == NULL {
            return None;
        }
        self.text.get(s.start..s.start + s.len as usize)
    }

    /// A session has a handful of types and roles: a linear search of the first few finds
    /// them faster than hashing each of 100,000 values; a file with many (any text can be a
    /// type) is looked up by hash past those.
    fn code(&mut self, v: Option<&str>) -> u32 {
        let Some(v) = v else { return 0 };
        let few = &self.names[..self.names.len().min(FEW)];
        let found = few.iter().position(|x| x == v).or_else(|| self.more.get(v).copied());
        let i = match found {
            Some(i) => i,
            None => {
                let i = self.names.len();
                if i >= FEW {
                    self.more.insert(v.to_owned(), i);
                }
                self.names.push(v.to_owned());
                i
            }
        };
        // As many names as rows at most, and rows are counted in u32 keys' low half.
        u32::try_from(i + 1).unwrap_or(u32::MAX)
    }

    fn name(&self, code: u32) -> Option<&str> {
        match code {
            0 => None,
            c => self.names.get(c as usize - 1).map(String::as_str),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// No rows.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Row `i`. Panics when `i` is out of range, as indexing does.
    pub fn get(&self, i: usize) -> LinkRef<'_> {
        LinkRef {
            key: self.keys[i],
            id: self.str_at(self.ids[i]),
            parent_id: self.str_at(self.parents[i]),
            kind: self.name(self.kinds[i]),
            role: self.name(self.roles[i]),
        }
    }

    /// The rows in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = LinkRef<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The keys, in order.
    pub fn keys(&self) -> &[EntryKey] {
        &self.keys
    }

    /// Row `i`'s key.
    pub fn key(&self, i: usize) -> EntryKey {
        self.keys[i]
    }

    /// Row `i`'s id.
    pub fn id(&self, i: usize) -> Option<&str> {
        self.str_at(self.ids[i])
    }

    /// Row `i`'s parentId.
    pub fn parent_id(&self, i: usize) -> Option<&str> {
        self.str_at(self.parents[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_read_back_as_pushed() {
        let rows = [
            (1, Some("a"), None, Some("message"), Some("user")),
            (2, Some("b"), Some("a"), Some("message"), Some("assistant")),
            (3, None, Some("b"), Some("label"), None),
            (4, Some("c"), Some("zz"), None, Some("user")),
            (5, Some(""), Some(""), Some("x"), None),
        ];
        let mut links = Links::with_capacity(1);
        for (k, id, parent_id, kind, role) in rows {
            links.push(LinkRef { key: EntryKey(k), id, parent_id, kind, role });
        }
        assert_eq!(links.len(), rows.len());
        for (i, (k, id, parent_id, kind, role)) in rows.into_iter().enumerate() {
            assert_eq!(links.get(i), LinkRef { key: EntryKey(k), id, parent_id, kind, role });
        }
        assert_eq!(links.iter().filter_map(|l| l.id).collect::<Vec<_>>(), ["a", "b", "c", ""]);
    }

    #[test]
    fn many_distinct_types_keep_their_values() {
        let kinds: Vec<String> = (0..100).map(|i| format!("t{}", i % 40)).collect();
        let mut links = Links::default();
        for (i, k) in kinds.iter().enumerate() {
            links.push(LinkRef { key: EntryKey(i as i64), id: None, parent_id: None, kind: Some(k), role: None });
        }
        assert!(links.iter().map(|l| l.kind).eq(kinds.iter().map(|k| Some(k.as_str()))));
    }
}
