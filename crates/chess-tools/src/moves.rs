//! Random moves from what the server offers: the destinations of a game
//! socket's `state` and `event` messages (`dests`, `premove_dests`). Shared
//! by the crash and rolling-restart tools.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use serde_json::{Map, Value};

/// A random move from `dests` (`{"e2": ["e3", "e4"], ...}`) in UCI; a pawn
/// reaching the last rank promotes to a queen.
pub fn random_move(dests: &Map<String, Value>, fen: &str, rng: &mut StdRng) -> Option<String> {
    let moves: Vec<(&str, &str)> = dests
        .iter()
        .flat_map(|(from, tos)| {
            tos.as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(move |to| (from.as_str(), to))
        })
        .collect();
    let (from, to) = *moves.choose(rng)?;
    let pawn = fen
        .split(' ')
        .next()
        .and_then(|board| piece_at(board, from))
        .is_some_and(|piece| piece.eq_ignore_ascii_case(&'p'));
    Some(if pawn && to.ends_with(['1', '8']) {
        format!("{from}{to}q")
    } else {
        format!("{from}{to}")
    })
}

/// The FEN letter of the piece on `square` (`"e2"`) in a FEN board field.
pub fn piece_at(board: &str, square: &str) -> Option<char> {
    let mut chars = square.chars();
    let file = u32::from(chars.next()?).checked_sub(u32::from('a'))?;
    let rank = usize::try_from(chars.next()?.to_digit(10)?).ok()?;
    // The board field lists rank 8 first.
    let row = board.split('/').nth(8usize.checked_sub(rank)?)?;
    let mut column = 0;
    for symbol in row.chars() {
        match symbol.to_digit(10) {
            Some(empty) => column += empty,
            None if column == file => return Some(symbol),
            None => column += 1,
        }
        if column > file {
            return None;
        }
    }
    None
}
