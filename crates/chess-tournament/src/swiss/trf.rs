//! The FIDE Tournament Report File, TRF16 (C.04 Annex 2), as far as pairing
//! needs it: the `001` player lines with their round columns
//! (`oooo c r`: opponent, colour, result), `XXR` (the number of rounds) and
//! `XXC` (the initial colour, `white1`/`black1`), the extensions JaVaFo,
//! bbpPairings and py4swiss read. Pre-set byes in the column of the round
//! to pair mark the players who are not to be paired.
//!
//! Columns (1-based): `001` 1-3, starting rank 5-8, sex 10, title 11-13,
//! name 15-47, rating 49-52, federation 54-56, FIDE id 58-68, birth date
//! 70-79, points 81-84, rank 86-89, then round *k* (from 0) at 92+10k:
//! opponent (4), colour at +5 (`w`, `b`, `-`), result at +7.

use std::fmt::Write as _;

use super::colour::Colour;
use super::dutch::Tournament;
use super::player::{ByeKind, Outcome, PairingNumber, Player, RoundRecord, Scoring};

/// A parsed TRF: the tournament so far and the players who have a bye
/// already set for the round to pair (they are not to be paired).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrfFile {
    pub tournament: Tournament,
    /// Pre-set records for the round to pair (a requested bye, an absence).
    pub next_round: Vec<(PairingNumber, ByeKind)>,
}

impl TrfFile {
    /// The players not to be paired in the next round.
    #[must_use]
    pub fn unavailable(&self) -> Vec<PairingNumber> {
        self.next_round.iter().map(|&(n, _)| n).collect()
    }
}

/// Why a TRF could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrfError {
    /// A line whose field is not what TRF16 allows there.
    BadField {
        line: usize,
        field: &'static str,
        text: String,
    },
    /// No `XXR` line and no way to know the number of rounds.
    MissingRounds,
    /// Two `001` lines with the same starting rank.
    DuplicatePlayer { line: usize, number: PairingNumber },
}

impl std::fmt::Display for TrfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrfError::BadField { line, field, text } => {
                write!(f, "line {line}: bad {field} {text:?}")
            }
            TrfError::MissingRounds => write!(f, "no XXR line gives the number of rounds"),
            TrfError::DuplicatePlayer { line, number } => {
                write!(f, "line {line}: starting rank {number} appears twice")
            }
        }
    }
}

impl std::error::Error for TrfError {}

fn field(line: &str, from: usize, to: usize) -> &str {
    // 1-based inclusive columns; short lines give what there is.
    let start = (from - 1).min(line.len());
    let end = to.min(line.len());
    line.get(start..end).unwrap_or("").trim()
}

/// One round column, before knowing whether it is a past round.
enum Cell {
    Empty,
    Record(RoundRecord),
}

fn parse_cell(line_no: usize, text: &str) -> Result<Cell, TrfError> {
    let bad = |field: &'static str| TrfError::BadField {
        line: line_no,
        field,
        text: text.to_string(),
    };
    if text.trim().is_empty() {
        return Ok(Cell::Empty);
    }
    let padded = format!("{text:<8}");
    let opponent_text = padded[0..4].trim();
    let colour_text = padded[5..6].trim();
    let result_text = padded[7..8].trim();
    let opponent: PairingNumber = if opponent_text.is_empty() {
        0
    } else {
        opponent_text.parse().map_err(|_| bad("opponent"))?
    };
    let colour = match colour_text {
        "w" | "W" => Some(Colour::White),
        "b" | "B" => Some(Colour::Black),
        "-" | "" => None,
        _ => return Err(bad("colour")),
    };
    let record = match (opponent, colour, result_text) {
        (0, _, "U") => RoundRecord::Bye(ByeKind::PairingAllocated),
        (0, _, "H") => RoundRecord::Bye(ByeKind::HalfPoint),
        (0, _, "F" | "+" | "1" | "W") => RoundRecord::Bye(ByeKind::FullPoint),
        (0, _, "Z" | "-" | "0" | "L" | "") => RoundRecord::Bye(ByeKind::ZeroPoint),
        (0, _, "=" | "D") => RoundRecord::Bye(ByeKind::HalfPoint),
        (o, Some(c), "1" | "W") => RoundRecord::Played {
            opponent: o,
            colour: c,
            outcome: Outcome::Win,
        },
        (o, Some(c), "=" | "D") => RoundRecord::Played {
            opponent: o,
            colour: c,
            outcome: Outcome::Draw,
        },
        (o, Some(c), "0" | "L") => RoundRecord::Played {
            opponent: o,
            colour: c,
            outcome: Outcome::Loss,
        },
        (o, Some(c), "+") => RoundRecord::Forfeit {
            opponent: o,
            colour: c,
            won: true,
        },
        (o, Some(c), "-") => RoundRecord::Forfeit {
            opponent: o,
            colour: c,
            won: false,
        },
        (_, None, _) if opponent != 0 => return Err(bad("colour")),
        _ => return Err(bad("result")),
    };
    Ok(Cell::Record(record))
}

/// Reads a TRF16 file (with the `XXR`/`XXC` extensions).
///
/// A round column counts as played when some player has a game or the
/// pairing-allocated bye in it; the columns after the played ones hold the
/// byes set in advance for the round to pair.
///
/// # Errors
///
/// A [`TrfError`] naming the line and field that is not TRF16.
pub fn read_trf(text: &str) -> Result<TrfFile, TrfError> {
    let mut total_rounds: Option<u32> = None;
    let mut initial_colour = Colour::White;
    let mut rows: Vec<(usize, Player, Vec<Option<RoundRecord>>)> = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = line.trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("XXR") {
            let rounds = rest.trim().parse().map_err(|_| TrfError::BadField {
                line: line_no,
                field: "XXR",
                text: rest.trim().to_string(),
            })?;
            total_rounds = Some(rounds);
        } else if let Some(rest) = line.strip_prefix("XXC") {
            for word in rest.split_whitespace() {
                match word {
                    "white1" => initial_colour = Colour::White,
                    "black1" => initial_colour = Colour::Black,
                    _ => {}
                }
            }
        } else if line.starts_with("001") {
            let bad = |field: &'static str, text: &str| TrfError::BadField {
                line: line_no,
                field,
                text: text.to_string(),
            };
            let number_text = field(line, 5, 8);
            let number: PairingNumber = number_text
                .parse()
                .map_err(|_| bad("starting rank", number_text))?;
            let rating_text = field(line, 49, 52);
            let rating: u16 = if rating_text.is_empty() {
                0
            } else {
                rating_text
                    .parse()
                    .map_err(|_| bad("rating", rating_text))?
            };
            let name = field(line, 15, 47).to_string();
            let mut cells = Vec::new();
            let mut column = 92;
            while column <= line.len() {
                let end = (column + 7).min(line.len());
                let text = line.get(column - 1..end).unwrap_or("");
                cells.push(match parse_cell(line_no, text)? {
                    Cell::Empty => None,
                    Cell::Record(record) => Some(record),
                });
                column += 10;
            }
            if rows.iter().any(|(_, p, _)| p.number == number) {
                return Err(TrfError::DuplicatePlayer {
                    line: line_no,
                    number,
                });
            }
            rows.push((
                line_no,
                Player {
                    number,
                    rating,
                    name,
                    rounds: Vec::new(),
                },
                cells,
            ));
        }
    }
    let columns = rows.iter().map(|(_, _, c)| c.len()).max().unwrap_or(0);
    let played_column = |k: usize| {
        rows.iter().any(|(_, _, cells)| {
            matches!(
                cells.get(k),
                Some(Some(
                    RoundRecord::Played { .. }
                        | RoundRecord::Forfeit { .. }
                        | RoundRecord::Bye(ByeKind::PairingAllocated)
                ))
            )
        })
    };
    let completed = (0..columns).take_while(|&k| played_column(k)).count();
    let mut next_round = Vec::new();
    let mut players = Vec::new();
    for (_, mut player, cells) in rows {
        player.rounds = (0..completed)
            .map(|k| {
                cells
                    .get(k)
                    .copied()
                    .flatten()
                    .unwrap_or(RoundRecord::Bye(ByeKind::ZeroPoint))
            })
            .collect();
        if let Some(Some(RoundRecord::Bye(kind))) = cells.get(completed) {
            next_round.push((player.number, *kind));
        }
        players.push(player);
    }
    let total_rounds = total_rounds.ok_or(TrfError::MissingRounds)?;
    Ok(TrfFile {
        tournament: Tournament {
            players,
            total_rounds,
            completed_rounds: u32::try_from(completed).unwrap_or(u32::MAX),
            forbidden: Vec::new(),
            initial_colour,
            scoring: Scoring::default(),
        },
        next_round,
    })
}

fn cell(record: &RoundRecord) -> String {
    let colour = |c: &Colour| match c {
        Colour::White => 'w',
        Colour::Black => 'b',
    };
    match record {
        RoundRecord::Played {
            opponent,
            colour: c,
            outcome,
        } => {
            let r = match outcome {
                Outcome::Win => '1',
                Outcome::Draw => '=',
                Outcome::Loss => '0',
            };
            format!("{opponent:>4} {} {r}", colour(c))
        }
        RoundRecord::Forfeit {
            opponent,
            colour: c,
            won,
        } => format!(
            "{opponent:>4} {} {}",
            colour(c),
            if *won { '+' } else { '-' }
        ),
        RoundRecord::Bye(kind) => {
            let r = match kind {
                ByeKind::PairingAllocated => 'U',
                ByeKind::HalfPoint => 'H',
                ByeKind::FullPoint => 'F',
                ByeKind::ZeroPoint => 'Z',
            };
            format!("0000 - {r}")
        }
    }
}

/// Writes `file` as TRF16: a `012` name line, `XXR`, `XXC`, and one `001`
/// line per player with the points of every column written (the pre-set
/// byes of the next round included, as readers check the total).
#[must_use]
pub fn write_trf(name: &str, file: &TrfFile) -> String {
    let t = &file.tournament;
    let scoring = t.scoring;
    let mut out = String::new();
    let _ = writeln!(out, "012 {name}");
    let _ = writeln!(out, "XXR {}", t.total_rounds);
    let _ = writeln!(
        out,
        "XXC {}",
        match t.initial_colour {
            Colour::White => "white1",
            Colour::Black => "black1",
        }
    );
    let played = t.completed_rounds as usize;
    let mut players: Vec<&Player> = t.players.iter().collect();
    players.sort_by_key(|p| p.number);
    for player in players {
        let mut records: Vec<RoundRecord> = (0..played).map(|r| player.record(r)).collect();
        if let Some(&(_, kind)) = file.next_round.iter().find(|(n, _)| *n == player.number) {
            records.push(RoundRecord::Bye(kind));
        }
        let points: u32 = records.iter().map(|r| scoring.points(r)).sum();
        let name: String = if player.name.is_empty() {
            format!("Player {}", player.number)
        } else {
            player.name.chars().take(33).collect()
        };
        let mut line = format!(
            "001 {:>4}      {:<33} {:>4}{:28}{:>4} {:>4}",
            player.number,
            name,
            player.rating,
            "",
            format!("{}.{}", points / 2, if points % 2 == 1 { 5 } else { 0 }),
            player.number
        );
        for record in &records {
            let _ = write!(line, "  {}", cell(record));
        }
        let _ = writeln!(out, "{line}");
    }
    out
}
