//! Rows as the store reads them: the live games' rows (`chess_live::rows`)
//! parsed from their columns, and the lobby's seeks. Enumerations are kept
//! as their stored strings' typed forms; JSON columns stay strings (the
//! live games own their shapes).

use chess_live::{GameRow, MoveRow, PlayerRow, UnixMs};
use chess_rules::ByColor;
use uuid::Uuid;

use crate::StoreError;

/// An open seek in the lobby.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeekRow {
    pub id: Uuid,
    pub player_id: Uuid,
    /// JSON of the time control.
    pub time_control: String,
    /// Canonical form of the time control; equal keys match.
    pub time_control_key: String,
    /// The creator's colour choice: `white`, `black` or `random`.
    pub color: String,
    pub created_at: UnixMs,
    /// Rated (only between accounts) or casual.
    pub rated: bool,
    /// The opponents' ratings it pairs with, both ends included; `None`: any.
    pub rating_range: Option<(i64, i64)>,
}

/// A game row's columns as the database returns them, before parsing.
#[derive(Debug)]
pub(super) struct GameColumns {
    pub id: String,
    pub mode: String,
    pub white_id: Option<String>,
    pub black_id: Option<String>,
    pub computer_level: Option<i64>,
    pub time_control: String,
    pub status: String,
    pub result: Option<String>,
    pub state: String,
    pub version: i64,
    pub rematch_of: Option<String>,
    pub rematch_id: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub deadline_at: Option<i64>,
    pub recent_events: String,
    pub premove_nodes: Option<String>,
}

pub(super) fn uuid(text: &str) -> Result<Uuid, StoreError> {
    Uuid::parse_str(text).map_err(|_| StoreError::Corrupt(format!("not a uuid: {text:?}")))
}

fn optional_uuid(text: Option<String>) -> Result<Option<Uuid>, StoreError> {
    text.as_deref().map(uuid).transpose()
}

/// A player from its columns.
pub(super) fn player_row(
    (id, kind, name, created_at, bot): (String, String, String, i64, bool),
) -> Result<PlayerRow, StoreError> {
    Ok(PlayerRow {
        id: uuid(&id)?,
        kind: kind
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("player kind {kind:?}")))?,
        name,
        created_at: UnixMs::from_stored(created_at),
        bot,
    })
}

/// A game from its columns.
pub(super) fn game_row(columns: GameColumns) -> Result<GameRow, StoreError> {
    let GameColumns {
        id,
        mode,
        white_id,
        black_id,
        computer_level,
        time_control,
        status,
        result,
        state,
        version,
        rematch_of,
        rematch_id,
        created_at,
        updated_at,
        deadline_at,
        recent_events,
        premove_nodes,
    } = columns;
    let premove_nodes = match premove_nodes {
        Some(json) => serde_json::from_str(&json)
            .map_err(|e| StoreError::Corrupt(format!("premove nodes {json:?}: {e}")))?,
        None => ByColor::default(),
    };
    Ok(GameRow {
        id: uuid(&id)?,
        mode: mode
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("game mode {mode:?}")))?,
        white_id: optional_uuid(white_id)?,
        black_id: optional_uuid(black_id)?,
        computer_level,
        time_control,
        status: status
            .parse()
            .map_err(|_| StoreError::Corrupt(format!("game status {status:?}")))?,
        result,
        state,
        version,
        rematch_of: optional_uuid(rematch_of)?,
        rematch_id: optional_uuid(rematch_id)?,
        created_at: UnixMs::from_stored(created_at),
        updated_at: UnixMs::from_stored(updated_at),
        deadline_at: deadline_at.map(UnixMs::from_stored),
        recent_events,
        premove_nodes,
    })
}

/// A move from its columns.
pub(super) fn move_row(
    (ply, uci, san, clock_ms, played_at, record): (i64, String, String, Option<i64>, i64, String),
) -> Result<MoveRow, StoreError> {
    Ok(MoveRow {
        ply,
        uci,
        san,
        clock_ms,
        played_at: UnixMs::from_stored(played_at),
        record,
    })
}

/// A `seeks` row as selected by `Store::seeks`: id, player, time control and
/// its key, colour, created, rated, rating range.
pub(super) type SeekTuple = (
    String,
    String,
    String,
    String,
    String,
    i64,
    bool,
    Option<i64>,
    Option<i64>,
);

impl SeekRow {
    pub(super) fn from_tuple(
        (id, player_id, time_control, time_control_key, color, created_at, rated, min, max): SeekTuple,
    ) -> Result<SeekRow, StoreError> {
        Ok(SeekRow {
            id: uuid(&id)?,
            player_id: uuid(&player_id)?,
            time_control,
            time_control_key,
            color,
            created_at: UnixMs::from_stored(created_at),
            rated,
            rating_range: min.zip(max),
        })
    }
}
