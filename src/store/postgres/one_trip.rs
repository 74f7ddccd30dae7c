//! Statements run in one round trip. A statement given as text is otherwise prepared first
//! (a round trip for the server to tell the parameters' types) and then run (another): a
//! per-turn sync runs some thirty statements on a fresh connection, and the round trips were
//! most of its time. Here the types come from the Rust values (each value accepts one
//! PostgreSQL type first: `i64` BIGINT, `String` TEXT, `Vec<i64>` BIGINT[] ...), sent with the
//! statement, as `Client::query_typed` allows.

use crate::store::postgres::PgParams;
use postgres::types::{ToSql, Type};
use postgres::{Error, GenericClient, Row};

/// The types a parameter may be sent as, in the order tried: the first its value accepts.
const CANDIDATES: &[Type] = &[
    Type::INT8,
    Type::TEXT,
    Type::INT4,
    Type::BOOL,
    Type::FLOAT8,
    Type::BYTEA,
    Type::INT2,
    Type::INT8_ARRAY,
    Type::TEXT_ARRAY,
    Type::INT4_ARRAY,
    Type::BOOL_ARRAY,
    Type::FLOAT8_ARRAY,
    Type::BYTEA_ARRAY,
];

/// Typed parameters as `query_typed` takes them.
pub(crate) type Typed<'a> = Vec<(&'a (dyn ToSql + Sync), Type)>;

/// `params` with their types; `None` when a value accepts none of [`CANDIDATES`] (the
/// statement is then prepared as before).
pub(crate) fn typed<'a>(params: PgParams<'a>) -> Option<Typed<'a>> {
    let mut scratch = bytes::BytesMut::new();
    params
        .iter()
        .map(|&p| {
            CANDIDATES
                .iter()
                .find(|ty| {
                    scratch.clear();
                    // Refuses a type the value does not accept before encoding anything.
                    p.to_sql_checked(ty, &mut scratch).is_ok()
                })
                .map(|ty| (p, ty.clone()))
        })
        .collect()
}

/// One-round-trip forms of a client's (or a transaction's) statements.
pub(crate) trait OneTrip {
    fn query_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<Vec<Row>, Error>;
    fn query_one_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<Row, Error>;
    fn query_opt_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<Option<Row>, Error>;
    fn execute_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<u64, Error>;
}

impl<C: GenericClient> OneTrip for C {
    fn query_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<Vec<Row>, Error> {
        match typed(params) {
            Some(t) => self.query_typed(sql, &t),
            None => self.query(sql, params),
        }
    }

    fn query_one_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<Row, Error> {
        match typed(params) {
            Some(t) => self.query_typed_one(sql, &t),
            None => self.query_one(sql, params),
        }
    }

    fn query_opt_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<Option<Row>, Error> {
        match typed(params) {
            Some(t) => self.query_typed_opt(sql, &t),
            None => self.query_opt(sql, params),
        }
    }

    fn execute_1(&mut self, sql: &str, params: PgParams<'_>) -> Result<u64, Error> {
        match typed(params) {
            Some(t) => self.execute_typed(sql, &t),
            None => self.execute(sql, params),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_value_is_sent_as_the_type_it_accepts_first() {
        let (a, b, c, d, e): (i64, String, Vec<i64>, Option<String>, Vec<String>) =
            (1, "x".into(), vec![1], None, vec!["y".into()]);
        let (f, g): (i32, bool) = (2, true);
        let params: PgParams<'_> = &[&a, &b, &c, &d, &e, &f, &g, &"z"];
        let types: Vec<Type> = typed(params).unwrap().into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            types,
            [
                Type::INT8,
                Type::TEXT,
                Type::INT8_ARRAY,
                Type::TEXT,
                Type::TEXT_ARRAY,
                Type::INT4,
                Type::BOOL,
                Type::TEXT
            ]
        );
    }

    #[test]
    fn a_value_of_another_type_is_prepared_as_before() {
        let when = std::time::SystemTime::UNIX_EPOCH;
        let params: PgParams<'_> = &[&1i64, &when];
        assert!(typed(params).is_none());
    }
}
