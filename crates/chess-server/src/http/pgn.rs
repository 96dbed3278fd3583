//! PGN export of a hosted game, with `[%clk]` comments for timed games.

use chess_live::GameSnapshot;
use chess_rules::Color;
use chess_rules::pgn::{PgnGame, PgnResult};

/// The PGN text of `game`.
pub fn export(game: &GameSnapshot) -> String {
    let mut pgn = PgnGame::new(game.initial_position.clone());
    let name = |color: Color| {
        game.players
            .get(color)
            .as_ref()
            .map_or_else(|| "?".to_owned(), |player| player.name.clone())
    };
    pgn.set_tag("Event", "Casual game");
    pgn.set_tag("Site", format!("/game/{}", game.id));
    pgn.set_tag("Date", utc_date(game.started_at.millis()));
    pgn.set_tag("White", name(Color::White));
    pgn.set_tag("Black", name(Color::Black));
    pgn.set_tag(
        "TimeControl",
        chess_game::pgn::time_control_tag(game.time_control),
    );
    if let Err(ply) = chess_game::pgn::push_moves(&mut pgn, &game.moves) {
        // Stored moves were legal when played; a failure means corruption.
        tracing::error!(game_id = %game.id, ply, "a stored move does not replay");
    }
    match game.situation.result {
        Some(result) => {
            pgn.result = if result.reason == chess_game::EndReason::Aborted.code() {
                PgnResult::Unknown
            } else {
                PgnResult::from_winner(result.winner)
            };
            pgn.set_tag("Termination", result.reason);
        }
        None => pgn.result = PgnResult::Unknown,
    }
    pgn.to_pgn()
}

/// `YYYY.MM.DD` of a Unix millisecond time (UTC), PGN's `[Date]`; `????.??.??`
/// (PGN's unknown date) past the year 9999.
fn utc_date(unix_ms: u64) -> String {
    i64::try_from(unix_ms)
        .ok()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .map_or_else(
            || "????.??.??".to_owned(),
            |instant| instant.strftime("%Y.%m.%d").to_string(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(utc_date(0), "1970.01.01");
        // 2024-02-29T23:59:59Z: a leap day.
        assert_eq!(utc_date(1_709_251_199_000), "2024.02.29");
        assert_eq!(utc_date(1_709_251_200_000), "2024.03.01");
    }
}
