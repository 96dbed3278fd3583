//! PGN export and import.
//!
//! Export writes the seven tag roster, `TimeControl`, `Termination` and any
//! other tags, `SetUp`/`FEN` when the game did not start from the standard
//! position, and movetext wrapped at 80 columns. After each move come its
//! NAGs (`$1`) and one comment holding its `[%clk h:mm:ss]` time, when known,
//! and its comment text.
//!
//! Import reads what real PGN files hold: tags, movetext with move numbers
//! (`12.`, `12...`), comments (`{...}` and `;` to the end of the line), NAGs
//! (`$1`) and suffix annotations (`!?`, read as the NAGs `$1` to `$6` they
//! stand for), variations (`(...)`, nested) which are skipped with
//! everything in them, results, and several games in one text. Each ply
//! keeps its clock, NAGs and comment in a [`PlyAnnotation`]; a comment before
//! the first move is [`PgnGame::comment`]. Comment text keeps its words with
//! every run of whitespace read as one space. So import then export keeps
//! everything but variations, escape lines and the layout.
//!
//! Reading is linear in the text. One game may hold at most [`MAX_TAGS`]
//! tags and [`MAX_GAME_BYTES`] bytes of text, so hostile input cannot make a
//! reader hold or work on more than that per game.
//!
//! ```
//! use chess_rules::pgn::{PgnGame, PgnResult};
//!
//! let text = "[White \"Anderssen\"]\n\n1. e4 e5 {a comment} 2. Nf3!? (2. f4) Nc6 1-0\n";
//! let game: PgnGame = text.parse()?;
//! assert_eq!(game.tag("White"), Some("Anderssen"));
//! assert_eq!(game.record.sans().collect::<Vec<_>>(), ["e4", "e5", "Nf3", "Nc6"]);
//! assert_eq!(game.result, PgnResult::WhiteWins);
//! assert_eq!(game.annotations[1].comment.as_deref(), Some("a comment"));
//! assert_eq!(game.annotations[2].nags, [5]);
//! assert!(game.to_pgn().contains("1. e4 e5 { a comment } 2. Nf3 $5 Nc6 1-0"));
//! # Ok::<(), chess_rules::pgn::PgnError>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::{Color, FenError, GameRecord, Position, SanError};

/// The movetext is wrapped so no line is longer than this.
const LINE_WIDTH: usize = 80;

/// The most tags one game may hold; real games hold a few dozen at most.
pub const MAX_TAGS: usize = 1_000;

/// The most bytes of text one game may take, from its first tag or token to
/// its last: about a hundred times the longest games played, comments and
/// clocks included.
pub const MAX_GAME_BYTES: usize = 1 << 20;

/// The six suffix annotations and the NAGs they stand for, by the PGN
/// standard.
const SUFFIX_NAGS: [(&str, u8); 6] = [
    ("!", 1),
    ("?", 2),
    ("!!", 3),
    ("??", 4),
    ("!?", 5),
    ("?!", 6),
];

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
    /// The comment before the first move, if any.
    pub comment: Option<String>,
    /// What the movetext says about each ply besides its move, first ply
    /// first. A ply past the end of the list has no annotation; import
    /// leaves no empty annotation at the end, so a game without any has an
    /// empty list.
    pub annotations: Vec<PlyAnnotation>,
}

/// What PGN says about one ply besides its move.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct PlyAnnotation {
    /// The mover's remaining clock time in milliseconds after the ply, from
    /// a `[%clk h:mm:ss]` comment; exported rounded down to the second.
    pub clock_ms: Option<u64>,
    /// Numeric annotation glyphs (`$1`; `!` is read as `$1`), in the order
    /// read, each once.
    pub nags: Vec<u8>,
    /// The comment text after the ply without its clock, runs of whitespace
    /// as one space. Several comments after one ply are joined by a space.
    pub comment: Option<String>,
}

impl PlyAnnotation {
    /// Whether it says nothing.
    pub fn is_empty(&self) -> bool {
        self.clock_ms.is_none() && self.nags.is_empty() && self.comment.is_none()
    }
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
    /// A `[%clk ...]` in the comment after a ply is not a clock time
    /// `h:mm:ss` (with optional decimals) that fits in milliseconds.
    BadClock {
        line: usize,
        ply: usize,
        /// The text after `%clk`, cut to a few dozen characters.
        clock: String,
    },
    /// A `$` token is not a NAG `$0` to `$255`, or comes before any move.
    BadNag { line: usize, nag: String },
    /// A game holds more than [`MAX_TAGS`] tags.
    TooManyTags { line: usize, max: usize },
    /// A game takes more than [`MAX_GAME_BYTES`] bytes of text.
    GameTooLarge {
        /// The line the game starts on.
        line: usize,
        max_bytes: usize,
    },
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
            PgnError::BadClock { line, ply, clock } => write!(
                f,
                "line {line}, ply {ply}: clock {clock:?} is not a time h:mm:ss that fits"
            ),
            PgnError::BadNag { line, nag } => {
                write!(
                    f,
                    "line {line}: {nag:?} is not a nag $0 to $255 after a move"
                )
            }
            PgnError::TooManyTags { line, max } => {
                write!(f, "line {line}: a game may hold at most {max} tags")
            }
            PgnError::GameTooLarge { line, max_bytes } => write!(
                f,
                "the game starting on line {line} is longer than {max_bytes} bytes"
            ),
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

    /// The clock after the ply at `index` (0 for the first ply), if known.
    pub fn clock(&self, index: usize) -> Option<u64> {
        self.annotations.get(index).and_then(|a| a.clock_ms)
    }

    /// The annotation of the ply at `index`, added (with empty ones before
    /// it) if the list is shorter.
    pub fn annotation_mut(&mut self, index: usize) -> &mut PlyAnnotation {
        if self.annotations.len() <= index {
            self.annotations
                .resize_with(index + 1, PlyAnnotation::default);
        }
        &mut self.annotations[index]
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
        if let Some(comment) = self.comment.as_deref().filter(|text| has_words(text)) {
            push_comment(&mut tokens, None, comment);
        }
        let mut position = self.record.initial();
        // After a comment, Black's move needs its number again (`1... e5`).
        let mut number_needed = true;
        let no_annotation = PlyAnnotation::default();
        for (index, ply) in self.record.plies().iter().enumerate() {
            let number = position.fullmove_number();
            match position.turn() {
                Color::White => tokens.push(Token::Word(format!("{number}."))),
                Color::Black if number_needed => {
                    tokens.push(Token::Word(format!("{number}...")));
                }
                Color::Black => {}
            }
            tokens.push(Token::Word(ply.san.clone()));
            number_needed = false;
            let annotation = self.annotations.get(index).unwrap_or(&no_annotation);
            for nag in &annotation.nags {
                tokens.push(Token::Word(format!("${nag}")));
            }
            let comment = annotation.comment.as_deref().unwrap_or("");
            if annotation.clock_ms.is_some() || has_words(comment) {
                push_comment(&mut tokens, annotation.clock_ms, comment);
                number_needed = true;
            }
            position = &ply.position;
        }
        tokens.push(Token::Word(self.result.as_str().to_owned()));

        let mut line_len = 0;
        for token in tokens {
            let (text, ends_line) = match &token {
                Token::Word(text) => (text.as_str(), false),
                Token::LineComment(text) => (text.as_str(), true),
            };
            if line_len > 0 && line_len + 1 + text.len() > LINE_WIDTH {
                out.push('\n');
                line_len = 0;
            }
            if line_len > 0 {
                out.push(' ');
                line_len += 1;
            }
            out.push_str(text);
            line_len += text.len();
            if ends_line {
                out.push('\n');
                line_len = 0;
            }
        }
    }
}

/// A piece of exported movetext: a word the wrapping may put on the next
/// line, or a `;` comment after which the line must end.
enum Token {
    Word(String),
    LineComment(String),
}

/// Pushes a comment holding `clock_ms` and `text`. Its words are separate
/// tokens, so a long comment wraps like the moves; the braces stay with the
/// first and last of them. A `}` cannot appear inside `{...}`: text holding
/// one is written as a `;` comment to the end of the line (the clock, if
/// any, still in braces before it).
fn push_comment(tokens: &mut Vec<Token>, clock_ms: Option<u64>, text: &str) {
    let in_braces = !text.contains('}');
    let mut parts: Vec<String> = Vec::new();
    if let Some(millis) = clock_ms {
        parts.push(format!("[%clk {}]", format_clock(millis)));
    }
    if in_braces {
        parts.extend(text.split_whitespace().map(str::to_owned));
    }
    if let Some(first) = parts.first_mut() {
        first.insert_str(0, "{ ");
    }
    if let Some(last) = parts.last_mut() {
        last.push_str(" }");
    }
    tokens.extend(parts.into_iter().map(Token::Word));
    if !in_braces {
        tokens.push(Token::LineComment(format!(";{}", collapse(text))));
    }
}

fn has_words(text: &str) -> bool {
    text.split_whitespace().next().is_some()
}

/// `text` with every run of whitespace as one space and none at the ends.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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
    // Hours come from the text unbounded: a time too large for a u64 of
    // milliseconds is no clock.
    hours
        .checked_mul(3_600_000)?
        .checked_add(minutes * 60_000 + seconds * 1000 + millis_fraction)
}

/// Takes the `[%clk ...]` commands out of a comment: the first clock time,
/// and the text without them.
///
/// # Errors
/// The text after `%clk` (cut short) when a clock is not a time or is
/// never closed by `]`.
fn take_clocks(comment: &str) -> Result<(Option<u64>, String), String> {
    const CLK: &str = "[%clk";
    let cut = |text: &str| text.trim().chars().take(40).collect::<String>();
    let mut clock = None;
    let mut rest = String::new();
    let mut remaining = comment;
    while let Some(start) = remaining.find(CLK) {
        rest.push_str(&remaining[..start]);
        rest.push(' ');
        let after = &remaining[start + CLK.len()..];
        let end = after.find(']').ok_or_else(|| cut(after))?;
        let text = after[..end].trim();
        let millis = parse_clock(text).ok_or_else(|| cut(text))?;
        clock.get_or_insert(millis);
        remaining = &after[end + 1..];
    }
    rest.push_str(remaining);
    Ok((clock, rest))
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
    /// Where each tag name is in `tags`, so a tag is found in constant time.
    tag_index: HashMap<String, usize>,
    record: Option<GameRecord>,
    comment: Option<String>,
    /// One per ply of `record`.
    annotations: Vec<PlyAnnotation>,
    /// Where the game's text starts (byte offset and line) once anything of
    /// it was seen.
    start: Option<(usize, usize)>,
}

impl GameInProgress {
    fn tag(&self, name: &str) -> Option<&str> {
        self.tag_index
            .get(name)
            .map(|&index| self.tags[index].1.as_str())
    }

    /// Sets a tag; a name read again replaces its value in place.
    fn set_tag(&mut self, name: String, value: String, line: usize) -> Result<(), PgnError> {
        if let Some(&index) = self.tag_index.get(&name) {
            self.tags[index].1 = value;
            return Ok(());
        }
        if self.tags.len() == MAX_TAGS {
            return Err(PgnError::TooManyTags {
                line,
                max: MAX_TAGS,
            });
        }
        self.tag_index.insert(name.clone(), self.tags.len());
        self.tags.push((name, value));
        Ok(())
    }

    /// The position the game starts from: the `FEN` tag's, else the standard one.
    fn initial(&self) -> Result<Position, PgnError> {
        match self.tag("FEN") {
            Some(fen) => Position::from_fen(fen).map_err(|error| PgnError::BadFen {
                fen: fen.to_owned(),
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

    fn plies(&self) -> usize {
        self.record.as_ref().map_or(0, GameRecord::len)
    }

    fn finish(mut self, result: Option<PgnResult>) -> Result<PgnGame, PgnError> {
        let record = match self.record.take() {
            Some(record) => record,
            None => GameRecord::new(self.initial()?),
        };
        let result = result
            .or_else(|| self.tag("Result").and_then(PgnResult::from_token))
            .unwrap_or_default();
        while self.annotations.last().is_some_and(PlyAnnotation::is_empty) {
            self.annotations.pop();
        }
        Ok(PgnGame {
            tags: self.tags,
            record,
            result,
            comment: self.comment,
            annotations: self.annotations,
        })
    }
}

/// Adds `text` to a comment, after a space when there is one already.
fn append_comment(comment: &mut Option<String>, text: &str) {
    let text = collapse(text);
    if text.is_empty() {
        return;
    }
    match comment {
        Some(existing) => {
            existing.push(' ');
            existing.push_str(&text);
        }
        None => *comment = Some(text),
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

    /// Notes that the current game's text has begun at `pos` on `line`, if
    /// it had not yet.
    fn start_game(&mut self, pos: usize, line: usize) {
        self.game.start.get_or_insert((pos, line));
    }

    /// Refuses the current game once its text is longer than allowed.
    fn check_size(&self) -> Result<(), PgnError> {
        match self.game.start {
            Some((start, line)) if self.pos - start > MAX_GAME_BYTES => {
                Err(PgnError::GameTooLarge {
                    line,
                    max_bytes: MAX_GAME_BYTES,
                })
            }
            _ => Ok(()),
        }
    }

    fn finish_game(&mut self, result: Option<PgnResult>) -> Result<(), PgnError> {
        self.check_size()?;
        let game = std::mem::take(&mut self.game);
        self.in_movetext = false;
        if game.start.is_some() {
            self.games.push(game.finish(result)?);
        }
        Ok(())
    }

    fn read_all(mut self) -> Result<Vec<PgnGame>, PgnError> {
        while let Some(ch) = self.peek() {
            self.check_size()?;
            let (start, line) = (self.pos, self.line);
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
                    self.start_game(start, line);
                    self.read_tag()?;
                }
                '{' => {
                    self.start_game(start, line);
                    let comment = self.read_comment()?;
                    self.check_size()?;
                    self.attach_comment(comment, line)?;
                }
                ';' => {
                    self.start_game(start, line);
                    self.bump();
                    self.skip_to_line_end();
                    self.check_size()?;
                    let comment = &self.text[start + 1..self.pos];
                    self.attach_comment(comment, line)?;
                }
                '(' => self.skip_variation()?,
                ')' => return Err(PgnError::UnmatchedParenthesis { line: self.line }),
                _ => {
                    self.start_game(start, line);
                    self.read_token()?;
                }
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
        self.game.set_tag(name, value, line)
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

    /// Keeps a comment (read on `line`) with the ply it follows, its
    /// `[%clk]` time apart; before the first move it is the game's comment,
    /// kept as it is.
    fn attach_comment(&mut self, comment: &str, line: usize) -> Result<(), PgnError> {
        let plies = self.game.plies();
        let Some(annotation) = self.game.annotations.last_mut() else {
            append_comment(&mut self.game.comment, comment);
            return Ok(());
        };
        let (clock, text) = take_clocks(comment).map_err(|clock| PgnError::BadClock {
            line,
            ply: plies,
            clock,
        })?;
        if annotation.clock_ms.is_none() {
            annotation.clock_ms = clock;
        }
        append_comment(&mut annotation.comment, &text);
        Ok(())
    }

    /// Adds a NAG to the last ply, once.
    fn attach_nag(&mut self, nag: u8) {
        if let Some(annotation) = self.game.annotations.last_mut()
            && !annotation.nags.contains(&nag)
        {
            annotation.nags.push(nag);
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
            return self.finish_game(Some(result));
        }
        self.in_movetext = true;
        if let Some(digits) = token.strip_prefix('$') {
            let nag = digits
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| digits.parse::<u8>().ok())
                .flatten()
                .filter(|_| self.game.plies() > 0)
                .ok_or_else(|| PgnError::BadNag {
                    line,
                    nag: token.chars().take(40).collect(),
                })?;
            self.attach_nag(nag);
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
        self.game.annotations.push(PlyAnnotation::default());
        let suffix = &san[san.trim_end_matches(['!', '?']).len()..];
        if let Some(&(_, nag)) = SUFFIX_NAGS.iter().find(|(text, _)| *text == suffix) {
            self.attach_nag(nag);
        }
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
        assert_eq!(
            parse_clock("18446744073709551615:00:00"),
            None,
            "too many hours for a u64"
        );
        // u64::MAX milliseconds is 5124095576030 h 25 min 51.615 s.
        assert_eq!(
            parse_clock("5124095576030:00:00"),
            Some(5_124_095_576_030 * 3_600_000)
        );
        for past_the_top in ["5124095576031:00:00", "5124095576030:25:52"] {
            assert_eq!(parse_clock(past_the_top), None, "{past_the_top}");
        }
        assert_eq!(parse_clock("5124095576030:25:51.615"), Some(u64::MAX));
        for bad in [
            "99999999999999999999:00:00",
            "0:00:00.99999999999999999999x",
        ] {
            assert_eq!(parse_clock(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn clocks_are_taken_out_of_comments() {
        let clock_of = |comment: &str| take_clocks(comment).map(|(clock, _)| clock);
        assert_eq!(clock_of(" [%clk 0:03:00] "), Ok(Some(180_000)));
        assert_eq!(clock_of("[%eval 0.3] [%clk 0:00:05]"), Ok(Some(5_000)));
        assert_eq!(clock_of("no clock"), Ok(None));
        assert_eq!(
            take_clocks("good [%clk 0:00:05] move [%clk 0:00:04]"),
            Ok((Some(5_000), "good   move  ".to_owned())),
            "the first clock counts; every clock leaves the text"
        );
        assert_eq!(clock_of("[%clk 1:99:00]"), Err("1:99:00".to_owned()));
        assert_eq!(clock_of("[%clk 0:00:01"), Err("0:00:01".to_owned()));
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
