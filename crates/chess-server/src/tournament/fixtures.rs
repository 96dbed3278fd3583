//! Rows the tournament modules' unit tests build their arenas from.

use chess_rules::Color;
use chess_store::tournaments::{PauseRecord, TournamentPlayer, TournamentRow, TournamentStatus};
use uuid::Uuid;

/// A started 1+0 arena with streaks and berserk, from `starts_at` to `ends_at`.
pub fn arena(starts_at: i64, ends_at: i64) -> TournamentRow {
    TournamentRow {
        id: "t".to_owned(),
        name: "t".to_owned(),
        created_by: Uuid::nil(),
        club_id: None,
        clock_base_s: 60,
        clock_increment_s: 0,
        starts_at,
        ends_at,
        rated: true,
        berserkable: true,
        streaks: true,
        min_rating: None,
        max_rating: None,
        status: TournamentStatus::Started,
        created_at: 0,
    }
}

/// Player `id` (named `p{id}`), joined at 0 with `rating`, and on the
/// tournament page throughout (seen "at the end of time").
pub fn player(id: u128, rating: i64) -> TournamentPlayer {
    TournamentPlayer {
        player_id: Uuid::from_u128(id),
        username: format!("p{id}"),
        rating,
        joined_at: 0,
        withdrawn: false,
        pauses: PauseRecord::default(),
        seen_at: Some(i64::MAX),
    }
}

/// The stored state of a 1+0 arena game in which `white` and `black`
/// berserked or not.
pub fn state_with_berserk((white, black): (bool, bool)) -> String {
    let spec =
        chess_game::GameSpec::standard(chess_game::TimeControl::real_time(60_000, 0).expect("1+0"))
            .with_berserk(true);
    let mut game = chess_game::Game::new(spec, chess_game::GameSettings::default(), 0);
    for (color, berserked) in [(Color::White, white), (Color::Black, black)] {
        if berserked {
            game.berserk(color, 0).expect("berserk");
        }
    }
    chess_live::stored::state_json(&game)
}
