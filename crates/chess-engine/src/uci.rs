//! The UCI protocol front end: reads commands a line at a time and writes
//! replies, searching on a background thread so that `stop`, `isready` and
//! `quit` are answered during `go infinite`.
//!
//! The binary (`src/main.rs`) only feeds stdin to a [`UciSession`] writing
//! to stdout; tests can feed one any lines and read what it writes.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use chess_rules::{Color, Move, Position, UciMove};

use crate::{Engine, Level, Limits, SearchResult};

/// The engine's name as sent in `id name`.
pub const ENGINE_NAME: &str = concat!("chess-engine ", env!("CARGO_PKG_VERSION"));

/// What the caller should do after a command.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Read the next command.
    Continue,
    /// `quit` was received: the search is stopped, exit now.
    Quit,
}

/// A command that could not be understood or carried out; reported to the
/// GUI as `info string error: ...` and otherwise ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandError {
    /// The first word is not a UCI command.
    UnknownCommand(String),
    /// `position` without `startpos` or `fen`.
    MissingPosition,
    /// The FEN could not be read.
    BadFen { fen: String, reason: String },
    /// A move in `position ... moves` is not UCI notation.
    BadMoveSyntax(String),
    /// A move in `position ... moves` is not legal where it is played.
    IllegalMove(String),
    /// A `go` parameter has no value or a value that is not a number.
    BadGoValue { parameter: String },
    /// `setoption` names an option this engine does not have.
    UnknownOption(String),
    /// `setoption name Level` with a value that is not a level.
    BadLevel(String),
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandError::UnknownCommand(word) => write!(f, "unknown command {word:?}"),
            CommandError::MissingPosition => f.write_str("position needs startpos or fen <fen>"),
            CommandError::BadFen { fen, reason } => write!(f, "bad fen {fen:?}: {reason}"),
            CommandError::BadMoveSyntax(m) => write!(f, "not a uci move: {m:?}"),
            CommandError::IllegalMove(m) => write!(f, "illegal move: {m}"),
            CommandError::BadGoValue { parameter } => {
                write!(f, "go {parameter} needs a non-negative integer value")
            }
            CommandError::UnknownOption(name) => write!(f, "unknown option {name:?}"),
            CommandError::BadLevel(value) => {
                write!(f, "bad level {value:?}: expected 1 (easy) or 2 (hard)")
            }
        }
    }
}

impl std::error::Error for CommandError {}

/// A search running on its own thread; joining it gives the engine back.
struct RunningSearch {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Engine>,
}

/// One UCI conversation with a GUI, writing replies to `W`.
pub struct UciSession<W: Write + Send + 'static> {
    out: Arc<Mutex<W>>,
    /// `None` while a search thread holds it.
    engine: Option<Engine>,
    search: Option<RunningSearch>,
    position: Position,
    /// Keys of the positions before `position` in the game, for repetitions.
    history: Vec<u64>,
}

impl<W: Write + Send + 'static> fmt::Debug for UciSession<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UciSession")
            .field("position", &self.position)
            .field("searching", &self.search.is_some())
            .finish_non_exhaustive()
    }
}

impl<W: Write + Send + 'static> UciSession<W> {
    /// A session at [`Level::Hard`] (the UCI default), replying to `out`.
    pub fn new(out: W, seed: u64) -> UciSession<W> {
        UciSession {
            out: Arc::new(Mutex::new(out)),
            engine: Some(Engine::new(Level::Hard, seed)),
            search: None,
            position: Position::startpos(),
            history: Vec::new(),
        }
    }

    /// Handles one line from the GUI.
    pub fn handle_line(&mut self, line: &str) -> Flow {
        match self.try_handle(line) {
            Ok(flow) => flow,
            Err(err) => {
                send(&self.out, &format!("info string error: {err}"));
                Flow::Continue
            }
        }
    }

    /// Stops any running search and waits for its `bestmove`.
    pub fn finish(&mut self) {
        self.stop_search();
    }

    fn try_handle(&mut self, line: &str) -> Result<Flow, CommandError> {
        let mut words = line.split_whitespace();
        let Some(command) = words.next() else {
            return Ok(Flow::Continue);
        };
        let args: Vec<&str> = words.collect();
        match command {
            "uci" => {
                send(&self.out, &format!("id name {ENGINE_NAME}"));
                send(&self.out, "id author the chess-server authors");
                send(
                    &self.out,
                    "option name Level type spin default 2 min 1 max 2",
                );
                send(&self.out, "uciok");
            }
            "isready" => send(&self.out, "readyok"),
            "ucinewgame" => {
                self.stop_search();
                self.engine_mut().new_game();
                self.position = Position::startpos();
                self.history.clear();
            }
            "setoption" => {
                self.stop_search();
                self.set_option(&args)?;
            }
            "position" => {
                self.stop_search();
                let (position, history) = parse_position(&args)?;
                self.position = position;
                self.history = history;
            }
            "go" => {
                self.stop_search();
                let go = parse_go(&args)?;
                self.start_search(go);
            }
            "stop" => self.stop_search(),
            "ponderhit" => {}
            "quit" => {
                self.stop_search();
                return Ok(Flow::Quit);
            }
            other => return Err(CommandError::UnknownCommand(other.to_owned())),
        }
        Ok(Flow::Continue)
    }

    fn engine_mut(&mut self) -> &mut Engine {
        // The engine is only away while a search runs, and every caller
        // stops the search first.
        self.engine
            .as_mut()
            .expect("engine is home when no search runs")
    }

    fn set_option(&mut self, args: &[&str]) -> Result<(), CommandError> {
        // setoption name <name words> [value <value words>]
        let rest = args.strip_prefix(&["name"]).unwrap_or(args);
        let value_at = rest.iter().position(|w| w.eq_ignore_ascii_case("value"));
        let (name, value) = match value_at {
            Some(i) => (rest[..i].join(" "), rest[i + 1..].join(" ")),
            None => (rest.join(" "), String::new()),
        };
        if name.eq_ignore_ascii_case("level") || name.eq_ignore_ascii_case("skill") {
            let level: Level = value
                .parse()
                .map_err(|_| CommandError::BadLevel(value.clone()))?;
            self.engine_mut().set_level(level);
            Ok(())
        } else {
            Err(CommandError::UnknownOption(name))
        }
    }

    fn start_search(&mut self, go: GoCommand) {
        let mut engine = self.engine.take().expect("no search runs");
        let stop = Arc::new(AtomicBool::new(false));
        let out = Arc::clone(&self.out);
        let position = self.position.clone();
        let history = self.history.clone();
        let limits = go.limits(position.turn());
        let thread_stop = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let result =
                engine.search_with_info(&position, &history, limits, &thread_stop, |info| {
                    send(&out, &info_line(info));
                });
            // UCI: under `go infinite` the bestmove waits for `stop`, even
            // if the search ran out of depth (or found a mate) earlier.
            if go.infinite {
                while !thread_stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
            let best = result
                .best_move
                .map_or_else(|| "0000".to_owned(), |m| m.to_uci().to_string());
            send(&out, &format!("bestmove {best}"));
            engine
        });
        self.search = Some(RunningSearch { stop, handle });
    }

    fn stop_search(&mut self) {
        if let Some(search) = self.search.take() {
            search.stop.store(true, Ordering::Relaxed);
            match search.handle.join() {
                Ok(engine) => self.engine = Some(engine),
                // A panicking search is a bug; carry on with a fresh engine
                // rather than leaving the GUI without one.
                Err(_) => {
                    send(&self.out, "info string error: search failed");
                    self.engine = Some(Engine::new(Level::Hard, 0));
                }
            }
        }
    }
}

/// Writes one line and flushes it, ignoring a closed output (the GUI left).
fn send<W: Write>(out: &Mutex<W>, line: &str) {
    let mut out = out
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// The `info` line for a completed iteration.
fn info_line(info: &SearchResult) -> String {
    let pv: Vec<String> = info.pv.iter().map(|m| m.to_uci().to_string()).collect();
    format!(
        "info depth {} seldepth {} score {} nodes {} nps {} time {} pv {}",
        info.depth,
        info.seldepth,
        info.score,
        info.nodes,
        info.nps(),
        info.elapsed.as_millis(),
        pv.join(" ")
    )
}

/// Parses the arguments of `position`.
fn parse_position(args: &[&str]) -> Result<(Position, Vec<u64>), CommandError> {
    let moves_at = args.iter().position(|&w| w == "moves");
    let (setup, moves) = match moves_at {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let mut position = match setup.split_first() {
        Some((&"startpos", [])) => Position::startpos(),
        Some((&"fen", fen)) if !fen.is_empty() => {
            let fen = fen.join(" ");
            Position::from_fen(&fen).map_err(|err| CommandError::BadFen {
                fen: fen.clone(),
                reason: err.to_string(),
            })?
        }
        _ => return Err(CommandError::MissingPosition),
    };
    let mut history = Vec::with_capacity(moves.len());
    for &text in moves {
        let uci: UciMove = text
            .parse()
            .map_err(|_| CommandError::BadMoveSyntax(text.to_owned()))?;
        let m: Move = uci
            .to_move(&position)
            .map_err(|_| CommandError::IllegalMove(text.to_owned()))?;
        history.push(position.zobrist_key());
        position.play_unchecked(&m);
    }
    Ok((position, history))
}

/// The parameters of `go`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct GoCommand {
    wtime: Option<u64>,
    btime: Option<u64>,
    winc: Option<u64>,
    binc: Option<u64>,
    movetime: Option<u64>,
    depth: Option<u64>,
    nodes: Option<u64>,
    infinite: bool,
}

impl GoCommand {
    fn limits(&self, turn: Color) -> Limits {
        let (time, inc) = match turn {
            Color::White => (self.wtime, self.winc),
            Color::Black => (self.btime, self.binc),
        };
        Limits {
            movetime: self.movetime.map(Duration::from_millis),
            clock: time.map(|t| crate::Clock {
                remaining: Duration::from_millis(t),
                increment: Duration::from_millis(inc.unwrap_or(0)),
            }),
            depth: self.depth.map(|d| u32::try_from(d).unwrap_or(u32::MAX)),
            nodes: self.nodes,
        }
    }
}

fn parse_go(args: &[&str]) -> Result<GoCommand, CommandError> {
    let mut go = GoCommand::default();
    let mut words = args.iter();
    while let Some(&word) = words.next() {
        let slot = match word {
            "infinite" => {
                go.infinite = true;
                continue;
            }
            // Pondering is not supported: a ponder search is just a search.
            "ponder" => continue,
            "wtime" => &mut go.wtime,
            "btime" => &mut go.btime,
            "winc" => &mut go.winc,
            "binc" => &mut go.binc,
            "movetime" => &mut go.movetime,
            "depth" => &mut go.depth,
            "nodes" => &mut go.nodes,
            // Accepted and unused: the clock share already spreads time.
            "movestogo" | "mate" => {
                words.next();
                continue;
            }
            _ => {
                return Err(CommandError::BadGoValue {
                    parameter: word.to_owned(),
                });
            }
        };
        let value = words.next().ok_or_else(|| CommandError::BadGoValue {
            parameter: word.to_owned(),
        })?;
        // Some GUIs send a slightly negative time when a clock runs out.
        let number = match value.parse::<i64>() {
            Ok(n) => u64::try_from(n).unwrap_or(0),
            Err(_) => {
                return Err(CommandError::BadGoValue {
                    parameter: word.to_owned(),
                });
            }
        };
        *slot = Some(number);
    }
    Ok(go)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_parameters_parse_and_pick_the_side_to_move_clock() {
        let go = parse_go(&[
            "wtime", "60000", "btime", "30000", "winc", "1000", "binc", "500",
        ])
        .expect("valid go");
        let black = go.limits(Color::Black);
        assert_eq!(
            black.clock,
            Some(crate::Clock {
                remaining: Duration::from_secs(30),
                increment: Duration::from_millis(500),
            })
        );
        assert_eq!(
            go.limits(Color::White).clock.map(|c| c.remaining),
            Some(Duration::from_secs(60))
        );
        let go = parse_go(&["depth", "5", "nodes", "1000", "infinite"]).expect("valid go");
        assert!(go.infinite);
        assert_eq!(go.limits(Color::White).depth, Some(5));
        assert_eq!(go.limits(Color::White).nodes, Some(1000));
        assert_eq!(parse_go(&["wtime", "-20"]).map(|g| g.wtime), Ok(Some(0)));
    }

    #[test]
    fn bad_go_parameters_are_rejected_exactly() {
        for (args, parameter) in [
            (&["depth"][..], "depth"),
            (&["depth", "x"][..], "depth"),
            (&["movetime", "1.5"][..], "movetime"),
            (&["sideways"][..], "sideways"),
        ] {
            assert_eq!(
                parse_go(args),
                Err(CommandError::BadGoValue {
                    parameter: parameter.to_owned()
                })
            );
        }
    }
}
