//! Tournaments written by hand for the Swiss tests: each round a list of
//! games and byes, turned into every player's round records.

use chess_tournament::swiss::{ByeKind, Colour, Outcome, Player, RoundRecord};

/// One line of a round: `(white, black, result)` with results "1-0",
/// "0-1", "=", "+-"/"-+" (forfeits: White, or Black, won); byes as
/// `(player, 0, "U"|"H"|"F"|"Z")` (pairing-allocated, half-point,
/// full-point, zero-point).
pub type Game = (u32, u32, &'static str);

/// `players` (pairing numbers 1, 2, ... in order) with `rounds` played: both
/// sides of every game recorded; a player absent from a round before their
/// last one gets a zero-point bye for it.
pub fn play(mut players: Vec<Player>, rounds: &[&[Game]]) -> Vec<Player> {
    let played = |colour, outcome, opponent| RoundRecord::Played {
        opponent,
        colour,
        outcome,
    };
    let forfeit = |colour, won, opponent| RoundRecord::Forfeit {
        opponent,
        colour,
        won,
    };
    for (r, games) in rounds.iter().enumerate() {
        for &(a, b, result) in *games {
            let (ra, rb) = match result {
                "1-0" => (
                    played(Colour::White, Outcome::Win, b),
                    played(Colour::Black, Outcome::Loss, a),
                ),
                "0-1" => (
                    played(Colour::White, Outcome::Loss, b),
                    played(Colour::Black, Outcome::Win, a),
                ),
                "=" => (
                    played(Colour::White, Outcome::Draw, b),
                    played(Colour::Black, Outcome::Draw, a),
                ),
                "+-" => (
                    forfeit(Colour::White, true, b),
                    forfeit(Colour::Black, false, a),
                ),
                "-+" => (
                    forfeit(Colour::White, false, b),
                    forfeit(Colour::Black, true, a),
                ),
                bye => {
                    let kind = match bye {
                        "U" => ByeKind::PairingAllocated,
                        "H" => ByeKind::HalfPoint,
                        "F" => ByeKind::FullPoint,
                        "Z" => ByeKind::ZeroPoint,
                        other => panic!("no such result or bye {other:?}"),
                    };
                    set(&mut players, a, r, RoundRecord::Bye(kind));
                    continue;
                }
            };
            set(&mut players, a, r, ra);
            set(&mut players, b, r, rb);
        }
    }
    players
}

fn set(players: &mut [Player], n: u32, round: usize, record: RoundRecord) {
    let player = &mut players[n as usize - 1];
    if player.rounds.len() <= round {
        player
            .rounds
            .resize(round + 1, RoundRecord::Bye(ByeKind::ZeroPoint));
    }
    player.rounds[round] = record;
}
