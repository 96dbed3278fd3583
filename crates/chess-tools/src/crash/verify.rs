//! The checks made on every game after each restart, from the states the
//! restarted server serves (`GET /api/games/{id}` as each seat) against what
//! the clients knew before the kill.

use chess_rules::Position;
use serde_json::Value;

use crate::crash::game::{COLORS, Record};
use crate::crash::report::Recorder;

/// How far a clock may be from the expected value. Both readings are the
/// server's own arithmetic on stored timestamps (`as_of` and the remaining
/// times are computed from one `now`), so only millisecond rounding is
/// allowed for.
pub const CLOCK_TOLERANCE_MS: u64 = 10;

/// Checks the game `game` after a restart. `before` is what its clients knew
/// when the server was killed, `states` what each seat is served now.
/// `premoves_dropped`: every socket was closed by the server's death, so no
/// premove may remain (not so when only the database failed).
pub fn after_restart(
    game: &str,
    before: &Record,
    states: &[Value; 2],
    premoves_dropped: bool,
    recorder: &Recorder,
) {
    for (seat, state) in states.iter().enumerate() {
        let color = COLORS[seat];
        let version = state["version"].as_u64().unwrap_or(0);
        if version < before.versions[seat] {
            recorder.fail(
                "version_went_back",
                game,
                format!(
                    "{color} had seen version {}, the restarted server is at {version}",
                    before.versions[seat]
                ),
            );
        }
        if before.premove_now[seat].is_some() {
            recorder.count("premoves_at_kill");
        }
        // A restart closes every socket, and a premove lives only while its
        // player is connected.
        if premoves_dropped && let Some(uci) = state["premove"]["uci"].as_str() {
            recorder.fail(
                "premove_kept",
                game,
                format!("{color}'s premove {uci} is still set after the restart"),
            );
        }
    }
    let state = &states[0];
    let stored: Vec<&str> = state["moves"]
        .as_array()
        .map(|moves| moves.iter().filter_map(|m| m["uci"].as_str()).collect())
        .unwrap_or_default();
    moves_kept(game, before, &stored, recorder);
    replays(game, state, recorder);
    clocks_kept_running(game, before, state, recorder);
    if let Some(result) = &before.result
        && state["result"] != *result
    {
        recorder.fail(
            "result_changed",
            game,
            format!(
                "the result was {result}, after the restart {}",
                state["result"]
            ),
        );
    }
}

/// Every confirmed move is stored, in order; any further stored move is one
/// a client sent (its `ack` lost to the kill) or a premove it set.
fn moves_kept(game: &str, before: &Record, stored: &[&str], recorder: &Recorder) {
    for (ply, confirmed) in before.confirmed.iter().enumerate() {
        match stored.get(ply) {
            Some(uci) if uci == confirmed => {}
            Some(uci) => recorder.fail(
                "acked_move_lost",
                game,
                format!("ply {ply} was acknowledged as {confirmed}, stored as {uci}"),
            ),
            None => recorder.fail(
                "acked_move_lost",
                game,
                format!(
                    "ply {ply} ({confirmed}) was acknowledged, but only {} moves are stored",
                    stored.len()
                ),
            ),
        }
    }
    for (ply, uci) in stored.iter().enumerate().skip(before.confirmed.len()) {
        let mover = ply % 2;
        let sent = before.sent.contains(&(ply, (*uci).to_owned()));
        if sent {
            recorder.count("moves_stored_unacked");
            if before.refused.contains(&(ply, (*uci).to_owned())) {
                // Refused with "the database is away", stored all the same: a
                // commit whose answer the connection lost.
                recorder.count("moves_refused_but_stored");
            }
        } else if !before.premoves[mover].contains(*uci) {
            recorder.fail(
                "unexplained_move",
                game,
                format!("ply {ply} is stored as {uci}, which no client sent"),
            );
        }
    }
}

/// The stored moves replay from the initial position through chess-rules,
/// each with its stored SAN, to the stored position; the status agrees with
/// the board.
pub fn replays(game: &str, state: &Value, recorder: &Recorder) {
    recorder.count("games_replayed");
    let corrupt = |detail: String| recorder.fail("corrupt_game", game, detail);
    let initial = state["initial_fen"].as_str().unwrap_or_default();
    let mut position = match Position::from_fen(initial) {
        Ok(position) => position,
        Err(error) => return corrupt(format!("initial FEN {initial:?}: {error}")),
    };
    let moves = state["moves"].as_array().cloned().unwrap_or_default();
    for (ply, stored) in moves.iter().enumerate() {
        let uci = stored["uci"].as_str().unwrap_or_default();
        let Ok(mv) = position.parse_uci(uci) else {
            return corrupt(format!(
                "ply {ply}: {uci} is not legal in {}",
                position.fen()
            ));
        };
        let san = position.san(&mv);
        if stored["san"] != san.as_str() {
            return corrupt(format!(
                "ply {ply}: {uci} is {san}, stored as {}",
                stored["san"]
            ));
        }
        match position.play(&mv) {
            Ok(next) => position = next,
            Err(error) => return corrupt(format!("ply {ply}: {uci}: {error}")),
        }
    }
    if state["fen"] != position.fen().as_str() {
        corrupt(format!(
            "the moves lead to {}, the stored position is {}",
            position.fen(),
            state["fen"]
        ));
    }
    let reason = state["result"]["reason"].as_str();
    if reason == Some("checkmate") && !position.is_checkmate() {
        corrupt("a checkmate result on a board that is not mate".to_owned());
    }
    if state["status"] == "playing" && !position.has_legal_moves() {
        corrupt("still playing, but the side to move has no legal move".to_owned());
    }
}

/// The clocks the restarted server shows: the side that was to move lost
/// exactly the time between the two readings (the downtime included, since
/// the first reading is from before the kill and the second from after the
/// restart); the other side lost nothing.
fn clocks_kept_running(game: &str, before: &Record, state: &Value, recorder: &Recorder) {
    let Some((moves_then, then)) = &before.clocks else {
        return;
    };
    let moves_now = state["moves"].as_array().map_or(0, Vec::len);
    let now = &state["clocks"];
    // A move stored without its acknowledgement, or a result, changed the
    // clocks for a reason of its own: nothing to compare.
    if moves_now != *moves_then || state["status"] != "playing" || now.is_null() {
        return;
    }
    let (Some(as_of_then), Some(as_of_now)) = (then["as_of"].as_u64(), now["as_of"].as_u64())
    else {
        return recorder.fail(
            "clock",
            game,
            format!("clocks without as_of: {then} / {now}"),
        );
    };
    if now["running"] != then["running"] {
        recorder.fail(
            "clock",
            game,
            format!("{} was running, now {}", then["running"], now["running"]),
        );
    }
    let elapsed = i128::from(as_of_now) - i128::from(as_of_then);
    for color in COLORS {
        let field = format!("{color}_ms");
        let (Some(was), Some(is)) = (then[&field].as_u64(), now[&field].as_u64()) else {
            continue;
        };
        let lost = if then["running"] == color { elapsed } else { 0 };
        let expected = (i128::from(was) - lost).max(0);
        let error = u64::try_from((i128::from(is) - expected).abs()).unwrap_or(u64::MAX);
        recorder.clock_checked(error);
        if error > CLOCK_TOLERANCE_MS {
            recorder.fail(
                "clock",
                game,
                format!(
                    "{color} had {was} ms at {as_of_then}; at {as_of_now} expected {expected} ms, has {is} ms"
                ),
            );
        }
    }
}
