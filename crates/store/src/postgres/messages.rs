//! The trace on PostgreSQL: messages with their generated tsvector and optional vector, and
//! archival recall over them.

use std::ops::Range;

use chrono::{DateTime, Utc};
use mnemo_core::archive::Adjacent;
use mnemo_core::common::{SAMPLE, TermSpread};
use mnemo_core::language;
use mnemo_core::{Message, MessageId, Scope};

use super::rows::{get, vector_array_text, vector_text};
use super::{PostgresStore, lexical_sql, terms_cte, text_search_config};
use crate::Messages;
use crate::error::{Result, StoreError};
use crate::messages::{MessageVectors, archive, owner_key, said_ms};
use crate::rows::{Row, decode, ms};
use crate::sql::{Dialect, messages as sql};

impl Messages for PostgresStore {
    fn append_messages(&self, messages: &[Message]) -> Result<Vec<bool>> {
        let Some(first) = messages.first() else { return Ok(Vec::new()) };
        self.write("append messages", first.scope.tenant.as_str(), |tx| {
            let mut bound = first.scope.tenant.as_str();
            let mut out = Vec::with_capacity(messages.len());
            for m in messages {
                let [t, a, u, c] = m.scope.key_parts();
                if t != bound {
                    // A batch spanning tenants: rebind the transaction before each tenant's rows.
                    tx.query("SELECT set_config('mnemo.tenant', $1, true)", &[&t])?;
                    bound = t;
                }
                let lang = text_search_config(language::detect(&m.content));
                let n = tx.execute(
                    "INSERT INTO messages (id, tenant, agent, user_id, chat, role, content, at, lang) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::regconfig) \
                     ON CONFLICT (tenant, user_id, chat, id) DO NOTHING",
                    &[&m.id.as_str(), &t, &a, &u, &c, &m.role.as_str(), &m.content, &ms(m.at), &lang],
                )?;
                out.push(n == 1);
            }
            Ok(out)
        })
    }

    fn embed_messages(&self, owner: &Scope, vectors: &[(MessageId, MessageVectors)]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        let [t, u, c] = owner_key(owner);
        self.write("embed messages", t, |tx| {
            for (id, v) in vectors {
                let e = &v.embedding;
                tx.execute(
                    "UPDATE messages SET model = $3, embedding = $4::text::vector, passages = $7::text::vector[] \
                     WHERE tenant = $1 AND id = $2 AND NOT withheld AND $5 IN ('', user_id) AND $6 IN ('', chat)",
                    &[&t, &id.as_str(), &e.model, &vector_text(&e.vector), &u, &c, &vector_array_text(&v.passages)],
                )?;
            }
            Ok(())
        })
    }

    fn search_messages(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MessageId, f32)>> {
        let Some([t, a, u, c]) = archive(scope).filter(|_| !terms.is_empty()) else { return Ok(Vec::new()) };
        // The user's words come from the covering btree `messages_lexical` (migration 6).
        let rows = "messages m WHERE m.tenant = $1 AND m.agent = $2 AND m.user_id = $3 AND $5 IN ('', m.chat) \
                    AND NOT m.withheld";
        let sql = lexical_sql(rows, 6, terms, 4);
        let limit = limit as i64;
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&t, &a, &u, &limit, &c];
        params.extend(terms.iter().map(|t| t as &(dyn postgres::types::ToSql + Sync)));
        self.read("search messages", t, |tx| {
            tx.query(&sql, &params)?.iter().map(|r| Ok((r.parse(0)?, r.real(1)?))).collect()
        })
    }

    fn term_spread(&self, scope: &Scope, terms: &[String]) -> Result<TermSpread> {
        let Some([t, a, u, c]) = archive(scope) else { return Ok(TermSpread::default()) };
        // The latest messages come from `messages_by_user_at` (migration 15); each term is
        // matched as `search_messages` matches it.
        let query = terms_cte(6, terms);
        let counts: String = (1..=terms.len()).map(|i| format!(", count(*) FILTER (WHERE tsv @@ q.q{i})")).collect();
        let sql = format!(
            "{query} SELECT count(*){counts} FROM q, (SELECT tsv FROM messages \
             WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND $5 IN ('', chat) AND NOT withheld \
             ORDER BY at DESC, id DESC LIMIT $4) latest"
        );
        let sample = SAMPLE as i64;
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&t, &a, &u, &sample, &c];
        params.extend(terms.iter().map(|t| t as &(dyn postgres::types::ToSql + Sync)));
        self.read("term spread", t, |tx| {
            let row = tx.query_one(&sql, &params)?;
            Ok(TermSpread {
                messages: row.count(0)?,
                containing: (1..=terms.len()).map(|i| row.count(i)).collect::<Result<_>>()?,
            })
        })
    }

    fn adjacent_messages(&self, owner: &Scope, ids: &[MessageId], span: usize) -> Result<Vec<Adjacent>> {
        if ids.is_empty() || span == 0 {
            return Ok(Vec::new());
        }
        let sql = sql::adjacent(Dialect::Postgres);
        let [t, u, c] = owner_key(owner);
        self.read("adjacent messages", t, |tx| {
            let mut out = Vec::new();
            for id in ids {
                for row in tx.query(&sql, &[&t, &u, &c, &id.as_str(), &(span as i64)])? {
                    out.push(decode::adjacent(&row, id)?);
                }
            }
            Ok(out)
        })
    }

    fn nearest_messages(
        &self,
        scope: &Scope,
        model: &str,
        query: &[f32],
        limit: usize,
        said: Option<&Range<DateTime<Utc>>>,
    ) -> Result<Vec<(MessageId, f32)>> {
        let Some([t, a, u, c]) = archive(scope).filter(|_| limit > 0) else { return Ok(Vec::new()) };
        let q = vector_text(query);
        let (from, to) = said_ms(said);
        self.read("nearest messages", t, |tx| {
            let dims: Option<i32> = tx
                .query_opt(
                    "SELECT vector_dims(embedding) FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 \
                     AND model = $4 LIMIT 1",
                    &[&t, &a, &u, &model],
                )?
                .map(|r| get(&r, 0))
                .transpose()?;
            match dims {
                None => return Ok(Vec::new()),
                Some(d) if d as usize != query.len() => {
                    return Err(StoreError::Dimension {
                        model: model.to_string(),
                        expected: d as usize,
                        got: query.len(),
                    });
                }
                Some(_) => {}
            }
            // A message is as close as the closest of its vectors: the whole, or a passage.
            tx.query(
                "SELECT id, cosine FROM (SELECT id, greatest(1 - (embedding <=> q.v), \
                 (SELECT max(1 - (p <=> q.v)) FROM unnest(passages) p))::real AS cosine \
                 FROM messages, (SELECT $5::text::vector AS v) q \
                 WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND model = $4 AND $7 IN ('', chat) \
                 AND at >= $8 AND at < $9) s ORDER BY cosine DESC, id LIMIT $6",
                &[&t, &a, &u, &model, &q, &(limit as i64), &c, &from, &to],
            )?
            .iter()
            .map(|r| Ok((r.parse(0)?, r.real(1)?)))
            .collect()
        })
    }

    fn recent_messages(&self, scope: &Scope, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = sql::recent(Dialect::Postgres);
        let mut out = self.read("recent messages", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &(limit as i64)])?.iter().map(decode::message).collect::<Result<Vec<_>>>()
        })?;
        out.reverse();
        Ok(out)
    }

    fn messages(&self, owner: &Scope, ids: &[MessageId]) -> Result<Vec<Message>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = sql::by_ids(Dialect::Postgres, ids.len());
        let ids: Vec<&str> = ids.iter().map(MessageId::as_str).collect();
        let [t, u, c] = owner_key(owner);
        self.read("messages", t, |tx| tx.query(&sql, &[&t, &u, &c, &ids])?.iter().map(decode::message).collect())
    }
}
