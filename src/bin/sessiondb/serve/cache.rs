//! Answers worth keeping between requests while the database does not change: the session
//! list (10,000 rows read and sorted), usage totals (a pass over every usage row) and session
//! outlines (every id of a session). Shared by the workers; emptied when the database file or
//! its WAL changes size or time (any commit changes the WAL). A PostgreSQL server has no
//! file to watch: nothing is kept.

use sessiondb::discovery::SessionInfo;
use sessiondb::outline::Outline;
use sessiondb::usage_stats::Totals;
use sessiondb::{EntryKey, SessionKey};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Outlines kept at most (each holds at most 400 nodes).
const OUTLINES: usize = 64;

/// Usage answers kept at most.
const TOTALS: usize = 256;

type Stamp = Vec<Option<(u64, SystemTime)>>;

/// A session of the list, with the origin it was pushed from on a PostgreSQL server (`""` for
/// the server's own; `None` on SQLite, which has no origins).
pub struct Listed {
    pub info: SessionInfo,
    pub origin: Option<String>,
}

#[derive(Default)]
struct Kept {
    stamp: Stamp,
    list: Option<Arc<Vec<Listed>>>,
    totals: HashMap<String, Arc<Vec<Totals>>>,
    outlines: HashMap<(SessionKey, Option<EntryKey>), Arc<Outline>>,
}

pub struct Cache {
    files: Option<[PathBuf; 2]>,
    kept: Mutex<Kept>,
}

impl Cache {
    /// A cache for the SQLite database at `db` (`None`: PostgreSQL, nothing kept).
    pub fn new(db: Option<&Path>) -> Cache {
        let files = db.map(|p| [p.to_path_buf(), sessiondb::db::beside(p, "-wal")]);
        Cache { files, kept: Mutex::new(Kept::default()) }
    }

    fn stamp(&self) -> Option<Stamp> {
        let files = self.files.as_ref()?;
        Some(
            files.iter().map(|f| std::fs::metadata(f).ok().and_then(|m| Some((m.len(), m.modified().ok()?)))).collect(),
        )
    }

    /// The kept state, emptied first if the database changed; `None` when nothing is kept.
    fn kept(&self) -> Option<std::sync::MutexGuard<'_, Kept>> {
        let stamp = self.stamp()?;
        let mut k = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if k.stamp != stamp {
            *k = Kept { stamp, ..Kept::default() };
        }
        Some(k)
    }

    pub fn list(&self, make: impl FnOnce() -> anyhow::Result<Vec<Listed>>) -> anyhow::Result<Arc<Vec<Listed>>> {
        if let Some(l) = self.kept().and_then(|k| k.list.clone()) {
            return Ok(l);
        }
        let l = Arc::new(make()?);
        if let Some(mut k) = self.kept() {
            k.list = Some(l.clone());
        }
        Ok(l)
    }

    pub fn totals(
        &self,
        key: String,
        make: impl FnOnce() -> anyhow::Result<Vec<Totals>>,
    ) -> anyhow::Result<Arc<Vec<Totals>>> {
        if let Some(t) = self.kept().and_then(|k| k.totals.get(&key).cloned()) {
            return Ok(t);
        }
        let t = Arc::new(make()?);
        if let Some(mut k) = self.kept() {
            if k.totals.len() >= TOTALS {
                k.totals.clear();
            }
            k.totals.insert(key, t.clone());
        }
        Ok(t)
    }

    /// The outline, if it is kept.
    pub fn kept_outline(&self, key: (SessionKey, Option<EntryKey>)) -> Option<Arc<Outline>> {
        self.kept().and_then(|k| k.outlines.get(&key).cloned())
    }

    pub fn outline(
        &self,
        key: (SessionKey, Option<EntryKey>),
        make: impl FnOnce() -> anyhow::Result<Outline>,
    ) -> anyhow::Result<Arc<Outline>> {
        if let Some(o) = self.kept().and_then(|k| k.outlines.get(&key).cloned()) {
            return Ok(o);
        }
        let o = Arc::new(make()?);
        if let Some(mut k) = self.kept() {
            if k.outlines.len() >= OUTLINES {
                k.outlines.clear();
            }
            k.outlines.insert(key, o.clone());
        }
        Ok(o)
    }
}
