//! The SQLite store: sessions, turns with their chain, persisted (merged) events, and the
//! `orders`/`refunds` tables behind the `support` agent's tools.
//!
//! One connection behind a mutex: every statement is short, and the emulator's load is a
//! developer's, so a pool would add nothing. Deltas are never stored (PROTOCOL.md §5).

use crate::event::Event;
use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::{Mutex, MutexGuard};

/// Position of a persisted `turn.done`: after every content event of its turn.
pub const DONE_POS: i64 = 1 << 40;

/// A stored session.
#[derive(Clone, Debug)]
pub struct SessionRow {
    /// Session id (`<ulid>` or gateway `<ulid>.<zone>`).
    pub id: String,
    /// `trueforge` or `gateway`: which id shapes and listing rules apply.
    pub flavor: String,
    /// The `agent` object as reported by GET (e.g. `{"type":"inline","spec":…}`).
    pub agent: Value,
    /// The scenario that plays this session's turns.
    pub scenario: String,
    /// First user message text, once a turn has one.
    pub title: Option<String>,
    /// Fault spec captured at creation (header or `?fault=`), applied to the session's requests.
    pub fault: Option<String>,
    /// ISO time of creation.
    pub created_at: String,
    /// ISO time of the last turn creation.
    pub updated_at: String,
}

/// Why a turn waits: one entry per pending item of a paused turn.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PendingItem {
    /// `approval` (tool.approval_required), `response` (tool.response_required) or `mcp_auth`.
    pub kind: String,
    /// Owner thread of the call (`main` or a subagent UUID).
    pub thread_id: Option<String>,
    /// The waiting call (absent for `mcp_auth`).
    pub tool_call_id: Option<String>,
    /// Tool name, for the continuation's trigger matching and execution.
    pub tool: Option<String>,
    /// The call's parsed arguments.
    pub arguments: Option<Value>,
    /// How to produce the result when approved (a scenario `result` object).
    pub result: Option<Value>,
}

/// A stored turn.
#[derive(Clone, Debug)]
pub struct TurnRow {
    /// Turn id (`<ulid>.local` or gateway `<ulid>.<zone>.local`).
    pub id: String,
    /// Owning session.
    pub session_id: String,
    /// Parent in the chain; `None` for a root turn.
    pub previous_turn_id: Option<String>,
    /// The request input as sent (absent when the request had none).
    pub input: Option<Value>,
    /// The TurnState (§6).
    pub state: Value,
    /// Pending items when paused.
    pub pending: Vec<PendingItem>,
    /// Scenario variables carried to continuations (e.g. `order_id`).
    pub vars: Map<String, Value>,
    /// ISO creation time.
    pub created_at: String,
    /// 0-based position of the turn in its session.
    pub index: i64,
}

impl TurnRow {
    /// `running`, `done`, `cancelled` or `error`.
    pub fn status(&self) -> &str {
        self.state
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("running")
    }
}

/// The SQLite store. Cheap to share behind an `Arc`.
pub struct Store {
    conn: Mutex<Connection>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
  n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, flavor TEXT NOT NULL,
  agent_json TEXT NOT NULL, scenario TEXT NOT NULL, title TEXT, fault TEXT,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
  n INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL, session_id TEXT NOT NULL,
  previous_turn_id TEXT, input_json TEXT, state_json TEXT NOT NULL, status TEXT NOT NULL,
  pending_json TEXT NOT NULL, vars_json TEXT NOT NULL, created_at TEXT NOT NULL, idx INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns(session_id, n);
CREATE TABLE IF NOT EXISTS events (
  turn_id TEXT NOT NULL, pos INTEGER NOT NULL, event_json TEXT NOT NULL, PRIMARY KEY (turn_id, pos));
CREATE TABLE IF NOT EXISTS orders (
  order_id TEXT PRIMARY KEY, status TEXT NOT NULL, total REAL NOT NULL, currency TEXT NOT NULL,
  customer TEXT NOT NULL, refunded REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS refunds (
  tool_call_id TEXT PRIMARY KEY, refund_id TEXT NOT NULL, order_id TEXT NOT NULL,
  amount REAL NOT NULL, reason TEXT NOT NULL, result_json TEXT NOT NULL);
";

/// Demo orders (id, status, total, currency, customer); non-ASCII names on purpose.
const SEED_ORDERS: &[(&str, &str, f64, &str, &str)] = &[
    ("ORD-2031", "shipped", 1240.0, "EUR", "Zoë Müller"),
    ("ORD-4821", "delivered", 89.9, "EUR", "Łukasz Nowak"),
    ("ORD-1001", "processing", 15.5, "USD", "Ana Sánchez"),
    ("ORD-7777", "delivered", 49.5, "EUR", "渡辺 さくら"),
];

fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

fn parse_json<T: for<'de> Deserialize<'de> + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

impl Store {
    /// Opens (creating when needed) the database at `path` (`:memory:` for tests), creates the
    /// schema and seeds the demo orders once.
    pub fn open(path: &str) -> rusqlite::Result<Self> {
        let conn = if path == ":memory:" {
            Connection::open_in_memory()?
        } else {
            Connection::open(path)?
        };
        conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")?;
        conn.execute_batch(SCHEMA)?;
        for (id, status, total, currency, customer) in SEED_ORDERS {
            conn.execute(
                "INSERT OR IGNORE INTO orders(order_id,status,total,currency,customer) VALUES (?1,?2,?3,?4,?5)",
                params![id, status, total, currency, customer],
            )?;
        }
        // Turns left running by an earlier process stay `running`, as TrueForge leaves them
        // after a crash (the runtime's optional start-up clean-up ends them).
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        match self.conn.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Inserts a new session.
    pub fn insert_session(&self, row: &SessionRow) -> rusqlite::Result<()> {
        self.conn().execute(
            "INSERT INTO sessions(id,flavor,agent_json,scenario,title,fault,created_at,updated_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
            params![row.id, row.flavor, to_json(&row.agent), row.scenario, row.title, row.fault, row.created_at, row.updated_at],
        )?;
        Ok(())
    }

    fn session_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionRow> {
        let agent: String = r.get(2)?;
        Ok(SessionRow {
            id: r.get(0)?,
            flavor: r.get(1)?,
            agent: serde_json::from_str(&agent).unwrap_or(Value::Null),
            scenario: r.get(3)?,
            title: r.get(4)?,
            fault: r.get(5)?,
            created_at: r.get(6)?,
            updated_at: r.get(7)?,
        })
    }

    /// The session with `id`, if any.
    pub fn session(&self, id: &str) -> rusqlite::Result<Option<SessionRow>> {
        self.conn()
            .query_row(
                "SELECT id,flavor,agent_json,scenario,title,fault,created_at,updated_at FROM sessions WHERE id=?1",
                params![id],
                Self::session_from_row,
            )
            .optional()
    }

    /// The session's creation position in this database (1 for the first; 0 when unknown).
    pub fn session_ordinal(&self, id: &str) -> rusqlite::Result<i64> {
        Ok(self
            .conn()
            .query_row("SELECT n FROM sessions WHERE id=?1", params![id], |r| {
                r.get(0)
            })
            .optional()?
            .unwrap_or(0))
    }

    /// Sessions of `flavor`, newest first when `descending`; `offset`/`limit` page them.
    pub fn sessions(
        &self,
        flavor: &str,
        descending: bool,
        offset: usize,
        limit: usize,
    ) -> rusqlite::Result<Vec<SessionRow>> {
        let order = if descending { "DESC" } else { "ASC" };
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT id,flavor,agent_json,scenario,title,fault,created_at,updated_at FROM sessions WHERE flavor=?1 ORDER BY n {order} LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(
            params![flavor, limit as i64, offset as i64],
            Self::session_from_row,
        )?;
        rows.collect()
    }

    /// Records a turn creation on its session: `updated_at`, and the title when still unset.
    pub fn touch_session(&self, id: &str, title: Option<&str>, at: &str) -> rusqlite::Result<()> {
        self.conn().execute(
            "UPDATE sessions SET updated_at=?2, title=COALESCE(title, ?3) WHERE id=?1",
            params![id, at, title],
        )?;
        Ok(())
    }

    /// Inserts a new (running) turn.
    pub fn insert_turn(&self, row: &TurnRow) -> rusqlite::Result<()> {
        self.conn().execute(
            "INSERT INTO turns(id,session_id,previous_turn_id,input_json,state_json,status,pending_json,vars_json,created_at,idx) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)",
            params![
                row.id, row.session_id, row.previous_turn_id,
                row.input.as_ref().map(to_json), to_json(&row.state), row.status(),
                to_json(&row.pending), to_json(&row.vars), row.created_at, row.index
            ],
        )?;
        Ok(())
    }

    const TURN_COLUMNS: &'static str =
        "id,session_id,previous_turn_id,input_json,state_json,pending_json,vars_json,created_at,idx";

    fn turn_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TurnRow> {
        let input: Option<String> = r.get(3)?;
        let state: String = r.get(4)?;
        let pending: String = r.get(5)?;
        let vars: String = r.get(6)?;
        Ok(TurnRow {
            id: r.get(0)?,
            session_id: r.get(1)?,
            previous_turn_id: r.get(2)?,
            input: input.and_then(|t| serde_json::from_str(&t).ok()),
            state: serde_json::from_str(&state).unwrap_or(Value::Null),
            pending: parse_json(&pending),
            vars: parse_json(&vars),
            created_at: r.get(7)?,
            index: r.get(8)?,
        })
    }

    /// The turn `turn_id` of session `session_id`, if any.
    pub fn turn(&self, session_id: &str, turn_id: &str) -> rusqlite::Result<Option<TurnRow>> {
        self.conn()
            .query_row(
                &format!(
                    "SELECT {} FROM turns WHERE id=?1 AND session_id=?2",
                    Self::TURN_COLUMNS
                ),
                params![turn_id, session_id],
                Self::turn_from_row,
            )
            .optional()
    }

    /// The most recently created turn of a session (the `auto` parent and the cancel target).
    pub fn last_turn(&self, session_id: &str) -> rusqlite::Result<Option<TurnRow>> {
        self.conn()
            .query_row(
                &format!(
                    "SELECT {} FROM turns WHERE session_id=?1 ORDER BY n DESC LIMIT 1",
                    Self::TURN_COLUMNS
                ),
                params![session_id],
                Self::turn_from_row,
            )
            .optional()
    }

    /// Number of turns in a session.
    pub fn turn_count(&self, session_id: &str) -> rusqlite::Result<i64> {
        self.conn().query_row(
            "SELECT COUNT(*) FROM turns WHERE session_id=?1",
            params![session_id],
            |r| r.get(0),
        )
    }

    /// Turns of a session, oldest first.
    pub fn turns(
        &self,
        session_id: &str,
        offset: usize,
        limit: usize,
    ) -> rusqlite::Result<Vec<TurnRow>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {} FROM turns WHERE session_id=?1 ORDER BY n ASC LIMIT ?2 OFFSET ?3",
            Self::TURN_COLUMNS
        ))?;
        let rows = stmt.query_map(
            params![session_id, limit as i64, offset as i64],
            Self::turn_from_row,
        )?;
        rows.collect()
    }

    /// Persists a merged event at `pos` — only while the turn is still running, because a
    /// frozen or cancelled turn keeps only its lifecycle events (PROTOCOL.md §9).
    /// Returns whether it was stored.
    pub fn persist_event(&self, turn_id: &str, pos: i64, event: &Event) -> rusqlite::Result<bool> {
        let changed = self.conn().execute(
            "INSERT OR REPLACE INTO events(turn_id,pos,event_json)
             SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM turns WHERE id=?1 AND status='running')",
            params![turn_id, pos, to_json(event)],
        )?;
        Ok(changed == 1)
    }

    /// Writes the first terminal state of a turn with its `turn.done` event (first terminal
    /// state wins, §6). Returns `None` when this call won, or `Some((state, turn.done))` already
    /// stored by the winner.
    pub fn finish_turn(
        &self,
        turn_id: &str,
        state: &Value,
        pending: &[PendingItem],
        done: &Event,
    ) -> rusqlite::Result<Option<(Value, Event)>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let status = state
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("done")
            .to_owned();
        let changed = tx.execute(
            "UPDATE turns SET state_json=?2, status=?3, pending_json=?4 WHERE id=?1 AND status='running'",
            params![turn_id, to_json(state), status, to_json(&pending)],
        )?;
        if changed == 1 {
            tx.execute(
                "INSERT OR REPLACE INTO events(turn_id,pos,event_json) VALUES (?1,?2,?3)",
                params![turn_id, DONE_POS, to_json(done)],
            )?;
            tx.commit()?;
            return Ok(None);
        }
        let stored_state: String = tx.query_row(
            "SELECT state_json FROM turns WHERE id=?1",
            params![turn_id],
            |r| r.get(0),
        )?;
        let stored_done: Option<String> = tx
            .query_row(
                "SELECT event_json FROM events WHERE turn_id=?1 AND pos=?2",
                params![turn_id, DONE_POS],
                |r| r.get(0),
            )
            .optional()?;
        tx.commit()?;
        let state = serde_json::from_str(&stored_state).unwrap_or(Value::Null);
        let done = stored_done
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_else(|| done.clone());
        Ok(Some((state, done)))
    }

    /// Ids of every turn still `running` (for the optional start-up clean-up).
    pub fn running_turn_ids(&self) -> rusqlite::Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt = conn.prepare("SELECT id FROM turns WHERE status='running' ORDER BY n")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect()
    }

    /// Stores the scenario variables of a turn (read by its continuation).
    pub fn set_turn_vars(&self, turn_id: &str, vars: &Map<String, Value>) -> rusqlite::Result<()> {
        self.conn().execute(
            "UPDATE turns SET vars_json=?2 WHERE id=?1",
            params![turn_id, to_json(vars)],
        )?;
        Ok(())
    }

    /// Persisted events of a turn in stream order (or reversed), paged.
    pub fn turn_events(
        &self,
        turn_id: &str,
        descending: bool,
        offset: usize,
        limit: usize,
    ) -> rusqlite::Result<Vec<Value>> {
        let order = if descending { "DESC" } else { "ASC" };
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT event_json FROM events WHERE turn_id=?1 ORDER BY pos {order} LIMIT ?2 OFFSET ?3"
        ))?;
        let rows = stmt.query_map(params![turn_id, limit as i64, offset as i64], |r| {
            r.get::<_, String>(0)
        })?;
        rows.map(|r| r.map(|t| serde_json::from_str(&t).unwrap_or(Value::Null)))
            .collect()
    }

    /// One order as the `get_order` tool reports it, if it exists.
    pub fn order(&self, order_id: &str) -> rusqlite::Result<Option<Value>> {
        self.conn()
            .query_row(
                "SELECT order_id,status,total,currency,customer,refunded FROM orders WHERE order_id=?1",
                params![order_id],
                |r| {
                    let mut map = Map::new();
                    map.insert("order_id".into(), Value::String(r.get(0)?));
                    map.insert("status".into(), Value::String(r.get(1)?));
                    map.insert("total".into(), serde_json::json!(r.get::<_, f64>(2)?));
                    map.insert("currency".into(), Value::String(r.get(3)?));
                    map.insert("customer".into(), Value::String(r.get(4)?));
                    let refunded: f64 = r.get(5)?;
                    if refunded > 0.0 {
                        map.insert("refunded".into(), serde_json::json!(refunded));
                    }
                    Ok(Value::Object(map))
                },
            )
            .optional()
    }

    /// Refunds `amount` on `order_id` once per `tool_call_id`: a second call with the same id
    /// returns the first result and moves no money (a replayed continuation cannot refund
    /// twice). Errors (unknown order, amount above what is left) come back as
    /// `{"error": …}` results, the way a tool reports them, and are not recorded.
    pub fn process_refund(
        &self,
        tool_call_id: &str,
        order_id: &str,
        amount: f64,
        reason: &str,
    ) -> rusqlite::Result<Value> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let earlier: Option<String> = tx
            .query_row(
                "SELECT result_json FROM refunds WHERE tool_call_id=?1",
                params![tool_call_id],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(result) = earlier {
            return Ok(serde_json::from_str(&result).unwrap_or(Value::Null));
        }
        let order: Option<(f64, f64)> = tx
            .query_row(
                "SELECT total, refunded FROM orders WHERE order_id=?1",
                params![order_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((total, refunded)) = order else {
            return Ok(serde_json::json!({"error": format!("Order not found: {order_id}")}));
        };
        // NaN and non-positive amounts are refused too.
        if amount.is_nan() || amount <= 0.0 || amount > total - refunded + 1e-9 {
            return Ok(serde_json::json!({
                "error": format!("Refund of {amount} exceeds the refundable amount {} on {order_id}", total - refunded)
            }));
        }
        let count: i64 = tx.query_row("SELECT COUNT(*) FROM refunds", [], |r| r.get(0))?;
        let refund_id = format!("RF-{:04}", count + 1);
        let mut result = Map::new();
        result.insert("order_id".into(), Value::String(order_id.into()));
        result.insert("refunded".into(), serde_json::json!(amount));
        result.insert("reason".into(), Value::String(reason.into()));
        result.insert("refund_id".into(), Value::String(refund_id.clone()));
        result.insert("status".into(), Value::String("processed".into()));
        let result = Value::Object(result);
        tx.execute(
            "UPDATE orders SET refunded = refunded + ?2 WHERE order_id=?1",
            params![order_id, amount],
        )?;
        tx.execute(
            "INSERT INTO refunds(tool_call_id,refund_id,order_id,amount,reason,result_json) VALUES (?1,?2,?3,?4,?5,?6)",
            params![tool_call_id, refund_id, order_id, amount, reason, to_json(&result)],
        )?;
        tx.commit()?;
        Ok(result)
    }

    /// Total refunded on an order (for tests and the demo).
    pub fn refunded(&self, order_id: &str) -> rusqlite::Result<Option<f64>> {
        self.conn()
            .query_row(
                "SELECT refunded FROM orders WHERE order_id=?1",
                params![order_id],
                |r| r.get(0),
            )
            .optional()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refund_is_idempotent_per_tool_call() {
        let store = Store::open(":memory:").unwrap();
        let first = store
            .process_refund("call_1", "ORD-2031", 49.5, "broken")
            .unwrap();
        let again = store
            .process_refund("call_1", "ORD-2031", 49.5, "broken")
            .unwrap();
        assert_eq!(first, again);
        assert_eq!(store.refunded("ORD-2031").unwrap(), Some(49.5));
        let other = store
            .process_refund("call_2", "ORD-2031", 10.0, "x")
            .unwrap();
        assert_eq!(other["refund_id"], "RF-0002");
        assert_eq!(store.refunded("ORD-2031").unwrap(), Some(59.5));
    }

    #[test]
    fn refund_errors_are_tool_results() {
        let store = Store::open(":memory:").unwrap();
        let missing = store.process_refund("c", "ORD-0", 1.0, "x").unwrap();
        assert!(missing["error"].as_str().unwrap().contains("not found"));
        let too_much = store.process_refund("d", "ORD-1001", 99.0, "x").unwrap();
        assert!(too_much["error"].as_str().unwrap().contains("exceeds"));
        assert_eq!(store.refunded("ORD-1001").unwrap(), Some(0.0));
    }
}
