//! Session and entry keys as SQLite values: a key is bound and read as the integer it is (the
//! rowid of `sessions` and of `entries`), so statements take and give the typed keys.

use crate::store::keys::{EntryKey, SessionKey};
use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

impl ToSql for SessionKey {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl FromSql for SessionKey {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i64::column_result(value).map(SessionKey)
    }
}

impl ToSql for EntryKey {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl FromSql for EntryKey {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i64::column_result(value).map(EntryKey)
    }
}

/// Entry keys bound as one value, a JSON array of their integers: a statement reads them with
/// `json_each(:keys)`.
pub struct EntryKeyList<'a>(pub &'a [EntryKey]);

impl ToSql for EntryKeyList<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let ints: Vec<i64> = self.0.iter().map(|k| k.0).collect();
        Ok(ToSqlOutput::from(serde_json::Value::from(ints).to_string()))
    }
}

/// Session keys bound as one value, a JSON array of their integers: a statement reads them
/// with `json_each(:sids)` (a folder's sessions, however many).
pub struct SessionKeyList<'a>(pub &'a [SessionKey]);

impl ToSql for SessionKeyList<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let ints: Vec<i64> = self.0.iter().map(|k| k.0).collect();
        Ok(ToSqlOutput::from(serde_json::Value::from(ints).to_string()))
    }
}
