//! Session and entry keys as PostgreSQL values: a session key is the `bigint` it is
//! (`sessions.skey`, `entries.session`), an entry key the `bigint` the statements compute from
//! an entry's session and line number.

use crate::store::keys::{EntryKey, SessionKey};
use postgres::types::{accepts, to_sql_checked, FromSql, IsNull, ToSql, Type};

type BoxError = Box<dyn std::error::Error + Sync + Send>;

impl ToSql for SessionKey {
    fn to_sql(&self, ty: &Type, out: &mut postgres::types::private::BytesMut) -> Result<IsNull, BoxError> {
        self.0.to_sql(ty, out)
    }

    accepts!(INT8);
    to_sql_checked!();
}

impl<'a> FromSql<'a> for SessionKey {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        i64::from_sql(ty, raw).map(SessionKey)
    }

    accepts!(INT8);
}

/// An entry key as PostgreSQL's statements compute and take it: one `bigint`.
impl ToSql for EntryKey {
    fn to_sql(&self, ty: &Type, out: &mut postgres::types::private::BytesMut) -> Result<IsNull, BoxError> {
        self.0.to_sql(ty, out)
    }

    accepts!(INT8);
    to_sql_checked!();
}

impl<'a> FromSql<'a> for EntryKey {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        i64::from_sql(ty, raw).map(EntryKey)
    }

    accepts!(INT8);
}
