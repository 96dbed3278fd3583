//! The reward ledger: $1 for a decisive win between two different accounts,
//! at most $5 per account per UTC day, each game paid at most once.
//!
//! The rules a finance reader can check are in `docs/rewards.md`. In code:
//!
//! - [`reward_winner`] decides whether a finished game pays and whom (pure).
//! - `Transaction::record_win` and `Transaction::settle_reward` (in
//!   `store::ledger`) write the entry inside the transaction that also
//!   stores the game's result, so the result and the payment commit together
//!   or not at all.
//! - The guarantees come from the database, not from memory: the game id is
//!   unique in `reward_entries` (exactly once), the per-account-per-day
//!   counter in `reward_days` only grows through
//!   `update … set total_cents = total_cents + 100 where … and total_cents + 100 <= 500`
//!   (the cap, under any concurrency, on any number of nodes), and triggers
//!   refuse every update or delete of an entry (append-only).
//! - Amounts are integer cents; the day is the UTC day of the time passed
//!   in, so tests inject the clock.

mod day;
mod entries;

use chess_game::{EndReason, GameResult};
use chess_rules::{ByColor, Color};
use uuid::Uuid;

pub use day::{BadDay, UtcDay};
pub use entries::REWARD_CURRENCY;

/// What one qualifying win pays: $1.
pub const REWARD_CENTS: i64 = 100;
/// The most one account is paid per UTC day: $5.
pub const DAILY_CAP_CENTS: i64 = 500;

/// Who held a seat of a finished game, as far as rewards care (unlike
/// `model::Seat`, which says which seats a connection may act for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeatHolder {
    /// A guest identity: never paid, never pays out.
    Guest,
    /// A signed-in account, by player id.
    Account(Uuid),
    /// The computer.
    Computer,
}

/// The account a finished game pays, if any: the winner of a checkmate,
/// resignation or timeout between two different accounts. Draws (including
/// a timeout against bare material), aborts, games with a guest or the
/// computer, and games of one account against itself pay nothing.
pub fn reward_winner(result: &GameResult, seats: ByColor<SeatHolder>) -> Option<Uuid> {
    let winner = rewarded_color(result)?;
    match (*seats.get(winner), *seats.get(winner.other())) {
        (SeatHolder::Account(paid), SeatHolder::Account(opponent)) if paid != opponent => {
            Some(paid)
        }
        _ => None,
    }
}

/// The colour a finished game pays if two different accounts held its
/// seats: the winner of a checkmate, resignation or timeout. Any other
/// ending pays nothing whoever played it (`store::batch` writes those
/// without asking the ledger).
pub fn rewarded_color(result: &GameResult) -> Option<Color> {
    let decisive = matches!(
        result.reason,
        EndReason::Checkmate | EndReason::Resignation | EndReason::Timeout
    );
    result.winner.filter(|_| decisive)
}

/// Whether an entry paid or hit the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryStatus {
    /// [`REWARD_CENTS`] paid.
    Credited,
    /// The account had reached [`DAILY_CAP_CENTS`] that day: $0.
    OverCap,
}

impl EntryStatus {
    /// The stored code: `credited` or `over_cap`.
    pub fn code(self) -> &'static str {
        match self {
            EntryStatus::Credited => "credited",
            EntryStatus::OverCap => "over_cap",
        }
    }

    /// The status stored as `code`, if it is one.
    pub fn from_code(code: &str) -> Option<EntryStatus> {
        match code {
            "credited" => Some(EntryStatus::Credited),
            "over_cap" => Some(EntryStatus::OverCap),
            _ => None,
        }
    }
}

/// One ledger row: a win and what it paid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerEntry {
    /// The game won.
    pub game_id: Uuid,
    /// The account paid (or not, over the cap).
    pub account_id: Uuid,
    /// [`REWARD_CENTS`] when credited, 0 over the cap.
    pub amount_cents: i64,
    /// The UTC day the win counts towards.
    pub day: UtcDay,
    /// Credited or over the cap.
    pub status: EntryStatus,
    /// Unix ms when the entry was written.
    pub created_at_ms: i64,
}

/// What recording a win did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A new entry was written.
    New(LedgerEntry),
    /// The game already had an entry (a second application of the same
    /// ending): nothing was written, here is the first one.
    AlreadyRecorded(LedgerEntry),
}

impl Recorded {
    /// The entry, new or earlier.
    pub fn entry(&self) -> &LedgerEntry {
        match self {
            Recorded::New(entry) | Recorded::AlreadyRecorded(entry) => entry,
        }
    }
}

/// An account's standing for one day.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DailyTotal {
    /// The day.
    pub day: UtcDay,
    /// Credited so far that day.
    pub total_cents: i64,
    /// [`DAILY_CAP_CENTS`].
    pub cap_cents: i64,
}

#[cfg(test)]
mod tests {
    use chess_rules::Color;

    use super::*;

    fn result(winner: Option<Color>, reason: EndReason) -> GameResult {
        GameResult { winner, reason }
    }

    #[test]
    fn only_decisive_wins_between_two_different_accounts_pay() {
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let accounts = ByColor {
            white: SeatHolder::Account(a),
            black: SeatHolder::Account(b),
        };
        let white_wins = |reason| result(Some(Color::White), reason);
        let black_wins = |reason| result(Some(Color::Black), reason);
        let draw = |reason| result(None, reason);

        for reason in [
            EndReason::Checkmate,
            EndReason::Resignation,
            EndReason::Timeout,
        ] {
            assert_eq!(
                reward_winner(&white_wins(reason), accounts),
                Some(a),
                "{reason:?}"
            );
            assert_eq!(
                reward_winner(&black_wins(reason), accounts),
                Some(b),
                "{reason:?}"
            );
        }
        for reason in [
            EndReason::TimeoutVsInsufficientMaterial,
            EndReason::Stalemate,
            EndReason::ThreefoldRepetition,
            EndReason::FiftyMoves,
            EndReason::InsufficientMaterial,
            EndReason::Agreement,
            EndReason::Aborted,
        ] {
            assert_eq!(reward_winner(&draw(reason), accounts), None, "{reason:?}");
        }

        let mate = white_wins(EndReason::Checkmate);
        let unpaid_seatings = [
            (SeatHolder::Account(a), SeatHolder::Guest),
            (SeatHolder::Guest, SeatHolder::Account(b)),
            (SeatHolder::Guest, SeatHolder::Guest),
            (SeatHolder::Account(a), SeatHolder::Computer),
            (SeatHolder::Computer, SeatHolder::Account(b)),
            (SeatHolder::Account(a), SeatHolder::Account(a)),
        ];
        for (white, black) in unpaid_seatings {
            assert_eq!(
                reward_winner(&mate, ByColor { white, black }),
                None,
                "{white:?} v {black:?}"
            );
        }
    }

    #[test]
    fn a_winner_with_an_inconsistent_reason_pays_nothing() {
        // Only the decisive reasons pay, even if a winner were set with another.
        let accounts = ByColor {
            white: SeatHolder::Account(Uuid::new_v4()),
            black: SeatHolder::Account(Uuid::new_v4()),
        };
        let odd = result(Some(Color::White), EndReason::Agreement);
        assert_eq!(reward_winner(&odd, accounts), None);
    }

    #[test]
    fn status_codes_round_trip() {
        for status in [EntryStatus::Credited, EntryStatus::OverCap] {
            assert_eq!(EntryStatus::from_code(status.code()), Some(status));
        }
        assert_eq!(EntryStatus::from_code("paid"), None);
    }
}
