//! The lichess JSON shapes: players, time controls, `gameFull`, `gameState`
//! and the `game` object of `gameStart`/`gameFinish`, and the mapping of this
//! server's endings to lichess's status names (`docs/lichess-api.md`).

use chess_game::TimeControl;
use chess_live::view::{PublicSituation, ResultView};
use chess_live::{GameSnapshot, GameStage, PlayerKind, PlayerRow, UnixMs};
use chess_rules::ByColor;
use chess_rules::Color;
use serde_json::{Value, json};
use uuid::Uuid;

/// The rating of a player who has none in a game's speed (a guest, the
/// computer, an account's first game): Glicko-2's start.
pub const RATING: i64 = 1500;
/// What lichess sends as a clock for games without one (2^31 - 1 ms).
const NO_CLOCK_MS: u64 = 2_147_483_647;

/// Lichess's status name and number of a game: from the server's status
/// while it is open or playing, from its ending once it is over.
///
/// | ending here | lichess |
/// |---|---|
/// | checkmate | `mate` |
/// | resignation | `resign` |
/// | timeout (and timeout against bare material, a draw) | `outoftime` |
/// | stalemate | `stalemate` |
/// | threefold repetition, fifty moves, insufficient material, agreement | `draw` |
/// | aborted (by a player, or a first move not made in time) | `aborted` |
/// | no start (a tournament game's first move not made in time) | `noStart` |
pub fn status(status: GameStage, result: Option<&ResultView>) -> (&'static str, u32) {
    match (status, result) {
        (_, Some(result)) => match result.reason {
            "checkmate" => ("mate", 30),
            "resignation" => ("resign", 31),
            "stalemate" => ("stalemate", 32),
            "timeout" | "timeout_vs_insufficient_material" => ("outoftime", 35),
            "aborted" => ("aborted", 25),
            "no_start" => ("noStart", 37),
            // threefold_repetition, fifty_moves, insufficient_material, agreement
            _ => ("draw", 34),
        },
        (GameStage::Open, None) => ("created", 10),
        (GameStage::Playing | GameStage::Finished, None) => ("started", 20),
    }
}

/// Lichess's colour name.
pub const fn color_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// Lichess's speed category of a time control (from its estimated duration,
/// the initial time plus forty increments).
pub fn speed(tc: TimeControl) -> &'static str {
    let (Some(initial), Some(increment)) = (tc.initial_ms(), tc.increment_ms()) else {
        return "correspondence";
    };
    let estimate_s = (initial + 40 * increment) / 1000;
    match estimate_s {
        0..30 => "ultraBullet",
        30..180 => "bullet",
        180..480 => "blitz",
        480..1500 => "rapid",
        _ => "classical",
    }
}

/// The `timeControl` object of a challenge.
pub fn time_control(tc: TimeControl) -> Value {
    match (tc.initial_ms(), tc.increment_ms()) {
        (Some(initial), Some(increment)) => {
            let minutes = initial as f64 / 60_000.0;
            json!({
                "type": "clock",
                "limit": initial / 1000,
                "increment": increment / 1000,
                "show": format!("{minutes}+{}", increment / 1000),
            })
        }
        _ => json!({ "type": "unlimited" }),
    }
}

/// The `variant` object (only standard chess is played here).
pub fn variant() -> Value {
    json!({ "key": "standard", "name": "Standard", "short": "Std" })
}

/// A player as lichess names them: the lowercase name is the id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiPlayer {
    pub player_id: Uuid,
    pub name: String,
    pub kind: PlayerKind,
    pub bot: bool,
    pub computer_level: Option<u8>,
    created_at: UnixMs,
    /// The rating shown, in the speed of the game or challenge at hand.
    pub rating: i64,
    pub provisional: bool,
}

impl ApiPlayer {
    /// Both `players` (a game's or a challenge's seats) with their accounts'
    /// ratings in `perf` as of now, read in one statement; anyone else keeps
    /// the provisional 1500.
    ///
    /// # Errors
    /// The database error.
    pub async fn rated_pair(
        mut players: [Option<ApiPlayer>; 2],
        store: &chess_store::Store,
        perf: chess_store::ratings::Perf,
    ) -> Result<[Option<ApiPlayer>; 2], chess_store::StoreError> {
        let account = |player: &Option<ApiPlayer>| {
            player
                .as_ref()
                .filter(|player| player.kind == PlayerKind::Account)
                .map(|player| player.player_id)
        };
        let accounts = [account(&players[0]), account(&players[1])];
        // With one account, it is read for both seats and used for its own.
        let (Some(first), Some(second)) =
            (accounts[0].or(accounts[1]), accounts[1].or(accounts[0]))
        else {
            return Ok(players);
        };
        let ratings = store.ratings_of_pair([first, second], perf).await?;
        let now = chess_live::now_ms().to_stored();
        for ((player, account), rating) in players.iter_mut().zip(accounts).zip(ratings) {
            if let (Some(player), Some(_)) = (player.as_mut(), account) {
                let rating = rating.as_of(now);
                player.rating = chess_store::shown(rating.rating);
                player.provisional = rating.is_provisional();
            }
        }
        Ok(players)
    }

    /// The player of `row` (the computer at `computer_level`), with the
    /// provisional 1500 until [`ApiPlayer::rated_pair`].
    pub fn new(row: &PlayerRow, computer_level: Option<u8>) -> ApiPlayer {
        ApiPlayer {
            player_id: row.id,
            name: row.name.clone(),
            kind: row.kind,
            bot: row.bot,
            computer_level,
            created_at: row.created_at,
            rating: RATING,
            provisional: true,
        }
    }

    /// The stored player this is.
    pub fn row(&self) -> PlayerRow {
        PlayerRow {
            id: self.player_id,
            kind: self.kind,
            name: self.name.clone(),
            created_at: self.created_at,
            bot: self.bot,
        }
    }

    pub fn id(&self) -> String {
        self.name.to_lowercase()
    }

    fn title(&self) -> Value {
        if self.bot { json!("BOT") } else { Value::Null }
    }

    /// The player of `gameFull`.
    pub fn game_json(&self) -> Value {
        if self.kind == PlayerKind::Computer {
            return json!({ "aiLevel": self.computer_level.unwrap_or(1) });
        }
        json!({
            "id": self.id(),
            "name": self.name,
            "title": self.title(),
            "rating": self.rating,
            "provisional": self.provisional,
        })
    }

    /// The player of a challenge.
    pub fn challenge_json(&self) -> Value {
        json!({
            "id": self.id(),
            "name": self.name,
            "title": self.title(),
            "rating": self.rating,
            "provisional": self.provisional,
            "online": true,
        })
    }

    /// The opponent in `gameStart`/`gameFinish`.
    pub fn opponent_json(&self) -> Value {
        if self.kind == PlayerKind::Computer {
            return json!({ "id": Value::Null, "username": self.name, "ai": self.computer_level });
        }
        json!({ "id": self.id(), "username": self.name, "rating": self.rating })
    }
}

/// A `gameState` line: the moves so far (UCI, space-separated) and the
/// situation after the latest change.
pub fn game_state(moves: &[String], situation: &PublicSituation, tc: TimeControl) -> Value {
    let (wtime, btime) = situation
        .clocks
        .map_or((NO_CLOCK_MS, NO_CLOCK_MS), |clocks| {
            (clocks.white_ms, clocks.black_ms)
        });
    let increment = tc.increment_ms().unwrap_or(0);
    let (status, _) = status(situation.status, situation.result.as_ref());
    let mut state = json!({
        "type": "gameState",
        "moves": moves.join(" "),
        "wtime": wtime,
        "btime": btime,
        "winc": increment,
        "binc": increment,
        "status": status,
        "wdraw": situation.offers.draw == Some(Color::White),
        "bdraw": situation.offers.draw == Some(Color::Black),
        "wtakeback": false,
        "btakeback": false,
    });
    if let Some(winner) = situation.result.as_ref().and_then(|result| result.winner) {
        state["winner"] = json!(color_name(winner));
    }
    state
}

/// The moves of `game` in UCI.
pub fn uci_moves(game: &GameSnapshot) -> Vec<String> {
    game.moves.iter().map(|mv| mv.uci.clone()).collect()
}

/// The game stream's `opponentGone` line: the opponent has had no socket
/// or stream open for a while (`gone`), or is back. Without
/// `claimWinInSeconds`: this server has no claiming of a win.
pub fn opponent_gone(gone: bool) -> Value {
    json!({ "type": "opponentGone", "gone": gone })
}

/// The `gameFull` line that opens a game stream.
pub fn game_full(game: &GameSnapshot, players: &ByColor<Option<ApiPlayer>>) -> Value {
    let tc = game.time_control;
    let clock = match (tc.initial_ms(), tc.increment_ms()) {
        (Some(initial), Some(increment)) => json!({ "initial": initial, "increment": increment }),
        _ => Value::Null,
    };
    let player = |color: Color| {
        players
            .get(color)
            .as_ref()
            .map_or(Value::Null, ApiPlayer::game_json)
    };
    let start = chess_rules::Position::startpos().fen();
    let initial_fen = game.initial_position.fen();
    let moves = uci_moves(game);
    let mut full = json!({
        "type": "gameFull",
        "id": game.id,
        "rated": game.rated,
        "variant": variant(),
        "clock": clock,
        "speed": speed(tc),
        "perf": { "name": speed(tc) },
        "createdAt": game.created_at.to_stored(),
        "white": player(Color::White),
        "black": player(Color::Black),
        "initialFen": if initial_fen == start { "startpos".to_owned() } else { initial_fen },
        "state": game_state(&moves, &game.situation, tc),
    });
    if clock.is_null() {
        full["daysPerTurn"] = Value::Null;
    }
    full
}

/// The `game` object of `gameStart` and `gameFinish`, for the player of `color`.
pub fn event_game(game: &GameSnapshot, color: Color, opponent: Option<&ApiPlayer>) -> Value {
    let situation = &game.situation;
    let (status, status_id) = status(situation.status, situation.result.as_ref());
    let seconds_left = situation.clocks.map(|clocks| match color {
        Color::White => clocks.white_ms / 1000,
        Color::Black => clocks.black_ms / 1000,
    });
    let mut value = json!({
        "id": game.id,
        "gameId": game.id,
        "fullId": game.id,
        "color": color_name(color),
        "fen": situation.fen,
        "hasMoved": game.moves.len() > usize::from(color == Color::Black),
        "isMyTurn": situation.result.is_none() && situation.turn == color,
        "lastMove": game.moves.last().map(|mv| mv.uci.clone()).unwrap_or_default(),
        "opponent": opponent.map_or(Value::Null, ApiPlayer::opponent_json),
        "perf": speed(game.time_control),
        "rated": game.rated,
        "secondsLeft": seconds_left,
        "source": "friend",
        "status": { "id": status_id, "name": status },
        "speed": speed(game.time_control),
        "variant": { "key": "standard", "name": "Standard" },
        "compat": { "bot": true, "board": true },
    });
    if let Some(winner) = situation.result.as_ref().and_then(|result| result.winner) {
        value["winner"] = json!(color_name(winner));
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(reason: &'static str, winner: Option<Color>) -> (&'static str, u32) {
        status(GameStage::Finished, Some(&ResultView { winner, reason }))
    }

    #[test]
    fn endings_map_to_lichess_status_names() {
        assert_eq!(ended("checkmate", Some(Color::White)).0, "mate");
        assert_eq!(ended("resignation", Some(Color::Black)).0, "resign");
        assert_eq!(ended("timeout", Some(Color::Black)).0, "outoftime");
        assert_eq!(
            ended("timeout_vs_insufficient_material", None).0,
            "outoftime"
        );
        assert_eq!(ended("stalemate", None).0, "stalemate");
        for draw in [
            "threefold_repetition",
            "fifty_moves",
            "insufficient_material",
            "agreement",
        ] {
            assert_eq!(ended(draw, None), ("draw", 34), "{draw}");
        }
        assert_eq!(ended("aborted", None).0, "aborted");
        assert_eq!(ended("no_start", Some(Color::White)), ("noStart", 37));
        assert_eq!(status(GameStage::Open, None).0, "created");
        assert_eq!(status(GameStage::Playing, None), ("started", 20));
    }

    #[test]
    fn speeds_follow_the_estimated_duration() {
        let tc = |text: &str| text.parse::<TimeControl>().expect(text);
        assert_eq!(speed(tc("0.25+0")), "ultraBullet");
        assert_eq!(speed(tc("1+0")), "bullet");
        assert_eq!(speed(tc("3+2")), "blitz");
        assert_eq!(speed(tc("10+0")), "rapid");
        assert_eq!(speed(tc("30+0")), "classical");
        assert_eq!(speed(TimeControl::Correspondence), "correspondence");
    }
}
