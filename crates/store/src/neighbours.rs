//! The one query behind [`crate::Messages::adjacent_messages`], in each backend's dialect.

/// How a backend spells what the query needs.
pub(crate) struct Dialect {
    /// The column that orders messages inserted at the same instant (`rowid`, `seq`).
    pub order: &'static str,
    /// The predicate on the neighbour `n` that leaves withheld messages out.
    pub visible: &'static str,
    /// Placeholders for the tenant, the hit's id and the span.
    pub params: [&'static str; 3],
}

/// Up to `span` messages before and after one hit in its own chat, never withheld: the
/// message columns `columns` of the neighbours, read through the alias `n`.
pub(crate) fn adjacent_sql(columns: &str, d: &Dialect) -> String {
    let cols = columns.split(", ").map(|c| format!("n.{c}")).collect::<Vec<_>>().join(", ");
    let ([tenant, id, span], order, visible) = (d.params, d.order, d.visible);
    let side = |name: &str, cmp: &str, dir: &str| {
        format!(
            "SELECT * FROM (SELECT {cols} FROM messages h JOIN messages n ON n.tenant = h.tenant \
             AND n.agent = h.agent AND n.user_id = h.user_id AND n.chat = h.chat \
             WHERE h.tenant = {tenant} AND h.id = {id} AND {visible} AND (n.at, n.{order}) {cmp} (h.at, h.{order}) \
             ORDER BY n.at {dir}, n.{order} {dir} LIMIT {span}) AS {name}"
        )
    };
    format!("{} UNION ALL {}", side("before_hit", "<", "DESC"), side("after_hit", ">", "ASC"))
}
