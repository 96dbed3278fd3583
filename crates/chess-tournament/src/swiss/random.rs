//! A random tournament generator, for the differential test against
//! another Dutch implementation and for the benchmark (FIDE C.04 A.5 asks an
//! endorsed program for one). Seeded, so a disagreement can be replayed.
//!
//! Players get random ratings and pairing numbers by rating; some enter
//! late (a half-point bye for the first round missed, zero-point byes for
//! the others), some withdraw, some ask for a half-point bye; games end in
//! wins by the rating expectation, draws, and now and then a forfeit.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::colour::Colour;
use super::dutch::{RoundPairing, Tournament};
use super::player::{ByeKind, Outcome, PairingNumber, Player, RoundRecord, Scoring};
use super::trf::TrfFile;

/// The shape of the tournaments drawn.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub min_players: u32,
    pub max_players: u32,
    pub min_rounds: u32,
    pub max_rounds: u32,
    /// Chances, in percent.
    pub late_entry: u32,
    pub withdrawal: u32,
    pub half_point_bye: u32,
    pub forfeit: u32,
    pub draw: u32,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape {
            min_players: 8,
            max_players: 60,
            min_rounds: 5,
            max_rounds: 11,
            late_entry: 8,
            withdrawal: 5,
            half_point_bye: 3,
            forfeit: 3,
            draw: 25,
        }
    }
}

/// A tournament being simulated round by round.
#[derive(Debug)]
pub struct Simulation {
    pub players: Vec<Player>,
    pub total_rounds: u32,
    pub completed_rounds: u32,
    /// The round (0-based) each player enters, by index of `players`.
    entry: Vec<u32>,
    /// The round from which each player is withdrawn.
    withdrawal: Vec<Option<u32>>,
    shape: Shape,
    rng: StdRng,
    /// Pre-set byes of the round to pair.
    next: Vec<(PairingNumber, ByeKind)>,
}

impl Simulation {
    /// A new tournament drawn from `seed`.
    #[must_use]
    pub fn new(seed: u64, shape: Shape) -> Simulation {
        let mut rng = StdRng::seed_from_u64(seed);
        let count = rng.random_range(shape.min_players..=shape.max_players);
        let max_rounds = shape.max_rounds.min(count - 1).max(shape.min_rounds);
        let total_rounds = rng.random_range(shape.min_rounds..=max_rounds);
        let mut ratings: Vec<(u16, u32, bool)> = (0..count)
            .map(|i| {
                let late = rng.random_range(0..100) < shape.late_entry;
                (rng.random_range(1000..2700), i, late)
            })
            .collect();
        // Pairing numbers by rating; late entries after those who start.
        ratings.sort_by(|a, b| a.2.cmp(&b.2).then(b.0.cmp(&a.0)).then(a.1.cmp(&b.1)));
        let mut players = Vec::new();
        let mut entry = Vec::new();
        let mut withdrawal = Vec::new();
        for (i, &(rating, _, late)) in ratings.iter().enumerate() {
            let number = u32::try_from(i).unwrap_or(0) + 1;
            players.push(Player::new(number, rating));
            entry.push(if late {
                rng.random_range(1..=(total_rounds / 2).max(1))
            } else {
                0
            });
            withdrawal.push(
                (rng.random_range(0..100) < shape.withdrawal)
                    .then(|| rng.random_range(1..total_rounds)),
            );
        }
        let mut simulation = Simulation {
            players,
            total_rounds,
            completed_rounds: 0,
            entry,
            withdrawal,
            shape,
            rng,
            next: Vec::new(),
        };
        simulation.draw_absences();
        simulation
    }

    /// Whether every round has been played.
    #[must_use]
    pub fn finished(&self) -> bool {
        self.completed_rounds >= self.total_rounds
    }

    fn draw_absences(&mut self) {
        let round = self.completed_rounds;
        self.next.clear();
        for i in 0..self.players.len() {
            let number = self.players[i].number;
            if round < self.entry[i] {
                // At most one half-point bye for the rounds missed.
                let had_half = self.players[i]
                    .rounds
                    .contains(&RoundRecord::Bye(ByeKind::HalfPoint));
                let kind = if had_half {
                    ByeKind::ZeroPoint
                } else {
                    ByeKind::HalfPoint
                };
                self.next.push((number, kind));
            } else if self.withdrawal[i].is_some_and(|w| round >= w) {
                self.next.push((number, ByeKind::ZeroPoint));
            } else if round + 1 < self.total_rounds
                && self.rng.random_range(0..100) < self.shape.half_point_bye
            {
                self.next.push((number, ByeKind::HalfPoint));
            }
        }
    }

    /// The tournament so far with the byes set for the round to pair.
    #[must_use]
    pub fn round_input(&self) -> TrfFile {
        TrfFile {
            tournament: Tournament {
                players: self.players.clone(),
                total_rounds: self.total_rounds,
                completed_rounds: self.completed_rounds,
                forbidden: Vec::new(),
                initial_colour: Colour::White,
                scoring: Scoring::default(),
            },
            next_round: self.next.clone(),
        }
    }

    /// Plays the round `pairing` with random results and draws who is
    /// absent from the next one.
    pub fn play(&mut self, pairing: &RoundPairing) {
        let index = |n: PairingNumber| (n - 1) as usize;
        let round = self.completed_rounds as usize;
        for &(number, kind) in &self.next {
            self.players[index(number)]
                .rounds
                .push(RoundRecord::Bye(kind));
        }
        if let Some(bye) = pairing.bye {
            self.players[index(bye)]
                .rounds
                .push(RoundRecord::Bye(ByeKind::PairingAllocated));
        }
        for board in &pairing.boards {
            let (w, b) = (index(board.white), index(board.black));
            let roll = self.rng.random_range(0..100);
            if roll < self.shape.forfeit {
                let white_wins = self.rng.random_bool(0.5);
                self.players[w].rounds.push(RoundRecord::Forfeit {
                    opponent: board.black,
                    colour: Colour::White,
                    won: white_wins,
                });
                self.players[b].rounds.push(RoundRecord::Forfeit {
                    opponent: board.white,
                    colour: Colour::Black,
                    won: !white_wins,
                });
                continue;
            }
            let (white_outcome, black_outcome) = if roll < self.shape.forfeit + self.shape.draw {
                (Outcome::Draw, Outcome::Draw)
            } else {
                let (rw, rb) = (
                    f64::from(self.players[w].rating),
                    f64::from(self.players[b].rating),
                );
                let expected = 1.0 / (1.0 + 10f64.powf((rb - rw) / 400.0));
                if self.rng.random_bool(expected) {
                    (Outcome::Win, Outcome::Loss)
                } else {
                    (Outcome::Loss, Outcome::Win)
                }
            };
            self.players[w].rounds.push(RoundRecord::Played {
                opponent: board.black,
                colour: Colour::White,
                outcome: white_outcome,
            });
            self.players[b].rounds.push(RoundRecord::Played {
                opponent: board.white,
                colour: Colour::Black,
                outcome: black_outcome,
            });
        }
        for player in &mut self.players {
            if player.rounds.len() <= round {
                player.rounds.push(RoundRecord::Bye(ByeKind::ZeroPoint));
            }
        }
        self.completed_rounds += 1;
        if !self.finished() {
            self.draw_absences();
        }
    }
}
