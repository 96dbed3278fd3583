//! The seam between live games and storage: what the registry, the owners
//! and the writer ask of a database, as the [`GameStore`] trait, and the
//! batch the writer commits. `chess-server`'s `Store` implements it for
//! SQLite and Postgres; nothing here knows which.
//!
//! Every change to a game is a compare-and-set on its `version`: a write
//! whose game moved on meanwhile (another node changed it) lands nothing and
//! is answered [`WriteOutcome::Conflict`], and its owner rereads the game.

use std::sync::Arc;

use chess_game::GameResult;
use futures_util::future::BoxFuture;
use uuid::Uuid;

use crate::clock::UnixMs;
use crate::rows::{GameRow, MoveRow, PlayerRow};

/// What live games need of a database. Implementations answer with a
/// [`StoreError`] whose [`StoreErrorKind`] says what the failure means for
/// the caller (retry later, ask whether it landed, or give up).
pub trait GameStore: Send + Sync + std::fmt::Debug + 'static {
    /// Whether other nodes write the same games (several nodes on one
    /// database): then a held copy may go stale, the writer announces its
    /// changes, and presence is shared. `false` for a store one node owns.
    fn is_shared(&self) -> bool;

    /// The game with this id.
    fn game(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<GameRow>>>;

    /// The stored version of game `id`, to tell whether a held copy is stale.
    fn game_version(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<i64>>>;

    /// The moves of game `id` from ply `from_ply` on, in order.
    fn moves_from(&self, id: Uuid, from_ply: usize) -> BoxFuture<'_, StoreResult<Vec<MoveRow>>>;

    /// The player with this id.
    fn player(&self, id: Uuid) -> BoxFuture<'_, StoreResult<Option<PlayerRow>>>;

    /// Corrects the stored timer deadline of game `id` at `version` (derived
    /// data: the version stays); `false` if the game moved on meanwhile.
    fn set_deadline(
        &self,
        id: Uuid,
        version: i64,
        deadline_at: Option<UnixMs>,
    ) -> BoxFuture<'_, StoreResult<bool>>;

    /// Games in play whose deadline is at or before `now`, earliest first.
    fn due_games(&self, now: UnixMs, limit: i64) -> BoxFuture<'_, StoreResult<Vec<Uuid>>>;

    /// Registers node `id` named `name`, removing earlier runs under the
    /// same name.
    fn register_node<'a>(
        &'a self,
        id: Uuid,
        name: &'a str,
        now: UnixMs,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Node `id` is alive at `now`; the ids of every node seen alive since
    /// `alive_since` (this one included).
    fn heartbeat<'a>(
        &'a self,
        id: Uuid,
        name: &'a str,
        now: UnixMs,
        alive_since: UnixMs,
    ) -> BoxFuture<'a, StoreResult<Vec<Uuid>>>;

    /// Removes node `id` (a clean shutdown).
    fn remove_node(&self, id: Uuid) -> BoxFuture<'_, StoreResult<()>>;

    /// Writes `batch` in one transaction, with the notices `announce` makes
    /// of what it wrote sent on `channel` to the other nodes when, and only
    /// if, it commits (a store that is not shared sends none). Called by the
    /// node's writer, one batch at a time.
    fn write_batch<'a>(
        &'a self,
        batch: &'a Batch,
        channel: &'a str,
        announce: &'a (dyn Fn(&BatchOutcome) -> Vec<String> + Sync),
    ) -> BoxFuture<'a, StoreResult<BatchOutcome>>;

    /// Sends each of `payloads` on `channel` to the other nodes now (outside
    /// any transaction); nothing when the store is not shared.
    fn notify<'a>(
        &'a self,
        channel: &'a str,
        payloads: &'a [String],
    ) -> BoxFuture<'a, StoreResult<()>>;
}

/// A storage result.
pub type StoreResult<T> = Result<T, StoreError>;

/// A storage failure: what it means for the caller, and the database's
/// words for it.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct StoreError {
    kind: StoreErrorKind,
    message: Arc<str>,
}

/// What a [`StoreError`] means for the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreErrorKind {
    /// No connection to the database could be had or kept: nothing was
    /// stored, and trying each part of a batch alone would fail the same way.
    Unreachable,
    /// The connection broke while a write was under way: its commit may
    /// have landed with only the answer lost.
    InDoubt,
    /// The database cannot take writes now (busy, out of disk space,
    /// read-only), or the node's writer cannot take more: nothing was
    /// stored; the same request may succeed later.
    Unavailable,
    /// The database refused this write (a constraint): nothing was stored.
    Refused,
    /// A stored value could not be read back.
    Corrupt,
}

impl StoreErrorKind {
    /// Every kind, for metrics that start each label at zero.
    pub const ALL: [StoreErrorKind; 5] = [
        StoreErrorKind::Unreachable,
        StoreErrorKind::InDoubt,
        StoreErrorKind::Unavailable,
        StoreErrorKind::Refused,
        StoreErrorKind::Corrupt,
    ];

    /// A short stable name (a metric label).
    pub const fn label(self) -> &'static str {
        match self {
            StoreErrorKind::Unreachable => "unreachable",
            StoreErrorKind::InDoubt => "in_doubt",
            StoreErrorKind::Unavailable => "unavailable",
            StoreErrorKind::Refused => "refused",
            StoreErrorKind::Corrupt => "corrupt",
        }
    }
}

impl StoreError {
    /// A failure of `kind`, described by `message`.
    pub fn new(kind: StoreErrorKind, message: impl std::fmt::Display) -> StoreError {
        StoreError {
            kind,
            message: message.to_string().into(),
        }
    }

    /// A stored value that could not be read back.
    pub fn corrupt(message: impl std::fmt::Display) -> StoreError {
        StoreError::new(StoreErrorKind::Corrupt, message)
    }

    /// What the failure means.
    pub fn kind(&self) -> StoreErrorKind {
        self.kind
    }

    /// Whether the failure is the database's state rather than the
    /// request's: nothing was stored (or it is in doubt), and the same
    /// request may succeed once the database is back.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self.kind,
            StoreErrorKind::Unreachable | StoreErrorKind::InDoubt | StoreErrorKind::Unavailable
        )
    }
}

/// One game's change, written as a compare-and-set on `expected_version`.
#[derive(Clone, Debug)]
pub struct GameWrite {
    /// The whole row after the change.
    pub row: GameRow,
    /// The version the row must still have; otherwise nothing of this write lands.
    pub expected_version: i64,
    /// A take-back: moves from this ply on are deleted first.
    pub keep_moves: Option<u32>,
    /// Moves played by the change, in ply order.
    pub new_moves: Vec<MoveRow>,
    /// The change ends the game with this result: the store settles its
    /// reward in the same transaction (exactly once, within the daily cap).
    pub settle: Option<GameResult>,
    /// The change starts a rematch: this new game is stored with it.
    pub rematch: Option<GameRow>,
    /// What other nodes are told of the change if it lands (the JSON of a
    /// [`crate::notice::ChangeNotice`]); `None`: only that it happened.
    pub notice: Option<String>,
}

/// A seat taken in an open challenge, which starts the game: the update
/// touches nothing if the seat was taken first.
#[derive(Clone, Debug)]
pub struct SeatClaim {
    /// The challenge.
    pub game: Uuid,
    /// The white seat (else the black one).
    pub white: bool,
    /// Who sits down.
    pub player: Uuid,
    /// The started game's state.
    pub state: String,
    /// When the game starts.
    pub now: UnixMs,
    /// Its first deadline (first move or clock), if any.
    pub deadline_at: Option<UnixMs>,
    /// The game's version, which the claim leaves as it is: only named in
    /// the change notice to the other nodes.
    pub version: i64,
}

/// Everything one transaction of the group commit writes, in this order:
/// players first, then new games (which point at players), then seats taken
/// and game changes. At most one claim or write per game.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// New players (an existing id is left unchanged).
    pub players: Vec<PlayerRow>,
    /// New games.
    pub games: Vec<GameRow>,
    /// Seats taken in open challenges.
    pub claims: Vec<SeatClaim>,
    /// Changes to games, each a compare-and-set on the version.
    pub writes: Vec<GameWrite>,
}

impl Batch {
    /// A batch of game changes only.
    pub fn of_writes(writes: Vec<GameWrite>) -> Batch {
        Batch {
            writes,
            ..Batch::default()
        }
    }

    /// How many items the batch holds.
    pub fn len(&self) -> usize {
        self.players.len() + self.games.len() + self.claims.len() + self.writes.len()
    }

    /// Whether the batch holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What became of a batch that committed, item by item in the batch's order.
#[derive(Clone, Debug, Default)]
pub struct BatchOutcome {
    /// Per claim: whether it took the seat (else it was taken first).
    pub claimed: Vec<bool>,
    /// Per game change.
    pub writes: Vec<WriteOutcome>,
    /// How many notices the batch sent.
    pub notices_sent: usize,
    /// How the batch was written.
    pub path: BatchPath,
}

/// How a batch was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatchPath {
    /// Statement by statement: the rare batch with a take-back, a rematch,
    /// an ending that may pay a reward, or a game whose version moved on.
    #[default]
    Statements,
    /// In one go, the common case (on Postgres one statement, on SQLite the
    /// writer's own connection in place).
    OneStatement,
}

impl BatchPath {
    /// A short stable name (a metric label).
    pub fn label(self) -> &'static str {
        match self {
            BatchPath::Statements => "statements",
            BatchPath::OneStatement => "one_statement",
        }
    }
}

/// What became of one write of a batch that committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// Stored (and an ending's reward settled with it).
    Written,
    /// The stored version had moved on: nothing of this write was stored.
    Conflict,
}
