//! PGN export and import.
//!
//! Export writes the seven tag roster, `TimeControl`, `Termination` and any
//! other tags, `SetUp`/`FEN` when the game did not start from the standard
//! position, and movetext wrapped at 80 columns with a `[%clk h:mm:ss]`
//! comment after each move when clock times are known.
//!
//! Import reads what real PGN files hold: tags, movetext with move numbers
//! (`12.`, `12...`), comments (`{...}` and `;` to the end of the line), NAGs
//! (`$1`) and annotations (`!?`), variations (`(...)`, nested) which are
//! skipped, results, and several games in one text. Clock comments are read
//! back into [`PgnGame::clocks`].
//!
//! ```
//! use chess_rules::pgn::{PgnGame, PgnResult};
//!
//! let text = "[White \"Anderssen\"]\n\n1. e4 e5 {a comment} 2. Nf3 (2. f4) Nc6 1-0\n";
//! let game: PgnGame = text.parse()?;
//! assert_eq!(game.tag("White"), Some("Anderssen"));
//! assert_eq!(game.record.sans().collect::<Vec<_>>(), ["e4", "e5", "Nf3", "Nc6"]);
//! assert_eq!(game.result, PgnResult::WhiteWins);
//! assert!(game.to_pgn().contains("1. e4 e5 2. Nf3 Nc6 1-0"));
//! # Ok::<(), chess_rules::pgn::PgnError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use crate::{Color, FenError, GameRecord, Position, SanError};

/// The movetext is wrapped so no line is longer than this.
const LINE_WIDTH: usize = 80;

/// The tags every PGN game has, in the order they are written, with the
/// value written when the game does not set one.
const SEVEN_TAG_ROSTER: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// How a game ended, as PGN writes it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum PgnResult {
    /// `1-0`.
    WhiteWins,
    /// `0-1`.
    BlackWins,
    /// `1/2-1/2`.
    Draw,
    /// `*`: still going, abandoned or not known.
    #[default]
    Unknown,
}

impl PgnResult {
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PgnResult::WhiteWins => "1-0",
            PgnResult::BlackWins => "0-1",
            PgnResult::Draw => "1/2-1/2",
            PgnResult::Unknown => "*",
        }
    }

    /// The result with `winner` winning, or a draw for `None`.
    pub const fn from_winner(winner: Option<Color>) -> PgnResult {
        match winner {
            Some(Color::White) => PgnResult::WhiteWins,
            Some(Color::Black) => PgnResult::BlackWins,
            None => PgnResult::Draw,
        }
    }

    fn from_token(token: &str) -> Option<PgnResult> {
        Some(match token {
            "1-0" => PgnResult::WhiteWins,
            "0-1" => PgnResult::BlackWins,
            "1/2-1/2" => PgnResult::Draw,
            "*" => PgnResult::Unknown,
            _ => return None,
        })
    }
}

impl fmt::Display for PgnResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One game as PGN holds it.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PgnGame {
    /// Tags in the order they were set or read, names unique. The `Result`,
    /// `SetUp` and `FEN` tags are written from [`PgnGame::result`] and the
    /// record's initial position instead of from here.
    pub tags: Vec<(String, String)>,
    /// The moves, from the initial position.
    pub record: GameRecord,
    pub result: PgnResult,
    /// Remaining clock time in milliseconds after each ply, first ply first.
    /// Empty when not known; on export a ply without an entry gets no clock
    /// comment. On import it is filled only when every ply has a `%clk`.
    pub clocks: Vec<u64>,
}

/// Why PGN text could not be read. Lines are counted from 1; plies from 1
/// for the first move of the game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PgnError {
    /// The text holds no game.
    NoGame,
    /// The text holds more than one game where one was expected.
    SeveralGames { count: usize },
    /// A tag pair is not `[Name "value"]`.
    BadTag { line: usize },
    /// The `FEN` tag does not describe a legal position.
    BadFen { fen: String, error: FenError },
    /// A move in the movetext is not SAN or not legal in its position.
    BadMove {
        line: usize,
        ply: usize,
        /// The move number and dots as PGN writes them: `12.` or `12...`.
        number: String,
        san: String,
        error: SanError,
    },
    /// A `{` comment is never closed.
    UnclosedComment { line: usize },
    /// A `(` variation is never closed.
    UnclosedVariation { line: usize },
    /// A `)` with no variation open.
    UnmatchedParenthesis { line: usize },
    /// A `]` or `}` outside a tag pair or comment.
    UnexpectedChar { line: usize, ch: char },
}

impl fmt::Display for PgnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgnError::NoGame => f.write_str("pgn holds no game"),
            PgnError::SeveralGames { count } => {
                write!(f, "pgn holds {count} games where one was expected")
            }
            PgnError::BadTag { line } => {
                write!(f, "line {line}: tag pair is not [Name \"value\"]")
            }
            PgnError::BadFen { fen, error } => write!(f, "fen tag {fen:?}: {error}"),
            PgnError::BadMove {
                line,
                ply,
                number,
                san,
                error,
            } => write!(f, "line {line}, ply {ply}, move {number} {san}: {error}"),
            PgnError::UnclosedComment { line } => {
                write!(f, "line {line}: comment opened with {{ is never closed")
            }
            PgnError::UnclosedVariation { line } => {
                write!(f, "line {line}: variation opened with ( is never closed")
            }
            PgnError::UnmatchedParenthesis { line } => {
                write!(f, "line {line}: ) closes no variation")
            }
            PgnError::UnexpectedChar { line, ch } => {
                write!(f, "line {line}: unexpected {ch:?} in movetext")
            }
        }
    }
}

impl std::error::Error for PgnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PgnError::BadFen { error, .. } => Some(error),
            PgnError::BadMove { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl PgnGame {
    /// A game with no tags and no moves from `initial`.
    pub fn new(initial: Position) -> PgnGame {
        PgnGame {
            record: GameRecord::new(initial),
            ..PgnGame::default()
        }
    }

    /// A game with no tags holding the moves of `record`.
    pub fn from_record(record: GameRecord) -> PgnGame {
        PgnGame {
            record,
            ..PgnGame::default()
        }
    }

    /// The value of a tag, if set.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// Sets a tag, replacing its value if already set, else adding it last.
    pub fn set_tag(&mut self, name: impl Into<String>, value: impl Into<String>) {
        let name = name.into();
        let value = value.into();
        match self.tags.iter_mut().find(|(key, _)| *key == name) {
            Some(tag) => tag.1 = value,
            None => self.tags.push((name, value)),
        }
    }

    /// The game as PGN text, ending with a blank line so games can be
    /// concatenated.
    pub fn to_pgn(&self) -> String {
        let mut out = String::new();
        self.write_tags(&mut out);
        out.push('\n');
        self.write_movetext(&mut out);
        out.push_str("\n\n");
        out
    }

    fn write_tags(&self, out: &mut String) {
        for (name, default) in SEVEN_TAG_ROSTER {
            let value = match name {
                "Result" => self.result.as_str(),
                _ => self.tag(name).unwrap_or(default),
            };
            push_tag(out, name, value);
        }
        let initial = self.record.initial();
        if *initial != Position::startpos() {
            push_tag(out, "SetUp", "1");
            push_tag(out, "FEN", &initial.fen());
        }
        for name in ["TimeControl", "Termination"] {
            if let Some(value) = self.tag(name) {
                push_tag(out, name, value);
            }
        }
        let written = |name: &str| {
            SEVEN_TAG_ROSTER.iter().any(|(roster, _)| *roster == name)
                || matches!(name, "SetUp" | "FEN" | "TimeControl" | "Termination")
        };
        for (name, value) in &self.tags {
            if !written(name) {
                push_tag(out, name, value);
            }
        }
    }

    fn write_movetext(&self, out: &mut String) {
        let mut tokens = Vec::with_capacity(self.record.len() * 3 + 1);
        let mut position = self.record.initial();
        // After a comment, Black's move needs its number again (`1... e5`).
        let mut number_needed = true;
        for (index, ply) in self.record.plies().iter().enumerate() {
            let number = position.fullmove_number();
            match position.turn() {
                Color::White => tokens.push(format!("{number}.")),
                Color::Black if number_needed => tokens.push(format!("{number}...")),
                Color::Black => {}
            }
            tokens.push(ply.san.clone());
            number_needed = false;
            if let Some(&millis) = self.clocks.get(index) {
                tokens.push(format!("{{ [%clk {}] }}", format_clock(millis)));
                number_needed = true;
            }
            position = &ply.position;
        }
        tokens.push(self.result.as_str().to_owned());

        let mut line_len = 0;
        for token in tokens {
            if line_len > 0 && line_len + 1 + token.len() > LINE_WIDTH {
                out.push('\n');
                line_len = 0;
            }
            if line_len > 0 {
                out.push(' ');
                line_len += 1;
            }
            out.push_str(&token);
            line_len += token.len();
        }
    }
}

fn push_tag(out: &mut String, name: &str, value: &str) {
    let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
    out.push_str(&format!("[{name} \"{escaped}\"]\n"));
}

/// `h:mm:ss`, rounded down to the second as lichess writes it.
fn format_clock(millis: u64) -> String {
    let seconds = millis / 1000;
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// Reads `h:mm:ss` or `h:mm:ss.f` (any number of decimals) as milliseconds.
fn parse_clock(text: &str) -> Option<u64> {
    let (whole, fraction) = match text.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (text, ""),
    };
    let mut parts = whole.split(':');
    let (hours, minutes, seconds) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let number = |s: &str| {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            None
        } else {
            s.parse::<u64>().ok()
        }
    };
    let (hours, minutes, seconds) = (number(hours)?, number(minutes)?, number(seconds)?);
    if minutes >= 60 || seconds >= 60 {
        return None;
    }
    let millis_fraction = if fraction.is_empty() {
        0
    } else {
        let digits: String = fraction.chars().chain("000".chars()).take(3).collect();
        number(&digits)?
    };
    if !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(((hours * 60 + minutes) * 60 + seconds) * 1000 + millis_fraction)
}

/// The `[%clk ...]` time in a comment, if any.
fn clock_in_comment(comment: &str) -> Option<u64> {
    let start = comment.find("[%clk")? + "[%clk".len();
    let rest = &comment[start..];
    let end = rest.find(']')?;
    parse_clock(rest[..end].trim())
}

impl FromStr for PgnGame {
    type Err = PgnError;

    /// Reads exactly one game.
    ///
    /// # Errors
    /// [`PgnError::NoGame`] or [`PgnError::SeveralGames`] when the text does
    /// not hold exactly one game, or the first problem in it.
    fn from_str(text: &str) -> Result<PgnGame, PgnError> {
        let mut games = read_games(text)?;
        match games.len() {
            0 => Err(PgnError::NoGame),
            1 => Ok(games.remove(0)),
            count => Err(PgnError::SeveralGames { count }),
        }
    }
}

/// Reads every game in a PGN text.
///
/// # Errors
/// The first problem found, as a [`PgnError`] with its line (and ply and
/// move text for a bad move). No games are returned when one is bad.
pub fn read_games(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    Reader::new(text).read_all()
}

/// A game being read: tags first, then movetext.
#[derive(Default)]
struct GameInProgress {
    tags: Vec<(String, String)>,
    record: Option<GameRecord>,
    clocks: Vec<Option<u64>>,
    /// Whether anything of this game was seen yet.
    started: bool,
}

impl GameInProgress {
    /// The position the game starts from: the `FEN` tag's, else the standard one.
    fn initial(&self) -> Result<Position, PgnError> {
        match self.tags.iter().find(|(name, _)| name == "FEN") {
            Some((_, fen)) => Position::from_fen(fen).map_err(|error| PgnError::BadFen {
                fen: fen.clone(),
                error,
            }),
            None => Ok(Position::startpos()),
        }
    }

    /// The record, created at the first move (once every tag is known).
    fn record(&mut self) -> Result<&mut GameRecord, PgnError> {
        let record = match self.record.take() {
            Some(record) => record,
            None => GameRecord::new(self.initial()?),
        };
        Ok(self.record.insert(record))
    }

    fn finish(mut self, result: Option<PgnResult>) -> Result<PgnGame, PgnError> {
        let record = match self.record.take() {
            Some(record) => record,
            None => GameRecord::new(self.initial()?),
        };
        let result = result
            .or_else(|| {
                self.tags
                    .iter()
                    .find(|(name, _)| name == "Result")
                    .and_then(|(_, value)| PgnResult::from_token(value))
            })
            .unwrap_or_default();
        let clocks = if self.clocks.len() == record.len() {
            self.clocks.iter().copied().collect::<Option<Vec<u64>>>()
        } else {
            None
        };
        Ok(PgnGame {
            tags: self.tags,
            record,
            result,
            clocks: clocks.unwrap_or_default(),
        })
    }
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    games: Vec<PgnGame>,
    game: GameInProgress,
    /// Whether movetext of the current game has begun (a later tag then
    /// starts a new game even without a result).
    in_movetext: bool,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text: text.strip_prefix('\u{feff}').unwrap_or(text),
            pos: 0,
            line: 1,
            games: Vec::new(),
            game: GameInProgress::default(),
            in_movetext: false,
        }
    }

    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let ch = self.peek()?;
        self.pos += ch.len_utf8();
        if ch == '\n' {
            self.line += 1;
        }
        Some(ch)
    }

    fn at_line_start(&self) -> bool {
        self.pos == 0 || self.text[..self.pos].ends_with('\n')
    }

    fn skip_to_line_end(&mut self) {
        while let Some(ch) = self.peek() {
            if ch == '\n' {
                break;
            }
            self.bump();
        }
    }

    fn finish_game(&mut self, result: Option<PgnResult>) -> Result<(), PgnError> {
        let game = std::mem::take(&mut self.game);
        self.in_movetext = false;
        if game.started {
            self.games.push(game.finish(result)?);
        }
        Ok(())
    }

    fn read_all(mut self) -> Result<Vec<PgnGame>, PgnError> {
        while let Some(ch) = self.peek() {
            match ch {
                _ if ch.is_whitespace() => {
                    self.bump();
                }
                // An escape line: ignored, by the PGN standard.
                '%' if self.at_line_start() => self.skip_to_line_end(),
                '[' => {
                    if self.in_movetext {
                        self.finish_game(None)?;
                    }
                    self.read_tag()?;
                }
                '{' => {
                    let comment = self.read_comment()?;
                    self.game.started = true;
                    self.attach_clock(comment);
                }
                ';' => self.skip_to_line_end(),
                '(' => self.skip_variation()?,
                ')' => return Err(PgnError::UnmatchedParenthesis { line: self.line }),
                _ => self.read_token()?,
            }
        }
        self.finish_game(None)?;
        Ok(self.games)
    }

    fn read_tag(&mut self) -> Result<(), PgnError> {
        let line = self.line;
        let bad = || PgnError::BadTag { line };
        self.bump(); // '['
        self.skip_spaces();
        let name_start = self.pos;
        while self
            .peek()
            .is_some_and(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        {
            self.bump();
        }
        let name = self.text[name_start..self.pos].to_owned();
        if name.is_empty() {
            return Err(bad());
        }
        self.skip_spaces();
        if self.bump() != Some('"') {
            return Err(bad());
        }
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('"') => break,
                Some('\\') => match self.bump() {
                    Some(ch @ ('"' | '\\')) => value.push(ch),
                    _ => return Err(bad()),
                },
                Some('\n') | None => return Err(bad()),
                Some(ch) => value.push(ch),
            }
        }
        self.skip_spaces();
        if self.bump() != Some(']') {
            return Err(bad());
        }
        self.game.started = true;
        match self.game.tags.iter_mut().find(|(key, _)| *key == name) {
            Some(tag) => tag.1 = value,
            None => self.game.tags.push((name, value)),
        }
        Ok(())
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(|ch| ch == ' ' || ch == '\t') {
            self.bump();
        }
    }

    fn read_comment(&mut self) -> Result<&'a str, PgnError> {
        let line = self.line;
        self.bump(); // '{'
        let start = self.pos;
        let text = self.text;
        while let Some(ch) = self.bump() {
            if ch == '}' {
                return Ok(&text[start..self.pos - 1]);
            }
        }
        Err(PgnError::UnclosedComment { line })
    }

    /// Keeps the `%clk` time of a comment that follows a move.
    fn attach_clock(&mut self, comment: &str) {
        let plies = self.game.record.as_ref().map_or(0, GameRecord::len);
        if plies > 0 && self.game.clocks.len() == plies && self.game.clocks[plies - 1].is_none() {
            self.game.clocks[plies - 1] = clock_in_comment(comment);
        }
    }

    /// Skips a variation, with any variations, comments and `;` comments
    /// inside it (a `)` in a comment does not close it).
    fn skip_variation(&mut self) -> Result<(), PgnError> {
        let line = self.line;
        let mut depth = 0usize;
        while let Some(ch) = self.peek() {
            match ch {
                '(' => {
                    depth += 1;
                    self.bump();
                }
                ')' => {
                    self.bump();
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                '{' => {
                    self.read_comment()?;
                }
                ';' => self.skip_to_line_end(),
                _ => {
                    self.bump();
                }
            }
        }
        Err(PgnError::UnclosedVariation { line })
    }

    fn read_token(&mut self) -> Result<(), PgnError> {
        let line = self.line;
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|ch| !ch.is_whitespace() && !"{}()[];".contains(ch))
        {
            self.bump();
        }
        let token = &self.text[start..self.pos];
        if token.is_empty() {
            // Only `]` or `}` stop a token before its first character here.
            let ch = self.peek().unwrap_or(' ');
            return Err(PgnError::UnexpectedChar { line, ch });
        }
        if let Some(result) = PgnResult::from_token(token) {
            self.game.started = true;
            return self.finish_game(Some(result));
        }
        self.in_movetext = true;
        self.game.started = true;
        // NAGs (`$14`) say nothing about the moves.
        if token.starts_with('$') {
            return Ok(());
        }
        let san = strip_move_number(token);
        if san.is_empty() {
            return Ok(());
        }
        let record = self.game.record()?;
        let ply = record.len() + 1;
        let position = record.position();
        let number = match position.turn() {
            Color::White => format!("{}.", position.fullmove_number()),
            Color::Black => format!("{}...", position.fullmove_number()),
        };
        record.push_san(san).map_err(|error| PgnError::BadMove {
            line,
            ply,
            number,
            san: san.to_owned(),
            error,
        })?;
        self.game.clocks.push(None);
        Ok(())
    }
}

/// The move of a token without its move number: `12.e4` is `e4`, `12...`
/// and `12` are nothing. Castling with zeros (`0-0`) is not a number.
fn strip_move_number(token: &str) -> &str {
    let digits = token.len() - token.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let after_digits = &token[digits..];
    if digits > 0 && after_digits.is_empty() {
        return "";
    }
    let rest = after_digits.trim_start_matches('.');
    if rest.len() == after_digits.len() {
        // No dots: a move (or castling written `0-0`), not a number.
        token
    } else if digits > 0 || rest.is_empty() {
        // `12.`, `12...e5`, or a bare `...`.
        rest
    } else {
        token
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_format_and_parse() {
        assert_eq!(format_clock(0), "0:00:00");
        assert_eq!(format_clock(59_999), "0:00:59");
        assert_eq!(format_clock(180_000), "0:03:00");
        assert_eq!(format_clock(3_723_000), "1:02:03");
        assert_eq!(parse_clock("1:02:03"), Some(3_723_000));
        assert_eq!(parse_clock("0:00:09.5"), Some(9_500));
        assert_eq!(parse_clock("0:00:09.25"), Some(9_250));
        for bad in ["", "1:02", "1:60:00", "a:00:00", "0:00:01.x", "1:02:03:04"] {
            assert_eq!(parse_clock(bad), None, "{bad:?}");
        }
        assert_eq!(clock_in_comment(" [%clk 0:03:00] "), Some(180_000));
        assert_eq!(clock_in_comment("[%eval 0.3] [%clk 0:00:05]"), Some(5_000));
        assert_eq!(clock_in_comment("no clock"), None);
    }

    #[test]
    fn move_numbers_are_stripped_from_tokens() {
        for (token, san) in [
            ("12.", ""),
            ("12...", ""),
            ("12", ""),
            ("...", ""),
            ("12.e4", "e4"),
            ("12...Nf6", "Nf6"),
            ("e4", "e4"),
            ("0-0", "0-0"),
            ("0-0-0+", "0-0-0+"),
            ("O-O", "O-O"),
        ] {
            assert_eq!(strip_move_number(token), san, "{token:?}");
        }
    }
}
